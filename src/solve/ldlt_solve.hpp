// Triangular solves with a supernodal LDLᵀ factor (method ldlt or
// quasi_definite): forward substitution with the unit lower L (the rows of
// each front's fully-summed block in pivot order), the block-diagonal D
// (1×1 and 2×2 blocks), backward substitution with Lᵀ.
#pragma once

#include "solve/factor.hpp"

namespace starfront {

/// Overwrites X (n×nrhs, column-major, leading dimension n, in the final
/// (symbolic) numbering: X[k] belongs to column perm[k] of A) with the
/// solution of (P A Pᵀ) Y = X, where F is a successful LDLᵀ factorisation
/// (no zero pivot). Sequential, fronts in postorder then in reverse; inside a
/// front: gather by F.pivot_order, unit TRSM on L11, GEMM with L21, D⁻¹;
/// the backward pass mirrors it and scatters back. No checks (solve_in_place
/// does them).
void ldlt_solve_permuted(const NumericFactor& F, double* X, idx_t nrhs);

}  // namespace starfront
