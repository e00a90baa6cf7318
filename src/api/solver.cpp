#include "api/solver.hpp"

#include <algorithm>
#include <chrono>
#include <cstdint>
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
  graph_opts_ = graph_opts;
#ifdef STARFRONT_HAVE_MPI
  mapped_ranks_ = 0;  // the new graph is not mapped yet
#endif
  graph_untiled_ = TaskGraph{};
  graph_untiled_built_ = false;
  last_graph_ = nullptr;
  a_.n = A.n;  // the analysed pattern; values copied at each factorisation
  a_.colptr = A.colptr;
  a_.rowind = A.rowind;
  a_.values.clear();
  analysed_ = true;
  stats_ = SolverStats{};
  stats_.t_analyse_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return Status::success();
}

Status Solver::check_pattern(const CscMatrix& A) const {
  const std::vector<idx_t>&colptr = a_.colptr, &rowind = a_.rowind;
  if (A.n != sym_.n || A.colptr.size() != colptr.size() || A.rowind.size() != rowind.size() ||
      A.values.size() != rowind.size())
    return Status::error(StatusCode::invalid_argument,
                         "matrix (n=" + std::to_string(A.n) + ", nnz=" + std::to_string(A.nnz()) +
                             ") does not have the analysed pattern (n=" + std::to_string(sym_.n) +
                             ", nnz=" + std::to_string(rowind.size()) + "): analyse it again");
  // The usual case (a refactorisation with the analysed pattern) in two
  // memcmp-speed comparisons; the column loop only names the first difference.
  if (A.colptr == colptr && A.rowind == rowind) return Status::success();
  for (idx_t j = 0; j < A.n; ++j) {
    bool same = A.colptr[j + 1] == colptr[j + 1];
    for (idx_t p = A.colptr[j]; same && p < A.colptr[j + 1]; ++p) same = A.rowind[p] == rowind[p];
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
  const auto t0 = std::chrono::steady_clock::now();
  stats_.factor = FactorStats{};  // this factorisation's, also when it fails early
  double t_check = 0.0;
  PhaseTimer timer;
  Status st = check_factor_options(opts);
  if (!st.ok()) return st;
  st = check_pattern(A);
  timer.lap(t_check);
  if (!st.ok()) return st;
  st = run_method(A, opts, exec);
  factorized_ = st.ok();
  PhaseTimer keep;
  if (factorized_) {
    a_.values = A.values;  // for iterative refinement (same pattern: checked above)
    refine_steps_ = opts.refine_steps;
  }
  FactorStats& fs = stats_.factor;
  keep.lap(fs.phases.finish);
  fs.phases.check += t_check;
  fs.total_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return st;
}

Status Solver::refactorize(const double* values, const FactorOptions& opts, Executor exec) {
  factorized_ = false;
  if (!analysed_)
    return Status::error(StatusCode::invalid_argument, "refactorize called before a successful analyse");
  const std::size_t nnz = a_.rowind.size();
  if (!values && nnz > 0) return Status::error(StatusCode::invalid_argument, "refactorize: values is null");
  const auto t0 = std::chrono::steady_clock::now();
  stats_.factor = FactorStats{};
  double t_check = 0.0;
  PhaseTimer timer;
  Status st = check_factor_options(opts);
  if (!st.ok()) return st;
  // The copy kept for iterative refinement is the matrix factorised: one
  // copy, and its pattern is the analysed one by construction. After a
  // failure it holds these values, but solve() refuses to run then.
  a_.values.assign(values, values + nnz);
  timer.lap(t_check);
  st = run_method(a_, opts, exec);
  factorized_ = st.ok();
  if (factorized_) refine_steps_ = opts.refine_steps;
  FactorStats& fs = stats_.factor;
  fs.phases.check += t_check;
  fs.total_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return st;
}

Status Solver::run_method(const CscMatrix& A, const FactorOptions& opts, Executor exec) {
  if (opts.method != FactorMethod::automatic) return run_factorization(A, opts, exec);
  FactorOptions o = opts;
  o.method = FactorMethod::llt;
  Status st = run_factorization(A, o, exec);
  if (st.code == StatusCode::not_positive_definite) {
    o.method = FactorMethod::ldlt;
    st = run_factorization(A, o, exec);
  }
  return st;
}

Status Solver::run_factorization(const CscMatrix& A, const FactorOptions& opts, Executor exec) {
  const TaskGraph* G = &graph_;
  const bool ldlt = opts.method == FactorMethod::ldlt || opts.method == FactorMethod::quasi_definite;
  if (ldlt && std::find(graph_.mode.begin(), graph_.mode.end(), FrontMode::tiled) != graph_.mode.end()) {
    // Tiled LDLᵀ is not implemented: the same plan compiled without tiles.
    if (!graph_untiled_built_) {
      GraphOptions go = graph_opts_;
      go.tile = false;
      if (Status st = build_task_graph(plan_, go, graph_untiled_); !st.ok()) return st;
      graph_untiled_built_ = true;
    }
    G = &graph_untiled_;
  }
  last_graph_ = G;
  return exec == Executor::starpu ? factorize_starpu(*G, A, opts, factor_, &stats_.factor)
                                  : factorize_sequential(*G, A, opts, factor_, &stats_.factor);
}

Status Solver::solve(double* B, idx_t nrhs, idx_t ldb) const {
  if (!factorized_)
    return Status::error(StatusCode::invalid_argument, "solve called without a successful factorisation");
  if (factor_.Lx.size() != static_cast<std::size_t>(plan_.factor_size()))
    return Status::error(StatusCode::invalid_argument,
                         "the factor of a distributed factorisation lives on rank 0: solve there");
  stats_.refine = RefineInfo{};
  return solve_refined(a_, factor_, B, nrhs, ldb, refine_steps_, &stats_.refine);
}

#ifdef STARFRONT_HAVE_MPI
namespace {
/// FNV-1a over the analysis and the graph's shape: equal on every rank iff
/// the ranks analysed alike (an ordering could depend on the process).
std::uint64_t analysis_fingerprint(const SymbolicFactor& S, const TaskGraph& G) {
  std::uint64_t h = 1469598103934665603ull;
  auto mix = [&](std::uint64_t x) { h = (h ^ x) * 1099511628211ull; };
  mix(static_cast<std::uint64_t>(S.n));
  for (idx_t p : S.perm) mix(static_cast<std::uint64_t>(p));
  for (idx_t p : S.super_parent) mix(static_cast<std::uint64_t>(p));
  mix(G.tasks.size());
  mix(G.blocks.size());
  mix(G.accesses.size());
  return h;
}
}  // namespace

Status Solver::factorize_mpi(const CscMatrix& A, const FactorOptions& opts, MPI_Comm comm) {
  factorized_ = false;
  stats_.factor = FactorStats{};  // no phases from an earlier factorisation (this executor has none yet)
  int nranks = 1;
  MPI_Comm_size(comm, &nranks);
  Status st;
  if (!analysed_)
    st = Status::error(StatusCode::invalid_argument, "factorize called before a successful analyse");
  else if (st = check_factor_options(opts); st.ok())
    st = check_pattern(A);
  if (st = agree_status(st, comm); !st.ok()) return st;
  unsigned long long mine = analysis_fingerprint(sym_, graph_), lo = 0, hi = 0;
  MPI_Allreduce(&mine, &lo, 1, MPI_UNSIGNED_LONG_LONG, MPI_MIN, comm);
  MPI_Allreduce(&mine, &hi, 1, MPI_UNSIGNED_LONG_LONG, MPI_MAX, comm);
  if (lo != hi)
    return Status::error(StatusCode::invalid_argument,
                         "the ranks analysed the matrix differently (orderings or graphs differ): every rank "
                         "must pass the same matrix and options");
  if (mapped_ranks_ != nranks) {
    st = agree_status(distribute_graph(graph_, nranks, graph_opts_.slots, mapping_), comm);
    if (!st.ok()) return st;
    mapped_ranks_ = nranks;
  }
  last_graph_ = &graph_;
  st = factorize_starpu_mpi(graph_, mapping_, A, opts, comm, factor_, &stats_.factor, &mpi_info_);
  factorized_ = st.ok();
  if (factorized_) {
    a_.values = A.values;
    refine_steps_ = opts.refine_steps;
  }
  return st;
}
#endif

}  // namespace starfront

