// Host entry point to device_math.cuh's helpers (device_math.hpp), for tests.
#include "cuda/device_math.hpp"

#include "cuda/device_math.cuh"

namespace starfront {
namespace {

__global__ void rsqrt_compare_kernel(const double* d, double* fast, double* chain, int n) {
  for (int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x); i < n;
       i += static_cast<int>(gridDim.x * blockDim.x)) {
    fast[i] = rsqrt_fast(d[i]);
    chain[i] = rsqrt_chain(d[i]);
  }
}

}  // namespace

cudaError_t launch_rsqrt_compare(const double* d, double* fast, double* chain, int n, cudaStream_t stream) {
  if (n < 0 || (n > 0 && (!d || !fast || !chain))) return cudaErrorInvalidValue;
  if (n == 0) return cudaSuccess;
  const int threads = 256, blocks = (n + threads - 1) / threads < 1024 ? (n + threads - 1) / threads : 1024;
  rsqrt_compare_kernel<<<blocks, threads, 0, stream>>>(d, fast, chain, n);
  return cudaGetLastError();
}

}  // namespace starfront
