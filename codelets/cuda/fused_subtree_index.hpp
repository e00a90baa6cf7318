// Index data of the fused GPU subtree kernel (issue 6; fused_subtree.cu):
// for every `subtree` task of a task graph, the fronts it factorises in the
// order the kernel hands them out (a topological order: children first),
// where each front's factor panel and contribution block (CB) live, its
// children, the relative indices of their extend-adds and the scatter map of
// A's entries. Built ONCE PER ANALYSIS on the host, uploaded once (one
// read-only StarPU vector: src/runtime/starpu/gpu_assembly_cache.hpp) and
// reused by every factorisation with the same graph; a refactorisation sends
// only A's values.
//
// Plain C++ (no CUDA, no StarPU): part of starfront_core in every build, so
// that the index and a host emulation of the kernel (the same arrays, the
// same ticket order, the same CB offsets) are tested without a GPU.
//
// CB workspace (why it is safe): every front of a task except the task's
// root owns a private region of the task's workspace, [cb_off, cb_off +
// mc²), disjoint from every other front's region (prefix sums over the
// ticket order). A region is written by its front only and read by its
// parent only, after the front has completed, within one kernel launch; so
// no CB can be overwritten while live, whatever order or concurrency the
// kernel's blocks run in. The root's CB goes to the task's planned slot
// (plan/cb_slots.hpp), as on the CPU. This is no level-derived layout.
//
// Ticket order: first the "small" fronts, those whose whole subtree has
// fronts of order <= kFusedSmallOrder (a set closed under taking
// descendants), then the others; within each part by height in the task's
// forest (leaves 0, a parent one more than its highest child), then by front
// index. A child is small whenever its parent is, and has a smaller height,
// so this is a topological order; it exposes all leaves first. Or (measurement
// knob, FusedTicketOrder::path) within each part by decreasing modelled time
// from the front's start to the end of its tree's root in the task
// (front_latency summed up the ancestors: the "bottom level" priority of
// list scheduling, here the remaining path to the root), then by front
// index: a child's is its parent's plus its own time (> 0), so this is
// topological too. Each front goes ahead of every front with a shorter
// remaining path (the longest path's leaf first), instead of behind every
// front of a lower height (on the H200 it left the GPU time unchanged:
// bench/README.md, session 44). The kernel
// runs the small part in one launch with many light thread blocks per SM and
// the rest (the few large fronts near the root) in a second launch with
// fewer, larger blocks.
//
// References: J. W. H. Liu, "The multifrontal method for sparse matrix
// solution: theory and practice", SIAM Review 34(1), 1992 (fronts,
// extend-add, relative indices).
#pragma once

#include <cstdint>
#include <vector>

#include "analysis/symbolic.hpp"
#include "plan/task_graph.hpp"

namespace starfront {

/// Fronts of at most this order whose descendants are all as small form the
/// first launch of a fused task (64·65/2 doubles: 16.3 KiB of shared memory per block).
constexpr idx_t kFusedSmallOrder = 64;

/// One front of a fused task, in ticket order (device layout, 72 bytes).
/// Front s has order m, k fully-summed columns and a CB of order mc = m - k.
struct FusedFront {
  std::int64_t l_off;        ///< offset (doubles) of L_s (m×k, ld m) from the task's panel block
  std::int64_t cb_off;       ///< offset (doubles) of its CB (mc×mc, ld mc) in the workspace; -1: the task's root CB buffer
  std::int64_t a_begin;      ///< entries [a_begin, a_end) of FusedSubtreeIndex::entries
  std::int64_t a_end;
  std::int64_t child_begin;  ///< children [child_begin, child_end) of FusedSubtreeIndex::children
  std::int64_t child_end;
  std::int64_t diag_begin;   ///< k entries of FusedSubtreeIndex::diag (A's diagonal of each pivot)
  std::int64_t col0;         ///< its first pivot column (final numbering, 0-based)
  std::int32_t m, k;
};

/// One child of a front (32 bytes): its ticket (index in the task's front
/// list, smaller than its parent's), its CB (in the workspace) and where the
/// relative indices of its CB rows start in FusedSubtreeIndex::rel.
struct FusedChild {
  std::int64_t cb_off;     ///< offset (doubles) of the child's CB in the workspace
  std::int64_t rel_begin;  ///< rel[rel_begin + r], r < mc: row of CB row r in the parent's front
  std::int32_t ticket;     ///< the child's ticket in the same task
  std::int32_t mc;         ///< the child's CB order
  std::int64_t pad;        ///< 0 (alignment)
};

/// One entry of A added into a front (16 bytes): L_s[dst] += values[src].
struct FusedEntry {
  std::int64_t src;  ///< index into A's values (the caller's lower CSC order)
  std::int64_t dst;  ///< offset inside the m×k panel of its front (row + col·m)
};

/// Per graph task (zero for other kinds than subtree).
struct FusedTaskIndex {
  idx_t front_begin = 0, nfronts = 0;  ///< fronts[front_begin, front_begin + nfronts), ticket order
  idx_t workspace = 0;   ///< doubles of CB workspace the task needs (sum of its internal CBs)
  idx_t max_order = 0;   ///< largest front order of the task
  idx_t nsmall = 0;      ///< tickets [0, nsmall): the small fronts (file header)
  idx_t max_order_small = 0;  ///< largest order among them
  idx_t first_front = -1, root = -1;  ///< the task's front range (as in the graph)
};

/// The order in which the kernel hands out a task's fronts within each part
/// (file header): by height (the default), or by decreasing modelled path to
/// the root (front_latency under build_fused_subtree_index's model). The
/// order changes no arithmetic: a front adds its children's CBs in the
/// plan's child order either way.
enum class FusedTicketOrder { height, path };

/// The fused-subtree index of a task graph. Every array holds at least one
/// element (so that the packed blob is never empty). Offsets (in bytes) of
/// each array inside `blob`, the single device array the kernel reads.
struct FusedSubtreeIndex {
  std::vector<FusedFront> fronts;
  std::vector<FusedChild> children;
  std::vector<std::int32_t> rel;
  std::vector<FusedEntry> entries;
  std::vector<std::int64_t> diag;  ///< index in A's values of the diagonal of a pivot column, or -1
  std::vector<FusedTaskIndex> task;  ///< per graph task
  /// All arrays above (fronts, children, rel, entries, diag) packed, each at a
  /// 16-byte aligned offset, as 16-byte words (one StarPU vector).
  std::vector<std::uint64_t> blob;  ///< size a multiple of 2
  std::size_t off_fronts = 0, off_children = 0, off_rel = 0, off_entries = 0, off_diag = 0;  ///< bytes
  idx_t max_workspace = 0;  ///< max over tasks of FusedTaskIndex::workspace
  idx_t max_fronts = 0;     ///< max over tasks of nfronts
  bool empty = true;        ///< the graph has no subtree task
  FusedTicketOrder order = FusedTicketOrder::height;  ///< how the tickets were ordered
};

/// Builds the index of every subtree task of G (G.plan must be set), tickets
/// in `order` (FusedTicketOrder::path under `model`, whose figures must be
/// finite and >= 0: a child's path is then at least its parent's, and ties
/// go to the lower front index, the child). Errors: invalid_argument when a front order
/// exceeds 32-bit range (or its square 2^53), one task holds more than
/// 2^31 - 1 fronts, or the path order's model has a figure that is negative
/// or not finite.
Status build_fused_subtree_index(const TaskGraph& G, FusedSubtreeIndex& out,
                                 FusedTicketOrder order = FusedTicketOrder::height,
                                 const FrontLatencyModel& model = FrontLatencyModel{});

/// Longest dependency chains of a fused task, in fronts (a front counts
/// once; a chain runs from a front to an ancestor through parent links).
/// Every front of a chain waits for the one below it, so these bound the
/// kernel's time from below by chain length × per-front latency: `small`
/// inside the first launch (tickets [0, nsmall)), `large` inside the second,
/// `whole` over the task as if it were one launch.
struct FusedChains {
  idx_t small = 0, large = 0, whole = 0;
};

/// The chains of graph task `task` of X (all 0 for a task that is no
/// subtree). One pass over the ticket order (children first), O(fronts +
/// children).
FusedChains fused_chains(const FusedSubtreeIndex& X, idx_t task);

/// Trace stamps per front of the fused kernel (FusedLaunch::trace), in ns of
/// the GPU's %globaltimer, in the order the kernel takes them: 0 the front's
/// block starts it; 1 and 2 after its prologue (zeroing, A's entries, |a_jj|
/// and children's descriptors) and after the wait for its children, in the
/// order they ran (`early`: prologue first; the wait then also adds the CBs
/// of the children complete before the last, and stamp 2 is when the last
/// is seen complete); 3 after the extend-add (of the rest); 4 after the
/// factorisation; 5 after its CB is written, just before its completion flag
/// is published (L is written after). 0: not reached (a skipped front).
constexpr int kFusedTracePoints = 6;

/// One front of the critical chain of a fused kernel's trace (ns): its
/// ticket, order m, pivots k, children; from its last child's publication
/// to the end of its wait: `late_start` (its block took the front's ticket
/// after that publication: the launch's blocks were all busy or, for the
/// first large front above a small child, the large launch had no
/// multiprocessor yet, the time `boundary` also counts), `overrun`
/// (with `early`: its prologue still ran after the publication, or after
/// the late start), then `lag` (from the later of the publication and the
/// start of its wait to the wait's end; for the chain's last front, a
/// leaf, from the task's first stamp, the other two 0); then its
/// extend-add, factorisation and CB write-out (stamp differences). With
/// `early`, the steps of a chain add up to its span: first stamp of the
/// task to the last front's publication.
struct FusedChainStep {
  idx_t ticket = 0, m = 0, k = 0, children = 0;
  double late_start = 0, overrun = 0, lag = 0, extend_add = 0, factor = 0, write = 0;
};

/// Where the time of one fused launch went, from its trace (ns).
/// The critical chain is found backwards from the front that was published
/// last: at each front, the child published last, down to a front without
/// children. Along it: `fronts`, and the sums of each front's prologue,
/// extend-add, factorisation and write-out (stamp differences), and of its
/// steps' `late_start`, `overrun` and `lag` (FusedChainStep; the lag is
/// flag visibility and wake-up, and with `early` the extend-adds of earlier
/// children still running then). `span`: first stamp to last publication, per launch part
/// (tickets [0, nsmall) and the rest); `mean_*`: averages over the traced
/// fronts of each part. `boundary`: when the chain runs from the small part
/// into the large one, the time from the publication of its last small
/// front to the first stamp of the large launch (what one launch for both
/// parts could save on this chain at most), else 0. `chain`: the chain's
/// fronts one by one, from the last one published (the task's root unless
/// it was skipped) down.
struct FusedTraceSummary {
  idx_t fronts = 0;
  double boundary = 0;
  double own = 0, late_start = 0, overrun = 0, lag = 0, extend_add = 0, factor = 0, write = 0;
  double span[2] = {0, 0};
  double mean_own[2] = {0, 0}, mean_extend_add[2] = {0, 0}, mean_factor[2] = {0, 0}, mean_write[2] = {0, 0};
  idx_t traced[2] = {0, 0};  ///< fronts with all stamps, per part
  std::vector<FusedChainStep> chain;  ///< the critical chain, last published first (`fronts` steps)
};

/// Summarises the trace of graph task `task` of X (kFusedTracePoints ×
/// nfronts stamps, ticket order) taken with FusedLaunch::early = `early`.
/// Fronts with a zero stamp (skipped) are left out. Pure host code.
FusedTraceSummary fused_trace_summary(const FusedSubtreeIndex& X, idx_t task, const std::uint64_t* trace, bool early);

/// Host emulation of the fused kernel for graph task `task` (tests): runs
/// the fronts in ticket order (each front only after its children, as the
/// kernel waits), with the same index arrays, the same CB workspace offsets
/// and the same dense column-by-column Cholesky and pivot test as the
/// kernel. panel: the task's panel block; root_cb: the root's CB buffer (null
/// if the root has no CB); workspace: FusedTaskIndex::workspace doubles.
/// Returns the failure with the smallest column (as the kernel reports), or
/// a done result with the minimum pivot ratio.
struct FrontResult;
FrontResult fused_subtree_emulated(const TaskGraph& G, const FusedSubtreeIndex& X, idx_t task,
                                   const double* values, double* panel, double* root_cb, double* workspace,
                                   double pivot_tol);

}  // namespace starfront
