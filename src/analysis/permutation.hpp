// Permutation vectors: validation, inverse and composition.
//
// Convention used throughout starfront: perm[k] = the original index placed at
// position k (pivot k is original column perm[k]); iperm = its inverse,
// iperm[perm[k]] = k.
//
// Inputs/outputs: plain std::vector<idx_t>; nothing is modified in place.
// Workspace: check_permutation uses n indices (where each value was seen).
// Failure: check_permutation returns invalid_argument naming the first bad
// position (out of range, or a value already seen and where); the other
// functions assume a valid permutation (check first).
#pragma once

#include <vector>

#include "sparse/types.hpp"

namespace starfront {

/// Succeeds iff perm is a bijection of 0..n-1 (size n, each value once).
/// Otherwise invalid_argument naming the first out-of-range or repeated entry,
/// e.g. "perm[7] = 3 repeats perm[2]".
Status check_permutation(const std::vector<idx_t>& perm, idx_t n);

/// Inverse permutation: result[perm[k]] = k. perm must be a valid permutation.
std::vector<idx_t> invert_permutation(const std::vector<idx_t>& perm);

/// Composition: result[k] = outer[inner[k]], i.e. first reorder by outer, then
/// renumber positions by inner (inner[k] = the position, in outer's order, that
/// becomes position k). Both must be permutations of the same size.
std::vector<idx_t> compose_permutations(const std::vector<idx_t>& outer,
                                        const std::vector<idx_t>& inner);

}  // namespace starfront
