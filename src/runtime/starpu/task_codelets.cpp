#include "runtime/starpu/task_codelets.hpp"

#include <atomic>
#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include <sched.h>
#include <unistd.h>

#ifdef STARFRONT_HAVE_CUDA
#include "cuda/fused_subtree_index.hpp"
#include "cuda/fused_subtree_kernel.hpp"
#include "cuda/task_kernels_cuda.hpp"
#endif

namespace starfront {
namespace {

void graph_task_cpu(void* buffers[], void* cl_arg) {
  const auto* a = static_cast<const GraphTaskArgs*>(cl_arg);
  a->progress->state[a->task] = TaskProgress::running;
  if (a->task == a->progress->stall_task)  // testing aid: a hung kernel, until cancelled
    while (!a->ctx->cancelled) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  const Task& t = a->graph->tasks[a->task];
  const idx_t n = t.acc_end - t.acc_begin;
  std::vector<double*> ptrs(n);
  // A mapped panel (GraphTaskArgs::mapped_panel) is the first access and has no buffer.
  const idx_t skip = a->mapped_panel && n > 0 ? 1 : 0;
  if (skip) ptrs[0] = a->mapped_panel;
  for (idx_t i = skip; i < n; ++i) ptrs[i] = reinterpret_cast<double*>(STARPU_MATRIX_GET_PTR(buffers[i - skip]));
  run_task_cpu(*a->graph, a->task, ptrs.data(), *a->ctx);
}

/// Cost model (microseconds) from the task's flop count. On a CPU worker:
/// the same estimate as the plan's critical path (estimate_seconds). On a
/// CUDA worker (kinds with a CUDA implementation): estimate_seconds_cuda.
double graph_task_cost(struct starpu_task* task, struct starpu_perfmodel_arch* arch, unsigned /*nimpl*/) {
  const auto* a = static_cast<const GraphTaskArgs*>(task->cl_arg);
  const Task& t = a->graph->tasks[a->task];
  if (arch && arch->ndevices > 0 && arch->devices[0].type == STARPU_CUDA_WORKER) {
    if (t.kind == TaskKind::front)
      return 1e6 * (a->ctx->ldlt.active ? estimate_seconds_cuda_ldlt_front(*a->graph->plan, t.front)
                                        : estimate_seconds_cuda_front(*a->graph->plan, t.front));
    // A fused subtree whose largest front does not fit in shared memory runs
    // through the kernel's slow global-memory path: not a GPU candidate
    // (the default graph's subtrees hold fronts up to the tile threshold,
    // the GPU graph's up to kGpuGraphSubtreeFront).
    if (t.kind == TaskKind::subtree && a->fused && a->fused->task[a->task].max_order > kGpuSubtreeMaxFront)
      return 1e9;
    return 1e6 * estimate_seconds_cuda(t);
  }
  return 1e6 * estimate_seconds(t);
}

struct Codelets;
Codelets& all_codelets();

struct Codelets {
  std::array<struct starpu_perfmodel, kTaskKinds> models{};
  std::array<struct starpu_codelet, kTaskKinds> codelets{};
  std::array<std::string, kTaskKinds> symbols;
  Codelets() {
    for (int k = 0; k < kTaskKinds; ++k) {
      const char* name = task_kind_name(static_cast<TaskKind>(k));
      symbols[k] = std::string("starfront_") + name;
      models[k].type = STARPU_PER_ARCH;
      models[k].arch_cost_function = graph_task_cost;
      models[k].symbol = symbols[k].c_str();
      struct starpu_codelet& cl = codelets[k];
      cl.where = STARPU_CPU;
      cl.cpu_funcs[0] = graph_task_cpu;
      cl.cpu_funcs_name[0] = "graph_task_cpu";
      cl.nbuffers = STARPU_VARIABLE_NBUFFERS;
      cl.model = &models[k];
      cl.name = name;
#ifdef STARFRONT_HAVE_CUDA
      if (has_cuda_impl(static_cast<TaskKind>(k))) {
        cl.where |= STARPU_CUDA;
        cl.cuda_funcs[0] = graph_task_cuda;
        cl.cuda_flags[0] = STARPU_CUDA_ASYNC;
      }
#endif
    }
  }
};

Codelets& all_codelets() {
  static Codelets all;
  return all;
}

}  // namespace

void graph_task_done(void* args) {
  const auto* a = static_cast<const GraphTaskArgs*>(args);
  a->progress->state[a->task] = TaskProgress::done;
  if (a->progress->records) {
    TaskProgress::Record& r = a->progress->records[a->task];
    r.worker = starpu_worker_get_id();
    r.done = std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
    const starpu_task* t = starpu_task_get_current();  // set by StarPU around the callback
    if (t && t->profiling_info) {
      r.start = 1e-6 * starpu_timing_timespec_to_us(&t->profiling_info->start_time);
      r.end = 1e-6 * starpu_timing_timespec_to_us(&t->profiling_info->end_time);
      r.submit = 1e-6 * starpu_timing_timespec_to_us(&t->profiling_info->submit_time);
      r.pop_end = 1e-6 * starpu_timing_timespec_to_us(&t->profiling_info->pop_end_time);
      r.acquire_start = 1e-6 * starpu_timing_timespec_to_us(&t->profiling_info->acquire_data_start_time);
      r.acquire_end = 1e-6 * starpu_timing_timespec_to_us(&t->profiling_info->acquire_data_end_time);
    }
  }
  const std::lock_guard<std::mutex> lock(a->progress->mutex);
  ++a->progress->done_count;
  a->progress->cv.notify_all();
}

bool wait_for_tasks(TaskProgress& p, idx_t total, double watchdog) {
  // Spin, then block: for up to STARFRONT_WAIT_SPIN_US microseconds (default
  // 300; 0 turns it off) the caller polls the count, so that a graph ending
  // in that time is seen at once instead of after the condition variable's
  // wake-up (17-38 µs from the last task's end to the caller on the H200
  // machine, 2-5 µs spinning: bench/README.md); longer graphs then block as
  // before, having spent at most that much of the caller's core. Only when
  // the workers leave a core free: otherwise the spin would take it from
  // one of them.
  static const double spin_s = [] {
    const char* e = std::getenv("STARFRONT_WAIT_SPIN_US");
    const double us = e && *e ? std::strtod(e, nullptr) : 300.0;
    return us > 0 ? std::min(us, 1e6) * 1e-6 : 0.0;  // (at most 1 s; NaN and negatives: off)
  }();
  // The cores this process may run on (its affinity mask: a container's
  // cpuset, taskset), counted once.
  static const long cores = [] {
    cpu_set_t set;
    CPU_ZERO(&set);
    return sched_getaffinity(0, sizeof set, &set) == 0 ? static_cast<long>(CPU_COUNT(&set))
                                                        : sysconf(_SC_NPROCESSORS_ONLN);
  }();
  if (spin_s > 0 && cores > 0 && static_cast<long>(starpu_worker_get_count()) < cores) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(spin_s);
    while (p.done_count.load(std::memory_order_acquire) < total) {
      if (std::chrono::steady_clock::now() >= until) break;
#if defined(__x86_64__) || defined(__i386__)
      __builtin_ia32_pause();
#endif
    }
    if (p.done_count.load(std::memory_order_acquire) >= total) {
      // The last callback may still be inside notify_all() under the mutex:
      // taking it once makes sure it has left before the caller frees
      // `p` (the executor does so as soon as this returns).
      const std::lock_guard<std::mutex> wait_for_the_notifier(p.mutex);
      return true;
    }
  }
  std::unique_lock<std::mutex> lock(p.mutex);
  if (watchdog <= 0) {
    p.cv.wait(lock, [&] { return p.done_count >= total; });
    return true;
  }
  const auto limit = std::chrono::duration_cast<std::chrono::nanoseconds>(
      std::chrono::duration<double>(std::min(watchdog, 1e9)));
  while (p.done_count < total) {
    const idx_t before = p.done_count;
    if (!p.cv.wait_for(lock, limit, [&] { return p.done_count != before; })) return false;
  }
  return true;
}

double estimate_seconds_cuda(const Task& t) {
  switch (t.kind) {
    case TaskKind::potrf: return 50e-6 + t.flops / 2e12;
    case TaskKind::trsm:
    case TaskKind::syrk:
    case TaskKind::gemm: return 10e-6 + t.flops / 10e12;
    case TaskKind::assemble:
    case TaskKind::extend_add: return 15e-6 + t.flops / 2e10;
    case TaskKind::subtree: return 30e-6 + t.flops / 1e10;
    default: return 1e3;  // no CUDA implementation: never chosen
  }
}

double cusolver_potrf_seconds(idx_t n) {
  // (order, seconds) measured on the H200 (DESIGN.md), interpolated
  // log-log; below order 256 a constant latency, above 32768 cubic.
  static const double pts[][2] = {{1, 40e-6}, {256, 110e-6}, {1024, 420e-6}, {4096, 1.8e-3},
                                  {8192, 7.1e-3}, {32768, 0.266}};
  const double x = static_cast<double>(std::max<idx_t>(n, 1));
  constexpr int np = sizeof pts / sizeof pts[0];
  if (x >= pts[np - 1][0]) return pts[np - 1][1] * std::pow(x / pts[np - 1][0], 3.0);
  int i = 0;
  while (x > pts[i + 1][0]) ++i;
  const double f = std::log(x / pts[i][0]) / std::log(pts[i + 1][0] / pts[i][0]);
  return pts[i][1] * std::pow(pts[i + 1][1] / pts[i][1], f);
}

double estimate_seconds_cuda_front(const FrontPlan& P, idx_t s) {
  const double m = static_cast<double>(P.front_order(s)), k = static_cast<double>(P.ncols(s)), mc = m - k;
  const double assembly = 15e-6 + (m * k + mc * mc) / 5e10;  // launches; zeroing and scattered adds
  const double blas = mc > 0 ? 20e-6 + (mc * k * k + mc * mc * k) / 10e12 : 0.0;  // TRSM + SYRK
  return assembly + cusolver_potrf_seconds(P.ncols(s)) + blas;
}

double estimate_seconds_cuda_ldlt_front(const FrontPlan& P, idx_t s) {
  const double m = static_cast<double>(P.front_order(s)), k = static_cast<double>(P.ncols(s));
  return 300e-6 + m * k * k / 1.5e9 + (m - k) * (m - k) * k / 5e12;
}

int fused_subtree_shared_max_order() {
#ifdef STARFRONT_HAVE_CUDA
  return fused_shared_max_order();
#else
  return 0;
#endif
}

void resolve_task_gpu_times(TaskProgress& progress, std::size_t n) {
#ifdef STARFRONT_HAVE_CUDA
  if (progress.records) cuda_resolve_task_events(progress, n);
#else
  (void)progress;
  (void)n;
#endif
}

GpuPivotSlot* alloc_gpu_pivot_slots(std::size_t n) {
#ifdef STARFRONT_HAVE_CUDA
  return alloc_mapped_pivot_slots(n);
#else
  (void)n;
  return nullptr;
#endif
}

void free_gpu_pivot_slots(GpuPivotSlot* slots) {
#ifdef STARFRONT_HAVE_CUDA
  free_mapped_pivot_slots(slots);
#else
  (void)slots;
#endif
}

bool gpus_address_pinned_host(const void* p) {
#ifdef STARFRONT_HAVE_CUDA
  return cuda_host_pointer_usable(p);
#else
  (void)p;
  return false;
#endif
}

std::string wait_front_panel_copies() {
#ifdef STARFRONT_HAVE_CUDA
  return cuda_wait_front_panel_copies();
#else
  return std::string();
#endif
}

bool front_panels_mappable() {
#ifdef STARFRONT_HAVE_CUDA
  return cuda_memory_pools_supported();
#else
  return false;
#endif
}

const DirectValuesCopy* issue_direct_values(std::unique_ptr<NumericFactor::DeviceState>& keep,
                                            const double* values, std::size_t n) {
#ifdef STARFRONT_HAVE_CUDA
  const unsigned nw = starpu_cuda_worker_get_count();
  if (nw == 0) return nullptr;
  std::vector<int> ids(nw), devices;
  const unsigned got = starpu_worker_get_ids_by_type(STARPU_CUDA_WORKER, ids.data(), nw);
  for (unsigned i = 0; i < got; ++i) {
    const int d = starpu_worker_get_devid(ids[i]);
    if (std::find(devices.begin(), devices.end(), d) == devices.end()) devices.push_back(d);
  }
  return devices.empty() ? nullptr : issue_direct_values_copy(keep, devices, values, n);
#else
  (void)keep, (void)values, (void)n;
  return nullptr;
#endif
}

void wait_direct_values(const DirectValuesCopy* copy) {
#ifdef STARFRONT_HAVE_CUDA
  if (copy) wait_direct_values_copy(*copy);
#else
  (void)copy;
#endif
}

bool run_subtree_inline(const TaskGraph& G, idx_t ti, const FusedSubtreeIndex& X, FactorContext& ctx,
                        double* mapped_panel, const std::function<void()>& between) {
#ifdef STARFRONT_HAVE_CUDA
  const int id = starpu_worker_get_by_type(STARPU_CUDA_WORKER, 0);  // the first CUDA worker, or -1
  if (id < 0) return false;
  run_subtree_inline_cuda(G, ti, X, ctx, mapped_panel, starpu_worker_get_devid(id), between);
  return true;
#else
  (void)G, (void)ti, (void)X, (void)ctx, (void)mapped_panel, (void)between;
  return false;
#endif
}

long long inline_subtree_tasks() {
#ifdef STARFRONT_HAVE_CUDA
  return cuda_inline_subtrees();
#else
  return 0;
#endif
}

long long device_norm_results() {
#ifdef STARFRONT_HAVE_CUDA
  return cuda_device_norms();
#else
  return 0;
#endif
}

bool cuda_codelets_built() {
#ifdef STARFRONT_HAVE_CUDA
  return true;
#else
  return false;
#endif
}

long long cuda_task_executions(TaskKind k) {
#ifdef STARFRONT_HAVE_CUDA
  return cuda_kernel_executions(k);
#else
  (void)k;
  return 0;
#endif
}

long long cuda_fused_kernel_launches() {
#ifdef STARFRONT_HAVE_CUDA
  return cuda_fused_launches();
#else
  return 0;
#endif
}

long long cuda_fused_values_ahead_used() {
#ifdef STARFRONT_HAVE_CUDA
  return cuda_values_ahead_used();
#else
  return 0;
#endif
}

double cuda_fused_kernel_seconds() {
#ifdef STARFRONT_HAVE_CUDA
  return cuda_fused_seconds();
#else
  return 0;
#endif
}

double cuda_fused_kernel_part_seconds(int part) {
#ifdef STARFRONT_HAVE_CUDA
  return cuda_fused_part_seconds(part);
#else
  (void)part;
  return 0;
#endif
}

long long cuda_front_fallbacks() {
#ifdef STARFRONT_HAVE_CUDA
  return cuda_front_failures();
#else
  return 0;
#endif
}

long long cuda_potrf_fallbacks() {
#ifdef STARFRONT_HAVE_CUDA
  return cuda_potrf_failures();
#else
  return 0;
#endif
}

namespace {
std::atomic<bool> g_by_kind{false};  // set_cuda_only's by_kind
}  // namespace

bool front_placement_by_kind() { return g_by_kind.load(); }

void set_cuda_only(bool tiles, bool fronts, bool by_kind) {
#ifdef STARFRONT_HAVE_CUDA
  g_by_kind = by_kind;
  for (int k = 0; k < kTaskKinds; ++k) {
    const auto kind = static_cast<TaskKind>(k);
    if (!has_cuda_impl(kind)) continue;
    const bool on = kind == TaskKind::subtree || kind == TaskKind::front ? fronts : tiles;
    all_codelets().codelets[k].where = on ? STARPU_CUDA : (STARPU_CPU | STARPU_CUDA);
  }
#else
  (void)tiles;
  (void)fronts;
  (void)by_kind;
#endif
}

struct starpu_codelet* task_codelet(TaskKind k) {
  return &all_codelets().codelets[static_cast<int>(k)];
}

void reserve_codelet_buffers(idx_t nbuffers) {
  // StarPU 1.4.10 reads codelet->nodes[i] (STARPU_NMAXBUFS = 8 entries) for
  // every buffer i of a task unless codelet->dyn_nodes is set: give every
  // codelet a dyn_nodes array of "no specific node" at least nbuffers long.
  // Arrays only grow; a replaced one is kept (tasks in flight may read it).
  static std::mutex m;
  static std::vector<std::unique_ptr<int[]>> arrays;
  static idx_t capacity = 0;
  std::lock_guard<std::mutex> lock(m);
  if (nbuffers <= capacity) return;
  capacity = std::max<idx_t>(2 * capacity, std::max<idx_t>(nbuffers, 64));
  arrays.emplace_back(new int[capacity]);
  std::fill(arrays.back().get(), arrays.back().get() + capacity, STARPU_SPECIFIC_NODE_NONE);
  for (auto& cl : all_codelets().codelets) cl.dyn_nodes = arrays.back().get();
}

}  // namespace starfront
