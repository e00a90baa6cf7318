// Deferred pivot test of a GPU Cholesky front (issue 5): the CPU's relative
// pivot test (check_pivots in codelets/cpu/front_cholesky.cpp) applied on the
// device to the diagonal of a block that cuSOLVER DPOTRF just factorised, so
// that the front task needs no host synchronisation. The outcome goes to a
// slot in page-locked, device-mapped host memory that the executor reads
// once after the whole task graph has run.
#pragma once

#include <cuda_runtime.h>

#include "cuda/pivot_slot.hpp"

namespace starfront {

/// Queues on `stream` one kernel that reads DPOTRF's info (*dev_info, device)
/// and the k diagonal entries of the factorised block L (leading dimension
/// ld, device) and writes *slot (device-accessible; page-locked mapped host
/// memory in practice): state 2 when info != 0 or when, for some column j,
/// d = l_jj² is not finite or d <= pivot_tol·|a_jj|, where a_jj =
/// values[diag_src[first + j]] (0 when diag_src[first + j] < 0; idx_t
/// indices into A's values, 0-based); else state 1 and the minimum ratio.
/// The arithmetic is that of check_pivots (one rounded product, one rounded
/// quotient), so the ratio equals the CPU's bit for bit.
cudaError_t launch_cholesky_pivot_check(const double* L, long long ld, long long k, const int* dev_info,
                                        const double* values, const long long* diag_src, long long first,
                                        double pivot_tol, GpuPivotSlot* slot, cudaStream_t stream);

}  // namespace starfront
