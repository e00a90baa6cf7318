// Column counts of the Cholesky factor, without forming its pattern.
//
// colcount[j] = nnz(L(:, j)) including the diagonal, for the Cholesky factor
// L of the symmetric matrix whose lower triangle is A. Gilbert–Ng–Peyton:
// row i of L is the "row subtree" of the elimination tree spanned by the
// columns j < i with A(i, j) != 0, and colcount[j] is the number of row
// subtrees that contain j. Visiting the nodes in postorder, an entry A(i, j)
// adds +1 at j when j is a leaf of row subtree i (detected with first[j], the
// first descendant of j in postorder, against maxfirst[i]) and -1 at the least
// common ancestor of j and the previous leaf of the same row subtree (found
// with a path-compressed ancestor forest); each non-root node also adds -1 at
// its parent. The counts are then the subtree sums of these differences.
//
// Storage adaptation: the entries A(i, j), i > j, needed for node j are
// exactly column j of the lower-triangular CSC, so no transpose is formed
// (CSparse's cs_counts reaches them through the transpose of an upper
// triangle). Diagonal entries are ignored; empty columns are fine (every
// column of L has its diagonal).
//
// Inputs/outputs: A (valid lower CSC), parent = elimination_tree(A), post =
// postorder(parent); returns colcount (size n). Time O(nnz(A) α(n)).
// Workspace: 5n indices.
// Failure: none (inputs assumed consistent).
//
// References: J. R. Gilbert, E. G. Ng, B. W. Peyton, "An efficient algorithm
// to compute row and column counts for sparse Cholesky factorization",
// SIAM J. Matrix Anal. Appl. 15(4), 1994, doi:10.1137/S0895479892236921;
// T. A. Davis, "Direct Methods for Sparse Linear Systems", SIAM, 2006, §4.5.
#pragma once

#include <vector>

#include "sparse/csc.hpp"

namespace starfront {

/// nnz of every column of L (diagonal included) for the lower CSC A, given
/// its elimination tree and a postorder of that tree.
std::vector<idx_t> column_counts(const CscMatrix& A, const std::vector<idx_t>& parent,
                                 const std::vector<idx_t>& post);

}  // namespace starfront
