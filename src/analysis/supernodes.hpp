// Fundamental supernodes of a postordered elimination tree.
//
// A fundamental supernode is a maximal chain of columns j, j+1, ..., j+t such
// that for each consecutive pair (c, c+1): parent[c] == c+1, c is the only
// child of c+1, and colcount[c] == colcount[c+1] + 1 (the pattern of column
// c below the diagonal is exactly that of column c+1). The columns of a
// supernode then share one dense row structure, and the supernodes form a
// tree (the assembly tree) whose postorder is inherited from the columns.
//
// Inputs/outputs: parent and colcount of a *postordered* elimination tree
// (parent[j] > j or -1; colcount from column_counts); returns the partition:
// start (nsuper+1 entries, start[nsuper] = n) and the supernodal parent (-1 at
// roots; parent[s] > s). Time O(n). Workspace: n indices.
// Failure: none (inputs assumed consistent).
//
// References: J. W. H. Liu, E. G. Ng, B. W. Peyton, "On finding supernodes for
// sparse matrix computations", SIAM J. Matrix Anal. Appl. 14(1), 1993,
// doi:10.1137/0614019; C. Ashcraft, R. Grimes, "The influence of relaxed
// supernode partitions on the multifrontal method", ACM TOMS 15(4), 1989.
#pragma once

#include <vector>

#include "sparse/types.hpp"

namespace starfront {

/// A partition of the (renumbered) columns into contiguous supernodes.
struct SupernodePartition {
  std::vector<idx_t> start{0};  ///< size nsuper+1; supernode s = [start[s], start[s+1])
  std::vector<idx_t> parent;    ///< size nsuper; supernodal parent (> s) or -1

  idx_t nsuper() const { return static_cast<idx_t>(parent.size()); }
};

/// Fundamental supernodes of the postordered tree `parent` with column counts
/// `colcount` (see file header).
SupernodePartition fundamental_supernodes(const std::vector<idx_t>& parent,
                                          const std::vector<idx_t>& colcount);

}  // namespace starfront
