#include "solve/ldlt_solve.hpp"

#include <vector>

#include "cpu/blas.hpp"
#include "cpu/solve_kernels.hpp"

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

/// T (k×nrhs, ld k) := L11⁻¹ T (trans false) or L11⁻ᵀ T, L11 unit lower
/// (ldl): own loops for small blocks (as trsm_vector), DTRSM above.
void trsm_unit(const double* L, idx_t ldl, idx_t k, double* T, idx_t nrhs, bool trans) {
  if (k == 0 || nrhs == 0) return;
  if (k * k * nrhs > 2 * kSolveLoopMaxWork) {
    cblas_dtrsm(CblasColMajor, CblasLeft, CblasLower, trans ? CblasTrans : CblasNoTrans, CblasUnit,
                static_cast<int>(k), static_cast<int>(nrhs), 1.0, L, static_cast<int>(ldl), T, static_cast<int>(k));
    return;
  }
  if (!trans) {  // t_{j+1:k} -= l_{j+1:k,j} t_j, j increasing
    for (idx_t j = 0; j < k; ++j)
      for (idx_t c = 0; c < nrhs; ++c) {
        double* t = T + c * k;
        const double tj = t[j];
        for (idx_t i = j + 1; i < k; ++i) t[i] -= L[i + j * ldl] * tj;
      }
  } else {  // t_j -= l_{j+1:k,j}ᵀ t_{j+1:k}, j decreasing
    for (idx_t j = k; j-- > 0;)
      for (idx_t c = 0; c < nrhs; ++c) {
        double* t = T + c * k;
        double acc = 0.0;
        for (idx_t i = j + 1; i < k; ++i) acc += L[i + j * ldl] * t[i];
        t[j] -= acc;
      }
  }
}

}  // namespace

void ldlt_solve_permuted(const NumericFactor& F, double* X, idx_t nrhs) {
  const FrontPlan& P = *F.plan;
  const SymbolicFactor& S = *P.symbolic;
  const idx_t n = P.n;
  std::vector<double> T, W;
  for (idx_t s : P.task_order) {
    const idx_t m = P.front_order(s), k = P.ncols(s), mc = m - k, f = S.super_start[s];
    const double* Ls = F.Lx.data() + P.l_offset[s];
    T.resize(k * nrhs);
    for (idx_t c = 0; c < nrhs; ++c)
      for (idx_t i = 0; i < k; ++i) T[i + c * k] = X[F.pivot_order[f + i] + c * n];
    trsm_unit(Ls, m, k, T.data(), nrhs, false);
    if (mc > 0) {
      W.assign(mc * nrhs, 0.0);  // W = -L21 T (gemm_vector subtracts)
      gemm_vector(Ls + k, m, mc, k, T.data(), k, W.data(), mc, nrhs, false);
      const idx_t* rows = &S.front_rows[S.front_ptr[s] + k];
      for (idx_t c = 0; c < nrhs; ++c)
        for (idx_t i = 0; i < mc; ++i) X[rows[i] + c * n] += W[i + c * mc];
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
      gemm_vector(Ls + k, m, mc, k, W.data(), mc, T.data(), k, nrhs, true);  // T -= L21ᵀ W
    }
    trsm_unit(Ls, m, k, T.data(), nrhs, true);
    for (idx_t c = 0; c < nrhs; ++c)
      for (idx_t i = 0; i < k; ++i) X[F.pivot_order[f + i] + c * n] = T[i + c * k];
  }
}

}  // namespace starfront
