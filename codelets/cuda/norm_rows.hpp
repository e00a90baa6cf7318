// ‖A‖∞ of a symmetric matrix on the GPU, from its lower CSC values, for a
// refactorisation whose whole task graph is one fused subtree kernel (issue
// 6): the host's pass over A (symmetric_norm_inf, for the solve's backward
// errors and the check that every value is finite) took longer than the
// kernel on the H200 machine (bench/README.md, session 45). One thread a
// row over the row-wise index of sparse/csc.hpp (NormRowsIndex), with the
// additions of symmetric_norm_inf_by_rows in the same order, so a finite
// result is the host pass's value bit for bit.
#pragma once

#include <cuda_runtime.h>

namespace starfront {

/// Queues on `stream` one kernel over the n rows: row i's sum is
/// Σ |values[pos[q]]| for q in [row_ptr[i], row_ptr[i+1]) (its entries left
/// of the diagonal, in column order), then plus Σ |values[p]| for p in
/// [col_ptr[i], col_ptr[i+1]) (column i on and below the diagonal), each
/// addition rounded alone. *out (device; set it to 0 first) becomes the
/// largest row sum in IEEE bit order (atomicMax on the bit pattern of the
/// row sum's absolute value): NaN if a row sum is NaN, else +inf if one
/// overflows or meets an infinite value. All arrays on the device, 0-based
/// long long indices. n = 0: nothing is queued.
cudaError_t launch_symmetric_norm_rows(long long n, const long long* col_ptr, const long long* row_ptr,
                                       const long long* pos, const double* values, unsigned long long* out,
                                       cudaStream_t stream);

}  // namespace starfront
