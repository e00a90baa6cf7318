#include "api/solver.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "runtime/sequential/sequential_executor.hpp"
#include "runtime/starpu/starpu_executor.hpp"
#include "plan/rank_mapping.hpp"
#include "solve/graph_solve.hpp"
#include "solve/ldlt_solve.hpp"
#include "solve/solve.hpp"

namespace starfront {
namespace {

/// Threads of the refactorisation's ‖A‖∞ pass (symmetric_norm_inf): 1 by
/// default; STARFRONT_NORM_THREADS=T (1..64, read once; measurement knob:
/// more threads were no faster on the 2-core build machine, and within the
/// noise on the 16-core H200 host: bench/README.md, session 44).
int norm_threads() {
  static const int threads = [] {
    const char* e = std::getenv("STARFRONT_NORM_THREADS");
    if (e && *e) {
      char* end = nullptr;
      const long t = std::strtol(e, &end, 10);
      if (*end == '\0' && t >= 1 && t <= 64) return static_cast<int>(t);
    }
    return 1;
  }();
  return threads;
}

/// STARFRONT_DEVICE_NORM=0 keeps refactorize's ‖A‖∞ on the host when the
/// GPU could compute it (DeviceNormRequest; measurement knob).
bool device_norm_enabled() {
  static const bool on = [] {
    const char* e = std::getenv("STARFRONT_DEVICE_NORM");
    return !(e && std::string(e) == "0");
  }();
  return on;
}

/// STARFRONT_PIN_VALUES=0 leaves A's values pageable (measurement knob).
bool pin_values_enabled() {
  static const bool on = [] {
    const char* e = std::getenv("STARFRONT_PIN_VALUES");
    return !(e && std::string(e) == "0");
  }();
  return on;
}

}  // namespace

Status Solver::analyse(const CscMatrix& A, const AnalysisOptions& opts,
                       const GraphOptions& graph_opts) {
  analysed_ = factorized_ = false;
  const auto t0 = std::chrono::steady_clock::now();
  SymbolicFactor sym;
  Status st = starfront::analyse(A, opts, sym);
  if (!st.ok()) return st;
  return analyse_symbolic(A, std::move(sym), graph_opts, t0);
}

Status Solver::analyse(const CscMatrix& A, SymbolicFactor sym, const GraphOptions& graph_opts) {
  analysed_ = factorized_ = false;
  if (sym.n != A.n || static_cast<idx_t>(sym.perm.size()) != A.n)
    return Status::error(StatusCode::invalid_argument,
                         "analyse: the symbolic factor (n=" + std::to_string(sym.n) + ") is not of A (n=" +
                             std::to_string(A.n) + ")");
  return analyse_symbolic(A, std::move(sym), graph_opts, std::chrono::steady_clock::now());
}

Status Solver::analyse_symbolic(const CscMatrix& A, SymbolicFactor sym, const GraphOptions& graph_opts,
                                std::chrono::steady_clock::time_point t0) {
  norm_index_built_ = false;  // a new pattern
  process_solve_ = ProcessSolve{};
  sym_ = std::move(sym);
  Status st = build_front_plan(A, sym_, plan_);
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
  unpin_values();  // a_.values may be reallocated by the next factorisation
  a_.values.clear();
  next_pin_.reset();  // values_buffer() sizes it for the new pattern
  next_values_.clear();
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
  // ‖A‖∞ (for the solve's backward errors) while the graph runs.
  double norm = -1.0;
  st = run_method(A, opts, exec, [&] {
    if (norm < 0) norm = symmetric_norm_inf(A);
  });
  factorized_ = st.ok();
  PhaseTimer keep;
  if (factorized_) {
    if (a_.values.capacity() < A.values.size()) unpin_values();  // the assignment reallocates
    a_.values = A.values;  // for iterative refinement (same pattern: checked above)
    norm_a_ = norm >= 0 ? norm : symmetric_norm_inf(a_);
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
  // With CUDA workers, the values that go to the GPU at every
  // refactorisation are page-locked once (asynchronous DMA instead of a
  // staged pageable copy); STARFRONT_PIN_VALUES=0 leaves them pageable
  // (measurement knob).
  const bool pin = exec == Executor::starpu && pin_values_enabled();
  bool finite = true, deferred = false;
  if (nnz > 0 && values == next_values_.data() && next_values_.size() == nnz) {
    // The caller wrote into values_buffer(): it becomes the copy kept for
    // iterative refinement (no copy), the old copy the next buffer. The
    // finiteness check is one read-only pass.
    std::swap(a_.values, next_values_);
    std::swap(values_pin_, next_pin_);
    if (next_values_.size() != nnz) {
      // The first swap (a_.values was empty or another size): the other
      // buffer is made now, so that later refactorisations allocate nothing.
      next_pin_.reset();
      next_values_.assign(nnz, 0.0);
    }
    if (pin) {
      values_pin_.ensure(a_.values);
      next_pin_.ensure(next_values_);
    }
    // A Cholesky factorisation on StarPU's workers runs on these values
    // before their finiteness is known: the ‖A‖∞ pass, which reads every
    // value while the graph runs, also sums |a_ij|, and the error (naming
    // the entry) is returned after that factorisation, before any
    // fallback to LDLᵀ. Cholesky meets a NaN or an infinite value as a
    // failing pivot at worst; its output stays in the factor storage, but
    // its status is replaced by the error and the solver is not
    // factorised. Otherwise the one read-only pass comes first.
    deferred = exec == Executor::starpu &&
               (opts.method == FactorMethod::llt || opts.method == FactorMethod::automatic);
    if (!deferred) finite = values_finite(a_.values.data(), nnz);
  } else {
    // The copy kept for iterative refinement is the matrix factorised: one
    // copy, and its pattern is the analysed one by construction. After a
    // failure it holds these values, but solve() refuses to run then.
    // The copy and the finiteness check in one pass.
    if (a_.values.capacity() < nnz) unpin_values();  // the resize reallocates
    a_.values.resize(nnz);
    if (pin) values_pin_.ensure(a_.values);
    // Streaming stores when the copy goes to the GPUs (page-locked), read
    // by DMA next; the ‖A‖∞ pass below then reads it from memory, off the
    // critical path (it runs while the GPU works).
    finite = nnz == 0 || copy_values_finite(values, nnz, a_.values.data(), values_pin_.pin != nullptr);
  }
  if (!finite) {  // check_values names the entry (the slow path)
    st = check_values(plan_, a_);
    if (st.ok()) st = Status::error(StatusCode::invalid_argument, "refactorize: a value of A is not finite");
    return st;
  }
  timer.lap(t_check);
  values_finite_ = true;
  // ‖A‖∞ (for the solve's backward errors) on this thread while the graph
  // runs on the workers, off the refactorisation's critical path: one
  // scattered pass over A (activsg2000's 154k entries: about 0.3 ms on the
  // 2-core build machine), split over norm_threads() threads
  // (STARFRONT_NORM_THREADS), unless the GPU computes it (below).
  double norm = -1.0, abs_sum = 0.0, t_norm = 0.0;
  auto norm_pass = [&] {
    if (norm >= 0) return;
    const auto tn = std::chrono::steady_clock::now();
    norm = symmetric_norm_inf(a_, &abs_sum, norm_threads());
    t_norm = std::chrono::duration<double>(std::chrono::steady_clock::now() - tn).count();
  };
  // When the factorisation is one fused kernel run inline on a GPU, the
  // GPU computes ‖A‖∞ after it (a few µs: DeviceNormRequest) instead of
  // this thread's pass, which took longer than the kernel on the H200
  // machine (bench/README.md, session 45). Its finite result is the
  // pass's value bit for bit and means every value is finite; NaN or +inf
  // sends the check to the host pass below (device_norm_enabled: a knob).
  DeviceNormRequest device_norm;
  // (Only a graph of one fused task can run inline: the index, 1.5 nnz
  // indices, is built for those only.)
  const bool want_device_norm = exec == Executor::starpu && device_norm_enabled() &&
                                (opts.method == FactorMethod::llt || opts.method == FactorMethod::automatic) &&
                                graph_.tasks.size() == 1 && graph_.tasks[0].kind == TaskKind::subtree;
  if (want_device_norm) {
    if (!norm_index_built_) {
      norm_index_ = symmetric_norm_rows_index(a_);
      norm_index_built_ = true;
    }
    device_norm.index = &norm_index_;
  }
  // The GPU's result when it is finite (then every value is finite too).
  auto take_device_norm = [&] {
    if (norm < 0 && device_norm.launched && device_norm.norm >= 0 && std::isfinite(device_norm.norm))
      norm = device_norm.norm;
    return norm >= 0;
  };
  std::function<Status()> check_after;
  if (deferred)
    check_after = [&] {
      // Finite row sums from the GPU (the host pass did not run): every
      // value is finite.
      if (norm < 0 && take_device_norm()) return Status::success();
      norm_pass();  // (not yet run if the graph ended first)
      // A finite sum means finite values; a sum that overflowed is checked
      // value by value.
      if (std::isfinite(abs_sum) || values_finite(a_.values.data(), nnz)) return Status::success();
      Status c = check_values(plan_, a_);
      return c.ok() ? Status::error(StatusCode::invalid_argument, "refactorize: a value of A is not finite") : c;
    };
  st = run_method(a_, opts, exec, norm_pass, check_after, want_device_norm ? &device_norm : nullptr);
  values_finite_ = false;
  factorized_ = st.ok();
  if (factorized_) {
    refine_steps_ = opts.refine_steps;
    take_device_norm();
    norm_a_ = norm >= 0 ? norm : symmetric_norm_inf(a_);
  }
  FactorStats& fs = stats_.factor;
  fs.phases.check += t_check;
  fs.phases.overlapped = t_norm;
  fs.total_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return st;
}

double* Solver::values_buffer() {
  if (!analysed_) return nullptr;
  const std::size_t nnz = a_.rowind.size();
  if (nnz == 0) return nullptr;
  if (next_values_.size() != nnz) {
    next_pin_.reset();  // the assignment may reallocate
    next_values_.assign(nnz, 0.0);
  }
  return next_values_.data();
}

void Solver::ValuesPin::ensure(std::vector<double>& v) {
  const std::size_t b = v.size() * sizeof(double);
  if (pin && at == v.data() && bytes == b) return;
  reset();
  pin = pin_for_gpus(v.data(), b);
  if (pin) at = v.data(), bytes = b;
}

Status Solver::run_method(const CscMatrix& A, const FactorOptions& opts, Executor exec,
                          const std::function<void()>& while_running,
                          const std::function<Status()>& deferred_check, DeviceNormRequest* device_norm) {
  FactorOptions o = opts;
  if (opts.method == FactorMethod::automatic) o.method = FactorMethod::llt;
  Status st = run_factorization(A, o, exec, while_running, device_norm);
  if (deferred_check) {
    Status c = deferred_check();
    if (!c.ok()) return c;
  }
  if (opts.method == FactorMethod::automatic && st.code == StatusCode::not_positive_definite) {
    o.method = FactorMethod::ldlt;
    st = run_factorization(A, o, exec, while_running);
  }
  return st;
}

Status Solver::prepare_process_solve(const TaskGraph& G) {
  if (process_solve_.built_for(G)) return Status::success();
  return process_solve_.build(G);
}

Status Solver::run_factorization(const CscMatrix& A, const FactorOptions& opts, Executor exec,
                                 const std::function<void()>& while_running, DeviceNormRequest* device_norm) {
#ifdef STARFRONT_HAVE_MPI
  local_ = LocalFactor{};  // a distributed factor of an earlier factorize_mpi is stale now
#endif
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
  Status st = exec == Executor::starpu ? factorize_starpu(*G, A, opts, factor_, &stats_.factor, values_finite_,
                                                          while_running, ldlt ? nullptr : device_norm)
                                       : factorize_sequential(*G, A, opts, factor_, &stats_.factor);
  // The one-process solve is compiled here, once per graph, not in the
  // const solve() (which several threads may call at once).
  if (st.ok() && !factor_.is_ldlt()) st = prepare_process_solve(*G);
  return st;
}

Status Solver::solve(double* B, idx_t nrhs, idx_t ldb) const {
  if (!factorized_)
    return Status::error(StatusCode::invalid_argument, "solve called without a successful factorisation");
  if (factor_.Lx.size() != static_cast<std::size_t>(plan_.factor_size()))
    return Status::error(StatusCode::invalid_argument,
                         "the factor is distributed over MPI ranks: use the collective solve_mpi");
  if (!factor_.is_ldlt() && !process_solve_.built_for(factorized_graph()))
    return Status::error(StatusCode::invalid_argument, "solve: the factorised graph has no compiled solve");
  std::unique_ptr<SolveBuffers> ws;
  {
    std::lock_guard<std::mutex> lock(pool_->mutex);
    if (!pool_->free.empty()) ws = std::move(pool_->free.back()), pool_->free.pop_back();
  }
  if (!ws) ws = std::make_unique<SolveBuffers>();
  ws->refine.norm_a = norm_a_;
  const idx_t ldx = std::max<idx_t>(1, a_.n);
  RefineInfo info;
  const Status st = refine_with(
      a_,
      [&](double* X, idx_t ncols) {
        if (factor_.is_ldlt())
          return solve_permuted_with(
              factor_, X, ncols, ldx, [&](double* Y, idx_t r) { ldlt_solve_permuted(factor_, Y, r); },
              &ws->solve.x);
        return process_solve_.solve(factor_, X, ncols, ldx, ws->solve);
      },
      B, nrhs, ldb, refine_steps_, &info, &ws->refine);
  std::lock_guard<std::mutex> lock(pool_->mutex);
  stats_.refine = info;
  pool_->free.push_back(std::move(ws));
  return st;
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
    st = distribute_graph(graph_, nranks, graph_opts_.slots, mapping_);
    if (st.ok()) st = build_solve_graph(graph_, mapping_, solve_graph_);
    if (st = agree_status(st, comm); !st.ok()) return st;
    mapped_ranks_ = nranks;
  }
  last_graph_ = &graph_;
  local_ = LocalFactor{};
  st = factorize_starpu_mpi(graph_, mapping_, A, opts, comm, factor_, local_, &stats_.factor, &mpi_info_);
  factorized_ = st.ok();
  if (factorized_) {
    if (a_.values.capacity() < A.values.size()) unpin_values();  // the assignment reallocates
    a_.values = A.values;
    norm_a_ = symmetric_norm_inf(a_);
    refine_steps_ = opts.refine_steps;
  }
  return st;
}

Status Solver::solve_mpi(const VectorLayout& L, double* B, idx_t nrhs, idx_t ldb, MPI_Comm comm) {
  int rank = 0, nranks = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &nranks);
  Status st;
  const idx_t n = plan_.n;
  if (!factorized_ || !local_.valid())
    st = Status::error(StatusCode::invalid_argument,
                       "solve called without a successful distributed factorisation (factorize_mpi)");
  else if (L.nranks != nranks || L.n != n)
    st = Status::error(StatusCode::invalid_argument, "solve: the vector layout is for " + std::to_string(L.n) +
                                                         " rows on " + std::to_string(L.nranks) + " ranks");
  else if (nrhs < 0)
    st = Status::error(StatusCode::invalid_argument, "solve: nrhs = " + std::to_string(nrhs) + " is negative");
  else if (L.count(rank) > 0 && nrhs > 0 && (!B || ldb < L.count(rank)))
    st = Status::error(StatusCode::invalid_argument,
                       "solve: this rank's " + std::to_string(L.count(rank)) + " rows need B and ldb >= " +
                           std::to_string(L.count(rank)) + " (ldb = " + std::to_string(ldb) + ")");
  long long r[2] = {nrhs, -nrhs};
  MPI_Allreduce(MPI_IN_PLACE, r, 2, MPI_LONG_LONG, MPI_MIN, comm);
  if (st.ok() && r[0] != -r[1])
    st = Status::error(StatusCode::invalid_argument, "solve: the ranks passed different numbers of right-hand sides");
  if (st = agree_status(st, comm); !st.ok()) return st;
  const auto t0 = std::chrono::steady_clock::now();
  stats_.refine = RefineInfo{};
  solve_info_ = MpiSolveInfo{};
  solve_info_.sent_bytes.assign(nranks, 0.0);
  solve_info_.tasks_run.assign(nranks, 0);
  solve_info_.tasks_submitted.assign(nranks, 0);
  mpi_solves_ = 0;
  const VectorLayout O = owner_layout(solve_graph_);
  const idx_t ldw = std::max<idx_t>(1, O.count(rank));
  // One distributed solve of the ncols columns X holds in layout `from`.
  auto distributed = [&](const VectorLayout& from, double* X, idx_t ldx, idx_t ncols) {
    std::vector<double> w(static_cast<std::size_t>(ldw * ncols));
    redistribute(from, X, ldx, O, w.data(), ldw, ncols, comm);
    MpiSolveInfo one;
    const Status s = solve_starpu_mpi(solve_graph_, local_, w.data(), ncols, ldw, comm, &one);
    if (s.ok()) redistribute(O, w.data(), ldw, from, X, ldx, ncols, comm);
    for (int q = 0; q < nranks && q < static_cast<int>(one.sent_bytes.size()); ++q) {
      solve_info_.sent_bytes[q] += one.sent_bytes[q];
      solve_info_.tasks_run[q] += one.tasks_run[q];
      solve_info_.tasks_submitted[q] += one.tasks_submitted[q];
    }
    solve_info_.nrhs += ncols;
    ++mpi_solves_;
    return s;
  };
  auto finish = [&](Status s) {
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    MPI_Bcast(&secs, 1, MPI_DOUBLE, 0, comm);
    solve_info_.seconds = secs;
    return s;
  };
  if (refine_steps_ == 0) return finish(distributed(L, B, ldb, nrhs));

  // Iterative refinement driven by rank 0, where A and the residuals live;
  // the other ranks join every distributed solve it asks for (count, or -1: done).
  const VectorLayout R = root_layout(n, nranks);
  const idx_t ld0 = std::max<idx_t>(1, n);
  std::vector<double> B0(rank == 0 ? static_cast<std::size_t>(ld0 * nrhs) : 0);
  redistribute(L, B, ldb, R, B0.data(), ld0, nrhs, comm);
  if (rank == 0) {
    auto step = [&](double* X, idx_t ncols) {
      long long k = ncols;
      MPI_Bcast(&k, 1, MPI_LONG_LONG, 0, comm);
      return distributed(R, X, ld0, ncols);
    };
    RefineWorkspace rw;
    rw.norm_a = norm_a_;
    st = refine_with(a_, step, B0.data(), nrhs, ld0, refine_steps_, &stats_.refine, &rw);
    long long done = -1;
    MPI_Bcast(&done, 1, MPI_LONG_LONG, 0, comm);
  } else {
    for (;;) {
      long long k = 0;
      MPI_Bcast(&k, 1, MPI_LONG_LONG, 0, comm);
      if (k < 0) break;
      distributed(R, nullptr, 1, static_cast<idx_t>(k));
    }
  }
  st = agree_status(st, comm);
  double ri[2] = {static_cast<double>(stats_.refine.steps), stats_.refine.backward_error};
  MPI_Bcast(ri, 2, MPI_DOUBLE, 0, comm);
  stats_.refine.steps = static_cast<int>(ri[0]);
  stats_.refine.backward_error = ri[1];
  if (st.ok()) redistribute(R, B0.data(), ld0, L, B, ldb, nrhs, comm);
  return finish(st);
}
#endif

}  // namespace starfront

