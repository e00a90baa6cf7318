#include "solve/ldlt_solve.hpp"

#include <vector>

#include "cpu/blas.hpp"

namespace starfront {
namespace {

/// T (k×nrhs, ld k) := D⁻¹ T for the diagonal blocks of front s.
void apply_d_inverse(const NumericFactor& F, const double* Ls, idx_t m, idx_t f, idx_t k, double* T,
                     idx_t nrhs) {
  for (idx_t i = 0; i < k; ++i) {
    const signed char ps = F.pivot_size[f + i];
    if (ps == 1) {
      const double inv = 1.0 / Ls[i + i * m];
      for (idx_t c = 0; c < nrhs; ++c) T[i + c * k] *= inv;
    } else if (ps == 2) {
      const double a = Ls[i + i * m], b = F.d_off[f + i], d = Ls[(i + 1) + (i + 1) * m];
      // Solve [a b; b d] [y0; y1] = [x0; x1] with the scaled determinant
      // (b ≠ 0 for an accepted 2×2 block).
      const double det = b * ((a / b) * d - b);
      for (idx_t c = 0; c < nrhs; ++c) {
        const double x0 = T[i + c * k], x1 = T[i + 1 + c * k];
        T[i + c * k] = (d * x0 - b * x1) / det;
        T[i + 1 + c * k] = (a * x1 - b * x0) / det;
      }
    }
  }
}

}  // namespace

void ldlt_solve_permuted(const NumericFactor& F, double* X, idx_t nrhs) {
  const FrontPlan& P = *F.plan;
  const SymbolicFactor& S = *P.symbolic;
  const idx_t n = P.n;
  const int r = static_cast<int>(nrhs);
  std::vector<double> T, W;
  for (idx_t s : P.task_order) {
    const idx_t m = P.front_order(s), k = P.ncols(s), mc = m - k, f = S.super_start[s];
    const double* Ls = F.Lx.data() + P.l_offset[s];
    T.resize(k * nrhs);
    for (idx_t c = 0; c < nrhs; ++c)
      for (idx_t i = 0; i < k; ++i) T[i + c * k] = X[F.pivot_order[f + i] + c * n];
    cblas_dtrsm(CblasColMajor, CblasLeft, CblasLower, CblasNoTrans, CblasUnit, static_cast<int>(k),
                r, 1.0, Ls, static_cast<int>(m), T.data(), static_cast<int>(k));
    if (mc > 0) {
      W.resize(mc * nrhs);
      cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(mc), r,
                  static_cast<int>(k), 1.0, Ls + k, static_cast<int>(m), T.data(),
                  static_cast<int>(k), 0.0, W.data(), static_cast<int>(mc));
      const idx_t* rows = &S.front_rows[S.front_ptr[s] + k];
      for (idx_t c = 0; c < nrhs; ++c)
        for (idx_t i = 0; i < mc; ++i) X[rows[i] + c * n] -= W[i + c * mc];
    }
    apply_d_inverse(F, Ls, m, f, k, T.data(), nrhs);
    for (idx_t c = 0; c < nrhs; ++c)
      for (idx_t i = 0; i < k; ++i) X[f + i + c * n] = T[i + c * k];  // pivot order until the backward pass
  }
  for (auto it = P.task_order.rbegin(); it != P.task_order.rend(); ++it) {
    const idx_t s = *it;
    const idx_t m = P.front_order(s), k = P.ncols(s), mc = m - k, f = S.super_start[s];
    const double* Ls = F.Lx.data() + P.l_offset[s];
    T.resize(k * nrhs);
    for (idx_t c = 0; c < nrhs; ++c)
      for (idx_t i = 0; i < k; ++i) T[i + c * k] = X[f + i + c * n];
    if (mc > 0) {
      W.resize(mc * nrhs);
      const idx_t* rows = &S.front_rows[S.front_ptr[s] + k];
      for (idx_t c = 0; c < nrhs; ++c)
        for (idx_t i = 0; i < mc; ++i) W[i + c * mc] = X[rows[i] + c * n];
      cblas_dgemm(CblasColMajor, CblasTrans, CblasNoTrans, static_cast<int>(k), r,
                  static_cast<int>(mc), -1.0, Ls + k, static_cast<int>(m), W.data(),
                  static_cast<int>(mc), 1.0, T.data(), static_cast<int>(k));
    }
    cblas_dtrsm(CblasColMajor, CblasLeft, CblasLower, CblasTrans, CblasUnit, static_cast<int>(k), r,
                1.0, Ls, static_cast<int>(m), T.data(), static_cast<int>(k));
    for (idx_t c = 0; c < nrhs; ++c)
      for (idx_t i = 0; i < k; ++i) X[F.pivot_order[f + i] + c * n] = T[i + c * k];
  }
}

}  // namespace starfront
