// The StarPU codelets of the task graph: one per task kind (so that each kind
// has its own name and performance model in traces and schedulers), all
// running run_task_cpu on the CPU. A variable number of buffers: the task's
// accesses in order.
#pragma once

#include <starpu.h>

#include "cpu/task_kernels.hpp"

namespace starfront {

/// Argument of every graph task (passed by pointer, owned by the executor).
struct GraphTaskArgs {
  const TaskGraph* graph;
  idx_t task;
  FactorContext* ctx;
};

/// The codelet of task kind k.
struct starpu_codelet* task_codelet(TaskKind k);

/// Makes every codelet safe for tasks of up to `nbuffers` buffers (see the
/// definition: works around StarPU reading a fixed 8-entry array). Call
/// before submitting such tasks. Thread-safe.
void reserve_codelet_buffers(idx_t nbuffers);

}  // namespace starfront
