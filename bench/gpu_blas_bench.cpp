// gpu_blas_bench: the triangular solve of a front's panel on one GPU,
// B := B·L⁻ᵀ (B m×n, L n×n lower), cuBLAS DTRSM as is against
// gpu_trsm_right_lower_trans (codelets/cuda/gpu_blas.hpp: recursive split,
// leaves by cuBLAS or by the register leaf kernel), in one process on the
// same operands, with cuBLAS DSYRK of the CB update (order m, rank n) and DGEMM of the TRSM's flops for scale. Per
// shape: median seconds of --repeat runs after a warm-up (CUDA events around
// the calls, operands restored from a copy before each run, untimed),
// TFLOP/s (TRSM m·n², SYRK m²·n, GEMM 2·m·n·(n/2)), the ratio cuBLAS /
// variant (> 1: the variant is faster) and the largest relative Frobenius
// difference from cuBLAS's result. Exit status 1 when a difference exceeds
// 1e-12.
// --potrf K...: instead, cuSOLVER DPOTRF of an SPD K×K block inside an
// (4K)×K panel (leading dimension 4K, as in a front), microseconds per call
// (one call at a time).
// --panel M:K...: instead, a front's m×k panel factorised by cuSOLVER DPOTRF
// (k×k) and gpu_trsm_right_lower_trans (the rows below) against
// gpu_potrf_panel, and against gpu_potrf_panel_rows (one launch, k ≤ 256),
// microseconds per call (16 calls queued back to back on copies), ratios
// and relative differences (exit 1 above 1e-12).
// --syrk N:K...: instead, the CB update C −= A·Aᵀ (lower, order n, rank k)
// by cuBLAS DSYRK against gpu_syrk_lower_update's kernel (syrk_table).
// --d2h M:K...: instead, the copy of an m×k front panel's L from the device
// to page-locked host memory (as a GPU front task with a mapped panel
// does): the whole m·k doubles by one cudaMemcpyAsync against the lower
// trapezoid by blocks of B columns (one cudaMemcpy2DAsync each, from the
// block's diagonal down) for B = 64, 256, 1024 and k; median ms of --repeat
// copies after a warm-up, GB/s of the bytes each moves, and each block
// size's time over the whole copy's.
// Usage: gpu_blas_bench [--repeat K] [--leaf L]... [M:N]...
//        gpu_blas_bench [--repeat K] --d2h M:K...
//        gpu_blas_bench [--repeat K] --syrk N:K...
//        gpu_blas_bench [--repeat K] --potrf K...
//        gpu_blas_bench [--repeat K] --panel M:K...
//        gpu_blas_bench --panel-trace M:K...   (the rows kernel's trace: panel_trace_report)
//   --leaf L: a leaf order to measure (repeatable; default 32 64; the
//   kernel's leaves are at most kTrsmKernelLeafMax = 64)
//   M:N: a shape m×n (default: tile and front shapes of the lap3d task
//   logs in bench/README.md).
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cusolverDn.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "bench_common.hpp"
#include "cuda/gpu_blas.hpp"
#include "cuda/gpu_syrk.hpp"

using namespace starfront;

namespace {

bool ok(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return true;
  std::fprintf(stderr, "gpu_blas_bench: %s: %s\n", what, cudaGetErrorString(e));
  return false;
}

bool ok(cublasStatus_t s, const char* what) {
  if (s == CUBLAS_STATUS_SUCCESS) return true;
  std::fprintf(stderr, "gpu_blas_bench: %s: cuBLAS status %d\n", what, static_cast<int>(s));
  return false;
}

/// Device buffer with a pristine copy to restore from.
struct Operand {
  double* d = nullptr;
  double* d0 = nullptr;
  std::size_t n = 0;
  bool init(const std::vector<double>& h) {
    n = h.size();
    return ok(cudaMalloc(&d, sizeof(double) * n), "cudaMalloc") && ok(cudaMalloc(&d0, sizeof(double) * n), "cudaMalloc") &&
           ok(cudaMemcpy(d0, h.data(), sizeof(double) * n, cudaMemcpyHostToDevice), "cudaMemcpy") && restore();
  }
  bool restore() { return ok(cudaMemcpy(d, d0, sizeof(double) * n, cudaMemcpyDeviceToDevice), "cudaMemcpy"); }
  std::vector<double> get() const {
    std::vector<double> h(n);
    ok(cudaMemcpy(h.data(), d, sizeof(double) * n, cudaMemcpyDeviceToHost), "cudaMemcpy");
    return h;
  }
  ~Operand() { cudaFree(d), cudaFree(d0); }
};

/// Median seconds of `run` (which queues work on the default stream) over
/// `repeat` runs after one warm-up, `restore` (untimed) before each; -1 on failure.
template <class Run, class Restore>
double timed(int repeat, Run run, Restore restore) {
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0);
  cudaEventCreate(&e1);
  std::vector<double> t;
  for (int k = 0; k <= repeat; ++k) {
    if (!restore()) return -1;
    cudaEventRecord(e0);
    if (!run()) return -1;
    cudaEventRecord(e1);
    if (!ok(cudaEventSynchronize(e1), "cudaEventSynchronize")) return -1;
    float ms = 0;
    cudaEventElapsedTime(&ms, e0, e1);
    if (k > 0) t.push_back(1e-3 * ms);
  }
  cudaEventDestroy(e0);
  cudaEventDestroy(e1);
  return bench::median(t);
}

double rel_diff(const std::vector<double>& x, const std::vector<double>& r) {
  double num = 0, den = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    num += (x[i] - r[i]) * (x[i] - r[i]);
    den += r[i] * r[i];
  }
  return den > 0 ? std::sqrt(num / den) : std::sqrt(num);
}

/// The --potrf table: cuSOLVER DPOTRF of order k, leading dimension 4k, on
/// a random diagonally dominant SPD block; median microseconds and TFLOP/s
/// (k³/3 flops). Returns 1 when a call fails.
int potrf_table(int repeat, const std::vector<int>& orders) {
  cusolverDnHandle_t hs;
  if (cusolverDnCreate(&hs) != CUSOLVER_STATUS_SUCCESS) return 1;
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::printf("gpu_blas_bench --potrf: median of %d after a warm-up\n\n| k | ld | cuSOLVER DPOTRF us | TFLOP/s |\n|---|---|---|---|\n",
              repeat);
  int status = 0;
  for (int k : orders) {
    const int ld = 4 * k;
    std::vector<double> A(static_cast<std::size_t>(ld) * k);
    for (double& x : A) x = u(rng);
    for (int j = 0; j < k; ++j) A[j + static_cast<std::size_t>(j) * ld] = 2.0 * k;
    Operand dA, dW;
    int lwork = 0, *info = nullptr;
    if (!dA.init(A) || cusolverDnDpotrf_bufferSize(hs, CUBLAS_FILL_MODE_LOWER, k, dA.d, ld, &lwork) != CUSOLVER_STATUS_SUCCESS ||
        !dW.init(std::vector<double>(static_cast<std::size_t>(std::max(lwork, 1)), 0.0)) ||
        !ok(cudaMalloc(&info, sizeof(int)), "cudaMalloc"))
      return 1;
    const double t = timed(repeat, [&] {
      return cusolverDnDpotrf(hs, CUBLAS_FILL_MODE_LOWER, k, dA.d, ld, dW.d, lwork, info) == CUSOLVER_STATUS_SUCCESS;
    }, [&] { return dA.restore(); });
    int h_info = -1;
    cudaMemcpy(&h_info, info, sizeof(int), cudaMemcpyDeviceToHost);
    cudaFree(info);
    if (t < 0 || h_info != 0) status = 1;
    std::printf("| %d | %d | %.1f | %.3f |\n", k, ld, 1e6 * t, t > 0 ? static_cast<double>(k) * k * k / 3.0 / t * 1e-12 : 0.0);
  }
  cusolverDnDestroy(hs);
  return status;
}

/// The --panel table (see the file's comment). Each side is timed over
/// kPanelBatch calls queued back to back on kPanelBatch copies of the panel
/// (restored untimed before), as a factorisation queues its fronts: one
/// call alone measures the launch latency of an idle GPU. Returns 1 on a
/// failed call or a difference above 1e-12.
int panel_table(int repeat, const std::vector<std::pair<int, int>>& shapes) {
  constexpr int kPanelBatch = 16;
  cusolverDnHandle_t hs;
  cublasHandle_t h;
  if (cusolverDnCreate(&hs) != CUSOLVER_STATUS_SUCCESS || !ok(cublasCreate(&h), "cublasCreate")) return 1;
  std::mt19937_64 rng(13);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::printf("gpu_blas_bench --panel: median of %d after a warm-up, each run %d calls back to back on copies; "
              "us per call; gpu_potrf_panel_rows's tiles a multiprocessor holds at k = %d: %d\n\n"
              "| m | k | cuSOLVER DPOTRF + TRSM us | gpu_potrf_panel us | ratio | TFLOP/s | rel diff | "
              "gpu_potrf_panel_rows us | ratio | TFLOP/s | rel diff |\n"
              "|---|---|---|---|---|---|---|---|---|---|---|\n",
              repeat, kPanelBatch, kPanelRowsMaxK, gpu_potrf_panel_rows_blocks_per_sm(kPanelRowsMaxK));
  int status = 0;
  for (auto [m, k] : shapes) {
    std::vector<double> A(static_cast<std::size_t>(m) * k);
    for (double& x : A) x = u(rng);
    for (int j = 0; j < k; ++j) {
      for (int i = 0; i < j; ++i) A[i + static_cast<std::size_t>(j) * m] = 0.0;
      A[j + static_cast<std::size_t>(j) * m] = 2.0 * k;
    }
    std::vector<Operand> dA(kPanelBatch);
    Operand dW;
    int lwork = 0, *info = nullptr;
    for (Operand& o : dA)
      if (!o.init(A)) return 1;
    if (cusolverDnDpotrf_bufferSize(hs, CUBLAS_FILL_MODE_LOWER, k, dA[0].d, m, &lwork) != CUSOLVER_STATUS_SUCCESS ||
        !dW.init(std::vector<double>(static_cast<std::size_t>(std::max(lwork, 1)), 0.0)) ||
        !ok(cudaMalloc(&info, sizeof(int)), "cudaMalloc"))
      return 1;
    auto restore = [&] {
      for (Operand& o : dA)
        if (!o.restore()) return false;
      return true;
    };
    const GpuTrsmOptions o;
    const double tc = timed(repeat, [&] {
      for (Operand& x : dA)
        if (cusolverDnDpotrf(hs, CUBLAS_FILL_MODE_LOWER, k, x.d, m, dW.d, lwork, info) != CUSOLVER_STATUS_SUCCESS ||
            !ok(gpu_trsm_right_lower_trans(h, m - k, k, x.d, m, x.d + k, m, o), "trsm"))
          return false;
      return true;
    }, restore) / kPanelBatch;
    const std::vector<double> ref = dA[0].get();
    const double tp = timed(repeat, [&] {
      for (Operand& x : dA)
        if (!ok(gpu_potrf_panel(h, m, k, x.d, m, info), "gpu_potrf_panel")) return false;
      return true;
    }, restore) / kPanelBatch;
    const double diff = rel_diff(dA[0].get(), ref);
    // The one-launch kernel (k ≤ kPanelRowsMaxK), with one set of sync
    // words as each CUDA worker has (the calls are queued on one stream).
    double tr = -1.0, diff_r = 0.0;
    if (k <= kPanelRowsMaxK) {
      int* sync = nullptr;
      cudaStream_t stream = nullptr;
      if (!ok(cudaMalloc(&sync, sizeof(int) * kPanelRowsSyncInts), "cudaMalloc") ||
          !ok(cublasGetStream(h, &stream), "cublasGetStream"))
        return 1;
      tr = timed(repeat, [&] {
        for (Operand& x : dA)
          if (!ok(gpu_potrf_panel_rows(stream, m, k, x.d, m, info, sync), "gpu_potrf_panel_rows")) return false;
        return true;
      }, restore) / kPanelBatch;
      if (tr < 0) status = 1;
      diff_r = rel_diff(dA[0].get(), ref);
      cudaFree(sync);
    }
    cudaFree(info);
    const double flops = static_cast<double>(k) * k * k / 3.0 + static_cast<double>(m - k) * k * k;
    if (tc < 0 || tp < 0 || !(diff <= 1e-12) || !(diff_r <= 1e-12)) status = 1;
    std::printf("| %d | %d | %.1f | %.1f | %.2f | %.2f | %.1e | ", m, k, 1e6 * tc, 1e6 * tp, tc / tp,
                flops / tp * 1e-12, diff);
    if (tr > 0)
      std::printf("%.1f | %.2f | %.2f | %.1e |\n", 1e6 * tr, tc / tr, flops / tr * 1e-12, diff_r);
    else
      std::printf("(k > %d) | | | |\n", kPanelRowsMaxK);
  }
  cublasDestroy(h);
  cusolverDnDestroy(hs);
  return status;
}

/// The --panel-trace report: per shape, 16 untimed calls of
/// gpu_potrf_panel_rows queued back to back (clocks and caches warm), then
/// one with the kernel's trace; prints, per tile of 32 rows (the tiles of
/// the diagonal blocks and the first and last of the rows below), its SM,
/// its start and end in µs from the first tile's start (globaltimer), the
/// cycles per µs of its own clock, and per step the cycles (clock64) of the
/// wait for the diagonal tile's earlier columns (flag 1), their staging and
/// the update, the wait for the diagonal block (flag 2) and its staging,
/// the factorisation or solve, and the write-out.
int panel_trace_report(const std::vector<std::pair<int, int>>& shapes) {
  int status = 0;
  std::mt19937_64 rng(17);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (auto [m, k] : shapes) {
    if (k > kPanelRowsMaxK) continue;
    std::vector<double> A(static_cast<std::size_t>(m) * k);
    for (double& x : A) x = u(rng);
    for (int j = 0; j < k; ++j) {
      for (int i = 0; i < j; ++i) A[i + static_cast<std::size_t>(j) * m] = 0.0;
      A[j + static_cast<std::size_t>(j) * m] = 2.0 * k;
    }
    Operand dA;
    int *info = nullptr, *sync = nullptr;
    long long* trace = nullptr;
    const int tiles = (m + 31) / 32, nblk = (k + 31) / 32;
    const std::size_t words = static_cast<std::size_t>(tiles) * kPanelRowsTraceWords;
    if (!dA.init(A) || !ok(cudaMalloc(&info, sizeof(int)), "cudaMalloc") ||
        !ok(cudaMalloc(&sync, sizeof(int) * kPanelRowsSyncInts), "cudaMalloc") ||
        !ok(cudaMalloc(&trace, sizeof(long long) * words), "cudaMalloc"))
      return 1;
    for (int r = 0; r < 16; ++r)
      if (!ok(gpu_potrf_panel_rows(nullptr, m, k, dA.d, m, info, sync), "gpu_potrf_panel_rows")) return 1;
    if (!dA.restore() || !ok(gpu_potrf_panel_rows(nullptr, m, k, dA.d, m, info, sync, trace), "traced call") ||
        !ok(cudaDeviceSynchronize(), "cudaDeviceSynchronize"))
      return 1;
    std::vector<long long> T(words);
    if (!ok(cudaMemcpy(T.data(), trace, sizeof(long long) * words, cudaMemcpyDeviceToHost), "cudaMemcpy")) return 1;
    cudaFree(trace);
    cudaFree(sync);
    cudaFree(info);
    long long t0 = T[0], t1 = T[kPanelRowsTraceWords - 1];
    for (int t = 0; t < tiles; ++t) {
      t0 = std::min(t0, T[static_cast<std::size_t>(t) * kPanelRowsTraceWords]);
      t1 = std::max(t1, T[static_cast<std::size_t>(t) * kPanelRowsTraceWords + kPanelRowsTraceWords - 1]);
    }
    std::printf("\n### gpu_potrf_panel_rows %dx%d: %d tiles, %d blocks of columns, kernel span %.1f us "
                "(first tile's start to last tile's end)\n\n"
                "| tile | SM | start us | end us | cycles/us | step: wait for rows, stage + update, wait for diagonal + "
                "stage, factor or solve, write (cycles) |\n"
                "|---|---|---|---|---|---|\n",
                m, k, tiles, nblk, 1e-3 * static_cast<double>(t1 - t0));
    for (int t = 0; t < tiles; ++t) {
      if (t >= nblk && t != nblk && t != tiles - 1) continue;
      const long long* w = T.data() + static_cast<std::size_t>(t) * kPanelRowsTraceWords;
      const long long ns = w[kPanelRowsTraceWords - 1] - w[0], cyc = w[kPanelRowsTraceWords - 2] - w[1];
      std::printf("| %d | %lld | %.2f | %.2f | %.0f |", t, w[kPanelRowsTraceWords - 3], 1e-3 * static_cast<double>(w[0] - t0),
                  1e-3 * static_cast<double>(w[kPanelRowsTraceWords - 1] - t0),
                  ns > 0 ? 1e3 * static_cast<double>(cyc) / static_cast<double>(ns) : 0.0);
      long long prev = w[1];
      for (int j = 0; j <= std::min(t, nblk - 1); ++j) {
        std::printf(" %d: %lld %lld %lld %lld %lld;", j, w[2 + 5 * j] - prev, w[3 + 5 * j] - w[2 + 5 * j],
                    w[4 + 5 * j] - w[3 + 5 * j], w[5 + 5 * j] - w[4 + 5 * j], w[6 + 5 * j] - w[5 + 5 * j]);
        prev = w[6 + 5 * j];
      }
      std::printf(" |\n");
    }
  }
  return status;
}

/// The --d2h table (file header).
int d2h_table(int repeat, const std::vector<std::pair<int, int>>& shapes) {
  std::printf("| m × k | whole m·k: ms | GB/s |");
  const int blocks[] = {64, 256, 1024, 0};  // 0: k
  for (int b : blocks) {
    if (b) std::printf(" trapezoid by %d: ms | GB/s | / whole |", b);
    else std::printf(" trapezoid by k: ms | GB/s | / whole |");
  }
  std::printf("\n|---|---|---|");
  for (int i = 0; i < 4; ++i) std::printf("---|---|---|");
  std::printf("\n");
  cudaStream_t st = nullptr;
  cudaEvent_t e0 = nullptr, e1 = nullptr;
  if (!ok(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking), "cudaStreamCreate") ||
      !ok(cudaEventCreate(&e0), "cudaEventCreate") || !ok(cudaEventCreate(&e1), "cudaEventCreate"))
    return 1;
  for (auto [m, k] : shapes) {
    const std::size_t n = static_cast<std::size_t>(m) * static_cast<std::size_t>(k), ld = sizeof(double) * m;
    double* d = nullptr;
    double* h = nullptr;
    if (!ok(cudaMalloc(&d, n * sizeof(double)), "cudaMalloc") ||
        !ok(cudaMallocHost(&h, n * sizeof(double)), "cudaMallocHost") ||
        !ok(cudaMemset(d, 1, n * sizeof(double)), "cudaMemset"))
      return 1;
    std::memset(h, 0, n * sizeof(double));  // touched: resident before the first copy
    // One timed copy: B = -1 the whole array, else blocks of B columns.
    auto time_copy = [&](int B, double& bytes) -> double {
      std::vector<float> ms;
      for (int r = 0; r <= repeat; ++r) {
        bytes = 0;
        cudaEventRecord(e0, st);
        if (B < 0) {
          cudaMemcpyAsync(h, d, n * sizeof(double), cudaMemcpyDeviceToHost, st);
          bytes = static_cast<double>(n * sizeof(double));
        } else {
          for (int j = 0; j < k; j += B) {
            const std::size_t at = static_cast<std::size_t>(j) * m + j;
            const int w = std::min(B, k - j);
            cudaMemcpy2DAsync(h + at, ld, d + at, ld, sizeof(double) * (m - j), w, cudaMemcpyDeviceToHost, st);
            bytes += 8.0 * (m - j) * w;
          }
        }
        cudaEventRecord(e1, st);
        cudaEventSynchronize(e1);
        float t = 0;
        cudaEventElapsedTime(&t, e0, e1);
        if (r > 0) ms.push_back(t);
      }
      std::sort(ms.begin(), ms.end());
      return ms[ms.size() / 2];
    };
    double bytes = 0;
    const double whole = time_copy(-1, bytes);
    std::printf("| %d × %d | %.3f | %.1f |", m, k, whole, bytes / (whole * 1e6));
    for (int b : blocks) {
      const double t = time_copy(b ? b : k, bytes);
      std::printf(" %.3f | %.1f | %.2f |", t, bytes / (t * 1e6), t / whole);
    }
    std::printf("\n");
    if (!ok(cudaGetLastError(), "copies")) return 1;
    cudaFree(d);
    cudaFreeHost(h);
  }
  cudaEventDestroy(e0);
  cudaEventDestroy(e1);
  cudaStreamDestroy(st);
  return 0;
}

/// The --syrk table: the CB update C −= A·Aᵀ (lower triangle, order n,
/// rank k) by cuBLAS DSYRK and by gpu_syrk_lower_update's kernel (tiles of
/// 32 and of 64), each timed
/// over kSyrkBatch calls queued back to back on copies of C (restored
/// untimed before), as a factorisation queues its fronts' updates; median
/// microseconds a call, TFLOP/s (n²·k flops), cuBLAS time / kernel time and
/// the relative Frobenius difference of the results. Returns 1 on a failed
/// call, a difference above 1e-12, or an entry above the diagonal that the
/// kernel changed.
int syrk_table(int repeat, const std::vector<std::pair<int, int>>& shapes) {
  constexpr int kSyrkBatch = 8;
  cublasHandle_t h;
  if (!ok(cublasCreate(&h), "cublasCreate")) return 1;
  std::mt19937_64 rng(17);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::printf("gpu_blas_bench --syrk: median of %d after a warm-up, each run %d calls back to back on copies of C; "
              "us per call\n\n"
              "| n | k | cuBLAS DSYRK us | TFLOP/s | kernel 32 us | TFLOP/s | cuBLAS / kernel | rel diff | "
              "kernel 64 us | TFLOP/s | cuBLAS / kernel | rel diff |\n"
              "|---|---|---|---|---|---|---|---|---|---|---|---|\n",
              repeat, kSyrkBatch);
  int status = 0;
  for (auto [n, k] : shapes) {
    std::vector<double> A(static_cast<std::size_t>(n) * k), C(static_cast<std::size_t>(n) * n);
    for (double& x : A) x = u(rng);
    for (double& x : C) x = u(rng);
    Operand dA;
    std::vector<Operand> dC(kSyrkBatch);
    if (!dA.init(A)) return 1;
    for (Operand& o : dC)
      if (!o.init(C)) return 1;
    auto restore = [&] {
      for (Operand& o : dC)
        if (!o.restore()) return false;
      return true;
    };
    auto run = [&](SyrkMethod how, int tile) {
      return [&, how, tile] {
        for (Operand& c : dC)
          if (!ok(gpu_syrk_lower_update(h, n, k, dA.d, n, dA.d, n, c.d, n, how, tile), "gpu_syrk_lower_update"))
            return false;
        return true;
      };
    };
    const double flops = static_cast<double>(n) * n * k;
    const double tc = timed(repeat, run(SyrkMethod::cublas, 0), restore) / kSyrkBatch;
    const std::vector<double> ref = dC[0].get();
    std::printf("| %d | %d | %.1f | %.2f |", n, k, 1e6 * tc, flops / tc * 1e-12);
    for (int tile : {32, 64}) {
      const double tk = timed(repeat, run(SyrkMethod::kernel, tile), restore) / kSyrkBatch;
      const std::vector<double> got = dC[0].get();
      bool upper_kept = true;
      for (int j = 1; j < n && upper_kept; ++j)
        for (int i = 0; i < j; ++i)
          if (got[i + static_cast<std::size_t>(j) * n] != C[i + static_cast<std::size_t>(j) * n]) {
            upper_kept = false;
            break;
          }
      const double diff = rel_diff(got, ref);
      if (tc <= 0 || tk <= 0 || !(diff <= 1e-12) || !upper_kept) status = 1;
      std::printf(" %.1f | %.2f | %.2f | %.1e%s |", 1e6 * tk, flops / tk * 1e-12, tc / tk, diff,
                  upper_kept ? "" : " (upper triangle changed)");
    }
    std::printf("\n");
  }
  cublasDestroy(h);
  return status;
}

}  // namespace

int main(int argc, char** argv) {
  int repeat = 10;
  std::vector<int> leaves;
  std::vector<std::pair<int, int>> shapes;
  std::vector<int> potrf_orders;
  bool potrf = false, panel = false, panel_trace = false, d2h = false, syrk = false;
  for (int a = 1; a < argc; ++a) {
    if (!std::strcmp(argv[a], "--repeat") && a + 1 < argc) repeat = std::max(1, std::atoi(argv[++a]));
    else if (!std::strcmp(argv[a], "--potrf")) potrf = true;
    else if (!std::strcmp(argv[a], "--panel")) panel = true;
    else if (!std::strcmp(argv[a], "--panel-trace")) panel = panel_trace = true;
    else if (!std::strcmp(argv[a], "--d2h")) d2h = true;
    else if (!std::strcmp(argv[a], "--syrk")) syrk = true;
    else if (potrf) {
      const int k = std::atoi(argv[a]);
      if (k <= 0) {
        std::fprintf(stderr, "gpu_blas_bench: expected an order K > 0 after --potrf, got '%s'\n", argv[a]);
        return 2;
      }
      potrf_orders.push_back(k);
    }
    else if (!std::strcmp(argv[a], "--leaf") && a + 1 < argc) leaves.push_back(std::atoi(argv[++a]));
    else {
      int m = 0, n = 0;
      if (std::sscanf(argv[a], "%d:%d", &m, &n) != 2 || m <= 0 || n <= 0 || ((panel || d2h) && n > m)) {
        std::fprintf(stderr, "gpu_blas_bench: expected M:N with M, N > 0, got '%s'\n", argv[a]);
        return 2;
      }
      shapes.emplace_back(m, n);
    }
  }
  if (syrk) {
    if (shapes.empty())  // CB updates of lap3d 60³'s fronts (order m − k, rank k: mean m of each bin of k,
                         // bench/README.md session 40) and larger ones around the crossover
      shapes = {{640, 45},   {800, 95},    {1116, 190},  {1830, 380}, {2985, 700}, {3062, 1500},
                {300, 100},  {2000, 128},  {1500, 600},  {4000, 256}, {2048, 512}, {6000, 600}};
    return syrk_table(repeat, shapes);
  }
  if (d2h) {
    if (shapes.empty())  // lap3d 60³'s root and fronts of its bins of k (bench/README.md, session 33)
      shapes = {{5361, 5361}, {4562, 1500}, {3685, 700}, {2209, 380}, {1306, 190}, {897, 100}};
    return d2h_table(repeat, shapes);
  }
  if (panel) {
    if (shapes.empty())  // fronts of lap3d 100³ (bins of k in bench/README.md) and a 2048 tile
      shapes = {{16, 16},     {64, 64},     {1000, 64},   {700, 12},    {1000, 50},  {966, 89},   {1655, 179},
                {2945, 372},  {4210, 582},  {6088, 1110}, {512, 512},  {2048, 2048}};
    return panel_trace ? panel_trace_report(shapes) : panel_table(repeat, shapes);
  }
  if (potrf) {
    if (potrf_orders.empty()) potrf_orders = {8, 16, 32, 64, 96, 128, 192, 256, 384, 512, 768, 1024, 1536, 2048};
    return potrf_table(repeat, potrf_orders);
  }
  if (leaves.empty()) leaves = {32, 64};
  if (shapes.empty())
    shapes = {{2048, 2048}, {4096, 2048}, {1500, 600}, {3000, 1500}, {5000, 2500}, {2500, 5000}, {800, 300}, {6000, 600},
              {300, 100}, {2000, 128}};
  struct Variant {
    std::string name;
    GpuTrsmOptions o;
  };
  std::vector<Variant> variants;
  for (int l : leaves) variants.push_back({"kernel leaves " + std::to_string(l), {l, TrsmLeaf::kernel}});
  variants.push_back({"cublas leaves 256", {256, TrsmLeaf::cublas}});
  cublasHandle_t h;
  if (!ok(cublasCreate(&h), "cublasCreate")) return 1;
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> u(-1.0, 1.0), dg(1.0, 2.0);
  std::printf("gpu_blas_bench: median of %d after a warm-up; TFLOP/s; ratio = cuBLAS DTRSM time / variant time\n\n",
              repeat);
  std::printf("| m | n | cuBLAS DTRSM | DGEMM (same flops) | cuBLAS DSYRK (m, rank n) |");
  for (const Variant& v : variants) std::printf(" %s | ratio |", v.name.c_str());
  std::printf(" max rel diff |\n|---|---|---|---|---|");
  for (std::size_t i = 0; i < variants.size(); ++i) std::printf("---|---|");
  std::printf("---|\n");
  int status = 0;
  for (auto [m, n] : shapes) {
    std::vector<double> L(static_cast<std::size_t>(n) * n, 0.0), B(static_cast<std::size_t>(m) * n);
    for (int j = 0; j < n; ++j)
      for (int i = j; i < n; ++i) L[i + static_cast<std::size_t>(j) * n] = i == j ? dg(rng) : u(rng) / std::sqrt(n);
    for (double& x : B) x = u(rng);
    Operand dL, dB, dG, dC;
    if (!dL.init(L) || !dB.init(B) || !dG.init(std::vector<double>(static_cast<std::size_t>(m) * n, 0.0)) ||
        !dC.init(std::vector<double>(static_cast<std::size_t>(m) * m, 1.0)))
      return 1;
    const double flops = static_cast<double>(m) * n * n, syrk_flops = static_cast<double>(m) * m * n;
    auto rs = [&] { return dB.restore(); };
    const GpuTrsmOptions plain{0, TrsmLeaf::cublas};
    const double tc = timed(repeat, [&] { return ok(gpu_trsm_right_lower_trans(h, m, n, dL.d, n, dB.d, m, plain), "trsm"); }, rs);
    const std::vector<double> ref = dB.get();
    const double one = 1.0, minus_one = -1.0;
    // DGEMM m×n×(n/2): 2·m·n·(n/2) = m·n² flops, the TRSM's.
    const double tg = timed(repeat, [&] {
      return ok(cublasDgemm(h, CUBLAS_OP_N, CUBLAS_OP_T, m, n, n / 2, &one, dB.d, m, dL.d, n, &one, dG.d, m), "gemm");
    }, [] { return true; });
    const double ts = timed(repeat, [&] {
      return ok(cublasDsyrk(h, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, m, n, &minus_one, dB.d, m, &one, dC.d, m), "syrk");
    }, rs);
    std::printf("| %d | %d | %.2f | %.2f | %.2f |", m, n, flops / tc * 1e-12, flops / tg * 1e-12, syrk_flops / ts * 1e-12);
    double worst = 0;
    for (const Variant& v : variants) {
      const double tr = timed(repeat, [&] {
        return ok(gpu_trsm_right_lower_trans(h, m, n, dL.d, n, dB.d, m, v.o), "trsm") &&
               ok(cudaGetLastError(), "leaf kernel");
      }, rs);
      worst = std::max(worst, rel_diff(dB.get(), ref));
      std::printf(" %.2f | %.2f |", flops / tr * 1e-12, tc / tr);
    }
    std::printf(" %.1e |\n", worst);
    if (!(worst <= 1e-12)) status = 1;
  }
  cublasDestroy(h);
  return status;
}
