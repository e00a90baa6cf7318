// The numeric plan of a multifrontal Cholesky factorisation: where every
// front's factor block lives, how A's entries and the children's contribution
// blocks (CBs) are assembled into it, and the order in which front tasks are
// submitted. Built once per analysis from the SymbolicFactor and A's pattern;
// pure data, no runtime (both executors, sequential and StarPU, walk it).
//
// References: J. W. H. Liu, "The multifrontal method for sparse matrix
// solution: theory and practice", SIAM Review 34(1), 1992 (fronts, extend-add,
// relative indices); I. S. Duff & J. K. Reid, "The multifrontal solution of
// indefinite sparse symmetric linear equations", ACM TOMS 9(3), 1983.
#pragma once

#include <vector>

#include "analysis/symbolic.hpp"

namespace starfront {

/// Layout of the numeric data of one front (supernode s) and its assembly maps.
///
/// Front s has order m = front_order(s) and k = ncols(s) fully-summed columns.
/// Its factor block L_s is the dense column-major m×k panel [L11; L21]
/// (leading dimension m), stored at Lx[l_offset[s]]. Its contribution block is
/// the dense column-major (m-k)×(m-k) lower triangle (leading dimension m-k),
/// which lives in its own buffer while the parent has not consumed it.
struct FrontPlan {
  const SymbolicFactor* symbolic = nullptr;  ///< not owned; must outlive the plan

  idx_t n = 0;
  idx_t nsuper = 0;
  std::vector<idx_t> l_offset;   ///< size nsuper+1; offset of L_s in Lx (doubles)
  std::vector<idx_t> child_ptr;  ///< size nsuper+1; children of s in child_list
  std::vector<idx_t> child_list; ///< children in increasing (postorder) order

  /// Relative indices (Liu 1992): for child c, position in the parent's front
  /// of each CB row of c; rel[rel_ptr[c] + r] for r in [0, cb_order(c)).
  std::vector<idx_t> rel_ptr;  ///< size nsuper+1
  std::vector<idx_t> rel;

  /// Assembly of A: for the entries of A that belong to front s,
  /// Lx[l_offset[s] + a_dst[q]] += values[a_src[q]] for q in [a_ptr[s], a_ptr[s+1]),
  /// where `values` is the caller's value array of the lower CSC matrix A
  /// (original numbering), so a refactorisation needs no permuted copy.
  std::vector<idx_t> a_ptr;  ///< size nsuper+1
  std::vector<idx_t> a_src;  ///< index into A.values
  std::vector<idx_t> a_dst;  ///< offset inside L_s

  /// diag_src[k]: index in A.values of the diagonal entry of pivot column k,
  /// or -1 when A has no stored diagonal there. Used by the pivot test.
  std::vector<idx_t> diag_src;

  std::vector<double> front_flops;  ///< flops of front s (POTRF+TRSM+SYRK), CHOLMOD's convention
  std::vector<idx_t> task_order;    ///< supernodes in submission order (a postorder)
  idx_t nnz_a = 0;                  ///< entries of A expected by a_src (A.nnz())

  idx_t front_order(idx_t s) const { return symbolic->front_order(s); }
  idx_t ncols(idx_t s) const { return symbolic->ncols(s); }
  idx_t cb_order(idx_t s) const { return symbolic->cb_order(s); }
  /// Number of doubles of the CB buffer of s (full square, lower part used).
  idx_t cb_size(idx_t s) const { return cb_order(s) * cb_order(s); }
  /// Total doubles of the factor storage Lx.
  idx_t factor_size() const { return l_offset.empty() ? 0 : l_offset.back(); }
};

/// Builds the plan for factorising the lower CSC matrix A (original numbering,
/// the same pattern that `sym` was computed from) with the structure `sym`.
/// Errors: invalid_argument when A's order or pattern does not match sym (an
/// entry of A falls outside the front structure).
Status build_front_plan(const CscMatrix& A, const SymbolicFactor& sym, FrontPlan& out);

}  // namespace starfront
