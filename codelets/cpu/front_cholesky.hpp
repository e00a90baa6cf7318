// CPU kernel of one front of the multifrontal Cholesky factorisation:
// assembly of A's entries, extend-add of the children's contribution blocks,
// and the partial dense factorisation POTRF / TRSM / SYRK.
// Used by both executors (sequential and StarPU); never touches a runtime.
#pragma once

#include "plan/front_plan.hpp"

namespace starfront {

/// Outcome of one front's factorisation.
struct FrontResult {
  enum class State : unsigned char { pending, done, failed, skipped };
  State state = State::pending;
  idx_t failed_column = -1;  ///< pivot column (final numbering) that failed, or -1
  double pivot = 0.0;        ///< the failing pivot d_jj (Schur-complement diagonal)
  double min_pivot_ratio = 0.0;  ///< min over the front's columns of d_jj / |a_jj|
};

/// Pivot test after a POTRF of k columns stored at L (leading dimension m)
/// whose first column is pivot `first` (final numbering): d_jj = L_jj² must be
/// finite and > pivot_tol·|a_jj|. Returns the first failing local column (and
/// sets r.pivot) or -1 (and sets r.min_pivot_ratio).
idx_t check_pivots(const FrontPlan& P, idx_t first, const double* values, const double* L, idx_t m,
                   idx_t k, double pivot_tol, FrontResult& r);

/// Assembles front s: zeroes the m×k panel Ls (leading dimension m) and the
/// (m-k)×(m-k) CB buffer cb (leading dimension m-k; may be null when m == k),
/// adds A's entries of the front and extend-adds the children's CBs
/// (child_cb[i]: CB of the i-th child in P.child_list order). Shared by the
/// Cholesky and the LDLᵀ front kernels.
void assemble_front_cpu(const FrontPlan& P, idx_t s, const double* values, double* Ls, double* cb,
                        const double* const* child_cb);

/// Default of cb_block_columns(): 16 to 48 took about the same time on one
/// SkylakeX core (lap3d 60³'s CPU subtrees, bench/README.md, session 32).
constexpr idx_t kCbBlockColumns = 32;

/// Fronts with at least this many fully-summed columns compute their CB by
/// one DSYRK (compute-bound: 2k flops per CB entry), the others by column
/// blocks (cb_block_columns).
constexpr idx_t kCbBlockMaxColumns = 128;

/// Width (columns) of the column blocks in which factor_front_cpu computes
/// the CB of a front with k < kCbBlockMaxColumns: per block, one DGEMM
/// (β = 0) and the children's extend-add into it while it is in cache.
/// kCbBlockColumns unless the measurement knob STARFRONT_CB_BLOCK=N sets N
/// (read once); 0: one DSYRK over the whole CB, then the extend-add (the
/// kernel before session 32).
idx_t cb_block_columns();

/// Factorises front s of the plan P in place.
///   values    A's values (P.nnz_a doubles, the caller's lower CSC order)
///   Ls        the m×k factor panel (leading dimension m), overwritten
///   cb        the (m-k)×(m-k) CB buffer (leading dimension m-k): its lower
///             triangle (diagonal included) is overwritten; its strict upper
///             triangle is never read, and may be overwritten (in the
///             diagonal blocks of cb_block_columns() columns, with
///             −L21·L21ᵀ, no children's entries); may be null when m == k
///   child_cb  child_cb[i] is the CB buffer of the i-th child of s in
///             P.child_list order
///   pivot_tol a pivot d_jj (the diagonal of the Schur complement when column j
///             is eliminated) is refused when it is not finite or
///             d_jj <= pivot_tol·|a_jj| (a_jj: A's diagonal entry, 0 if absent)
///   cb_block  width of the CB's column blocks (cb_block_columns(), which
///             the default -1 reads; 0: one DSYRK); tests set it
/// On failure the front's factor is left partial and the result says which
/// column failed; the CB is then not meaningful. Cost: P.front_flops[s] flops.
FrontResult factor_front_cpu(const FrontPlan& P, idx_t s, const double* values, double* Ls,
                             double* cb, const double* const* child_cb, double pivot_tol, idx_t cb_block = -1);

}  // namespace starfront
