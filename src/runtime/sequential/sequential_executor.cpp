#include "runtime/sequential/sequential_executor.hpp"

#include <chrono>
#include <limits>
#include <random>

#include "cpu/blas.hpp"
#include "cpu/task_kernels.hpp"

namespace starfront {
namespace {

/// A random topological order of the task dependencies.
std::vector<idx_t> random_order(const TaskGraph& G, std::uint64_t seed) {
  const auto preds = task_dependencies(G);
  const idx_t nt = static_cast<idx_t>(G.tasks.size());
  std::vector<std::vector<idx_t>> succ(nt);
  std::vector<idx_t> pending(nt), ready, order;
  for (idx_t t = 0; t < nt; ++t) {
    pending[t] = static_cast<idx_t>(preds[t].size());
    for (idx_t p : preds[t]) succ[p].push_back(t);
    if (pending[t] == 0) ready.push_back(t);
  }
  std::mt19937_64 rng(seed);
  while (!ready.empty()) {
    std::uniform_int_distribution<std::size_t> pick(0, ready.size() - 1);
    const std::size_t i = pick(rng);
    const idx_t t = ready[i];
    ready[i] = ready.back();
    ready.pop_back();
    order.push_back(t);
    for (idx_t s : succ[t])
      if (--pending[s] == 0) ready.push_back(s);
  }
  return order;
}

}  // namespace

Status factorize_sequential(const TaskGraph& G, const CscMatrix& A, const FactorOptions& opts,
                            NumericFactor& F, FactorStats* stats, std::uint64_t shuffle_seed) {
  const FrontPlan& P = *G.plan;
  FactorPhases ph;
  PhaseTimer timer;
  Status st = check_values(P, A);
  timer.lap(ph.check);
  if (!st.ok()) return st;
  const auto t0 = std::chrono::steady_clock::now();
  openblas_set_num_threads(1);
  F = NumericFactor{};  // a page-locked Lx of an earlier StarPU run is unlocked before it is freed
  F.plan = &P;
  F.Lx.assign(P.factor_size(), 0.0);
  FactorContext ctx;
  prepare_factor_context(P, A, opts, F, ctx);

  // One buffer per contribution-block slot (plan/cb_slots.hpp), allocated
  // at its first use and freed after the last access of its last occupant.
  const idx_t nslots = static_cast<idx_t>(G.slot_capacity.size());
  std::vector<idx_t> remaining(nslots, 0);  // accesses left per slot
  std::vector<idx_t> first(G.blocks.size(), -1);  // producer of each CB block
  for (idx_t t = 0; t < static_cast<idx_t>(G.tasks.size()); ++t)
    for (idx_t a = G.tasks[t].acc_begin; a < G.tasks[t].acc_end; ++a) {
      const idx_t b = G.accesses[a].block;
      if (G.blocks[b].offset >= 0) continue;
      ++remaining[G.slot_of[b]];
      if (first[b] < 0) first[b] = t;
    }
  std::vector<std::vector<double>> slot(nslots);
  std::vector<double*> ptrs;
  std::vector<idx_t> order;
  if (shuffle_seed) order = random_order(G, shuffle_seed);
  const idx_t nt = static_cast<idx_t>(G.tasks.size());
  timer.lap(ph.setup);
  for (idx_t n = 0; n < nt; ++n) {
    const idx_t t = shuffle_seed ? order[n] : n;
    const Task& task = G.tasks[t];
    ptrs.clear();
    for (idx_t a = task.acc_begin; a < task.acc_end; ++a) {
      const idx_t id = G.accesses[a].block;
      const Block& b = G.blocks[id];
      if (b.offset >= 0) {
        ptrs.push_back(F.Lx.data() + b.offset);
        continue;
      }
      std::vector<double>& buf = slot[G.slot_of[id]];
      if (buf.empty()) buf.resize(G.slot_capacity[G.slot_of[id]]);
      // Poisoned when a block takes the slot: a kernel that reads what no
      // task wrote, or a block overwritten by a later occupant, gives NaN.
      if (first[id] == t) std::fill(buf.begin(), buf.end(), std::numeric_limits<double>::quiet_NaN());
      ptrs.push_back(buf.data());
    }
    run_task_cpu(G, t, ptrs.data(), ctx);
    for (idx_t a = task.acc_begin; a < task.acc_end; ++a) {
      const idx_t id = G.accesses[a].block;
      if (G.blocks[id].offset < 0 && --remaining[G.slot_of[id]] == 0)
        std::vector<double>().swap(slot[G.slot_of[id]]);
    }
  }
  timer.lap(ph.execute);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  st = context_status(P, ctx, F);
  timer.lap(ph.finish);
  if (stats) {
    stats->tasks = nt;
    stats->flops = 0;
    for (double f : P.front_flops) stats->flops += f;
    stats->seconds = seconds;
    stats->task_seconds = ctx.task_seconds;
    stats->total_seconds = 0.0;
    stats->phases = ph;
  }
  return st;
}

}  // namespace starfront
