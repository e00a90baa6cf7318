// Starting and stopping StarPU for starfront: worker counts, scheduler, and
// the environment defaults that keep the library quiet.
#pragma once

#include <memory>
#include <string>

#include "sparse/types.hpp"

namespace starfront {

/// How StarPU is started.
struct RuntimeOptions {
  int ncpu = -1;             ///< CPU workers; -1: StarPU's default (all cores not driving a GPU)
  int ncuda = 0;             ///< CUDA workers (GPUs); 0: none
  std::string sched = "lws"; ///< StarPU scheduling policy name (lws, eager, dmda, dmdas, random, ...)
  /// Tile tasks (potrf, trsm, syrk, gemm) run on CUDA workers only, never on
  /// CPU workers (tests of the GPU kernels, measurements); needs ncuda > 0
  /// and the CUDA codelets (else runtime_error).
  bool tiles_on_cuda_only = false;
};

/// Checks that `name` is one of StarPU's scheduling policies (callable before
/// StarPU is started). Error runtime_error listing the known names.
Status check_scheduler(const std::string& name);

/// An initialised StarPU, shut down by the destructor. StarPU allows one
/// initialisation per process at a time: a second start while one is alive
/// fails with runtime_error. Not copyable.
class StarpuRuntime {
 public:
  /// Starts StarPU. Errors (runtime_error): unknown scheduler (the message
  /// lists the known ones), negative counts, StarPU already started by
  /// starfront, starpu_init failure (e.g. GPUs requested but none usable).
  /// Sets STARPU_SILENT=1 and STARPU_FXT_TRACE=0 unless the caller's
  /// environment already sets them; never installs signal handlers.
  static Status start(const RuntimeOptions& opts, std::unique_ptr<StarpuRuntime>& out);
  ~StarpuRuntime();
  StarpuRuntime(const StarpuRuntime&) = delete;
  StarpuRuntime& operator=(const StarpuRuntime&) = delete;

  int cpu_workers() const { return ncpu_; }
  int cuda_workers() const { return ncuda_; }
  const std::string& scheduler() const { return sched_; }

 private:
  StarpuRuntime() = default;
  int ncpu_ = 0, ncuda_ = 0;
  std::string sched_;
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
