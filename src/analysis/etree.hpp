// Elimination tree of a symmetric matrix stored by its lower triangle.
//
// parent[j] = min { i > j : L(i, j) != 0 } for the Cholesky factor L of the
// matrix, or -1 when column j of L has no off-diagonal entry (j is a root).
// Liu's algorithm: the rows of the lower triangle are visited in increasing
// order; for each entry (k, j), j < k, the path from j to the root of its
// current subtree is followed through a path-compressed `ancestor` array and
// that root gets parent k. The rows are walked without forming the transpose:
// each column keeps a cursor on its next unvisited row and is linked into that
// row's list (O(n) workspace instead of O(nnz)).
//
// Inputs/outputs: A, a valid lower CSC (diagonal entries, explicit zeros and
// empty columns allowed); returns parent (size n). Time O(nnz(A) α(n)).
// Workspace: 4n indices (ancestor, row-list heads, links, cursors).
// Failure: none (A is assumed to satisfy check_lower_csc).
//
// References: J. W. H. Liu, "A compact row storage scheme for Cholesky factors
// using elimination trees", ACM TOMS 12(2), 1986, doi:10.1145/6497.6499;
// T. A. Davis, "Direct Methods for Sparse Linear Systems", SIAM, 2006, §4.1
// (cs_etree).
#pragma once

#include <vector>

#include "sparse/csc.hpp"

namespace starfront {

/// Elimination tree of the symmetric matrix whose lower triangle is A:
/// parent[j] (> j), or -1 for a root.
std::vector<idx_t> elimination_tree(const CscMatrix& A);

}  // namespace starfront
