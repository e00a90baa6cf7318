#include "runtime/starpu/runtime.hpp"

#include <starpu.h>
#include <hwloc.h>

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <optional>
#include <vector>

#include "cpu/blas.hpp"
#include "runtime/starpu/gpu_assembly_cache.hpp"
#include "runtime/starpu/task_codelets.hpp"

#ifdef STARFRONT_HAVE_MPI
#include <starpu_mpi.h>
#endif

#ifdef STARFRONT_HAVE_CUDA
#include <starpu_cublas.h>
#include <starpu_cusolver.h>
#endif

namespace starfront {
namespace {

std::atomic<bool> g_started{false};
std::mutex g_active_mutex;
int g_active = 0;  // live WorkersActive objects

/// Physical cores this process may run on (hwloc: the cores that hold a
/// processing unit of its CPU binding, as StarPU counts them), 0 when hwloc
/// cannot tell.
int bound_cores() {
  hwloc_topology_t topo;
  if (hwloc_topology_init(&topo) != 0) return 0;
  int n = 0;
  hwloc_bitmap_t set = hwloc_bitmap_alloc();
  if (set && hwloc_topology_load(topo) == 0 && hwloc_get_cpubind(topo, set, HWLOC_CPUBIND_PROCESS) == 0) {
    for (hwloc_obj_t core = nullptr; (core = hwloc_get_next_obj_by_type(topo, HWLOC_OBJ_CORE, core));)
      if (core->cpuset && hwloc_bitmap_intersects(core->cpuset, set)) ++n;
  }
  if (set) hwloc_bitmap_free(set);
  hwloc_topology_destroy(topo);
  return n;
}

/// Set and non-empty in the environment.
bool env_set(const char* name) {
  const char* e = std::getenv(name);
  return e && *e;
}

/// True when `name` is one of StarPU's predefined scheduling policies;
/// otherwise fills `known` with their names.
bool known_scheduler(const std::string& name, std::string& known) {
  for (struct starpu_sched_policy** p = starpu_sched_get_predefined_policies(); *p; ++p) {
    if (name == (*p)->policy_name) return true;
    known += known.empty() ? "" : ", ";
    known += (*p)->policy_name;
  }
  return false;
}

}  // namespace

int cuda_gpu_count() {
  if (!starpu_is_initialized()) return 0;
  std::vector<int> devs;
  const unsigned n = starpu_worker_get_count();
  for (unsigned w = 0; w < n; ++w)
    if (starpu_worker_get_type(static_cast<int>(w)) == STARPU_CUDA_WORKER) {
      const int d = starpu_worker_get_devid(static_cast<int>(w));
      if (std::find(devs.begin(), devs.end(), d) == devs.end()) devs.push_back(d);
    }
  return static_cast<int>(devs.size());
}

namespace {

/// Sets an environment variable and restores its previous value (or its
/// absence) when destroyed.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    setenv(name, value.c_str(), 1);
  }
  ~ScopedEnv() {
    if (old_) setenv(name_, old_->c_str(), 1);
    else unsetenv(name_);
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

/// Whether the environment caps StarPU's main memory: STARPU_LIMIT_CPU_MEM or
/// STARPU_LIMIT_CPU_NUMA_MEM set, or STARPU_LIMIT_CPU_NUMA_<n>_MEM set with
/// STARPU_USE_NUMA on (StarPU 1.4 reads the per-node variables only then:
/// topology.c, _starpu_cpu_get_global_mem_size).
bool cpu_memory_limit_set() {
  const char* numa = std::getenv("STARPU_USE_NUMA");
  const bool numa_on = numa && *numa && std::atoi(numa) != 0;
  for (char** e = ::environ; e && *e; ++e) {
    const std::string kv(*e);
    const std::string name = kv.substr(0, kv.find('='));
    if (kv.size() <= name.size() + 1) continue;  // set but empty: StarPU ignores it
    if (name == "STARPU_LIMIT_CPU_MEM" || name == "STARPU_LIMIT_CPU_NUMA_MEM") return true;
    if (numa_on && name.rfind("STARPU_LIMIT_CPU_NUMA_", 0) == 0 && name.size() > 26 &&
        name.compare(name.size() - 4, 4, "_MEM") == 0)
      return true;
  }
  return false;
}

/// The environment StarPU reads at starpu_init to record an FxT trace into
/// `dir` (raw file dir/prof_file_<id>, id 0 without MPI).
struct TraceEnv {
  explicit TraceEnv(const std::string& dir)
      : trace("STARPU_FXT_TRACE", "1"), prefix("STARPU_FXT_PREFIX", dir), suffix("STARPU_FXT_SUFFIX", "prof_file") {}
  ScopedEnv trace, prefix, suffix;
};

}  // namespace

Status check_scheduler(const std::string& name) {
  std::string known;
  if (name != "auto" && !known_scheduler(name, known))
    return Status::error(StatusCode::runtime_error,
                         "unknown StarPU scheduler '" + name + "' (known: auto, " + known + ")");
  return Status::success();
}

std::string resolve_scheduler(const std::string& name, int ngpus, bool mpi) {
  if (name != "auto") return name;
  if (mpi) return "lws";
  return ngpus <= 0 ? "lws" : ngpus == 1 ? "prio" : "dmda";
}

bool scheduler_uses_models(const std::string& name) {
  auto has = [&](const char* part) { return name.find(part) != std::string::npos; };
  // dm, dmda, dmdap, dmdas, dmdasd, dmdar, modular-dmda*: expected
  // completion time per worker; pheft, modular-heft*, modular-pheft: the
  // same (HEFT); graph_test: expected lengths pick CPU or GPU. Not the
  // heteroprio family (workers pull from buckets; an idle CPU worker may
  // take a front), nor modular-gemm (it matches codelet names such as
  // "gemm", not starfront's), nor eager, prio, lws, ws, random and the
  // other modular ones.
  return (name.rfind("dm", 0) == 0 || has("-dm") || has("heft") || name == "graph_test") && !has("heteroprio");
}

Status StarpuRuntime::start(const RuntimeOptions& opts, std::unique_ptr<StarpuRuntime>& out) {
  if (Status st = check_scheduler(opts.sched); !st.ok()) return st;
  // "auto" by the GPUs StarPU will drive: the environment's STARPU_NCUDA
  // wins over conf.ncuda in StarPU.
  int gpus_for_auto = opts.ncuda;
  if (const char* e = std::getenv("STARPU_NCUDA"); e && *e) {
    char* end = nullptr;
    const long v = std::strtol(e, &end, 10);
    if (*end == '\0' && v >= 0) gpus_for_auto = static_cast<int>(v);
  }
  const std::string sched = resolve_scheduler(opts.sched, gpus_for_auto, opts.mpi_comm != nullptr);
  if (opts.ncpu < -1 || opts.ncuda < 0)
    return Status::error(StatusCode::runtime_error, "worker counts must be >= 0 (ncpu may be -1)");
  if ((opts.tiles_on_cuda_only || opts.fronts_on_cuda_only) && (opts.ncuda == 0 || !cuda_codelets_built()))
    return Status::error(StatusCode::runtime_error,
                         "tiles_on_cuda_only / fronts_on_cuda_only need CUDA workers and the CUDA codelets");
  if (opts.ncpu == 0 && opts.ncuda == 0)
    return Status::error(StatusCode::runtime_error, "at least one worker is needed");
  if (!opts.trace_dir.empty()) {
#ifndef STARPU_USE_FXT
    return Status::error(StatusCode::runtime_error,
                         "tracing needs StarPU built with FxT (configure --with-fxt); this one is not");
#endif
    // StarPU builds the raw file name in a 1024-byte buffer (prefix + "/" +
    // "prof_file_<user>_<rank>"): a longer folder name would be cut and the
    // trace written elsewhere.
    const std::string absolute = std::filesystem::absolute(opts.trace_dir).string();
    if (absolute.size() > 900)
      return Status::error(StatusCode::invalid_argument,
                           "trace folder path too long (" + std::to_string(absolute.size()) +
                               " characters; StarPU's trace file names are limited to 1023): '" +
                               opts.trace_dir.substr(0, 80) + "...'");
    std::error_code ec;
    std::filesystem::create_directories(opts.trace_dir, ec);
    if (ec || !std::filesystem::is_directory(opts.trace_dir))
      return Status::error(StatusCode::io_error, "cannot create the trace folder '" + opts.trace_dir +
                                                     "'" + (ec ? ": " + ec.message() : ""));
  }
#ifndef STARFRONT_HAVE_MPI
  if (opts.mpi_comm)
    return Status::error(StatusCode::runtime_error,
                         "this starfront was built without MPI (cmake -DSTARFRONT_MPI=ON needs Open MPI and "
                         "StarPU-MPI: tools/deps/install-deps.sh)");
#endif
  if (opts.mpi_comm && !opts.trace_dir.empty())
    return Status::error(StatusCode::invalid_argument, "tracing is not supported with MPI yet");
  if (opts.streams_per_gpu < 0 || opts.streams_per_gpu > 64)
    return Status::error(StatusCode::invalid_argument,
                         "streams_per_gpu must be 0 (the default) to 64, got " + std::to_string(opts.streams_per_gpu));
  // CUDA workers (streams) per GPU: the environment's STARPU_NWORKER_PER_CUDA
  // wins; checked here, GPUs or not, because a StarPU built with CUDA reads
  // it at every starpu_init and aborts on a bad one (an assertion, seen with
  // "0" and no GPU requested).
  int streams = opts.streams_per_gpu > 0 ? opts.streams_per_gpu : kDefaultStreamsPerGpu;
  const char* streams_env_value = std::getenv("STARPU_NWORKER_PER_CUDA");  // set, even empty: StarPU reads it
  const bool streams_from_env = streams_env_value != nullptr;
  if (streams_from_env) {
    const char* e = streams_env_value;
    char* end = nullptr;
    const long v = std::strtol(e, &end, 10);
    if (*e == '\0' || *end != '\0' || v < 1 || v > 64)
      return Status::error(StatusCode::invalid_argument,
                           std::string("STARPU_NWORKER_PER_CUDA must be an integer from 1 to 64, got '") + e + "'");
    streams = static_cast<int>(v);
  }
  // StarPU creates at most STARPU_NMAXWORKERS workers, CUDA ones first, and
  // drops the others without an error.
  if (opts.ncuda > 0 && opts.ncpu >= 0 &&
      static_cast<long long>(opts.ncuda) * streams + opts.ncpu > STARPU_NMAXWORKERS)
    return Status::error(StatusCode::invalid_argument,
                         std::to_string(opts.ncuda) + " GPU(s) x " + std::to_string(streams) + " streams + " +
                             std::to_string(opts.ncpu) + " CPU workers exceed StarPU's " +
                             std::to_string(STARPU_NMAXWORKERS) + " workers");
  bool expected = false;
  if (!g_started.compare_exchange_strong(expected, true))
    return Status::error(StatusCode::runtime_error, "StarPU is already started by starfront");
  setenv("STARPU_SILENT", "1", 0);
  setenv("STARPU_FXT_TRACE", "0", 0);
  std::optional<TraceEnv> trace_env;  // only while starpu_init reads it
  if (!opts.trace_dir.empty()) trace_env.emplace(opts.trace_dir);
  // StarPU caps main memory at 90% of what hwloc reports at starpu_init and
  // waits, without end, for an allocation beyond it (StarPU 1.4: a limit of
  // 0 MiB is no limit; with none, only starpu_memory_allocate's
  // STARPU_MEMORY_WAIT could still wait, and starfront never passes it). On
  // the H200 machine (a VM whose node 0 counts more memory as time passes
  // after boot) hwloc saw about 5 GB in the first process, and the first
  // lap3d 100^3 factorisation on each fresh machine stalled with that node
  // full (bench/README.md, session 32). starfront plans its memory itself:
  // the cap is lifted unless the caller sets one (checked per factorisation).
  std::optional<ScopedEnv> no_cpu_cap;  // only while starpu_init reads it
  if (!cpu_memory_limit_set()) no_cpu_cap.emplace("STARPU_LIMIT_CPU_NUMA_MEM", "0");
  // Several CUDA workers (streams) per GPU let independent front tasks'
  // latency-bound kernels overlap (RuntimeOptions::streams_per_gpu).
  std::optional<ScopedEnv> streams_env;  // only while starpu_init reads it
  if (opts.ncuda > 0 && !streams_from_env) streams_env.emplace("STARPU_NWORKER_PER_CUDA", std::to_string(streams));
  struct starpu_conf conf;
  starpu_conf_init(&conf);
  conf.sched_policy_name = sched.c_str();
  conf.ncpus = opts.ncpu;
  conf.ncuda = opts.ncuda;
  // With CUDA workers and every other core a CPU worker, the thread that
  // calls the factorisations has no core of its own: this StarPU's idle
  // workers poll (non-blocking drivers) while the runtime is not paused.
  // On the H200 machine (16 cores, 15 CPU + 1 CUDA workers) 7 of 20
  // benchmark rows (a power-grid matrix in one process, median of 30
  // refactorisations) took 0.5-1.5 ms longer each, none of 20 with one core
  // left (bench/README.md, session 23). So one core is left to it, when at least two CPU workers remain
  // on the cores this process may use, and neither the environment
  // (STARPU_NCPU, STARPU_RESERVE_NCPU, STARPU_MAIN_THREAD_BIND) nor
  // StarPU-MPI (which reserves its own core) decides already.
  if (opts.ncpu == -1 && opts.ncuda > 0 && !opts.mpi_comm && !env_set("STARPU_NCPU") &&
      !env_set("STARPU_RESERVE_NCPU") && !env_set("STARPU_MAIN_THREAD_BIND") && bound_cores() - opts.ncuda >= 3)
    conf.reserve_ncpus = 1;
  conf.nopencl = 0;
  conf.catch_signals = 0;
  int ret = 0;
#ifdef STARFRONT_HAVE_MPI
  if (opts.mpi_comm) {
    int mpi_ready = 0;
    MPI_Initialized(&mpi_ready);
    if (!mpi_ready) {
      g_started = false;
      return Status::error(StatusCode::runtime_error, "MPI is not initialised (call MPI_Init_thread first)");
    }
    ret = starpu_mpi_init_conf(nullptr, nullptr, 0, *static_cast<const MPI_Comm*>(opts.mpi_comm), &conf);
    // Bytes sent per destination (starpu_mpi_comm_stats_retrieve), reported
    // by the StarPU-MPI executor.
    if (ret == 0) starpu_mpi_comm_stats_enable();
  } else {
    ret = starpu_init(&conf);
  }
#else
  ret = starpu_init(&conf);
#endif
  trace_env.reset();
  no_cpu_cap.reset();
  streams_env.reset();
  if (ret != 0) {
    g_started = false;
    return Status::error(StatusCode::runtime_error,
                         "starpu_init failed (" + std::to_string(ret) +
                             (ret == -ENODEV ? ": no worker available for the requested counts)"
                                             : ")"));
  }
  openblas_set_num_threads(1);  // one BLAS thread per worker: parallelism comes from the tasks
  out.reset(new StarpuRuntime());
  out->mpi_comm_ = opts.mpi_comm;
  out->ncpu_ = static_cast<int>(starpu_cpu_worker_get_count());
  out->ncuda_ = static_cast<int>(starpu_cuda_worker_get_count());
  out->ngpu_ = cuda_gpu_count();
#ifdef STARFRONT_HAVE_CUDA
  // One cuBLAS and one cuSOLVER handle per CUDA worker, on its stream (the
  // CUDA codelets); initialised on the workers, so before the pause.
  if (out->ncuda_ > 0) {
    starpu_cublas_init();
    starpu_cusolver_init();
  }
#endif
  // The policy StarPU runs (the environment's STARPU_SCHED wins over ours).
  const struct starpu_sched_policy* policy = starpu_sched_get_sched_policy();
  const std::string running = policy && policy->policy_name ? policy->policy_name : sched;
  // Under a policy without cost models a CPU worker may take (be handed,
  // steal) any task it can run: tile tasks go to the CUDA workers only, and
  // the executor places front tasks by kind (front_placement_by_kind). Not
  // under MPI, whose executor places tasks itself.
  const bool pull = out->ncuda_ > 0 && !opts.mpi_comm && !scheduler_uses_models(running);
  set_cuda_only(opts.tiles_on_cuda_only || pull, opts.fronts_on_cuda_only, pull);
  starpu_pause();  // idle until a factorisation needs the workers (WorkersActive)
  out->sched_ = running;
  // StarPU lowers the GPU count to the devices it finds (silently, with
  // STARPU_SILENT), and the worker count to STARPU_NMAXWORKERS; a StarPU
  // with blocking drivers keeps one CUDA worker per GPU (accepted when the
  // count is starfront's default, an error when the caller asked for one).
  if (opts.ncuda > 0 && out->ngpu_ < opts.ncuda) {
    const int found = out->ngpu_;
    out.reset();
    return Status::error(StatusCode::runtime_error, std::to_string(opts.ncuda) +
                                                        " GPU(s) requested, StarPU found " + std::to_string(found));
  }
  if (opts.ncuda > 0 && (opts.streams_per_gpu > 0 || streams_from_env) && out->ncuda_ != out->ngpu_ * streams) {
    const std::string what = std::to_string(out->ncuda_) + " CUDA workers for " + std::to_string(out->ngpu_) +
                             " GPU(s) x " + std::to_string(streams) + " streams";
    out.reset();
    return Status::error(StatusCode::runtime_error,
                         "StarPU created " + what + " (at most " + std::to_string(STARPU_NMAXWORKERS) +
                             " workers in all, CUDA ones first; non-blocking drivers are needed for several "
                             "streams per GPU)");
  }
  return Status::success();
}

StarpuRuntime::~StarpuRuntime() {
  release_gpu_assembly_cache();  // its handles must go before starpu_shutdown
  if (starpu_is_paused()) starpu_resume();
  set_cuda_only(false, false);
#ifdef STARFRONT_HAVE_CUDA
  if (ncuda_ > 0) {
    starpu_cusolver_shutdown();
    starpu_cublas_shutdown();
  }
#endif
#ifdef STARFRONT_HAVE_MPI
  if (mpi_comm_) {
    // starpu_mpi_shutdown_comm prints StarPU-MPI's communication statistics
    // to stderr when they were enabled (start() does, for the executor's
    // report): silence fd 2 for that call only.
    std::fflush(stderr);
    const int saved = dup(2);
    const int null_fd = open("/dev/null", O_WRONLY);
    if (saved >= 0 && null_fd >= 0) dup2(null_fd, 2);
    starpu_mpi_shutdown_comm(*static_cast<const MPI_Comm*>(mpi_comm_));
    std::fflush(stderr);
    if (saved >= 0 && null_fd >= 0) dup2(saved, 2);
    if (null_fd >= 0) close(null_fd);
    if (saved >= 0) close(saved);
    g_started = false;
    return;
  }
#endif
  starpu_shutdown();
  g_started = false;
}

WorkersActive::WorkersActive() {
  std::lock_guard<std::mutex> lock(g_active_mutex);
  if (g_active++ == 0 && starpu_is_paused()) starpu_resume();
}

WorkersActive::~WorkersActive() {
  std::lock_guard<std::mutex> lock(g_active_mutex);
  if (--g_active == 0 && !starpu_is_paused()) starpu_pause();
}

}  // namespace starfront
