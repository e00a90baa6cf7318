#include "solve/refine.hpp"

#include <algorithm>
#include <cstdio>
#include <vector>

namespace starfront {

Status solve_refined(const CscMatrix& A, const NumericFactor& F, double* B, idx_t nrhs, idx_t ldb,
                     int max_steps, RefineInfo* info) {
  RefineInfo out;
  if ((max_steps <= 0 && !info) || nrhs <= 0 || A.n == 0 || ldb < std::max<idx_t>(1, A.n)) {
    if (info) *info = out;
    return solve_in_place(F, B, nrhs, ldb);  // also reports bad arguments
  }
  const idx_t n = A.n;
  std::vector<double> X(static_cast<std::size_t>(n) * static_cast<std::size_t>(std::max<idx_t>(nrhs, 0)));
  for (idx_t c = 0; c < nrhs; ++c) std::copy(B + c * ldb, B + c * ldb + n, X.begin() + c * n);
  if (Status st = solve_in_place(F, X.data(), nrhs, n); !st.ok()) return st;
  std::vector<double> r(n), d(n), xn(n);
  for (idx_t c = 0; c < nrhs; ++c) {
    const double* b = B + c * ldb;
    double* x = X.data() + c * n;
    double be = backward_error(A, x, b);
    int steps = 0;
    while (steps < max_steps && be > kRefineTarget) {
      symmetric_matvec(A, x, r.data());
      for (idx_t i = 0; i < n; ++i) d[i] = b[i] - r[i];
      if (!solve_in_place(F, d.data(), 1, n).ok()) break;
      for (idx_t i = 0; i < n; ++i) xn[i] = x[i] + d[i];
      const double be_new = backward_error(A, xn.data(), b);
      ++steps;
      if (!(be_new < be)) break;  // worse or equal: keep x
      std::copy(xn.begin(), xn.end(), x);
      const bool halved = be_new <= 0.5 * be;
      be = be_new;
      if (!halved) break;  // stagnation
    }
    out.steps = std::max(out.steps, steps);
    out.backward_error = std::max(out.backward_error, be);
  }
  if (info) *info = out;
  if (info && !(out.backward_error <= kMaxBackwardError)) {
    char buf[400];
    std::snprintf(buf, sizeof buf,
                  "inaccurate solution: backward error %.3g after %d refinement step(s), above %.2g: "
                  "the factorisation is unstable for this matrix (quasi-definite mode on a matrix "
                  "that is not quasi-definite, or an LDLT threshold too small?); the right-hand "
                  "side is left unchanged",
                  out.backward_error, out.steps, kMaxBackwardError);
    return Status::error(StatusCode::runtime_error, buf);
  }
  for (idx_t c = 0; c < nrhs; ++c) std::copy(X.begin() + c * n, X.begin() + (c + 1) * n, B + c * ldb);
  return Status::success();
}

}  // namespace starfront
