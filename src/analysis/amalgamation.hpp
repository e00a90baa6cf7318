// Relaxed amalgamation of supernodes (merging a child into its parent at the
// cost of explicit zeros, to get fewer and larger dense fronts).
//
// Rule (Ashcraft & Grimes 1989; thresholds and zero count as in CHOLMOD's
// cholmod_super_symbolic, "nrelax"/"zrelax"): for a child c (kc columns, front
// order mc, zc explicit zeros) of p (kp, mp, zp), merging gives a supernode of
// ns = kc + kp columns and front order kc + mp (the child's contribution rows
// are a subset of the parent's front rows); the child's columns gain
//   newzeros = kc * (kc + mp - mc)
// explicit zeros, and the merged L trapezoid holds
//   size = ns*(ns+1)/2 + ns*(mp - kp)
// entries; z = (zc + zp + newzeros) / size. The merge is accepted when
//   ns <= relax_small, or newzeros == 0, or
//   (ns <= relax_mid and z <= relax_zeros_small), or z <= relax_zeros_large,
// or, by starfront's marginal rule, when
//   newzeros <= relax_marginal * (kc*(kc+1)/2 + kc*(mc - kc))  and  z <= relax_zeros_cap
// (the child's trapezoid counts its own explicit zeros). Why: z averages the
// zeros of both parts, so a parent that earlier merges (or a child that the
// relax_mid rule) filled to the threshold refuses every later child, even a
// thin one that costs a few zeros and saves a contribution block as large as
// the parent's front. On the 3D 7-point Laplacian 60^3 (Scotch), such chains
// of fronts of order ~1000-4800 with 2-20 columns each are what the rule
// takes: fronts of order > 600 drop from 275 to 210 while nnz(L) and the
// flops go down slightly (merging changes which later merges are made).
//
// Order of merges: bottom-up. Parents are visited in increasing (post)order
// and each one considers its children in increasing order, each child being
// final by then (it has absorbed what it will absorb), the parent's figures
// growing as children are merged into it. Unlike CHOLMOD, which merges a
// supernode only with its last child (so that no renumbering is needed), any
// child may be merged; the columns are then renumbered: every merged supernode
// lists the columns of its merged parts contiguously (each part's columns in
// their order, the parts merged into p ordered as the children were, before
// p's own columns), and the merged supernodes keep the relative order of their
// topmost parts. That order is a postorder of the merged tree (the merged
// subtree of r is exactly the set of representatives in the original subtree
// of r, a contiguous range), and the new column order is a topological order
// of the elimination tree, so the exact fill pattern is unchanged; each merged
// front holds the union of the rows of its parts, treated as dense.
//
// Front cap: with opts.relax_max_front > 0, no merge makes a front of larger
// order (fronts the fundamental partition already has stay as they are).
//
// Critical-path rule (opts.relax_critical_path; starfront's): where the
// factorisation's time is the assembly tree's critical path under a front
// latency model (analysis/critical_path.hpp; the fused GPU subtree kernel on
// trees of small fronts), a merge pays only when it shortens that path:
// merging a child on the path saves a front's fixed cost, merging one off it
// lengthens every path through the parent by the child's columns. Two
// passes from the fundamental partition, every merge still through the rule
// above (zeros and cap), front orders as above (a merged set is a subtree
// rooted at its representative, so its front is the representative's CB
// below all the set's columns):
//   1. bottom-up, each parent p (children final) tries its children by
//      decreasing modelled path below them, bl(c), and keeps the merges of
//      the prefix of that order that makes bl(p) smallest, with the merged
//      children's own children now p's (so bl(p) never exceeds its value
//      without merges; by induction the tree's path L never exceeds the
//      fundamental partition's);
//   2. bottom-up again, each representative p considers the representatives
//      hanging below its parts when it is visited (not the children of those
//      it merges in this pass) and merges each one the rule above accepts as
//      long as the path through the grown front, plus the fixed path above
//      it (ancestors not yet visited, so unchanged), stays within L (to a
//      relative 1e-12): fewer fronts where there is slack, L unchanged to
//      that tolerance. A child merged here may hang below one of p's parts,
//      so its columns go first in p's list (before every part of p: a
//      topological order).
// amalgamate() keeps the result of the two passes when its modelled path is
// shorter than the plain rule's (same zeros and cap), else the plain rule's:
// the path is never longer than the plain rule's, nor (to 1e-12 relative)
// than no amalgamation's. amalgamate_critical_path() returns the passes'
// own result. Cost: O(nsuper log nsuper) more (sorting children, a multiset
// per parent) and about 8 more doubles/indices per fundamental supernode.
//
// Inputs/outputs: the fundamental partition of a postordered tree and its
// column counts (in the same numbering); returns the merged partition in the
// new numbering, order[k] = the old column placed at new position k (to be
// composed into the final permutation) and each merged front's order.
// Time O(n + nsuper α) (plain rule), O(n + nsuper log nsuper) with the
// critical-path rule. Workspace: about 10 * nsuper indices/doubles (plain),
// about twice that with the critical-path rule.
// Failure: none (options are checked by analyse()).
//
// References: C. Ashcraft, R. Grimes, "The influence of relaxed supernode
// partitions on the multifrontal method", ACM TOMS 15(4), 1989,
// doi:10.1145/76909.76913; Y. Chen, T. A. Davis, W. W. Hager,
// S. Rajamanickam, "Algorithm 887: CHOLMOD", ACM TOMS 35(3), 2008.
#pragma once

#include <vector>

#include "analysis/supernodes.hpp"
#include "analysis/symbolic.hpp"

namespace starfront {

/// A merged partition and the column renumbering that makes it contiguous.
struct Amalgamation {
  SupernodePartition super;  ///< merged supernodes, in the new column numbering
  std::vector<idx_t> order;  ///< order[k] = old column placed at new position k
  std::vector<idx_t> front_order;  ///< front order (rows) of each merged supernode
};

/// Relaxed amalgamation of the fundamental partition `fund` with the options
/// of `opts` (relax_small, relax_mid, relax_zeros_small, relax_zeros_large,
/// relax_marginal, relax_zeros_cap, relax_max_front, relax_critical_path,
/// latency; `opts.amalgamate` is not looked at here).
Amalgamation amalgamate(const SupernodePartition& fund, const std::vector<idx_t>& colcount,
                        const AnalysisOptions& opts);

/// The critical-path rule's passes alone (pass 1, and pass 2 when
/// `second_pass`), without amalgamate()'s comparison with the plain rule;
/// `opts.relax_critical_path` is not looked at. For tests and measurements.
Amalgamation amalgamate_critical_path(const SupernodePartition& fund,
                                      const std::vector<idx_t>& colcount,
                                      const AnalysisOptions& opts, bool second_pass = true);

}  // namespace starfront
