#include "runtime/starpu_mpi/mpi_solve.hpp"

#include <starpu.h>
#include <starpu_mpi.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "cpu/solve_kernels.hpp"
#include "runtime/starpu/runtime.hpp"

namespace starfront {
namespace {

constexpr int kSolveKinds = 8;

/// Argument of every solve task (owned by the solve call).
struct SolveTaskArgs {
  const SolveGraph* S;
  idx_t task;
  idx_t nrhs;
};

void solve_task_cpu(void** buffers, void* cl_arg) {
  const auto* args = static_cast<const SolveTaskArgs*>(cl_arg);
  const SolveTask& t = args->S->tasks[args->task];
  const idx_t na = t.acc_end - t.acc_begin;
  std::vector<double*> ptr(na);
  std::vector<idx_t> ld(na);
  for (idx_t a = 0; a < na; ++a) {
    ptr[a] = reinterpret_cast<double*>(STARPU_MATRIX_GET_PTR(buffers[a]));
    ld[a] = static_cast<idx_t>(STARPU_MATRIX_GET_LD(buffers[a]));
  }
  run_solve_task_cpu(*args->S, args->task, args->nrhs, ptr.data(), ld.data());
}

/// One codelet per solve task kind (own name and history in traces).
struct SolveCodelets {
  std::array<struct starpu_codelet, kSolveKinds> cl{};
  std::vector<std::unique_ptr<int[]>> nodes;  // only grows: tasks in flight may read a replaced array
  idx_t capacity = 0;
  std::mutex mutex;
  SolveCodelets() {
    for (int k = 0; k < kSolveKinds; ++k) {
      starpu_codelet_init(&cl[k]);
      cl[k].where = STARPU_CPU;
      cl[k].cpu_funcs[0] = solve_task_cpu;
      cl[k].nbuffers = STARPU_VARIABLE_NBUFFERS;
      cl[k].name = solve_task_kind_name(static_cast<SolveTaskKind>(k));
    }
  }
  /// As reserve_codelet_buffers (runtime/starpu/task_codelets.hpp): StarPU
  /// 1.4.10 reads 8 fixed node entries unless dyn_nodes is set. Thread-safe.
  void reserve(idx_t nbuffers) {
    std::lock_guard<std::mutex> lock(mutex);
    if (nbuffers <= capacity) return;
    capacity = std::max<idx_t>(2 * capacity, std::max<idx_t>(nbuffers, 64));
    nodes.emplace_back(new int[capacity]);
    std::fill(nodes.back().get(), nodes.back().get() + capacity, STARPU_SPECIFIC_NODE_NONE);
    for (auto& c : cl) c.dyn_nodes = nodes.back().get();
  }
};
SolveCodelets& codelets() {
  static SolveCodelets c;
  return c;
}

enum starpu_data_access_mode mode_of(AccessMode m) {
  return m == AccessMode::R ? STARPU_R : m == AccessMode::W ? STARPU_W : STARPU_RW;
}

std::vector<double> sent_so_far(int nranks) {
  std::vector<size_t> amounts(static_cast<std::size_t>(nranks), 0);
  starpu_mpi_comm_stats_retrieve(amounts.data());
  return std::vector<double>(amounts.begin(), amounts.end());
}

/// The first entry (user's row, 1-based, and column) of this rank's local
/// vector that is not finite, as a message; empty when all are.
std::string first_not_finite(const SolveGraph& S, int rank, const double* x, idx_t nrhs, idx_t ldx,
                             const char* what) {
  const std::vector<idx_t>& perm = S.graph->plan->symbolic->perm;
  for (idx_t k = 0; k < static_cast<idx_t>(S.row_owner.size()); ++k) {
    if (S.row_owner[k] != rank) continue;
    for (idx_t c = 0; c < nrhs; ++c)
      if (!std::isfinite(x[S.local_index[k] + c * ldx]))
        return std::string("solve: entry ") + std::to_string(perm[k] + 1) + " of " + what + " " +
               std::to_string(c + 1) + " is not finite";
  }
  return {};
}

}  // namespace

Status solve_starpu_mpi(const SolveGraph& S, const LocalFactor& local, double* x, idx_t nrhs, idx_t ldx,
                        MPI_Comm comm, MpiSolveInfo* info) {
  const auto t0 = std::chrono::steady_clock::now();
  int rank = 0, nranks = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &nranks);
  Status st;
  if (!starpu_is_initialized()) {
    st = Status::error(StatusCode::runtime_error, "StarPU-MPI is not started");
  } else if (!S.graph || S.nranks != nranks || !local.valid() || local.rank != rank ||
             local.size != S.graph->plan->factor_size()) {
    st = Status::error(StatusCode::invalid_argument,
                       "solve: no distributed factor of this solve graph on this communicator");
  } else {
    const idx_t nl = S.local_count[rank];
    if (nrhs < 0 || ldx < std::max<idx_t>(1, nl) || (nl > 0 && nrhs > 0 && !x))
      st = Status::error(StatusCode::invalid_argument,
                         "solve: need nrhs >= 0, a vector and ldx >= max(1, local rows " + std::to_string(nl) +
                             ") (nrhs=" + std::to_string(nrhs) + ", ldx=" + std::to_string(ldx) + ")");
    else if (std::string msg = first_not_finite(S, rank, x, nrhs, ldx, "right-hand side"); !msg.empty())
      st = Status::error(StatusCode::invalid_argument, msg);
  }
  long long all_nrhs[2] = {nrhs, -nrhs};
  MPI_Allreduce(MPI_IN_PLACE, all_nrhs, 2, MPI_LONG_LONG, MPI_MIN, comm);
  if (st.ok() && all_nrhs[0] != -all_nrhs[1])
    st = Status::error(StatusCode::invalid_argument, "solve: the ranks passed different numbers of right-hand sides");
  if (st = agree_status(st, comm); !st.ok()) return st;
  if (info) *info = MpiSolveInfo{};
  if (S.graph->plan->n == 0 || nrhs == 0) return Status::success();

  // Work on a copy of the local rows: x stays unchanged on error.
  const idx_t nl = S.local_count[rank], ldw = std::max<idx_t>(1, nl);
  std::vector<double> w(static_cast<std::size_t>(ldw * nrhs));
  for (idx_t c = 0; c < nrhs; ++c) std::copy(x + c * ldx, x + c * ldx + nl, w.data() + c * ldw);

  // Pruning (mpi_executor.cpp's rule) and registration.
  const idx_t nt = static_cast<idx_t>(S.tasks.size()), nh = static_cast<idx_t>(S.handles.size());
  std::vector<char> submit(nt, 0), registered(nh, 0);
  idx_t run_here = 0, submitted = 0, max_buffers = 0;
  for (idx_t t = 0; t < nt; ++t) {
    const SolveTask& task = S.tasks[t];
    bool mine = task.rank == rank;
    for (idx_t a = task.acc_begin; a < task.acc_end && !mine; ++a) {
      const SolveAccess& x_ = S.accesses[a];
      mine = S.handles[x_.handle].owner == rank || (x_.mode != AccessMode::R && registered[x_.handle]);
    }
    if (!mine) continue;
    submit[t] = 1;
    ++submitted;
    run_here += task.rank == rank;
    max_buffers = std::max(max_buffers, task.acc_end - task.acc_begin);
    for (idx_t a = task.acc_begin; a < task.acc_end; ++a) registered[S.accesses[a].handle] = 1;
  }
  std::vector<starpu_data_handle_t> h(nh, nullptr);
  const TaskGraph& G = *S.graph;
  for (idx_t i = 0; i < nh; ++i) {
    if (!registered[i]) continue;
    const SolveHandle& d = S.handles[i];
    if (d.kind == SolveHandleKind::factor) {
      const Block& B = G.blocks[d.block];
      starpu_matrix_data_register(&h[i], STARPU_MAIN_RAM, reinterpret_cast<uintptr_t>(local.lx.get() + B.offset),
                                  static_cast<uint32_t>(B.ld), static_cast<uint32_t>(B.rows),
                                  static_cast<uint32_t>(B.cols), sizeof(double));
    } else if (d.kind == SolveHandleKind::rows && d.owner == rank) {
      starpu_matrix_data_register(&h[i], STARPU_MAIN_RAM, reinterpret_cast<uintptr_t>(w.data() + S.local_index[d.row0]),
                                  static_cast<uint32_t>(ldw), static_cast<uint32_t>(d.rows),
                                  static_cast<uint32_t>(nrhs), sizeof(double));
    } else {
      starpu_matrix_data_register(&h[i], -1, 0, static_cast<uint32_t>(std::max<idx_t>(d.rows, 1)),
                                  static_cast<uint32_t>(d.rows), static_cast<uint32_t>(nrhs), sizeof(double));
    }
    starpu_mpi_data_register_comm(h[i], static_cast<starpu_mpi_tag_t>(i), d.owner, comm);
  }
  SolveCodelets& cls = codelets();
  cls.reserve(max_buffers + 2);
  std::vector<SolveTaskArgs> args(nt);
  std::vector<struct starpu_data_descr> descr;
  const std::vector<double> sent0 = sent_so_far(nranks);
  for (idx_t t = 0; t < nt && st.ok(); ++t) {
    if (!submit[t]) continue;
    const SolveTask& task = S.tasks[t];
    args[t] = SolveTaskArgs{&S, t, nrhs};
    descr.clear();
    for (idx_t a = task.acc_begin; a < task.acc_end; ++a)
      descr.push_back({h[S.accesses[a].handle], mode_of(S.accesses[a].mode)});
    const int ret = starpu_mpi_task_insert(
        comm, &cls.cl[static_cast<int>(task.kind)], STARPU_EXECUTE_ON_NODE, task.rank, STARPU_DATA_MODE_ARRAY,
        descr.data(), static_cast<int>(descr.size()), STARPU_CL_ARGS_NFREE, &args[t], sizeof(SolveTaskArgs),
        STARPU_FLOPS, task.flops * static_cast<double>(nrhs), 0);
    if (ret != 0)
      st = Status::error(StatusCode::runtime_error, std::string("starpu_mpi_task_insert failed for solve task ") +
                                                        solve_task_kind_name(task.kind) + " of front " +
                                                        std::to_string(task.front) + " (" + std::to_string(ret) + ")");
  }
  {
    auto active = std::make_unique<WorkersActive>();
    starpu_do_schedule();
    starpu_mpi_wait_for_all(comm);  // every rank's tasks and communications
    // Unregistering a rows handle on its owner brings its last value home (w).
    for (idx_t i = 0; i < nh; ++i)
      if (h[i]) starpu_data_unregister(h[i]);
    starpu_mpi_wait_for_all(comm);
  }
  const std::vector<double> sent1 = sent_so_far(nranks);
  if (st.ok())
    if (std::string msg = first_not_finite(S, rank, w.data(), nrhs, ldw, "solution"); !msg.empty())
      st = Status::error(StatusCode::runtime_error,
                         msg + " (overflow: the matrix or the right-hand side is too badly scaled for double "
                               "precision); the right-hand side is left unchanged");
  st = agree_status(st, comm);
  if (st.ok())
    for (idx_t c = 0; c < nrhs; ++c) std::copy(w.data() + c * ldw, w.data() + c * ldw + nl, x + c * ldx);
  if (info) {
    double mine = 0;
    for (std::size_t r = 0; r < sent1.size(); ++r) mine += sent1[r] - sent0[r];
    info->sent_bytes.assign(nranks, 0.0);
    MPI_Allgather(&mine, 1, MPI_DOUBLE, info->sent_bytes.data(), 1, MPI_DOUBLE, comm);
    long long mine_i[2] = {run_here, submitted};
    std::vector<long long> all(2 * static_cast<std::size_t>(nranks));
    MPI_Allgather(mine_i, 2, MPI_LONG_LONG, all.data(), 2, MPI_LONG_LONG, comm);
    for (int r = 0; r < nranks; ++r) {
      info->tasks_run.push_back(static_cast<idx_t>(all[2 * r]));
      info->tasks_submitted.push_back(static_cast<idx_t>(all[2 * r + 1]));
    }
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    MPI_Bcast(&secs, 1, MPI_DOUBLE, 0, comm);
    info->seconds = secs;
    info->nrhs = nrhs;
  }
  return st;
}

}  // namespace starfront
