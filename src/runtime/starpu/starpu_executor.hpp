// The StarPU executor: registers one handle per block of the task graph and
// submits its tasks in order with their access modes; the only
// synchronisation is StarPU's data dependencies (RW|COMMUTE for the
// extend-adds into a tiled parent), so a task starts as soon as its inputs
// are ready, whatever the level of its front.
#pragma once

#include <functional>

#include <memory>

#include "solve/factor.hpp"

namespace starfront {

/// Page-locks the host range [p, p + bytes) (starpu_memory_pin:
/// cudaHostRegister) when StarPU runs with CUDA workers, so that its copies
/// to the GPUs are asynchronous DMA at full bus speed; the returned object
/// unlocks it when destroyed, which must happen before the memory is freed
/// or moved. Null when nothing was locked (StarPU not started, no CUDA
/// worker, bytes == 0, or the locking failed: the range then stays pageable,
/// which is slower but correct).
std::unique_ptr<NumericFactor::PinRelease> pin_for_gpus(void* p, std::size_t bytes);

/// Subtree tasks whose panel the executor mapped (GraphTaskArgs::mapped_panel:
/// no StarPU handle, L written in place in host memory), counted when chosen,
/// before submission, since the process started; tests check that the path
/// ran.
long long mapped_panel_tasks();

/// Cholesky front tasks whose panel the executor mapped
/// (GraphTaskArgs::mapped_panel: no StarPU handle; on a CUDA worker the task
/// copies L home itself), counted when chosen, since the process started;
/// tests check that the path ran.
long long mapped_front_tasks();

/// Subtree tasks run without any buffer (GraphTaskArgs::direct: the whole
/// factorisation is that task), since the process started: those
/// submitted, counted before submission, and those run on the caller's
/// thread by run_subtree_inline, counted once run; tests check that the
/// path ran.
long long direct_subtree_tasks();

/// Testing aid: when on, the executor maps subtree panels and Cholesky
/// front panels as it would with
/// CUDA workers (GraphTaskArgs::mapped_panel) without asking for page-locked,
/// GPU-addressable memory or a front order that fits the GPU kernel, so that
/// machines without a GPU exercise the layout (no handle for the panel, the
/// task's other buffers moved up one) on CPU workers. Needs the GPU
/// buffers' testing aid too (set_gpu_assembly_buffers_without_cuda), which
/// builds the fused index. Ignored while there are CUDA workers. Default off.
void set_mapped_panels_without_cuda(bool on);

/// Factorises A (lower CSC, original numbering, the analysed pattern) by
/// running graph G on the running StarPU (see StarpuRuntime). Waits for this
/// factorisation's own data only (no global barrier).
/// Errors: invalid_argument (values do not match the plan or are not
/// finite), not_positive_definite (column and pivot in the Status),
/// runtime_error (StarPU not started, a submission failed, or the watchdog:
/// no task completed for opts.watchdog_seconds — the message names the
/// running tasks and says whether they stopped after cancellation or the
/// factorisation had to be abandoned, its memory left to them).
/// values_finite: A matches the plan and the caller has checked that every
/// value is finite (Solver::refactorize, copy_values_finite) or checks it
/// after this call and discards the outcome when one is not (its deferred
/// check: Cholesky meets such a value as a failing pivot at worst): the
/// executor's own pass over the values (check_values) is skipped.
/// With CUDA workers, Cholesky front tasks on GPUs test their pivots on the
/// device and the executor checks the outcomes after the graph; when one
/// failed, it factorises once more with synchronous per-front tests so that
/// the error names the CPU's column and pivot (STARFRONT_DEFER_PIVOTS=0:
/// always synchronous).
/// while_running: optional work for the calling thread while the graph runs
/// (called once, after the tasks are submitted and the workers started,
/// before the wait; e.g. Solver::refactorize's ‖A‖∞ for the solve's
/// backward error, overlapped with the GPU). It must not touch F or StarPU
/// data; it is not called when the factorisation fails before the graph
/// runs (the caller tells from its own state whether it ran).
/// device_norm (optional; Cholesky): when the graph runs as one fused task
/// inline on a GPU (run_subtree_inline), ‖A‖∞ is computed there after the
/// kernel (DeviceNormRequest) and while_running is then not called;
/// otherwise device_norm->launched stays false.
Status factorize_starpu(const TaskGraph& G, const CscMatrix& A, const FactorOptions& opts,
                        NumericFactor& F, FactorStats* stats = nullptr, bool values_finite = false,
                        const std::function<void()>& while_running = {},
                        DeviceNormRequest* device_norm = nullptr);

}  // namespace starfront
