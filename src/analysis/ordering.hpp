// Fill-reducing orderings: Scotch nested dissection and the natural order.
//
// order_scotch builds the adjacency graph of the symmetric matrix whose lower
// triangle is A (every off-diagonal entry (i, j) gives the edges i-j and j-i;
// diagonal entries and explicit zeros-on-diagonal give no self loop), checks
// it with SCOTCH_graphCheck and orders it with SCOTCH_graphOrder under
// Scotch's default ordering strategy (SCOTCH_stratInit with no explicit
// strategy string: multilevel nested dissection with vertex separators, halo
// approximate minimum fill on the leaves; disconnected components are ordered
// separately).
//
// Determinism: the ordering runs in a private Scotch context with one thread
// and its own random generator reset at every call, so the same matrix gives
// the same permutation in every call and every process.
//
// Inputs/outputs: A (validated by the caller with check_lower_csc); perm[k] =
// original index of pivot k, a bijection of 0..n-1 (validated before return).
// Workspace: the graph (n+1 + 2*offdiag(A) SCOTCH_Num) and Scotch's own.
// Failure: unsupported when n or 2*offdiag(A) does not fit Scotch's 32-bit
// SCOTCH_Num; ordering_error when a Scotch call fails (Scotch then prints its
// own message on stderr through SCOTCH_errorPrint) or returns something that
// is not a permutation. Nothing is printed on success. perm is only written on
// success.
//
// References: F. Pellegrini, "Scotch and libScotch 7.0 User's Guide", Inria
// (SCOTCH_graphOrder, SCOTCH_context*); F. Pellegrini, J. Roman, P. Amestoy,
// "Hybridizing nested dissection and halo approximate minimum degree for
// efficient sparse matrix ordering", Concurrency: Pract. Exper. 12 (2000).
#pragma once

#include <vector>

#include "sparse/csc.hpp"

namespace starfront {

/// Scotch nested-dissection ordering of the lower CSC matrix A (see file header).
Status order_scotch(const CscMatrix& A, std::vector<idx_t>& perm);

/// The natural ordering: the identity permutation of 0..n-1.
std::vector<idx_t> order_natural(idx_t n);

}  // namespace starfront
