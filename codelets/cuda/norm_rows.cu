#include "cuda/norm_rows.hpp"

namespace starfront {
namespace {

constexpr int kThreads = 256;

__global__ void symmetric_norm_rows(long long n, const long long* __restrict__ col_ptr,
                                    const long long* __restrict__ row_ptr, const long long* __restrict__ pos,
                                    const double* __restrict__ values, unsigned long long* out) {
  const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  unsigned long long bits = 0;  // +0.0
  if (i < n) {
    double r = 0.0, c = 0.0;
    for (long long q = row_ptr[i]; q < row_ptr[i + 1]; ++q) r = __dadd_rn(r, fabs(values[pos[q]]));
    for (long long p = col_ptr[i]; p < col_ptr[i + 1]; ++p) c = __dadd_rn(c, fabs(values[p]));
    bits = static_cast<unsigned long long>(__double_as_longlong(fabs(__dadd_rn(r, c))));
  }
  // The warp's largest bit pattern, then one atomic a warp.
  for (int o = 16; o > 0; o /= 2) {
    const unsigned long long other = __shfl_down_sync(0xffffffffu, bits, o);
    bits = other > bits ? other : bits;
  }
  if ((threadIdx.x & 31) == 0 && bits != 0) atomicMax(out, bits);
}

}  // namespace

cudaError_t launch_symmetric_norm_rows(long long n, const long long* col_ptr, const long long* row_ptr,
                                       const long long* pos, const double* values, unsigned long long* out,
                                       cudaStream_t stream) {
  if (n <= 0) return cudaSuccess;
  const long long blocks = (n + kThreads - 1) / kThreads;
  symmetric_norm_rows<<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(n, col_ptr, row_ptr, pos, values, out);
  return cudaGetLastError();
}

}  // namespace starfront
