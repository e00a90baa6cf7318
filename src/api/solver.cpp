#include "api/solver.hpp"

#include <chrono>
#include <string>

#include "runtime/sequential/sequential_executor.hpp"
#include "runtime/starpu/starpu_executor.hpp"
#include "solve/solve.hpp"

namespace starfront {

Status Solver::analyse(const CscMatrix& A, const AnalysisOptions& opts,
                       const GraphOptions& graph_opts) {
  analysed_ = factorized_ = false;
  const auto t0 = std::chrono::steady_clock::now();
  Status st = starfront::analyse(A, opts, sym_);
  if (!st.ok()) return st;
  st = build_front_plan(A, sym_, plan_);
  if (!st.ok()) return st;
  st = build_task_graph(plan_, graph_opts, graph_);
  if (!st.ok()) return st;
  colptr_ = A.colptr;
  rowind_ = A.rowind;
  analysed_ = true;
  stats_ = SolverStats{};
  stats_.t_analyse_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return Status::success();
}

Status Solver::check_pattern(const CscMatrix& A) const {
  if (A.n != sym_.n || A.colptr.size() != colptr_.size() || A.rowind.size() != rowind_.size() ||
      A.values.size() != rowind_.size())
    return Status::error(StatusCode::invalid_argument,
                         "matrix (n=" + std::to_string(A.n) + ", nnz=" + std::to_string(A.nnz()) +
                             ") does not have the analysed pattern (n=" + std::to_string(sym_.n) +
                             ", nnz=" + std::to_string(rowind_.size()) + "): analyse it again");
  for (idx_t j = 0; j < A.n; ++j) {
    bool same = A.colptr[j + 1] == colptr_[j + 1];
    for (idx_t p = A.colptr[j]; same && p < A.colptr[j + 1]; ++p) same = A.rowind[p] == rowind_[p];
    if (!same)
      return Status::error(StatusCode::invalid_argument,
                           "the pattern of column " + std::to_string(j + 1) +
                               " differs from the analysed pattern: analyse it again");
  }
  return Status::success();
}

Status Solver::factorize(const CscMatrix& A, const FactorOptions& opts, Executor exec) {
  factorized_ = false;
  if (!analysed_)
    return Status::error(StatusCode::invalid_argument, "factorize called before a successful analyse");
  Status st = check_pattern(A);
  if (!st.ok()) return st;
  st = exec == Executor::starpu ? factorize_starpu(graph_, A, opts, factor_, &stats_.factor)
                                : factorize_sequential(graph_, A, opts, factor_, &stats_.factor);
  factorized_ = st.ok();
  return st;
}

Status Solver::solve(double* B, idx_t nrhs, idx_t ldb) const {
  if (!factorized_)
    return Status::error(StatusCode::invalid_argument, "solve called without a successful factorisation");
  return solve_in_place(factor_, B, nrhs, ldb);
}

}  // namespace starfront
