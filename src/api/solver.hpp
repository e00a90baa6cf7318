// The solver object behind the command-line tool and the public APIs:
// analyse once, factorise (and refactorise with new values on the same
// pattern), solve. Owns its symbolic factor, plan and numeric factor.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "analysis/symbolic.hpp"
#include "plan/cb_slots.hpp"
#include "plan/front_plan.hpp"
#include "plan/solve_graph.hpp"
#include "plan/task_graph.hpp"
#include "solve/factor.hpp"
#include "solve/graph_solve.hpp"
#include "solve/refine.hpp"

#ifdef STARFRONT_HAVE_MPI
#include "plan/rank_mapping.hpp"
#include "plan/solve_graph.hpp"
#include "runtime/starpu_mpi/mpi_executor.hpp"
#include "runtime/starpu_mpi/mpi_solve.hpp"
#include "runtime/starpu_mpi/vector_layout.hpp"
#endif

namespace starfront {

/// Which executor runs the factorisation's task graph.
enum class Executor {
  starpu,      ///< StarPU tasks (needs a started StarpuRuntime)
  sequential,  ///< in-process, one front after the other (the test oracle)
};

/// Timings and counts of the last analysis and factorisation.
struct SolverStats {
  double t_analyse_s = 0.0;  ///< ordering + symbolic analysis + plan, seconds
  FactorStats factor;        ///< last factorisation
  RefineInfo refine;         ///< last solve: refinement steps and final backward error
};

/// Analyse / factorise / solve of one sparse symmetric matrix.
/// Not thread-safe, except that several threads may call the const
/// solve() at once (each takes its own workspace; stats().refine is then
/// the outcome of the solve that finished last). Nothing may run
/// concurrently with analyse / factorize / refactorize.
class Solver {
 public:
  /// Symbolic analysis of the lower CSC matrix A, construction of the plan
  /// and compilation of the task graph. Keeps a copy of A's pattern (to
  /// detect a changed pattern later; the values of each successful
  /// factorisation join it, for iterative refinement).
  /// Errors: see analyse(), build_front_plan() and build_task_graph().
  Status analyse(const CscMatrix& A, const AnalysisOptions& opts,
                 const GraphOptions& graph_opts = GraphOptions{});
  /// The same with an analysis of A's pattern already made (analyse() of
  /// analysis/symbolic.hpp on this A; not checked beyond n): the plan and the
  /// graph are built from it. Errors: invalid_argument (sym of another n),
  /// and those of build_front_plan() and build_task_graph().
  Status analyse(const CscMatrix& A, SymbolicFactor sym, const GraphOptions& graph_opts = GraphOptions{});

  /// Numeric factorisation of A, whose pattern must be the analysed one
  /// (invalid_argument naming the first differing column otherwise).
  /// A refactorisation with new values reuses the analysis and the plan.
  /// opts.method: llt; ldlt / quasi_definite (run on a task graph without
  /// tiled fronts, compiled once from the analysis's graph options with
  /// tile = false when the analysed graph has tiled fronts); automatic: llt,
  /// then ldlt when llt reports not_positive_definite (method_used() says
  /// which one ran). Keeps a copy of A's values for iterative refinement.
  /// Errors: invalid_argument (also bad options), not_positive_definite
  /// (LLᵀ; Status::column is the failing column in the user's 0-based
  /// numbering), singular (LDLᵀ met a zero pivot: Status::column; inertia()
  /// is still valid), runtime_error.
  /// With Executor::starpu and CUDA workers, a Cholesky factorisation
  /// whose task graph is one fused subtree task runs its kernel from the
  /// calling thread, without StarPU (run_subtree_inline), on the first CUDA
  /// worker's device; the thread then keeps a CUDA stream and device
  /// buffers until it ends, and its current CUDA device is set back to the
  /// one it had (device 0 for a thread that never chose one).
  Status factorize(const CscMatrix& A, const FactorOptions& opts, Executor exec);

  /// Refactorisation with new values on the analysed pattern, for callers
  /// that assemble the same pattern again and again (interior-point
  /// iterations): `values` holds nnz entries in the order of the lower CSC
  /// matrix given to analyse() (its rowind), not owned, read only during
  /// the call. No pattern is compared (factorize() compares the whole
  /// colptr/rowind arrays); the values are copied once, into the copy kept
  /// for iterative refinement (not at all when `values` is values_buffer():
  /// that buffer becomes the copy), and that copy is factorised as
  /// factorize() does (same options, same methods, same errors; a value
  /// that is not finite gives invalid_argument naming the entry: checked
  /// before anything runs, except for values_buffer() with
  /// Executor::starpu and method llt or automatic, where the Cholesky
  /// factorisation runs first and the check is made by the ‖A‖∞ pass
  /// that runs meanwhile, its error returned instead of that
  /// factorisation's outcome and before any fallback to LDLᵀ; the factor
  /// storage then holds that run's output, and the solver is not
  /// factorised).
  /// Errors: invalid_argument (not analysed; values null while nnz > 0;
  /// bad options), otherwise as factorize().
  Status refactorize(const double* values, const FactorOptions& opts, Executor exec);

  /// A buffer of nnz doubles owned by the solver, for the caller to write
  /// the next refactorisation's values into (the order of refactorize()'s
  /// `values`), then call refactorize(values_buffer(), ...): the values are
  /// then not copied. The buffer becomes the matrix kept for iterative
  /// refinement, and the next call hands out another one (the two are
  /// swapped), so that writing the next values never changes the matrix
  /// of the current factor. The first call after analyse() allocates it;
  /// the first refactorize() given it allocates the other one unless the
  /// kept matrix already has nnz values, and (with the StarPU executor and
  /// CUDA workers) page-locks both, for the GPUs' DMA; later calls
  /// allocate nothing. Its contents on return are unspecified (zeros or
  /// earlier values); calling values_buffer() again before refactorize()
  /// returns the same buffer, contents kept. Valid until the next
  /// refactorize() or analyse(), or the solver's destruction; writing
  /// through an older pointer is undefined (it may be the kept copy).
  /// Null before a successful analyse() or when nnz = 0. The values are
  /// still checked (finite) by refactorize().
  double* values_buffer();

#ifdef STARFRONT_HAVE_MPI
  /// Distributed factorisation on the ranks of `comm` (collective; a
  /// StarpuRuntime started with RuntimeOptions::mpi_comm = &comm). Every
  /// rank passes the same A and ran the same analyse() (checked: the
  /// orderings and graphs are compared, invalid_argument if they differ).
  /// The first call for a communicator size maps the graph onto its ranks
  /// and plans the slots per rank (plan/rank_mapping.hpp; mapping()) and
  /// builds the solve graph (plan/solve_graph.hpp; solve_graph()).
  /// Cholesky only (method llt or automatic, which then runs llt only). The
  /// factor stays distributed (each rank keeps the blocks it owns): solve
  /// with solve_mpi (solve() returns invalid_argument). Errors: as
  /// factorize, the same on every rank.
  Status factorize_mpi(const CscMatrix& A, const FactorOptions& opts, MPI_Comm comm);

  /// Distributed solve A X = B after factorize_mpi (collective over the
  /// same comm). B: this rank's rows of the n×nrhs right-hand sides in
  /// layout L (runtime/starpu_mpi/vector_layout.hpp: root = everything on
  /// rank 0, owner_layout(), or a block layout), column-major with leading
  /// dimension ldb >= max(1, L.count(rank)) (ignored, and B may be null,
  /// where the rank holds no row); overwritten with the same rows of X.
  /// The rows move to the ranks owning the factor (owner layout), the
  /// solve runs there as StarPU-MPI tasks (mpi_solve.hpp), and the solution
  /// comes back in layout L. With FactorOptions::refine_steps > 0 (the
  /// default), iterative refinement as solve(): B and X are collected on
  /// rank 0, where the residual is formed (A lives there), and every
  /// correction is a distributed solve; stats().refine on every rank.
  /// Errors (the same on every rank, B unchanged): invalid_argument (no
  /// distributed factorisation, a layout of another size or communicator,
  /// nrhs < 0 or different on the ranks, ldb, a right-hand side entry not
  /// finite), runtime_error (overflow; refinement could not reach 1.5e-8).
  Status solve_mpi(const VectorLayout& L, double* B, idx_t nrhs, idx_t ldb, MPI_Comm comm);
  /// The mapping of the last factorize_mpi (nranks 0 before).
  const RankMapping& mapping() const { return mapping_; }
  /// The solve graph of that mapping (empty before).
  const SolveGraph& solve_graph() const { return solve_graph_; }
  /// The solve's own distribution of vectors (after a successful
  /// factorize_mpi; before: an empty layout, which solve_mpi refuses).
  VectorLayout solve_layout() const { return solve_graph_.graph ? owner_layout(solve_graph_) : VectorLayout{}; }
  /// Per-rank figures of the last factorize_mpi.
  const MpiRunInfo& mpi_info() const { return mpi_info_; }
  /// Figures of the last solve_mpi, summed over its distributed solves
  /// (one, plus one per refinement step): bytes sent, tasks; seconds of the
  /// whole call; nrhs = right-hand sides solved in all (columns).
  const MpiSolveInfo& mpi_solve_info() const { return solve_info_; }
  /// Distributed solves the last solve_mpi ran.
  int mpi_solves() const { return mpi_solves_; }
#endif

  /// Overwrites B (n×nrhs, column-major, leading dimension ldb) with A⁻¹B,
  /// with up to FactorOptions::refine_steps steps of iterative refinement
  /// (stats().refine reports them; refine_with: all right-hand sides solved
  /// together). LLᵀ: by the tasks of the factorised graph's solve graph run
  /// in this process (solve/graph_solve.hpp: ProcessSolve, compiled at the
  /// first LLᵀ factorisation of a graph), the same arithmetic as the
  /// distributed solve_mpi (bitwise the same solution); LDLᵀ:
  /// solve/ldlt_solve.hpp. Workspace: reused from earlier solves (one per
  /// concurrent caller), so repeated solves allocate only O(n) refinement
  /// vectors. Errors: invalid_argument (no successful factorisation, bad
  /// sizes), runtime_error (overflow; refinement could not reach 1.5e-8).
  Status solve(double* B, idx_t nrhs, idx_t ldb) const;

  /// The factorisation that ran last (llt, ldlt or quasi_definite).
  FactorMethod method_used() const { return factor_.method; }
  /// Inertia of the last factorisation: (n, 0, 0) after a successful LLᵀ;
  /// LDLᵀ: the signs of D, also after a `singular` failure (zero pivots
  /// counted). Not guaranteed when perturbed_pivots() > 0.
  InertiaCounts inertia() const { return factor_.inertia; }
  const NumericFactor& factor() const { return factor_; }

  const SymbolicFactor& symbolic() const { return sym_; }
  const FrontPlan& plan() const { return plan_; }
  const TaskGraph& graph() const { return graph_; }
  /// The graph the last factorisation ran: graph(), or for LDLᵀ on a graph
  /// with tiled fronts its untiled copy (tiled LDLᵀ is not implemented).
  const TaskGraph& factorized_graph() const { return last_graph_ ? *last_graph_ : graph_; }
  const SolverStats& stats() const { return stats_; }
  /// Memory the factorisation needs (bytes), from the analysed plan
  /// (plan/cb_slots.hpp); all zero before a successful analyse().
  MemoryEstimates memory() const { return analysed_ ? memory_estimates(graph_) : MemoryEstimates{}; }
  bool factorized() const { return factorized_; }
  /// ‖A‖∞ of the matrix of the last successful factorisation
  /// (symmetric_norm_inf: largest row sum of |a_ij| over the whole symmetric
  /// matrix), the scale of solve()'s backward errors; 0 before one.
  double matrix_norm_inf() const { return factorized_ ? norm_a_ : 0.0; }
  /// Smallest d_jj / |a_jj| over the pivots of the last successful
  /// factorisation (how close it came to the pivot tolerance).
  double min_pivot_ratio() const { return factor_.min_pivot_ratio; }

 private:
  Status check_pattern(const CscMatrix& A) const;
  /// Both analyse(): the plan and graph from sym (kept), the stats' analysis
  /// time counted from t0.
  Status analyse_symbolic(const CscMatrix& A, SymbolicFactor sym, const GraphOptions& graph_opts,
                          std::chrono::steady_clock::time_point t0);

  /// while_running: work for this thread while a StarPU graph runs
  /// (factorize_starpu); not called by the sequential executor.
  Status run_factorization(const CscMatrix& A, const FactorOptions& opts, Executor exec,
                           const std::function<void()>& while_running = {},
                           DeviceNormRequest* device_norm = nullptr);
  /// run_factorization for opts.method, with `automatic`'s fallback to ldlt.
  /// deferred_check (when set): the check of A's values that refactorize()
  /// leaves until the first factorisation has run (it runs while the graph
  /// does); called after it, and its error, if any, is returned instead of
  /// that factorisation's outcome and before any fallback runs.
  /// device_norm: passed to the first factorisation (factorize_starpu).
  Status run_method(const CscMatrix& A, const FactorOptions& opts, Executor exec,
                    const std::function<void()>& while_running = {},
                    const std::function<Status()>& deferred_check = {},
                    DeviceNormRequest* device_norm = nullptr);
  /// Builds process_solve_ for graph G unless it is built for it already
  /// (after each successful LLᵀ factorisation; once per graph).
  Status prepare_process_solve(const TaskGraph& G);

  /// Solve workspaces, reused across solves; a concurrent solve() takes
  /// another one (or a new one). Behind a pointer so that Solver stays movable.
  struct SolveBuffers {
    SolveWorkspace solve;
    RefineWorkspace refine;
  };
  struct SolvePool {
    std::mutex mutex;  ///< guards `free` and the solve's write of stats_.refine
    std::vector<std::unique_ptr<SolveBuffers>> free;
  };

  SymbolicFactor sym_;
  FrontPlan plan_;
  TaskGraph graph_;
  GraphOptions graph_opts_;
  TaskGraph graph_untiled_;        // LDLᵀ graph when graph_ has tiled fronts (built on demand)
  bool graph_untiled_built_ = false;
  const TaskGraph* last_graph_ = nullptr;  // graph_ or graph_untiled_
  CscMatrix a_;                    // analysed pattern; values of the last successful factorisation
  int refine_steps_ = 3;
  double norm_a_ = 0.0;            // ‖A‖∞ of a_ (symmetric_norm_inf), set with its values
  // The row-wise index of a_'s pattern for ‖A‖∞ on the GPU
  // (DeviceNormRequest), built at the first refactorisation after analyse.
  NormRowsIndex norm_index_;
  bool norm_index_built_ = false;
  // Set by refactorize while it runs: a_'s values were found finite (in
  // the copy's pass, copy_values_finite, or by values_finite on a swapped-in
  // values buffer) or will be checked after the first run (the deferred
  // check of run_method), so the StarPU executor skips its own check.
  bool values_finite_ = false;
  // The page-locking of a values array (refactorize, with CUDA workers: A's
  // values go to the GPU at every factorisation): the range it locks
  // (`at`, `bytes`). Released before the array may be reallocated.
  struct ValuesPin {
    std::unique_ptr<NumericFactor::PinRelease> pin;
    const double* at = nullptr;
    std::size_t bytes = 0;
    void reset() { pin.reset(), at = nullptr, bytes = 0; }
    /// Page-locks v unless it is already (no-op without CUDA workers).
    void ensure(std::vector<double>& v);
  };
  // The buffer values_buffer() hands out; refactorize() swaps it with
  // a_.values when given it. Declared before its pin.
  std::vector<double> next_values_;
  // Declared after a_ and next_values_: released before them.
  ValuesPin values_pin_;  // of a_.values
  ValuesPin next_pin_;    // of next_values_
  void unpin_values() { values_pin_.reset(); }
  NumericFactor factor_;
  ProcessSolve process_solve_;     // one-process solve of last_graph_ (LLᵀ solves)
  std::unique_ptr<SolvePool> pool_ = std::make_unique<SolvePool>();
  bool analysed_ = false, factorized_ = false;
  mutable SolverStats stats_;
#ifdef STARFRONT_HAVE_MPI
  RankMapping mapping_;
  SolveGraph solve_graph_;
  LocalFactor local_;               // this rank's factor blocks (factorize_mpi)
  MpiRunInfo mpi_info_;
  MpiSolveInfo solve_info_;
  int mpi_solves_ = 0;
  int mapped_ranks_ = 0;            // ranks of mapping_ (0: not mapped)
#endif
};

}  // namespace starfront
