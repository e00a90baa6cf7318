// Row structure of every front of the supernodal factorisation.
//
// For supernode s with columns [f, l], its front rows are its own columns
// f..l followed by the contribution-block (CB) rows: the rows i > l of A's
// columns f..l, together with the CB rows i > l of the children of s
// (Liu's structure recursion applied to supernodes; for a merged supernode
// this is the union of the rows of its parts). CB rows are stored strictly
// increasing. A child's CB rows are then a subset of its parent's front rows,
// so its contribution block can be extend-added into the parent.
//
// Method: pass 1 visits the supernodes in increasing order (children first)
// and collects each CB row set, unsorted, with a marker array; pass 2 sorts
// all sets at once by bucketing the (row, supernode) pairs by row, so the
// whole construction is linear in n + nsuper + Σ front orders.
//
// Inputs/outputs: C = P A Pᵀ (lower CSC) in the final numbering, and a
// SymbolicFactor whose n, nsuper, super_start and super_parent are set
// (supernodes contiguous, children numbered before parents, the partition
// consistent with the elimination tree of C); fills front_ptr, front_rows and
// col_to_super. Workspace: n + 2*nsuper indices plus the unsorted CB rows and
// the row buckets (each Σ CB orders).
// Failure: none (inputs assumed consistent).
//
// References: J. W. H. Liu, "The multifrontal method for sparse matrix
// solution: theory and practice", SIAM Review 34(1), 1992,
// doi:10.1137/1034004.
#pragma once

#include "analysis/symbolic.hpp"

namespace starfront {

/// Fills sf.front_ptr, sf.front_rows and sf.col_to_super from sf.super_start,
/// sf.super_parent and the permuted matrix C (see file header).
void build_fronts(const CscMatrix& C, SymbolicFactor& sf);

}  // namespace starfront
