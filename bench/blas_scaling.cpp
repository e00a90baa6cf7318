// blas_scaling: how the dense steps of one small front (what the CPU subtree
// kernel calls per front: DPOTRF on the k fully-summed columns, DTRSM of the
// m-k rows below, DSYRK into the CB) scale with the number of threads calling
// them at once, each thread on its own cache-resident data; and, for
// comparison, how a memory-bound sweep (memset + memcpy of a private 64 MiB
// buffer) scales. If the per-thread BLAS rate falls with the thread count
// while the data stay in each core's cache, the calls contend inside the
// library (OpenBLAS's buffer allocator takes a global lock per call unless
// built with thread-local buffers), not on memory bandwidth.
//
// Usage: blas_scaling [--seconds S] [--threads T1,T2,...] [--cb]
// Prints one Markdown table: threads, per-thread GFLOP/s for two front shapes
// (m x k = 200 x 24 and 400 x 64), per-thread GB/s of the sweep.
// --cb instead: on one thread, the CB update C = -L21·L21ᵀ of an order-mc CB
// from k columns (front_cholesky.cpp), by DSYRK (lower triangle, beta 0) and
// by DGEMM (the whole square, twice the flops), for CB orders 16 to 400;
// µs per call (best of 5 rounds of `seconds`/10 each, the two alternating)
// and their ratio (> 1: DGEMM is faster). The CPU kernel now computes its
// CB by DGEMM over column blocks (cb_block_columns,
// front_cholesky.hpp; knob STARFRONT_CB_BLOCK, 0: one DSYRK).
#include "cpu/blas.hpp"
#include "cpu/blas_core.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

/// One front's dense steps, repeated for `seconds`; returns flops per second.
double front_steps(int m, int k, double seconds, unsigned seed) {
  const int mc = m - k;
  std::vector<double> pristine(static_cast<std::size_t>(m) * k), panel(pristine.size()),
      cb(static_cast<std::size_t>(mc) * mc);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (double& x : pristine) x = u(rng);
  for (int j = 0; j < k; ++j) pristine[static_cast<std::size_t>(j) * m + j] = 2.0 * m;  // SPD diagonal block
  const double flops = k * k * k / 3.0 + static_cast<double>(mc) * k * k + static_cast<double>(mc) * mc * k;
  long iters = 0;
  const auto t0 = Clock::now();
  double elapsed = 0;
  do {
    for (int r = 0; r < 16; ++r, ++iters) {
      std::memcpy(panel.data(), pristine.data(), panel.size() * sizeof(double));
      if (LAPACKE_dpotrf_work(LAPACK_COL_MAJOR, 'L', k, panel.data(), m) != 0) std::abort();
      cblas_dtrsm(CblasColMajor, CblasRight, CblasLower, CblasTrans, CblasNonUnit, mc, k, 1.0, panel.data(), m,
                  panel.data() + k, m);
      cblas_dsyrk(CblasColMajor, CblasLower, CblasNoTrans, mc, k, -1.0, panel.data() + k, m, 0.0, cb.data(), mc);
    }
    elapsed = std::chrono::duration<double>(Clock::now() - t0).count();
  } while (elapsed < seconds);
  return flops * static_cast<double>(iters) / elapsed;
}

/// Seconds per call of the CB update of order mc from k columns, by DSYRK
/// (gemm false) or DGEMM, over `seconds` of back-to-back calls.
double cb_update(int mc, int k, bool gemm, double seconds, const std::vector<double>& L21, std::vector<double>& cb) {
  long iters = 0;
  const auto t0 = Clock::now();
  double elapsed = 0;
  do {
    for (int r = 0; r < 16; ++r, ++iters) {
      if (gemm)
        cblas_dgemm(CblasColMajor, CblasNoTrans, CblasTrans, mc, mc, k, -1.0, L21.data(), mc, L21.data(), mc, 0.0,
                    cb.data(), mc);
      else
        cblas_dsyrk(CblasColMajor, CblasLower, CblasNoTrans, mc, k, -1.0, L21.data(), mc, 0.0, cb.data(), mc);
    }
    elapsed = std::chrono::duration<double>(Clock::now() - t0).count();
  } while (elapsed < seconds);
  return elapsed / static_cast<double>(iters);
}

/// The --cb table (file header).
void cb_table(double seconds) {
  std::printf("| CB order | k | DSYRK µs | DGEMM µs | DSYRK / DGEMM |\n|---|---|---|---|---|\n");
  std::mt19937_64 rng(31);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  const int shapes[][2] = {{16, 4}, {32, 8}, {48, 8}, {64, 8}, {64, 16}, {96, 16}, {128, 16}, {128, 32},
                           {160, 24}, {200, 24}, {256, 32}, {400, 64}};
  for (const auto& sh : shapes) {
    const int mc = sh[0], k = sh[1];
    std::vector<double> L21(static_cast<std::size_t>(mc) * k), cb(static_cast<std::size_t>(mc) * mc);
    for (double& x : L21) x = u(rng);
    double best[2] = {1e30, 1e30};
    for (int round = 0; round < 5; ++round)
      for (int g = 0; g < 2; ++g) best[g] = std::min(best[g], cb_update(mc, k, g == 1, seconds / 10, L21, cb));
    std::printf("| %d | %d | %.2f | %.2f | %.2f |\n", mc, k, 1e6 * best[0], 1e6 * best[1], best[0] / best[1]);
    std::fflush(stdout);
  }
}

/// memset + memcpy over a private buffer for `seconds`; returns bytes moved per second.
double sweep(double seconds) {
  const std::size_t n = std::size_t{64} << 17;  // 64 MiB of doubles per array
  std::vector<double> a(n, 1.0), b(n, 2.0);
  long iters = 0;
  const auto t0 = Clock::now();
  double elapsed = 0;
  do {
    std::memset(a.data(), 0, n * sizeof(double));
    std::memcpy(b.data(), a.data(), n * sizeof(double));
    ++iters;
    elapsed = std::chrono::duration<double>(Clock::now() - t0).count();
  } while (elapsed < seconds);
  return 3.0 * static_cast<double>(n * sizeof(double)) * static_cast<double>(iters) / elapsed;  // set, read, write
}

/// Runs f on T threads at once; returns the mean of their rates.
template <class F>
double on_threads(int T, F f) {
  std::vector<double> rate(static_cast<std::size_t>(T), 0.0);
  std::vector<std::thread> th;
  std::atomic<int> ready{0};
  for (int t = 0; t < T; ++t)
    th.emplace_back([&, t] {
      ready.fetch_add(1);
      while (ready.load() < T) std::this_thread::yield();
      rate[static_cast<std::size_t>(t)] = f(static_cast<unsigned>(t));
    });
  for (auto& x : th) x.join();
  double s = 0;
  for (double r : rate) s += r;
  return s / T;
}

}  // namespace

int main(int argc, char** argv) {
  starfront::reexec_with_native_blas(argv);  // before any thread: OpenBLAS's kernels for this CPU
  double seconds = 0.5;
  std::vector<int> threads{1, 2, 4, 8, 15};
  bool cb = false;
  for (int a = 1; a < argc; ++a) {
    if (!std::strcmp(argv[a], "--cb")) {
      cb = true;
    } else if (!std::strcmp(argv[a], "--seconds") && a + 1 < argc) {
      seconds = std::atof(argv[++a]);
    } else if (!std::strcmp(argv[a], "--threads") && a + 1 < argc) {
      threads.clear();
      for (char* p = std::strtok(argv[++a], ","); p; p = std::strtok(nullptr, ",")) threads.push_back(std::atoi(p));
    } else {
      std::fprintf(stderr, "usage: blas_scaling [--seconds S] [--threads T1,T2,...] [--cb]\n");
      return 2;
    }
  }
  openblas_set_num_threads(1);  // as starfront: one BLAS call per worker thread
  std::printf("OpenBLAS %s kernels; %.2f s per point\n\n", starfront::blas_core().name.c_str(), seconds);
  if (cb) {
    cb_table(seconds);
    return 0;
  }
  std::printf("| threads | front 200x24 GFLOP/s per thread | front 400x64 GFLOP/s per thread | sweep GB/s per thread |\n");
  std::printf("|---|---|---|---|\n");
  for (int T : threads) {
    if (T < 1) continue;
    const double small = on_threads(T, [&](unsigned s) { return front_steps(200, 24, seconds, s + 1); });
    const double medium = on_threads(T, [&](unsigned s) { return front_steps(400, 64, seconds, s + 101); });
    const double bw = on_threads(T, [&](unsigned) { return sweep(seconds); });
    std::printf("| %d | %.1f | %.1f | %.1f |\n", T, small / 1e9, medium / 1e9, bw / 1e9);
    std::fflush(stdout);
  }
  return 0;
}
