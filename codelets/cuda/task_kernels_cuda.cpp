#include "cuda/task_kernels_cuda.hpp"

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cusolverDn.h>
#include <starpu.h>
#include <starpu_cublas_v2.h>
#include <starpu_cusolver.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <initializer_list>
#include <limits>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "cuda/assembly_kernels.hpp"
#include "cuda/fused_subtree_kernel.hpp"
#include "cuda/gpu_blas.hpp"
#include "cuda/gpu_syrk.hpp"
#include "cuda/front_ldlt_kernels.hpp"
#include "cuda/norm_rows.hpp"
#include "cuda/pivot_check.hpp"
#include "runtime/starpu/task_codelets.hpp"
#include "sparse/csc.hpp"

namespace starfront {
namespace {

/// Makes p hold at least n elements of T in device memory: freed and
/// allocated again when it must grow (cudaFree first waits for the device),
/// never shrunk; cap: the elements it holds (0 after a failed allocation).
template <class T>
cudaError_t grow_device(T*& p, std::size_t& cap, std::size_t n) {
  if (n <= cap) return cudaSuccess;
  cudaFree(p);
  p = nullptr;
  cap = 0;
  const cudaError_t e = cudaMalloc(&p, sizeof(T) * n);
  if (e == cudaSuccess) cap = n;
  return e;
}

}  // namespace

/// One buffer per device, grown on demand; the stream and the event are made
/// with it. Destroyed with the factor that keeps it (the destructor waits
/// for its copies).
struct DirectValuesCopy : NumericFactor::DeviceState {
  struct OnDevice {
    int device = -1;
    double* values = nullptr;
    std::size_t cap = 0;  ///< doubles
    cudaStream_t stream = nullptr;
    cudaEvent_t ready = nullptr;  ///< recorded after the last copy
  };
  std::vector<OnDevice> on;
  /// The entry of `device` (null when there is none).
  const OnDevice* find(int device) const {
    for (const OnDevice& d : on)
      if (d.device == device && d.ready) return &d;
    return nullptr;
  }
  ~DirectValuesCopy() override {
    int current = -1;
    const bool restore = cudaGetDevice(&current) == cudaSuccess;
    for (OnDevice& d : on) {
      int now = -1;
      if (cudaGetDevice(&now) != cudaSuccess || (now != d.device && cudaSetDevice(d.device) != cudaSuccess))
        continue;
      if (d.stream) cudaStreamSynchronize(d.stream);
      if (d.ready) cudaEventDestroy(d.ready);
      if (d.stream) cudaStreamDestroy(d.stream);
      cudaFree(d.values);
    }
    int now = -1;
    if (restore && cudaGetDevice(&now) == cudaSuccess && now != current) cudaSetDevice(current);
    (void)cudaGetLastError();
  }
};

const DirectValuesCopy* issue_direct_values_copy(std::unique_ptr<NumericFactor::DeviceState>& keep,
                                                 const std::vector<int>& devices, const double* values,
                                                 std::size_t n) {
  auto* c = dynamic_cast<DirectValuesCopy*>(keep.get());
  if (!c) {
    keep = std::make_unique<DirectValuesCopy>();
    c = static_cast<DirectValuesCopy*>(keep.get());
  }
  int current = -1;
  if (cudaGetDevice(&current) != cudaSuccess) {
    (void)cudaGetLastError();
    return nullptr;
  }
  bool ok = true;
  for (int dev : devices) {
    DirectValuesCopy::OnDevice* d = nullptr;
    for (DirectValuesCopy::OnDevice& e : c->on)
      if (e.device == dev) d = &e;
    if (!d) {
      c->on.emplace_back();
      d = &c->on.back();
      d->device = dev;
    }
    int now = -1;
    ok = cudaGetDevice(&now) == cudaSuccess && (now == dev || cudaSetDevice(dev) == cudaSuccess);
    if (ok && !d->stream) ok = cudaStreamCreateWithFlags(&d->stream, cudaStreamNonBlocking) == cudaSuccess;
    if (ok && !d->ready) ok = cudaEventCreateWithFlags(&d->ready, cudaEventDisableTiming) == cudaSuccess;
    if (ok) ok = grow_device(d->values, d->cap, std::max<std::size_t>(n, 1)) == cudaSuccess;
    if (ok && n > 0)
      ok = cudaMemcpyAsync(d->values, values, sizeof(double) * n, cudaMemcpyHostToDevice, d->stream) == cudaSuccess;
    if (ok) ok = cudaEventRecord(d->ready, d->stream) == cudaSuccess;
    if (!ok) break;
  }
  int now = -1;
  if (cudaGetDevice(&now) == cudaSuccess && now != current) cudaSetDevice(current);
  if (!ok) {
    (void)cudaGetLastError();
    keep.reset();  // (waits for what was issued)
    return nullptr;
  }
  return c;
}

void wait_direct_values_copy(const DirectValuesCopy& copy) {
  for (const DirectValuesCopy::OnDevice& d : copy.on)
    if (d.ready) cudaEventSynchronize(d.ready);  // (an event needs no current device)
  (void)cudaGetLastError();
}

namespace {

/// Environment variable `name` as a decimal integer in [lo, hi], or
/// `fallback` when it is unset, not such an integer, or out of range.
int env_int(const char* name, int lo, int hi, int fallback) {
  const char* e = std::getenv(name);
  if (!e || !*e) return fallback;
  char* end = nullptr;
  const long v = std::strtol(e, &end, 10);
  return *end == '\0' && v >= lo && v <= hi ? static_cast<int>(v) : fallback;
}

/// Whether environment variable `name` is set to exactly `value` (the
/// measurement knobs below are read once, at a codelet's first run).
bool env_is(const char* name, const char* value) {
  const char* e = std::getenv(name);
  return e && std::strcmp(e, value) == 0;
}

std::array<std::atomic<long long>, kTaskKinds> g_executions{};
std::atomic<long long> g_potrf_failures{0};
std::atomic<long long> g_front_failures{0};
std::atomic<long long> g_fused_launches{0};
std::atomic<long long> g_values_ahead_used{0};
std::atomic<long long> g_inline_subtrees{0};
std::atomic<long long> g_device_norms{0};  ///< DeviceNormRequest results delivered
std::atomic<long long> g_fused_ns{0};
std::array<std::atomic<long long>, 2> g_fused_part_ns{};

/// How the GPU factorises a diagonal block of k columns (the fully-summed
/// columns of a Cholesky front with its TRSM, or a tile's potrf):
/// gpu_potrf_panel (gpu_blas.hpp) when k ≤ kGpuPanelMaxK,
/// gpu_potrf_panel_rows (one launch, DPOTRF and TRSM together) when k ≤
/// kPanelRowsMaxK, cuSOLVER's DPOTRF (then the front's TRSM separately)
/// above. Measured on the H200 (gpu_blas_bench --panel, bench/README.md,
/// session 21): gpu_potrf_panel took 13.5 µs against 28.1 µs for a 700×12
/// front panel and 8.5 against 18.8 µs at 16×16, but 42 against 40 µs at
/// 1000×50, 49.5 against 40.8 µs at 1000×64 and 1841 against 843 µs at
/// 2048×2048: its 64-column diagonal blocks cost ~30 µs each. Session 34:
/// gpu_potrf_panel_rows 1.4–2.0× faster than DPOTRF + TRSM from k = 50 to
/// 255, slower than gpu_potrf_panel for k ≤ 13; lap3d 60³ 0.045–0.052 s
/// against 0.053–0.056 with STARFRONT_GPU_POTRF=panel (three rounds).
/// Session 40 (the rows kernel's update off its chain, all warps in its
/// solve): 2.0–2.9× faster than DPOTRF + TRSM from k = 50 to 255 and 1.25×
/// on a square 256 × 256 (tiles still take cuSOLVER). Measurement knobs, read once:
/// STARFRONT_GPU_POTRF=cusolver (always cuSOLVER), =panel (no rows kernel:
/// the choice before session 34), =rows (the rows kernel for every k ≤ its
/// limit, no gpu_potrf_panel; tiles then take cuSOLVER: GpuPotrf::prepare); STARFRONT_GPU_POTRF_PANEL_MAX=K (a decimal
/// integer > 0: gpu_potrf_panel up to K columns instead of kGpuPanelMaxK);
/// STARFRONT_GPU_POTRF_ROWS_MAX=K (a decimal integer ≥ 0, at most
/// kPanelRowsMaxK: the rows kernel up to K columns; 0 never).
constexpr idx_t kGpuPanelMaxK = 32;
enum class GpuFrontPotrf { panel, rows, cusolver };
GpuFrontPotrf gpu_front_potrf(idx_t k) {
  enum class Mode { standard, cusolver, panel, rows };
  static const Mode mode = [] {
    const char* e = std::getenv("STARFRONT_GPU_POTRF");
    const std::string v = e ? e : "";
    return v == "cusolver" ? Mode::cusolver : v == "panel" ? Mode::panel : v == "rows" ? Mode::rows : Mode::standard;
  }();
  static const long long panel_max = [] {
    const char* e = std::getenv("STARFRONT_GPU_POTRF_PANEL_MAX");
    const long long v = e ? std::atoll(e) : 0;
    return v > 0 ? v : static_cast<long long>(kGpuPanelMaxK);
  }();
  static const long long rows_max = [] {
    const char* e = std::getenv("STARFRONT_GPU_POTRF_ROWS_MAX");
    const long long v = e && *e ? std::atoll(e) : static_cast<long long>(kPanelRowsMaxK);
    return std::clamp<long long>(v, 0, kPanelRowsMaxK);
  }();
  switch (mode) {
    case Mode::cusolver: return GpuFrontPotrf::cusolver;
    case Mode::rows: return k <= rows_max ? GpuFrontPotrf::rows : GpuFrontPotrf::cusolver;
    case Mode::panel: return k <= panel_max ? GpuFrontPotrf::panel : GpuFrontPotrf::cusolver;
    case Mode::standard: break;
  }
  if (k <= panel_max) return GpuFrontPotrf::panel;
  return k <= rows_max ? GpuFrontPotrf::rows : GpuFrontPotrf::cusolver;
}

/// STARFRONT_GPU_FRONT_PROFILE=1 (measurement knob): the GPU Cholesky front
/// tasks time their steps with CUDA events (assembly, DPOTRF with its pivot
/// check, TRSM, SYRK) and wait for them, which serialises the worker's
/// stream; the sums per power-of-two bin of k (fully-summed columns) are
/// printed to stderr at exit. Milliseconds of GPU time, and of host time
/// spent queueing the steps. With gpu_potrf_panel or gpu_potrf_panel_rows the TRSM is counted in
/// the DPOTRF column, with the blocked factorisation (blocked_front_columns)
/// its TRSMs and updates too. The events (five per CUDA worker thread) are kept
/// until the process ends.
struct FrontProfile {
  static constexpr int kBins = 16, kSteps = 4;
  double host_ms[kBins] = {};  ///< CPU time of the calls that queue the steps
  std::mutex mu;
  long long fronts[kBins] = {};
  double m_sum[kBins] = {}, flops[kBins] = {}, ms[kBins][kSteps] = {};
  static bool enabled() {
    static const bool on = [] {
      const char* e = std::getenv("STARFRONT_GPU_FRONT_PROFILE");
      return e && std::string(e) == "1";
    }();
    return on;
  }
  void add(idx_t m, idx_t k, const float (&step)[kSteps], double host) {
    int b = 0;
    while (b + 1 < kBins && (idx_t{2} << b) <= k) ++b;
    const double mc = static_cast<double>(m - k), dk = static_cast<double>(k);
    std::lock_guard<std::mutex> g(mu);
    ++fronts[b];
    m_sum[b] += static_cast<double>(m);
    flops[b] += dk * dk * dk / 3.0 + mc * dk * dk + mc * mc * dk;
    for (int i = 0; i < kSteps; ++i) ms[b][i] += step[i];
    host_ms[b] += host;
  }
  ~FrontProfile() {
    long long any = 0;
    for (long long f : fronts) any += f;
    if (!any) return;
    std::fprintf(stderr, "gpu front profile (ms of GPU time, summed over the process):\n"
                         "| k | fronts | mean m | GFLOP | assembly | potrf+check | trsm | syrk | total | TFLOP/s | host queueing |\n"
                         "|---|---|---|---|---|---|---|---|---|---|---|\n");
    double tot[kSteps + 1] = {}, tf = 0, th = 0;
    long long tn = 0;
    for (int b = 0; b < kBins; ++b) {
      if (!fronts[b]) continue;
      double t = 0;
      for (int i = 0; i < kSteps; ++i) t += ms[b][i], tot[i] += ms[b][i];
      tot[kSteps] += t, tf += flops[b], tn += fronts[b], th += host_ms[b];
      std::fprintf(stderr, "| %d-%d | %lld | %.0f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f |\n", 1 << b,
                   (2 << b) - 1, fronts[b], m_sum[b] / static_cast<double>(fronts[b]), 1e-9 * flops[b], ms[b][0],
                   ms[b][1], ms[b][2], ms[b][3], t, t > 0 ? flops[b] / t * 1e-9 : 0.0, host_ms[b]);
    }
    std::fprintf(stderr, "| all | %lld | | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f |\n", tn, 1e-9 * tf,
                 tot[0], tot[1], tot[2], tot[3], tot[4], tot[4] > 0 ? tf / tot[4] * 1e-9 : 0.0, th);
  }
};
FrontProfile g_front_profile;

/// Device and pinned host buffers of one CUDA worker (one thread each),
/// grown on demand and never shrunk; freed when the worker thread ends.
/// Only potrf and the Cholesky front use them. A front in deferred-pivot
/// mode leaves DPOTRF and its pivot check queued on the stream, reading
/// `work` and `dev_info`: so whoever grows a buffer (grows()) synchronises
/// the worker's stream first, and no queued work uses a buffer when it is
/// replaced. The look-ahead's side stream (side_stream) uses `work`,
/// `dev_info`, `dev_info_part` and `rows_sync` too; front_cholesky makes
/// the worker's stream wait for it before the task's later steps, and on a
/// failure synchronises it, so the rule above still covers every use.
struct Workspace {
  double* work = nullptr;     ///< cuSOLVER potrf workspace
  int work_cap = 0;           ///< doubles
  double* backup = nullptr;   ///< the tile before potrf (n×n, packed)
  std::size_t backup_cap = 0; ///< doubles
  int* dev_info = nullptr;    ///< cuSOLVER's info flag (device)
  int* dev_info_part = nullptr;  ///< a block's info in a blocked front factorisation (device)
  int* host_info = nullptr;   ///< pinned
  double* host_diag = nullptr;  ///< pinned, the tile's diagonal after potrf
  std::size_t diag_cap = 0;
  int* rows_sync = nullptr;   ///< gpu_potrf_panel_rows's ticket and flags (kPanelRowsSyncInts, device)
  /// Fused subtree tasks (subtree()): the CB workspace of the internal fronts,
  /// the launch's status area (device) and its pinned host copy. Grown to the
  /// largest task seen, so that refactorisations allocate nothing.
  double* fused_ws = nullptr;
  std::size_t fused_ws_cap = 0;  ///< doubles
  FusedStatus* fused_status = nullptr;
  std::size_t fused_status_cap = 0;  ///< bytes
  FusedStatus* host_status = nullptr;  ///< pinned
  cudaEvent_t fused_events[3] = {nullptr, nullptr, nullptr};  ///< around the two launches
  /// STARFRONT_FUSED_TRACE=1 only (measurement knob): the kernel's trace
  /// stamps (FusedLaunch::trace) and their host copy.
  unsigned long long* fused_trace = nullptr;
  std::size_t fused_trace_cap = 0;  ///< words
  std::vector<std::uint64_t> host_trace;
  /// STARFRONT_FUSED_PHASES=1 only (measurement knob): FusedLaunch::phases.
  unsigned long long* fused_phases = nullptr;
  /// Subtree tasks without buffers (GraphTaskArgs::direct): A's values
  /// (copied by every such task) and the fused index blob of the graph
  /// `direct_build` (TaskGraph::build_id) whose index is at `direct_index`
  /// (uploaded when either changes).
  double* direct_values = nullptr;
  std::size_t direct_values_cap = 0;  ///< doubles
  char* direct_blob = nullptr;
  std::size_t direct_blob_cap = 0;  ///< bytes
  std::size_t direct_blob_bytes = 0;
  std::uint64_t direct_build = 0;
  const void* direct_index = nullptr;
  /// run_subtree_inline_cuda only: the calling thread's own stream on this
  /// workspace's device (StarPU's workers use theirs).
  cudaStream_t own_stream = nullptr;
  /// run_subtree_inline_cuda with a DeviceNormRequest: the row-wise index
  /// of A (NormRowsIndex `norm_id`, uploaded when it changes: col_ptr,
  /// row_ptr, pos, one allocation), the kernel's result word and its
  /// page-locked host copy.
  long long* norm_index = nullptr;
  std::size_t norm_index_cap = 0;  ///< long longs
  std::uint64_t norm_id = 0;
  unsigned long long* norm_out = nullptr;
  unsigned long long* host_norm = nullptr;
  /// Cholesky front tasks with a mapped panel (GraphTaskArgs::mapped_panel):
  /// the stream that copies L home (made at the first such task, registered
  /// for cuda_wait_front_panel_copies) and the event after which it may.
  cudaStream_t copy_stream = nullptr;
  cudaEvent_t panel_ready = nullptr;
  /// Recorded after the task's last use of its panel on the worker's
  /// stream (the CB update reads L): the copy stream waits for it before
  /// it frees the panel.
  cudaEvent_t panel_done = nullptr;
  /// Makes copy_stream, panel_ready and panel_done on the current device.
  cudaError_t reserve_copy_stream();
  /// The look-ahead of a blocked front factorisation (front_cholesky's
  /// factor_blocked): a stream of the device's greatest priority that
  /// factorises the next block of columns (DPOTRF and TRSM) while the
  /// worker's stream updates the trailing columns, with its own cuBLAS and
  /// cuSOLVER handles (a handle shared by two streams at once would share
  /// its workspace), and the events between the two streams: side_go
  /// (worker's stream to side_stream: the block is updated), side_done
  /// (side_stream to the worker's: the block is final).
  cudaStream_t side_stream = nullptr;
  cublasHandle_t side_blas = nullptr;
  cusolverDnHandle_t side_solver = nullptr;
  cudaEvent_t side_go = nullptr, side_done = nullptr;
  /// Makes the look-ahead's stream, handles and events on the current
  /// device (once). Returns a text naming the call that failed, or empty.
  std::string reserve_side() {
    if (side_done) return {};
    int lo = 0, hi = 0;
    if (cudaDeviceGetStreamPriorityRange(&lo, &hi) != cudaSuccess) return "cudaDeviceGetStreamPriorityRange";
    if (!side_stream && cudaStreamCreateWithPriority(&side_stream, cudaStreamNonBlocking, hi) != cudaSuccess) {
      side_stream = nullptr;
      return "cudaStreamCreateWithPriority";
    }
    if (!side_blas) {
      if (cublasCreate(&side_blas) != CUBLAS_STATUS_SUCCESS) {
        side_blas = nullptr;
        return "cublasCreate";
      }
      if (cublasSetStream(side_blas, side_stream) != CUBLAS_STATUS_SUCCESS) {
        cublasDestroy(side_blas);  // (never left on the default stream)
        side_blas = nullptr;
        return "cublasSetStream";
      }
    }
    if (!side_solver) {
      if (cusolverDnCreate(&side_solver) != CUSOLVER_STATUS_SUCCESS) {
        side_solver = nullptr;
        return "cusolverDnCreate";
      }
      if (cusolverDnSetStream(side_solver, side_stream) != CUSOLVER_STATUS_SUCCESS) {
        cusolverDnDestroy(side_solver);
        side_solver = nullptr;
        return "cusolverDnSetStream";
      }
    }
    if (!side_go && cudaEventCreateWithFlags(&side_go, cudaEventDisableTiming) != cudaSuccess) {
      side_go = nullptr;
      return "cudaEventCreateWithFlags";
    }
    if (cudaEventCreateWithFlags(&side_done, cudaEventDisableTiming) != cudaSuccess) {
      side_done = nullptr;
      return "cudaEventCreateWithFlags";
    }
    return {};
  }
  ~Workspace() {
    if (side_stream) cudaStreamSynchronize(side_stream);
    if (side_blas) cublasDestroy(side_blas);
    if (side_solver) cusolverDnDestroy(side_solver);
    if (side_go) cudaEventDestroy(side_go);
    if (side_done) cudaEventDestroy(side_done);
    if (side_stream) cudaStreamDestroy(side_stream);
    release_copy_stream();
    if (own_stream) cudaStreamDestroy(own_stream);
    cudaFree(direct_values);
    cudaFree(direct_blob);
    cudaFree(norm_index);
    cudaFree(norm_out);
    cudaFreeHost(host_norm);
    cudaFree(fused_phases);
    cudaFree(fused_trace);
    for (cudaEvent_t e : fused_events)
      if (e) cudaEventDestroy(e);
    cudaFree(work);
    cudaFree(backup);
    cudaFree(dev_info);
    cudaFree(dev_info_part);
    cudaFree(rows_sync);
    cudaFreeHost(host_info);
    cudaFreeHost(host_diag);
    cudaFree(fused_ws);
    cudaFree(fused_status);
    cudaFreeHost(host_status);
  }
  /// Ensures room for a fused task with `ws` doubles of CB workspace and
  /// nfronts fronts. The caller's stream has no queued fused work (each
  /// fused task synchronises before it returns), and cudaFree waits for the
  /// device anyway.
  cudaError_t reserve_fused(std::size_t ws, int nfronts) {
    cudaError_t e = cudaSuccess;
    if (!host_status && (e = cudaMallocHost(&host_status, sizeof(FusedStatus))) != cudaSuccess) return e;
    for (cudaEvent_t& ev : fused_events)
      if (!ev && (e = cudaEventCreate(&ev)) != cudaSuccess) return e;
    if ((e = grow_device(fused_ws, fused_ws_cap, std::max<std::size_t>(ws, 1))) != cudaSuccess) return e;
    const std::size_t sb = fused_status_bytes(nfronts);
    if (sb > fused_status_cap) {
      cudaFree(fused_status);
      fused_status = nullptr;
      fused_status_cap = 0;
      if ((e = cudaMalloc(&fused_status, sb)) != cudaSuccess) return e;
      fused_status_cap = sb;
    }
    return cudaSuccess;
  }
  /// Unregisters and destroys copy_stream (after its copies), panel_ready and panel_done.
  void release_copy_stream();
  /// True when reserve(n, lwork) would replace a buffer (the caller then
  /// waits for its stream first: deferred-mode fronts leave queued work that
  /// reads the workspace and the info flag).
  bool grows(int n, int lwork) const {
    return !dev_info || !dev_info_part || !host_info || !rows_sync || lwork > work_cap ||
           static_cast<std::size_t>(n) * static_cast<std::size_t>(n) > backup_cap ||
           static_cast<std::size_t>(n) > diag_cap;
  }
  /// Ensures room for a tile of order n with a cuSOLVER workspace of lwork doubles.
  cudaError_t reserve(int n, int lwork) {
    cudaError_t e = cudaSuccess;
    if (!dev_info && (e = cudaMalloc(&dev_info, sizeof(int))) != cudaSuccess) return e;
    if (!dev_info_part && (e = cudaMalloc(&dev_info_part, sizeof(int))) != cudaSuccess) return e;
    if (!host_info && (e = cudaMallocHost(&host_info, sizeof(int))) != cudaSuccess) return e;
    if (!rows_sync && (e = cudaMalloc(&rows_sync, sizeof(int) * kPanelRowsSyncInts)) != cudaSuccess) return e;
    if (lwork > work_cap) {
      cudaFree(work);
      work = nullptr;
      work_cap = 0;
      if ((e = cudaMalloc(&work, sizeof(double) * static_cast<std::size_t>(lwork))) != cudaSuccess) return e;
      work_cap = lwork;
    }
    const std::size_t nn = static_cast<std::size_t>(n) * static_cast<std::size_t>(n);
    if ((e = grow_device(backup, backup_cap, nn)) != cudaSuccess) return e;
    if (static_cast<std::size_t>(n) > diag_cap) {
      cudaFreeHost(host_diag);
      host_diag = nullptr;
      diag_cap = 0;
      if ((e = cudaMallocHost(&host_diag, sizeof(double) * static_cast<std::size_t>(n))) != cudaSuccess)
        return e;
      diag_cap = static_cast<std::size_t>(n);
    }
    return cudaSuccess;
  }
};

/// The copy streams of every Workspace (device, stream), for
/// cuda_wait_front_panel_copies.
std::mutex g_copy_streams_mutex;
std::vector<std::pair<int, cudaStream_t>> g_copy_streams;

cudaError_t Workspace::reserve_copy_stream() {
  cudaError_t e = cudaSuccess;
  if (!panel_ready && (e = cudaEventCreateWithFlags(&panel_ready, cudaEventDisableTiming)) != cudaSuccess) return e;
  if (!panel_done && (e = cudaEventCreateWithFlags(&panel_done, cudaEventDisableTiming)) != cudaSuccess) return e;
  if (copy_stream) return cudaSuccess;
  int device = 0;
  if ((e = cudaGetDevice(&device)) != cudaSuccess) return e;
  if ((e = cudaStreamCreateWithFlags(&copy_stream, cudaStreamNonBlocking)) != cudaSuccess) {
    copy_stream = nullptr;
    return e;
  }
  const std::lock_guard<std::mutex> lock(g_copy_streams_mutex);
  g_copy_streams.emplace_back(device, copy_stream);
  return cudaSuccess;
}

void Workspace::release_copy_stream() {
  if (copy_stream) {
    {
      const std::lock_guard<std::mutex> lock(g_copy_streams_mutex);
      for (std::size_t i = 0; i < g_copy_streams.size(); ++i)
        if (g_copy_streams[i].second == copy_stream) {
          g_copy_streams.erase(g_copy_streams.begin() + static_cast<std::ptrdiff_t>(i));
          break;
        }
    }
    cudaStreamSynchronize(copy_stream);
    cudaStreamDestroy(copy_stream);
    copy_stream = nullptr;
  }
  if (panel_ready) cudaEventDestroy(panel_ready);
  if (panel_done) cudaEventDestroy(panel_done);
  panel_ready = panel_done = nullptr;
}

/// The stream-ordered memory pool (cudaMallocFromPoolAsync) of the panels
/// of mapped Cholesky front tasks on the current device: made at its first
/// use and kept until the process ends, with no release threshold (freed
/// panels stay reserved, so refactorisations allocate nothing from the
/// driver; front_cholesky trims it when an allocation fails) and without
/// the pool's own cross-stream dependencies (a panel freed on a copy stream
/// is reused by another stream only once that queued free has been reached,
/// i.e. after its copies and its task's CB update, never by making that
/// stream wait for them). It grows to the most panels whose copies are in
/// flight at once.
cudaError_t front_panel_pool(cudaMemPool_t& out) {
  static std::mutex mutex;
  static std::vector<std::pair<int, cudaMemPool_t>> pools;
  int device = 0;
  cudaError_t e = cudaGetDevice(&device);
  if (e != cudaSuccess) return e;
  const std::lock_guard<std::mutex> lock(mutex);
  for (const auto& p : pools)
    if (p.first == device) {
      out = p.second;
      return cudaSuccess;
    }
  cudaMemPoolProps props{};
  props.allocType = cudaMemAllocationTypePinned;
  props.location.type = cudaMemLocationTypeDevice;
  props.location.id = device;
  cudaMemPool_t pool = nullptr;
  if ((e = cudaMemPoolCreate(&pool, &props)) != cudaSuccess) return e;
  std::uint64_t keep = std::numeric_limits<std::uint64_t>::max();
  int no = 0;
  if ((e = cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep)) != cudaSuccess ||
      (e = cudaMemPoolSetAttribute(pool, cudaMemPoolReuseAllowInternalDependencies, &no)) != cudaSuccess) {
    cudaMemPoolDestroy(pool);
    return e;
  }
  pools.emplace_back(device, pool);
  out = pool;
  return cudaSuccess;
}

/// Columns of L a mapped front panel copies home per cudaMemcpy2DAsync
/// (front_cholesky): each block goes from its diagonal down, so at most
/// this many columns' worth of the upper triangle (zeros) crosses the bus
/// with it, against the whole k×k block without the blocking.
constexpr idx_t kPanelCopyColumns = 256;

/// Whether the blocked factorisation runs with its look-ahead (front_cholesky):
/// STARFRONT_GPU_FRONT_LOOKAHEAD=0 turns it off (measurement knob), read once.
bool blocked_front_lookahead() {
  static const bool on = env_int("STARFRONT_GPU_FRONT_LOOKAHEAD", 0, 1, 1) != 0;
  return on;
}

/// Width of the column panels of the blocked factorisation's updates
/// (front_cholesky), a measurement knob: STARFRONT_GPU_FRONT_UPDATE_PANEL=P
/// (decimal, read once) splits an update of more than 2P fully-summed
/// columns into panels of P (a DSYRK of each panel's diagonal block, a
/// DGEMM of its rows below, instead of one DSYRK of the whole triangle and
/// one DGEMM). 0 (default): no split.
int blocked_front_update_panel() {
  static const int p = env_int("STARFRONT_GPU_FRONT_UPDATE_PANEL", 0, 1 << 20, 0);
  return p;
}

/// Whether the blocked factorisation (front_cholesky) factorises a block of
/// at most kPanelRowsMaxK columns with gpu_potrf_panel_rows: its DPOTRF and
/// the TRSM of all its rows below in one launch, instead of cuSOLVER's
/// DPOTRF and gpu_trsm_right_lower_trans (a dozen launches or more). Only
/// blocks that narrow take it (STARFRONT_GPU_FRONT_BLOCK ≤ 256, the last
/// block of a front, or the medium fronts' blocks of
/// STARFRONT_GPU_FRONT_MID_BLOCK: blocked_front_columns), and only where the device gives the kernel its shared
/// memory (gpu_potrf_panel_rows_fits). STARFRONT_GPU_FRONT_BLOCK_ROWS=0
/// turns it off (measurement knob), read once.
bool blocked_front_rows_kernel() {
  static const bool on = env_int("STARFRONT_GPU_FRONT_BLOCK_ROWS", 0, 1, 1) != 0;
  return on;
}

/// The blocked factorisation's timeline (front_cholesky with the look-ahead),
/// a measurement aid: STARFRONT_GPU_BLOCK_TRACE=K (decimal, read once) prints
/// to stderr, for every blocked front with at least K fully-summed columns,
/// one line a block of columns: when (µs after the front's first block was
/// handed over, by CUDA events) the side stream started and ended its
/// factorisation and TRSM, and when the worker's stream got it, ended the
/// next block's update and ended the trailing update. It synchronises the
/// worker's stream after each such front. 0 (default): off.
int blocked_front_trace_min_k() {
  static const int k = env_int("STARFRONT_GPU_BLOCK_TRACE", 0, 1 << 30, 0);
  return k;
}

/// Fully-summed columns from which a large front keeps blocks of 512 by
/// default (blocked_front_columns).
constexpr int kLargeFrontWideBlocksK = 8192;

/// Width of the column blocks of a blocked front factorisation
/// (front_cholesky), or 0 for none. front_cholesky asks only for a mapped
/// panel (its L copied home by the task) whose k fully-summed columns would
/// go to cuSOLVER's DPOTRF in one call (gpu_front_potrf: k > 256 by default,
/// any k under STARFRONT_GPU_POTRF=cusolver). Large fronts, k at least
/// STARFRONT_GPU_FRONT_BLOCK_MIN_K (default 2048), take blocks of
/// STARFRONT_GPU_FRONT_BLOCK columns (0 turns the blocking off). By default
/// 256 below k = kLargeFrontWideBlocksK where gpu_potrf_panel_rows takes
/// them (the DPOTRF and TRSM of a block in one launch), else 512. On the
/// H200, lap3d 60³'s root (k = 5361) took 4.5 ms by blocks of 256 against
/// 5.8 by blocks of 512, in both cases bound by the chain of blocks
/// (bench/README.md, session 42); larger roots, where the trailing updates
/// weigh more, were not measured with 256 and keep 512. Why blocks at all: the copy of L home then overlaps
/// the factorisation of the blocks after it instead of following the whole
/// DPOTRF (lap3d 60³'s 5361-column root: 115 MB, after the last task).
/// The blocked factorisation itself is slower than one DPOTRF: on the H200
/// lap3d 60³'s root took 6.55 ms of GPU time by blocks of 512 against 4.45
/// in one call, which the earlier copy about makes up for (root plus
/// write-back 8.0 against 8.4 ms; bench/README.md, session 35). With the
/// look-ahead (blocked_front_lookahead) the blocked root took 6.1 ms against
/// 7.0 without it and 4.2 in one call (one H200 call, sessions 37–38).
/// Medium fronts: a front with STARFRONT_GPU_FRONT_MID_MIN_K (default
/// 257) ≤ k < the large fronts' limit and k > B takes blocks of
/// B = STARFRONT_GPU_FRONT_MID_BLOCK columns (at most kPanelRowsMaxK;
/// default 256; 0 turns it off), but only where gpu_potrf_panel_rows takes
/// the blocks (blocked_front_rows_kernel and gpu_potrf_panel_rows_fits):
/// each block is factorised with the TRSM of all its rows below in one
/// launch, instead of one cuSOLVER DPOTRF and one
/// gpu_trsm_right_lower_trans for the whole front. Measured on the H200
/// (lap3d 60³, bench/README.md, session 40, after the rows kernel took its
/// updates off its chain): faster than without the blocks in 27 of 29
/// paired rounds over four calls (e.g. 0.0389–0.0401 s against
/// 0.0415–0.0458 in eight), and 39.9 against 48.0 ms of GPU time a
/// factorisation on one stream (session 39, with the rows kernel before:
/// no faster). All four knobs are decimal integers, read once; others are
/// ignored.
int blocked_front_columns(int k) {
  // (-1: the default, by k below.)
  static const int nb_env = env_int("STARFRONT_GPU_FRONT_BLOCK", 0, 1 << 20, -1);
  static const int min_k = env_int("STARFRONT_GPU_FRONT_BLOCK_MIN_K", 1, 1 << 30, 2048);
  static const int mid_nb = env_int("STARFRONT_GPU_FRONT_MID_BLOCK", 0, kPanelRowsMaxK, kPanelRowsMaxK);
  static const int mid_min_k = env_int("STARFRONT_GPU_FRONT_MID_MIN_K", 1, 1 << 30, 257);
  if (k >= min_k) {
    const bool narrow =
        k < kLargeFrontWideBlocksK && blocked_front_rows_kernel() && gpu_potrf_panel_rows_fits(kPanelRowsMaxK);
    const int nb = nb_env >= 0 ? nb_env : narrow ? kPanelRowsMaxK : 512;
    return nb > 0 && k > nb ? nb : 0;
  }
  if (mid_nb == 0 || k < mid_min_k || k <= mid_nb) return 0;
  return blocked_front_rows_kernel() && gpu_potrf_panel_rows_fits(mid_nb) ? mid_nb : 0;
}

/// The calling worker's workspace. One per StarPU worker (i.e. per CUDA
/// stream), not per thread: by default StarPU drives all the workers of a
/// device from one thread (STARPU_NWORKER_PER_CUDA > 1, one stream each),
/// and work queued on one worker's stream must not share buffers with
/// another's.
Workspace& local_workspace() {
  thread_local std::vector<std::unique_ptr<Workspace>> per_worker;
  const auto id = static_cast<std::size_t>(starpu_worker_get_id());
  if (per_worker.size() <= id) per_worker.resize(id + 1);
  if (!per_worker[id]) per_worker[id] = std::make_unique<Workspace>();
  return *per_worker[id];
}

const Block& block_of(const TaskGraph& G, const Task& t, idx_t a) {
  return G.blocks[G.accesses[t.acc_begin + a].block];
}

double* ptr_of(void* buffer) { return reinterpret_cast<double*>(STARPU_MATRIX_GET_PTR(buffer)); }

/// Leading dimension of access a's data on this worker (see graph_task_cuda).
int ld_of(const Block& b, void* buffer) {
  return b.offset >= 0 ? static_cast<int>(STARPU_MATRIX_GET_LD(buffer)) : static_cast<int>(b.ld);
}

std::string where(const TaskGraph& G, const Task& t) { return task_name(G, t); }

bool cuda_ok(cudaError_t e, const char* what, const TaskGraph& G, const Task& t, FactorContext& ctx) {
  if (e == cudaSuccess) return true;
  ctx.record_device_error(std::string(what) + ": " + cudaGetErrorString(e) + " in " + where(G, t));
  return false;
}

bool cublas_ok(cublasStatus_t e, const char* what, const TaskGraph& G, const Task& t, FactorContext& ctx) {
  if (e == CUBLAS_STATUS_SUCCESS) return true;
  ctx.record_device_error(std::string(what) + ": cuBLAS status " + std::to_string(static_cast<int>(e)) +
                          " in " + where(G, t));
  return false;
}

bool cusolver_ok(cusolverStatus_t e, const char* what, const TaskGraph& G, const Task& t,
                 FactorContext& ctx) {
  if (e == CUSOLVER_STATUS_SUCCESS) return true;
  ctx.record_device_error(std::string(what) + ": cuSOLVER status " +
                          std::to_string(static_cast<int>(e)) + " in " + where(G, t));
  return false;
}

/// The DPOTRF of a tile's or a front's k×k diagonal block (leading
/// dimension lda) on the worker's stream, as gpu_front_potrf(k) chooses:
/// gpu_potrf_panel or gpu_potrf_panel_rows on the whole m×k panel (DPOTRF
/// and TRSM together: `panel` is then true), or cuSOLVER's DPOTRF (its
/// handle set to the stream and its workspace size queried by prepare();
/// nothing of cuSOLVER's is touched on the other paths). All report through
/// LAPACK's info in device memory. Errors are recorded in ctx, and the
/// functions return false.
struct GpuPotrf {
  GpuFrontPotrf how = GpuFrontPotrf::cusolver;
  bool panel = false;  ///< the TRSM of the rows below is done too
  cusolverDnHandle_t h = nullptr;
  cudaStream_t stream = nullptr;
  int lwork = 0;  ///< cuSOLVER's workspace, doubles (0 for the panel paths)

  /// square: a tile's potrf (m = k), which keeps cuSOLVER above
  /// kGpuPanelMaxK (the rows kernel was slower there: 256 × 256, 116
  /// against 97 µs). The rows kernel also gives way to cuSOLVER on a device
  /// without the shared memory it needs (gpu_potrf_panel_rows_fits).
  bool prepare(int k, double* A, int lda, cudaStream_t s, const TaskGraph& G, const Task& t, FactorContext& ctx,
               bool square = false) {
    how = gpu_front_potrf(k);
    if (how == GpuFrontPotrf::rows && (square || !gpu_potrf_panel_rows_fits(k))) how = GpuFrontPotrf::cusolver;
    panel = how != GpuFrontPotrf::cusolver;
    stream = s;
    if (panel) return true;
    h = starpu_cusolverDn_get_local_handle();
    return cusolver_ok(cusolverDnSetStream(h, stream), "cusolverDnSetStream", G, t, ctx) &&
           cusolver_ok(cusolverDnDpotrf_bufferSize(h, CUBLAS_FILL_MODE_LOWER, k, A, lda, &lwork),
                       "cusolverDnDpotrf_bufferSize", G, t, ctx);
  }
  const char* name() const {
    return how == GpuFrontPotrf::panel  ? "gpu_potrf_panel"
           : how == GpuFrontPotrf::rows ? "gpu_potrf_panel_rows"
                                        : "cusolverDnDpotrf";
  }
  /// The cuBLAS handle is needed (by gpu_potrf_panel) only.
  bool needs_cublas() const { return how == GpuFrontPotrf::panel; }
  /// hb: the worker's cuBLAS handle on the stream (used by gpu_potrf_panel
  /// only); w: holds the workspace (reserved for lwork), the info flag and
  /// the rows kernel's sync words.
  bool run(cublasHandle_t hb, int m, int k, double* A, int lda, Workspace& w, const TaskGraph& G, const Task& t,
           FactorContext& ctx) const {
    if (how == GpuFrontPotrf::panel)
      return cublas_ok(gpu_potrf_panel(hb, m, k, A, lda, w.dev_info), "gpu_potrf_panel", G, t, ctx);
    if (how == GpuFrontPotrf::rows)
      return cublas_ok(gpu_potrf_panel_rows(stream, m, k, A, lda, w.dev_info, w.rows_sync), "gpu_potrf_panel_rows",
                       G, t, ctx);
    return cusolver_ok(cusolverDnDpotrf(h, CUBLAS_FILL_MODE_LOWER, k, A, lda, w.work, w.work_cap, w.dev_info),
                       "cusolverDnDpotrf", G, t, ctx);
  }
};

/// Diagonal tile: cuSOLVER DPOTRF (gpu_potrf_panel for tiles of at most
/// kGpuPanelMaxK columns: gpu_front_potrf), then the same pivot test as the CPU
/// (check_pivots on the diagonal copied to the host). Synchronises the
/// worker's stream (the info flag and the diagonal are needed now). A tile
/// that fails (info > 0 or the relative test) is recomputed on the host from
/// a copy taken before the factorisation, with the CPU code, so the error
/// names the same column and pivot as a CPU run.
cublasHandle_t local_cublas(const TaskGraph& G, const Task& t, FactorContext& ctx);

void potrf(const TaskGraph& G, const Task& t, void* buffers[], FactorContext& ctx) {
  const FrontPlan& P = *G.plan;
  const Block& b = block_of(G, t, 0);
  const int n = static_cast<int>(b.rows);
  if (n == 0) return;
  double* A = ptr_of(buffers[0]);
  const int lda = ld_of(b, buffers[0]);
  const idx_t first = P.symbolic->super_start[t.front] + b.col0;
  cudaStream_t stream = starpu_cuda_get_local_stream();
  GpuPotrf dpotrf;
  if (!dpotrf.prepare(n, A, lda, stream, G, t, ctx, /*square=*/true)) return;
  Workspace& w = local_workspace();
  if (w.grows(n, dpotrf.lwork) && !cuda_ok(cudaStreamSynchronize(stream), "cudaStreamSynchronize", G, t, ctx))
    return;
  if (!cuda_ok(w.reserve(n, dpotrf.lwork), "cudaMalloc", G, t, ctx)) return;
  const std::size_t row_bytes = sizeof(double) * static_cast<std::size_t>(n);
  if (!cuda_ok(cudaMemcpy2DAsync(w.backup, row_bytes, A, sizeof(double) * lda, row_bytes, n,
                                 cudaMemcpyDeviceToDevice, stream),
               "cudaMemcpy2DAsync", G, t, ctx))
    return;
  cublasHandle_t hb = dpotrf.needs_cublas() ? local_cublas(G, t, ctx) : nullptr;
  if ((dpotrf.needs_cublas() && !hb) || !dpotrf.run(hb, n, n, A, lda, w, G, t, ctx)) return;
  if (!cuda_ok(cudaMemcpyAsync(w.host_info, w.dev_info, sizeof(int), cudaMemcpyDeviceToHost, stream),
               "cudaMemcpyAsync", G, t, ctx) ||
      !cuda_ok(cudaMemcpy2DAsync(w.host_diag, sizeof(double), A, sizeof(double) * (lda + 1), sizeof(double),
                                 n, cudaMemcpyDeviceToHost, stream),
               "cudaMemcpy2DAsync", G, t, ctx) ||
      !cuda_ok(cudaStreamSynchronize(stream), "cudaStreamSynchronize", G, t, ctx))
    return;
  const int info = *w.host_info;
  if (info < 0) {
    ctx.record_device_error(std::string(dpotrf.name()) + ": invalid argument " + std::to_string(-info) + " in " +
                            where(G, t));
    return;
  }
  FrontResult r;
  // The diagonal is contiguous on the host: leading dimension 0 makes
  // check_pivots read element j at j·(0 + 1).
  if (info == 0 && check_pivots(P, first, ctx.values, w.host_diag, 0, n, ctx.pivot_tol, r) < 0) {
    r.state = FrontResult::State::done;
    ctx.record(r);
    return;
  }
  ++g_potrf_failures;
  std::vector<double> D(static_cast<std::size_t>(n) * static_cast<std::size_t>(n));
  if (!cuda_ok(cudaMemcpy(D.data(), w.backup, sizeof(double) * D.size(), cudaMemcpyDeviceToHost),
               "cudaMemcpy", G, t, ctx))
    return;
  ctx.record(potrf_tile_cpu(P, first, ctx.values, D.data(), n, n, ctx.pivot_tol));
}

/// This worker's cuBLAS handle (starpu_cublas_init), on this worker's stream; null on failure.
cublasHandle_t local_cublas(const TaskGraph& G, const Task& t, FactorContext& ctx) {
  cublasHandle_t h = starpu_cublas_get_local_handle();
  if (!cublas_ok(cublasSetStream(h, starpu_cuda_get_local_stream()), "cublasSetStream", G, t, ctx))
    return nullptr;
  return h;
}

void trsm(const TaskGraph& G, const Task& t, void* buffers[], FactorContext& ctx) {
  const Block& d = block_of(G, t, 0);
  const Block& x = block_of(G, t, 1);
  cublasHandle_t h = local_cublas(G, t, ctx);
  if (!h) return;
  cublas_ok(gpu_trsm_right_lower_trans(h, static_cast<int>(x.rows), static_cast<int>(x.cols), ptr_of(buffers[0]),
                                       ld_of(d, buffers[0]), ptr_of(buffers[1]), ld_of(x, buffers[1]),
                                       gpu_trsm_options()),
            "gpu_trsm_right_lower_trans", G, t, ctx);
}

void syrk(const TaskGraph& G, const Task& t, void* buffers[], FactorContext& ctx) {
  const Block& a = block_of(G, t, 0);
  const Block& c = block_of(G, t, 1);
  cublasHandle_t h = local_cublas(G, t, ctx);
  if (!h) return;
  const double* A = ptr_of(buffers[0]);
  const int lda = ld_of(a, buffers[0]);
  cublas_ok(gpu_syrk_lower_update(h, static_cast<int>(c.rows), static_cast<int>(a.cols), A, lda, A, lda,
                                  ptr_of(buffers[1]), ld_of(c, buffers[1]), gpu_syrk_method()),
            "gpu_syrk_lower_update", G, t, ctx);
}

void gemm(const TaskGraph& G, const Task& t, void* buffers[], FactorContext& ctx) {
  const Block& a = block_of(G, t, 0);
  const Block& b = block_of(G, t, 1);
  const Block& c = block_of(G, t, 2);
  const double minus_one = -1.0, one = 1.0;
  cublasHandle_t h = local_cublas(G, t, ctx);
  if (!h) return;
  cublas_ok(cublasDgemm(h, CUBLAS_OP_N, CUBLAS_OP_T, static_cast<int>(c.rows), static_cast<int>(c.cols),
                        static_cast<int>(a.cols), &minus_one, ptr_of(buffers[0]), ld_of(a, buffers[0]),
                        ptr_of(buffers[1]), ld_of(b, buffers[1]), &one, ptr_of(buffers[2]),
                        ld_of(c, buffers[2])),
            "cublasDgemm", G, t, ctx);
}

/// Device pointer of the a-th extra (vector) buffer of a task with n graph accesses.
template <class T>
const T* extra_of(void* buffers[], idx_t n, idx_t a) {
  return reinterpret_cast<const T*>(STARPU_VECTOR_GET_PTR(buffers[n + a]));
}

/// Tile index of front position pos in tiled front s.
idx_t tile_of(const TaskGraph& G, idx_t s, idx_t pos) {
  const idx_t* b = &G.bounds[G.bounds_ptr[s]];
  return static_cast<idx_t>(std::upper_bound(b, b + G.ntiles(s) + 1, pos) - b) - 1;
}

/// Block column J of tiled front s: zero its tiles, add A's entries. Extra
/// buffers after the graph's accesses: A's values, the index entries.
void assemble(const TaskGraph& G, idx_t ti, void* buffers[], const GpuAssemblyIndex& X, FactorContext& ctx) {
  const Task& t = G.tasks[ti];
  const idx_t n = t.acc_end - t.acc_begin;
  const double* values = extra_of<double>(buffers, n, 0);
  const GpuAssembleEntry* entries = extra_of<GpuAssembleEntry>(buffers, n, 1);
  const int cols = static_cast<int>(G.bound(t.front, t.j + 1) - G.bound(t.front, t.j));
  cudaStream_t stream = starpu_cuda_get_local_stream();
  for_each_assemble_window(G, X, ti, kGpuAssemblyWindow, [&](idx_t a0, idx_t a1, idx_t e0, idx_t e1) {
    if (ctx.failed) return;
    GpuAssembleLaunch p;
    p.ntiles = static_cast<int>(a1 - a0);
    p.cols = cols;
    p.tile0 = static_cast<int>(a0);
    for (idx_t a = a0; a < a1; ++a) {
      const Block& b = block_of(G, t, a);
      p.tile[a - a0] = ptr_of(buffers[a]);
      p.ld[a - a0] = ld_of(b, buffers[a]);
      p.rows[a - a0] = static_cast<int>(b.rows);
    }
    p.values = values;
    p.entries = entries + e0;
    p.nentries = e1 - e0;
    cuda_ok(launch_gpu_assemble(p, stream), "assemble kernel launch", G, t, ctx);
  });
}

/// Child CB → parent block column J. Extra buffers after the graph's
/// accesses: the index columns, the child row map.
void extend_add(const TaskGraph& G, idx_t ti, void* buffers[], const GpuAssemblyIndex& X, FactorContext& ctx) {
  const Task& t = G.tasks[ti];
  const GpuTaskIndex& x = X.task[ti];
  const idx_t n = t.acc_end - t.acc_begin, s = t.front;
  const idx_t ncb = G.cb_ptr[t.child + 1] - G.cb_ptr[t.child];
  const GpuExtendColumn* columns = extra_of<GpuExtendColumn>(buffers, n, 0);
  const GpuRowTarget* rowmap = extra_of<GpuRowTarget>(buffers, n, 1);
  std::vector<idx_t> dst_access(static_cast<std::size_t>(G.ntiles(s)), -1);  // tile row I -> access
  for (idx_t a = ncb; a < n; ++a) dst_access[static_cast<std::size_t>(tile_of(G, s, block_of(G, t, a).row0))] = a;
  cudaStream_t stream = starpu_cuda_get_local_stream();
  for_each_extend_add_window(G, X, ti, kGpuAssemblyWindow,
                             [&](idx_t I0, idx_t I1, idx_t k0, idx_t k1, idx_t c0, idx_t c1) {
    if (ctx.failed || c1 == c0) return;
    GpuExtendAddLaunch p;
    p.dst0 = static_cast<int>(I0);
    p.ndst = static_cast<int>(I1 - I0);
    for (idx_t I = I0; I < I1; ++I) {
      const idx_t a = dst_access[static_cast<std::size_t>(I)];
      p.dst[I - I0] = a < 0 ? nullptr : ptr_of(buffers[a]);
      p.dld[I - I0] = a < 0 ? 0 : ld_of(block_of(G, t, a), buffers[a]);
    }
    p.src0 = static_cast<int>(k0);
    for (idx_t k = k0; k < k1; ++k) {
      const idx_t a = X.aux[x.aux + k];
      p.src[k - k0] = ptr_of(buffers[a]);
      p.sld[k - k0] = ld_of(block_of(G, t, a), buffers[a]);
    }
    p.columns = columns + c0;
    p.ncolumns = c1 - c0;
    p.rowmap = rowmap;
    cuda_ok(launch_gpu_extend_add(p, stream), "extend_add kernel launch", G, t, ctx);
  });
}

/// Device buffers of a subtree task without StarPU buffers
/// (GraphTaskArgs::direct), on the worker's stream: A's values, from the
/// executor's copy `a_ahead` for this device when there is one (the stream
/// waits for its event), else copied from the host now, and the blob of X
/// (once per graph and
/// worker; X.blob is host memory that the copy has read when
/// cudaMemcpyAsync returns). Returns false after recording the error.
bool direct_inputs(const TaskGraph& G, const Task& t, const FusedSubtreeIndex& X, FactorContext& ctx,
                   const DirectValuesCopy* a_ahead, Workspace& w, cudaStream_t stream, const double** values,
                   const char** blob) {
  // Measurement knob: STARFRONT_FUSED_MAPPED_VALUES=1 lets the kernel read
  // A's values across the bus where they are (page-locked host memory the
  // device addresses) instead of copying them first, when the executor has
  // not copied them (STARFRONT_FUSED_VALUES_AHEAD=0, or pageable values).
  static const bool mapped_values = env_is("STARFRONT_FUSED_MAPPED_VALUES", "1");
  int device = -1;
  const DirectValuesCopy::OnDevice* ahead =
      a_ahead && cudaGetDevice(&device) == cudaSuccess ? a_ahead->find(device) : nullptr;
  if (ahead) {
    // Copied by the executor before the submission (issue_direct_values).
    if (!cuda_ok(cudaStreamWaitEvent(stream, ahead->ready, 0), "cudaStreamWaitEvent", G, t, ctx)) return false;
    *values = ahead->values;
  } else if (mapped_values && cuda_host_pointer_usable(ctx.values)) {
    *values = ctx.values;
  } else {
    const std::size_t nnz = static_cast<std::size_t>(std::max<idx_t>(G.plan->nnz_a, 1));
    if (!cuda_ok(grow_device(w.direct_values, w.direct_values_cap, nnz), "cudaMalloc", G, t, ctx)) return false;
    if (G.plan->nnz_a > 0 &&
        !cuda_ok(cudaMemcpyAsync(w.direct_values, ctx.values,
                                 sizeof(double) * static_cast<std::size_t>(G.plan->nnz_a), cudaMemcpyHostToDevice,
                                 stream),
                 "cudaMemcpyAsync", G, t, ctx))
      return false;
    *values = w.direct_values;
  }
  const std::size_t bytes = sizeof(std::uint64_t) * X.blob.size();
  if (w.direct_index != &X || w.direct_build != G.build_id || w.direct_blob_bytes != bytes) {
    w.direct_index = nullptr;  // until the upload succeeds
    if (!cuda_ok(grow_device(w.direct_blob, w.direct_blob_cap, bytes), "cudaMalloc", G, t, ctx)) return false;
    if (!cuda_ok(cudaMemcpyAsync(w.direct_blob, X.blob.data(), bytes, cudaMemcpyHostToDevice, stream),
                 "cudaMemcpyAsync", G, t, ctx))
      return false;
    w.direct_index = &X;
    w.direct_build = G.build_id;
    w.direct_blob_bytes = bytes;
  }
  *blob = w.direct_blob;
  if (ahead) ++g_values_ahead_used;
  return true;
}

/// Queues the row-wise ‖A‖∞ kernel (norm_rows.hpp) on `stream` over A's
/// values on the device, uploading the index X first when w holds another
/// one, and the copy of its result into w.host_norm; sets req.launched.
/// A CUDA error is cleared and leaves req.launched false.
void queue_device_norm(const NormRowsIndex& X, const double* values, Workspace& w, cudaStream_t stream,
                       DeviceNormRequest& req) {
  const std::size_t n = static_cast<std::size_t>(X.n), np = X.pos.size();
  const std::size_t words = 2 * (n + 1) + std::max<std::size_t>(np, 1);
  auto fail = [] { (void)cudaGetLastError(); };
  if (!w.host_norm && cudaMallocHost(&w.host_norm, sizeof(unsigned long long)) != cudaSuccess) {
    w.host_norm = nullptr;
    return fail();
  }
  if (!w.norm_out && cudaMalloc(&w.norm_out, sizeof(unsigned long long)) != cudaSuccess) {
    w.norm_out = nullptr;
    return fail();
  }
  if (w.norm_id != X.id) {
    w.norm_id = 0;  // until the upload succeeds
    static_assert(sizeof(idx_t) == sizeof(long long), "the kernel reads idx_t as long long");
    if (grow_device(w.norm_index, w.norm_index_cap, words) != cudaSuccess ||
        cudaMemcpyAsync(w.norm_index, X.col_ptr.data(), sizeof(long long) * (n + 1), cudaMemcpyHostToDevice,
                        stream) != cudaSuccess ||
        cudaMemcpyAsync(w.norm_index + n + 1, X.row_ptr.data(), sizeof(long long) * (n + 1),
                        cudaMemcpyHostToDevice, stream) != cudaSuccess ||
        (np > 0 && cudaMemcpyAsync(w.norm_index + 2 * (n + 1), X.pos.data(), sizeof(long long) * np,
                                   cudaMemcpyHostToDevice, stream) != cudaSuccess))
      return fail();
    w.norm_id = X.id;
  }
  if (cudaMemsetAsync(w.norm_out, 0, sizeof(unsigned long long), stream) != cudaSuccess ||
      launch_symmetric_norm_rows(static_cast<long long>(n), w.norm_index, w.norm_index + n + 1,
                                 w.norm_index + 2 * (n + 1), values, w.norm_out, stream) != cudaSuccess ||
      cudaMemcpyAsync(w.host_norm, w.norm_out, sizeof(unsigned long long), cudaMemcpyDeviceToHost, stream) !=
          cudaSuccess)
    return fail();
  req.launched = true;
}

/// A fused subtree task in one kernel launch (fused_subtree_kernel.hpp).
/// Buffers: the panel block, the root's CB slot when the root has a CB, then
/// A's values and the uploaded index blob (gpu_assembly_cache.hpp).
/// mapped_panel (GraphTaskArgs::mapped_panel): when set, the task has no
/// panel buffer (the others move up one) and L is written there
/// (page-locked host memory the device addresses). direct
/// (GraphTaskArgs::direct): no buffer at all (direct_inputs). Waits
/// for the kernel (the failure status is needed now, so that later tasks
/// skip their work as after a CPU failure) and records the outcome.
/// w and stream: the workspace and stream to work with (the worker's, or
/// the calling thread's: run_subtree_inline_cuda); between (may be null):
/// called once the kernel is queued, before the wait for it.
void subtree_on(const TaskGraph& G, idx_t ti, void* buffers[], const FusedSubtreeIndex& X, FactorContext& ctx,
                double* mapped_panel, bool direct, const DirectValuesCopy* values_ahead, Workspace& w,
                cudaStream_t stream, const std::function<void()>* between) {
  const Task& t = G.tasks[ti];
  const FrontPlan& P = *G.plan;
  const FusedTaskIndex& fi = X.task[ti];
  const idx_t n = t.acc_end - t.acc_begin;
  const bool has_cb = P.cb_order(t.front) > 0;
  if (n != (has_cb ? 2 : 1) || fi.nfronts <= 0 || fi.root != t.front || (direct && (has_cb || !mapped_panel))) {
    ctx.record_device_error("fused subtree index does not match " + task_name(G, t));
    return;
  }
  if (!cuda_ok(w.reserve_fused(static_cast<std::size_t>(fi.workspace), static_cast<int>(fi.nfronts)), "cudaMalloc",
               G, t, ctx))
    return;
  // A mapped panel has no buffer: the root's CB and the extras move up one.
  const idx_t skip = mapped_panel ? 1 : 0;
  const char* blob = nullptr;
  const double* values = nullptr;
  if (direct) {
    // (Its host time counts in cuda_fused_seconds, with the kernel's.)
    const auto ti = std::chrono::steady_clock::now();
    if (!direct_inputs(G, t, X, ctx, values_ahead, w, stream, &values, &blob)) return;
    g_fused_ns += std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - ti).count();
  } else {
    blob = extra_of<char>(buffers, n - skip, 1);
    values = extra_of<double>(buffers, n - skip, 0);
  }
  FusedLaunch p;
  p.fronts = reinterpret_cast<const FusedFront*>(blob + X.off_fronts) + fi.front_begin;
  p.children = reinterpret_cast<const FusedChild*>(blob + X.off_children);
  p.rel = reinterpret_cast<const std::int32_t*>(blob + X.off_rel);
  p.entries = reinterpret_cast<const FusedEntry*>(blob + X.off_entries);
  p.diag = reinterpret_cast<const std::int64_t*>(blob + X.off_diag);
  p.values = values;
  p.panel = mapped_panel ? mapped_panel : ptr_of(buffers[0]);
  p.root_cb = has_cb ? ptr_of(buffers[1 - skip]) : nullptr;
  p.workspace = w.fused_ws;
  p.status = w.fused_status;
  p.nfronts = static_cast<int>(fi.nfronts);
  p.max_order = static_cast<int>(fi.max_order);
  p.nsmall = static_cast<int>(fi.nsmall);
  p.max_order_small = static_cast<int>(fi.max_order_small);
  p.pivot_tol = ctx.pivot_tol;
  // Measurement knobs (read once): STARFRONT_FUSED_EARLY=0 runs each front's
  // prologue after the wait for all its children, then their extend-add
  // (FusedLaunch::early); STARFRONT_FUSED_TRACE=1 takes
  // the kernel's trace and prints its summary to stderr at every execution
  // (=2: also each front of its critical chain);
  // STARFRONT_FUSED_SLEEP_NS: the flag polling's back-off (default 64 ns);
  // STARFRONT_FUSED_LOOKAHEAD=0: factor() without its look-ahead;
  // STARFRONT_FUSED_OVERLAP=0: the large fronts' launch after the small
  // fronts' launch has completed, not overlapping it;
  // STARFRONT_FUSED_PHASES=1: cycles of factor()'s steps in the large launch
  // (FusedLaunch::phases), printed to stderr at every execution;
  // STARFRONT_FUSED_SNAKE=0: FusedLaunch::snake off;
  // STARFRONT_FUSED_FENCES=1: FusedLaunch::fences on;
  // STARFRONT_FUSED_FLAT_ADD=0: FusedLaunch::flat_add off.
  static const bool early = !env_is("STARFRONT_FUSED_EARLY", "0");
  static const bool trace_chain = env_is("STARFRONT_FUSED_TRACE", "2");
  static const bool trace = env_is("STARFRONT_FUSED_TRACE", "1") || trace_chain;
  static const unsigned poll_sleep_ns = [] {
    const char* e = std::getenv("STARFRONT_FUSED_SLEEP_NS");
    return e && *e ? static_cast<unsigned>(std::strtoul(e, nullptr, 10)) : 64u;
  }();
  static const bool lookahead = !env_is("STARFRONT_FUSED_LOOKAHEAD", "0");
  static const bool overlap = !env_is("STARFRONT_FUSED_OVERLAP", "0");
  static const bool snake = !env_is("STARFRONT_FUSED_SNAKE", "0");
  static const bool fences = env_is("STARFRONT_FUSED_FENCES", "1");
  static const bool phases = env_is("STARFRONT_FUSED_PHASES", "1");
  static const bool flat_add = !env_is("STARFRONT_FUSED_FLAT_ADD", "0");
  // STARFRONT_FUSED_LARGE=TxC: the large launch's threads per block and
  // trailing-update columns (FusedLaunch::large_threads / large_cols).
  static const std::pair<int, int> large = [] {
    const char* e = std::getenv("STARFRONT_FUSED_LARGE");
    int t = kFusedLargeThreads, c = kTrailColsLarge;
    if (e && *e && std::sscanf(e, "%dx%d", &t, &c) != 2) t = kFusedLargeThreads, c = kTrailColsLarge;
    return std::make_pair(t, c);
  }();
  // STARFRONT_FUSED_SMALL_BLOCKS=8: the small launch compiled for eight
  // blocks a multiprocessor (FusedLaunch::small_min_blocks; 6 otherwise).
  static const int small_blocks = env_is("STARFRONT_FUSED_SMALL_BLOCKS", "8") ? 8 : 6;
  p.early = early;
  p.large_threads = large.first;
  p.large_cols = large.second;
  p.small_min_blocks = small_blocks;
  p.lookahead = lookahead;
  p.overlap_launches = overlap;
  p.snake = snake;
  p.poll_sleep_ns = poll_sleep_ns;
  p.fences = fences;
  p.flat_add = flat_add;
  const std::size_t trace_words = static_cast<std::size_t>(kFusedTracePoints) * static_cast<std::size_t>(fi.nfronts);
  if (trace && !cuda_ok(grow_device(w.fused_trace, w.fused_trace_cap, trace_words), "cudaMalloc", G, t, ctx)) return;
  p.trace = trace ? w.fused_trace : nullptr;
  if (phases) {
    constexpr std::size_t bytes = sizeof(unsigned long long) * kFusedPhaseWords;
    if ((!w.fused_phases && !cuda_ok(cudaMalloc(&w.fused_phases, bytes), "cudaMalloc", G, t, ctx)) ||
        !cuda_ok(cudaMemsetAsync(w.fused_phases, 0, bytes, stream), "cudaMemsetAsync", G, t, ctx))
      return;
    p.phases = w.fused_phases;
  }
  int launches = 0;
  const auto t0 = std::chrono::steady_clock::now();
  if (!cuda_ok(launch_fused_subtree(p, stream, &launches, w.fused_events), "fused subtree kernel launch", G, t, ctx))
    return;
  g_fused_launches += launches;
  // The stream synchronisation also completes the fronts' L write-outs,
  // which follow their completion flags (fused_subtree.cu: finish_front).
  if (!cuda_ok(cudaMemcpyAsync(w.host_status, w.fused_status, sizeof(FusedStatus), cudaMemcpyDeviceToHost, stream),
               "cudaMemcpyAsync", G, t, ctx))
    return;
  // ‖A‖∞ from the values on the device, after the fused kernel on the same
  // stream (a few µs), for a caller that would otherwise run the host pass
  // while the kernel runs (DeviceNormRequest). Any failure here leaves the
  // request unlaunched: the host pass runs instead.
  DeviceNormRequest* norm = between && direct ? ctx.device_norm : nullptr;
  if (norm && norm->index) queue_device_norm(*norm->index, values, w, stream, *norm);
  if (between && *between) (*between)();
  if (!cuda_ok(cudaStreamSynchronize(stream), "fused subtree kernel", G, t, ctx)) return;
  if (norm && norm->launched) {
    double v;
    std::memcpy(&v, w.host_norm, sizeof v);
    norm->norm = v;
    ++g_device_norms;
  }
  g_fused_ns += std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0).count();
  float ms_small = 0.0f, ms_large = 0.0f;
  if (overlap && p.nsmall > 0 && p.nfronts > p.nsmall) {
    // Overlapping launches: no event between them; their GPU time counts
    // as the second part's (the trace, STARFRONT_FUSED_TRACE=1, splits it).
    if (cudaEventElapsedTime(&ms_large, w.fused_events[0], w.fused_events[2]) == cudaSuccess)
      g_fused_part_ns[1] += static_cast<long long>(1e6 * ms_large);
  } else if (cudaEventElapsedTime(&ms_small, w.fused_events[0], w.fused_events[1]) == cudaSuccess &&
             cudaEventElapsedTime(&ms_large, w.fused_events[1], w.fused_events[2]) == cudaSuccess) {
    g_fused_part_ns[0] += static_cast<long long>(1e6 * ms_small);
    g_fused_part_ns[1] += static_cast<long long>(1e6 * ms_large);
  }
  if (trace) {
    w.host_trace.resize(trace_words);
    if (!cuda_ok(cudaMemcpy(w.host_trace.data(), w.fused_trace, sizeof(std::uint64_t) * trace_words,
                            cudaMemcpyDeviceToHost),
                 "cudaMemcpy", G, t, ctx))
      return;
    const FusedTraceSummary S = fused_trace_summary(X, ti, w.host_trace.data(), early);
    std::fprintf(stderr,
                 "fused trace %s (early %d): span small %.1f us, large %.1f us; critical chain %lld fronts, "
                 "%.1f us waiting at the launch boundary: "
                 "prologue %.1f, late start %.1f, prologue overrun %.1f, lag %.1f, extend-add %.1f, factor %.1f, "
                 "write %.1f us; per front (small | large): "
                 "prologue %.2f | %.2f, extend-add %.2f | %.2f, factor %.2f | %.2f, write %.2f | %.2f us "
                 "(%lld | %lld fronts)\n",
                 task_name(G, t).c_str(), early ? 1 : 0, 1e-3 * S.span[0], 1e-3 * S.span[1],
                 static_cast<long long>(S.fronts), 1e-3 * S.boundary, 1e-3 * S.own, 1e-3 * S.late_start,
                 1e-3 * S.overrun, 1e-3 * S.lag, 1e-3 * S.extend_add, 1e-3 * S.factor,
                 1e-3 * S.write, 1e-3 * S.mean_own[0], 1e-3 * S.mean_own[1], 1e-3 * S.mean_extend_add[0],
                 1e-3 * S.mean_extend_add[1], 1e-3 * S.mean_factor[0], 1e-3 * S.mean_factor[1],
                 1e-3 * S.mean_write[0], 1e-3 * S.mean_write[1], static_cast<long long>(S.traced[0]),
                 static_cast<long long>(S.traced[1]));
    // STARFRONT_FUSED_TRACE=2: each front of the chain, from the last one
    // published (the root unless it was skipped) down.
    if (trace_chain)
      for (const FusedChainStep& c : S.chain)
        std::fprintf(stderr,
                     "fused chain %s: ticket %lld (%s) m %lld k %lld children %lld: late start %.2f, overrun %.2f, "
                     "lag %.2f, extend-add %.2f, factor %.2f, write %.2f us\n",
                     task_name(G, t).c_str(), static_cast<long long>(c.ticket), c.ticket < fi.nsmall ? "small" : "large",
                     static_cast<long long>(c.m), static_cast<long long>(c.k), static_cast<long long>(c.children),
                     1e-3 * c.late_start, 1e-3 * c.overrun, 1e-3 * c.lag, 1e-3 * c.extend_add, 1e-3 * c.factor, 1e-3 * c.write);
  }
  if (phases) {
    unsigned long long h[kFusedPhaseWords];
    int khz = 0, dev = 0;
    if (!cuda_ok(cudaMemcpy(h, w.fused_phases, sizeof h, cudaMemcpyDeviceToHost), "cudaMemcpy", G, t, ctx)) return;
    cudaGetDevice(&dev);
    cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, dev);
    const double nf = h[kPhaseFronts] ? static_cast<double>(h[kPhaseFronts]) : 1.0;
    const double nb = h[kPhaseBlocks] ? static_cast<double>(h[kPhaseBlocks]) : 1.0;
    auto per = [&](int i) { return static_cast<double>(h[kPhaseRole0 + i]) / nb; };
    std::fprintf(stderr,
                 "fused phases %s: %llu large fronts, %llu blocks of columns; cycles (max clock %.2f GHz): factor "
                 "%.0f a front, of which first diagonal block %.0f; a block, thread 0 | thread 32: row solve %.0f | "
                 "%.0f, wait %.0f | %.0f, next step %.0f (update of the next diagonal block %.0f) | %.0f, wait "
                 "%.0f | %.0f\n",
                 task_name(G, t).c_str(), h[kPhaseFronts], h[kPhaseBlocks], 1e-6 * khz,
                 static_cast<double>(h[kPhaseFactor]) / nf, static_cast<double>(h[kPhaseFirstDiag]) / nf, per(0),
                 per(4), per(1), per(5), per(2) + static_cast<double>(h[kPhaseUpdateNext]) / nb,
                 static_cast<double>(h[kPhaseUpdateNext]) / nb, per(6), per(3), per(7));
  }
  const FusedStatus st = *w.host_status;
  FrontResult r;
  if (st.fail_key != 0) {
    r.state = FrontResult::State::failed;
    r.failed_column = static_cast<idx_t>((1ULL << 62) - st.fail_key);
    // The failed front's ticket: the one whose pivot columns hold the column.
    for (idx_t q = 0; q < fi.nfronts; ++q) {
      const FusedFront& f = X.fronts[fi.front_begin + q];
      if (r.failed_column >= f.col0 && r.failed_column < f.col0 + f.k) {
        cuda_ok(cudaMemcpy(&r.pivot, fused_pivots(w.fused_status, p.nfronts) + q, sizeof(double),
                           cudaMemcpyDeviceToHost),
                "cudaMemcpy", G, t, ctx);
        break;
      }
    }
  } else {
    r.state = FrontResult::State::done;
    std::uint64_t bits = ~static_cast<std::uint64_t>(st.ratio_key);
    double ratio = std::numeric_limits<double>::infinity();
    if (st.ratio_key != 0) std::memcpy(&ratio, &bits, sizeof ratio);
    r.min_pivot_ratio = ratio;
  }
  ctx.record(r);
}

/// A fused subtree task on a StarPU CUDA worker: subtree_on with the
/// worker's workspace and stream.
void subtree(const TaskGraph& G, idx_t ti, void* buffers[], const FusedSubtreeIndex& X, FactorContext& ctx,
             double* mapped_panel, bool direct, const DirectValuesCopy* values_ahead) {
  subtree_on(G, ti, buffers, X, ctx, mapped_panel, direct, values_ahead, local_workspace(),
             starpu_cuda_get_local_stream(), nullptr);
}

/// Checks the buffers of the untiled front task t (front s = t.front, order
/// m, k fully-summed columns, mc = m − k) and queues on `stream` its assembly:
/// the panel is one contiguous block of Lx (m·k doubles seen as an (m·k)×1
/// matrix: task_graph.cpp's panel_block), laid out m×k with leading dimension
/// m; then the CB slot when m > k, then one CB per child (child_list order),
/// then the extra vectors (A's values, a_src, a_dst, rel). A's entries are
/// added and each child's CB extend-added by the kernels of
/// front_ldlt_kernels.hpp, in the CPU's summation order. Sets L (the panel)
/// and cb (nullptr when m == k). device_panel (mapped panels only,
/// GraphTaskArgs::mapped_panel): the task has no panel buffer (its other
/// buffers start at buffers[0]) and the panel is assembled there (m·k
/// doubles of device memory). Returns false after recording a device error
/// in ctx (`method` names the task in it: "Cholesky" or "LDLT").
bool assemble_untiled_front(const TaskGraph& G, const Task& t, void* buffers[], const char* method,
                            cudaStream_t stream, double*& L, double*& cb, FactorContext& ctx,
                            double* device_panel = nullptr) {
  const FrontPlan& P = *G.plan;
  const idx_t s = t.front, m = P.front_order(s), k = P.ncols(s), mc = m - k;
  const idx_t nacc = t.acc_end - t.acc_begin;
  const idx_t nchild = P.child_ptr[s + 1] - P.child_ptr[s];
  const idx_t skip = device_panel ? 1 : 0;  // buffers[a - skip] holds access a
  if (nacc != 1 + (mc > 0 ? 1 : 0) + nchild || block_of(G, t, 0).rows != m * k ||
      (!device_panel && static_cast<idx_t>(STARPU_MATRIX_GET_NX(buffers[0])) != m * k)) {
    ctx.record_device_error(std::string("unexpected buffers for the GPU ") + method + " front task " + where(G, t));
    return false;
  }
  L = device_panel ? device_panel : ptr_of(buffers[0]);
  cb = mc > 0 ? ptr_of(buffers[1 - skip]) : nullptr;
  const idx_t first_child = (mc > 0 ? 2 : 1) - skip;
  const double* values = extra_of<double>(buffers, nacc - skip, 0);
  const long long* a_src = extra_of<long long>(buffers, nacc - skip, 1);
  const long long* a_dst = extra_of<long long>(buffers, nacc - skip, 2);
  const long long* rel = extra_of<long long>(buffers, nacc - skip, 3);
  const idx_t q0 = P.a_ptr[s];
  if (!cuda_ok(launch_ldlt_assemble(L, m, k, cb, mc, values, a_src + q0, a_dst + q0, P.a_ptr[s + 1] - q0, stream),
               "front assembly kernel launch", G, t, ctx))
    return false;
  for (idx_t q = P.child_ptr[s]; q < P.child_ptr[s + 1]; ++q) {
    const idx_t c = P.child_list[q];
    const double* child = ptr_of(buffers[first_child + (q - P.child_ptr[s])]);
    if (!cuda_ok(launch_ldlt_extend_add(L, m, k, cb, child, P.cb_order(c), rel + P.rel_ptr[c], stream),
                 "front extend-add kernel launch", G, t, ctx))
      return false;
  }
  return true;
}

/// Cholesky of untiled front s on the GPU (issue 5): buffers panel, [CB],
/// the children's CBs (child_list order), then the four extra vectors of a
/// GPU front (A's values, a_src, a_dst, rel: gpu_assembly_cache.hpp). The
/// same steps as factor_front_cpu (codelets/cpu/front_cholesky.cpp):
///  1. assembly: zero the m×k panel (leading dimension m) and the mc×mc CB,
///     add A's entries, extend-add each child's CB in child_list order (the
///     kernels of front_ldlt_kernels.hpp; the same sums, in the same order,
///     as the CPU);
///  2. cusolverDnDpotrf on the k×k fully-summed block (in place, leading
///     dimension m; for k ≤ kGpuPanelMaxK, gpu_potrf_panel, and for k ≤
///     kPanelRowsMaxK, gpu_potrf_panel_rows on the whole m×k panel
///     instead, which also do step 3's TRSM: gpu_front_potrf);
///     without deferred pivots, after a copy of that block to the worker's
///     workspace;
///     the info flag and the diagonal come to the host with ONE
///     synchronisation of the worker's stream and go through check_pivots
///     (the CPU's relative pivot test); a block that fails is factorised
///     again on the host from the copy by potrf_tile_cpu, so that the error
///     names the CPU's column and pivot;
///  3. L21 := L21·L11⁻ᵀ (gpu_trsm_right_lower_trans: most flops in DGEMM)
///     and CB −= L21·L21ᵀ (lower; gpu_syrk_lower_update: this project's
///     kernel or cuBLAS DSYRK by rank and order), queued on the stream without
///     waiting (STARPU_CUDA_ASYNC).
/// host_panel (GraphTaskArgs::mapped_panel): the panel has no buffer; the
/// front is assembled in m·k doubles of the device's panel pool
/// (front_panel_pool, allocated on the worker's stream), and once L is
/// final (after step 3's TRSM) the worker's copy stream waits for it,
/// copies L's lower trapezoid to host_panel by blocks of
/// kPanelCopyColumns columns (each block from its diagonal down: the
/// block's own upper triangle, zero, comes along) while the CB update runs
/// on the worker's stream (so the parent's tasks do not wait for the
/// copy), then frees the panel once both are done. The executor waits for the copies after the graph
/// (cuda_wait_front_panel_copies). On a failure before the first copy, the
/// panel is freed on the worker's stream and nothing is copied. A mapped
/// panel whose k columns would take cuSOLVER's DPOTRF in one call
/// (gpu_front_potrf) may be factorised by blocks of columns instead
/// (blocked_front_columns: by default blocks of 256 through
/// gpu_potrf_panel_rows for 257 ≤ k < 8192, blocks of 512 above), each
/// block's L sent home as soon as it is final; a failure there frees the
/// panel after the blocks already queued for the copy.
void front_cholesky(const TaskGraph& G, idx_t ti, void* buffers[], FactorContext& ctx, GpuPivotSlot* slot,
                    double* host_panel) {
  const FrontPlan& P = *G.plan;
  const Task& t = G.tasks[ti];
  const idx_t s = t.front, m = P.front_order(s), k = P.ncols(s), mc = m - k;
  if (k == 0) return;  // nothing to factorise (never built by the planner)
  double* L = nullptr;
  double* cb = nullptr;
  cudaStream_t stream = starpu_cuda_get_local_stream();
  // The mapped panel's device memory. Freed on the worker's stream, or,
  // once copies home are queued (`copies` set), on the copy stream after
  // them and after everything queued so far on the worker's stream (the
  // CB update reads L): freed after the copies alone, the pool could hand
  // the panel to another front while the update still reads it (seen on
  // the H200 before this ordering: wrong factors).
  struct PanelMemory {
    double* p = nullptr;
    cudaStream_t stream = nullptr;
    Workspace* copies = nullptr;
    cudaError_t release() {
      if (!p) return cudaSuccess;
      cudaError_t e = cudaSuccess;
      if (!copies) {
        e = cudaFreeAsync(p, stream);
      } else if ((e = cudaEventRecord(copies->panel_done, stream)) == cudaSuccess &&
                 (e = cudaStreamWaitEvent(copies->copy_stream, copies->panel_done, 0)) == cudaSuccess) {
        e = cudaFreeAsync(p, copies->copy_stream);
      }  // (else the panel is leaked rather than freed under a running copy)
      p = nullptr;
      return e;
    }
    ~PanelMemory() { (void)release(); }
  } device_panel;
  device_panel.stream = stream;
  if (host_panel) {
    cudaMemPool_t pool = nullptr;
    const std::size_t bytes = sizeof(double) * static_cast<std::size_t>(m) * static_cast<std::size_t>(k);
    void* p = nullptr;
    if (!cuda_ok(front_panel_pool(pool), "front panel pool", G, t, ctx)) return;
    cudaError_t e = cudaMallocFromPoolAsync(&p, bytes, pool, stream);
    if (e == cudaErrorMemoryAllocation) {
      // Out of device memory: StarPU does not know the pool, so it did not
      // free its cache for it. Let this worker's queued copies free their
      // panels, give the pool's unused memory back, ask StarPU to tidy its
      // buffers on this device, and try once more.
      (void)cudaGetLastError();
      Workspace& ws = local_workspace();
      if (ws.copy_stream) (void)cudaStreamSynchronize(ws.copy_stream);
      (void)cudaMemPoolTrimTo(pool, 0);
      starpu_memchunk_tidy(starpu_worker_get_memory_node(static_cast<unsigned>(starpu_worker_get_id())));
      e = cudaMallocFromPoolAsync(&p, bytes, pool, stream);
    }
    if (e != cudaSuccess) {
      (void)cudaGetLastError();
      ctx.record_device_error(std::string("cudaMallocFromPoolAsync of the ") + std::to_string(bytes) +
                              "-byte panel of " + where(G, t) + ": " + cudaGetErrorString(e) +
                              (e == cudaErrorMemoryAllocation
                                   ? " (GPU memory held by StarPU's buffers and the panel pool; "
                                     "STARFRONT_FRONT_MAPPED_L=0 gives front panels to StarPU's allocator)"
                                   : ""));
      return;
    }
    device_panel.p = static_cast<double*>(p);
  }
  thread_local cudaEvent_t ev[FrontProfile::kSteps + 1] = {};
  const bool profile = FrontProfile::enabled();
  if (profile && !ev[0])
    for (cudaEvent_t& e : ev) cudaEventCreate(&e);
  auto mark = [&](int i) {
    if (profile) cudaEventRecord(ev[i], stream);
  };
  const auto host0 = profile ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{};
  mark(0);
  if (!assemble_untiled_front(G, t, buffers, "Cholesky", stream, L, cb, ctx, device_panel.p)) return;
  mark(1);
  const int ik = static_cast<int>(k), im = static_cast<int>(m), imc = static_cast<int>(mc);
  GpuPotrf dpotrf;
  if (!dpotrf.prepare(ik, L, im, stream, G, t, ctx)) return;
  // A large front with a mapped panel: blocks of nb columns (0: one call).
  const int nb = host_panel && !dpotrf.panel ? blocked_front_columns(ik) : 0;
  Workspace& w = local_workspace();
  // The blocked factorisation's look-ahead (below) runs its DPOTRFs with
  // the side stream's cuSOLVER handle: the workspace is sized with it.
  const bool lookahead = nb > 0 && blocked_front_lookahead();
  if (lookahead) {
    const std::string err = w.reserve_side();
    if (!err.empty()) {
      ctx.record_device_error(err + " (look-ahead stream) in " + where(G, t));
      return;
    }
  }
  int lwork = dpotrf.lwork;
  if (nb > 0) {
    int lw = 0;
    if (!cusolver_ok(cusolverDnDpotrf_bufferSize(lookahead ? w.side_solver : dpotrf.h, CUBLAS_FILL_MODE_LOWER, nb, L,
                                                 im, &lw),
                     "cusolverDnDpotrf_bufferSize", G, t, ctx))
      return;
    lwork = std::max(lwork, lw);
  }
  const bool panel = dpotrf.panel || nb > 0;  // the TRSM of the rows below is done with the factorisation
  // Deferred mode needs no backup (a failure is reported by a second,
  // synchronous factorisation): room for the workspace and the info flag
  // only, after the queued work of earlier fronts when a buffer is replaced.
  const int backup_order = slot ? 0 : ik;
  if (w.grows(backup_order, lwork) &&
      !cuda_ok(cudaStreamSynchronize(stream), "cudaStreamSynchronize", G, t, ctx))
    return;
  if (!cuda_ok(w.reserve(backup_order, lwork), "cudaMalloc", G, t, ctx)) return;
  const idx_t first = P.symbolic->super_start[s];
  cublasHandle_t h = local_cublas(G, t, ctx);
  if (!h) return;
  const double one = 1.0, minus_one = -1.0;
  // Columns [j0, j1) of L are final: the copy stream takes them home (from
  // the diagonal down, by blocks of kPanelCopyColumns) once the stream
  // `from`, whose work made them final, has reached this point.
  auto copy_home = [&](idx_t j0, idx_t j1, cudaStream_t from) {
    if (!cuda_ok(w.reserve_copy_stream(), "copy stream", G, t, ctx) ||
        !cuda_ok(cudaEventRecord(w.panel_ready, from), "cudaEventRecord", G, t, ctx) ||
        !cuda_ok(cudaStreamWaitEvent(w.copy_stream, w.panel_ready, 0), "cudaStreamWaitEvent", G, t, ctx))
      return false;
    device_panel.copies = &w;  // from now on the panel is freed after the copies
    const std::size_t ld = sizeof(double) * static_cast<std::size_t>(m);
    for (idx_t j = j0; j < j1; j += kPanelCopyColumns) {
      const std::size_t at = static_cast<std::size_t>(j) * static_cast<std::size_t>(m) + static_cast<std::size_t>(j);
      if (!cuda_ok(cudaMemcpy2DAsync(host_panel + at, ld, L + at, ld, sizeof(double) * static_cast<std::size_t>(m - j),
                                     static_cast<std::size_t>(std::min<idx_t>(kPanelCopyColumns, j1 - j)),
                                     cudaMemcpyDeviceToHost, w.copy_stream),
                   "cudaMemcpy2DAsync (L home)", G, t, ctx))
        return false;
    }
    return true;
  };
  // The blocked factorisation (nb > 0), right-looking over the fully-summed
  // columns (Golub and Van Loan §4.2.8): per block of columns [j0, j1),
  // cuSOLVER's DPOTRF of its diagonal block (its info folded into
  // w.dev_info as LAPACK's for the whole block), the TRSM of every row
  // below it (gpu_trsm_right_lower_trans; both in one launch of
  // gpu_potrf_panel_rows for a block of at most 256 columns), its copy home, then the update
  // of the fully-summed columns to its right (DSYRK of their diagonal
  // block, DGEMM of their rows below k); the CB is updated once, below.
  // With the look-ahead (default; blocked_front_lookahead), the DPOTRF and
  // the TRSM of every block run on the worker's second stream
  // (Workspace::side_stream, the device's greatest priority): the worker's
  // stream first updates only the next block of columns, hands it over
  // (side_go), and updates the columns after it while the side stream
  // factorises it; it waits for the block (side_done) before using it.
  // So the chain of diagonal blocks, latency-bound, overlaps the trailing
  // updates (J. Kurzak and J. Dongarra, "Implementing linear algebra
  // routines on multi-core processors with pipelining and a look ahead",
  // PARA 2006). The same operations, except that the next block of
  // columns gets its update from a DSYRK and a DGEMM of its own instead of
  // sharing the trailing update's: equal up to rounding.
  auto column = [&](int j) { return L + static_cast<std::size_t>(j) * static_cast<std::size_t>(m); };
  // DPOTRF and TRSM of the block of columns [j0, j0 + jb) on stream `on`
  // with handles (sh, bh), or both in one launch of gpu_potrf_panel_rows
  // (blocked_front_rows_kernel; its sync words are the worker's, and no
  // other work on them runs meanwhile: the worker's stream waits for the
  // last block before the task's later steps, and after a failed call the
  // host waits for the side stream).
  auto factor_block = [&](int j0, int jb, cudaStream_t on, cusolverDnHandle_t sh, cublasHandle_t bh) {
    double* Ljj = column(j0) + j0;
    if (jb <= kPanelRowsMaxK && blocked_front_rows_kernel() && gpu_potrf_panel_rows_fits(jb))
      return cublas_ok(gpu_potrf_panel_rows(on, im - j0, jb, Ljj, im, w.dev_info_part, w.rows_sync),
                       "gpu_potrf_panel_rows (block)", G, t, ctx) &&
             cuda_ok(gpu_fold_info(on, w.dev_info, w.dev_info_part, j0), "gpu_fold_info", G, t, ctx);
    return cusolver_ok(cusolverDnDpotrf(sh, CUBLAS_FILL_MODE_LOWER, jb, Ljj, im, w.work, w.work_cap,
                                        w.dev_info_part),
                       "cusolverDnDpotrf (block)", G, t, ctx) &&
           cuda_ok(gpu_fold_info(on, w.dev_info, w.dev_info_part, j0), "gpu_fold_info", G, t, ctx) &&
           (im <= j0 + jb ||
            cublas_ok(gpu_trsm_right_lower_trans(bh, im - j0 - jb, jb, Ljj, im, Ljj + jb, im, gpu_trsm_options()),
                      "gpu_trsm_right_lower_trans (block)", G, t, ctx));
  };
  // The update of columns [c0, c1) (fully summed, c0 >= j0 + jb) and of all
  // their rows below c0 by the block of columns [j0, j0 + jb): DSYRK of the
  // diagonal block, DGEMM of the rows below it.
  auto update_columns = [&](int j0, int jb, int c0, int c1) {
    if (c1 <= c0) return true;
    const double* Lc = column(j0) + c0;  // rows c0.. of the block's columns
    double* C = column(c0) + c0;
    const int w2 = c1 - c0;
    return cublas_ok(gpu_syrk_lower_update(h, w2, jb, Lc, im, Lc, im, C, im, gpu_syrk_method()),
                     "gpu_syrk_lower_update (block)", G, t, ctx) &&
           (im <= c1 || cublas_ok(cublasDgemm(h, CUBLAS_OP_N, CUBLAS_OP_T, im - c1, w2, jb, &minus_one, Lc + w2, im,
                                              Lc, im, &one, C + w2, im),
                                  "cublasDgemm (block)", G, t, ctx));
  };
  // With STARFRONT_GPU_FRONT_UPDATE_PANEL=P (blocked_front_update_panel),
  // a wider update goes by panels of P columns: each a DSYRK of its P × P
  // diagonal block and a DGEMM of all its rows below.
  const int upanel = blocked_front_update_panel();
  auto update = [&](int j0, int jb, int c0, int c1) {
    if (upanel == 0 || c1 - c0 <= 2 * upanel) return update_columns(j0, jb, c0, c1);
    for (int c = c0; c < c1; c += upanel)
      if (!update_columns(j0, jb, c, std::min(c + upanel, c1))) return false;
    return true;
  };
  auto factor_blocked = [&] {
    if (!cuda_ok(cudaMemsetAsync(w.dev_info, 0, sizeof(int), stream), "cudaMemsetAsync", G, t, ctx)) return false;
    if (!lookahead) {
      for (int j0 = 0; j0 < ik; j0 += nb) {
        const int jb = std::min(nb, ik - j0), j1 = j0 + jb;
        if (!factor_block(j0, jb, stream, dpotrf.h, h) || !copy_home(j0, j1, stream)) return false;
        // (Columns [j1, ik) with all their rows: the rows below k with
        // them, as one DGEMM.)
        if (!update(j0, jb, j1, ik)) return false;
      }
      return true;
    }
    // STARFRONT_GPU_BLOCK_TRACE: five events a block (blocked_front_trace_min_k).
    const int trace_k = blocked_front_trace_min_k();
    const bool trace = trace_k > 0 && ik >= trace_k;
    thread_local std::vector<cudaEvent_t> tev;
    const int nblk = (ik + nb - 1) / nb;
    bool traced = trace;  // every stamp of this front recorded
    auto stamp = [&](int blk, int what, cudaStream_t on) {
      if (!traced) return;
      const std::size_t i = static_cast<std::size_t>(blk) * 5 + static_cast<std::size_t>(what);
      while (tev.size() <= i) {
        cudaEvent_t e = nullptr;
        if (cudaEventCreate(&e) != cudaSuccess) break;
        tev.push_back(e);
      }
      if (tev.size() <= i || cudaEventRecord(tev[i], on) != cudaSuccess) {
        (void)cudaGetLastError();  // (a measurement aid: its failure is no task's error)
        traced = false;
      }
    };
    // Block 0 on the side stream once the front is assembled.
    auto hand_over = [&](int j0, int jb) {
      if (!cuda_ok(cudaEventRecord(w.side_go, stream), "cudaEventRecord", G, t, ctx) ||
          !cuda_ok(cudaStreamWaitEvent(w.side_stream, w.side_go, 0), "cudaStreamWaitEvent", G, t, ctx))
        return false;
      stamp(j0 / nb, 0, w.side_stream);
      if (!factor_block(j0, jb, w.side_stream, w.side_solver, w.side_blas)) return false;
      stamp(j0 / nb, 1, w.side_stream);
      return cuda_ok(cudaEventRecord(w.side_done, w.side_stream), "cudaEventRecord", G, t, ctx) &&
             copy_home(j0, j0 + jb, w.side_stream);
    };
    if (!hand_over(0, std::min(nb, ik))) return false;
    for (int j0 = 0; j0 < ik; j0 += nb) {
      const int jb = std::min(nb, ik - j0), j1 = j0 + jb;
      // Block j0 is final (its DPOTRF and TRSM on the side stream).
      if (!cuda_ok(cudaStreamWaitEvent(stream, w.side_done, 0), "cudaStreamWaitEvent", G, t, ctx)) return false;
      stamp(j0 / nb, 2, stream);
      if (j1 >= ik) break;
      const int c1 = std::min(j1 + nb, ik);
      if (!update(j0, jb, j1, c1)) return false;
      stamp(j0 / nb, 3, stream);
      if (!hand_over(j1, c1 - j1) || !update(j0, jb, c1, ik)) return false;
      stamp(j0 / nb, 4, stream);
    }
    if (traced) {
      if (!cuda_ok(cudaStreamSynchronize(stream), "cudaStreamSynchronize (block trace)", G, t, ctx)) return false;
      auto us = [&](int blk, int what) {
        float ms = 0;
        const cudaEvent_t e = tev[static_cast<std::size_t>(blk) * 5 + static_cast<std::size_t>(what)];
        if (cudaEventElapsedTime(&ms, tev[0], e) == cudaSuccess) return 1e3 * ms;
        (void)cudaGetLastError();
        return -1.0;
      };
      std::string line = "gpu block trace " + task_name(G, t) + " m " + std::to_string(m) + " k " +
                         std::to_string(k) + " nb " + std::to_string(nb) + " (us: side start-end | worker has it, "
                         "next updated, trailing updated):";
      char buf[160];
      for (int b = 0; b < nblk; ++b) {
        const bool last = b + 1 == nblk;
        std::snprintf(buf, sizeof buf, " [%d] %.0f-%.0f | %.0f %.0f %.0f;", b, us(b, 0), us(b, 1), us(b, 2),
                      last ? 0.0 : us(b, 3), last ? 0.0 : us(b, 4));
        line += buf;
      }
      std::fprintf(stderr, "%s\n", line.c_str());
    }
    return true;
  };
  // The fully-summed columns: cuSOLVER's DPOTRF (the TRSM comes below), or
  // gpu_potrf_panel or gpu_potrf_panel_rows (DPOTRF and TRSM together), or
  // the blocked factorisation.
  auto factor = [&] {
    if (nb == 0) return dpotrf.run(h, im, ik, L, im, w, G, t, ctx);
    if (factor_blocked()) return true;
    // A call failed with blocks possibly still queued on the side stream,
    // which nothing downstream waits for: let them finish before the panel
    // is freed (PanelMemory) or the next task reuses the workspace.
    if (lookahead) (void)cudaStreamSynchronize(w.side_stream);
    return false;
  };
  if (slot) {
    const idx_t nbuf = t.acc_end - t.acc_begin - (host_panel ? 1 : 0);
    const double* values = extra_of<double>(buffers, nbuf, 0);
    const long long* diag_src = extra_of<long long>(buffers, nbuf, 4);
    if (!factor() ||
        !cuda_ok(launch_cholesky_pivot_check(L, m, k, w.dev_info, values, diag_src, first, ctx.pivot_tol, slot, stream),
                 "pivot check kernel launch", G, t, ctx))
      return;
  } else {
    const std::size_t row_bytes = sizeof(double) * static_cast<std::size_t>(k);
    if (!cuda_ok(cudaMemcpy2DAsync(w.backup, row_bytes, L, sizeof(double) * static_cast<std::size_t>(m), row_bytes,
                                   static_cast<std::size_t>(k), cudaMemcpyDeviceToDevice, stream),
                 "cudaMemcpy2DAsync", G, t, ctx) ||
        !factor() ||
        !cuda_ok(cudaMemcpyAsync(w.host_info, w.dev_info, sizeof(int), cudaMemcpyDeviceToHost, stream),
                 "cudaMemcpyAsync", G, t, ctx) ||
        !cuda_ok(cudaMemcpy2DAsync(w.host_diag, sizeof(double), L, sizeof(double) * static_cast<std::size_t>(m + 1),
                                   sizeof(double), static_cast<std::size_t>(k), cudaMemcpyDeviceToHost, stream),
                 "cudaMemcpy2DAsync", G, t, ctx) ||
        !cuda_ok(cudaStreamSynchronize(stream), "cudaStreamSynchronize", G, t, ctx))
      return;
    const int info = *w.host_info;
    if (info < 0) {
      ctx.record_device_error(std::string(dpotrf.name()) + ": invalid argument " + std::to_string(-info) + " in " +
                              where(G, t));
      return;
    }
    FrontResult r;
    if (info != 0 || check_pivots(P, first, ctx.values, w.host_diag, 0, k, ctx.pivot_tol, r) >= 0) {
      ++g_front_failures;
      std::vector<double> D(static_cast<std::size_t>(k) * static_cast<std::size_t>(k));
      if (!cuda_ok(cudaMemcpy(D.data(), w.backup, sizeof(double) * D.size(), cudaMemcpyDeviceToHost), "cudaMemcpy",
                   G, t, ctx))
        return;
      r = potrf_tile_cpu(P, first, ctx.values, D.data(), k, k, ctx.pivot_tol);
      if (r.state != FrontResult::State::failed) {  // cuSOLVER and LAPACK disagree: report it, never go on
        ctx.record_device_error(std::string(dpotrf.name()) +
                                " refused a pivot that the CPU accepts in " + where(G, t));
        return;
      }
      ctx.record(r);
      return;
    }
    r.state = FrontResult::State::done;
    ctx.record(r);
  }
  mark(2);
  // After a deferred failure the update below works on garbage; the
  // executor never returns it (it factorises again, synchronously).
  if (mc > 0 && !panel &&
      !cublas_ok(gpu_trsm_right_lower_trans(h, imc, ik, L, im, L + k, im, gpu_trsm_options()),
                 "gpu_trsm_right_lower_trans", G, t, ctx))
    return;
  mark(3);
  // L is final: home on the copy stream, beside the CB update (the blocked
  // factorisation has sent its blocks already).
  if (host_panel && nb == 0 && !copy_home(0, k, stream)) return;
  if (mc > 0) {
    if (!cublas_ok(gpu_syrk_lower_update(h, imc, ik, L + k, im, L + k, im, cb, imc, gpu_syrk_method()),
                   "gpu_syrk_lower_update", G, t, ctx))
      return;
  }
  if (!cuda_ok(device_panel.release(), "panel release (cudaFreeAsync)", G, t, ctx)) return;
  mark(4);
  if (!profile) return;
  const double host = 1e-6 * static_cast<double>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                                     std::chrono::steady_clock::now() - host0).count());
  if (cudaEventSynchronize(ev[4]) == cudaSuccess) {
    float step[FrontProfile::kSteps] = {};
    for (int i = 0; i < FrontProfile::kSteps; ++i) cudaEventElapsedTime(&step[i], ev[i], ev[i + 1]);
    g_front_profile.add(m, k, step, host);
  }
}

/// Device and pinned host buffers of the LDLᵀ front task on one CUDA worker
/// (one thread), grown on demand (after a synchronisation of the worker's
/// stream, so that no queued work uses a freed buffer) and never shrunk.
struct LdltWorkspace {
  double* sc = nullptr;       ///< column scales of the front (k), permuted by the kernel
  long long* perm = nullptr;  ///< pivot order (k)
  signed char* pivsize = nullptr;
  double* d_off = nullptr;
  GpuLdltCounts* counts = nullptr;
  std::size_t cap = 0;        ///< k capacity of the five arrays above (device)
  long long* h_perm = nullptr;  ///< pinned copies
  signed char* h_pivsize = nullptr;
  double* h_d_off = nullptr;
  GpuLdltCounts* h_counts = nullptr;
  double* W = nullptr;        ///< L21·D (mc×k)
  std::size_t w_cap = 0;      ///< doubles
  ~LdltWorkspace() { release(); cudaFree(W); }
  void release() {
    cudaFree(sc);
    cudaFree(perm);
    cudaFree(pivsize);
    cudaFree(d_off);
    cudaFree(counts);
    cudaFreeHost(h_perm);
    cudaFreeHost(h_pivsize);
    cudaFreeHost(h_d_off);
    cudaFreeHost(h_counts);
    sc = d_off = h_d_off = nullptr;
    perm = h_perm = nullptr;
    pivsize = h_pivsize = nullptr;
    counts = h_counts = nullptr;
    cap = 0;
  }
  /// Room for k pivots and a W of w doubles; stream: the worker's.
  cudaError_t reserve(std::size_t k, std::size_t w, cudaStream_t stream) {
    cudaError_t e = cudaSuccess;
    if ((k > cap || w > w_cap) && (e = cudaStreamSynchronize(stream)) != cudaSuccess) return e;
    if (k > cap) {
      release();
      const std::size_t c = std::max<std::size_t>(k, 256);
      if ((e = cudaMalloc(&sc, sizeof(double) * c)) != cudaSuccess ||
          (e = cudaMalloc(&perm, sizeof(long long) * c)) != cudaSuccess ||
          (e = cudaMalloc(&pivsize, c)) != cudaSuccess ||
          (e = cudaMalloc(&d_off, sizeof(double) * c)) != cudaSuccess ||
          (e = cudaMalloc(&counts, sizeof(GpuLdltCounts))) != cudaSuccess ||
          (e = cudaMallocHost(&h_perm, sizeof(long long) * c)) != cudaSuccess ||
          (e = cudaMallocHost(&h_pivsize, c)) != cudaSuccess ||
          (e = cudaMallocHost(&h_d_off, sizeof(double) * c)) != cudaSuccess ||
          (e = cudaMallocHost(&h_counts, sizeof(GpuLdltCounts))) != cudaSuccess) {
        release();
        return e;
      }
      cap = c;
    }
    if (w > w_cap) {
      cudaFree(W);
      W = nullptr;
      w_cap = 0;
      if ((e = cudaMalloc(&W, sizeof(double) * w)) != cudaSuccess) return e;
      w_cap = w;
    }
    return cudaSuccess;
  }
};

/// One per StarPU worker (stream), as local_workspace: the W buffer is read
/// by the CB update queued on that worker's stream.
LdltWorkspace& local_ldlt_workspace() {
  thread_local std::vector<std::unique_ptr<LdltWorkspace>> per_worker;
  const auto id = static_cast<std::size_t>(starpu_worker_get_id());
  if (per_worker.size() <= id) per_worker.resize(id + 1);
  if (!per_worker[id]) per_worker[id] = std::make_unique<LdltWorkspace>();
  return *per_worker[id];
}

/// LDLᵀ of untiled front s on the GPU (ctx.ldlt.active): buffers panel,
/// [CB], the children's CBs (child_list order), then the extra vectors of
/// ldlt_front_extra_buffers (A's values, a_src, a_dst, rel). Assembly and
/// extend-add kernels (the CPU's summation order), the panel kernel (the
/// CPU's pivot decisions and arithmetic), then pivots, D and counts copied
/// to the host with one synchronisation of the worker's stream and written
/// into ctx.ldlt as the CPU kernel does; finally W = L21·D and the CB update
/// CB −= W·L21ᵀ (gpu_syrk_lower_update, lower triangle), queued without waiting.
void front_ldlt(const TaskGraph& G, idx_t ti, void* buffers[], FactorContext& ctx) {
  const FrontPlan& P = *G.plan;
  const Task& t = G.tasks[ti];
  LdltFactorState& st = ctx.ldlt;
  const idx_t s = t.front, m = P.front_order(s), k = P.ncols(s), mc = m - k;
  const idx_t f = P.symbolic->super_start[s];
  double* L = nullptr;
  double* cb = nullptr;
  cudaStream_t stream = starpu_cuda_get_local_stream();
  if (!assemble_untiled_front(G, t, buffers, "LDLT", stream, L, cb, ctx)) return;
  LdltWorkspace& w = local_ldlt_workspace();
  const auto ku = static_cast<std::size_t>(k);
  if (!cuda_ok(w.reserve(ku, static_cast<std::size_t>(mc) * ku, stream), "cudaMalloc", G, t, ctx)) return;
  GpuLdltParams prm;
  prm.pivoting = st.params.pivoting == LdltPivoting::none ? 1 : 0;
  prm.u = st.params.u;
  prm.tau = st.params.tau;
  prm.zero_rel = st.params.zero_rel;
  if (!cuda_ok(cudaMemcpyAsync(w.sc, st.col_scale.data() + f, sizeof(double) * ku, cudaMemcpyHostToDevice, stream),
               "cudaMemcpyAsync", G, t, ctx) ||
      !cuda_ok(launch_ldlt_panel(L, m, k, prm, w.sc, w.perm, w.pivsize, w.d_off, w.counts, stream),
               "LDLT panel kernel launch", G, t, ctx) ||
      !cuda_ok(cudaMemcpyAsync(w.h_perm, w.perm, sizeof(long long) * ku, cudaMemcpyDeviceToHost, stream),
               "cudaMemcpyAsync", G, t, ctx) ||
      !cuda_ok(cudaMemcpyAsync(w.h_pivsize, w.pivsize, ku, cudaMemcpyDeviceToHost, stream), "cudaMemcpyAsync",
               G, t, ctx) ||
      !cuda_ok(cudaMemcpyAsync(w.h_d_off, w.d_off, sizeof(double) * ku, cudaMemcpyDeviceToHost, stream),
               "cudaMemcpyAsync", G, t, ctx) ||
      !cuda_ok(cudaMemcpyAsync(w.h_counts, w.counts, sizeof(GpuLdltCounts), cudaMemcpyDeviceToHost, stream),
               "cudaMemcpyAsync", G, t, ctx) ||
      !cuda_ok(cudaStreamSynchronize(stream), "cudaStreamSynchronize", G, t, ctx))
    return;
  // Host side, as factor_front_ldlt_cpu: this front's range of the pivot
  // arrays (no other task writes it), then the counts under st's lock.
  std::vector<idx_t> perm(ku);
  for (idx_t i = 0; i < k; ++i) {
    perm[i] = w.h_perm[i];
    st.pivot_order[f + i] = f + perm[i];
    st.pivot_size[f + i] = w.h_pivsize[i];
    st.d_off[f + i] = w.h_d_off[i];
  }
  const GpuLdltCounts& g = *w.h_counts;
  LdltCounts c;
  c.positive = g.positive;
  c.negative = g.negative;
  c.zero = g.zero;
  c.perturbed = g.perturbed;
  c.below_threshold = g.below_threshold;
  c.two_by_two = g.two_by_two;
  c.first_zero = g.first_zero;
  c.first_nonfinite = g.first_nonfinite;
  c.nonfinite_pivot = g.nonfinite_pivot;
  st.add(c, f, perm.data());
  FrontResult r;
  r.min_pivot_ratio = std::numeric_limits<double>::infinity();
  if (c.first_nonfinite >= 0) {
    r.state = FrontResult::State::failed;
    r.failed_column = f + perm[c.first_nonfinite];
    r.pivot = c.nonfinite_pivot;
    ctx.record(r);
    return;
  }
  if (mc > 0) {
    cublasHandle_t h = local_cublas(G, t, ctx);
    if (!h) return;
    if (!cuda_ok(launch_ldlt_w(L, m, k, w.pivsize, w.d_off, w.W, stream), "LDLT W kernel launch", G, t, ctx) ||
        !cublas_ok(gpu_syrk_lower_update(h, static_cast<int>(mc), static_cast<int>(k), w.W, static_cast<int>(mc),
                                         L + k, static_cast<int>(m), cb, static_cast<int>(mc), gpu_syrk_method()),
                   "gpu_syrk_lower_update (DSYRKX)", G, t, ctx))
      return;
  }
  r.state = FrontResult::State::done;
  ctx.record(r);
}

}  // namespace

bool has_cuda_impl(TaskKind k) {
  return k == TaskKind::potrf || k == TaskKind::trsm || k == TaskKind::syrk || k == TaskKind::gemm ||
         k == TaskKind::assemble || k == TaskKind::extend_add || k == TaskKind::subtree || k == TaskKind::front;
}

namespace {

/// Task log (STARFRONT_TASK_LOG): the host time spent in a CUDA codelet and
/// two events around the work it queues on its stream (Record::host_begin to
/// events), set from construction to destruction of one TaskLogStamps.
class TaskLogStamps {
 public:
  explicit TaskLogStamps(TaskProgress::Record* r) : r_(r) {
    if (!r_) return;
    r_->host_begin = 1e-6 * starpu_timing_now();
    stream_ = starpu_cuda_get_local_stream();
    (void)cudaGetDevice(&r_->device);
    for (void*& e : r_->events) {
      cudaEvent_t ev = nullptr;
      if (cudaEventCreate(&ev) != cudaSuccess) {
        (void)cudaGetLastError();
        ev = nullptr;
      }
      e = ev;
    }
    if (r_->events[0]) (void)cudaEventRecord(static_cast<cudaEvent_t>(r_->events[0]), stream_);
  }
  ~TaskLogStamps() {
    if (!r_) return;
    if (r_->events[1]) (void)cudaEventRecord(static_cast<cudaEvent_t>(r_->events[1]), stream_);
    r_->host_end = 1e-6 * starpu_timing_now();
  }
  TaskLogStamps(const TaskLogStamps&) = delete;
  TaskLogStamps& operator=(const TaskLogStamps&) = delete;

 private:
  TaskProgress::Record* r_;
  cudaStream_t stream_ = nullptr;
};

}  // namespace

void cuda_resolve_task_events(TaskProgress& progress, std::size_t n) {
  TaskProgress::Record* rec = progress.records.get();
  int current = -1;
  (void)cudaGetDevice(&current);
  std::vector<int> devices;
  for (std::size_t i = 0; i < n; ++i)
    if (rec[i].events[0] && rec[i].events[1] &&
        std::find(devices.begin(), devices.end(), rec[i].device) == devices.end())
      devices.push_back(rec[i].device);
  for (int d : devices) {
    if (cudaSetDevice(d) != cudaSuccess) continue;
    std::size_t ref = n;
    for (std::size_t i = 0; i < n; ++i)
      if (rec[i].device == d && rec[i].events[0] && rec[i].events[1] &&
          (ref == n || rec[i].host_begin < rec[ref].host_begin))
        ref = i;
    if (ref == n) continue;
    const auto e0 = static_cast<cudaEvent_t>(rec[ref].events[0]);
    for (std::size_t i = 0; i < n; ++i) {
      if (rec[i].device != d || !rec[i].events[0] || !rec[i].events[1]) continue;
      float b = 0.0f, e = 0.0f;
      if (cudaEventElapsedTime(&b, e0, static_cast<cudaEvent_t>(rec[i].events[0])) == cudaSuccess &&
          cudaEventElapsedTime(&e, e0, static_cast<cudaEvent_t>(rec[i].events[1])) == cudaSuccess) {
        rec[i].gpu_begin = rec[ref].host_begin + 1e-3 * b;
        rec[i].gpu_end = rec[ref].host_begin + 1e-3 * e;
      } else {
        (void)cudaGetLastError();
      }
    }
  }
  for (std::size_t i = 0; i < n; ++i)
    for (void*& e : rec[i].events)
      if (e) {
        if (cudaSetDevice(rec[i].device) == cudaSuccess) (void)cudaEventDestroy(static_cast<cudaEvent_t>(e));
        e = nullptr;
      }
  if (current >= 0) (void)cudaSetDevice(current);
  (void)cudaGetLastError();
}

void graph_task_cuda(void* buffers[], void* cl_arg) {
  const auto* a = static_cast<const GraphTaskArgs*>(cl_arg);
  const TaskGraph& G = *a->graph;
  const Task& t = G.tasks[a->task];
  FactorContext& ctx = *a->ctx;
  ++g_executions[static_cast<int>(t.kind)];
  const TaskLogStamps stamps(a->progress->records ? &a->progress->records[a->task] : nullptr);
  if (ctx.failed || ctx.cancelled) return;  // failed or cancelled: nothing left is useful
  if (t.kind == TaskKind::front) {
    if (ctx.ldlt.active && a->mapped_panel)  // (the executor maps Cholesky panels only)
      ctx.record_device_error("a mapped panel for the GPU LDLT front task " + task_name(G, t));
    else if (ctx.ldlt.active) front_ldlt(G, a->task, buffers, ctx);
    else front_cholesky(G, a->task, buffers, ctx, a->pivot_slots ? a->pivot_slots + a->task : nullptr,
                        a->mapped_panel);
    return;
  }
  if (ctx.ldlt.active) {  // as run_task_cpu: tiled LDLᵀ is not implemented
    std::lock_guard<std::mutex> lock(ctx.mutex);
    ctx.ldlt.unsupported_task = true;
    ctx.failed = true;
    return;
  }
  switch (t.kind) {
    case TaskKind::potrf: potrf(G, t, buffers, ctx); break;
    case TaskKind::trsm: trsm(G, t, buffers, ctx); break;
    case TaskKind::syrk: syrk(G, t, buffers, ctx); break;
    case TaskKind::gemm: gemm(G, t, buffers, ctx); break;
    case TaskKind::assemble:
    case TaskKind::extend_add:
      if (!a->gpu) {
        ctx.record_device_error(std::string("no GPU assembly index for ") + task_name(G, t));
      } else if (t.kind == TaskKind::assemble) {
        assemble(G, a->task, buffers, *a->gpu, ctx);
      } else {
        extend_add(G, a->task, buffers, *a->gpu, ctx);
      }
      break;
    case TaskKind::subtree:
      if (!a->fused) {
        ctx.record_device_error(std::string("no fused subtree index for ") + task_name(G, t));
      } else {
        subtree(G, a->task, buffers, *a->fused, ctx, a->mapped_panel, a->direct, a->values_ahead);
      }
      break;
    default:
      ctx.record_device_error(std::string("no CUDA implementation for ") + task_kind_name(t.kind));
      break;
  }
}

namespace {
/// True when there is at least one CUDA device and every one has each
/// attribute in `attrs` non-zero (a failed query counts as zero; its error
/// is cleared).
bool every_device_has(std::initializer_list<cudaDeviceAttr> attrs) {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess || n <= 0) {
    (void)cudaGetLastError();
    return false;
  }
  for (int d = 0; d < n; ++d)
    for (cudaDeviceAttr a : attrs) {
      int v = 0;
      if (cudaDeviceGetAttribute(&v, a, d) != cudaSuccess || v == 0) {
        (void)cudaGetLastError();
        return false;
      }
    }
  return true;
}
}  // namespace

bool cuda_memory_pools_supported() {
  static const bool yes = every_device_has({cudaDevAttrMemoryPoolsSupported});
  return yes;
}

std::string cuda_wait_front_panel_copies() {
  int current = -1;
  (void)cudaGetDevice(&current);
  std::string err;
  // (A copy of the registry: the streams are synchronised outside its lock.
  // They live as long as their worker threads, i.e. past this wait.)
  std::vector<std::pair<int, cudaStream_t>> streams;
  {
    const std::lock_guard<std::mutex> lock(g_copy_streams_mutex);
    streams = g_copy_streams;
  }
  for (const auto& c : streams) {
    cudaError_t e = cudaSetDevice(c.first);
    if (e == cudaSuccess) e = cudaStreamSynchronize(c.second);
    if (e != cudaSuccess && err.empty())
      err = std::string("copy of a GPU front's L to the host (device ") + std::to_string(c.first) +
            "): " + cudaGetErrorString(e);
  }
  if (current >= 0) (void)cudaSetDevice(current);
  (void)cudaGetLastError();
  return err;
}

bool cuda_host_pointer_usable(const void* p) {
  // What the devices can do is asked once per process; whether p is
  // page-locked, at each call (once per factorisation).
  static const bool devices_can =
      every_device_has({cudaDevAttrUnifiedAddressing, cudaDevAttrCanUseHostPointerForRegisteredMem});
  if (!p || !devices_can) return false;
  // Pageable memory is told apart first, without an API error (which
  // compute-sanitizer would report): cudaPointerGetAttributes calls it
  // unregistered.
  cudaPointerAttributes at{};
  if (cudaPointerGetAttributes(&at, p) != cudaSuccess || at.type != cudaMemoryTypeHost) {
    (void)cudaGetLastError();
    return false;
  }
  void* d = nullptr;
  if (cudaHostGetDevicePointer(&d, const_cast<void*>(p), 0) != cudaSuccess || d != p) {
    (void)cudaGetLastError();  // not page-locked (or not mapped)
    return false;
  }
  return true;
}

GpuPivotSlot* alloc_mapped_pivot_slots(std::size_t n) {
  int dev = 0, uva = 0;
  if (n == 0 || cudaGetDevice(&dev) != cudaSuccess ||
      cudaDeviceGetAttribute(&uva, cudaDevAttrUnifiedAddressing, dev) != cudaSuccess || !uva)
    return nullptr;
  void* p = nullptr;
  if (cudaHostAlloc(&p, sizeof(GpuPivotSlot) * n, cudaHostAllocMapped | cudaHostAllocPortable) != cudaSuccess) {
    (void)cudaGetLastError();
    return nullptr;
  }
  void* d = nullptr;
  if (cudaHostGetDevicePointer(&d, p, 0) != cudaSuccess || d != p) {  // kernels get the host pointer
    (void)cudaGetLastError();
    cudaFreeHost(p);
    return nullptr;
  }
  std::memset(p, 0, sizeof(GpuPivotSlot) * n);
  return static_cast<GpuPivotSlot*>(p);
}

void free_mapped_pivot_slots(GpuPivotSlot* slots) {
  if (slots) cudaFreeHost(slots);
}

long long cuda_kernel_executions(TaskKind k) { return g_executions[static_cast<int>(k)]; }
long long cuda_potrf_failures() { return g_potrf_failures; }
long long cuda_front_failures() { return g_front_failures; }
long long cuda_fused_launches() { return g_fused_launches; }
long long cuda_values_ahead_used() { return g_values_ahead_used; }
long long cuda_inline_subtrees() { return g_inline_subtrees; }
long long cuda_device_norms() { return g_device_norms; }

void run_subtree_inline_cuda(const TaskGraph& G, idx_t ti, const FusedSubtreeIndex& X, FactorContext& ctx,
                             double* mapped_panel, int device, const std::function<void()>& between) {
  const Task& t = G.tasks[ti];
  int previous = -1;
  if (!cuda_ok(cudaGetDevice(&previous), "cudaGetDevice", G, t, ctx) ||
      (previous != device && !cuda_ok(cudaSetDevice(device), "cudaSetDevice", G, t, ctx)))
    return;
  // One workspace (with its stream) per calling thread and device, kept
  // until the thread ends: a refactorisation allocates nothing.
  thread_local std::vector<std::unique_ptr<Workspace>> per_device;
  if (per_device.size() <= static_cast<std::size_t>(device)) per_device.resize(static_cast<std::size_t>(device) + 1);
  std::unique_ptr<Workspace>& w = per_device[static_cast<std::size_t>(device)];
  if (!w) w = std::make_unique<Workspace>();
  // On every way out (an error that stopped the task before its own wait,
  // or an exception from `between`): nothing queued may read A's values or
  // write L once this returns; then the caller's device is set back.
  struct Leave {
    cudaStream_t stream;
    int previous, device;
    ~Leave() {
      if (stream) cudaStreamSynchronize(stream);
      if (previous != device) cudaSetDevice(previous);
    }
  } leave{nullptr, previous, device};
  if (w->own_stream ||
      cuda_ok(cudaStreamCreateWithFlags(&w->own_stream, cudaStreamNonBlocking), "cudaStreamCreateWithFlags", G, t,
              ctx)) {
    leave.stream = w->own_stream;
    ++g_executions[static_cast<int>(t.kind)];
    ++g_inline_subtrees;
    subtree_on(G, ti, nullptr, X, ctx, mapped_panel, true, nullptr, *w, w->own_stream, &between);
  }
}
double cuda_fused_seconds() { return 1e-9 * static_cast<double>(g_fused_ns.load()); }
double cuda_fused_part_seconds(int part) { return 1e-9 * static_cast<double>(g_fused_part_ns[part & 1].load()); }

}  // namespace starfront
