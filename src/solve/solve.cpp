#include "solve/solve.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "cpu/blas.hpp"
#include "solve/ldlt_solve.hpp"

namespace starfront {
namespace {

/// L Y = X in place on the permuted right-hand sides X (n×nrhs, ld n).
void forward(const FrontPlan& P, const double* Lx, double* X, idx_t nrhs, std::vector<double>& W) {
  const SymbolicFactor& S = *P.symbolic;
  const int n = static_cast<int>(P.n), r = static_cast<int>(nrhs);
  for (idx_t s : P.task_order) {
    const idx_t m = P.front_order(s), k = P.ncols(s), mc = m - k, f = S.super_start[s];
    const double* Ls = Lx + P.l_offset[s];
    cblas_dtrsm(CblasColMajor, CblasLeft, CblasLower, CblasNoTrans, CblasNonUnit,
                static_cast<int>(k), r, 1.0, Ls, static_cast<int>(m), X + f, n);
    if (mc == 0) continue;
    W.resize(mc * nrhs);
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(mc), r,
                static_cast<int>(k), 1.0, Ls + k, static_cast<int>(m), X + f, n, 0.0, W.data(),
                static_cast<int>(mc));
    const idx_t* rows = &S.front_rows[S.front_ptr[s] + k];
    for (idx_t c = 0; c < nrhs; ++c)
      for (idx_t i = 0; i < mc; ++i) X[rows[i] + c * P.n] -= W[i + c * mc];
  }
}

/// Lᵀ X = Y in place.
void backward(const FrontPlan& P, const double* Lx, double* X, idx_t nrhs, std::vector<double>& W) {
  const SymbolicFactor& S = *P.symbolic;
  const int n = static_cast<int>(P.n), r = static_cast<int>(nrhs);
  for (auto it = P.task_order.rbegin(); it != P.task_order.rend(); ++it) {
    const idx_t s = *it;
    const idx_t m = P.front_order(s), k = P.ncols(s), mc = m - k, f = S.super_start[s];
    const double* Ls = Lx + P.l_offset[s];
    if (mc > 0) {
      W.resize(mc * nrhs);
      const idx_t* rows = &S.front_rows[S.front_ptr[s] + k];
      for (idx_t c = 0; c < nrhs; ++c)
        for (idx_t i = 0; i < mc; ++i) W[i + c * mc] = X[rows[i] + c * P.n];
      cblas_dgemm(CblasColMajor, CblasTrans, CblasNoTrans, static_cast<int>(k), r,
                  static_cast<int>(mc), -1.0, Ls + k, static_cast<int>(m), W.data(),
                  static_cast<int>(mc), 1.0, X + f, n);
    }
    cblas_dtrsm(CblasColMajor, CblasLeft, CblasLower, CblasTrans, CblasNonUnit, static_cast<int>(k),
                r, 1.0, Ls, static_cast<int>(m), X + f, n);
  }
}

}  // namespace

Status solve_permuted_with(const NumericFactor& F, double* B, idx_t nrhs, idx_t ldb,
                           const std::function<void(double* X, idx_t nrhs)>& core,
                           std::vector<double>* work) {
  if (!F.plan || static_cast<idx_t>(F.Lx.size()) != F.plan->factor_size())
    return Status::error(StatusCode::invalid_argument, "solve called without a valid factor");
  const FrontPlan& P = *F.plan;
  if (nrhs < 0 || ldb < std::max<idx_t>(1, P.n))
    return Status::error(StatusCode::invalid_argument,
                         "solve: need nrhs >= 0 and ldb >= max(1, n) (nrhs=" +
                             std::to_string(nrhs) + ", ldb=" + std::to_string(ldb) + ")");
  if (P.n == 0 || nrhs == 0) return Status::success();
  const std::vector<idx_t>& perm = P.symbolic->perm;
  std::vector<double> local;
  std::vector<double>& Xv = work ? *work : local;
  if (static_cast<idx_t>(Xv.size()) < P.n * nrhs) Xv.resize(static_cast<std::size_t>(P.n * nrhs));
  double* X = Xv.data();
  bool finite = true;  // the gather checks B on the way; the message names the first bad entry
  for (idx_t c = 0; c < nrhs; ++c)
    for (idx_t k = 0; k < P.n; ++k) {
      const double v = B[perm[k] + c * ldb];
      finite = finite && std::isfinite(v);
      X[k + c * P.n] = v;
    }
  if (!finite)
    for (idx_t c = 0; c < nrhs; ++c)
      for (idx_t i = 0; i < P.n; ++i)
        if (!std::isfinite(B[i + c * ldb]))
          return Status::error(StatusCode::invalid_argument,
                               "solve: entry " + std::to_string(i + 1) + " of right-hand side " +
                                   std::to_string(c + 1) + " is not finite");
  core(X, nrhs);
  for (idx_t c = 0; c < nrhs; ++c)
    for (idx_t k = 0; k < P.n; ++k)
      if (!std::isfinite(X[k + c * P.n]))
        return Status::error(StatusCode::runtime_error,
                             "solve: entry " + std::to_string(perm[k] + 1) + " of solution " +
                                 std::to_string(c + 1) +
                                 " overflows (not finite): the matrix or the right-hand side is "
                                 "too badly scaled for double precision; B is left unchanged");
  for (idx_t c = 0; c < nrhs; ++c)
    for (idx_t k = 0; k < P.n; ++k) B[perm[k] + c * ldb] = X[k + c * P.n];
  return Status::success();
}

Status solve_in_place(const NumericFactor& F, double* B, idx_t nrhs, idx_t ldb) {
  return solve_permuted_with(F, B, nrhs, ldb, [&](double* X, idx_t r) {
    if (F.is_ldlt()) {
      ldlt_solve_permuted(F, X, r);
    } else {
      std::vector<double> W;
      forward(*F.plan, F.Lx.data(), X, r, W);
      backward(*F.plan, F.Lx.data(), X, r, W);
    }
  });
}

double backward_error(const CscMatrix& A, const double* x, const double* b) {
  return backward_error(A, symmetric_norm_inf(A), x, b, nullptr);
}

double backward_error(const CscMatrix& A, double norm_a, const double* x, const double* b, double* residual) {
  std::vector<double> local;
  double* r = residual;
  if (!r) {
    local.resize(A.n);
    r = local.data();
  }
  symmetric_matvec(A, x, r);
  double rn = 0, xn = 0, bn = 0;
  bool finite = true;
  for (idx_t i = 0; i < A.n; ++i) {
    finite = finite && std::isfinite(x[i]) && std::isfinite(b[i]) && std::isfinite(r[i]);
    r[i] = b[i] - r[i];
    rn = std::max(rn, std::fabs(r[i]));
    xn = std::max(xn, std::fabs(x[i]));
    bn = std::max(bn, std::fabs(b[i]));
  }
  if (!finite) return std::numeric_limits<double>::infinity();
  const double den = norm_a * xn + bn;
  return den > 0 ? rn / den : 0.0;
}

void backward_errors(const CscMatrix& A, double norm_a, const double* X, idx_t ldx, const double* B, idx_t ldb,
                     idx_t ncols, double* be, double* R) {
  const idx_t n = A.n;
  if (ncols == 1) {  // the vector product itself
    be[0] = backward_error(A, norm_a, X, B, R);
    return;
  }
  // R = A X, symmetric_matvec's operations per column with the columns
  // innermost (A read once), on row-interleaved copies (entry (i, c) at
  // i·ncols + c: one cache line holds a row of every column).
  // Up to 8 columns at a time, their row sums in registers.
  constexpr idx_t kBlock = 8;
  std::vector<double> Xt(static_cast<std::size_t>(n * kBlock)), Rt(Xt.size());
  for (idx_t c0 = 0; c0 < ncols; c0 += kBlock) {
    const idx_t nc = std::min(kBlock, ncols - c0);
    for (idx_t c = 0; c < nc; ++c)
      for (idx_t i = 0; i < n; ++i) Xt[i * nc + c] = X[i + (c0 + c) * ldx];
    std::fill(Rt.begin(), Rt.end(), 0.0);
    const double* __restrict xt = Xt.data();
    double* __restrict rt = Rt.data();
    for (idx_t j = 0; j < n; ++j) {
      double yj[kBlock] = {};
      const double* xj = xt + j * nc;
      for (idx_t p = A.colptr[j]; p < A.colptr[j + 1]; ++p) {
        const idx_t i = A.rowind[p];
        const double a = A.values[p];
        const double* xi = xt + i * nc;
        for (idx_t c = 0; c < nc; ++c) yj[c] += a * xi[c];
        if (i != j)
          for (idx_t c = 0; c < nc; ++c) rt[i * nc + c] += a * xj[c];
      }
      for (idx_t c = 0; c < nc; ++c) rt[j * nc + c] += yj[c];
    }
    for (idx_t c = 0; c < nc; ++c)
      for (idx_t i = 0; i < n; ++i) R[i + (c0 + c) * n] = rt[i * nc + c];
  }
  for (idx_t c = 0; c < ncols; ++c) {
    const double *x = X + c * ldx, *b = B + c * ldb;
    double* r = R + c * n;
    double rn = 0, xn = 0, bn = 0;
    bool finite = true;
    for (idx_t i = 0; i < n; ++i) {
      finite = finite && std::isfinite(x[i]) && std::isfinite(b[i]) && std::isfinite(r[i]);
      r[i] = b[i] - r[i];
      rn = std::max(rn, std::fabs(r[i]));
      xn = std::max(xn, std::fabs(x[i]));
      bn = std::max(bn, std::fabs(b[i]));
    }
    const double den = norm_a * xn + bn;
    be[c] = !finite ? std::numeric_limits<double>::infinity() : den > 0 ? rn / den : 0.0;
  }
}

}  // namespace starfront
