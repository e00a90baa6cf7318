// The TRSM of a Cholesky front with few fully-summed columns (issue 5,
// session 33): X := X·L⁻ᵀ for a thin panel, where OpenBLAS's DTRSM spends
// more time in packing and call overhead than in arithmetic (lap3d 60³'s
// subtree fronts, k < 32: 0.9–1.4 flops a cycle; bench/README.md). Plain
// loops over register tiles of 32 and 8 rows, for CPUs with AVX-512
// (x86-64-v4, detected at run time; GCC builds on x86-64). Elsewhere the
// kernel declines and the caller keeps DTRSM: without AVX-512 the same
// loops were 2–8× slower than DTRSM.
#pragma once

#include "sparse/types.hpp"

namespace starfront {

/// Whether trsm_right_lower_trans_small runs on this CPU and build (an
/// x86-64-v4 CPU, GCC on x86-64); when false it always returns false.
bool small_trsm_supported();

/// The largest k for which trsm_right_lower_trans_small works (and
/// factor_front_cpu uses it); wider panels go to OpenBLAS's DTRSM.
inline constexpr idx_t kSmallTrsmMaxK = 64;

/// X := X·L⁻ᵀ (DTRSM side R, lower, transposed, non-unit) in place: X of
/// mc×k (column-major, leading dimension ldx ≥ mc), L the k×k lower triangle
/// (leading dimension ldl ≥ k; its strict upper part is not read). Column j
/// of X becomes (x_j − Σ_{i<j} l_ji·x_i)·(1/l_jj), the sum in order of i
/// (the reference DTRSM's order; the reciprocal as OpenBLAS's kernels take
/// it); Golub and Van Loan, "Matrix Computations", 4th ed., §3.1. A zero
/// diagonal entry gives ±inf or NaN, as DTRSM. Returns false and does
/// nothing when k > kSmallTrsmMaxK, mc < 0, k < 0 or !small_trsm_supported()
/// (the caller then uses DTRSM); mc = 0 or k = 0: nothing to do (true).
bool trsm_right_lower_trans_small(idx_t mc, idx_t k, const double* L, idx_t ldl, double* X, idx_t ldx);

}  // namespace starfront
