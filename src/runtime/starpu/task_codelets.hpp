// The StarPU codelets of the task graph: one per task kind (so that each kind
// has its own name and performance model in traces and schedulers), all
// running run_task_cpu on the CPU; with STARFRONT_HAVE_CUDA the tile kinds
// (potrf, trsm, syrk, gemm), the assembly of tiled fronts (assemble,
// extend_add), fused subtrees and untiled fronts (front, Cholesky and LDLᵀ) also have a CUDA
// implementation (codelets/cuda, STARPU_CUDA_ASYNC). A variable number of buffers: the task's accesses in
// order, then, for assemble and extend_add when CUDA workers exist, two
// read-only vectors of the GPU assembly index (starpu_executor.cpp; the CPU
// implementation never looks past the task's accesses). Performance model: STARPU_PER_ARCH from the
// task's flops (estimate_seconds on CPUs, estimate_seconds_cuda on GPUs), so
// that dmda/dmdas can place tiles.
#pragma once

#include <starpu.h>

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include "cpu/task_kernels.hpp"
#include "cuda/pivot_slot.hpp"
#include "solve/factor.hpp"

namespace starfront {

struct GpuAssemblyIndex;   // codelets/cuda/assembly_index.hpp
struct FusedSubtreeIndex;  // codelets/cuda/fused_subtree_index.hpp
struct DirectValuesCopy;   // codelets/cuda/task_kernels_cuda.hpp

/// Progress of one factorisation's tasks, for the executor's watchdog.
struct TaskProgress {
  enum : std::uint8_t { waiting = 0, running = 1, done = 2 };
  explicit TaskProgress(idx_t ntasks) : state(new std::atomic<std::uint8_t>[ntasks]) {
    for (idx_t t = 0; t < ntasks; ++t) state[t] = waiting;
  }
  std::mutex mutex;
  std::condition_variable cv;  ///< notified at every completion
  /// Completed tasks: written under `mutex` (with the notification), read
  /// under it or, by wait_for_tasks's spin, without it (acquire).
  std::atomic<idx_t> done_count{0};
  std::unique_ptr<std::atomic<std::uint8_t>[]> state;  ///< per task
  idx_t stall_task = -1;       ///< FactorOptions::debug_stall_task
  /// Where and when one task ran (STARFRONT_TASK_LOG): the StarPU worker
  /// that completed it, and its start and end in seconds on StarPU's
  /// profiling clock (-1 without STARPU_PROFILING=1; then `done` alone is
  /// set, seconds on std::chrono::steady_clock at the completion callback).
  struct Record {
    int worker = -1;
    double start = -1.0, end = -1.0, done = -1.0;
    /// StarPU's profiling stamps (seconds, StarPU's clock like start and
    /// end; -1 without profiling): submitted, popped by its worker, and the
    /// acquisition of its data (transfers included) begun and ended.
    double submit = -1.0, pop_end = -1.0, acquire_start = -1.0, acquire_end = -1.0;
    /// CUDA tasks only (-1 otherwise): the host time spent in the codelet
    /// function, i.e. queueing the task's work on its stream, plus any
    /// synchronous wait of the task (a tiled potrf's pivot test, a fused
    /// subtree's status, a front without deferred pivots) (begin and end,
    /// seconds, StarPU's clock), and when the stream reached the task's
    /// first and last queued work (seconds, the GPU's event clock shifted so
    /// that the device's earliest task begins at its host_begin: a lower
    /// bound of the true offset). With one stream, gpu_begin minus the
    /// previous task's gpu_end is time the GPU waited for the host.
    double host_begin = -1.0, host_end = -1.0, gpu_begin = -1.0, gpu_end = -1.0;
    /// The two CUDA events behind gpu_begin / gpu_end (cudaEvent_t, created
    /// by the CUDA codelet on its worker's device; destroyed by
    /// resolve_task_gpu_times) and that device.
    void* events[2] = {nullptr, nullptr};
    int device = -1;
  };
  /// One Record per task when the executor keeps a task log; null otherwise
  /// (graph_task_done fills it).
  std::unique_ptr<Record[]> records;
};

/// Argument of every graph task (passed by pointer, owned by the executor).
struct GraphTaskArgs {
  const TaskGraph* graph;
  idx_t task;
  FactorContext* ctx;
  TaskProgress* progress;
  /// The graph's GPU assembly index (codelets/cuda/assembly_index.hpp) when
  /// assemble / extend_add tasks may run on CUDA workers; null otherwise.
  const GpuAssemblyIndex* gpu = nullptr;
  /// The graph's fused-subtree index when subtree tasks may run on CUDA
  /// workers (one kernel launch per task); null otherwise.
  const FusedSubtreeIndex* fused = nullptr;
  /// Deferred pivot tests (issue 5): when set, a Cholesky front task on a
  /// CUDA worker does not synchronise its stream; it writes the outcome of
  /// its pivot test into pivot_slots[task] (page-locked, device-mapped host
  /// memory of one slot per graph task: alloc_gpu_pivot_slots), which the
  /// executor reads after the graph. Null: the test runs on the host after
  /// one synchronisation per front (the error report path).
  GpuPivotSlot* pivot_slots = nullptr;
  /// A subtree task's panel block in Lx (the L of its fronts, its first
  /// access), when the block has no StarPU handle and the task no buffer for
  /// it: the fused kernel on a CUDA worker writes L straight into that
  /// page-locked host memory (GPU-addressable: gpus_address_pinned_host), so
  /// that L's copy home overlaps the kernel instead of following it; on a
  /// CPU worker the kernel writes it there too. The task's other buffers
  /// then start at buffers[0]. Null: the panel is buffers[0]. Only for a
  /// panel that no other task accesses and a subtree whose fronts all fit
  /// in the kernel's shared memory (its global-memory path would work in
  /// the panel across the bus).
  /// A Cholesky front task's panel (m×k, leading dimension m), likewise
  /// without handle or buffer: on a CUDA worker the task assembles and
  /// factorises the front in device memory of its own and copies L's lower
  /// trapezoid home on a second stream of its worker, which the executor
  /// waits for after the graph (wait_front_panel_copies); on a CPU worker it
  /// writes there directly. Only for a panel in page-locked Lx that no
  /// other task accesses.
  double* mapped_panel = nullptr;
  /// A subtree task without any StarPU buffer: its panel is mapped (above),
  /// it has no other graph access (the whole tree is this task: no root CB),
  /// and, unlike other GPU subtree tasks, it gets neither A's values nor the
  /// fused index blob as buffers. On a CUDA worker it copies A's values
  /// (FactorContext::values, nnz_a doubles) and, once per graph and worker,
  /// the blob to its own device buffers on the worker's stream. Why: StarPU
  /// took about 0.13 ms from the pop of such a task to its start (the
  /// acquisition of its two read-only buffers, measured on the H200), a
  /// seventh of a refactorisation of activsg2000_hykkt_10. On a CPU worker
  /// nothing changes (the CPU kernel reads the values from the context).
  bool direct = false;
  /// A direct task's values already on the GPUs: the executor's copy,
  /// issued before the submission (issue_direct_values), which the task's
  /// stream waits for on a device it holds; elsewhere, or when null, the
  /// task copies them itself.
  const DirectValuesCopy* values_ahead = nullptr;
};

/// Waits until `total` tasks of p completed (true), or until no task
/// completed for `watchdog` seconds (false; capped at 1e9 s, beyond which
/// the clock's 64-bit nanosecond count would overflow); watchdog 0: no limit.
/// Used by the shared-memory and StarPU-MPI executors.
bool wait_for_tasks(TaskProgress& p, idx_t total, double watchdog);

/// Completion callback of every graph task (argument: its GraphTaskArgs):
/// marks it done in its TaskProgress and wakes the waiting executor.
void graph_task_done(void* args);

/// The codelet of task kind k.
struct starpu_codelet* task_codelet(TaskKind k);

/// Estimated seconds of a task on one CUDA worker (H200-class GPU): potrf
/// 50 µs (launch plus the stream synchronisation of its pivot test) plus
/// flops at 2 TFLOP/s; trsm/syrk/gemm 10 µs plus flops at 10 TFLOP/s (fp64
/// cuBLAS on tiles of 256 to 1024; DESIGN.md's measured dense figures);
/// assemble/extend_add 15 µs (one or a few kernel launches) plus their
/// flops (entries zeroed or added) at 2e10 per second (scattered 8-byte
/// accesses, far below the HBM bandwidth); subtree (fused kernel) 30 µs
/// (launch, status copy and stream synchronisation) plus flops at 1e10 per
/// second (measured on the H200, bench/README.md "Fused GPU subtree
/// kernels": 6 GFLOP/s on activsg2000's subtree, 17 on lap2d 300²'s).
/// graph_task_cost also keeps a subtree whose largest front exceeds
/// kGpuSubtreeMaxFront off the GPUs. Kinds without a CUDA implementation:
/// 1000 s (never placed there).
double estimate_seconds_cuda(const Task& t);

/// Largest front order of a fused subtree that the cost model lets go to a
/// GPU: the fused kernel keeps fronts up to this order in shared memory
/// (kGpuFusedFront, plan/task_graph.hpp); larger ones take its slow global-memory path.
constexpr idx_t kGpuSubtreeMaxFront = kGpuFusedFront;

/// Estimated seconds of the LDLᵀ front task of front s (order m, k
/// fully-summed columns) on one CUDA worker: 300 µs per task, plus the
/// panel's m·k² flops at 1.5e9 per second, plus the CB update's (m−k)²·k at
/// 5e12 (cuBLAS DSYRKX). Calibrated from the H200 run of `ldlt_bench --gpu`
/// (bench/README.md, "GPU LDLᵀ"): with every front on the GPU, 150 to 850 µs
/// per front on the KKT matrices whatever their size, and the one-block
/// panel kernel at about 2 to 4 GFLOP/s on the large fronts of indef3d:30,
/// slower than a CPU core running the same kernel; the panel rate is set
/// below the CPU model's 2e9 (estimate_seconds) so that dmda keeps
/// panel-heavy fronts on CPUs and sends fronts with a large CB (m ≫ k) to the
/// GPU. (Not re-measured after this calibration.)
double estimate_seconds_cuda_ldlt_front(const FrontPlan& P, idx_t s);

/// Seconds of cuSOLVER DPOTRF of order n on one H200: DESIGN.md's measured
/// points (n = 256: 0.11 ms, 1024: 0.42 ms, 4096: 1.8 ms, 8192: 7.1 ms,
/// 32768: 266 ms) interpolated log-log, 40 µs at n = 1 (launch and
/// synchronisation latency), cubic beyond 32768.
double cusolver_potrf_seconds(idx_t n);

/// Estimated seconds of the Cholesky front task of front s (order m, k
/// fully-summed columns, mc = m − k) on one CUDA worker: assembly 15 µs plus
/// m·k + mc² entries at 5e10 per second, cusolver_potrf_seconds(k) (which
/// includes the stream synchronisation of the pivot test), and, when mc > 0,
/// TRSM + SYRK 20 µs plus their mc·k² + mc²·k flops at 10 TFLOP/s.
double estimate_seconds_cuda_front(const FrontPlan& P, idx_t s);

/// n zeroed GpuPivotSlot in page-locked host memory mapped into every
/// device's address space (cudaHostAlloc, portable and mapped; unified
/// addressing: the same pointer on host and devices), or null when that is
/// not possible (no CUDA build, no device, no unified addressing, or out of
/// memory): the caller then uses synchronous pivot tests. Free with
/// free_gpu_pivot_slots once no task can write them.
GpuPivotSlot* alloc_gpu_pivot_slots(std::size_t n);
/// Task log only: turns the CUDA events of progress.records[0..n) (Record::events) into
/// Record::gpu_begin / gpu_end and destroys them. Every task must have
/// completed. Without CUDA, does nothing.
void resolve_task_gpu_times(TaskProgress& progress, std::size_t n);
/// Frees what alloc_gpu_pivot_slots returned (null: nothing).
void free_gpu_pivot_slots(GpuPivotSlot* slots);

/// True when every CUDA device can read and write the page-locked host
/// range starting at p through the host pointer itself (unified addressing,
/// cudaDevAttrCanUseHostPointerForRegisteredMem on every device, and p
/// registered: cudaHostGetDevicePointer gives p back). False without CUDA,
/// devices, or when p is not page-locked.
bool gpus_address_pinned_host(const void* p);

/// True when the CUDA implementations were built (STARFRONT_HAVE_CUDA).
bool cuda_codelets_built();

/// Waits until every copy of L home queued by a Cholesky front task with a
/// mapped panel (GraphTaskArgs::mapped_panel) on a CUDA worker has ended.
/// Call after the tasks have completed. Returns "" or the first CUDA error
/// met (the error names the call); without CUDA, "".
std::string wait_front_panel_copies();
/// True when every CUDA device supports stream-ordered memory pools (the
/// device memory of mapped front panels); false without CUDA.
bool front_panels_mappable();

/// Copies A's values (n doubles, host memory, page-locked for the copy to
/// be asynchronous) to the device of every CUDA worker, each on a stream of
/// its own, into buffers kept in *keep across refactorisations (made or
/// grown here), for a subtree task without buffers
/// (GraphTaskArgs::values_ahead). The copies overlap the submission and
/// the workers' wake-up instead of preceding the kernel. Returns null
/// without CUDA, without CUDA workers, or when a CUDA call failed (then
/// the task copies the values itself).
const DirectValuesCopy* issue_direct_values(std::unique_ptr<NumericFactor::DeviceState>& keep,
                                            const double* values, std::size_t n);
/// Waits until every copy issued by issue_direct_values has ended (so that
/// none reads the host values any more); null: nothing.
void wait_direct_values(const DirectValuesCopy* copy);

/// Runs subtree task ti of G on the calling thread, without StarPU: a task
/// that could be submitted as GraphTaskArgs::direct (L written at
/// mapped_panel, page-locked host memory every GPU addresses; no other
/// access; A's values at ctx.values) and is the whole factorisation. The
/// fused kernel runs on the CUDA device of the first CUDA worker, on a
/// stream and workspace of the calling thread (made at its first call per
/// device, kept until the thread ends, so refactorisations allocate
/// nothing); A's values are copied on that stream (unless the measurement
/// knob STARFRONT_FUSED_MAPPED_VALUES=1 lets the kernel read them across
/// the bus). `between` runs once the kernel is queued, while it runs; the
/// call returns after the kernel has ended, also after an error or an
/// exception from `between` (nothing reads ctx.values or writes L
/// afterwards). The calling thread's current CUDA device (cudaGetDevice:
/// 0 on a thread that never chose one) is set back when it differs.
/// Outcomes and errors go to ctx as the task's would. Returns false,
/// having run nothing, without CUDA or CUDA workers.
bool run_subtree_inline(const TaskGraph& G, idx_t ti, const FusedSubtreeIndex& X, FactorContext& ctx,
                        double* mapped_panel, const std::function<void()>& between);
/// Subtree tasks run by run_subtree_inline since the process started (0
/// without CUDA).
long long inline_subtree_tasks();
/// ‖A‖∞ results computed on a GPU for a DeviceNormRequest since the process
/// started (0 without CUDA).
long long device_norm_results();

/// Largest front order that the fused GPU subtree kernel holds in shared
/// memory on every CUDA device (fused_subtree_kernel.hpp:
/// fused_shared_max_order; 239 on an H200); 0 without CUDA or devices.
int fused_subtree_shared_max_order();
/// Tasks of kind k run on CUDA devices (by CUDA workers, or on the caller's
/// thread: run_subtree_inline) since the process started (0 without CUDA).
long long cuda_task_executions(TaskKind k);
/// Fused subtree kernel launches since the process started (0 without CUDA).
long long cuda_fused_kernel_launches();
/// Subtree tasks without buffers whose kernel read the executor's copy of
/// A's values (GraphTaskArgs::values_ahead) since the process started (0
/// without CUDA).
long long cuda_fused_values_ahead_used();
/// Seconds of fused subtree tasks on CUDA workers, launch to synchronisation,
/// summed since the process started (0 without CUDA).
double cuda_fused_kernel_seconds();
/// GPU time (CUDA events) of the fused kernels' launches over the small
/// fronts (part 0) and over the large fronts near the roots (part 1), summed
/// since the process started (0 without CUDA).
double cuda_fused_kernel_part_seconds(int part);
/// GPU potrf tiles that failed the pivot test and were recomputed on the
/// host for the error report (0 without CUDA).
long long cuda_potrf_fallbacks();
/// GPU Cholesky front tasks whose fully-summed block failed the pivot test
/// and was recomputed on the host for the error report (0 without CUDA).
long long cuda_front_fallbacks();

/// Where the kinds with a CUDA implementation may run: CUDA workers only
/// (true), or CPU and CUDA workers (false, the default); `tiles` for the
/// tasks of tiled fronts (potrf, trsm, syrk, gemm, assemble, extend_add),
/// `fronts` for subtree and front tasks (fused Cholesky subtrees, Cholesky
/// and LDLᵀ fronts; the executor keeps LDLᵀ subtrees on CPUs).
/// `by_kind`: the policy does not place tasks by cost models
/// (scheduler_uses_models; StarpuRuntime::start sets it with CUDA workers,
/// not under MPI); the executor then puts Cholesky front tasks on CUDA
/// workers and LDLᵀ front tasks on CPU workers (front_placement_by_kind).
/// Without the CUDA codelets: no effect. Call only while no task is in
/// flight (StarpuRuntime::start does, from RuntimeOptions).
void set_cuda_only(bool tiles, bool fronts, bool by_kind = false);

/// The `by_kind` of the last set_cuda_only (false without the CUDA codelets).
bool front_placement_by_kind();

/// Makes every codelet safe for tasks of up to `nbuffers` buffers (see the
/// definition: works around StarPU reading a fixed 8-entry array). Call
/// before submitting such tasks. Thread-safe.
void reserve_codelet_buffers(idx_t nbuffers);

}  // namespace starfront
