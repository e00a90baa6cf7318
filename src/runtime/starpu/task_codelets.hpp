// The StarPU codelets of the task graph: one per task kind (so that each kind
// has its own name and performance model in traces and schedulers), all
// running run_task_cpu on the CPU. A variable number of buffers: the task's
// accesses in order.
#pragma once

#include <starpu.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>

#include "cpu/task_kernels.hpp"

namespace starfront {

/// Progress of one factorisation's tasks, for the executor's watchdog.
struct TaskProgress {
  enum : std::uint8_t { waiting = 0, running = 1, done = 2 };
  explicit TaskProgress(idx_t ntasks) : state(new std::atomic<std::uint8_t>[ntasks]) {
    for (idx_t t = 0; t < ntasks; ++t) state[t] = waiting;
  }
  std::mutex mutex;
  std::condition_variable cv;  ///< notified at every completion
  idx_t done_count = 0;        ///< completed tasks (guarded by mutex)
  std::unique_ptr<std::atomic<std::uint8_t>[]> state;  ///< per task
  idx_t stall_task = -1;       ///< FactorOptions::debug_stall_task
};

/// Argument of every graph task (passed by pointer, owned by the executor).
struct GraphTaskArgs {
  const TaskGraph* graph;
  idx_t task;
  FactorContext* ctx;
  TaskProgress* progress;
};

/// Completion callback of every graph task (argument: its GraphTaskArgs):
/// marks it done in its TaskProgress and wakes the waiting executor.
void graph_task_done(void* args);

/// The codelet of task kind k.
struct starpu_codelet* task_codelet(TaskKind k);

/// Makes every codelet safe for tasks of up to `nbuffers` buffers (see the
/// definition: works around StarPU reading a fixed 8-entry array). Call
/// before submitting such tasks. Thread-safe.
void reserve_codelet_buffers(idx_t nbuffers);

}  // namespace starfront
