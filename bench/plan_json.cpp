// plan_json: the GPU graph of one input as JSON (graph_json, the format of
// `starfront plan --json`) under any amalgamation parameters, for
// bench/schedule_model.py: how the modelled makespan of a GPU-graph
// factorisation moves with the amalgamation, without a GPU (bench/README.md,
// issue 5, session 46). Analysis and planning only (no StarPU, no
// factorisation). Prints one line: supernodes, flops (exact and stored),
// tasks, front tasks, and the bytes of the front tasks' and of the tiled
// fronts' L (lower trapezoids: copied home from the GPU) and of the subtree
// tasks' output CBs (whole buffers: copied to the GPU).
// Usage: plan_json [--workers W] [--relax-small R] [--relax-mid M] [--relax-zeros Z]
//                  [--relax-marginal X] [--relax-zeros-cap C] INPUT OUT.json
//   AnalysisOptions' relax_small, relax_mid, relax_zeros_large,
//   relax_marginal and relax_zeros_cap (defaults 4, 16, 0.1, 0.01, 0.2, as
//   gpu_bench's options of the same names); --workers W: GraphOptions::
//   workers (default 16, the H200 machine's cores; the GPU graph's subtrees
//   depend on it only above 4e12·W flops: gpu_graph_options); INPUT: Matrix
//   Market file, lap3d:N[:27], lap2d:N, dense:N.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "analysis/symbolic.hpp"
#include "plan/front_plan.hpp"
#include "plan/task_graph.hpp"

#include "bench_common.hpp"

using namespace starfront;
using namespace starfront::bench;

namespace {

int usage(const char* bad) {
  std::fprintf(stderr, "plan_json: bad option or value '%s'\nusage: plan_json [--workers W] [--relax-small R] "
               "[--relax-mid M] [--relax-zeros Z] [--relax-marginal X] [--relax-zeros-cap C] INPUT OUT.json\n", bad);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  AnalysisOptions ao;
  int workers = 16;
  std::vector<std::string> args;
  for (int a = 1; a < argc; ++a) {
    const char* o = argv[a];
    const bool has = a + 1 < argc;
    long long n = 0;
    double x = 0;
    if (!std::strcmp(o, "--workers") && has && parse_count(argv[a + 1], 1, 65536, n)) {
      workers = static_cast<int>(n), ++a;
    } else if (!std::strcmp(o, "--relax-small") && has && parse_count(argv[a + 1], 0, 1 << 30, n)) {
      ao.relax_small = static_cast<idx_t>(n), ++a;
    } else if (!std::strcmp(o, "--relax-mid") && has && parse_count(argv[a + 1], 0, 1 << 30, n)) {
      ao.relax_mid = static_cast<idx_t>(n), ++a;
    } else if (!std::strcmp(o, "--relax-zeros") && has && parse_real(argv[a + 1], x)) {
      ao.relax_zeros_large = x, ++a;
    } else if (!std::strcmp(o, "--relax-marginal") && has && parse_real(argv[a + 1], x)) {
      ao.relax_marginal = x, ++a;
    } else if (!std::strcmp(o, "--relax-zeros-cap") && has && parse_real(argv[a + 1], x)) {
      ao.relax_zeros_cap = x, ++a;
    } else if (o[0] == '-' && o[1] != '\0') {
      return usage(o);
    } else {
      args.push_back(o);
    }
  }
  if (args.size() != 2) return usage(args.size() < 2 ? "(INPUT and OUT.json needed)" : args[2].c_str());
  CscMatrix A;
  SymbolicFactor sym;
  FrontPlan P;
  TaskGraph G;
  GraphOptions go = gpu_graph_options(workers);
  go.workers = workers;
  Status st = load(args[0], A);
  if (st.ok()) st = analyse(A, ao, sym);
  if (st.ok()) st = build_front_plan(A, sym, P);
  if (st.ok()) st = build_task_graph(P, go, G);
  if (!st.ok()) {
    std::fprintf(stderr, "plan_json: %s: %s\n", args[0].c_str(), st.message.c_str());
    return 1;
  }
  std::ofstream out(args[1]);
  out << graph_json(G);
  out.close();
  if (!out) {
    std::fprintf(stderr, "plan_json: cannot write %s\n", args[1].c_str());
    return 1;
  }
  // What the bus carries when the front tasks run on a GPU and the subtrees
  // on CPU cores: each front's L (lower trapezoid) home, each subtree's
  // output CB (a whole mc×mc buffer) to the GPU.
  // A tiled front's L is its tiles (one potrf task each on the diagonal).
  long long fronts = 0;
  double l_bytes = 0, tiled_l_bytes = 0, cb_bytes = 0;
  auto trapezoid = [&](idx_t s) {
    const double m = static_cast<double>(P.front_order(s)), k = static_cast<double>(P.ncols(s));
    return 8 * (m * k - k * (k - 1) / 2);
  };
  std::vector<char> tiled(static_cast<std::size_t>(P.nsuper), 0);
  for (const Task& t : G.tasks) {
    if (t.kind == TaskKind::front) ++fronts, l_bytes += trapezoid(t.front);
    if (t.kind == TaskKind::subtree) cb_bytes += 8.0 * P.cb_order(t.front) * P.cb_order(t.front);
    if (t.kind == TaskKind::potrf && !tiled[t.front]) tiled[t.front] = 1, tiled_l_bytes += trapezoid(t.front);
  }
  std::printf("%s: %lld supernodes, flops %.4e (stored factor %.4e), %zu tasks, %lld front tasks; "
              "L of the front tasks %.1f MB, of the tiled fronts %.1f MB; subtree output CBs %.1f MB\n",
              args[0].c_str(), static_cast<long long>(P.nsuper), sym.flops_exact, sym.flops, G.tasks.size(), fronts,
              l_bytes * 1e-6, tiled_l_bytes * 1e-6, cb_bytes * 1e-6);
  return 0;
}
