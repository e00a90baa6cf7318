// The GPU assembly index of a task graph (codelets/cuda/assembly_index.hpp)
// as read-only StarPU vector handles, built once per analysis and kept
// across factorisations.
//
// Choice ("upload once"): the index arrays are registered with home node
// main RAM and every GPU-capable assemble / extend_add task reads them (R),
// appended after the graph's accesses at submission. StarPU copies a handle
// to a GPU the first time a task there reads it and keeps that copy valid as
// long as nobody writes the handle, i.e. across tasks and factorisations:
// the index crosses the bus once per analysis and device (again only if
// StarPU evicts it under memory pressure). A's values are registered anew by
// each factorisation (they change).
//
// The fused-subtree index (codelets/cuda/fused_subtree_index.hpp, issue 6)
// travels the same way: one read-only vector (its packed blob) that every
// GPU subtree task reads; so do the plan's assembly maps of untiled fronts
// (a_src, a_dst, rel) that GPU `front` tasks read.
//
// Cache: process-wide, keyed by the TaskGraph's address and build_id (unique
// per build_task_graph call), and checked against
// gpu_assembly_fingerprint(G) at every factorisation (a linear pass over the
// index's inputs, no allocation), so that a graph analysed again at the same
// address (Solver::analyse reuses its member) never sees a stale index. At
// most a few graphs are kept; the oldest is released first.
#pragma once

#include <starpu.h>

#include <memory>

#include "cuda/assembly_index.hpp"
#include "cuda/fused_subtree_index.hpp"

namespace starfront {

/// The index of one graph and its StarPU handles (registered on main RAM,
/// accessed R only). Handles are unregistered by the destructor (waits for
/// tasks still reading them). Owned through shared_ptr by the cache and by
/// each factorisation using it.
struct GpuAssemblyData {
  GpuAssemblyIndex index;
  starpu_data_handle_t entries = nullptr;  ///< vector of GpuAssembleEntry (null when index.empty)
  starpu_data_handle_t columns = nullptr;  ///< vector of GpuExtendColumn
  starpu_data_handle_t rowmap = nullptr;   ///< vector of GpuRowTarget
  std::uint64_t build_id = 0;              ///< TaskGraph::build_id of the graph
  FusedSubtreeIndex fused;                 ///< fused-subtree index
  starpu_data_handle_t fused_blob = nullptr;  ///< vector of 16-byte words (null when fused.empty)
  /// Untiled front tasks (Cholesky and LDLᵀ `front`, issues 5 and 7): copies
  /// of the plan's a_src, a_dst (A's entries of each front: source index in
  /// A's values, target position in the m×k panel, 0-based) and rel (each
  /// child's CB rows in its parent, 0-based; one unused element when empty),
  /// registered as read-only vectors of idx_t. Empty and null when the graph
  /// has no front task.
  std::vector<idx_t> front_a_src, front_a_dst, front_rel;
  /// The plan's diag_src (per pivot column in final numbering: index of
  /// a_jj in A's values, -1 when absent): the deferred pivot test of GPU
  /// Cholesky fronts (codelets/cuda/pivot_check.hpp) reads it.
  std::vector<idx_t> front_diag_src;
  starpu_data_handle_t a_src = nullptr, a_dst = nullptr, rel = nullptr, diag_src = nullptr;
  /// True when front tasks may run on CUDA workers (the four handles exist).
  bool has_front_index() const { return a_src != nullptr; }
  GpuAssemblyData() = default;
  ~GpuAssemblyData();
  GpuAssemblyData(const GpuAssemblyData&) = delete;
  GpuAssemblyData& operator=(const GpuAssemblyData&) = delete;
};

/// The index data of graph G: the cached one when its build id and
/// fingerprint match, else built and registered now. Null when G has no
/// assemble, extend_add, subtree or front task or the indices cannot be
/// built (the tasks then must not run on GPUs: the caller keeps them on
/// CPUs). Needs a started StarPU. Thread-safe.
std::shared_ptr<const GpuAssemblyData> gpu_assembly_data(const TaskGraph& G);

/// Forgets every cached index (handles unregistered once no factorisation
/// holds them). Called by StarpuRuntime's destructor before starpu_shutdown.
void release_gpu_assembly_cache();

/// Testing aid: when on, the StarPU executor attaches the index buffers (and
/// A's values) to assemble / extend_add tasks even without CUDA workers, so
/// that machines without a GPU exercise the cache, the registrations and the
/// CPU kernels' indifference to the extra buffers. Default off.
void set_gpu_assembly_buffers_without_cuda(bool on);
/// The current value of that testing aid.
bool gpu_assembly_buffers_without_cuda();

/// Number of times an index was built (and uploaded) since the process
/// started: tests check that a refactorisation reuses it.
long long gpu_assembly_index_builds();

}  // namespace starfront
