// Latency of the dependent operations on the fused kernel's serial column
// chain (fused_subtree.cu: diag_block), on one warp of one block, in SM
// cycles (clock64): FP64 FMA / multiply / add, the reciprocal square roots
// the chain can use, IEEE sqrt and division, a warp shuffle, a shared-memory
// load, and the register-resident Cholesky of an 8×8 block (the diagonal
// block of the large launch) with each reciprocal square root. Every
// operation's input is the previous one's output, so the time per operation
// is its latency, not its throughput. Optional: the same with `--noise W`
// extra warps streaming independent FMAs on the same SM (the trailing
// update's warps beside the chain in the kernel). A second table times the
// synchronisations a front spread over several SMs would need: a block
// barrier of 512 threads, a thread-block cluster's barrier (2, 4 and 8
// blocks of 512 threads), a load from another block's shared memory in the
// cluster (distributed shared memory, an index chase), and a flag's round
// trip between two blocks through global memory (release store, acquire
// polls: the fused kernel's completion flags).
//
// Usage: gpu_latency_bench [--iters N] [--noise W]   (prints a Markdown table)
#include <cooperative_groups.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "cuda/device_math.cuh"

namespace {

/// 1/sqrt(d) from a single-precision seed (rsqrt.approx.ftz.f32, about 22
/// correct bits) and the same third-order correction as rsqrt_chain (the
/// error after it is below double rounding). For d outside [2^-120, 2^120]
/// the single-precision seed would under- or overflow: there the result is
/// starfront::rsqrt_chain(d), chosen by a select (both are computed).
__device__ __forceinline__ double rsqrt_f32_seed(double d) {
  float r0f;
  asm("rsqrt.approx.ftz.f32 %0, %1;" : "=f"(r0f) : "f"(__double2float_rn(d)));
  const double r = starfront::rsqrt_refine(d, r0f);
  const bool in_range = d >= 7.52316384526264e-37 && d <= 1.329227995784916e36;  // 2^-120, 2^120
  return in_range ? r : starfront::rsqrt_chain(d);
}

/// rsqrt_fast with its special cases behind a branch (a call that is not
/// inlined, so that the compiler cannot turn it into selects): the
/// branch-free select of rsqrt_fast against a branch, for the chain.
__device__ __noinline__ double rsqrt_special(double d) { return starfront::rsqrt_chain(d); }
__device__ __forceinline__ double rsqrt_fast_branch(double d) {
  double r = starfront::rsqrt_refine(d, starfront::rsqrt_approx(d));
  if (!(d >= 2.2250738585072014e-308 && d <= 1.7976931348623157e308)) r = rsqrt_special(d);
  return r;
}

enum Op : int {
  kDfma,
  kDmul,
  kDadd,
  kRsqrtApprox,
  kRsqrtChain,
  kRsqrtCuda,
  kRsqrtF32Seed,
  kRsqrtFast,
  kRsqrtFastBranch,
  kSqrt,
  kDiv,
  kShfl,
  kLds,
  kChol8Chain,
  kChol8Cuda,
  kChol8F32Seed,
  kChol8Fast,
  kChol8FastBranch,
  kOps
};

const char* const kNames[kOps] = {
    "DFMA x = fma(x, a, b)",
    "DMUL x = x * a",
    "DADD x = x + a",
    "rsqrt.approx.ftz.f64",
    "rsqrt_chain (the kernel's: approx + 3rd-order step, selects)",
    "CUDA rsqrt()",
    "rsqrt_f32_seed (rsqrtf seed + 3rd-order step, selects)",
    "rsqrt_fast (rsqrt_chain's value; its special cases beside the chain)",
    "rsqrt_fast with its special cases behind a branch",
    "IEEE sqrt()",
    "IEEE division 1 / x",
    "__shfl_sync of a double",
    "shared-memory load (index chase, int)",
    "Cholesky 8x8 in registers, rsqrt_chain (per block)",
    "Cholesky 8x8 in registers, CUDA rsqrt() (per block)",
    "Cholesky 8x8 in registers, rsqrt_f32_seed (per block)",
    "Cholesky 8x8 in registers, rsqrt_fast (per block)",
    "Cholesky 8x8 in registers, rsqrt_fast with a branch (per block)",
};

/// Register-resident right-looking Cholesky of an 8×8 SPD block (rows c,
/// columns t <= c, packed row by row), scaling by the reciprocal square
/// root RS of the pivot: the diagonal block's chain in fused_subtree.cu.
template <class RS>
__device__ __forceinline__ void chol8(double (&a)[36], RS rs) {
#pragma unroll
  for (int t = 0; t < 8; ++t) {
    const double d = a[t * (t + 1) / 2 + t];
    const double rl = rs(d);
    a[t * (t + 1) / 2 + t] = d * rl;
#pragma unroll
    for (int c = t + 1; c < 8; ++c) a[c * (c + 1) / 2 + t] *= rl;
#pragma unroll
    for (int c = t + 1; c < 8; ++c)
#pragma unroll
      for (int c2 = t + 1; c2 <= c; ++c2) a[c * (c + 1) / 2 + c2] -= a[c * (c + 1) / 2 + t] * a[c2 * (c2 + 1) / 2 + t];
  }
}

template <int OP>
__global__ void chain_kernel(int iters, int noise_iters, double seed, double* out, long long* cycles) {
  __shared__ int chase[64];
  const int lane = static_cast<int>(threadIdx.x) % 32, warp = static_cast<int>(threadIdx.x) / 32;
  if (threadIdx.x < 64) chase[threadIdx.x] = (static_cast<int>(threadIdx.x) + 1) % 64;
  __syncthreads();
  if (warp > 0) {
    // Noise: independent FMA streams (8 chains a thread), as the trailing update.
    double acc[8];
#pragma unroll
    for (int u = 0; u < 8; ++u) acc[u] = seed + u;
    for (int i = 0; i < noise_iters; ++i)
#pragma unroll
      for (int u = 0; u < 8; ++u) acc[u] = fma(acc[u], 0.9999999, 1e-9);
    double s = 0;
#pragma unroll
    for (int u = 0; u < 8; ++u) s += acc[u];
    out[threadIdx.x] = s;
    return;
  }
  double x = seed + 1e-3 * lane;
  int j = lane % 64;
  // An SPD 8×8 block: diagonally dominant, x folded into one entry so that
  // every factorisation depends on the previous one.
  double a0[36];
#pragma unroll
  for (int c = 0; c < 8; ++c)
#pragma unroll
    for (int t = 0; t <= c; ++t) a0[c * (c + 1) / 2 + t] = c == t ? 10.0 + c : 1.0 / (1 + c + t);
  const long long t0 = clock64();
  for (int i = 0; i < iters; ++i) {
    if (OP == kDfma) x = fma(x, 0.9999999, 1e-7);
    if (OP == kDmul) x = x * 1.0000001;
    if (OP == kDadd) x = x + 1e-9;
    if (OP == kRsqrtApprox) x = starfront::rsqrt_approx(x);
    if (OP == kRsqrtChain) x = starfront::rsqrt_chain(x);
    if (OP == kRsqrtCuda) x = rsqrt(x);
    if (OP == kRsqrtF32Seed) x = rsqrt_f32_seed(x);
    if (OP == kRsqrtFast) x = starfront::rsqrt_fast(x);
    if (OP == kRsqrtFastBranch) x = rsqrt_fast_branch(x);
    if (OP == kSqrt) x = sqrt(x);
    if (OP == kDiv) x = 1.0 / x;
    if (OP == kShfl) x = __shfl_sync(0xffffffffu, x, (lane + 1) % 32);
    if (OP == kLds) j = chase[j];
    if (OP >= kChol8Chain) {
      double a[36];
#pragma unroll
      for (int e = 0; e < 36; ++e) a[e] = a0[e];
      a[0] += 1e-300 * x;  // the dependency on the previous block (no change in value)
      if (OP == kChol8Chain) chol8(a, [](double d) { return starfront::rsqrt_chain(d); });
      if (OP == kChol8Cuda) chol8(a, [](double d) { return rsqrt(d); });
      if (OP == kChol8F32Seed) chol8(a, [](double d) { return rsqrt_f32_seed(d); });
      if (OP == kChol8Fast) chol8(a, [](double d) { return starfront::rsqrt_fast(d); });
      if (OP == kChol8FastBranch) chol8(a, [](double d) { return rsqrt_fast_branch(d); });
      x = a[35];
    }
  }
  const long long t1 = clock64();
  out[threadIdx.x] = x + j;
  if (lane == 0) *cycles = t1 - t0;
}

template <int OP>
long long run_op(int iters, int noise_warps, int noise_iters, double* d_out, long long* d_cycles) {
  const double seed = OP >= kChol8Chain ? 1.0 : 1.5;
  chain_kernel<OP><<<1, 32 * (1 + noise_warps)>>>(iters, noise_iters, seed, d_out, d_cycles);  // warm-up
  chain_kernel<OP><<<1, 32 * (1 + noise_warps)>>>(iters, noise_iters, seed, d_out, d_cycles);
  long long c = -1;
  if (cudaMemcpy(&c, d_cycles, sizeof c, cudaMemcpyDeviceToHost) != cudaSuccess) return -1;
  return c;
}

template <int OP>
void run_all(int iters, int noise_warps, int noise_iters, double* d_out, long long* d_cycles,
             std::vector<double>& per_op) {
  if constexpr (OP < kOps) {
    const long long c = run_op<OP>(iters, noise_warps, noise_iters, d_out, d_cycles);
    per_op[OP] = c < 0 ? -1.0 : static_cast<double>(c) / iters;
    run_all<OP + 1>(iters, noise_warps, noise_iters, d_out, d_cycles, per_op);
  }
}


namespace cg = cooperative_groups;

/// `iters` block barriers of the whole block; thread 0's cycles.
__global__ void block_barrier_kernel(int iters, long long* cycles) {
  __syncthreads();
  const long long t0 = clock64();
  for (int i = 0; i < iters; ++i) __syncthreads();
  const long long t1 = clock64();
  if (threadIdx.x == 0 && blockIdx.x == 0) *cycles = t1 - t0;
}

/// `iters` cluster barriers (arrive with release, wait with acquire); the
/// cycles of thread 0 of the cluster's first block.
__global__ void cluster_barrier_kernel(int iters, long long* cycles) {
  cg::cluster_group cluster = cg::this_cluster();
  cluster.sync();
  const long long t0 = clock64();
  for (int i = 0; i < iters; ++i) cluster.sync();
  const long long t1 = clock64();
  if (threadIdx.x == 0 && blockIdx.x == 0) *cycles = t1 - t0;  // the grid is one cluster
}

/// Thread 0 of block 0 chases `iters` indices through block 1's shared
/// memory (distributed shared memory); the others wait.
__global__ void dsmem_chase_kernel(int iters, long long* cycles, int* sink) {
  __shared__ int table[64];
  cg::cluster_group cluster = cg::this_cluster();
  if (threadIdx.x < 64) table[threadIdx.x] = (static_cast<int>(threadIdx.x) + 1) % 64;
  cluster.sync();
  if (cluster.block_rank() == 0 && threadIdx.x == 0) {
    const int* remote = cluster.map_shared_rank(table, 1);
    int j = 0;
    const long long t0 = clock64();
    for (int i = 0; i < iters; ++i) j = remote[j];
    const long long t1 = clock64();
    *cycles = t1 - t0;
    *sink = j;
  }
  cluster.sync();  // block 1's shared memory stays alive until block 0 is done
}

/// Blocks 0 and 1 (one thread each) pass a counter back and forth through
/// two global flags, `iters` round trips; block 0's cycles.
__global__ void flag_pingpong_kernel(int iters, int* flags, long long* cycles) {
  if (threadIdx.x != 0) return;
  int* ping = flags;
  int* pong = flags + 32;  // another 128-byte line
  if (blockIdx.x == 0) {
    const long long t0 = clock64();
    for (int i = 1; i <= iters; ++i) {
      starfront::store_release(ping, i);
      while (starfront::load_acquire(pong) != i) {
      }
    }
    const long long t1 = clock64();
    *cycles = t1 - t0;
  } else if (blockIdx.x == 1) {
    for (int i = 1; i <= iters; ++i) {
      while (starfront::load_acquire(ping) != i) {
      }
      starfront::store_release(pong, i);
    }
  }
}

/// A launch of one 1-D cluster of `blocks` blocks of `threads` threads.
struct ClusterLaunch {
  cudaLaunchAttribute attr[1];
  cudaLaunchConfig_t cfg{};
  ClusterLaunch(int blocks, int threads) {
    cfg.gridDim = dim3(static_cast<unsigned>(blocks));
    cfg.blockDim = dim3(static_cast<unsigned>(threads));
    attr[0].id = cudaLaunchAttributeClusterDimension;
    attr[0].val.clusterDim.x = static_cast<unsigned>(blocks);
    attr[0].val.clusterDim.y = 1;
    attr[0].val.clusterDim.z = 1;
    cfg.attrs = attr;
    cfg.numAttrs = 1;
  }
};

/// Cycles per iteration of `kernel`, run twice (the first a warm-up) as one
/// cluster of `blocks` blocks of `threads` threads; -1 when the launch
/// fails (e.g. a cluster size the device does not allow).
template <class... Args>
double cluster_cycles(void (*kernel)(int, long long*, Args...), int blocks, int threads, int iters,
                      long long* d_cycles, Args... args) {
  const ClusterLaunch l(blocks, threads);
  for (int rep = 0; rep < 2; ++rep)
    if (cudaLaunchKernelEx(&l.cfg, kernel, iters, d_cycles, args...) != cudaSuccess) {
      cudaGetLastError();
      return -1;
    }
  long long c = -1;
  if (cudaMemcpy(&c, d_cycles, sizeof c, cudaMemcpyDeviceToHost) != cudaSuccess) return -1;
  return static_cast<double>(c) / iters;
}

}  // namespace

int main(int argc, char** argv) {
  int iters = 4096, noise = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--iters" && i + 1 < argc) iters = std::atoi(argv[++i]);
    else if (a == "--noise" && i + 1 < argc) noise = std::atoi(argv[++i]);
    else {
      std::fprintf(stderr, "usage: gpu_latency_bench [--iters N] [--noise W]\n");
      return 2;
    }
  }
  if (iters <= 0 || noise < 0 || noise > 31) {
    std::fprintf(stderr, "gpu_latency_bench: --iters must be > 0 and --noise in [0, 31]\n");
    return 2;
  }
  double* d_out = nullptr;
  long long* d_cycles = nullptr;
  if (cudaMalloc(&d_out, 1024 * sizeof(double)) != cudaSuccess ||
      cudaMalloc(&d_cycles, sizeof(long long)) != cudaSuccess) {
    std::fprintf(stderr, "gpu_latency_bench: no CUDA device or cudaMalloc failed\n");
    return 1;
  }
  cudaDeviceProp prop{};
  cudaGetDeviceProperties(&prop, 0);
  // Noise warps run long enough to cover the chain (a generous bound).
  const int noise_iters = noise > 0 ? iters * 64 : 0;
  std::vector<double> per_op(kOps, -1.0);
  run_all<0>(iters, noise, noise_iters, d_out, d_cycles, per_op);
  const cudaError_t e = cudaDeviceSynchronize();
  if (e != cudaSuccess) {
    std::fprintf(stderr, "gpu_latency_bench: %s\n", cudaGetErrorString(e));
    return 1;
  }
  std::printf("gpu_latency_bench on %s: one warp, %d dependent operations each, %d noise warps\n\n", prop.name,
              iters, noise);
  std::printf("| operation | cycles each |\n|---|---|\n");
  for (int op = 0; op < kOps; ++op) std::printf("| %s | %.1f |\n", kNames[op], per_op[op]);
  // Synchronisations (no noise warps).
  int* d_flags = nullptr;
  if (cudaMalloc(&d_flags, 64 * sizeof(int)) != cudaSuccess || cudaMemset(d_flags, 0, 64 * sizeof(int)) != cudaSuccess) {
    std::fprintf(stderr, "gpu_latency_bench: cudaMalloc failed\n");
    return 1;
  }
  long long c = -1;
  block_barrier_kernel<<<1, 512>>>(iters, d_cycles);
  block_barrier_kernel<<<1, 512>>>(iters, d_cycles);
  const double bar512 = cudaMemcpy(&c, d_cycles, sizeof c, cudaMemcpyDeviceToHost) == cudaSuccess
                            ? static_cast<double>(c) / iters : -1.0;
  const int sync_iters = iters < 1024 ? iters : 1024;
  double cl[3];
  for (int i = 0; i < 3; ++i) cl[i] = cluster_cycles(cluster_barrier_kernel, 2 << i, 512, sync_iters, d_cycles);
  const double ds = cluster_cycles(dsmem_chase_kernel, 2, 128, sync_iters, d_cycles, d_flags + 48);
  cudaMemset(d_flags, 0, 64 * sizeof(int));
  flag_pingpong_kernel<<<2, 32>>>(sync_iters, d_flags, d_cycles);
  const double pp = cudaMemcpy(&c, d_cycles, sizeof c, cudaMemcpyDeviceToHost) == cudaSuccess
                        ? static_cast<double>(c) / sync_iters : -1.0;
  const cudaError_t e2 = cudaDeviceSynchronize();
  std::printf("\n| synchronisation (%d each, -1: not run) | cycles each |\n|---|---|\n", sync_iters);
  std::printf("| __syncthreads(), 512 threads | %.1f |\n", bar512);
  for (int i = 0; i < 3; ++i) std::printf("| cluster barrier, %d blocks of 512 threads | %.1f |\n", 2 << i, cl[i]);
  std::printf("| load from another block's shared memory (cluster of 2, index chase) | %.1f |\n", ds);
  std::printf("| flag round trip between two blocks (global memory, release/acquire) | %.1f |\n", pp);
  if (e2 != cudaSuccess) std::printf("(error: %s)\n", cudaGetErrorString(e2));
  cudaFree(d_flags);
  cudaFree(d_out);
  cudaFree(d_cycles);
  return e2 == cudaSuccess ? 0 : 1;
}
