// Dense LDLᵀ kernel of one front for symmetric indefinite matrices: the k
// fully-summed columns of an m×k front panel are factorised with symmetric
// pivoting restricted to those columns (1×1 and 2×2 pivots, threshold u),
// then the contribution block is updated with −L21·D·L21ᵀ. Also the
// quasi-definite variant (no pivoting, 1×1 pivots in the given order).
// StarPU-free; both executors reach it through run_task_cpu. docs/LDLT.md
// explains the rules (threshold, perturbation τ, zero pivots, inertia).
//
// References: J. R. Bunch & L. Kaufman, "Some stable methods for calculating
// inertia and solving symmetric linear systems", Math. Comp. 31(137), 1977
// (1×1/2×2 pivots); I. S. Duff & J. K. Reid, "The multifrontal solution of
// indefinite sparse symmetric linear equations", ACM TOMS 9(3), 1983 (pivoting
// restricted to the fully-summed block, threshold tests for 1×1 and 2×2);
// C. Ashcraft, R. G. Grimes & J. G. Lewis, "Accurate symmetric indefinite
// linear equation solvers", SIAM J. Matrix Anal. Appl. 20(2), 1998 (bounded
// entries of L: |l_ij| <= 1/u); O. Schenk & K. Gärtner, "On fast
// factorization pivoting methods for sparse symmetric indefinite systems",
// ETNA 23, 2006 (static perturbation of small pivots); R. J. Vanderbei,
// "Symmetric quasi-definite matrices", SIAM J. Optim. 5(1), 1995.
#pragma once

#include <mutex>
#include <vector>

#include "cpu/front_cholesky.hpp"
#include "plan/front_plan.hpp"

namespace starfront {

/// Pivoting rule of the dense LDLᵀ kernel.
enum class LdltPivoting : unsigned char {
  threshold_bk,  ///< Bunch–Kaufman-type search over the fully-summed columns, threshold u
  none,          ///< quasi-definite: 1×1 pivots in the given order
};

/// Numerical parameters of the dense LDLᵀ kernel.
struct LdltParams {
  LdltPivoting pivoting = LdltPivoting::threshold_bk;
  /// Threshold u in (0, 0.5]: a 1×1 pivot d is accepted when |d| >= u·(largest
  /// off-diagonal |entry| of its active column, contribution-block rows
  /// included); a 2×2 pivot D when |D⁻¹|·(off-block column maxima) <= 1/u
  /// (Duff & Reid 1983). Either way every entry of L is at most 1/u.
  double u = 0.01;
  /// Static perturbation τ (0 < τ < 1): when no acceptable pivot exists and
  /// the best candidate d of column j is at most τ·c_j in magnitude (c_j:
  /// the column's scale, below), it becomes sign(d)·τ·c_j (+ when d = 0) and
  /// is counted as perturbed. Quasi-definite mode: only a pivot at most
  /// zero_rel·c_j (numerically zero) in a nonzero column is perturbed.
  double tau = 1.4901161193847656e-08;
  /// A column whose active entries are all at most zero_rel·c_j in magnitude
  /// is a zero pivot (the caller sets n·ε: rounding of n eliminations).
  double zero_rel = 0.0;
};

/// Per-front outcome of the dense LDLᵀ kernel (counts over its k columns).
struct LdltCounts {
  idx_t positive = 0, negative = 0, zero = 0;  ///< inertia of D (zero pivots: D = 0)
  idx_t perturbed = 0;        ///< pivots replaced by ±τ·c_j
  idx_t below_threshold = 0;  ///< 1×1 pivots used unperturbed although they fail u (growth not bounded)
  idx_t two_by_two = 0;       ///< 2×2 pivot blocks
  idx_t first_zero = -1;      ///< position (0-based, after pivoting) of the first zero pivot, or -1
  idx_t first_nonfinite = -1; ///< position of the first pivot that is not finite (overflow), or -1
  double nonfinite_pivot = 0.0;
};

/// Partial LDLᵀ of the panel L (m×k, column-major, leading dimension m): the
/// k×k fully-summed block (lower triangle) and the (m-k)×k rows below it.
/// On exit, with Q the permutation of the fully-summed columns:
///   Qᵀ [A11; A21] restricted to the panel = [L11; L21] D11 (columns), i.e.
///   A11(perm, perm) = L11 D L11ᵀ and A21(:, perm) = L21 D L11ᵀ,
/// L11 unit lower (its unit diagonal not stored), D block diagonal.
///   L          in: assembled panel; out: strictly lower L11 and L21, D's
///              diagonal on L11's diagonal; L(i+1,i) = 0 inside a 2×2 block
///   col_scale  size k, per column in the input order: c_j, the largest
///              |a_ij| of row/column j in the original matrix A (scales the
///              zero test and the perturbation, so that badly scaled rows are
///              judged against their own size); a column whose active entries
///              (diagonal and below, CB rows included) are all <=
///              zero_rel·c_j is a zero pivot (D = 0, L column 0)
///   perm       out, size k: perm[i] = input column at pivot position i
///   pivsize    out, size k: 1 (1×1 pivot), 2 (first column of a 2×2 block),
///              0 (second column of a 2×2 block)
///   d_off      out, size k: D(i+1, i) when pivsize[i] == 2, else 0
/// Zero pivots do not stop the factorisation (the inertia stays countable);
/// the caller reports them. A non-finite entry in the input panel, in a
/// pivot or in L (overflow) sets first_nonfinite (the column; the factor is
/// then meaningless and must not be used). Cost: about m·k² flops plus the pivot searches
/// (O(m) per candidate column examined).
LdltCounts ldlt_panel(double* L, idx_t m, idx_t k, const LdltParams& prm, const double* col_scale,
                      idx_t* perm, signed char* pivsize, double* d_off);

/// Contribution-block update after ldlt_panel: the lower triangle of cb
/// ((m-k)×(m-k), leading dimension m-k) -= L21·D·L21ᵀ, with L21 the rows
/// k..m-1 of the panel L (leading dimension m). W is workspace. BLAS-3
/// (column blocks of 64 with DGEMM); the strictly upper part of the diagonal
/// blocks of cb is overwritten with meaningless values.
void ldlt_update_cb(const double* L, idx_t m, idx_t k, const signed char* pivsize,
                    const double* d_off, double* cb, std::vector<double>& W);

/// Signs of the eigenvalues of the symmetric 2×2 block [a b; b c]:
/// adds to pos / neg (det < 0: one each; det > 0: both of trace's sign).
void inertia_2x2(double a, double b, double c, idx_t& pos, idx_t& neg);

/// What the fronts of one LDLᵀ factorisation share: parameters in; the pivot
/// order and D's block structure out, in arrays of n entries indexed by
/// position in the final (symbolic) numbering, of which front s writes only
/// its own range [super_start[s], super_start[s] + ncols(s)) (no lock
/// needed); totals of the counts under a lock. Part of FactorContext.
struct LdltFactorState {
  bool active = false;           ///< false: the factorisation is a Cholesky
  LdltParams params;
  std::vector<double> col_scale;  ///< size n: c_j = max_i |a_ij| of each pivot column (final numbering)
  idx_t* pivot_order = nullptr;  ///< out: pivot_order[j] = column (final numbering) eliminated at position j
  signed char* pivot_size = nullptr;  ///< out: 1, 2 (first of a 2×2), 0 (second of a 2×2)
  double* d_off = nullptr;       ///< out: D(j+1, j) at the first column j of a 2×2 block, else 0

  std::mutex mutex;
  LdltCounts totals;             ///< sums; first_zero / first_nonfinite: smallest final position
  idx_t first_zero_column = -1;      ///< column (final numbering) of the zero pivot at totals.first_zero
  idx_t first_nonfinite_column = -1; ///< same for totals.first_nonfinite
  bool unsupported_task = false;     ///< a tiled task met an LDLᵀ factorisation

  /// Adds the counts of the front whose first pivot position is `first`;
  /// `perm` is its local pivot order (to name columns).
  void add(const LdltCounts& c, idx_t first, const idx_t* perm);
};

/// LDLᵀ of front s of plan P in place: assembly (as for Cholesky), then
/// ldlt_panel on its fully-summed columns and ldlt_update_cb on its
/// contribution block. Writes the front's range of st's output arrays and
/// adds its counts to st. Arguments as factor_front_cpu. The result is failed
/// only when a pivot is not finite (overflow; failed_column names it);
/// zero pivots are counted, the factorisation goes on. Not for tiled fronts.
FrontResult factor_front_ldlt_cpu(const FrontPlan& P, idx_t s, const double* values, double* Ls,
                                  double* cb, const double* const* child_cb, LdltFactorState& st);

}  // namespace starfront
