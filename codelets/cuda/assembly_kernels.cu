// CUDA kernels of the GPU assemble / extend_add tasks (assembly_kernels.hpp).
#include "cuda/assembly_kernels.hpp"

namespace starfront {
namespace {

constexpr int kThreads = 128;

/// blockIdx.x: tile of the window; blockIdx.y strides over its columns;
/// threads stride over rows (only rows × cols is zeroed, as on the CPU).
__global__ void zero_tiles_kernel(const GpuAssembleLaunch p) {
  const int a = static_cast<int>(blockIdx.x);
  double* tile = p.tile[a];
  const int rows = p.rows[a];
  const long long ld = p.ld[a];
  for (int c = static_cast<int>(blockIdx.y); c < p.cols; c += static_cast<int>(gridDim.y))
    for (int r = static_cast<int>(threadIdx.x); r < rows; r += static_cast<int>(blockDim.x))
      tile[r + c * ld] = 0.0;
}

/// One thread per entry of A. Distinct entries of A have distinct targets;
/// atomicAdd only matters if A holds duplicate entries (the CPU sums them
/// too; their order of summation may then differ, by rounding).
__global__ void scatter_entries_kernel(const GpuAssembleLaunch p) {
  const long long e = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (e >= p.nentries) return;
  const GpuAssembleEntry x = p.entries[e];
  const int a = x.tile - p.tile0;
  atomicAdd(p.tile[a] + x.row + static_cast<long long>(x.col) * p.ld[a], p.values[x.src]);
}

/// One thread block per CB column, threads over its rows. Race-free with
/// plain adds: the task holds its parent tiles in RW|COMMUTE mode (no other
/// task writes them meanwhile), launches of one task are ordered on its
/// stream, and within a launch each target (rel[r], rel[q]) is written by one
/// thread only, since rel is injective (distinct CB entries (r, q) have
/// distinct targets).
__global__ void extend_add_kernel(const GpuExtendAddLaunch p) {
  const GpuExtendColumn col = p.columns[blockIdx.x];
  const int k = col.src - p.src0;
  const double* src = p.src[k] + static_cast<long long>(col.jj) * p.sld[k];
  const GpuRowTarget* map = p.rowmap + col.rowmap;
  for (int ii = col.ii0 + static_cast<int>(threadIdx.x); ii < col.rows; ii += static_cast<int>(blockDim.x)) {
    const GpuRowTarget t = map[ii];
    const int I = t.tile - p.dst0;
    if (I < 0 || I >= p.ndst) continue;
    p.dst[I][t.row + static_cast<long long>(col.cj) * p.dld[I]] += src[ii];
  }
}

}  // namespace

cudaError_t launch_gpu_assemble(const GpuAssembleLaunch& p, cudaStream_t stream) {
  if (p.ntiles > 0 && p.cols > 0) {
    const dim3 grid(static_cast<unsigned>(p.ntiles), static_cast<unsigned>(p.cols < 64 ? p.cols : 64));
    zero_tiles_kernel<<<grid, kThreads, 0, stream>>>(p);
    if (const cudaError_t e = cudaGetLastError(); e != cudaSuccess) return e;
  }
  if (p.nentries > 0) {
    const auto blocks = static_cast<unsigned>((p.nentries + kThreads - 1) / kThreads);
    scatter_entries_kernel<<<blocks, kThreads, 0, stream>>>(p);
    if (const cudaError_t e = cudaGetLastError(); e != cudaSuccess) return e;
  }
  return cudaSuccess;
}

cudaError_t launch_gpu_extend_add(const GpuExtendAddLaunch& p, cudaStream_t stream) {
  if (p.ncolumns <= 0) return cudaSuccess;
  extend_add_kernel<<<static_cast<unsigned>(p.ncolumns), kThreads, 0, stream>>>(p);
  return cudaGetLastError();
}

}  // namespace starfront
