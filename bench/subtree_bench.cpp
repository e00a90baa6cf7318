// subtree_bench: the CPU subtree kernel on its own. On the GPU graph
// (gpu_graph_options: the fused subtrees at the bottom of the assembly tree
// run on the CPU workers while the GPU takes the fronts above), every
// subtree task of each input runs on one thread, one after the other, with
// OpenBLAS single-threaded: the per-core rate of the CPU side of issue 5's
// lap3d 60³ factorisation, measured on any machine. One warm-up pass, then
// --repeat timed passes over all the subtree tasks; per input the median pass
// (ms), its flops (CHOLMOD's convention, the tasks' exact counts), the fronts,
// GFLOP/s, and a least-squares fit of the task times (medians over the
// passes) to a·fronts + flops/b: the kernel's cost per front and its rate
// (bench/task_log_summary.py --fit fits the same on a StarPU task log).
// The factor of every pass is checked against the sequential executor's
// (bitwise: the same kernel on the same inputs).
// Usage: subtree_bench [--repeat R] [--workers W] [--max-subtree-front F] INPUT...
//   --workers W: GraphOptions::workers of the graph (default 16, the H200
//   machine's cores); the GPU graph's subtrees depend on it only above
//   4e12·W flops (gpu_graph_options: min_subtree_flops = 1e12, subtree_ratio
//   4), so not on lap3d 60³; INPUT: Matrix Market file, lap3d:N[:27],
//   lap2d:N, dense:N.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "api/solver.hpp"
#include "cpu/blas_core.hpp"
#include "cpu/task_kernels.hpp"
#include "runtime/sequential/sequential_executor.hpp"
#include "solve/factor.hpp"

#include "bench_common.hpp"

using namespace starfront;
using namespace starfront::bench;

namespace {

struct Fit {
  double per_front = 0, per_flop = 0;  ///< seconds
};

/// Least squares of t ≈ a·fronts + c·flops (no intercept), by the 2×2 normal equations.
Fit fit_tasks(const std::vector<double>& fronts, const std::vector<double>& flops, const std::vector<double>& t) {
  double s11 = 0, s12 = 0, s22 = 0, r1 = 0, r2 = 0;
  for (std::size_t i = 0; i < t.size(); ++i) {
    s11 += fronts[i] * fronts[i], s12 += fronts[i] * flops[i], s22 += flops[i] * flops[i];
    r1 += fronts[i] * t[i], r2 += flops[i] * t[i];
  }
  const double det = s11 * s22 - s12 * s12;
  if (det == 0) return {};
  return {(r1 * s22 - r2 * s12) / det, (s11 * r2 - s12 * r1) / det};
}

int run_input(const std::string& name, int repeat, int workers, idx_t max_front) {
  CscMatrix A;
  if (Status st = load(name, A); !st.ok()) {
    std::fprintf(stderr, "subtree_bench: %s\n", st.message.c_str());
    return 1;
  }
  Solver solver;
  GraphOptions go = gpu_graph_options(workers, max_front);
  go.workers = workers;
  if (Status st = solver.analyse(A, AnalysisOptions{}, go); !st.ok()) {
    std::fprintf(stderr, "subtree_bench: %s\n", st.message.c_str());
    return 1;
  }
  // The reference factor: the sequential executor over the whole graph.
  if (Status st = solver.factorize(A, FactorOptions{}, Executor::sequential); !st.ok()) {
    std::fprintf(stderr, "subtree_bench: %s: %s\n", name.c_str(), st.message.c_str());
    return 1;
  }
  const TaskGraph& G = solver.graph();
  const FrontPlan& P = solver.plan();
  openblas_set_num_threads(1);
  NumericFactor F;
  F.plan = &P;
  F.Lx.assign(P.factor_size(), 0.0);
  FactorContext ctx;
  prepare_factor_context(P, A, FactorOptions{}, F, ctx);

  std::vector<idx_t> tasks;
  std::vector<double> fronts, flops;
  std::size_t cb_max = 1;
  for (idx_t t = 0; t < static_cast<idx_t>(G.tasks.size()); ++t) {
    const Task& k = G.tasks[t];
    if (k.kind != TaskKind::subtree) continue;
    tasks.push_back(t);
    fronts.push_back(static_cast<double>(k.front - k.first_front + 1));
    flops.push_back(k.flops);
    const idx_t mc = P.cb_order(k.front);
    cb_max = std::max<std::size_t>(cb_max, static_cast<std::size_t>(mc) * mc);
  }
  if (tasks.empty()) {
    std::fprintf(stderr, "subtree_bench: %s: the graph has no subtree task\n", name.c_str());
    return 1;
  }
  std::vector<double> cb(cb_max);  // every task's output CB (not read back)
  std::vector<std::vector<double>> times(tasks.size());
  std::vector<double> pass;
  for (int r = 0; r <= repeat; ++r) {
    const auto p0 = std::chrono::steady_clock::now();
    for (std::size_t i = 0; i < tasks.size(); ++i) {
      const Task& k = G.tasks[tasks[i]];
      const Block& L = G.blocks[G.accesses[k.acc_begin].block];
      double* ptrs[2] = {F.Lx.data() + L.offset, cb.data()};
      const auto t0 = std::chrono::steady_clock::now();
      run_task_cpu(G, tasks[i], ptrs, ctx);
      if (r > 0) times[i].push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    if (r > 0) pass.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - p0).count());
    if (ctx.failed) {
      std::fprintf(stderr, "subtree_bench: %s: a subtree task failed (column %lld)\n", name.c_str(),
                   static_cast<long long>(ctx.fail_column));
      return 1;
    }
  }
  // Every front of a subtree is written by its task alone: those parts of
  // Lx must equal the sequential executor's bit for bit.
  const std::vector<double>& ref = solver.factor().Lx;
  for (idx_t i : tasks) {
    const Task& k = G.tasks[i];
    for (idx_t s = k.first_front; s <= k.front; ++s) {
      const std::size_t a = static_cast<std::size_t>(P.l_offset[s]);
      const std::size_t e = a + static_cast<std::size_t>(P.front_order(s)) * P.ncols(s);
      if (!std::equal(F.Lx.begin() + a, F.Lx.begin() + e, ref.begin() + a)) {
        std::fprintf(stderr, "subtree_bench: %s: front %lld differs from the sequential executor's\n", name.c_str(),
                     static_cast<long long>(s));
        return 1;
      }
    }
  }
  std::vector<double> med(tasks.size());
  double nfront = 0, nflop = 0;
  for (std::size_t i = 0; i < tasks.size(); ++i) {
    med[i] = median(times[i]);
    nfront += fronts[i], nflop += flops[i];
  }
  const Fit fit = fit_tasks(fronts, flops, med);
  const double t = median(pass);
  // "–": fewer than two tasks, tasks all alike, or a fit without meaning
  // (a negative cost per front or per flop).
  char fit_text[64] = "– | –";
  if (fit.per_flop > 0 && fit.per_front >= 0)
    std::snprintf(fit_text, sizeof fit_text, "%.2f | %.1f", fit.per_front * 1e6, 1e-9 / fit.per_flop);
  std::printf("| %s | %zu | %.0f | %.3f | %.2f | %.1f | %s |\n", name.substr(name.find_last_of('/') + 1).c_str(),
              tasks.size(), nfront, nflop * 1e-9, t * 1e3, nflop / t * 1e-9, fit_text);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  reexec_with_native_blas(argv);  // before any thread: OpenBLAS's kernels for this CPU
  int repeat = 5, workers = 16;
  idx_t max_front = kGpuGraphSubtreeFront;
  std::vector<std::string> names;
  for (int a = 1; a < argc; ++a) {
    long long v = 0;
    if (!std::strcmp(argv[a], "--repeat") && a + 1 < argc && parse_count(argv[a + 1], 1, 1000, v)) {
      repeat = static_cast<int>(v), ++a;
    } else if (!std::strcmp(argv[a], "--workers") && a + 1 < argc && parse_count(argv[a + 1], 1, 65536, v)) {
      workers = static_cast<int>(v), ++a;
    } else if (!std::strcmp(argv[a], "--max-subtree-front") && a + 1 < argc && parse_count(argv[a + 1], 1, 1 << 20, v)) {
      max_front = static_cast<idx_t>(v), ++a;
    } else if (argv[a][0] == '-') {
      std::fprintf(stderr, "subtree_bench: bad option or value '%s'\nusage: subtree_bench [--repeat R] [--workers W] "
                   "[--max-subtree-front F] INPUT...\n", argv[a]);
      return 2;
    } else {
      names.push_back(argv[a]);
    }
  }
  if (names.empty()) names.push_back("lap3d:60");
  std::printf("subtree_bench: OpenBLAS %s kernels; every subtree task of the GPU graph (%d workers, fronts up to %lld) on one thread, "
              "median of %d passes\n\n", blas_core().name.c_str(), workers, static_cast<long long>(max_front),
              repeat);
  std::printf("| matrix | subtree tasks | fronts | GFLOP | pass ms | GFLOP/s | fit: µs a front | fit: GFLOP/s |\n");
  std::printf("|---|---|---|---|---|---|---|---|\n");
  for (const std::string& n : names)
    if (int rc = run_input(n, repeat, workers, max_front); rc != 0) return rc;
  return 0;
}
