// The result of the symbolic analysis: ordering, supernodal assembly tree and
// the row structure of every front. Pure data, no runtime.
#pragma once

#include <string>
#include <vector>

#include "sparse/csc.hpp"

namespace starfront {

/// Which fill-reducing ordering the analysis computes.
enum class OrderingMethod {
  scotch,       ///< best of scotch_nd and scotch_amd by AnalysisOptions::ordering_choice
                ///< (default: fewer factorisation flops; ties go to nested
                ///< dissection), as CHOLMOD picks between AMD and METIS
  scotch_nd,    ///< Scotch nested dissection (strategy in analysis/ordering.hpp)
  scotch_amd,   ///< Scotch halo approximate minimum degree
  natural,  ///< identity (before the postorder that the analysis always applies)
  user,     ///< a permutation given by the caller (AnalysisOptions::user_perm)
};

/// What OrderingMethod::scotch minimises when it picks between nested
/// dissection and minimum degree.
enum class OrderingChoice {
  flops,          ///< fewer factorisation flops (of the exact factor)
  critical_path,  ///< shorter modelled critical path of the final assembly tree
                  ///< (AnalysisOptions::latency, analysis/critical_path.hpp);
                  ///< ties go to fewer flops
};

/// Latency model of one front, in seconds: a front of order m with k
/// fully-summed columns costs per_front + per_column·k + per_update·k·(m−k)
/// on the assembly tree's critical path (analysis/critical_path.hpp). All
/// three >= 0. The defaults are fitted to the fused GPU subtree kernel's
/// traced critical chains on the H200 (large fronts, bench/README.md, issue 6,
/// session 43).
struct FrontLatencyModel {
  double per_front = 10.5e-6;  ///< seconds a front: wait, extend-add, writes
  double per_column = 0.36e-6; ///< seconds a fully-summed column (serial pivot chain)
  double per_update = 0.6e-9;  ///< seconds per entry of k·(m−k) (the CB update)
};

/// Options of the symbolic analysis.
struct AnalysisOptions {
  OrderingMethod ordering = OrderingMethod::scotch;
  std::vector<idx_t> user_perm;  ///< with OrderingMethod::user: perm[k] = original index of pivot k
  /// Relaxed amalgamation (Ashcraft & Grimes 1989; as in CHOLMOD's
  /// cholmod_super_symbolic): a child supernode is merged into its parent when
  /// the merged supernode has at most `relax_small` columns, or the merge adds
  /// no explicit zero, or the fraction of explicit zeros in the merged front's
  /// L part stays at or below `relax_zeros_small` (≤ relax_mid columns) /
  /// `relax_zeros_large`. Any child may merge (bottom-up); see
  /// analysis/amalgamation.hpp.
  idx_t relax_small = 4;
  idx_t relax_mid = 16;
  double relax_zeros_small = 0.8;
  double relax_zeros_large = 0.1;
  /// Marginal rule (starfront's addition to CHOLMOD's): a merge the rule
  /// above refuses is still made when the zeros it adds are at most
  /// `relax_marginal` times the child's L trapezoid (its explicit zeros
  /// included) and the merged front's zero fraction stays at or below
  /// `relax_zeros_cap`. It takes thin supernodes (few columns, a contribution
  /// block almost as large as the parent's front) into parents that earlier
  /// merges have already filled to relax_zeros_large. 0 turns it off.
  double relax_marginal = 0.01;
  double relax_zeros_cap = 0.2;
  /// Critical-path-aware amalgamation (starfront's; analysis/amalgamation.hpp):
  /// the merges above are made only where they do not lengthen the assembly
  /// tree's critical path under `latency`. For trees whose factorisation time
  /// is that path (the fused GPU subtree kernel); off by default.
  bool relax_critical_path = false;
  /// No merge makes a front of order above this (0: no limit); e.g.
  /// kGpuFusedFront (plan/task_graph.hpp), the largest front the fused GPU
  /// kernel keeps in shared memory.
  idx_t relax_max_front = 0;
  bool amalgamate = true;
  /// What OrderingMethod::scotch minimises (fewer flops by default).
  OrderingChoice ordering_choice = OrderingChoice::flops;
  /// Front latency model for relax_critical_path, OrderingChoice::critical_path
  /// and SymbolicFactor::critical_path_s.
  FrontLatencyModel latency;
  /// The latency rule (starfront's, for the GPU graph; 0: off). With a
  /// front order F > 0, the analysis the options above ask for (the "flops
  /// analysis") is compared with the critical-path analysis of the same
  /// ordering method: OrderingMethod::scotch picks by critical path
  /// (OrderingChoice::critical_path), relax_critical_path is on and
  /// relax_max_front = F. That one is kept when every front of its tree has
  /// order <= F (on the GPU graph with F = kGpuFusedFront the whole
  /// factorisation is then one fused kernel, whose time is the tree's
  /// critical path) and either its modelled critical path is shorter or
  /// the flops analysis has a front above F. Orderings whose largest
  /// column count exceeds F are not tried (no capped amalgamation can fit
  /// them), so meshes pay one extra column-count pass at most. Needs the
  /// default amalgamation (amalgamate, no relax_critical_path, no
  /// relax_max_front): invalid_argument otherwise. SymbolicFactor::
  /// latency_rule reports the choice.
  idx_t latency_rule_front = 0;
};

/// What the latency rule (AnalysisOptions::latency_rule_front) saw and chose.
struct LatencyRuleReport {
  bool applied = false;               ///< the rule ran (latency_rule_front > 0)
  bool critical_path_chosen = false;  ///< the critical-path analysis was kept
  idx_t front_limit = 0;              ///< latency_rule_front
  double flops_path_s = 0.0;          ///< the flops analysis's modelled critical path, seconds
  idx_t flops_max_front = 0;          ///< the flops analysis's largest front
  /// The critical-path analysis's modelled critical path (seconds) and
  /// largest front; -1 when no ordering's column counts fit the limit (it
  /// was not built).
  double path_path_s = -1.0;
  idx_t path_max_front = -1;
};

/// Supernodal symbolic factorisation of P A Pᵀ = L Lᵀ.
///
/// Columns are numbered in the *final* pivot order (after the fill-reducing
/// ordering and the postorder of the assembly tree): pivot k is the original
/// column perm[k]. Supernode s owns the contiguous pivot columns
/// [super_start[s], super_start[s+1]) — its fully-summed columns. Its front is
/// the dense lower-triangular matrix over the rows
///   front_rows[front_ptr[s] .. front_ptr[s+1]),
/// which begin with the supernode's own columns in increasing order followed
/// by the contribution-block rows (strictly increasing, all > the last column).
/// Supernodes are numbered in a postorder of the assembly tree: every child
/// has a smaller number than its parent; super_parent[s] = -1 at a root.
struct SymbolicFactor {
  idx_t n = 0;
  std::vector<idx_t> perm;   ///< perm[k] = original index of pivot k (size n)
  std::vector<idx_t> iperm;  ///< iperm[perm[k]] = k (size n)

  idx_t nsuper = 0;
  std::vector<idx_t> super_start;   ///< size nsuper+1, super_start[nsuper] = n
  std::vector<idx_t> super_parent;  ///< size nsuper, -1 for roots
  std::vector<idx_t> front_ptr;     ///< size nsuper+1
  std::vector<idx_t> front_rows;    ///< size front_ptr[nsuper]
  std::vector<idx_t> col_to_super;  ///< size n: supernode owning pivot column k

  // Counts (of the amalgamated structure, i.e. what the factorisation stores).
  idx_t nnz_l = 0;       ///< entries of L including the diagonal
  double flops = 0.0;    ///< flops of the numeric factorisation (see analysis/counts.hpp)
  idx_t max_front = 0;   ///< largest front order
  idx_t nnz_l_exact = 0; ///< nnz(L) of the exact (non-amalgamated) factor
  double flops_exact = 0.0; ///< flops of the exact factor, Σ colcount² (CHOLMOD's Common->fl)
  /// The assembly tree's critical path under AnalysisOptions::latency
  /// (analysis/critical_path.hpp): modelled seconds, its fronts and their
  /// fully-summed columns (Σ k along the path).
  double critical_path_s = 0.0;
  idx_t critical_path_fronts = 0;
  idx_t critical_path_columns = 0;
  /// The ordering the analysis used: scotch_nd or scotch_amd when
  /// OrderingMethod::scotch picked one, else the requested method.
  OrderingMethod ordering_used = OrderingMethod::natural;
  /// The amalgamation used: relax_critical_path (with the front cap
  /// relax_max_front, 0: none) or the relaxed rule; none when !amalgamate.
  bool amalgamated = false;
  bool critical_path_amalgamation = false;
  idx_t amalgamation_max_front = 0;
  LatencyRuleReport latency_rule;  ///< AnalysisOptions::latency_rule_front's outcome

  idx_t ncols(idx_t s) const { return super_start[s + 1] - super_start[s]; }
  idx_t front_order(idx_t s) const { return front_ptr[s + 1] - front_ptr[s]; }
  idx_t cb_order(idx_t s) const { return front_order(s) - ncols(s); }
};

/// The ordering named as `starfront solve --ordering` spells it: "scotch",
/// "scotch-path" (scotch with OrderingChoice::critical_path), "scotch-nd",
/// "scotch-amd", "natural". Sets opts.ordering and opts.ordering_choice;
/// returns false (opts untouched) for any other name.
bool set_ordering_by_name(const std::string& name, AnalysisOptions& opts);

/// The --ordering spelling of a method ("user" for OrderingMethod::user).
const char* ordering_method_name(OrderingMethod m);

/// Runs the whole analysis on the lower CSC matrix A (validated first):
/// ordering, elimination tree, postorder, column counts, fundamental
/// supernodes, relaxed amalgamation, front structures and counts.
/// Errors: invalid_argument (A malformed, user_perm not a bijection, a
/// latency figure negative or not finite, relax_max_front < 0, relax_small
/// or relax_mid < 0, a relax_zeros_* / relax_marginal fraction negative or
/// not finite,
/// latency_rule_front < 0 or set with a non-default amalgamation),
/// ordering_error (Scotch failed). `out` is only written on success.
Status analyse(const CscMatrix& A, const AnalysisOptions& opts, SymbolicFactor& out);

}  // namespace starfront
