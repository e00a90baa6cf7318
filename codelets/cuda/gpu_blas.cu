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
constexpr int kPotrfLeaf = 64;  ///< order of the diagonal blocks of gpu_potrf_panel
constexpr int kPotrfThreads = 256;  ///< threads of its kernel: four a row
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

/// Cholesky of one diagonal block of order nb ≤ kPotrfLeaf in place (ld),
/// by one block of kPotrfThreads threads: thread t holds the entries
/// (i, 16g + q), q = 0..15, of row i = t mod 64 (g = t / 64, the same in a
/// warp) in registers, and the right-looking column algorithm (Golub and
/// Van Loan §4.2) runs with ONE barrier a column: the owners of column c
/// publish its entries as they stand (double-buffered in shared memory);
/// after the barrier every thread takes r = rsqrt(a(c, c)) itself, the
/// owners keep l(i, c) = a(i, c)·r (l(c, c) = a(c, c)·r, as the fused
/// subtree kernel does), and the rank-1 update is a(i, l) −= s·a(l, c)
/// with s = (a(i, c)·r)·r (one FMA an entry); a warp whose 16 columns are all
/// left of c skips it. The strictly upper triangle is set to zero (the
/// panel's assembly leaves zeros there; the left-looking update may have
/// written it). info: the LAPACK convention, counted from column `col0` of
/// the panel: when `first`, *info is set (0 or the failing column);
/// otherwise it is set only when it is 0 and this block fails. A pivot that
/// is not > 0 (NaN included) fails; the columns after it are then left as
/// computed (not meaningful).
/// Cost on the H200 (gpu_blas_bench --panel, bench/README.md): about 30 µs
/// for a 64-block, the serial chain of a column (barrier, shared-memory
/// load, rsqrt, FMAs, store) on one SM. Two earlier versions were no
/// faster: one thread a row with a serial shared-memory update loop, and
/// two barriers a column with sqrt and a division on the owner (Nsight
/// Compute on the latter: 12.2 cycles between a warp's instructions).
__global__ void __launch_bounds__(kPotrfThreads) potrf_leaf_kernel(double* __restrict__ A, int lda, int nb, int col0,
                                                                   bool first, int* __restrict__ info) {
  constexpr int NB = kPotrfLeaf, G = kPotrfThreads / NB, Q = NB / G;
  static_assert(NB % G == 0 && kPotrfThreads % NB == 0 && NB % 32 == 0, "threads must tile the block");
  __shared__ double col[2][NB];  // column c as it stands before its step, at col[c & 1]
  const int i = threadIdx.x % NB, g = threadIdx.x / NB, l0 = Q * g;
  double a[Q];
#pragma unroll
  for (int q = 0; q < Q; ++q) {
    const int l = l0 + q;
    a[q] = i < nb && l < nb && l <= i ? A[i + static_cast<long long>(l) * lda] : 0.0;
  }
  if (g == 0 && i < nb) col[0][i] = a[0];  // column 0
  int bad = 0;
#pragma unroll
  for (int c = 0; c < NB; ++c) {
    if (c >= nb) break;
    __syncthreads();
    const double* v = col[c & 1];
    const double d = v[c];
    if (!(d > 0.0) && bad == 0) bad = c + 1;
    const double r = rsqrt(d);
    if (g == c / Q && i >= c && i < nb) a[c % Q] = (i == c ? d : v[i]) * r;  // l(i, c)
    if (l0 + Q - 1 > c && i > c && i < nb) {  // this thread has entries right of column c
      const double s = (v[i] * r) * r;  // l(i, c)·r: r·r alone would overflow for a subnormal pivot
#pragma unroll
      for (int q = 0; q < Q; ++q) {
        const int l = l0 + q;
        if (l > c && l <= i) a[q] -= s * v[l];
      }
      // Publish column c + 1 as it now stands (its owners: g == (c + 1) / Q).
      if (c + 1 < nb && g == (c + 1) / Q) col[(c + 1) & 1][i] = a[(c + 1) % Q];
    }
  }
  if (i < nb) {
#pragma unroll
    for (int q = 0; q < Q; ++q) {
      const int l = l0 + q;
      if (l < nb) A[i + static_cast<long long>(l) * lda] = l <= i ? a[q] : 0.0;
    }
  }
  if (threadIdx.x == 0) {
    if (first) *info = bad ? col0 + bad : 0;
    else if (bad && *info == 0) *info = col0 + bad;
  }
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

cublasStatus_t gpu_potrf_panel(cublasHandle_t h, int m, int k, double* P, int ldp, int* info) {
  if (k < 0 || m < k || ldp < std::max(m, 1)) return CUBLAS_STATUS_INVALID_VALUE;
  if (k == 0) return CUBLAS_STATUS_SUCCESS;
  cudaStream_t stream = nullptr;
  if (cublasStatus_t s = cublasGetStream(h, &stream); s != CUBLAS_STATUS_SUCCESS) return s;
  const double one = 1.0, minus_one = -1.0;
  for (int j = 0; j < k; j += kPotrfLeaf) {
    const int b = std::min(kPotrfLeaf, k - j);
    double* Pj = P + j + static_cast<long long>(j) * ldp;  // the diagonal block (j, j)
    if (j > 0) {  // P(j:m, j:j+b) −= P(j:m, 0:j)·P(j:j+b, 0:j)ᵀ
      if (cublasStatus_t s = cublasDgemm(h, CUBLAS_OP_N, CUBLAS_OP_T, m - j, b, j, &minus_one, P + j, ldp, P + j, ldp,
                                         &one, Pj, ldp);
          s != CUBLAS_STATUS_SUCCESS)
        return s;
    }
    potrf_leaf_kernel<<<1, kPotrfThreads, 0, stream>>>(Pj, ldp, b, j, j == 0, info);
    if (cudaGetLastError() != cudaSuccess) return CUBLAS_STATUS_EXECUTION_FAILED;
    if (m - j - b > 0)
      if (cublasStatus_t s = leaf(h, m - j - b, b, Pj, ldp, Pj + b, ldp, TrsmLeaf::kernel); s != CUBLAS_STATUS_SUCCESS)
        return s;
  }
  return CUBLAS_STATUS_SUCCESS;
}

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
  if (ldl < n || ldb < m) return CUBLAS_STATUS_INVALID_VALUE;
  int leaf_order = o.leaf <= 0 ? n : o.leaf;
  if (o.method == TrsmLeaf::kernel)
    leaf_order = o.leaf <= 0 ? kTrsmKernelLeafMax : std::min(o.leaf, kTrsmKernelLeafMax);
  return trsm(h, m, n, L, ldl, B, ldb, leaf_order, o.method);
}

}  // namespace starfront
