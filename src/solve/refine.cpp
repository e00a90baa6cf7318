#include "solve/refine.hpp"

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

namespace starfront {

Status solve_refined(const CscMatrix& A, const NumericFactor& F, double* B, idx_t nrhs, idx_t ldb,
                     int max_steps, RefineInfo* info) {
  RefineInfo out;
  if ((max_steps <= 0 && !info) || nrhs <= 0 || A.n == 0 || ldb < std::max<idx_t>(1, A.n)) {
    if (info) *info = out;
    return solve_in_place(F, B, nrhs, ldb);  // also reports bad arguments
  }
  return refine_with(
      A, [&](double* X, idx_t ncols) { return solve_in_place(F, X, ncols, std::max<idx_t>(1, A.n)); }, B, nrhs,
      ldb, max_steps, info);
}

Status refine_with(const CscMatrix& A, const ColumnSolver& solve, double* B, idx_t nrhs, idx_t ldb,
                   int max_steps, RefineInfo* info) {
  const idx_t n = A.n;
  if (nrhs < 0 || ldb < std::max<idx_t>(1, n))
    return Status::error(StatusCode::invalid_argument, "solve: need nrhs >= 0 and ldb >= max(1, n) (nrhs=" +
                                                           std::to_string(nrhs) + ", ldb=" + std::to_string(ldb) + ")");
  RefineInfo out;
  std::vector<double> X(static_cast<std::size_t>(n) * static_cast<std::size_t>(nrhs));
  for (idx_t c = 0; c < nrhs; ++c) std::copy(B + c * ldb, B + c * ldb + n, X.begin() + c * n);
  if (Status st = solve(X.data(), nrhs); !st.ok()) return st;
  std::vector<double> be(nrhs), r(n), xn(n), D;
  std::vector<int> steps(nrhs, 0);
  std::vector<idx_t> active;
  for (idx_t c = 0; c < nrhs; ++c) {
    be[c] = backward_error(A, X.data() + c * n, B + c * ldb);
    if (max_steps > 0 && be[c] > kRefineTarget) active.push_back(c);
  }
  while (!active.empty()) {
    const idx_t na = static_cast<idx_t>(active.size());
    D.assign(static_cast<std::size_t>(n * na), 0.0);
    for (idx_t q = 0; q < na; ++q) {  // residuals b - A x
      symmetric_matvec(A, X.data() + active[q] * n, r.data());
      const double* b = B + active[q] * ldb;
      for (idx_t i = 0; i < n; ++i) D[i + q * n] = b[i] - r[i];
    }
    if (!solve(D.data(), na).ok()) break;
    std::vector<idx_t> still;
    for (idx_t q = 0; q < na; ++q) {
      const idx_t c = active[q];
      double* x = X.data() + c * n;
      for (idx_t i = 0; i < n; ++i) xn[i] = x[i] + D[i + q * n];
      const double be_new = backward_error(A, xn.data(), B + c * ldb);
      ++steps[c];
      if (!(be_new < be[c])) continue;  // worse or equal: keep x
      std::copy(xn.begin(), xn.end(), x);
      const bool halved = be_new <= 0.5 * be[c];
      be[c] = be_new;
      if (halved && steps[c] < max_steps && be[c] > kRefineTarget) still.push_back(c);  // else stagnation or done
    }
    active.swap(still);
  }
  for (idx_t c = 0; c < nrhs; ++c) {
    out.steps = std::max(out.steps, steps[c]);
    out.backward_error = std::max(out.backward_error, be[c]);
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
