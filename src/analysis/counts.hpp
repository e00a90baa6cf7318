// Size and flop counts of the Cholesky factorisation.
//
// Flop convention (CHOLMOD's, Common->fl of cholmod_analyze/rowcolcounts):
// eliminating a column j of L with c_j entries below the diagonal costs
//   1 (square root) + c_j (scaling) + c_j (c_j + 1) (the symmetric rank-1
//   update of the c_j x c_j trailing lower triangle, a multiply-add = 2 flops)
//   = (c_j + 1)^2 = colcount_j^2,
// so flops = Σ_j colcount_j². For a dense front of order m with k eliminated
// columns, column t (0-based) has m - t entries: Σ_{t<k} (m - t)² flops, and
// its L trapezoid holds k*m - k*(k-1)/2 entries.
//
// Two figures: SymbolicFactor::nnz_l / flops are those of the amalgamated
// fronts (what the factorisation stores and computes, explicit zeros
// included); nnz_l_exact / flops_exact are those of the exact factor from the
// column counts, directly comparable to CHOLMOD's Common->lnz / Common->fl.
//
// Inputs/outputs: see each function. Time O(nsuper + n). Workspace: none.
// Failure: none. Sums are in idx_t (64-bit) and double (exact below 2^53).
//
// References: Y. Chen, T. A. Davis, W. W. Hager, S. Rajamanickam,
// "Algorithm 887: CHOLMOD", ACM TOMS 35(3), 2008 (cholmod_rowcolcounts).
#pragma once

#include <vector>

#include "analysis/symbolic.hpp"

namespace starfront {

/// Entries of the L trapezoid of a dense front of order m with k columns.
idx_t front_factor_entries(idx_t m, idx_t k);

/// Flops (convention above) of eliminating k columns of a dense front of order m.
double front_factor_flops(idx_t m, idx_t k);

/// Sets sf.nnz_l, sf.flops and sf.max_front from the fronts (super_start and
/// front_ptr must be filled).
void compute_front_counts(SymbolicFactor& sf);

/// Sets sf.nnz_l_exact = Σ colcount and sf.flops_exact = Σ colcount².
void compute_exact_counts(const std::vector<idx_t>& colcount, SymbolicFactor& sf);

}  // namespace starfront
