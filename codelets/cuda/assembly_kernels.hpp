// CUDA kernels of the GPU `assemble` and `extend_add` tasks of tiled fronts
// (assembly_kernels.cu, compiled by nvcc). Launch descriptions are passed by
// value as kernel parameters (below 4 KiB: kGpuAssemblyWindow tiles or
// sources per launch); the index arrays (assembly_index.hpp) and A's values
// are device arrays. All launches are asynchronous on the given stream.
#pragma once

#include <cuda_runtime_api.h>

#include "cuda/assembly_index.hpp"

namespace starfront {

/// One window of an assemble task: zero `ntiles` tiles (tile[a]: device
/// pointer, column-major rows[a] × cols, leading dimension ld[a] >= rows[a]),
/// then add values[e.src] at (e.row, e.col) of tile[e.tile - tile0] for the
/// `nentries` entries at `entries` (device; their tiles lie in the window).
struct GpuAssembleLaunch {
  double* tile[kGpuAssemblyWindow];
  int ld[kGpuAssemblyWindow];
  int rows[kGpuAssemblyWindow];
  int ntiles = 0;
  int cols = 0;
  int tile0 = 0;
  const double* values = nullptr;
  const GpuAssembleEntry* entries = nullptr;
  long long nentries = 0;
};

/// One window of an extend_add task: for the `ncolumns` columns at `columns`
/// (device), rows ii in [ii0, rows) whose target tile I = rowmap[..].tile is
/// in [dst0, dst0 + ndst): dst[I - dst0][row + cj · dld[I - dst0]] +=
/// src[k][ii + jj · sld[k]], k = column.src - src0. dst entries of tiles the
/// task does not touch are null (never reached).
struct GpuExtendAddLaunch {
  double* dst[kGpuAssemblyWindow];
  const double* src[kGpuAssemblyWindow];
  int dld[kGpuAssemblyWindow];
  int sld[kGpuAssemblyWindow];
  int dst0 = 0, ndst = 0;
  int src0 = 0;
  const GpuExtendColumn* columns = nullptr;
  long long ncolumns = 0;
  const GpuRowTarget* rowmap = nullptr;
};

/// Queues the zeroing and scatter kernels of one assemble window on `stream`.
/// Returns the launch error (cudaGetLastError after each launch).
cudaError_t launch_gpu_assemble(const GpuAssembleLaunch& p, cudaStream_t stream);

/// Queues the extend-add kernel of one extend_add window on `stream`.
/// Returns the launch error.
cudaError_t launch_gpu_extend_add(const GpuExtendAddLaunch& p, cudaStream_t stream);

}  // namespace starfront
