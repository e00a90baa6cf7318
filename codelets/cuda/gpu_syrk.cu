// The tiled lower-triangular rank-k update (see gpu_syrk.hpp).
#include "cuda/gpu_syrk.hpp"

#include <cuda_runtime.h>

#include <cmath>
#include <cstdlib>
#include <cstring>

namespace starfront {
namespace {

constexpr int kChunk = 16;  ///< columns of A and B staged in shared memory at a time

/// Block t of the launch is tile (bi, bj), bi ≥ bj, of C's lower triangle in
/// row-major order of the tile triangle: t = bi(bi + 1)/2 + bj.
__device__ __forceinline__ void tile_of(long long t, int& bi, int& bj) {
  long long i = static_cast<long long>((sqrt(8.0 * static_cast<double>(t) + 1.0) - 1.0) * 0.5);
  while ((i + 1) * (i + 2) / 2 <= t) ++i;  // rounding of the square root, either way
  while (i * (i + 1) / 2 > t) --i;
  bi = static_cast<int>(i);
  bj = static_cast<int>(t - i * (i + 1) / 2);
}

/// An 8-byte asynchronous copy from global to shared memory (cp.async, sm_80
/// and later: no register holds the value), zero-filled when !valid (then
/// nothing is read; `src` must still be a valid address).
__device__ __forceinline__ void copy_async8(double* dst, const double* src, bool valid) {
  const unsigned d = static_cast<unsigned>(__cvta_generic_to_shared(dst));
  asm volatile("cp.async.ca.shared.global [%0], [%1], 8, %2;\n" ::"r"(d), "l"(src), "r"(valid ? 8 : 0) : "memory");
}
__device__ __forceinline__ void copy_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
/// Waits until at most N of this thread's committed copy groups are pending.
template <int N>
__device__ __forceinline__ void copy_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

/// One T×T tile (bi, bj) of C −= A·Bᵀ (T = 64: 256 threads; T = 32: 64).
/// Thread (tx, ty) = (tid % (T/4), tid / (T/4)) owns rows i0 + tx + (T/4)a
/// and columns j0 + ty + (T/4)b (a, b < 4): a warp's loads of A's chunk are
/// T/4 consecutive doubles, of B's chunk a broadcast of a few, and its
/// writes to C columns of T/4 consecutive rows. The chunks of 16 columns go
/// through S shared-memory stages filled by asynchronous copies issued S − 1
/// chunks ahead (the multistage pipeline of CUTLASS's GEMMs), so a chunk's
/// copies wait for memory while the chunks before it are multiplied; one
/// barrier a chunk. Rows ≥ n and columns ≥ k are staged as zeros.
template <int T, int S>
__global__ void __launch_bounds__((T / 4) * (T / 4)) syrk_lower_kernel(int n, int k, const double* __restrict__ A,
                                                                       int lda, const double* __restrict__ B, int ldb,
                                                                       double* __restrict__ C, int ldc) {
  constexpr int Q = T / 4;          // threads along a side of the tile
  constexpr int NT = Q * Q;         // threads
  constexpr int CS = NT / T;        // chunk columns staged by one pass of the threads
  constexpr int LD = kChunk / CS;   // entries of A (and of B) a thread stages a chunk
  static_assert(NT % T == 0 && kChunk % CS == 0 && S >= 2, "the staging");
  __shared__ __align__(16) double sa[S][kChunk][T];
  __shared__ __align__(16) double sb[S][kChunk][T];
  int bi, bj;
  tile_of(blockIdx.x, bi, bj);
  const int i0 = bi * T, j0 = bj * T;
  const int tid = static_cast<int>(threadIdx.x), tx = tid % Q, ty = tid / Q;
  // Staging: the thread's entries of a chunk are row sr, columns sc + CS·q.
  const int sr = tid % T, sc = tid / T;
  const bool arow = i0 + sr < n, brow = j0 + sr < n;
  const double* a_src = A + (arow ? (i0 + sr) + static_cast<long long>(sc) * lda : 0);
  const double* b_src = B + (brow ? (j0 + sr) + static_cast<long long>(sc) * ldb : 0);
  const int chunks = k / kChunk + (k % kChunk != 0);  // (no overflow for k near INT_MAX)
  // Queues chunk c's copies into stage c % S (nothing for c ≥ chunks), then
  // commits a group (an empty one past the end, so that the group count per
  // chunk stays fixed).
  auto issue = [&](int c) {
    if (c < chunks) {
      const int st = c % S, p0 = c * kChunk;
#pragma unroll
      for (int q = 0; q < LD; ++q) {
        const int p = p0 + sc + q * CS;
        const long long off = static_cast<long long>(p0 + q * CS);
        copy_async8(&sa[st][sc + q * CS][sr], arow && p < k ? a_src + off * lda : A, arow && p < k);
        copy_async8(&sb[st][sc + q * CS][sr], brow && p < k ? b_src + off * ldb : B, brow && p < k);
      }
    }
    copy_async_commit();
  };
  double acc[4][4] = {};
#pragma unroll
  for (int c = 0; c < S - 1; ++c) issue(c);
  for (int c = 0; c < chunks; ++c) {
    copy_async_wait<S - 2>();  // this thread's copies of chunk c have landed
    __syncthreads();           // everyone's; and everyone is done with chunk c − 1's stage
    issue(c + S - 1);          // into chunk c − 1's stage
    const int st = c % S;
#pragma unroll
    for (int p = 0; p < kChunk; ++p) {
      double ra[4], rb[4];
#pragma unroll
      for (int a = 0; a < 4; ++a) ra[a] = sa[st][p][tx + Q * a];
#pragma unroll
      for (int b = 0; b < 4; ++b) rb[b] = sb[st][p][ty + Q * b];
#pragma unroll
      for (int a = 0; a < 4; ++a)
#pragma unroll
        for (int b = 0; b < 4; ++b) acc[a][b] = fma(ra[a], rb[b], acc[a][b]);
    }
  }
  // C's 16 entries are all read before any is written: the compiler cannot
  // tell that the writes never alias the later reads (ldc is a runtime
  // value), and a read-modify-write per entry in turn waits for memory 16
  // times (measured on the H200 with the kernel's earlier register-staged
  // chunks: 800 × 95 took 18.4 µs that way, 13.0 with the reads first).
  bool in[4][4];
  double cv[4][4];
#pragma unroll
  for (int b = 0; b < 4; ++b) {
    const int j = j0 + ty + Q * b;
#pragma unroll
    for (int a = 0; a < 4; ++a) {
      const int i = i0 + tx + Q * a;
      in[a][b] = j < n && i < n && i >= j;
      cv[a][b] = in[a][b] ? C[i + static_cast<long long>(j) * ldc] : 0.0;
    }
  }
#pragma unroll
  for (int b = 0; b < 4; ++b) {
    const int j = j0 + ty + Q * b;
#pragma unroll
    for (int a = 0; a < 4; ++a) {
      const int i = i0 + tx + Q * a;
      if (in[a][b]) C[i + static_cast<long long>(j) * ldc] = cv[a][b] - acc[a][b];
    }
  }
}

/// Launches the T×T-tile kernel (S stages) on the lower triangle's tiles.
template <int T, int S>
cublasStatus_t launch_syrk(cudaStream_t stream, int n, int k, const double* A, int lda, const double* B, int ldb,
                           double* C, int ldc) {
  const long long nt = (static_cast<long long>(n) + T - 1) / T;
  const long long tiles = nt * (nt + 1) / 2;  // the grid's x takes up to 2^31 − 1 blocks
  if (tiles > 0x7fffffffLL) return CUBLAS_STATUS_NOT_SUPPORTED;
  syrk_lower_kernel<T, S><<<static_cast<unsigned>(tiles), (T / 4) * (T / 4), 0, stream>>>(n, k, A, lda, B, ldb, C, ldc);
  return cudaGetLastError() == cudaSuccess ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_EXECUTION_FAILED;
}

}  // namespace

SyrkMethod gpu_syrk_method() {
  static const SyrkMethod m = [] {
    const char* s = std::getenv("STARFRONT_GPU_SYRK");
    if (s && !std::strcmp(s, "cublas")) return SyrkMethod::cublas;
    if (s && !std::strcmp(s, "kernel")) return SyrkMethod::kernel;
    return SyrkMethod::automatic;
  }();
  return m;
}

bool gpu_syrk_kernel_pays(int n, int k) {
  // cuBLAS 13's DSYRK on the H200 (gpu_blas_bench --syrk, session 41) ran a
  // generic kernel (0.9–3.9 TFLOP/s; this kernel 1.1–2.8× faster) for every
  // rank k < 128 measured (orders 300–4000) and for k < 250 up to order
  // 1400, and its FP64 tensor-core kernel (12–36 TFLOP/s; this kernel
  // 0.24–0.88× as fast) from k = 128 at orders ≥ 1500 and from k = 250 at
  // orders 600–1400. Where exactly cuBLAS switches between the measured
  // shapes is not known.
  return k < 128 || (k < 250 && n < 1500);
}

int gpu_syrk_tile(int n) {
  static const int forced = [] {
    const char* e = std::getenv("STARFRONT_GPU_SYRK_TILE");
    return e && !std::strcmp(e, "32") ? 32 : e && !std::strcmp(e, "64") ? 64 : 0;
  }();
  if (forced) return forced;
  // Tiles of 32 were as fast or faster up to n = 1116 (1116 × 190: 27.8
  // against 33.0 µs), tiles of 64 from n = 1300 on (bench/README.md, session 41).
  return n <= 1200 ? 32 : 64;
}

cublasStatus_t gpu_syrk_lower_update(cublasHandle_t h, int n, int k, const double* A, int lda, const double* B,
                                     int ldb, double* C, int ldc, SyrkMethod method, int tile) {
  if (n <= 0 || k <= 0) return CUBLAS_STATUS_SUCCESS;
  if (lda < n || ldb < n || ldc < n || (tile != 0 && tile != 32 && tile != 64)) return CUBLAS_STATUS_INVALID_VALUE;
  const bool kernel =
      method == SyrkMethod::kernel || (method == SyrkMethod::automatic && gpu_syrk_kernel_pays(n, k));
  if (!kernel) {
    const double minus_one = -1.0, one = 1.0;
    if (B == A && ldb == lda)
      return cublasDsyrk(h, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, n, k, &minus_one, A, lda, &one, C, ldc);
    return cublasDsyrkx(h, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, n, k, &minus_one, A, lda, B, ldb, &one, C, ldc);
  }
  cudaStream_t stream = nullptr;
  if (cublasStatus_t s = cublasGetStream(h, &stream); s != CUBLAS_STATUS_SUCCESS) return s;
  if (tile == 0) tile = gpu_syrk_tile(n);
  // Stages of 8 KiB (tiles of 32: 32 KiB a block, up to 6 blocks an SM) and
  // of 16 KiB (tiles of 64: 48 KiB, the static limit).
  if (tile == 32) return launch_syrk<32, 4>(stream, n, k, A, lda, B, ldb, C, ldc);
  if (tile == 64) return launch_syrk<64, 3>(stream, n, k, A, lda, B, ldb, C, ldc);
  return CUBLAS_STATUS_INVALID_VALUE;
}

}  // namespace starfront
