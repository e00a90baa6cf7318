// The symbolic analysis driver: analyse() (declared in analysis/symbolic.hpp,
// with the data types it fills; this header only adds the pipeline notes).
//
// Pipeline, each step one file of src/analysis:
//   1. check_lower_csc(A)                                   (sparse/csc.hpp)
//   2. fill-reducing ordering perm0: Scotch, natural or the user's, validated
//                                                          (ordering, permutation)
//   3. C = P0 A P0ᵀ; its elimination tree                   (etree)
//   4. postorder of the tree, composed into perm           (postorder)
//   5. column counts of L                                  (colcounts)
//   6. fundamental supernodes of the postordered tree      (supernodes)
//   7. relaxed amalgamation and column renumbering, composed into perm, when
//      opts.amalgamate                                     (amalgamation)
//   8. front row structures of P A Pᵀ with the final perm   (fronts)
//   9. nnz / flop / front-size counts                      (counts)
// Time O(nnz(A) α(n) + Σ front orders) plus the ordering; no O(n²) step.
// Workspace: two permuted copies of A (one at a time) and O(n) indices;
// with OrderingChoice::critical_path, both orderings' whole symbolic
// factorisations at once (twice the memory and time of one analysis).
// Failure: invalid_argument (A malformed, unknown ordering method, user_perm
// not a bijection: the message names the bad entry; a latency figure of
// the options negative or not finite, relax_max_front < 0), unsupported / ordering_error
// from Scotch, out_of_memory when an allocation fails. `out` is only written on
// success.
#pragma once

#include "analysis/symbolic.hpp"
