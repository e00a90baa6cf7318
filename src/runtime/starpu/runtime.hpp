// Starting and stopping StarPU for starfront: worker counts, scheduler, and
// the environment defaults that keep the library quiet.
#pragma once

#include <memory>
#include <string>
#include <utility>

#include "sparse/types.hpp"

namespace starfront {

/// How StarPU is started.
struct RuntimeOptions {
  /// The options in order; `RuntimeOptions{ncpu, ncuda, sched}` leaves the
  /// later ones at their defaults (a constructor rather than an aggregate,
  /// so that short brace lists stay warning-free as options are added).
  explicit RuntimeOptions(int ncpu_ = -1, int ncuda_ = 0, std::string sched_ = "auto",
                          std::string trace_dir_ = {})
      : ncpu(ncpu_), ncuda(ncuda_), sched(std::move(sched_)), trace_dir(std::move(trace_dir_)) {}
  /// CPU workers; -1: StarPU's default, all cores (of the process's CPU
  /// binding) not driving a GPU, less one left to the application's threads
  /// when there are CUDA workers and at least two CPU workers remain, unless
  /// STARPU_NCPU, STARPU_RESERVE_NCPU or STARPU_MAIN_THREAD_BIND is set or
  /// MPI is used (StarpuRuntime::start).
  int ncpu = -1;
  int ncuda = 0;             ///< GPUs (each with streams_per_gpu CUDA workers); 0: none
  /// StarPU scheduling policy name (lws, eager, prio, dmda, dmdas, random,
  /// ...), or "auto" (default): resolve_scheduler picks one from the GPU
  /// count. Under a policy without cost models (scheduler_uses_models false)
  /// with CUDA workers, tile and Cholesky front tasks run on CUDA workers
  /// only, LDLᵀ front tasks on CPU workers (see StarpuRuntime::start).
  std::string sched = "auto";
  /// Non-empty: record an FxT trace of everything StarPU runs until shutdown
  /// into this folder (created if needed): the raw file DIR/prof_file_0 is
  /// written when the runtime is destroyed; StarPU's starpu_fxt_tool
  /// converts it. Needs StarPU built with FxT (else start() fails). Empty
  /// (default): StarPU records nothing, unless the environment explicitly
  /// sets STARPU_FXT_TRACE=1 (then StarPU's own STARPU_FXT_PREFIX rules apply).
  std::string trace_dir;
  /// The tasks of tiled fronts (potrf, trsm, syrk, gemm, and their assembly:
  /// assemble, extend_add) run on CUDA workers only, never on CPU workers;
  /// needs ncuda > 0 and the CUDA codelets (else runtime_error).
  bool tiles_on_cuda_only = false;
  /// The fused subtree tasks of Cholesky factorisations (one kernel launch
  /// each) and the untiled front tasks (Cholesky and LDLᵀ) run on CUDA
  /// workers only (tests of those kernels, the GPU graph of
  /// gpu_graph_options; LDLᵀ subtrees stay on CPUs whatever this says).
  /// Not for the default graph: its fused subtrees hold fronts of order up
  /// to the tile threshold, which the fused kernel handles slowly from
  /// global memory. Needs ncuda > 0 and the CUDA codelets (else runtime_error).
  bool fronts_on_cuda_only = false;
  /// Non-null: start StarPU-MPI on this communicator (a `const MPI_Comm*`,
  /// not owned; it must outlive the runtime) with starpu_mpi_init_conf; MPI
  /// must already be initialised by the caller (MPI_Init_thread with at
  /// least MPI_THREAD_SERIALIZED). The destructor then shuts StarPU-MPI
  /// down (starpu_mpi_shutdown_comm), not MPI itself. Needs a build with
  /// STARFRONT_MPI (else runtime_error). Tracing is not supported then.
  const void* mpi_comm = nullptr;
  /// CUDA workers (streams) per GPU, all driven by one thread per GPU
  /// (StarPU's STARPU_NWORKER_PER_CUDA); used when ncuda > 0. 0: starfront's
  /// default, kDefaultStreamsPerGpu. The environment's
  /// STARPU_NWORKER_PER_CUDA, when set, wins over both (it must then be an
  /// integer from 1 to 64, checked even without GPUs: StarPU reads it at
  /// every start and aborts on a bad value). Allowed: 0 to 64. Errors: invalid_argument for
  /// a count out of range, or when ncpu ≥ 0 and ncpu + ncuda × streams
  /// exceeds StarPU's STARPU_NMAXWORKERS; runtime_error when StarPU does
  /// not create the requested count (only checked when the count comes from
  /// here or the environment). With ncpu = -1 StarPU may create fewer CPU
  /// workers than cores when the CUDA workers take its worker slots. Each
  /// CUDA worker keeps its own device workspaces (cuSOLVER workspace,
  /// backup and LDLᵀ buffers, grown to the largest front it ran, never
  /// shrunk: task_kernels_cuda.cpp) and cuBLAS / cuSOLVER handles, so GPU
  /// memory outside StarPU's manager grows with the stream count.
  int streams_per_gpu = 0;
};

/// Default CUDA workers (streams) per GPU: with one, the GPU front tasks of
/// lap3d 60³ ran one after another, each bound by the latency of its own
/// kernels; with four, independent fronts overlap and the factorisation took
/// 0.047–0.066 s against 0.067–0.073 s (one H200, bench/README.md, session 33).
inline constexpr int kDefaultStreamsPerGpu = 4;

/// GPUs with CUDA workers in the running StarPU: distinct devices among its
/// CUDA workers (several workers, i.e. streams, may share one GPU). 0 when
/// StarPU is not running or has no CUDA worker.
int cuda_gpu_count();

/// Checks that `name` is one of StarPU's scheduling policies or "auto"
/// (callable before StarPU is started). Error runtime_error listing the
/// known names.
Status check_scheduler(const std::string& name);

/// The policy that "auto" stands for with `ngpus` GPUs: "lws" without GPUs
/// (work stealing among CPU workers, as before "auto" existed); "prio" with
/// one GPU (one central queue in priority order that every worker pulls
/// from: dmda assigned all of lap3d 60³'s CPU subtrees to worker queues at
/// once from flop estimates, and the last CPU worker finished 12 ms after
/// the first; with prio within 3 ms, and the factorisation took 5% less
/// time on average over 7 paired rounds on one H200, lap3d 100³ 8% over 4:
/// bench/README.md, session 36); "dmda" with
/// several GPUs (it places tasks where their data is; prio does not look at
/// data). Under MPI (`mpi`), "lws" whatever the GPU count (the policy the
/// StarPU-MPI runs were measured with). Any other name is returned
/// unchanged.
std::string resolve_scheduler(const std::string& name, int ngpus, bool mpi = false);

/// Whether StarPU policy `name` places each task on a worker by comparing
/// cost-model estimates (the dm* and HEFT families, graph_test). Under the
/// others (eager, prio, lws, ws, random, the heteroprio family, ...) a CPU
/// worker may take, be handed or steal any task it can run, so with CUDA
/// workers (and not under MPI) StarpuRuntime::start keeps tile tasks on the
/// CUDA workers whatever tiles_on_cuda_only says, and the executor puts
/// Cholesky front tasks on CUDA workers and LDLᵀ front tasks on CPU
/// workers (set_cuda_only's by_kind): a CPU worker that took a large
/// Cholesky front would hold up the factorisation, and the GPU LDLᵀ front
/// kernel is slower than the CPU's.
bool scheduler_uses_models(const std::string& name);

/// An initialised StarPU, shut down by the destructor. StarPU allows one
/// initialisation per process at a time: a second start while one is alive
/// fails with runtime_error. Not copyable.
class StarpuRuntime {
 public:
  /// Starts StarPU with RuntimeOptions::sched resolved (resolve_scheduler
  /// with ncuda GPUs, or the environment's STARPU_NCUDA when set;
  /// scheduler() gives the policy StarPU runs). With CUDA workers and a
  /// policy without cost models (scheduler_uses_models), not under MPI, tile
  /// tasks run on CUDA workers only and front tasks are placed by kind
  /// (set_cuda_only); fused subtrees stay free. Errors
  /// (runtime_error): unknown scheduler (the message
  /// lists the known ones), negative counts, StarPU already started by
  /// starfront, starpu_init failure (e.g. GPUs requested but none usable).
  /// Sets STARPU_SILENT=1 and STARPU_FXT_TRACE=0 unless the caller's
  /// environment already sets them; never installs signal handlers. With a
  /// trace_dir, sets STARPU_FXT_TRACE=1, STARPU_FXT_PREFIX and
  /// STARPU_FXT_SUFFIX for starpu_init only and restores them afterwards.
  /// Lifts StarPU's cap on main memory (90% of the memory hwloc saw at
  /// starpu_init) by setting STARPU_LIMIT_CPU_NUMA_MEM=0 for starpu_init
  /// only, unless the caller's environment sets STARPU_LIMIT_CPU_MEM or
  /// STARPU_LIMIT_CPU_NUMA_MEM, or STARPU_LIMIT_CPU_NUMA_<n>_MEM with
  /// STARPU_USE_NUMA on: starfront plans its memory itself, and a cap below
  /// what the contribution-block slots need made StarPU wait for memory
  /// that never freed (on a VM whose node 0 counted little memory soon
  /// after boot, its first large factorisation stalled:
  /// bench/README.md, session 32). A cap the caller sets is checked by each
  /// factorisation instead (factorize_starpu).
  /// Errors for a trace: io_error when the folder cannot be created,
  /// runtime_error when this StarPU has no FxT support.
  static Status start(const RuntimeOptions& opts, std::unique_ptr<StarpuRuntime>& out);
  ~StarpuRuntime();
  StarpuRuntime(const StarpuRuntime&) = delete;
  StarpuRuntime& operator=(const StarpuRuntime&) = delete;

  int cpu_workers() const { return ncpu_; }
  /// True when started on a communicator (RuntimeOptions::mpi_comm).
  bool mpi() const { return mpi_comm_ != nullptr; }
  /// CUDA workers StarPU created: usually GPUs × streams per GPU
  /// (RuntimeOptions::streams_per_gpu or STARPU_NWORKER_PER_CUDA).
  int cuda_workers() const { return ncuda_; }
  /// GPUs that have CUDA workers (cuda_gpu_count()).
  int gpus() const { return ngpu_; }
  /// The StarPU policy in use ("auto" resolved: resolve_scheduler).
  const std::string& scheduler() const { return sched_; }

 private:
  StarpuRuntime() = default;
  int ncpu_ = 0, ncuda_ = 0, ngpu_ = 0;
  std::string sched_;
  const void* mpi_comm_ = nullptr;
};

/// While at least one WorkersActive object lives, StarPU's workers process
/// tasks; otherwise they are paused (starpu_pause), so that idle workers do not
/// poll in a tight loop and steal cores from the application (analysis,
/// solves). Reference-counted and thread-safe; the runtime starts paused.
class WorkersActive {
 public:
  WorkersActive();
  ~WorkersActive();
  WorkersActive(const WorkersActive&) = delete;
  WorkersActive& operator=(const WorkersActive&) = delete;
};

}  // namespace starfront
