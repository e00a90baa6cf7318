#include "runtime/starpu/starpu_executor.hpp"

#include <starpu.h>

#include <algorithm>
#include <chrono>
#include <string>

#include "runtime/starpu/runtime.hpp"
#include "runtime/starpu/task_codelets.hpp"

namespace starfront {
namespace {

enum starpu_data_access_mode starpu_mode(AccessMode m) {
  switch (m) {
    case AccessMode::R: return STARPU_R;
    case AccessMode::W: return STARPU_W;
    case AccessMode::RW: return STARPU_RW;
    case AccessMode::RW_COMMUTE:
      return static_cast<enum starpu_data_access_mode>(STARPU_RW | STARPU_COMMUTE);
  }
  return STARPU_RW;
}

/// One handle per block: blocks in Lx are registered on main memory (their
/// layout: rows×cols, leading dimension ld); blocks of their own with home
/// node -1, so StarPU allocates them where their first writer runs.
std::vector<starpu_data_handle_t> register_blocks(const TaskGraph& G, NumericFactor& F) {
  std::vector<starpu_data_handle_t> h(G.blocks.size(), nullptr);
  for (std::size_t i = 0; i < G.blocks.size(); ++i) {
    const Block& b = G.blocks[i];
    const auto rows = static_cast<uint32_t>(b.rows), cols = static_cast<uint32_t>(b.cols);
    if (b.offset >= 0)
      starpu_matrix_data_register(&h[i], STARPU_MAIN_RAM,
                                  reinterpret_cast<uintptr_t>(F.Lx.data() + b.offset),
                                  static_cast<uint32_t>(b.ld), rows, cols, sizeof(double));
    else
      starpu_matrix_data_register(&h[i], -1, 0, rows, rows, cols, sizeof(double));
  }
  return h;
}

}  // namespace

Status factorize_starpu(const TaskGraph& G, const CscMatrix& A, const FactorOptions& opts,
                        NumericFactor& F, FactorStats* stats) {
  if (!starpu_is_initialized())
    return Status::error(StatusCode::runtime_error, "StarPU is not started");
  const FrontPlan& P = *G.plan;
  Status st = check_values(P, A);
  if (!st.ok()) return st;
  const auto t0 = std::chrono::steady_clock::now();
  F.plan = &P;
  F.Lx.assign(P.factor_size(), 0.0);
  FactorContext ctx;
  prepare_factor_context(P, A, opts, F, ctx);

  idx_t max_buffers = 0;
  for (const Task& t : G.tasks) max_buffers = std::max(max_buffers, t.acc_end - t.acc_begin);
  reserve_codelet_buffers(max_buffers);
  std::vector<starpu_data_handle_t> h = register_blocks(G, F);
  std::vector<idx_t> remaining(G.blocks.size(), 0);  // accesses not yet submitted
  for (const Access& a : G.accesses) ++remaining[a.block];
  const idx_t nt = static_cast<idx_t>(G.tasks.size());
  std::vector<GraphTaskArgs> args(nt);
  std::vector<std::string> names(nt);
  std::vector<struct starpu_data_descr> descr;
  idx_t submitted = 0;
  for (idx_t t = 0; t < nt; ++t) {
    const Task& task = G.tasks[t];
    args[t] = GraphTaskArgs{&G, t, &ctx};
    names[t] = task_name(G, task);
    descr.clear();
    for (idx_t a = task.acc_begin; a < task.acc_end; ++a)
      descr.push_back({h[G.accesses[a].block], starpu_mode(G.accesses[a].mode)});
    const int ret = starpu_task_insert(
        task_codelet(task.kind), STARPU_DATA_MODE_ARRAY, descr.data(), static_cast<int>(descr.size()),
        STARPU_CL_ARGS_NFREE, &args[t], sizeof(GraphTaskArgs), STARPU_PRIORITY, task.priority,
        STARPU_FLOPS, task.flops, STARPU_NAME, names[t].c_str(), 0);
    if (ret != 0) {
      st = Status::error(StatusCode::runtime_error, "starpu_task_insert failed for task " +
                                                        names[t] + " (" + std::to_string(ret) + ")");
      break;
    }
    ++submitted;
    // A block of its own is released as soon as its last task is submitted
    // (StarPU frees it once that task ran).
    for (idx_t a = task.acc_begin; a < task.acc_end; ++a) {
      const idx_t b = G.accesses[a].block;
      if (--remaining[b] == 0 && G.blocks[b].offset < 0) {
        starpu_data_unregister_submit(h[b]);
        h[b] = nullptr;
      }
    }
  }
  {
    // Workers run only now: while paused they do not compete with the
    // submitting thread for the cores.
    const WorkersActive active;
    // Unregistering a block of Lx waits for its last writer and brings it
    // home: this waits for exactly this factorisation's tasks.
    for (std::size_t b = 0; b < h.size(); ++b)
      if (h[b] && G.blocks[b].offset >= 0) starpu_data_unregister(h[b]);
  }
  for (std::size_t b = 0; b < h.size(); ++b)
    if (h[b] && G.blocks[b].offset < 0) starpu_data_unregister_submit(h[b]);
  if (stats) {
    stats->tasks = submitted;
    stats->flops = 0;
    for (double f : P.front_flops) stats->flops += f;
    stats->seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    stats->task_seconds = ctx.task_seconds;
  }
  if (!st.ok()) return st;
  return context_status(P, ctx, F);
}

}  // namespace starfront
