// Types shared by the executors of a factorisation (sequential and StarPU)
// and by the triangular solves: options, the numeric factor, statistics, and
// the conversion of per-front outcomes into one Status.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "cpu/task_kernels.hpp"
#include "plan/front_plan.hpp"

namespace starfront {

/// Numerical options of the factorisation.
struct FactorOptions {
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
struct NumericFactor {
  const FrontPlan* plan = nullptr;  ///< not owned
  std::vector<double> Lx;           ///< size plan->factor_size()
  double min_pivot_ratio = 0.0;     ///< min over columns of d_jj / |a_jj| (diagnostic)
};

/// Statistics of one factorisation.
struct FactorStats {
  idx_t tasks = 0;        ///< tasks submitted
  double seconds = 0.0;   ///< wall time of the numeric factorisation
  double flops = 0.0;     ///< flops performed (sum of the fronts' counts)
  double task_seconds = 0.0;  ///< sum of the tasks' kernel run times (mean = task_seconds / tasks)
};

/// Turns the outcome recorded in a factorisation's context into a Status:
/// ok, or the failure with the smallest pivot column seen (final numbering),
/// reported in the user's original numbering with the pivot value. Also
/// stores the smallest pivot ratio in F.
Status context_status(const FrontPlan& P, const FactorContext& ctx, NumericFactor& F);

/// Checks that `values` can be factorised with plan P: nnz matches and every
/// value is finite (invalid_argument naming the first bad entry otherwise).
Status check_values(const FrontPlan& P, const CscMatrix& A);

}  // namespace starfront
