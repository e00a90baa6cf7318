#include "runtime/starpu/starpu_executor.hpp"

#include <starpu.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <limits>
#include <memory>
#include <chrono>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "runtime/starpu/gpu_assembly_cache.hpp"
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

constexpr std::size_t kNoHome = static_cast<std::size_t>(-1);

std::atomic<long long> g_mapped_panel_tasks{0};
std::atomic<long long> g_mapped_front_tasks{0};
std::atomic<long long> g_direct_subtree_tasks{0};
std::atomic<bool> g_mapped_without_cuda{false};

/// One handle per block in Lx (registered on main memory with its layout:
/// rows×cols, leading dimension ld), at index b; one handle per
/// contribution-block slot at index nblocks + σ, `capacity` doubles seen as a
/// capacity×1 matrix (the kernels lay each occupant out as its Block says):
/// at cb_host + home[σ] on main memory when home[σ] != kNoHome (slots
/// written by subtree tasks: NumericFactor::cb_host), else home node -1
/// (StarPU allocates it where its first writer runs). Blocks with
/// unregistered[b] set get no handle (null).
std::vector<starpu_data_handle_t> register_handles(const TaskGraph& G, std::vector<double>& Lx,
                                                   const std::vector<std::size_t>& home, double* cb_host,
                                                   const std::vector<char>& unregistered) {
  const std::size_t nb = G.blocks.size();
  std::vector<starpu_data_handle_t> h(nb + G.slot_capacity.size(), nullptr);
  for (std::size_t i = 0; i < nb; ++i) {
    const Block& b = G.blocks[i];
    if (b.offset < 0 || unregistered[i]) continue;
    starpu_matrix_data_register(&h[i], STARPU_MAIN_RAM,
                                reinterpret_cast<uintptr_t>(Lx.data() + b.offset),
                                static_cast<uint32_t>(b.ld), static_cast<uint32_t>(b.rows),
                                static_cast<uint32_t>(b.cols), sizeof(double));
  }
  for (std::size_t s = 0; s < G.slot_capacity.size(); ++s) {
    const auto cap = static_cast<uint32_t>(std::max<idx_t>(G.slot_capacity[s], 1));
    if (home[s] != kNoHome)
      starpu_matrix_data_register(&h[nb + s], STARPU_MAIN_RAM, reinterpret_cast<uintptr_t>(cb_host + home[s]),
                                  cap, cap, 1, sizeof(double));
    else
      starpu_matrix_data_register(&h[nb + s], -1, 0, cap, cap, 1, sizeof(double));
  }
  return h;
}

/// What the tasks of one factorisation use (owned by the executor).
struct Run {
  explicit Run(idx_t ntasks) : progress(ntasks), args(ntasks), names(ntasks) {}
  NumericFactor F;  ///< moved into the caller's factor at the end
  FactorContext ctx;
  TaskProgress progress;
  std::vector<GraphTaskArgs> args;
  std::vector<std::string> names;
  /// GPU assembly index of the graph (null without CUDA workers or without
  /// tiled fronts): held until the factorisation ends (or forever, if abandoned).
  std::shared_ptr<const GpuAssemblyData> gpu;
  /// Deferred pivot tests of GPU Cholesky fronts: one slot per task
  /// (alloc_gpu_pivot_slots), null in synchronous mode.
  std::unique_ptr<GpuPivotSlot, void (*)(GpuPivotSlot*)> pivot_slots{nullptr, free_gpu_pivot_slots};
  /// StarPU's clock (seconds) when the workers were running and scheduled,
  /// when the calling thread's own work (while_running) ended, and when its
  /// wait for the tasks returned (the task log's last columns).
  double stamps[3] = {-1.0, -1.0, -1.0};
};

/// Whether environment variable `knob` is set to "0" (a measurement knob
/// turning a default off).
bool knob_off(const char* knob) {
  const char* e = std::getenv(knob);
  return e && std::string(e) == "0";
}

/// Whether GPU Cholesky fronts test their pivots on the device without
/// synchronising (default) or on the host after one stream synchronisation
/// each (STARFRONT_DEFER_PIVOTS=0: measurement knob).
bool deferred_pivots_enabled() { return !knob_off("STARFRONT_DEFER_PIVOTS"); }

/// Folds the deferred pivot tests into ctx: a front that passed records its
/// minimum pivot ratio; returns true when some front failed (its column and
/// pivot are not known here: the caller factorises again synchronously).
bool collect_pivot_slots(const TaskGraph& G, const GpuPivotSlot* slots, FactorContext& ctx) {
  bool failed = false;
  for (std::size_t t = 0; t < G.tasks.size(); ++t) {
    if (G.tasks[t].kind != TaskKind::front) continue;
    if (slots[t].state == 2) {
      failed = true;
    } else if (slots[t].state == 1) {
      FrontResult r;
      r.state = FrontResult::State::done;
      r.min_pivot_ratio = slots[t].min_ratio;
      ctx.record(r);
    }
  }
  return failed;
}

idx_t completed(TaskProgress& p) {
  const std::lock_guard<std::mutex> lock(p.mutex);
  return p.done_count;
}

/// Names of the tasks that started and did not complete (at most 8).
std::string running_tasks(const Run& r, idx_t submitted) {
  std::string out;
  int shown = 0, more = 0;
  for (idx_t t = 0; t < submitted; ++t)
    if (r.progress.state[t] == TaskProgress::running) {
      if (shown++ < 8) out += (out.empty() ? "" : ", ") + r.names[t];
      else ++more;
    }
  if (more) out += " and " + std::to_string(more) + " more";
  return out.empty() ? "none (waiting on the runtime)" : out;
}

/// For a stalled factorisation (the watchdog's message): the tasks that have
/// not started although every predecessor has completed, as StarPU derives
/// predecessors from the accesses in submission order (sequential
/// consistency: a read after the handle's last writer; a write after the
/// last writer and every reader since; an RW|COMMUTE access counted as a
/// write, so such a task may be missed, never wrongly listed). handle_of(t,
/// a): the StarPU handle (index) of access a of task t, or -1 when it has none. Names at
/// most 8 of them, with the count; such tasks mean the runtime holds back
/// work that the graph allows (a scheduler or data request that never ends),
/// none means the graph waits on a task that never ran.
std::string ready_not_started(const TaskGraph& G, const Run& r, idx_t submitted,
                              const std::function<idx_t(idx_t, idx_t)>& handle_of) {
  struct Last {
    idx_t writer = -1;
    std::vector<idx_t> readers;  // since the writer
  };
  std::vector<Last> last;
  idx_t count = 0;
  int shown = 0;
  std::string out;
  auto done = [&](idx_t t) { return r.progress.state[t] == TaskProgress::done; };
  for (idx_t t = 0; t < submitted; ++t) {
    const Task& task = G.tasks[t];
    bool ready = true;
    for (idx_t a = task.acc_begin; a < task.acc_end && ready; ++a) {
      const idx_t x = handle_of(t, a);
      if (x < 0 || x >= static_cast<idx_t>(last.size())) continue;
      const Last& l = last[static_cast<std::size_t>(x)];
      if (l.writer >= 0 && !done(l.writer)) ready = false;
      if (G.accesses[a].mode != AccessMode::R)
        for (idx_t q : l.readers) ready = ready && done(q);
    }
    if (ready && r.progress.state[t] == TaskProgress::waiting) {
      if (shown++ < 8) out += (out.empty() ? "" : ", ") + r.names[t];
      ++count;
    }
    for (idx_t a = task.acc_begin; a < task.acc_end; ++a) {
      const idx_t x = handle_of(t, a);
      if (x < 0) continue;
      if (x >= static_cast<idx_t>(last.size())) last.resize(static_cast<std::size_t>(x) + 1);
      Last& l = last[static_cast<std::size_t>(x)];
      if (G.accesses[a].mode == AccessMode::R) {
        l.readers.push_back(t);
      } else {
        l.writer = t;
        l.readers.clear();
      }
    }
  }
  return std::to_string(count) + (count ? " (" + out + (count > 8 ? ", ..." : "") + ")" : "");
}

/// StarPU's accounting of each memory node it caps: "NAME used U of T MiB"
/// joined by ", " ("none capped" when no node has a cap). A node whose
/// allocations reach its cap makes StarPU wait for memory (watchdog message).
std::string memory_nodes_text() {
  std::string out;
  for (unsigned node = 0; node < starpu_memory_nodes_get_count(); ++node) {
    const starpu_ssize_t total = starpu_memory_get_total(node);
    if (total < 0) continue;
    char name[64] = {0}, buf[160];
    starpu_memory_node_get_name(node, name, sizeof name);
    std::snprintf(buf, sizeof buf, "%s%s used %.0f of %.0f MiB", out.empty() ? "" : ", ", name,
                  static_cast<double>(starpu_memory_get_used(node)) / 1048576.0,
                  static_cast<double>(total) / 1048576.0);
    out += buf;
  }
  return out.empty() ? "none capped" : out;
}

std::string seconds_text(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g s", s);
  return buf;
}

/// Callback of the early write-back of a block of Lx: the block is home.
void release_home_copy(void* handle) {
  starpu_data_release_on_node(static_cast<starpu_data_handle_t>(handle), STARPU_MAIN_RAM);
}

/// The page-locking of a factor's host array (NumericFactor::lx_pin, cb_pin; pin_for_gpus).
struct HostPin final : NumericFactor::PinRelease {
  explicit HostPin(double* p) : addr(p) {}
  ~HostPin() override { starpu_memory_unpin(addr, 0); }  // cudaHostUnregister: the size is not used
  double* addr;
};


/// Writes the task log of one factorisation (STARFRONT_TASK_LOG) to path:
/// a header, then per task in submission order, comma-separated: index,
/// name (double-quoted: it may contain commas), kind, flops, StarPU worker id, worker kind (cpu / cuda / other),
/// start and end (seconds, StarPU's profiling clock; -1 without
/// STARPU_PROFILING=1), completion callback time (seconds after t0, the
/// executor's start), and the accesses as handle:mode separated by ';'
/// (handle: a block of Lx or a CB slot, as StarPU sees it, so that a reader
/// can rebuild the dependencies StarPU derives in submission order; a mapped
/// panel, which has no handle, is listed too: nothing else accesses it), then
/// StarPU's submission, pop and data-acquisition stamps (TaskProgress::Record,
/// StarPU's clock), then the run's stamps (Run::stamps, the same on every
/// line), then a CUDA task's host queueing and GPU stamps (Record::host_begin
/// to gpu_end; -1 for other tasks). A file that cannot be opened is reported on stderr and skipped.
template <class HandleIndex>
void write_task_log(const char* path, const TaskGraph& G, const TaskProgress::Record* rec,
                    const std::vector<std::string>& names, HandleIndex handle_index, double t0,
                    const double* stamps) {
  std::FILE* f = std::fopen(path, "w");
  if (!f) {
    std::fprintf(stderr, "starfront: STARFRONT_TASK_LOG: cannot write %s\n", path);
    return;
  }
  std::fprintf(f, "task,name,kind,flops,worker,worker_kind,start_s,end_s,done_s,accesses,submit_s,pop_end_s,"
                 "acquire_start_s,acquire_end_s,run_resumed_s,run_own_work_done_s,run_woken_s,"
                 "host_begin_s,host_end_s,gpu_begin_s,gpu_end_s\n");
  for (std::size_t t = 0; t < G.tasks.size(); ++t) {
    const Task& task = G.tasks[t];
    const TaskProgress::Record& r = rec[t];
    const char* wk = "other";
    if (r.worker >= 0)
      wk = starpu_worker_get_type(r.worker) == STARPU_CPU_WORKER    ? "cpu"
           : starpu_worker_get_type(r.worker) == STARPU_CUDA_WORKER ? "cuda"
                                                                    : "other";
    std::fprintf(f, "%zu,\"%s\",%s,%.6g,%d,%s,%.9f,%.9f,%.9f,", t, names[t].c_str(), task_kind_name(task.kind),
                 task.flops, r.worker, wk, r.start, r.end, r.done >= 0 ? r.done - t0 : -1.0);
    for (idx_t a = task.acc_begin; a < task.acc_end; ++a)
      std::fprintf(f, "%s%lld:%s", a > task.acc_begin ? ";" : "",
                   static_cast<long long>(handle_index(G.accesses[a].block)),
                   access_mode_name(G.accesses[a].mode));
    std::fprintf(f, ",%.9f,%.9f,%.9f,%.9f,%.9f,%.9f,%.9f,%.9f,%.9f,%.9f,%.9f\n", r.submit, r.pop_end,
                 r.acquire_start, r.acquire_end, stamps[0], stamps[1], stamps[2], r.host_begin, r.host_end,
                 r.gpu_begin, r.gpu_end);
  }
  std::fclose(f);
}

/// One run of graph G (factorize_starpu). deferred: GPU Cholesky fronts
/// test their pivots on the device (GraphTaskArgs::pivot_slots);
/// deferred_failed is set when one of them failed, and the returned Status
/// and factor are then meaningless. values_finite: as factorize_starpu.
Status factorize_pass(const TaskGraph& G, const CscMatrix& A, const FactorOptions& opts, NumericFactor& F,
                      FactorStats* stats, bool values_finite, bool deferred, bool& deferred_failed,
                      const std::function<void()>& while_running, DeviceNormRequest* device_norm = nullptr) {
  deferred_failed = false;
  if (!starpu_is_initialized())
    return Status::error(StatusCode::runtime_error, "StarPU is not started");
  if (!(opts.watchdog_seconds >= 0) || !std::isfinite(opts.watchdog_seconds))
    return Status::error(StatusCode::invalid_argument, "watchdog_seconds must be a finite number >= 0");
  const FrontPlan& P = *G.plan;
  FactorPhases ph;
  PhaseTimer timer;
  Status st = values_finite && A.n == P.n && A.nnz() == P.nnz_a ? Status::success() : check_values(P, A);
  timer.lap(ph.check);
  if (!st.ok()) return st;
  // The executor's wall time starts where the setup phase does (the same
  // clock read), so that setup to writeback never exceeds it.
  const auto t0 = timer.last();
  const idx_t nt = static_cast<idx_t>(G.tasks.size());
  // The CB slots written by fused subtree tasks (CPU cores, mostly) get a
  // home in NumericFactor::cb_host, kept across refactorisations with the
  // same graph: registered without a home, StarPU allocated (and, with CUDA
  // workers, page-locked) them and freed them in every factorisation, and
  // the subtree kernels page-faulted on their output (measured: 191k minor
  // faults, 750 MB, per warm lap3d 60^3 factorisation on 2 cores). A home
  // slot is never written back: it is unregistered without coherency at the
  // end. STARFRONT_PERSISTENT_SLOTS=0 turns this off (measurement knob).
  std::vector<std::size_t> slot_home(G.slot_capacity.size(), kNoHome);
  std::size_t doubles = 0;
  {
    // (Only these: a home for every slot would keep the whole slot plan,
    // cb_planned, resident between factorisations instead of the slots live
    // at a time: +0.9 GB peak RSS on lap3d 60^3 on CPUs only.)
    if (!knob_off("STARFRONT_PERSISTENT_SLOTS"))
      for (const Task& t : G.tasks) {
        if (t.kind != TaskKind::subtree) continue;
        for (idx_t a = t.acc_begin; a < t.acc_end; ++a) {
          const idx_t b = G.accesses[a].block;
          if (G.blocks[b].offset >= 0 || G.accesses[a].mode == AccessMode::R) continue;
          std::size_t& home = slot_home[static_cast<std::size_t>(G.slot_of[b])];
          if (home != kNoHome) continue;
          home = doubles;
          doubles += static_cast<std::size_t>(std::max<idx_t>(G.slot_capacity[G.slot_of[b]], 1));
        }
      }
  }
  // The other slots StarPU allocates itself, on main memory when a CPU task
  // or a copy home needs them: with a cap on StarPU's main memory (the
  // caller's STARPU_LIMIT_CPU_*MEM; StarpuRuntime::start lifts StarPU's own)
  // below their total, StarPU would wait for ever for memory that none of
  // this factorisation's tasks frees. Checked before the caller's factor is
  // touched.
  // (The slots are summed only under a cap: by default there is none.)
  {
    double cap = 0;
    bool capped = true;
    for (unsigned node = 0; node < starpu_memory_nodes_get_count(); ++node) {
      if (starpu_node_get_kind(node) != STARPU_CPU_RAM) continue;
      const starpu_ssize_t total = starpu_memory_get_total(node);
      if (total < 0) capped = false;  // no cap on this node
      else cap += static_cast<double>(total);
    }
    double slot_bytes = 0;
    if (capped)
      for (std::size_t x = 0; x < slot_home.size(); ++x)
        if (slot_home[x] == kNoHome) slot_bytes += 8.0 * static_cast<double>(std::max<idx_t>(G.slot_capacity[x], 1));
    if (capped && slot_bytes > cap) {
      char buf[400];
      std::snprintf(buf, sizeof buf,
                    "StarPU's main memory is capped at %.0f MiB (STARPU_LIMIT_CPU_MEM / STARPU_LIMIT_CPU_NUMA_MEM "
                    "in the environment, at most 90%% of the memory hwloc reports), below the %.0f MiB of "
                    "contribution-block slots that this factorisation may need there at most (every slot "
                    "StarPU allocates, at once): raise or unset the limit",
                    cap / 1048576.0, slot_bytes / 1048576.0);
      return Status::error(StatusCode::runtime_error, buf);
    }
  }
  // Everything the tasks touch, on the heap: a factorisation abandoned by
  // the watchdog leaves it to the tasks that never finished.
  auto run = std::make_unique<Run>(nt);
  // A refactorisation with the same plan reuses the caller's factor storage
  // and its page-locking: no allocation and no page faults for the largest
  // array of the factorisation (every kernel overwrites its whole block of
  // Lx: assemble zeroes its tiles, front and subtree kernels their panels;
  // a GPU front task with a mapped panel copies home its lower trapezoid by
  // blocks of columns, so the entries above those blocks keep their zeros).
  // The caller's previous factor is lost either way, as before.
  // Entries a kernel leaves alone (e.g. above the diagonal of a panel) are
  // the same in every factorisation with the same graph; after another graph
  // of the plan (LDLᵀ runs an untiled copy) the storage is zeroed once.
  if (F.plan == &P && F.Lx.size() == static_cast<std::size_t>(P.factor_size())) {
    run->F.lx_pin = std::move(F.lx_pin);
    run->F.Lx = std::move(F.Lx);
    if (F.lx_graph != G.build_id) std::fill(run->F.Lx.begin(), run->F.Lx.end(), 0.0);
  } else {
    F = NumericFactor{};  // frees (and unlocks) the old storage first
    run->F.Lx.assign(P.factor_size(), 0.0);
  }
  run->F.plan = &P;
  run->F.lx_graph = G.build_id;
  run->F.direct_values = std::move(F.direct_values);  // (buffers of any size: grown when needed)
  if (doubles > 0 && F.plan == &P && F.cb_graph == G.build_id && F.cb_host_doubles == doubles) {
    run->F.cb_pin = std::move(F.cb_pin);
    run->F.cb_host = std::move(F.cb_host);
  } else if (doubles > 0) {
    F.cb_pin.reset();
    F.cb_host.reset();
    run->F.cb_host.reset(new double[doubles]);  // uninitialised: each occupant is written before it is read
  }
  run->F.cb_host_doubles = doubles;
  run->F.cb_graph = doubles > 0 ? G.build_id : 0;
  FactorContext& ctx = run->ctx;
  prepare_factor_context(P, A, opts, run->F, ctx);
  run->progress.stall_task = opts.debug_stall_task;
  // Measurement knob: STARFRONT_TASK_LOG=FILE writes, after each
  // factorisation (so the last one of a process remains), one line per task:
  // where and when it ran and the handles it accessed (write_task_log;
  // bench/task_log_summary.py reads it).
  const char* task_log = std::getenv("STARFRONT_TASK_LOG");
  if (task_log && *task_log) run->progress.records.reset(new TaskProgress::Record[G.tasks.size()]);

  // GPU assembly (issue 5): with CUDA workers, assemble and extend_add tasks
  // also read the graph's assembly index (built and uploaded once per
  // analysis: gpu_assembly_cache.hpp) and, for assemble, A's values
  // (registered for this factorisation, read-only), as extra R buffers after
  // the graph's accesses. These are no blocks of G: the slot planner and the
  // CPU kernels never see them. Without the index such tasks stay on CPUs.
  // Fused subtrees (issue 6) likewise read A's values and the fused index
  // blob; they may run on CUDA workers only for Cholesky (LDLᵀ subtrees run
  // the CPU kernel).
  const bool cuda_workers = (cuda_codelets_built() && starpu_cuda_worker_get_count() > 0) ||
                            gpu_assembly_buffers_without_cuda();
  bool has_assembly = false, has_subtree = false, has_front = false;
  for (const Task& t : G.tasks) {
    has_assembly = has_assembly || t.kind == TaskKind::assemble || t.kind == TaskKind::extend_add;
    has_subtree = has_subtree || t.kind == TaskKind::subtree;
    has_front = has_front || t.kind == TaskKind::front;
  }
  const bool want_fused = has_subtree && !ctx.ldlt.active;
  if (cuda_workers && (has_assembly || want_fused || has_front) && P.nnz_a > 0 &&
      P.nnz_a <= static_cast<idx_t>(UINT32_MAX))
    run->gpu = gpu_assembly_data(G);  // (StarPU vectors count elements in 32 bits)
  const bool gpu_assembly = run->gpu && !run->gpu->index.empty;
  const bool gpu_fused = run->gpu && want_fused && !run->gpu->fused.empty;
  // GPU fronts (issue 7 for LDLᵀ, issue 5 for Cholesky): with CUDA workers,
  // each untiled `front` task may run on a GPU (task_kernels_cuda.cpp:
  // front_cholesky, front_ldlt); it then assembles its front itself and
  // reads, after the graph's accesses, four read-only vectors: A's values and
  // the plan's a_src, a_dst and rel (uploaded once per analysis with the
  // graph's other GPU index data). Without them, front tasks run on CPU
  // workers; LDLᵀ subtree tasks always do.
  const bool gpu_fronts = run->gpu && has_front && run->gpu->has_front_index();
  // Deferred pivot tests (issue 5): GPU Cholesky fronts then queue their
  // whole work without waiting for it; the executor reads their outcomes
  // once the graph has run.
  if (deferred && gpu_fronts && !ctx.ldlt.active && starpu_cuda_worker_get_count() > 0)
    run->pivot_slots.reset(alloc_gpu_pivot_slots(static_cast<std::size_t>(nt)));
  // A's values as a read-only vector, registered when a task first needs
  // them as a buffer.
  starpu_data_handle_t values_handle = nullptr;
  auto values = [&] {
    if (!values_handle)
      starpu_vector_data_register(&values_handle, STARPU_MAIN_RAM, reinterpret_cast<uintptr_t>(ctx.values),
                                  static_cast<uint32_t>(P.nnz_a), sizeof(double));
    return values_handle;
  };
  // Measurement knob (issue 5): STARFRONT_FRONT_TASKS_ON_GPU=1 keeps every
  // untiled front task on the CUDA workers while fused subtrees stay free
  // (RuntimeOptions::fronts_on_cuda_only forces both).
  const char* fog_env = std::getenv("STARFRONT_FRONT_TASKS_ON_GPU");
  const bool fronts_on_gpu = fog_env && std::string(fog_env) == "1" && starpu_cuda_worker_get_count() > 0;
  const bool by_kind = front_placement_by_kind() && starpu_cuda_worker_get_count() > 0;
  // A fused subtree whose largest front does not fit in the GPU kernel's
  // shared memory (the graphs of gpu_graph_options with subtrees cut above
  // order 239, e.g. the 3D Laplacians' 600) would run that front through the
  // kernel's global-memory path, its slow fallback (one block per front):
  // such tasks stay on CPU workers when there are any and the codelet may
  // run there (not with RuntimeOptions::fronts_on_cuda_only).
  const idx_t fused_fit = gpu_fused && starpu_cpu_worker_get_count() > 0 &&
                                  (task_codelet(TaskKind::subtree)->where & STARPU_CPU)
                              ? fused_subtree_shared_max_order()
                              : -1;
  idx_t max_buffers = 0;
  for (const Task& t : G.tasks) max_buffers = std::max(max_buffers, t.acc_end - t.acc_begin);
  reserve_codelet_buffers(max_buffers + 5);
  // With CUDA workers, Lx is page-locked once and stays so while the factor
  // lives (refactorisations reuse it): copies of its blocks between the host
  // and the GPUs are then asynchronous DMA at full bus speed, not staged
  // through pageable memory (measured on the H200: bench/README.md).
  // STARFRONT_PIN_FACTOR=0 turns this off (measurement knob).
  const bool pin = !knob_off("STARFRONT_PIN_FACTOR");
  if (pin && !run->F.lx_pin) run->F.lx_pin = pin_for_gpus(run->F.Lx.data(), run->F.Lx.size() * sizeof(double));
  if (pin && !run->F.cb_pin) run->F.cb_pin = pin_for_gpus(run->F.cb_host.get(), run->F.cb_host_doubles * sizeof(double));
  const idx_t nb = static_cast<idx_t>(G.blocks.size());
  // The handle of each access: its block's, or its slot's for a CB block.
  auto handle_index = [&](idx_t b) { return G.blocks[b].offset >= 0 ? b : nb + G.slot_of[b]; };
  // Accesses not yet submitted, per handle.
  std::vector<idx_t> remaining(static_cast<std::size_t>(nb) + G.slot_capacity.size(), 0);
  for (const Access& a : G.accesses) ++remaining[handle_index(a.block)];
  // L written in place by the fused kernel (GraphTaskArgs::mapped_panel):
  // with page-locked Lx that every GPU addresses through its host pointer,
  // a subtree task whose panel block nobody else accesses and whose fronts
  // all fit in the kernel's shared memory writes L across the bus as its
  // fronts finish, so no copy of L home follows the kernel (on activsg2000
  // that copy was 0.13 ms of a 1.12 ms refactorisation); on a CPU worker,
  // the task writes the same host memory. Such a block gets no StarPU
  // handle and the task no buffer for it (its only access): a handle
  // written on a GPU would leave StarPU a dirty device copy that its memory
  // manager may write home at any time (starpu_memchunk_tidy keeps a share
  // of each node's buffers clean), over what the kernel wrote. A first
  // version that kept the handle had garbage in L on the H200, most likely
  // from that write-back.
  // STARFRONT_FUSED_MAPPED_L=0 turns this off (measurement knob).
  std::vector<char> mapped(static_cast<std::size_t>(nb), 0);
  std::vector<double*> mapped_panel(static_cast<std::size_t>(nt), nullptr);
  static const bool mapped_l_knob = !knob_off("STARFRONT_FUSED_MAPPED_L");
  const bool map_anyway = g_mapped_without_cuda.load() && starpu_cuda_worker_get_count() == 0;
  if (gpu_fused && mapped_l_knob && !run->F.Lx.empty() &&
      (map_anyway || (run->F.lx_pin && gpus_address_pinned_host(run->F.Lx.data())))) {
    const idx_t shared_max = map_anyway ? std::numeric_limits<idx_t>::max() : fused_subtree_shared_max_order();
    for (idx_t t = 0; t < nt; ++t) {
      const Task& task = G.tasks[t];
      if (task.kind != TaskKind::subtree || task.acc_end <= task.acc_begin) continue;
      const Access& a = G.accesses[task.acc_begin];  // the panel block (subtree codelets' buffers[0])
      const Block& blk = G.blocks[a.block];
      if (blk.offset < 0 || a.mode != AccessMode::W || remaining[a.block] != 1 ||
          run->gpu->fused.task[t].max_order > shared_max)
        continue;
      mapped[a.block] = 1;
      mapped_panel[t] = run->F.Lx.data() + blk.offset;
      ++g_mapped_panel_tasks;
    }
  }
  // Cholesky front tasks likewise (GraphTaskArgs::mapped_panel, issue 5):
  // with page-locked Lx, a front task whose panel block nobody else accesses
  // gets no StarPU handle for it. On a CUDA worker it works on a panel of
  // its own device memory and copies the lower trapezoid of L home itself,
  // on a second stream of its worker while its CB update runs (StarPU
  // copied the whole m×k block, upper triangle included: for lap3d 60^3's
  // 5361×5361 root, 230 MB after the last task, about 5 ms on the H200); on
  // a CPU worker it writes Lx in place. The copies are waited for below,
  // with the tasks (wait_front_panel_copies). Fewer handles also mean less
  // registration, submission and unregistration. LDLᵀ fronts keep their
  // handle. STARFRONT_FRONT_MAPPED_L=0 turns this off (measurement knob).
  static const bool front_mapped_knob = !knob_off("STARFRONT_FRONT_MAPPED_L");
  bool front_copies = false;
  // (With the testing aid set_mapped_panels_without_cuda, on CPU workers.)
  if (gpu_fronts && front_mapped_knob && !ctx.ldlt.active && !run->F.Lx.empty() &&
      (map_anyway || (run->F.lx_pin && starpu_cuda_worker_get_count() > 0 && front_panels_mappable())))
    for (idx_t t = 0; t < nt; ++t) {
      const Task& task = G.tasks[t];
      if (task.kind != TaskKind::front || task.acc_end <= task.acc_begin) continue;
      const Access& a = G.accesses[task.acc_begin];  // the panel block (front codelets' buffers[0])
      const Block& blk = G.blocks[a.block];
      if (blk.offset < 0 || a.mode != AccessMode::W || remaining[a.block] != 1) continue;
      mapped[a.block] = 1;
      mapped_panel[t] = run->F.Lx.data() + blk.offset;
      front_copies = true;
      ++g_mapped_front_tasks;
    }
  // A subtree task that is the whole factorisation (its panel mapped, no
  // other access) takes no buffer at all (GraphTaskArgs::direct).
  // STARFRONT_FUSED_DIRECT=0 keeps A's values and the blob as its buffers
  // (measurement knob).
  static const bool direct_knob = !knob_off("STARFRONT_FUSED_DIRECT");
  auto direct_task = [&](idx_t t) {
    return direct_knob && gpu_fused && nt == 1 && mapped_panel[t] && G.tasks[t].acc_end - G.tasks[t].acc_begin == 1;
  };
  // The one task of such a factorisation gets A's values copied to the GPUs
  // now, while it is submitted and the workers wake up, rather than by
  // itself before its kernel (GraphTaskArgs::values_ahead); only from
  // page-locked values (refactorize's copy or buffer: a pageable source
  // would make the copies synchronous, one device after the other, on this
  // thread). STARFRONT_FUSED_VALUES_AHEAD=0 turns this off (measurement
  // knob).
  static const bool ahead_knob = !knob_off("STARFRONT_FUSED_VALUES_AHEAD");
  // Such a task, when there are CUDA workers, runs on this thread without
  // StarPU (run_subtree_inline): with no buffer to move, StarPU would only
  // hand the task to a worker and wake this thread after it (about 0.07 ms
  // of activsg2000's 0.8 ms refactorisation: bench/README.md). Not when the
  // task must be observable as StarPU's (a task log, a watchdog, a
  // debugging stall). STARFRONT_FUSED_INLINE=0 submits it (measurement
  // knob).
  static const bool inline_knob = !knob_off("STARFRONT_FUSED_INLINE");
  const bool run_inline = inline_knob && direct_task(0) && starpu_cuda_worker_get_count() > 0 &&
                          !run->progress.records && opts.watchdog_seconds == 0 && opts.debug_stall_task < 0;
  idx_t submitted = 0;
  bool ran_inline = false;
  if (run_inline) {
    timer.lap(ph.setup);
    timer.lap(ph.submit);
    // while_running runs once, while the kernel runs, or after a failure
    // that stopped the task before its launch.
    // With a DeviceNormRequest the GPU computes ‖A‖∞ after the fused
    // kernel; the caller's host pass then does not run here.
    bool ran_between = false;
    ctx.device_norm = device_norm;
    const std::function<void()> between = [&] {
      ran_between = true;
      if (while_running && !(device_norm && device_norm->launched)) while_running();
    };
    // (false: no CUDA worker found, nothing ran: the task is submitted)
    ran_inline = run_subtree_inline(G, 0, run->gpu->fused, ctx, mapped_panel[0], between);
    if (ran_inline) {
      if (!ran_between && while_running && !(device_norm && device_norm->launched)) while_running();
      submitted = 1;
      ++g_direct_subtree_tasks;
      timer.lap(ph.execute);
    }
  }
  if (!ran_inline) {
    const DirectValuesCopy* values_ahead = nullptr;
    if (ahead_knob && direct_task(0) && gpus_address_pinned_host(ctx.values))
      values_ahead = issue_direct_values(run->F.direct_values, ctx.values, static_cast<std::size_t>(P.nnz_a));
    std::vector<starpu_data_handle_t> h = register_handles(G, run->F.Lx, slot_home, run->F.cb_host.get(), mapped);
    std::vector<struct starpu_data_descr> descr;
    timer.lap(ph.setup);
    for (idx_t t = 0; t < nt; ++t) {
      const Task& task = G.tasks[t];
      run->args[t] = GraphTaskArgs{&G, t, &ctx, &run->progress, gpu_assembly ? &run->gpu->index : nullptr,
                                   gpu_fused ? &run->gpu->fused : nullptr, run->pivot_slots.get(), mapped_panel[t]};
      run->args[t].direct = direct_task(t);
      if (run->args[t].direct) {
        ++g_direct_subtree_tasks;
        run->args[t].values_ahead = values_ahead;
      }
      run->names[t] = task_name(G, task);
      descr.clear();
      // (A mapped panel, the task's first access, has no handle: no buffer.)
      for (idx_t a = task.acc_begin + (mapped_panel[t] ? 1 : 0); a < task.acc_end; ++a)
        descr.push_back({h[handle_index(G.accesses[a].block)], starpu_mode(G.accesses[a].mode)});
      const bool assembly = task.kind == TaskKind::assemble || task.kind == TaskKind::extend_add;
      const bool subtree = task.kind == TaskKind::subtree;
      if (assembly && gpu_assembly) {
        if (task.kind == TaskKind::assemble) {
          descr.push_back({values(), STARPU_R});
          descr.push_back({run->gpu->entries, STARPU_R});
        } else {
          descr.push_back({run->gpu->columns, STARPU_R});
          descr.push_back({run->gpu->rowmap, STARPU_R});
        }
      }
      if (subtree && gpu_fused && !run->args[t].direct) {
        descr.push_back({values(), STARPU_R});
        descr.push_back({run->gpu->fused_blob, STARPU_R});
      }
      const bool front = task.kind == TaskKind::front;
      if (front && gpu_fronts) {
        descr.push_back({values(), STARPU_R});
        for (starpu_data_handle_t x : {run->gpu->a_src, run->gpu->a_dst, run->gpu->rel, run->gpu->diag_src})
          descr.push_back({x, STARPU_R});
      }
      // Without the index data an assembly, subtree or front task must not go
      // to a CUDA worker.
      unsigned long long where = (assembly && !gpu_assembly) || (subtree && !gpu_fused) || (front && !gpu_fronts)
                                     ? STARPU_CPU
                                     : task_codelet(task.kind)->where;
      if (front && gpu_fronts && fronts_on_gpu) where = STARPU_CUDA;
      // Under a policy without cost models (front_placement_by_kind), which
      // lets any idle worker take any task it can run: Cholesky fronts on
      // the CUDA workers (a CPU worker that took a large front would hold up
      // the factorisation); LDLᵀ fronts on the CPU workers (the GPU LDLᵀ
      // front kernel ran at 0.03-0.29x the CPU's speed: docs/LDLT.md),
      // unless the caller put fronts on CUDA workers only.
      if (front && by_kind && where != STARPU_CPU) {
        if (!ctx.ldlt.active) where = STARPU_CUDA;
        else if ((where & STARPU_CPU) && starpu_cpu_worker_get_count() > 0) where = STARPU_CPU;
      }
      if (subtree && fused_fit >= 0 && run->gpu->fused.task[t].max_order > fused_fit) where = STARPU_CPU;
      const int ret = starpu_task_insert(
          task_codelet(task.kind), STARPU_EXECUTE_WHERE, where, STARPU_DATA_MODE_ARRAY, descr.data(),
          static_cast<int>(descr.size()),
          STARPU_CL_ARGS_NFREE, &run->args[t], sizeof(GraphTaskArgs), STARPU_CALLBACK, graph_task_done,
          STARPU_CALLBACK_ARG_NFREE, &run->args[t], STARPU_PRIORITY, task.priority, STARPU_FLOPS,
          task.flops, STARPU_NAME, run->names[t].c_str(), 0);
      if (ret != 0) {
        st = Status::error(StatusCode::runtime_error, "starpu_task_insert failed for task " +
                                                          run->names[t] + " (" + std::to_string(ret) + ")");
        break;
      }
      ++submitted;
      // A slot is released as soon as the last task that uses it is submitted
      // (StarPU frees its memory once that task ran).
      for (idx_t a = task.acc_begin; a < task.acc_end; ++a) {
        const idx_t x = handle_index(G.accesses[a].block);
        if (--remaining[x] == 0 && x >= nb && slot_home[static_cast<std::size_t>(x - nb)] == kNoHome) {
          starpu_data_unregister_submit(h[x]);
          h[x] = nullptr;
        }
      }
    }
    // Unregistered once the tasks reading A's values have run (the copies on
    // GPUs are dropped; the caller's array is never written).
    if (values_handle) starpu_data_unregister_submit(values_handle);
    // With CUDA workers, each block of Lx goes home as soon as its last writer
    // has run (an asynchronous read acquisition on main memory, ordered after
    // the submitted tasks, released at once), so the copies of the factor back
    // to the host overlap the rest of the factorisation instead of following
    // it in the unregistration loop below. STARFRONT_EARLY_WRITEBACK=0 turns
    // this off (measurement knob).
    if (st.ok() && starpu_cuda_worker_get_count() > 0 && !knob_off("STARFRONT_EARLY_WRITEBACK"))
      for (idx_t x = 0; x < nb; ++x)
        if (h[x])
          starpu_data_acquire_on_node_cb(h[x], STARPU_MAIN_RAM, STARPU_R, release_home_copy, h[x]);
    timer.lap(ph.submit);
    {
      // Workers run only now: while paused they do not compete with the
      // submitting thread for the cores (resumed before the submission, on
      // the H200 machine's 16 cores with 16 CPU workers, lap3d 60^3's
      // submission took 12-15 ms instead of 3: bench/README.md, session 35).
      auto active = std::make_unique<WorkersActive>();
      // Schedulers that wait for the whole graph (graph_test) start now.
      starpu_do_schedule();
      if (run->progress.records) run->stamps[0] = 1e-6 * starpu_timing_now();
      if (while_running) while_running();
      if (run->progress.records) run->stamps[1] = 1e-6 * starpu_timing_now();
      const double w = opts.watchdog_seconds;
      const bool all_done = wait_for_tasks(run->progress, submitted, w);
      if (run->progress.records) run->stamps[2] = 1e-6 * starpu_timing_now();
      if (!all_done) {
        // No task completed for w seconds. The state is read first, in
        // order (the running tasks, then the ready ones), and only then
        // cancelled: once cancelled, the tasks not yet started skip their
        // work and a cooperative stalled one returns, so states read after
        // it would describe a graph draining, not the stall.
        const std::string done_text = std::to_string(completed(run->progress));
        const std::string running_text = running_tasks(*run, submitted);
        const std::string ready_text = ready_not_started(G, *run, submitted, [&](idx_t t, idx_t a) -> idx_t {
          if (mapped_panel[t] && a == G.tasks[t].acc_begin) return -1;
          return handle_index(G.accesses[a].block);
        });
        ctx.cancelled = true;
        std::string what = "no task completed for " + seconds_text(w) + " (" + done_text + " of " +
                           std::to_string(submitted) + " tasks done; running: " + running_text +
                           "; ready by the graph but not started: " + ready_text +
                           "; StarPU memory nodes: " + memory_nodes_text() + ")";
        if (!wait_for_tasks(run->progress, submitted, std::max(w, 1.0))) {
          // Still running after as long again: abandon the factorisation. Its
          // state, handles and workers stay alive for the tasks in flight.
          (void)active.release();
          (void)run.release();
          F = NumericFactor{};
          return Status::error(StatusCode::runtime_error,
                               "watchdog: " + what +
                                   "; the tasks did not stop after cancellation: the factorisation "
                                   "was abandoned (its memory is not freed, and StarPU cannot shut "
                                   "down while those tasks run)");
        }
        st = Status::error(StatusCode::runtime_error, "watchdog: " + what + "; the factorisation was cancelled");
      }
      // The copies of A's values issued before the submission have ended on
      // every device (the task waited for its own device's only): none reads
      // the caller's memory after this returns.
      if (values_ahead) wait_direct_values(values_ahead);
      timer.lap(ph.execute);
      const auto wb0 = std::chrono::steady_clock::now();
      // The mapped front panels' copies home (after a watchdog's
      // cancellation too: the tasks that ran queued theirs).
      if (front_copies) {
        const std::string err = wait_front_panel_copies();
        if (!err.empty() && st.ok()) st = Status::error(StatusCode::runtime_error, err);
      }
      const auto wb1 = std::chrono::steady_clock::now();
      // Unregistering a block of Lx waits for its last writer and brings it
      // home: this waits for exactly this factorisation's tasks (a mapped
      // panel has no handle: its task has completed, the wait above).
      for (idx_t x = 0; x < nb; ++x)
        if (h[x]) starpu_data_unregister(h[x]);
      const auto wb2 = std::chrono::steady_clock::now();
      ph.writeback_copies = std::chrono::duration<double>(wb1 - wb0).count();
      ph.writeback_blocks = std::chrono::duration<double>(wb2 - wb1).count();
      // The slots still registered, while the workers still run: an
      // unregistration first waits for any request StarPU still holds on
      // the handle, and a request on a slot that a GPU wrote is processed
      // only by that GPU's worker. Unregistered after the workers' pause,
      // GPU-only lap3d 60^3 factorisations hung in 12 of 14 runs, most
      // likely on such a request (session 30: bench/README.md).
      for (std::size_t x = nb; x < h.size(); ++x) {
        if (!h[x]) continue;
        if (slot_home[x - nb] != kNoHome)
          starpu_data_unregister_no_coherency(h[x]);  // the tasks are done: nothing copied home
        else
          starpu_data_unregister_submit(h[x]);
      }
    }
  }
  timer.lap(ph.writeback);
  const double seconds = std::chrono::duration<double>(timer.last() - t0).count();
  if (run->progress.records) resolve_task_gpu_times(run->progress, G.tasks.size());
  if (run->progress.records)
    write_task_log(task_log, G, run->progress.records.get(), run->names, handle_index,
                   std::chrono::duration<double>(t0.time_since_epoch()).count(), run->stamps);
  F = std::move(run->F);
  // Every task has completed (StarPU ends a CUDA task once its stream work
  // is done), so the device has written every slot it will write.
  if (st.ok() && run->pivot_slots) deferred_failed = collect_pivot_slots(G, run->pivot_slots.get(), ctx);
  if (st.ok()) st = context_status(P, ctx, F);
  const double task_seconds = ctx.task_seconds;
  run.reset();
  timer.lap(ph.finish);
  if (stats) {
    stats->tasks = submitted;
    stats->flops = 0;
    for (double f : P.front_flops) stats->flops += f;
    stats->seconds = seconds;
    stats->task_seconds = task_seconds;
    stats->total_seconds = 0.0;
    stats->phases = ph;
  }
  return st;
}

}  // namespace

long long mapped_panel_tasks() { return g_mapped_panel_tasks.load(); }
long long mapped_front_tasks() { return g_mapped_front_tasks.load(); }
long long direct_subtree_tasks() { return g_direct_subtree_tasks.load(); }

void set_mapped_panels_without_cuda(bool on) { g_mapped_without_cuda = on; }

std::unique_ptr<NumericFactor::PinRelease> pin_for_gpus(void* p, std::size_t bytes) {
  if (!p || bytes == 0 || !starpu_is_initialized() || starpu_cuda_worker_get_count() == 0) return nullptr;
  if (starpu_memory_pin(p, bytes) != 0) return nullptr;
  return std::make_unique<HostPin>(static_cast<double*>(p));
}

Status factorize_starpu(const TaskGraph& G, const CscMatrix& A, const FactorOptions& opts, NumericFactor& F,
                        FactorStats* stats, bool values_finite, const std::function<void()>& while_running,
                        DeviceNormRequest* device_norm) {
  bool deferred_failed = false;
  Status st = factorize_pass(G, A, opts, F, stats, values_finite, deferred_pivots_enabled(), deferred_failed,
                             while_running, device_norm);
  if (!deferred_failed) return st;
  // A GPU front failed its deferred pivot test. Everything computed after it
  // is garbage: factorise again with the pivot test of every GPU front on
  // the host (one stream synchronisation each), which stops at the first
  // failure and names the CPU's column and pivot, exactly as without
  // deferral. The time of both passes is reported.
  const double first_seconds = stats ? stats->seconds : 0.0;
  st = factorize_pass(G, A, opts, F, stats, values_finite, false, deferred_failed, {});
  if (stats) stats->seconds += first_seconds;
  return st;
}

}  // namespace starfront
