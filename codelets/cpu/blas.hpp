// The BLAS/LAPACK entry points the CPU kernels use (OpenBLAS through CBLAS and
// LAPACKE), in one place.
#pragma once

#include <cblas.h>
#include <lapacke.h>

extern "C" {
/// OpenBLAS: number of threads of its own pool (starfront sets 1: parallelism
/// comes from the task graph, one BLAS call per worker).
void openblas_set_num_threads(int num_threads);
}
