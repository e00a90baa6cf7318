// Mapping of the task graph onto P MPI ranks (StarPU-MPI, issue 11): which
// rank runs each task and owns each block, and the communication a mapping
// implies. Pure data, no runtime and no MPI (the StarPU-MPI executor in
// src/runtime/starpu_mpi/ walks it).
//
// Tree level: proportional mapping (A. Pothen and C. Sun, "A mapping
// algorithm for parallel sparse Cholesky factorization", SIAM J. Sci.
// Comput. 14(5), 1993; after A. George, J. W. H. Liu and E. Ng's
// subtree-to-subcube mapping and A. Geist and E. Ng, "Task scheduling for
// parallel sparse Cholesky factorization", Int. J. Parallel Programming
// 18(4), 1989; the scheme behind MUMPS's and PaStiX's static mappings). Each
// front s gets a real interval [lo, hi) of the rank axis [0, P): the roots
// share [0, P) and every front's interval is cut among its children in
// proportion to their subtree work (flops of the plan, plus one flop per
// front so that empty fronts count). A front whose interval is at most one
// rank long is mapped, with its whole subtree, to one rank: the rank whose
// unit interval [r, r+1) overlaps it most. A longer interval makes the
// front shared by the ranks it overlaps (a contiguous set).
//
// Graph level:
//  - tiles of a tiled front shared by q ranks are owned 2D block-cyclically
//    on a pr × pc grid (pr the largest divisor of q not above √q, pc = q/pr):
//    tile (I, J) belongs to first + (I mod pr)·pc + (J mod pc); tiles of a
//    front of one rank are that rank's;
//  - a subtree or front task runs on its front's master (the rank of the
//    interval's largest overlap, the lowest on a tie): medium fronts are not
//    split;
//  - every other task (tile kernels, assemble, extend_add) runs on the owner
//    of the first block it writes (owner computes). assemble and extend_add
//    of column J write the whole tile column J: on a grid with pr > 1 the
//    other tiles of the column go back to their owners after the task;
//  - a block that is not a tile (factor panels, whole contribution blocks)
//    is owned by the rank of the task that first accesses it (its producer).
//    The contribution-block slots are then planned per rank (plan_slots with
//    the block owners): a slot only ever holds blocks of one rank.
#pragma once

#include <vector>

#include "plan/cb_slots.hpp"
#include "plan/task_graph.hpp"

namespace starfront {

/// Proportional mapping of a forest onto nranks ranks.
struct TreeMapping {
  int nranks = 1;
  std::vector<double> lo, hi;   ///< per node: its interval of the rank axis [0, nranks)
  std::vector<int> first_rank;  ///< per node: first rank of its (contiguous) set
  std::vector<int> nranks_of;   ///< per node: size of its set (1: one rank runs its whole subtree)
  std::vector<int> master;      ///< per node: the rank of largest overlap with [lo, hi)
  std::vector<double> subtree_work;  ///< per node: work of its subtree (+1 per node)
};

/// Proportional mapping (see the file header) of the forest given by
/// `parent` (parent[s] > s, -1 at a root: a postorder) with per-node work
/// `work` (>= 0) onto nranks >= 1 ranks. Errors: invalid_argument (sizes
/// differ, nranks < 1, a parent not after its child, negative work).
Status proportional_mapping(const std::vector<idx_t>& parent, const std::vector<double>& work, int nranks,
                            TreeMapping& out);

/// The mapping of a task graph onto ranks.
struct RankMapping {
  int nranks = 0;               ///< 0: not mapped yet
  TreeMapping tree;             ///< of the assembly tree (supernodes)
  std::vector<int> task_rank;   ///< per task: the rank that runs it
  std::vector<int> block_owner; ///< per block: the rank that owns it
  std::vector<int> grid_rows;   ///< per front: pr of its tile grid (1 when not tiled or not shared)
  /// Flops of the tasks each rank runs (size nranks).
  std::vector<double> rank_flops;
};

/// Maps graph G (built from a FrontPlan) onto nranks ranks (file header).
/// Errors: invalid_argument (nranks < 1).
Status map_graph(const TaskGraph& G, int nranks, RankMapping& out);

/// map_graph, then the contribution-block slots planned again per rank
/// (plan_slots with M.block_owner, policy `slots`), replacing G's
/// one-process slot plan. Errors: those of map_graph and plan_slots.
Status distribute_graph(TaskGraph& G, int nranks, const SlotOptions& slots, RankMapping& out);

/// Owner of tile (I, J) of a tiled front whose ranks are [first, first+q)
/// on a pr × (q/pr) grid.
inline int tile_owner(int first, int q, int pr, idx_t I, idx_t J) {
  const int pc = q / pr;
  return first + static_cast<int>(I % pr) * pc + static_cast<int>(J % pc);
}

/// Bytes of data that cross ranks in a mapped graph whose slots were
/// planned per rank (plan_slots with M.block_owner).
struct CommVolume {
  /// Lower bound of the mapping: every version of a block (from one write
  /// to the next) read by tasks of a rank other than the writer's is sent
  /// at least once to that rank; its bytes (the block's rows × cols × 8)
  /// counted on the receiving rank. No protocol running these tasks on
  /// these ranks can move less.
  std::vector<double> lower_bound_recv;
  double lower_bound_total = 0;
  /// What StarPU-MPI's owner-computes protocol with its cache moves for the
  /// runtime's handles (a CB block travels as its whole slot handle, of the
  /// slot's capacity): a reader that does not hold the current version
  /// receives it from the owner; a task that writes a handle it does not
  /// own sends it back to the owner; a write invalidates every cached copy
  /// (the writer's too, when it is not the owner).
  /// Per rank, bytes sent and received.
  std::vector<double> protocol_sent, protocol_recv;
  double protocol_total = 0;
  /// Bytes of the factor blocks owned by ranks other than 0 whose final
  /// version rank 0 does not hold already (what gathering the factor on
  /// rank 0 would move; the factor stays distributed since the solve is:
  /// a comparison figure for the solve's own volume, solve_graph.hpp).
  double gather_to_root = 0;
};

/// Communication of mapped graph G. Requires G's slots planned with
/// M.block_owner (every slot holds blocks of one owner).
CommVolume communication_volume(const TaskGraph& G, const RankMapping& M);

/// Memory estimates of each rank's share (bytes): factors it owns, its
/// slots (planned, lower bound over the submission order of its own live
/// blocks, private), and the largest fused-subtree workspace among its
/// tasks. Copies received from other ranks (StarPU-MPI's cache) are not
/// counted: CommVolume bounds them.
std::vector<MemoryEstimates> memory_estimates_per_rank(const TaskGraph& G, const RankMapping& M);

}  // namespace starfront
