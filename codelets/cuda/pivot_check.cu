#include "cuda/pivot_check.hpp"

#include <math_constants.h>

namespace starfront {
namespace {

constexpr int kThreads = 256;

__global__ void cholesky_pivot_check(const double* __restrict__ L, long long ld, long long k,
                                     const int* __restrict__ dev_info, const double* __restrict__ values,
                                     const long long* __restrict__ diag_src, long long first, double pivot_tol,
                                     GpuPivotSlot* slot) {
  __shared__ double s_min[kThreads];
  __shared__ int s_bad[kThreads];
  double mn = CUDART_INF;
  int bad = 0;
  for (long long j = threadIdx.x; j < k; j += blockDim.x) {
    const double l = L[j * (ld + 1)];
    const double d = __dmul_rn(l, l);
    const long long src = diag_src[first + j];
    const double ajj = src >= 0 ? fabs(values[src]) : 0.0;
    if (!isfinite(d) || d <= __dmul_rn(pivot_tol, ajj)) bad = 1;
    else if (ajj > 0) mn = fmin(mn, __ddiv_rn(d, ajj));
  }
  s_min[threadIdx.x] = mn;
  s_bad[threadIdx.x] = bad;
  __syncthreads();
  for (int h = blockDim.x / 2; h > 0; h /= 2) {
    if (threadIdx.x < h) {
      s_min[threadIdx.x] = fmin(s_min[threadIdx.x], s_min[threadIdx.x + h]);
      s_bad[threadIdx.x] |= s_bad[threadIdx.x + h];
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    const bool failed = *dev_info != 0 || s_bad[0] != 0;
    slot->min_ratio = failed ? 0.0 : s_min[0];
    slot->state = failed ? 2 : 1;
  }
}

}  // namespace

cudaError_t launch_cholesky_pivot_check(const double* L, long long ld, long long k, const int* dev_info,
                                        const double* values, const long long* diag_src, long long first,
                                        double pivot_tol, GpuPivotSlot* slot, cudaStream_t stream) {
  cholesky_pivot_check<<<1, kThreads, 0, stream>>>(L, ld, k, dev_info, values, diag_src, first, pivot_tol, slot);
  return cudaGetLastError();
}

}  // namespace starfront
