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
                   int max_steps, RefineInfo* info, RefineWorkspace* work) {
  const idx_t n = A.n;
  if (nrhs < 0 || ldb < std::max<idx_t>(1, n))
    return Status::error(StatusCode::invalid_argument, "solve: need nrhs >= 0 and ldb >= max(1, n) (nrhs=" +
                                                           std::to_string(nrhs) + ", ldb=" + std::to_string(ldb) + ")");
  RefineInfo out;
  RefineWorkspace local;
  RefineWorkspace& ws = work ? *work : local;
  const std::size_t size = static_cast<std::size_t>(n) * static_cast<std::size_t>(nrhs);
  std::vector<double>&X = ws.x, &R = ws.r, &D = ws.d, &xn = ws.xn, &rn = ws.rn;
  if (X.size() < size) X.resize(size), R.resize(size);
  for (idx_t c = 0; c < nrhs; ++c) std::copy(B + c * ldb, B + c * ldb + n, X.begin() + c * n);
  if (Status st = solve(X.data(), nrhs); !st.ok()) return st;
  // ‖A‖∞ once; each backward error leaves its residual b − A x in R, which
  // the next refinement step of that column solves for (one pass over A
  // per solve, for all its columns: backward_errors).
  const double norm_a = ws.norm_a >= 0 ? ws.norm_a : symmetric_norm_inf(A);
  std::vector<double> be(nrhs), be_new;
  std::vector<int> steps(nrhs, 0);
  std::vector<idx_t> active;
  backward_errors(A, norm_a, X.data(), n, B, ldb, nrhs, be.data(), R.data());
  for (idx_t c = 0; c < nrhs; ++c)
    if (max_steps > 0 && be[c] > kRefineTarget) active.push_back(c);
  std::vector<double> Bact;  // the right-hand sides of the active columns (when not all are)
  while (!active.empty()) {
    const idx_t na = static_cast<idx_t>(active.size());
    const std::size_t sa = static_cast<std::size_t>(n * na);
    if (D.size() < sa) D.resize(sa), xn.resize(sa), rn.resize(sa);
    for (idx_t q = 0; q < na; ++q)  // the residuals b - A x
      std::copy(R.begin() + active[q] * n, R.begin() + (active[q] + 1) * n, D.begin() + q * n);
    if (!solve(D.data(), na).ok()) break;
    for (idx_t q = 0; q < na; ++q) {
      const double* x = X.data() + active[q] * n;
      for (idx_t i = 0; i < n; ++i) xn[i + q * n] = x[i] + D[i + q * n];
    }
    const double* Bq = B;
    idx_t ldq = ldb;
    if (na < nrhs) {  // gather the active right-hand sides
      Bact.resize(sa);
      for (idx_t q = 0; q < na; ++q) std::copy(B + active[q] * ldb, B + active[q] * ldb + n, Bact.begin() + q * n);
      Bq = Bact.data(), ldq = n;
    }
    be_new.resize(na);
    backward_errors(A, norm_a, xn.data(), n, Bq, ldq, na, be_new.data(), rn.data());
    std::vector<idx_t> still;
    for (idx_t q = 0; q < na; ++q) {
      const idx_t c = active[q];
      ++steps[c];
      if (!(be_new[q] < be[c])) continue;  // worse or equal: keep x
      std::copy(xn.begin() + q * n, xn.begin() + (q + 1) * n, X.begin() + c * n);
      std::copy(rn.begin() + q * n, rn.begin() + (q + 1) * n, R.begin() + c * n);
      const bool halved = be_new[q] <= 0.5 * be[c];
      be[c] = be_new[q];
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
