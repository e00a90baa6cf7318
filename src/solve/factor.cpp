#include "solve/factor.hpp"

#include <cmath>
#include <cstdio>
#include <limits>

namespace starfront {

Status front_results_status(const FrontPlan& P, const std::vector<FrontResult>& results,
                            double pivot_tol, NumericFactor& F) {
  const FrontResult* worst = nullptr;
  double min_ratio = std::numeric_limits<double>::infinity();
  for (idx_t s = 0; s < P.nsuper; ++s) {
    const FrontResult& r = results[s];
    if (r.state == FrontResult::State::failed &&
        (!worst || r.failed_column < worst->failed_column))
      worst = &r;
    if (r.state == FrontResult::State::done) min_ratio = std::min(min_ratio, r.min_pivot_ratio);
  }
  F.min_pivot_ratio = min_ratio;
  if (worst) {
    const idx_t col = P.symbolic->perm[worst->failed_column];
    char buf[320];
    std::snprintf(buf, sizeof buf,
                  "matrix is not positive definite: pivot %.6g at column %lld (1-based, original "
                  "numbering; elimination step %lld of %lld); a pivot must be finite and > %.3g "
                  "times |a_jj|",
                  worst->pivot, static_cast<long long>(col + 1),
                  static_cast<long long>(worst->failed_column + 1), static_cast<long long>(P.n),
                  pivot_tol);
    Status st = Status::error(StatusCode::not_positive_definite, buf);
    st.column = col;
    st.pivot = worst->pivot;
    return st;
  }
  for (idx_t s = 0; s < P.nsuper; ++s)
    if (results[s].state != FrontResult::State::done)
      return Status::error(StatusCode::runtime_error,
                           "front " + std::to_string(s) + " was not factorised");
  return Status::success();
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
