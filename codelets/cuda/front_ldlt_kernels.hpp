// CUDA kernels of the LDLᵀ front task (front_ldlt_kernels.cu, compiled by
// nvcc with -fmad=false): assembly of an untiled front (A's entries and the
// children's contribution blocks), the pivoted factorisation of its
// fully-summed panel, and W = L21·D for the contribution-block update (the
// update itself is gpu_syrk_lower_update's DSYRKX, task_kernels_cuda.cpp).
//
// The panel kernel reproduces codelets/cpu/front_ldlt.cpp (ldlt_panel)
// operation by operation: the same candidate order, the same tests, the same
// arithmetic (every product, sum and quotient rounded separately, as the CPU
// file compiled with -ffp-contract=off does; no FMA), so that a panel
// assembled bit for bit equal on both sides gets the same pivots, the same
// permutation, the same counts and the same L and D. Parallelism is inside
// the steps only (maxima, interchanges, the rank-1/rank-2 updates, whose
// entries are independent), one thread block per front. All launches are
// asynchronous on the given stream.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace starfront {

/// LdltParams (cpu/front_ldlt.hpp) in plain form for the device.
struct GpuLdltParams {
  int pivoting = 0;  ///< 0: threshold Bunch–Kaufman search, 1: none (quasi-definite)
  double u = 0.01, tau = 1.4901161193847656e-08, zero_rel = 0.0;
};

/// LdltCounts (cpu/front_ldlt.hpp) as written by the panel kernel.
struct GpuLdltCounts {
  long long positive, negative, zero, perturbed, below_threshold, two_by_two;
  long long first_zero, first_nonfinite;
  double nonfinite_pivot;
};

/// Zeroes the m×k panel L (leading dimension m) and the mc×mc CB (leading
/// dimension mc; null when mc == 0), then adds values[a_src[q]] at
/// L[a_dst[q]] for the na entries q (distinct targets: A is a lower CSC
/// without duplicates, so the order does not matter).
cudaError_t launch_ldlt_assemble(double* L, long long m, long long k, double* cb, long long mc,
                                 const double* values, const long long* a_src, const long long* a_dst,
                                 long long na, cudaStream_t stream);

/// Extend-add of one child's CB (order mcc, lower part, leading dimension
/// mcc) into the front (m rows, k fully-summed; panel L with leading
/// dimension m, CB with leading dimension m-k): entry (ii, jj), ii >= jj,
/// goes to front position (rel[ii], rel[jj]), as extend_add in
/// cpu/front_cholesky.cpp. Distinct targets within one child: launching the
/// children one after the other on one stream adds in the CPU's order. One
/// thread block per pair of the CB's columns (b, mcc − 1 − b), threads over
/// the rows on and below the diagonal (bench/README.md, session 41).
/// Returns the launch's error (success with nothing launched for mcc ≤ 0).
cudaError_t launch_ldlt_extend_add(double* L, long long m, long long k, double* cb, const double* child,
                                   long long mcc, const long long* rel, cudaStream_t stream);

/// ldlt_panel of cpu/front_ldlt.hpp on the device: L (m×k, leading
/// dimension m), sc (k column scales, permuted in place), perm (out, k),
/// pivsize (out, k), d_off (out, k), counts (out, one). One block.
cudaError_t launch_ldlt_panel(double* L, long long m, long long k, const GpuLdltParams& prm, double* sc,
                              long long* perm, signed char* pivsize, double* d_off, GpuLdltCounts* counts,
                              cudaStream_t stream);

/// W (mc×k, leading dimension mc) = L21·D with L21 the rows k..m-1 of the
/// panel L (leading dimension m), D from L's diagonal, pivsize and d_off
/// (as ldlt_update_cb in cpu/front_ldlt.cpp).
cudaError_t launch_ldlt_w(const double* L, long long m, long long k, const signed char* pivsize,
                          const double* d_off, double* W, cudaStream_t stream);

}  // namespace starfront
