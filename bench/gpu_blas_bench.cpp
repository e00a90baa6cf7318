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
// Usage: gpu_blas_bench [--repeat K] [--leaf L]... [M:N]...
//   --leaf L: a leaf order to measure (repeatable; default 32 64; the
//   kernel's leaves are at most kTrsmKernelLeafMax = 64)
//   M:N: a shape m×n (default: tile and front shapes of the lap3d task
//   logs in bench/README.md).
#include <cublas_v2.h>
#include <cuda_runtime.h>

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

}  // namespace

int main(int argc, char** argv) {
  int repeat = 10;
  std::vector<int> leaves;
  std::vector<std::pair<int, int>> shapes;
  for (int a = 1; a < argc; ++a) {
    if (!std::strcmp(argv[a], "--repeat") && a + 1 < argc) repeat = std::max(1, std::atoi(argv[++a]));
    else if (!std::strcmp(argv[a], "--leaf") && a + 1 < argc) leaves.push_back(std::atoi(argv[++a]));
    else {
      int m = 0, n = 0;
      if (std::sscanf(argv[a], "%d:%d", &m, &n) != 2 || m <= 0 || n <= 0) {
        std::fprintf(stderr, "gpu_blas_bench: expected M:N with M, N > 0, got '%s'\n", argv[a]);
        return 2;
      }
      shapes.emplace_back(m, n);
    }
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
