// The critical path of an assembly tree under a latency model of its fronts.
//
// When every front is factorised by one processor whose time is dominated by
// latencies (one GPU thread block per front in the fused subtree kernel,
// codelets/cuda/fused_subtree_kernel.hpp: a serial chain of column steps,
// barriers and a flag wait per front), and there are more processors than
// fronts ready at once, the factorisation takes about the longest leaf-to-root
// path of the tree, each front weighted by its time, and not the flops over
// the machine's rate. For an estimate of that path, a front of order m with
// k fully-summed columns costs
//     t(m, k) = per_front + per_column * k + per_update * k * (m - k)
// seconds (FrontLatencyModel, analysis/symbolic.hpp): a fixed part per front
// (the wait for the children, their extend-add, the write of L and the CB),
// one latency per column (the diagonal block's serial chain) and the
// update of the contribution block, spread over the block's threads.
// The critical path of a tree is max over leaves of Σ t over the path to the
// root; the tree's height in columns (Liu's elimination-tree height for a
// tree of single columns) is the same with per_column = 1 and the rest 0.
//
// References: J. W. H. Liu, "The role of elimination trees in sparse
// factorization", SIAM J. Matrix Anal. Appl. 11(1), 1990 (tree height as the
// measure of parallel elimination); the default model's figures are fitted
// to the fused kernel's traced critical chains on the H200 (bench/README.md,
// "The critical path of the assembly tree", issue 6, session 43).
#pragma once

#include <vector>

#include "analysis/symbolic.hpp"

namespace starfront {

/// Modelled time, in seconds, of one front of order m (rows, m >= k) with k
/// fully-summed columns: per_front + per_column * k + per_update * k * (m - k).
double front_latency(const FrontLatencyModel& model, idx_t m, idx_t k);

/// The longest leaf-to-root path of an assembly tree under `model`.
struct CriticalPath {
  double seconds = 0.0;  ///< Σ front_latency over the path's fronts
  idx_t fronts = 0;      ///< fronts on the path
  idx_t columns = 0;     ///< fully-summed columns on the path (Σ k)
  idx_t top = -1;        ///< the path's root supernode (-1 for an empty tree)
};

/// Critical path of the forest given by `parent` (size nsuper; parent[s] > s
/// or -1 for a root: children numbered before their parents, as every tree
/// of the analysis is), `ncols[s]` = k and `order[s]` = m of each front
/// (both of size nsuper, 0 <= k <= m). The model's figures are finite and
/// >= 0 (analyse() checks AnalysisOptions::latency); with a NaN figure no
/// path compares longer and the result is empty (top -1).
/// Ties between paths go to the first root and the first child in numbering.
/// Time O(nsuper). Errors: none (the numbering is the caller's precondition;
/// a parent[s] <= s or >= nsuper other than -1 is taken as a root).
CriticalPath critical_path(const std::vector<idx_t>& parent, const std::vector<idx_t>& ncols,
                           const std::vector<idx_t>& order, const FrontLatencyModel& model);

/// The same for a symbolic factorisation's supernodal assembly tree.
CriticalPath critical_path(const SymbolicFactor& sf, const FrontLatencyModel& model);

}  // namespace starfront
