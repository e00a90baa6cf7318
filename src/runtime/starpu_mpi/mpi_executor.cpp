#include "runtime/starpu_mpi/mpi_executor.hpp"

#include <starpu.h>
#include <starpu_mpi.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <string>

#include "runtime/starpu/runtime.hpp"
#include "runtime/starpu/task_codelets.hpp"

namespace starfront {
namespace {

/// RW|COMMUTE is submitted as RW: the extend-adds into a tile run in
/// submission order, so that the distributed factor is bitwise the
/// sequential executor's for every P (they run on the tile's owner anyway).
enum starpu_data_access_mode starpu_mode(AccessMode m) {
  switch (m) {
    case AccessMode::R: return STARPU_R;
    case AccessMode::W: return STARPU_W;
    case AccessMode::RW:
    case AccessMode::RW_COMMUTE: return STARPU_RW;
  }
  return STARPU_RW;
}

using clock_type = std::chrono::steady_clock;
double seconds_since(clock_type::time_point t0) {
  return std::chrono::duration<double>(clock_type::now() - t0).count();
}

/// Which tasks this rank submits and which handles it registers (the
/// pruning rule of the header).
struct RankShare {
  std::vector<char> submit;     // per task
  std::vector<char> registered; // per handle
  idx_t local_tasks = 0;        // tasks this rank runs
  idx_t submitted = 0;
};

RankShare rank_share(const TaskGraph& G, const RankMapping& M, int rank,
                     const std::vector<idx_t>& handle_of_access, const std::vector<int>& handle_owner) {
  RankShare s;
  const idx_t nt = static_cast<idx_t>(G.tasks.size());
  s.submit.assign(nt, 0);
  s.registered.assign(handle_owner.size(), 0);
  for (idx_t t = 0; t < nt; ++t) {
    const Task& task = G.tasks[t];
    bool mine = M.task_rank[t] == rank;
    for (idx_t a = task.acc_begin; a < task.acc_end && !mine; ++a) {
      const idx_t h = handle_of_access[a];
      mine = handle_owner[h] == rank || (G.accesses[a].mode != AccessMode::R && s.registered[h]);
    }
    if (!mine) continue;
    s.submit[t] = 1;
    ++s.submitted;
    if (M.task_rank[t] == rank) ++s.local_tasks;
    for (idx_t a = task.acc_begin; a < task.acc_end; ++a) s.registered[handle_of_access[a]] = 1;
  }
  return s;
}

/// Everything the tasks of one factorisation use (as runtime/starpu's Run).
struct Run {
  explicit Run(idx_t ntasks) : progress(ntasks), args(ntasks), names(ntasks) {}
  NumericFactor F;
  std::unique_ptr<double[]> local_lx;  // this rank's factor blocks (owned ones zeroed first)
  FactorContext ctx;
  TaskProgress progress;
  std::vector<GraphTaskArgs> args;
  std::vector<std::string> names;
};

std::vector<double> comm_sent(int nranks) {
  std::vector<size_t> amounts(static_cast<std::size_t>(nranks), 0);
  starpu_mpi_comm_stats_retrieve(amounts.data());
  return std::vector<double>(amounts.begin(), amounts.end());
}

double sum(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return s;
}

/// Agrees on the outcome recorded in the ranks' contexts: the smallest
/// failing pivot column, its pivot, the smallest pivot ratio.
void reduce_context(FactorContext& ctx, MPI_Comm comm) {
  long long col = ctx.fail_column >= 0 ? ctx.fail_column : std::numeric_limits<long long>::max();
  long long min_col = col;
  MPI_Allreduce(&col, &min_col, 1, MPI_LONG_LONG, MPI_MIN, comm);
  int rank = 0, nranks = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &nranks);
  if (min_col != std::numeric_limits<long long>::max()) {
    int holder = col == min_col ? rank : nranks, first = nranks;
    MPI_Allreduce(&holder, &first, 1, MPI_INT, MPI_MIN, comm);
    double pivot = ctx.fail_pivot;
    MPI_Bcast(&pivot, 1, MPI_DOUBLE, first, comm);
    ctx.fail_column = static_cast<idx_t>(min_col);
    ctx.fail_pivot = pivot;
    ctx.failed = true;
  }
  double ratio = ctx.min_pivot_ratio, min_ratio = ratio;
  MPI_Allreduce(&ratio, &min_ratio, 1, MPI_DOUBLE, MPI_MIN, comm);
  ctx.min_pivot_ratio = min_ratio;
}

template <class T>
std::vector<T> all_gather(T x, MPI_Datatype type, MPI_Comm comm) {
  int nranks = 1;
  MPI_Comm_size(comm, &nranks);
  std::vector<T> out(static_cast<std::size_t>(nranks));
  MPI_Allgather(&x, 1, type, out.data(), 1, type, comm);
  return out;
}

}  // namespace

Status agree_status(const Status& local, MPI_Comm comm) {
  int rank = 0, nranks = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &nranks);
  int mine = local.ok() ? nranks : rank, first = nranks;
  MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, comm);
  if (first == nranks) return Status::success();
  int code = static_cast<int>(local.code);
  long long column = local.column;
  double pivot = local.pivot;
  std::string msg = local.message;
  int len = static_cast<int>(msg.size());
  MPI_Bcast(&code, 1, MPI_INT, first, comm);
  MPI_Bcast(&column, 1, MPI_LONG_LONG, first, comm);
  MPI_Bcast(&pivot, 1, MPI_DOUBLE, first, comm);
  MPI_Bcast(&len, 1, MPI_INT, first, comm);
  msg.resize(static_cast<std::size_t>(len));
  if (len > 0) MPI_Bcast(msg.data(), len, MPI_CHAR, first, comm);
  Status st = Status::error(static_cast<StatusCode>(code),
                            nranks > 1 ? "rank " + std::to_string(first) + ": " + msg : msg);
  st.column = static_cast<idx_t>(column);
  st.pivot = pivot;
  return st;
}

Status factorize_starpu_mpi(const TaskGraph& G, const RankMapping& M, const CscMatrix& A,
                            const FactorOptions& opts, MPI_Comm comm, NumericFactor& F,
                            LocalFactor& local, FactorStats* stats, MpiRunInfo* info) {
  int rank = 0, nranks = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &nranks);
  const FrontPlan& P = *G.plan;
  {
    Status st;
    if (!starpu_is_initialized())
      st = Status::error(StatusCode::runtime_error, "StarPU-MPI is not started");
    else if (M.nranks != nranks || M.task_rank.size() != G.tasks.size() || M.block_owner.size() != G.blocks.size())
      st = Status::error(StatusCode::invalid_argument,
                         "the mapping is for " + std::to_string(M.nranks) + " ranks and another graph, the "
                         "communicator has " + std::to_string(nranks));
    else if (G.slot_rank.size() != G.slot_capacity.size())
      st = Status::error(StatusCode::invalid_argument, "the graph's slots are not planned per rank (distribute_graph)");
    else if (opts.method != FactorMethod::llt && opts.method != FactorMethod::automatic)
      st = Status::error(StatusCode::invalid_argument,
                         "LDLT is not distributed yet: the MPI executor runs Cholesky (method llt) only");
    else if (!(opts.watchdog_seconds >= 0) || !std::isfinite(opts.watchdog_seconds))
      st = Status::error(StatusCode::invalid_argument, "watchdog_seconds must be a finite number >= 0");
    else
      st = check_values(P, A);
    if (st = agree_status(st, comm); !st.ok()) return st;
  }
  const auto t0 = clock_type::now();
  const idx_t nt = static_cast<idx_t>(G.tasks.size()), nb = static_cast<idx_t>(G.blocks.size());
  auto run = std::make_unique<Run>(nt);
  run->F.plan = &P;
  FactorOptions o = opts;
  o.method = FactorMethod::llt;
  // Every rank's factor blocks at their places in a factor-sized buffer of
  // its own: untouched pages cost nothing, only the blocks it owns are zeroed.
  run->local_lx.reset(new double[static_cast<std::size_t>(std::max<idx_t>(P.factor_size(), 1))]);
  double* const lx = run->local_lx.get();
  for (idx_t b = 0; b < nb; ++b) {
    const Block& B = G.blocks[b];
    if (B.offset >= 0 && M.block_owner[b] == rank)
      std::memset(lx + B.offset, 0, static_cast<std::size_t>(B.ld * (B.cols - 1) + B.rows) * sizeof(double));
  }
  FactorContext& ctx = run->ctx;
  prepare_factor_context(P, A, o, run->F, ctx);
  run->progress.stall_task = opts.debug_stall_task;

  // Handles: blocks in Lx at their index, slots at nb + σ.
  const idx_t nh = nb + static_cast<idx_t>(G.slot_capacity.size());
  std::vector<int> owner(nh, 0);
  for (idx_t b = 0; b < nb; ++b)
    if (G.blocks[b].offset >= 0) owner[b] = M.block_owner[b];
  for (std::size_t s = 0; s < G.slot_rank.size(); ++s) owner[nb + s] = G.slot_rank[s];
  std::vector<idx_t> handle_of(G.accesses.size());
  for (std::size_t a = 0; a < G.accesses.size(); ++a) {
    const idx_t b = G.accesses[a].block;
    handle_of[a] = G.blocks[b].offset >= 0 ? b : nb + G.slot_of[b];
  }
  RankShare share = rank_share(G, M, rank, handle_of, owner);
  std::vector<starpu_data_handle_t> h(nh, nullptr);
  idx_t nregistered = 0;
  for (idx_t x = 0; x < nh; ++x) {
    if (!share.registered[x]) continue;
    ++nregistered;
    if (x < nb) {
      // Always at home in this rank's Lx, owned or not: the kernels index a
      // block with the graph's leading dimension (the front's order), and
      // a copy StarPU allocated itself would be packed (ld = rows). The
      // pages of blocks this rank never receives are never touched.
      const Block& B = G.blocks[x];
      starpu_matrix_data_register(&h[x], STARPU_MAIN_RAM, reinterpret_cast<uintptr_t>(lx + B.offset),
                                  static_cast<uint32_t>(B.ld), static_cast<uint32_t>(B.rows),
                                  static_cast<uint32_t>(B.cols), sizeof(double));
    } else {
      const auto cap = static_cast<uint32_t>(std::max<idx_t>(G.slot_capacity[x - nb], 1));
      starpu_matrix_data_register(&h[x], -1, 0, cap, cap, 1, sizeof(double));
    }
    starpu_mpi_data_register_comm(h[x], static_cast<starpu_mpi_tag_t>(x), owner[x], comm);
  }
  idx_t max_buffers = 0;
  for (const Task& t : G.tasks) max_buffers = std::max(max_buffers, t.acc_end - t.acc_begin);
  reserve_codelet_buffers(max_buffers + 2);
  const std::vector<double> sent0 = comm_sent(nranks);

  std::vector<idx_t> remaining(nh, 0);  // accesses this rank has still to submit, per slot handle
  for (idx_t t = 0; t < nt; ++t)
    if (share.submit[t])
      for (idx_t a = G.tasks[t].acc_begin; a < G.tasks[t].acc_end; ++a) ++remaining[handle_of[a]];
  Status st;
  std::vector<struct starpu_data_descr> descr;
  for (idx_t t = 0; t < nt && st.ok(); ++t) {
    if (!share.submit[t]) continue;
    const Task& task = G.tasks[t];
    run->args[t] = GraphTaskArgs{&G, t, &ctx, &run->progress, nullptr};
    run->names[t] = task_name(G, task);
    descr.clear();
    for (idx_t a = task.acc_begin; a < task.acc_end; ++a)
      descr.push_back({h[handle_of[a]], starpu_mode(G.accesses[a].mode)});
    // No GPU assembly, front or fused-subtree index is registered here (the
    // shared-memory executor uploads them through gpu_assembly_cache; not
    // done under MPI yet): assembly, subtree and front tasks stay on CPUs,
    // the tile kernels may run on GPUs.
    const bool cpu_only = task.kind == TaskKind::assemble || task.kind == TaskKind::extend_add ||
                          task.kind == TaskKind::subtree || task.kind == TaskKind::front;
    const unsigned long long where = cpu_only ? STARPU_CPU : task_codelet(task.kind)->where;
    const int ret = starpu_mpi_task_insert(
        comm, task_codelet(task.kind), STARPU_EXECUTE_ON_NODE, M.task_rank[t], STARPU_EXECUTE_WHERE, where,
        STARPU_DATA_MODE_ARRAY, descr.data(), static_cast<int>(descr.size()), STARPU_CL_ARGS_NFREE,
        &run->args[t], sizeof(GraphTaskArgs), STARPU_CALLBACK, graph_task_done, STARPU_CALLBACK_ARG_NFREE,
        &run->args[t], STARPU_PRIORITY, task.priority, STARPU_FLOPS, task.flops, STARPU_NAME,
        run->names[t].c_str(), 0);
    if (ret != 0) {
      st = Status::error(StatusCode::runtime_error, "starpu_mpi_task_insert failed for task " + run->names[t] +
                                                        " (" + std::to_string(ret) + ")");
      break;
    }
    // A slot is released after this rank's last submitted access to it.
    for (idx_t a = task.acc_begin; a < task.acc_end; ++a) {
      const idx_t x = handle_of[a];
      if (--remaining[x] == 0 && x >= nb && h[x]) {
        starpu_data_unregister_submit(h[x]);
        h[x] = nullptr;
      }
    }
  }
  {
    auto active = std::make_unique<WorkersActive>();
    starpu_do_schedule();
    if (st.ok() && !wait_for_tasks(run->progress, share.local_tasks, opts.watchdog_seconds)) {
      ctx.cancelled = true;  // the tasks not yet started skip their work
      st = Status::error(StatusCode::runtime_error,
                         "watchdog: no task of this rank completed for " + std::to_string(opts.watchdog_seconds) +
                             " s; the factorisation was cancelled");
    }
    // Every rank's tasks and communications (a collective of StarPU-MPI).
    starpu_mpi_wait_for_all(comm);
  }
  const double factor_seconds = seconds_since(t0);
  const std::vector<double> sent1 = comm_sent(nranks);
  st = agree_status(st, comm);
  reduce_context(ctx, comm);
  const Status outcome = st.ok() ? context_status(P, ctx, run->F) : st;

  {
    auto active = std::make_unique<WorkersActive>();
    // Unregistering a block of Lx on its owner brings its last value home.
    for (idx_t x = 0; x < nh; ++x)
      if (h[x]) {
        if (x < nb) starpu_data_unregister(h[x]);
        else starpu_data_unregister_submit(h[x]);
      }
    starpu_mpi_wait_for_all(comm);
  }
  F = std::move(run->F);
  F.Lx.clear();
  local.lx = std::move(run->local_lx);
  local.size = P.factor_size();
  local.rank = rank;
  if (stats) {
    stats->tasks = share.local_tasks;
    stats->flops = 0;
    for (double f : P.front_flops) stats->flops += f;
    stats->seconds = seconds_since(t0);
    stats->task_seconds = ctx.task_seconds;
  }
  if (info) {
    auto gather_idx = [&](idx_t x) {
      const std::vector<long long> v = all_gather<long long>(x, MPI_LONG_LONG, comm);
      return std::vector<idx_t>(v.begin(), v.end());
    };
    info->nranks = nranks;
    info->rank = rank;
    info->tasks_run = gather_idx(share.local_tasks);
    info->tasks_submitted = gather_idx(share.submitted);
    info->handles = gather_idx(nregistered);
    info->sent_bytes = all_gather<double>(sum(sent1) - sum(sent0), MPI_DOUBLE, comm);
    info->factor_seconds = all_gather<double>(factor_seconds, MPI_DOUBLE, comm);
  }
  return outcome;
}

}  // namespace starfront
