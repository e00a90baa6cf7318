// CUDA implementations of the task kinds of the task graph (POTRF,
// TRSM, SYRK, GEMM: cuSOLVER and cuBLAS on StarPU's per-worker stream and
// handles, TRSM split so that most of its flops run in DGEMM: gpu_blas.hpp;
// assemble and extend_add of tiled fronts: assembly_kernels.cu), as the
// cuda_funcs of the StarPU codelets (task_codelets.cpp).
// Built only with STARFRONT_HAVE_CUDA; part of the StarPU library target.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "cuda/pivot_slot.hpp"
#include "plan/task_graph.hpp"
#include "solve/factor.hpp"

namespace starfront {

struct FusedSubtreeIndex;  // cuda/fused_subtree_index.hpp
struct TaskProgress;       // runtime/starpu/task_codelets.hpp

/// True for the task kinds that have a CUDA implementation (potrf, trsm,
/// syrk, gemm, assemble, extend_add, subtree, and front: Cholesky and LDLᵀ).
bool has_cuda_impl(TaskKind k);

/// StarPU CUDA function of a graph task of a kind with has_cuda_impl: cl_arg
/// is a GraphTaskArgs*, buffers[a] the task's a-th access, a device pointer
/// (a subtree or Cholesky front task with GraphTaskArgs::mapped_panel has
/// no buffer for its first access, the panel: its other buffers start at
/// buffers[0]).
/// Layouts: rows, columns and the first column come from G.blocks; the
/// leading dimension is the buffer's (STARPU_MATRIX_GET_LD) for blocks in Lx
/// (StarPU packs device copies) and the Block's for contribution-block slots
/// (one capacity×1 handle, laid out as the occupant says). Queues its work on
/// starpu_cuda_get_local_stream() (STARPU_CUDA_ASYNC), except potrf, which
/// synchronises that stream to test its pivots on the host. Failures of CUDA,
/// cuBLAS or cuSOLVER go to FactorContext::record_device_error.
/// assemble and extend_add need GraphTaskArgs::gpu (the graph's GPU assembly
/// index) and two extra vector buffers after the task's accesses: assemble
/// A's values (nnz_a doubles) and the index entries; extend_add the index
/// columns and row map (gpu_assembly_cache.hpp); they queue their kernels
/// (assembly_kernels.hpp) on the worker's stream without synchronising.
/// subtree needs GraphTaskArgs::fused and two extra buffers: A's values and
/// the fused index blob (with mapped_panel, it writes L into that host
/// memory; with GraphTaskArgs::direct it has no buffer and copies A's
/// values and the blob to its worker's own device buffers); it runs the whole subtree in one kernel launch
/// (fused_subtree_kernel.hpp) and synchronises the stream to record its
/// pivot outcome (the same column and pivot as the CPU on failure).
/// front needs five extra vector buffers after the task's accesses: A's
/// values (double), the plan's a_src, a_dst, rel and diag_src (idx_t;
/// uploaded once per analysis: gpu_assembly_cache.hpp); it assembles the
/// front and extend-adds its children's CBs on the GPU
/// (front_ldlt_kernels.hpp), then
///  - Cholesky: cuSOLVER DPOTRF on the fully-summed block, then the CPU's
///    pivot test: with GraphTaskArgs::pivot_slots, on the device
///    (pivot_check.hpp) into the task's slot, without synchronising; without,
///    one stream synchronisation for the info flag and the diagonal, tested
///    on the host (a failing block is recomputed on the host so that the
///    error names the CPU's column and pivot); then TRSM (gpu_blas.hpp)
///    and the CB update (gpu_syrk.hpp) queued. With a mapped panel the front lives in a
///    stream-ordered pool of device memory and the task copies L's lower
///    trapezoid home on a copy stream of its worker (waited for by
///    cuda_wait_front_panel_copies); k ≥ 2048 columns that would take
///    cuSOLVER's DPOTRF in one call are factorised by blocks of columns,
///    each sent home once final;
///  - LDLᵀ: factorises its panel with the CPU's pivot decisions,
///    synchronises the stream once to bring pivots, D and counts to the host
///    (ctx.ldlt), then queues the CB update.
void graph_task_cuda(void* buffers[], void* cl_arg);

/// resolve_task_gpu_times (task_codelets.hpp) with CUDA: progress.records
/// holds n Records; each CUDA task's two events become gpu_begin / gpu_end
/// (per device, relative to the event of the task with the earliest
/// host_begin there, placed at that host_begin) and are destroyed.
void cuda_resolve_task_events(TaskProgress& progress, std::size_t n);

/// alloc_gpu_pivot_slots / free_gpu_pivot_slots (task_codelets.hpp) with CUDA.
GpuPivotSlot* alloc_mapped_pivot_slots(std::size_t n);
void free_mapped_pivot_slots(GpuPivotSlot* slots);

/// wait_front_panel_copies (task_codelets.hpp) with CUDA: synchronises the
/// copy stream of every CUDA worker that ran a Cholesky front task with a
/// mapped panel.
std::string cuda_wait_front_panel_copies();
/// front_panels_mappable (task_codelets.hpp) with CUDA (asked once).
bool cuda_memory_pools_supported();

/// gpus_address_pinned_host (task_codelets.hpp) with CUDA.
bool cuda_host_pointer_usable(const void* p);

/// A's values copied to the GPUs ahead of a subtree task without buffers
/// (GraphTaskArgs::direct; defined in task_kernels_cuda.cpp): per device, a
/// buffer, a stream of its own and an event recorded after the copy, which
/// the task's stream waits for.
struct DirectValuesCopy;

/// issue_direct_values (task_codelets.hpp) with CUDA: copies n doubles at
/// `values` (host; page-locked for an asynchronous copy) to every device in
/// `devices` (0-based CUDA ordinals), each on its own stream, into the
/// buffers kept in *keep (made or grown here; *keep is replaced when it
/// holds something else). Returns the copy, or null when a CUDA call failed
/// (the error is cleared; the tasks then copy the values themselves).
const DirectValuesCopy* issue_direct_values_copy(std::unique_ptr<NumericFactor::DeviceState>& keep,
                                                 const std::vector<int>& devices, const double* values,
                                                 std::size_t n);
/// wait_direct_values (task_codelets.hpp) with CUDA: synchronises every
/// device's copy event (errors are cleared: the tasks report their own).
void wait_direct_values_copy(const DirectValuesCopy& copy);

/// run_subtree_inline (task_codelets.hpp) with CUDA, on CUDA device
/// `device` (0-based ordinal).
void run_subtree_inline_cuda(const TaskGraph& G, idx_t ti, const FusedSubtreeIndex& X, FactorContext& ctx,
                             double* mapped_panel, int device, const std::function<void()>& between);
/// Subtree tasks run by run_subtree_inline_cuda since the process started.
long long cuda_inline_subtrees();
/// ‖A‖∞ results of DeviceNormRequest (FactorContext::device_norm) delivered
/// by run_subtree_inline_cuda since the process started.
long long cuda_device_norms();

/// Tasks of kind k run on CUDA devices (by CUDA workers or
/// run_subtree_inline_cuda) since the process started.
long long cuda_kernel_executions(TaskKind k);
/// GPU potrf tasks whose tile failed the pivot test (recomputed on the host).
long long cuda_potrf_failures();
/// GPU Cholesky front tasks whose fully-summed block failed the pivot test
/// (recomputed on the host for the error report).
long long cuda_front_failures();
/// Fused subtree kernel launches since the process started.
long long cuda_fused_launches();
/// Subtree tasks without buffers that used the executor's copy of A's
/// values (GraphTaskArgs::values_ahead) since the process started.
long long cuda_values_ahead_used();
/// Seconds spent by fused subtree tasks from their launch to the end of
/// their stream synchronisation (kernel, status copy and launch latency;
/// for GraphTaskArgs::direct tasks also the host time of direct_inputs,
/// and the device's wait for A's values comes before the kernel on the
/// stream; for run_subtree_inline_cuda also the caller's work it runs
/// between the launch and the wait), summed since the process started.
double cuda_fused_seconds();
/// GPU time (CUDA events) of the fused kernels' first launches (part 0: the
/// small fronts) and second launches (part 1: the large fronts), summed.
double cuda_fused_part_seconds(int part);

}  // namespace starfront
