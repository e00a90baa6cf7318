#include "cuda/gpu_blas.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>

namespace starfront {
namespace {

constexpr int kRows = 64;  ///< rows of B per thread block of the leaf kernel: one per thread
constexpr int kPanel = 32;  ///< columns a thread holds in registers at once
static_assert(kTrsmKernelLeafMax == 2 * kPanel, "the leaf kernel handles two register panels");

/// x := x·T⁻ᵀ for one row x (kPanel entries in registers) and a kPanel ×
/// kPanel lower triangle T in shared memory (T(c, k) at T[k·ld + c], the
/// reciprocal of T(k, k) on the diagonal): the column-oriented forward
/// substitution, x_k = x_k / T(k, k), then x_c −= x_k·T(c, k) for c > k
/// (independent updates).
__device__ __forceinline__ void solve_row_panel(double (&x)[kPanel], const double* T, int ld) {
#pragma unroll
  for (int k = 0; k < kPanel; ++k) {
    const double xk = x[k] * T[k * ld + k];
    x[k] = xk;
#pragma unroll
    for (int c = k + 1; c < kPanel; ++c) x[c] -= xk * T[k * ld + c];
  }
}

/// X = B·L⁻ᵀ for a leaf of order nb ≤ kTrsmKernelLeafMax: thread r of block
/// b solves row 64b + r of B with no barrier after L is loaded (shared
/// memory; every thread reads the same entry: a broadcast). Columns [0, 32)
/// are solved in registers and stored; columns [32, nb) are updated in
/// registers (x₁·L21ᵀ, sixteen columns at a time), written back, reloaded
/// and solved: the blocked right-looking substitution on one row. Division
/// by L(k, k) is a product with its reciprocal (computed once per block). A
/// leaf with nb < 64 is padded with the identity. The global loads of a
/// step are issued in unrolled batches: a rolled loop waits for each load
/// in turn, tens of µs per leaf. (A single 64-entry register row spilled
/// 752 bytes at 255 registers, and so did staging columns [32, 64) in
/// shared memory: hence two register panels.)
__global__ void __launch_bounds__(kRows) trsm_leaf_kernel(int m, int nb, const double* __restrict__ L, int ldl,
                                                          double* __restrict__ B, int ldb) {
  constexpr int NB = kTrsmKernelLeafMax;
  __shared__ double Ls[NB * NB];  // Ls[k·NB + c] = L(c, k) below the diagonal, 1/L(k, k) on it
  const int r = threadIdx.x;
  // Thread r loads row r of every column of the leaf, 32 columns per batch.
#pragma unroll
  for (int k0 = 0; k0 < NB; k0 += kPanel) {
    double v[kPanel];
#pragma unroll
    for (int i = 0; i < kPanel; ++i) {
      const int k = k0 + i;
      v[i] = r < nb && k < nb && r >= k ? L[r + static_cast<long long>(k) * ldl] : (r == k ? 1.0 : 0.0);
    }
#pragma unroll
    for (int i = 0; i < kPanel; ++i) Ls[(k0 + i) * NB + r] = r == k0 + i && r < nb ? 1.0 / v[i] : v[i];
  }
  __syncthreads();
  const long long row = static_cast<long long>(blockIdx.x) * kRows + r;
  if (row >= m) return;
  double* b = B + row;  // entry (row, c) at b[c·ldb]
  double x[kPanel];
#pragma unroll
  for (int c = 0; c < kPanel; ++c) x[c] = c < nb ? b[static_cast<long long>(c) * ldb] : 0.0;
  solve_row_panel(x, Ls, NB);
#pragma unroll
  for (int c = 0; c < kPanel; ++c)
    if (c < nb) b[static_cast<long long>(c) * ldb] = x[c];
  if (nb <= kPanel) return;
  // Columns [32, nb): B2 −= X1·L21ᵀ, sixteen columns at a time.
  constexpr int kGroup = 16;
#pragma unroll
  for (int c0 = kPanel; c0 < NB; c0 += kGroup) {
    double s[kGroup];
#pragma unroll
    for (int i = 0; i < kGroup; ++i) s[i] = c0 + i < nb ? b[static_cast<long long>(c0 + i) * ldb] : 0.0;
#pragma unroll
    for (int k = 0; k < kPanel; ++k)
#pragma unroll
      for (int i = 0; i < kGroup; ++i) s[i] -= x[k] * Ls[k * NB + c0 + i];
#pragma unroll
    for (int i = 0; i < kGroup; ++i)
      if (c0 + i < nb) b[static_cast<long long>(c0 + i) * ldb] = s[i];
  }
#pragma unroll
  for (int c = 0; c < kPanel; ++c) x[c] = kPanel + c < nb ? b[static_cast<long long>(kPanel + c) * ldb] : 0.0;
  solve_row_panel(x, Ls + kPanel * NB + kPanel, NB);
#pragma unroll
  for (int c = 0; c < kPanel; ++c)
    if (kPanel + c < nb) b[static_cast<long long>(kPanel + c) * ldb] = x[c];
}

/// Where to split a triangle of order n > 1: near the middle, at a multiple
/// of 64 when n ≥ 128 (aligned GEMM operands), always in [1, n).
int split(int n) {
  if (n < 128) return n / 2;
  const int h = ((n / 2 + 32) / 64) * 64;
  return std::clamp(h, 64, n - 1);
}

/// One leaf, X = B·Lkk⁻ᵀ with Lkk nb×nb (nb ≤ kTrsmKernelLeafMax for the kernel).
cublasStatus_t leaf(cublasHandle_t h, int m, int nb, const double* L, int ldl, double* B, int ldb, TrsmLeaf how) {
  if (how == TrsmLeaf::cublas) {
    const double one = 1.0;
    return cublasDtrsm(h, CUBLAS_SIDE_RIGHT, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_T, CUBLAS_DIAG_NON_UNIT, m, nb, &one,
                       L, ldl, B, ldb);
  }
  cudaStream_t stream = nullptr;
  if (cublasStatus_t s = cublasGetStream(h, &stream); s != CUBLAS_STATUS_SUCCESS) return s;
  const unsigned blocks = static_cast<unsigned>((static_cast<long long>(m) + kRows - 1) / kRows);
  trsm_leaf_kernel<<<blocks, kRows, 0, stream>>>(m, nb, L, ldl, B, ldb);
  return cudaGetLastError() == cudaSuccess ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_EXECUTION_FAILED;
}

cublasStatus_t trsm(cublasHandle_t h, int m, int n, const double* L, int ldl, double* B, int ldb, int leaf_order,
                    TrsmLeaf how) {
  if (n <= leaf_order) return leaf(h, m, n, L, ldl, B, ldb, how);
  const double one = 1.0, minus_one = -1.0;
  const int n1 = split(n), n2 = n - n1;
  const double* L21 = L + n1;
  const double* L22 = L + n1 + static_cast<long long>(n1) * ldl;
  double* B2 = B + static_cast<long long>(n1) * ldb;
  // X1 = B1·L11⁻ᵀ; B2 −= X1·L21ᵀ; X2 = B2·L22⁻ᵀ.
  cublasStatus_t s = trsm(h, m, n1, L, ldl, B, ldb, leaf_order, how);
  if (s != CUBLAS_STATUS_SUCCESS) return s;
  s = cublasDgemm(h, CUBLAS_OP_N, CUBLAS_OP_T, m, n2, n1, &minus_one, B, ldb, L21, ldl, &one, B2, ldb);
  if (s != CUBLAS_STATUS_SUCCESS) return s;
  return trsm(h, m, n2, L22, ldl, B2, ldb, leaf_order, how);
}

}  // namespace

const GpuTrsmOptions& gpu_trsm_options() {
  static const GpuTrsmOptions opts = [] {
    GpuTrsmOptions o;
    if (const char* s = std::getenv("STARFRONT_GPU_TRSM_LEAF"); s && *s) {
      char* end = nullptr;
      errno = 0;
      const long v = std::strtol(s, &end, 10);
      if (errno == 0 && *end == '\0' && v >= 0 && v <= INT_MAX) o.leaf = static_cast<int>(v);
    }
    if (const char* s = std::getenv("STARFRONT_GPU_TRSM_METHOD")) {
      if (!std::strcmp(s, "cublas")) o.method = TrsmLeaf::cublas;
      else if (!std::strcmp(s, "kernel")) o.method = TrsmLeaf::kernel;
    }
    return o;
  }();
  return opts;
}

cublasStatus_t gpu_trsm_right_lower_trans(cublasHandle_t h, int m, int n, const double* L, int ldl, double* B,
                                          int ldb, const GpuTrsmOptions& o) {
  if (m <= 0 || n <= 0) return CUBLAS_STATUS_SUCCESS;
  int leaf_order = o.leaf <= 0 ? n : o.leaf;
  if (o.method == TrsmLeaf::kernel)
    leaf_order = o.leaf <= 0 ? kTrsmKernelLeafMax : std::min(o.leaf, kTrsmKernelLeafMax);
  return trsm(h, m, n, L, ldl, B, ldb, leaf_order, o.method);
}

}  // namespace starfront
