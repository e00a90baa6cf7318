// The slot in which a GPU Cholesky front records the outcome of its deferred
// pivot test (codelets/cuda/pivot_check.hpp). Plain data, no CUDA header: the
// StarPU executor allocates the slots (page-locked, device-mapped host memory)
// and reads them once after the task graph has run.
#pragma once

#include <cstdint>

namespace starfront {

/// Outcome of one GPU front's pivot test. Written by the device, read by the
/// host after the task graph (never while a task may still write it).
struct GpuPivotSlot {
  /// 0: the test did not run (the task did not run on a GPU in deferred
  /// mode); 1: every pivot passed; 2: DPOTRF's info was nonzero or a pivot
  /// failed the test (the factor is invalid: the executor factorises again
  /// with synchronous pivot tests to name the CPU's column and pivot).
  std::int32_t state;
  std::int32_t pad;
  /// min over the fully-summed columns j with |a_jj| > 0 of l_jj² / |a_jj|
  /// (check_pivots' min_pivot_ratio; +inf when no such column), state 1 only.
  double min_ratio;
};

}  // namespace starfront
