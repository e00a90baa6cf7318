// Host entry point to the device-side scalar helpers of device_math.cuh, for
// the GPU tests (tests/cuda/test_cuda_blas.cpp).
#pragma once

#include <cuda_runtime.h>

namespace starfront {

/// Queues on `stream` one kernel that writes, for i in [0, n),
/// fast[i] = rsqrt_fast(d[i]) and chain[i] = rsqrt_chain(d[i])
/// (device_math.cuh). All three arrays are device memory of n doubles; d is
/// read only. Returns cudaErrorInvalidValue when n < 0 or a pointer is null
/// while n > 0, else the launch's error.
cudaError_t launch_rsqrt_compare(const double* d, double* fast, double* chain, int n, cudaStream_t stream);

}  // namespace starfront
