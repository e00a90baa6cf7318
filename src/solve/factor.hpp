// Types shared by the executors of a factorisation (sequential and StarPU)
// and by the triangular solves: options, the numeric factor, statistics, and
// the conversion of per-front outcomes into one Status.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "cpu/task_kernels.hpp"
#include "plan/front_plan.hpp"

namespace starfront {

/// Which factorisation (docs/LDLT.md).
enum class FactorMethod : unsigned char {
  llt,             ///< Cholesky P A Pᵀ = L Lᵀ; a symmetric positive definite matrix only
  ldlt,            ///< P A Pᵀ = L D Lᵀ, symmetric pivoting inside each front (1×1 and 2×2, threshold u)
  quasi_definite,  ///< L D Lᵀ without pivoting (1×1 pivots): symmetric quasi-definite matrices
  automatic,       ///< Solver only: LLᵀ, then LDLᵀ when LLᵀ finds the matrix not positive definite
};
/// "llt", "ldlt", "quasi-definite", "auto".
const char* factor_method_name(FactorMethod m);

/// Inertia of the factorised matrix: numbers of positive, negative and zero
/// eigenvalues (Sylvester: those of D). Exact when no pivot was perturbed.
struct InertiaCounts {
  idx_t positive = 0, negative = 0, zero = 0;
};

/// Numerical options of the factorisation.
struct FactorOptions {
  FactorMethod method = FactorMethod::llt;
  /// LDLᵀ threshold u in (0, 0.5] (LdltParams::u): every |l_ij| <= 1/u unless a
  /// pivot had to be taken below the threshold (counted).
  double ldlt_threshold = 0.01;
  /// τ of the static perturbation (LdltParams::tau): LDLᵀ: when no pivot of
  /// a front passes the threshold and the best candidate of column j is at
  /// most τ·c_j in magnitude (c_j = max_i |a_ij|, the size of row/column j of
  /// A: ‖A‖ measured per row, so that badly scaled KKT rows are judged
  /// against their own size), it becomes ±τ·c_j; quasi-definite: only a
  /// numerically zero pivot in a nonzero column is perturbed. Default √ε ≈
  /// 1.5e-8 (the static-pivoting value of SuperLU_DIST and PARDISO): small
  /// enough for iterative refinement to remove its effect on
  /// well-conditioned systems, and by Weyl's inequality the inertia is still
  /// exact when no eigenvalue of A is within the perturbations' size of 0.
  double perturbation = 1.4901161193847656e-08;
  /// Largest number of iterative refinement steps of each later solve
  /// (Solver::solve; solve/refine.hpp): stops earlier at backward error
  /// <= 1e-15 or on stagnation. 0: no refinement. Any method.
  int refine_steps = 3;

  /// Relative pivot tolerance of Cholesky: the pivot d_jj (diagonal of the
  /// Schur complement when column j is eliminated) must be finite and
  /// > tol·|a_jj|; otherwise the factorisation stops with
  /// not_positive_definite naming column j. A negative value (the default)
  /// means tol = n·ε (ε = 2.2e-16): rounding in the elimination of n columns
  /// leaves a pivot of a singular matrix around that size relative to its
  /// diagonal (measured: 2D grid Laplacians, singular, left pivots of 1e-14 to
  /// 5e-14·|a_jj| at n = 1e3..1e4), while the real SPD matrices here keep
  /// ratios above 1e-9. 0 refuses only d_jj <= 0 and NaN.
  double pivot_tol = -1.0;

  /// Watchdog of the StarPU executor, seconds: when no task completes for
  /// this long, the factorisation is cancelled (the remaining tasks skip
  /// their work) and returns runtime_error naming the tasks still running.
  /// 0 (the default): no watchdog. Must be finite and >= 0.
  double watchdog_seconds = 0.0;

  /// Testing aid for the watchdog: the task with this index (submission
  /// order) does not finish until the factorisation is cancelled, as a hung
  /// kernel would. -1 (the default): none.
  idx_t debug_stall_task = -1;

  /// The tolerance used for a matrix of order n.
  double effective_pivot_tol(idx_t n) const {
    return pivot_tol >= 0 ? pivot_tol : static_cast<double>(std::max<idx_t>(n, 1)) * 2.220446049250313e-16;
  }
};

/// The numeric Cholesky factor: the panels L_s of every front, concatenated
/// (layout in FrontPlan::l_offset). Valid only with the plan it was built on.
///
/// LDLᵀ (method ldlt or quasi_definite): each panel holds the unit lower L11
/// (strictly lower part) and L21 of its front with D's diagonal on L11's
/// diagonal; the fully-summed rows of the panel are in pivot order:
/// panel row i of front s (first pivot f = super_start[s]) belongs to column
/// pivot_order[f + i] (final numbering) — a permutation inside
/// [f, f + ncols(s)). CB rows keep the front's row order.
struct NumericFactor {
  /// Undoes a page-locking of Lx's memory when destroyed (see lx_pin).
  struct PinRelease {
    virtual ~PinRelease() = default;
  };

  NumericFactor() = default;
  NumericFactor(NumericFactor&&) noexcept = default;
  /// Releases this factor's page-lockings (lx_pin, cb_pin, declared before Lx and cb_host) before the old
  /// memory is freed.
  NumericFactor& operator=(NumericFactor&&) noexcept = default;
  ~NumericFactor() {  // unlock before the memory is freed
    cb_pin.reset();
    lx_pin.reset();
  }

  const FrontPlan* plan = nullptr;  ///< not owned
  /// Set by the StarPU executor with CUDA workers: Lx's memory is
  /// page-locked (so that GPU copies of L's blocks run at full bus speed and
  /// asynchronously) and stays so across refactorisations, which reuse Lx;
  /// released before Lx's memory is freed. Null: not page-locked.
  std::unique_ptr<PinRelease> lx_pin;
  std::vector<double> Lx;           ///< size plan->factor_size()
  /// TaskGraph::build_id of the graph whose tasks last wrote Lx (StarPU
  /// executor; a refactorisation with the same graph reuses Lx unzeroed).
  std::uint64_t lx_graph = 0;
  /// StarPU executor: host memory of the contribution-block slots that fused
  /// subtree tasks write (their roots' CBs), kept across refactorisations
  /// with the same graph (cb_graph) so that these slots cost no allocation
  /// and no page faults per factorisation (StarPU allocates and frees a slot
  /// registered without a home in every factorisation); cb_host_doubles
  /// doubles, uninitialised. Page-locked with CUDA workers (cb_pin, released
  /// before cb_host is freed). Empty for other executors.
  std::unique_ptr<PinRelease> cb_pin;
  std::unique_ptr<double[]> cb_host;
  std::size_t cb_host_doubles = 0;
  std::uint64_t cb_graph = 0;
  /// GPU resources a factor keeps across refactorisations (defined by the
  /// runtime that makes them; destroyed with the factor).
  struct DeviceState {
    virtual ~DeviceState() = default;
  };
  /// StarPU executor with CUDA workers, a factorisation that is one fused
  /// subtree task without buffers (GraphTaskArgs::direct): the device
  /// buffers, stream and event of the copy of A's values issued before the
  /// task is submitted (issue_direct_values), kept (also through
  /// factorisations of other graphs) and reused by the next one. Null
  /// until the first such factorisation.
  std::unique_ptr<DeviceState> direct_values;
  double min_pivot_ratio = 0.0;     ///< min over columns of d_jj / |a_jj| (diagnostic; LLᵀ only)

  FactorMethod method = FactorMethod::llt;  ///< the factorisation that ran
  std::vector<idx_t> pivot_order;       ///< LDLᵀ, size n (see above)
  std::vector<signed char> pivot_size;  ///< LDLᵀ, size n: 1, 2 (first of a 2×2 block), 0 (second)
  std::vector<double> d_off;            ///< LDLᵀ, size n: D(j+1, j) where pivot_size[j] == 2
  InertiaCounts inertia;                ///< LLᵀ success: (n, 0, 0)
  idx_t perturbed_pivots = 0;           ///< pivots replaced by ±τ‖A‖_max (inertia then not guaranteed)
  idx_t delayed_pivots = 0;             ///< always 0: delayed pivoting is not implemented (docs/LDLT.md)
  idx_t below_threshold_pivots = 0;     ///< pivots used although they failed u (growth not bounded)
  idx_t two_by_two_pivots = 0;          ///< 2×2 pivot blocks
  /// LDLᵀ: no perturbed pivot, no pivot below the threshold (quasi-definite
  /// mode: |d| >= u·max|column|), and u >= 0.01; LLᵀ success: always.
  bool inertia_guaranteed = true;
  bool is_ldlt() const { return method == FactorMethod::ldlt || method == FactorMethod::quasi_definite; }
};

/// Where the wall time of one factorisation went, in seconds, phase by phase
/// (steady clock; the phases follow each other, so their sum is the wall
/// time of Solver::factorize up to the few statements between them). Each
/// executor fills the phases it has; the others stay 0 (the StarPU-MPI
/// executor fills none yet). Measured on every factorisation (a handful of
/// clock reads): the figures show what a refactorisation with the same
/// pattern pays outside the kernels. With FactorMethod::automatic the
/// executor's phases are those of its last run (ldlt after a failed llt),
/// while FactorStats::total_seconds covers both.
struct FactorPhases {
  /// Solver::factorize: the options and A's pattern against the analysed
  /// one; Solver::refactorize: the options and the new values copied in;
  /// executor: every value of A finite (check_values).
  double check = 0.0;
  /// Executor: the factor's storage (reused by a refactorisation), the
  /// context, the GPU index look-up (gpu_assembly_cache), page-locking and
  /// StarPU handle registration.
  double setup = 0.0;
  /// StarPU executor: task insertion (workers paused meanwhile).
  double submit = 0.0;
  /// From the start of the tasks (StarPU: workers resumed) to the last
  /// task's completion; sequential executor: the whole task loop.
  double execute = 0.0;
  /// StarPU executor: unregistration (the blocks of L brought home, A's
  /// values, slots and index handles released) and the workers paused.
  double writeback = 0.0;
  /// Parts of writeback (included in it, not added by sum()): the wait for
  /// the GPU front tasks' own copies of L home (wait_front_panel_copies),
  /// and the unregistration of the blocks of L that have a StarPU handle
  /// (each waits for its copy home). The rest of writeback is the slots'
  /// unregistration and the workers' pause.
  double writeback_copies = 0.0;
  double writeback_blocks = 0.0;
  /// The outcome turned into a Status; Solver::factorize: A's values kept
  /// for iterative refinement.
  double finish = 0.0;
  /// Solver::refactorize: its ‖A‖∞ pass (with the deferred finiteness
  /// check), run on the calling thread while the graph executes: part of
  /// execute, not added by sum(); when it is longer than the graph, execute
  /// is this pass.
  double overlapped = 0.0;
  double sum() const { return check + setup + submit + execute + writeback + finish; }
};

/// Splits wall time into phases: each lap() adds the seconds since the
/// previous lap (or since construction) to one phase.
class PhaseTimer {
 public:
  PhaseTimer() : last_(std::chrono::steady_clock::now()) {}
  void lap(double& phase) {
    const auto now = std::chrono::steady_clock::now();
    phase += std::chrono::duration<double>(now - last_).count();
    last_ = now;
  }
  /// The end of the last lap (the construction before the first): spans
  /// taken from it line up with the phases exactly.
  std::chrono::steady_clock::time_point last() const { return last_; }

 private:
  std::chrono::steady_clock::time_point last_;
};

/// Statistics of one factorisation.
struct FactorStats {
  idx_t tasks = 0;        ///< tasks submitted
  double seconds = 0.0;   ///< wall time of the executor (setup to writeback; not check_values, not finish)
  double flops = 0.0;     ///< flops performed (sum of the fronts' counts)
  double task_seconds = 0.0;  ///< sum of the tasks' kernel run times (mean = task_seconds / tasks)
  /// Wall time of the whole Solver::factorize call (0 when the executor is
  /// called directly), seconds.
  double total_seconds = 0.0;
  FactorPhases phases;    ///< where the time went (see FactorPhases)
};

/// Checks the numerical options: ldlt_threshold in (0, 0.5], perturbation
/// in (0, 1), refine_steps in [0, 100] (invalid_argument naming the option
/// otherwise).
Status check_factor_options(const FactorOptions& opts);

/// Sets up the context of a factorisation of A with plan P and options opts
/// (called by both executors before running tasks): the Cholesky pivot
/// tolerance, A's values and, for ldlt / quasi_definite, the LDLᵀ parameters
/// (column scales c_j = max_i |a_ij|, zero tolerance n·ε·c_j) and F's LDLᵀ
/// arrays. F.Lx must already be sized. `automatic` factorises as llt.
void prepare_factor_context(const FrontPlan& P, const CscMatrix& A, const FactorOptions& opts,
                            NumericFactor& F, FactorContext& ctx);

/// Turns the outcome recorded in a factorisation's context into a Status:
/// ok, or the failure with the smallest pivot column seen (final numbering),
/// reported in the user's original numbering with the pivot value. Also
/// stores the smallest pivot ratio in F. LDLᵀ: stores the inertia and pivot
/// counts in F (also on failure); singular when a zero pivot was met (the
/// column of the first one, in the user's 0-based numbering; F.inertia is
/// valid), runtime_error for a pivot that is not finite or a tiled task.
Status context_status(const FrontPlan& P, const FactorContext& ctx, NumericFactor& F);

/// Checks that `values` can be factorised with plan P: nnz matches and every
/// value is finite (invalid_argument naming the first bad entry otherwise).
Status check_values(const FrontPlan& P, const CscMatrix& A);

/// Whether the n values at v are all finite: one read-only pass, eight
/// values a step with SSE2 (check_values' first pass; Solver::refactorize
/// on its values buffer).
bool values_finite(const double* v, std::size_t n);

/// Copies n values from src to dst (not overlapping) and reports whether
/// every one is finite, in one vectorisable pass: what check_values' first
/// pass does, merged with the copy a refactorisation makes anyway.
/// streaming: with SSE2 and n >= 4096, non-temporal stores (less memory
/// traffic, dst left out of the caches: for a copy that a GPU's DMA reads
/// next, not this core).
bool copy_values_finite(const double* src, std::size_t n, double* dst, bool streaming = false);

}  // namespace starfront
