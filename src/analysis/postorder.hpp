// Postorder of a forest given by parent pointers.
//
// Depth-first search without recursion (an explicit stack, so arbitrarily deep
// trees such as chains of millions of nodes are fine); the roots are taken in
// increasing order and the children of every node are visited in increasing
// order. In the result every subtree is a contiguous range ending at its root.
//
// Inputs/outputs: parent (size n), parent[j] in [0, n) or -1 for a root, no
// cycles; returns post with post[k] = the node visited k-th (a permutation
// in our perm convention: relabelling node post[k] as k postorders the tree).
// Time O(n). Workspace: 3n indices (child lists, stack).
// Failure: none; a parent array with a cycle is a precondition violation
// (the nodes on the cycle are then missing from the result).
//
// References: T. A. Davis, "Direct Methods for Sparse Linear Systems", SIAM,
// 2006, §4.3 (cs_post, cs_tdfs).
#pragma once

#include <vector>

#include "sparse/types.hpp"

namespace starfront {

/// Postorder of the forest `parent` (see file header): post[k] = k-th node.
std::vector<idx_t> postorder(const std::vector<idx_t>& parent);

}  // namespace starfront
