// The task graph of a multifrontal Cholesky factorisation, independent of any
// runtime: tasks (kind, front or tile, flops, priority) and their accesses to
// blocks (front panels, tiles, contribution blocks) with modes R, W, RW and
// RW|COMMUTE, listed in submission order. The StarPU executor and the
// sequential executor only walk it.
//
// Granularity (DESIGN.md, "Granularity"):
//  - fused subtrees: a subtree of the assembly tree whose work is small
//    becomes ONE task running a sequential multifrontal pass over it (its
//    internal contribution blocks stay inside the task) and emitting only the
//    root's contribution block; the partition follows Geist & Ng (below);
//  - medium fronts: one task per front (assemble, extend-add, POTRF/TRSM/SYRK);
//  - large fronts (order > tile_threshold, or with a tiled child): 2D tiles of
//    order tile_size; an `assemble` task per block column (zero + entries of
//    A; a contribution-block column also reads the children's contribution
//    blocks, only to start after them: see cb_slots.hpp), `extend_add` tasks per child and parent block column with
//    RW|COMMUTE on the parent's tiles (children add in any order, one at a
//    time per tile), then right-looking tiled POTRF/TRSM/SYRK/GEMM over the
//    fully-summed tile columns, updating the contribution-block tiles.
//
// Subtree partition: A. Geist and E. Ng, "Task scheduling for parallel sparse
// Cholesky factorization", Int. J. Parallel Programming 18(4), 1989, as used
// for qr_mumps's and MUMPS's subtree layers: start from the roots; while the
// heaviest subtree of the current layer weighs more than total/(subtree_ratio
// · workers), replace it by its children (its root becomes an ordinary front
// task), unless it weighs at most min_subtree_flops. Every subtree left in
// the layer is one task; consecutive light whole trees of the forest
// (disconnected parts of A) are grouped into one task as well. Tiled fronts
// are never inside a subtree.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "plan/front_plan.hpp"

namespace starfront {

/// How contribution blocks share memory (plan/cb_slots.hpp; DESIGN.md, "The
/// contribution-block slot problem").
enum class SlotPolicy : std::uint8_t {
  private_slots,  ///< one slot per block: no reuse at all
  dag,            ///< reuse a slot only where the graph already orders the reuse (default)
  budget,         ///< fit in SlotOptions::budget_bytes, adding the fewest write-after-read dependencies
  budget_min,     ///< the smallest total the planner can reach in submission order (adds dependencies)
};

/// Options of the contribution-block slot planner.
struct SlotOptions {
  SlotPolicy policy = SlotPolicy::dag;
  double budget_bytes = 0.0;  ///< SlotPolicy::budget: the most bytes all slots together may hold
};

/// Options of the task-graph compiler (defaults chosen by measurement: bench/README.md).
struct GraphOptions {
  int workers = 0;             ///< workers the partition should keep busy (0: hardware threads)
  double subtree_ratio = 4.0;  ///< layer subtrees weigh at most total/(ratio·workers)
  /// A subtree of at most this many flops is never split (about 0.5 ms on one
  /// core, a hundred times the cost of a task): splitting it would only add
  /// task overhead (chains of tiny fronts, whole small problems).
  double min_subtree_flops = 1e6;
  bool fuse_subtrees = true;   ///< false: one task per front (the reference graph)
  /// Fronts of larger order are never inside a fused subtree (nor, then,
  /// their ancestors); 0: no limit. GPU graphs (gpu_graph_options) bound it
  /// so that every front of a fused kernel fits in shared memory.
  idx_t max_subtree_front = 0;
  idx_t tile_threshold = 512;  ///< fronts of larger order are tiled
  idx_t tile_size = 256;       ///< order of the tiles
  bool tile = true;            ///< false: never tile
  SlotOptions slots;           ///< contribution-block slot planning
};

/// Largest front order that the fused GPU subtree kernel keeps in shared
/// memory (the packed lower triangle of a front of order 232 takes 211 KiB,
/// within the 227 KiB of shared memory per block of an H200); its subtrees
/// with larger fronts take a slow global-memory path, and the StarPU cost
/// model keeps them on CPUs (task_codelets.hpp).
constexpr idx_t kGpuFusedFront = 232;

/// Defaults of the GPU graph (gpu_graph_options), measured on lap3d 60³ 7-
/// and 27-point on one H200 + 15 CPU workers (bench/README.md, "Fewer,
/// bigger GPU tasks"): on a GPU the cost of a task (StarPU's handling, a few
/// launches, one stream synchronisation per front: tens of µs) and not its
/// flops limits the factorisation, so
///  - fused subtrees hold fronts up to order kGpuGraphSubtreeFront = 600
///    (those with fronts above kGpuFusedFront run on the CPU workers, the
///    others on either): 0.110 / 0.131 s, against 0.231 / 0.316 s with 232
///    and 0.197 / 0.252 s with 1000;
///  - only fronts above kGpuTileThreshold = 8192 are tiled, in tiles of
///    kGpuTileSize = 2048: untiled fronts up to 5,504 were faster than tiles
///    of 1024 above 4096 at every subtree limit measured (e.g. 0.110 against
///    0.130 s); no front of those matrices reaches 8192, so the tiled
///    layer itself is not measured at these sizes. On lap3d 100³ (largest
///    front 15098, one H200, session 20) no tiling at all (threshold
///    16384) was about 9% faster than 8192; the threshold stays for
///    several GPUs, which the tiles let share the top fronts (unmeasured).
constexpr idx_t kGpuGraphSubtreeFront = 600;
constexpr idx_t kGpuTileSize = 2048;
constexpr idx_t kGpuTileThreshold = 8192;

/// The GPU-oriented graph (issues 5 and 6): three layers, bottom to top,
///  - fused subtrees: never split by weight (min_subtree_flops = 1e12) but
///    only above fronts of order > max_front (default kGpuGraphSubtreeFront;
///    kGpuFusedFront keeps every subtree within the fused GPU kernel's
///    shared memory, as the power-grid tests and `gpu_bench --fused` do), so
///    that the many small fronts become a few subtree tasks (one kernel
///    launch each on a GPU, a sequential multifrontal pass on a CPU);
///  - medium fronts (order in (max_front, tile_threshold]): one `front` task
///    each (assembly, extend-add, cuSOLVER POTRF, cuBLAS TRSM and SYRK on the
///    GPU);
///  - large fronts (order > tile_threshold, and their ancestors): tiles of
///    order tile_size.
/// Other options as the defaults; `workers` as given. No validation here:
/// build_task_graph checks the values.
GraphOptions gpu_graph_options(int workers = 0, idx_t max_front = kGpuGraphSubtreeFront, idx_t tile_threshold = kGpuTileThreshold,
                               idx_t tile_size = kGpuTileSize);

enum class TaskKind : std::uint8_t { subtree, front, assemble, extend_add, potrf, trsm, syrk, gemm };
constexpr int kTaskKinds = 8;
/// Lower-case name of a task kind ("subtree", "front", ...).
const char* task_kind_name(TaskKind k);

enum class AccessMode : std::uint8_t { R, W, RW, RW_COMMUTE };
const char* access_mode_name(AccessMode m);

enum class BlockKind : std::uint8_t {
  panel,    ///< factor panels of a range of fronts in Lx (contiguous), or of one front
  tile,     ///< one tile of a tiled front: in Lx (panel part) or its own buffer (CB part)
  cb,       ///< the whole contribution block of a non-tiled front (own buffer)
};

/// A piece of data a task accesses. Dense column-major, `rows`×`cols` with
/// leading dimension `ld`; `offset` >= 0: it lives in Lx at that offset,
/// otherwise it is a buffer of its own (allocated by the executor).
struct Block {
  BlockKind kind;
  idx_t front;    ///< the front it belongs to (panel: the last front of the range)
  idx_t row0 = 0, col0 = 0;  ///< tile: first row and column inside the front
  idx_t rows = 0, cols = 0, ld = 0;
  idx_t offset = -1;
  bool lower = false;  ///< only the lower triangle is meaningful (diagonal tiles, CBs)
  idx_t bytes() const { return rows * cols * static_cast<idx_t>(sizeof(double)); }
};

struct Access {
  idx_t block;
  AccessMode mode;
};

/// One task. For tile kernels, (i, j, k) are tile indices inside `front`
/// (potrf: k; trsm: i, k; syrk: j, k; gemm: i, j, k); assemble: j; extend_add:
/// `child` and parent block column j; subtree: fronts [first_front, front]
/// (one subtree, or several consecutive whole trees of the forest).
struct Task {
  TaskKind kind;
  idx_t front;
  idx_t first_front = -1;
  idx_t child = -1;
  int i = 0, j = 0, k = 0;
  double flops = 0.0;
  int priority = 0;          ///< bottom level, scaled to 0..1000 (higher runs first)
  idx_t acc_begin = 0, acc_end = 0;  ///< accesses[acc_begin, acc_end)
};

/// How one front is executed.
enum class FrontMode : std::uint8_t { in_subtree, single, tiled };

/// The compiled task graph (tasks in submission order).
struct TaskGraph {
  const FrontPlan* plan = nullptr;  ///< not owned
  /// Unique per build_task_graph call in this process (1, 2, ...; copies keep
  /// it): caches of data derived from the graph and its plan (the GPU index
  /// uploads) key on it.
  std::uint64_t build_id = 0;
  std::vector<Task> tasks;
  std::vector<Access> accesses;
  std::vector<Block> blocks;

  std::vector<FrontMode> mode;        ///< per front
  std::vector<idx_t> subtree_first;   ///< per front in a subtree: first front of its subtree, else -1
  /// Tiled fronts: tile boundaries inside the front (rows and columns alike):
  /// bounds[bounds_ptr[s] .. bounds_ptr[s+1]) starts at 0 and ends at m,
  /// and contains ncols(s) (panel tiles end exactly at the fully-summed columns).
  std::vector<idx_t> bounds_ptr, bounds;
  std::vector<idx_t> npanel_tiles;    ///< per front: tile columns in the panel (0 if not tiled)
  std::vector<idx_t> tile_ptr;        ///< per front: first block id of its lower tile grid
  /// Contribution blocks of each front: cb_blocks[cb_ptr[s] .. cb_ptr[s+1])
  /// (one `cb` block, the CB tiles of a tiled front, or none for a root).
  std::vector<idx_t> cb_ptr, cb_blocks;

  /// Contribution-block slots (plan/cb_slots.hpp). slot_of[b]: the slot of
  /// block b, -1 for blocks in Lx; every block with offset < 0 has one.
  /// slot_capacity[σ]: doubles (the largest block placed in σ). The blocks of
  /// one slot are produced in submission order and their lifetimes
  /// (first to last access) never overlap in any valid execution order.
  std::vector<idx_t> slot_of;
  std::vector<idx_t> slot_capacity;
  /// Slots planned per MPI rank (plan_slots with block ranks): the rank
  /// owning each slot; empty for a one-process plan.
  std::vector<int> slot_rank;
  /// Write-after-read dependencies added by the slot planner (budget
  /// policies): (pred, succ) with pred < succ. task_dependencies includes them.
  std::vector<std::pair<idx_t, idx_t>> added_deps;
  SlotPolicy slot_policy = SlotPolicy::private_slots;

  idx_t ntiles(idx_t s) const { return bounds_ptr[s + 1] - bounds_ptr[s] - 1; }
  /// Block id of tile (I, J), I >= J, of tiled front s.
  idx_t tile(idx_t s, idx_t I, idx_t J) const { return tile_ptr[s] + I * (I + 1) / 2 + J; }
  idx_t bound(idx_t s, idx_t t) const { return bounds[bounds_ptr[s] + t]; }
};

/// Compiles the task graph of plan P and plans its contribution-block slots
/// (opts.slots). Errors: invalid_argument for non-positive tile sizes or
/// worker counts or a negative budget; out_of_memory when a slot budget
/// cannot be met even in submission order (the message gives the minimum).
Status build_task_graph(const FrontPlan& P, const GraphOptions& opts, TaskGraph& out);

/// Summary figures of a graph.
struct GraphStats {
  idx_t tasks = 0;
  idx_t by_kind[kTaskKinds] = {};
  double total_flops = 0.0;
  double critical_path_flops = 0.0;   ///< heaviest dependency path, flops
  double critical_path_seconds = 0.0; ///< same path, estimated seconds (estimate_seconds)
  double total_seconds = 0.0;         ///< all tasks, estimated seconds on one core
  idx_t fronts = 0, fronts_in_subtrees = 0, tiled_fronts = 0;
};

/// Estimated seconds of a task on one CPU core: 5 µs of overhead plus flops
/// at a per-kind rate (2 GFLOP/s for subtree/front/assembly work, 8 for
/// BLAS-3 tile kernels; conservative single-core OpenBLAS rates measured here).
double estimate_seconds(const Task& t);

/// Dependencies of the graph implied by its accesses in submission order:
/// read-after-write, write-after-read, write-after-write; RW|COMMUTE accesses
/// to one block are not ordered among themselves but after the previous
/// writer and before the next non-commuting access; plus G.added_deps. preds[t] lists the
/// predecessors of task t (sorted, unique).
std::vector<std::vector<idx_t>> task_dependencies(const TaskGraph& G);

GraphStats graph_stats(const TaskGraph& G);

/// Graphviz DOT of the graph (one node per task, labelled with its readable
/// name; one edge per dependency).
void write_dot(const TaskGraph& G, std::ostream& os);
/// JSON of the graph: {"tasks":[{"id","kind","name","front","first_front","child","i","j","k",
/// "flops","priority","accesses":[[block,"R"],...]}...],"blocks":[{"id","kind","front","row0",
/// "col0","rows","cols","ld","offset","lower"}...],"stats":{...}}.
nlohmann::json graph_json_value(const TaskGraph& G);
/// graph_json_value(G) as compact text.
std::string graph_json(const TaskGraph& G);
/// Readable task name: "subtree s12 (412 fronts)", "front f88 (40x12)",
/// "potrf f1234 (2,2)", "extend_add f88->f90 (col 1)", ...
std::string task_name(const TaskGraph& G, const Task& t);

}  // namespace starfront
