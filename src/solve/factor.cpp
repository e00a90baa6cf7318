#include "solve/factor.hpp"

#include <cmath>
#include <cstdio>
#include <limits>

namespace starfront {

Status context_status(const FrontPlan& P, const FactorContext& ctx, NumericFactor& F) {
  F.min_pivot_ratio = ctx.min_pivot_ratio;
  if (!ctx.device_error.empty())
    return Status::error(StatusCode::runtime_error, "GPU task failed: " + ctx.device_error);
  if (ctx.fail_column < 0) return Status::success();
  const idx_t col = P.symbolic->perm[ctx.fail_column];
  char buf[320];
  std::snprintf(buf, sizeof buf,
                "matrix is not positive definite: pivot %.6g at column %lld (1-based, original "
                "numbering; elimination step %lld of %lld); a pivot must be finite and > %.3g "
                "times |a_jj|",
                ctx.fail_pivot, static_cast<long long>(col + 1),
                static_cast<long long>(ctx.fail_column + 1), static_cast<long long>(P.n),
                ctx.pivot_tol);
  Status st = Status::error(StatusCode::not_positive_definite, buf);
  st.column = col;
  st.pivot = ctx.fail_pivot;
  return st;
}

Status check_values(const FrontPlan& P, const CscMatrix& A) {
  if (A.n != P.n || A.nnz() != P.nnz_a)
    return Status::error(StatusCode::invalid_argument,
                         "matrix (n=" + std::to_string(A.n) + ", nnz=" + std::to_string(A.nnz()) +
                             ") does not match the analysed pattern (n=" + std::to_string(P.n) +
                             ", nnz=" + std::to_string(P.nnz_a) + ")");
  for (idx_t j = 0; j < A.n; ++j)
    for (idx_t p = A.colptr[j]; p < A.colptr[j + 1]; ++p)
      if (!std::isfinite(A.values[p]))
        return Status::error(StatusCode::invalid_argument,
                             "entry (" + std::to_string(A.rowind[p] + 1) + ", " +
                                 std::to_string(j + 1) + ") of A is not finite");
  return Status::success();
}

}  // namespace starfront
