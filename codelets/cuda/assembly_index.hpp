// Index data of the GPU `assemble` and `extend_add` kernels of tiled fronts
// (issue 5): compact per-task arrays derived from the task graph and the
// front plan ONCE PER ANALYSIS, uploaded to the GPUs once (as read-only
// StarPU vectors: src/runtime/starpu/gpu_assembly_cache.hpp) and reused by
// every factorisation with the same graph; only A's values are read anew.
//
// Plain C++ (no CUDA, no StarPU): part of starfront_core in every build, so
// that the index and a host emulation of the GPU kernels (the same windows,
// the same index arrays) are tested on machines without a GPU.
//
// Semantics reproduced (codelets/cpu/task_kernels.cpp):
//  - assemble(s, J): zero tiles (I, J), I >= J (their rows × cols), then
//    tile(I, J)[(pos - row0(I)) + (col - c0) · ld] += values[a_src[q]] for
//    every entry q of front s whose column col (= a_dst[q] / m) lies in
//    [c0, c1) = block column J, pos = a_dst[q] % m;
//  - extend_add(c → s, J): for every child CB block b (whole `cb` or CB
//    tile) and column jj of b with parent column pj = rel[q0 + jj] in
//    [c0, c1), rows ii from (b.lower ? jj : 0) to b.rows: parent tile (I, J)
//    holding row pi = rel[r0 + ii] gets += b[ii + jj · ld_b].
#pragma once

#include <cstdint>
#include <vector>

#include "plan/task_graph.hpp"

namespace starfront {

/// One entry of A scattered by a GPU assemble task (device layout, 24 bytes).
struct GpuAssembleEntry {
  std::int64_t src;   ///< index into A's values (0-based, the caller's lower CSC order)
  std::int32_t tile;  ///< target tile, relative to the task: I - J (0-based)
  std::int32_t row;   ///< row inside the tile (0-based)
  std::int32_t col;   ///< column inside the tile (0-based)
  std::int32_t pad;   ///< 0 (alignment)
};

/// One column of a child CB block added by a GPU extend_add task (32 bytes).
struct GpuExtendColumn {
  std::int64_t rowmap;  ///< GpuAssemblyIndex::rowmap index of the block's row 0
  std::int32_t src;     ///< the task's source index (position in its list of CB blocks with work)
  std::int32_t jj;      ///< column inside the source block (0-based)
  std::int32_t cj;      ///< column inside the parent's block column J (0-based)
  std::int32_t ii0;     ///< first row of the column (b.lower ? jj : 0)
  std::int32_t rows;    ///< one past the last row (b.rows)
  std::int32_t pad;     ///< 0 (alignment)
};

/// Where a CB row of a child lands in its parent's tiled front (8 bytes).
struct GpuRowTarget {
  std::int32_t tile;  ///< parent tile row index I (absolute, 0-based)
  std::int32_t row;   ///< row inside that tile: rel[r] - bound(s, I)
};

/// Host metadata of one task (assemble or extend_add; zero for other kinds).
struct GpuTaskIndex {
  idx_t begin = 0, end = 0;  ///< entries (assemble) or columns (extend_add) [begin, end)
  /// assemble: aux[aux + a] (a = 0..ntiles-J) is the first entry of relative
  /// tile a (entries are sorted by tile); aux[aux + ntiles - J] = end.
  /// extend_add: aux[aux + k] (k < nsrc) is the access index (0-based, among
  /// the task's accesses) of source k, then aux[aux + nsrc + k] (k <= nsrc)
  /// the first column of source k (columns are sorted by source).
  idx_t aux = 0;
  idx_t nsrc = 0;  ///< extend_add: CB blocks of the child with at least one column in J
};

/// The GPU assembly index of one task graph. Built by build_gpu_assembly_index;
/// immutable afterwards. Device arrays: entries, columns, rowmap (each holds
/// at least one element, so that it can be registered even when empty).
struct GpuAssemblyIndex {
  std::vector<GpuAssembleEntry> entries;
  std::vector<GpuExtendColumn> columns;
  std::vector<GpuRowTarget> rowmap;
  std::vector<GpuTaskIndex> task;  ///< per graph task
  std::vector<idx_t> aux;
  std::uint64_t fingerprint = 0;   ///< gpu_assembly_fingerprint of the graph it was built from
  bool empty = true;               ///< the graph has no assemble or extend_add task
};

/// 64-bit hash of everything the index is derived from (tasks' kinds, fronts,
/// children and columns, their accesses and blocks, tile bounds, A's assembly
/// map of tiled fronts, the relative indices of their children): equal
/// fingerprints mean the index can be reused. Linear in that data, no allocation.
std::uint64_t gpu_assembly_fingerprint(const TaskGraph& G);

/// Builds the index of graph G (G.plan must be set). Errors: invalid_argument
/// when a tile dimension, tile count or per-task count exceeds 32-bit range.
Status build_gpu_assembly_index(const TaskGraph& G, GpuAssemblyIndex& out);

/// Tiles handled by one launch of a GPU assembly kernel (kernel parameters
/// stay below 4 KiB); larger sets take several launches (windows).
constexpr int kGpuAssemblyWindow = 128;

/// Windows of an assemble task: calls fn(a0, a1, e0, e1) for relative tiles
/// [a0, a1) (at most `window` of them) and their entries [e0, e1).
template <class Fn>
void for_each_assemble_window(const TaskGraph& G, const GpuAssemblyIndex& X, idx_t task, int window, Fn&& fn) {
  const Task& t = G.tasks[task];
  const GpuTaskIndex& ti = X.task[task];
  const idx_t n = G.ntiles(t.front) - t.j;
  for (idx_t a0 = 0; a0 < n; a0 += window) {
    const idx_t a1 = a0 + window < n ? a0 + window : n;
    fn(a0, a1, X.aux[ti.aux + a0], X.aux[ti.aux + a1]);
  }
}

/// Windows of an extend_add task: calls fn(I0, I1, k0, k1, c0, c1) for parent
/// tile rows [I0, I1) (absolute, at most `window`), sources [k0, k1) (at most
/// `window`) and their columns [c0, c1). A thread of the kernel skips rows
/// whose target tile is outside [I0, I1).
template <class Fn>
void for_each_extend_add_window(const TaskGraph& G, const GpuAssemblyIndex& X, idx_t task, int window,
                                Fn&& fn) {
  const Task& t = G.tasks[task];
  const GpuTaskIndex& ti = X.task[task];
  const idx_t nt = G.ntiles(t.front);
  for (idx_t I0 = t.j; I0 < nt; I0 += window) {
    const idx_t I1 = I0 + window < nt ? I0 + window : nt;
    for (idx_t k0 = 0; k0 < ti.nsrc; k0 += window) {
      const idx_t k1 = k0 + window < ti.nsrc ? k0 + window : ti.nsrc;
      fn(I0, I1, k0, k1, X.aux[ti.aux + ti.nsrc + k0], X.aux[ti.aux + ti.nsrc + k1]);
    }
  }
}

/// Host emulation of the GPU assemble kernel, window by window (tests):
/// ptrs[a] and ld[a] are the task's a-th access and its leading dimension
/// (tiles first, as in run_task_cpu); values: A's values.
void gpu_assemble_emulated(const TaskGraph& G, const GpuAssemblyIndex& X, idx_t task, double* const* ptrs,
                           const idx_t* ld, const double* values, int window);

/// Host emulation of the GPU extend_add kernel, window by window (tests);
/// ptrs and ld as for gpu_assemble_emulated.
void gpu_extend_add_emulated(const TaskGraph& G, const GpuAssemblyIndex& X, idx_t task, double* const* ptrs,
                             const idx_t* ld, int window);

}  // namespace starfront
