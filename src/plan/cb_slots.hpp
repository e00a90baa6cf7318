// Contribution-block slots: which memory each contribution block (CB) of the
// task graph lives in, planned over the SUBMISSION order so that reuse is
// safe under ANY execution order the runtime picks (DESIGN.md, "The
// contribution-block slot problem").
//
//  - A CB block is a block of the task graph with no place in Lx: the whole
//    CB of a front task or of a fused subtree's root, or ONE TILE of the CB of
//    a tiled front (slots are per tile: each tile is a handle of its own, so
//    the tiles of one CB can be freed and reused one by one). The internal
//    CBs of a fused subtree stay in the task's own workspace.
//  - Lifetime of block b: [first, last] = submission indices of the first
//    task that accesses it (its producer, mode W) and of the last one.
//  - Slots are assigned greedily in order of producer (interval colouring
//    with sizes, best fit: the smallest free slot that holds the block, else
//    the largest free slot, grown; else a new slot). A slot's capacity is
//    the largest block placed in it.
//  - A slot is "free" for block b when the previous occupant o ended before
//    b's producer p in submission order (last(o) < p). Reuse is SAFE in any
//    execution order only if every task that accesses o precedes p in the
//    graph. `dag` reuses a slot only where the graph already has a path from
//    each accessor of o to p (no new dependency, no lost parallelism); the
//    budget policies may instead add the missing write-after-read edges
//    (accessor -> p) to TaskGraph::added_deps.
//
// The runtime gives each slot one handle of the slot's capacity: accessors
// read it R, producers write it W, so StarPU enforces every write-after-read
// by itself; no two handles alias memory. plan/slot_check.hpp replays random
// execution orders to check a plan.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "plan/task_graph.hpp"

namespace starfront {

/// Plans the slots of G's contribution blocks (fills G.slot_of,
/// G.slot_capacity, G.added_deps, G.slot_policy). G's tasks are in
/// submission order. With block_rank (one rank per block of G: the MPI
/// mapping, plan/rank_mapping.hpp) the planner runs per rank: a slot only
/// holds blocks of one rank (G.slot_rank says which); a budget is then the
/// total over all ranks. Errors: out_of_memory when SlotPolicy::budget cannot be
/// met even by the minimum plan (the message gives both figures, in bytes);
/// invalid_argument when block_rank has the wrong size.
Status plan_slots(TaskGraph& G, const SlotOptions& opts, const std::vector<int>* block_rank = nullptr);

/// Memory a factorisation needs, in bytes (8-byte doubles), from a planned graph.
struct MemoryEstimates {
  double factors = 0;         ///< Lx: the factor panels of all fronts
  double cb_lower_bound = 0;  ///< max over the submission order of the sum of live CB blocks
  double cb_planned = 0;      ///< sum of the slot capacities
  double cb_private = 0;      ///< sum of all CB blocks (no reuse)
  /// Classical level-synchronous estimate: fronts run level by level (depth
  /// in the assembly tree, deepest first); while level d runs, the CBs of
  /// levels d and d+1 are live: max over d of CB(d) + CB(d+1), every front's
  /// CB counted (fused or not).
  double cb_level_stack = 0;
  /// Largest workspace one fused-subtree task holds (its internal CBs, in a
  /// sequential pass): at most one such workspace per worker at a time.
  double subtree_workspace = 0;
  idx_t added_deps = 0;       ///< write-after-read dependencies the planner added
  idx_t slots = 0;            ///< number of slots (StarPU handles)
};

/// Bytes of the workspace a fused-subtree task uses for its internal
/// contribution blocks on a CPU core: the size of subtree_cb_layout() (0 for
/// other tasks).
double subtree_workspace_bytes(const FrontPlan& P, const Task& t);

/// Places the internal contribution blocks of the fused subtree of fronts
/// [first, root] (a postorder range, children before parents) in one
/// workspace so that each CB is written once, where its parent reads it (no
/// stack compaction, no copy). A CB is live from its front's factorisation
/// until its parent's (the children's CBs stay live while the parent's CB is
/// built); each CB takes the lowest free offset where it fits (first fit, in
/// the order of the fronts). The root's CB (the task's output) and CBs of
/// order 0 take no space.
///   offsets  resized to root - first + 1; offsets[s - first] is the offset
///            of front s's CB in doubles (0 when it takes no space)
/// Returns the workspace size in doubles. Children outside the range are
/// ignored. Cost O(nf · live CBs).
std::size_t subtree_cb_layout(const FrontPlan& P, idx_t first, idx_t root, std::vector<std::size_t>& offsets);

/// Memory estimates of planned graph G.
MemoryEstimates memory_estimates(const TaskGraph& G);

/// Name of a policy: "private", "dag", "budget", "budget-min".
const char* slot_policy_name(SlotPolicy p);

/// Parses "private", "dag", "budget:BYTES" (BYTES a number, optional suffix
/// K, M, G for 2^10, 2^20, 2^30) or "budget-min" into opts. Errors:
/// invalid_argument naming the text and what was expected.
Status parse_slot_policy(const std::string& text, SlotOptions& opts);

/// A deliberately WRONG plan for tests of the checker: CB slots derived from
/// tree levels, as a level-synchronous code would place them (the blocks of
/// the fronts at depth d share the slots of depth d - 2, ping-pong). Safe
/// only when fronts run level by level; the checker must reject it.
void plan_slots_by_level(TaskGraph& G);

}  // namespace starfront
