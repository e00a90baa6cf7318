// tree_path: the assembly tree's modelled critical path (analysis/
// critical_path.hpp) under each ordering and amalgamation, one table row per
// variant. No factorisation: a CPU-only look at what the fused GPU kernel's
// time follows on latency-bound trees (bench/README.md, issue 6, session 43).
// Usage: tree_path [--max-front F] INPUT...   (INPUT: Matrix Market file,
//        lap3d:N[:27], lap2d:N, dense:N)
//        tree_path --fit CHAIN.txt...
//   --fit: least-squares fit of the front latency model (FrontLatencyModel:
//   t = a + b k + c k (m - k)) to the "fused chain" lines of the fused
//   kernel's traces (STARFRONT_FUSED_TRACE=2, run-relax.sh's chain step:
//   per front m, k and its lag, extend-add, factor and write times, us),
//   the fronts of the small and the large launch apart and together.
//   --max-front F: the cap of the critical-path rows (default
//   kGpuFusedFront = 232, the largest front the fused GPU kernel keeps in
//   shared memory: plan/task_graph.hpp).
// Columns: supernodes, flops (of the amalgamated factor), the largest front,
// fronts above F, the critical path in modelled microseconds, its fronts and
// its fully-summed columns, and the analysis time (s).
#include <lapacke.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "analysis/symbolic.hpp"
#include "bench_common.hpp"
#include "plan/task_graph.hpp"

using namespace starfront;
using namespace starfront::bench;

namespace {

struct Variant {
  const char* ordering;
  const char* amalgamation;
  AnalysisOptions opts;
};

std::vector<Variant> variants(idx_t cap) {
  std::vector<Variant> v;
  // amalgamation: 0 the default rule, 1 the default rule under the cap,
  // 2 the critical-path rule under the cap.
  auto add = [&](const char* o, OrderingMethod m, OrderingChoice c, int amalgamation) {
    AnalysisOptions a;
    a.ordering = m;
    a.ordering_choice = c;
    a.relax_critical_path = amalgamation == 2;
    a.relax_max_front = amalgamation > 0 ? cap : 0;
    v.push_back({o, amalgamation == 0 ? "default" : amalgamation == 1 ? "default, cap" : "critical path, cap", a});
  };
  add("scotch", OrderingMethod::scotch, OrderingChoice::flops, 0);
  add("scotch-nd", OrderingMethod::scotch_nd, OrderingChoice::flops, 0);
  add("scotch-amd", OrderingMethod::scotch_amd, OrderingChoice::flops, 0);
  add("scotch-nd", OrderingMethod::scotch_nd, OrderingChoice::flops, 1);
  add("scotch-amd", OrderingMethod::scotch_amd, OrderingChoice::flops, 1);
  add("scotch-nd", OrderingMethod::scotch_nd, OrderingChoice::flops, 2);
  add("scotch-amd", OrderingMethod::scotch_amd, OrderingChoice::flops, 2);
  add("scotch-path", OrderingMethod::scotch, OrderingChoice::critical_path, 2);
  return v;
}

// One front of a traced critical chain: m, k, and its time in us (lag +
// extend-add + factor + write).
struct ChainFront {
  bool large;
  double m, k, t;
};

// Least squares t ~ a + b k + c k (m - k) / 100 (c per hundred entries, us).
bool fit(const std::vector<ChainFront>& f, double coef[3], double& rms) {
  const lapack_int n = static_cast<lapack_int>(f.size());
  if (n < 3) return false;
  std::vector<double> X(3 * n), y(n);
  for (lapack_int i = 0; i < n; ++i) {
    X[i] = 1.0;
    X[n + i] = f[i].k;
    X[2 * n + i] = f[i].k * (f[i].m - f[i].k) / 100.0;
    y[i] = f[i].t;
  }
  const std::vector<double> X0 = X, y0 = y;
  if (LAPACKE_dgels(LAPACK_COL_MAJOR, 'N', n, 3, 1, X.data(), n, y.data(), n) != 0) return false;
  double ss = 0.0;
  for (lapack_int i = 0; i < n; ++i) {
    const double r = X0[i] * y[0] + X0[n + i] * y[1] + X0[2 * n + i] * y[2] - y0[i];
    ss += r * r;
  }
  for (int j = 0; j < 3; ++j) coef[j] = y[j];
  rms = std::sqrt(ss / n);
  return true;
}

int fit_mode(const std::vector<std::string>& files) {
  std::vector<ChainFront> fronts;
  for (const std::string& name : files) {
    std::FILE* fp = std::fopen(name.c_str(), "r");
    if (!fp) {
      std::fprintf(stderr, "tree_path: cannot open %s\n", name.c_str());
      return 1;
    }
    char line[1024];
    while (std::fgets(line, sizeof line, fp)) {
      const char* p = std::strstr(line, "fused chain ");
      if (p != line) continue;
      const char* kind = std::strstr(line, "(large)") ? "large" : std::strstr(line, "(small)") ? "small" : nullptr;
      const char* q = std::strstr(line, ") m ");
      double m, k, lag, ea, fa, wr;
      int children;
      if (!kind || !q ||
          std::sscanf(q, ") m %lf k %lf children %d: lag %lf, extend-add %lf, factor %lf, write %lf", &m, &k,
                      &children, &lag, &ea, &fa, &wr) != 7) {
        std::fprintf(stderr, "tree_path: %s: a \"fused chain\" line not understood: %s", name.c_str(), line);
        std::fclose(fp);
        return 1;
      }
      fronts.push_back({std::strcmp(kind, "large") == 0, m, k, lag + ea + fa + wr});
    }
    std::fclose(fp);
  }
  std::printf("| fronts | count | a (us) | b (us a column) | c (us per 100 k(m-k)) | rms (us) |\n|---|---|---|---|---|---|\n");
  for (int which = 0; which < 3; ++which) {
    std::vector<ChainFront> sel;
    for (const ChainFront& f : fronts)
      if (which == 2 || f.large == (which == 1)) sel.push_back(f);
    double c[3], rms;
    const char* label = which == 0 ? "small launch" : which == 1 ? "large launch" : "all";
    if (!fit(sel, c, rms)) {
      std::printf("| %s | %zu | - | - | - | - |\n", label, sel.size());
      continue;
    }
    std::printf("| %s | %zu | %.2f | %.3f | %.3f | %.2f |\n", label, sel.size(), c[0], c[1], c[2], rms);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1 && !std::strcmp(argv[1], "--fit")) {
    if (argc < 3) {
      std::fprintf(stderr, "usage: tree_path --fit CHAIN.txt...\n");
      return 2;
    }
    return fit_mode(std::vector<std::string>(argv + 2, argv + argc));
  }
  idx_t cap = kGpuFusedFront;
  std::vector<std::string> inputs;
  for (int a = 1; a < argc; ++a) {
    if (!std::strcmp(argv[a], "--max-front") && a + 1 < argc) {
      char* end = nullptr;
      const long v = std::strtol(argv[++a], &end, 10);
      if (*end || v < 0) {
        std::fprintf(stderr, "tree_path: --max-front wants an order >= 0, got '%s'\n", argv[a]);
        return 2;
      }
      cap = v;
    } else {
      inputs.push_back(argv[a]);
    }
  }
  if (inputs.empty()) {
    std::fprintf(stderr, "usage: tree_path [--max-front F] INPUT...\n");
    return 2;
  }
  std::printf("| matrix | ordering | amalgamation | supernodes | flops | max front | fronts > %lld | "
              "path us | path fronts | path columns | analysis s |\n",
              static_cast<long long>(cap));
  std::printf("|---|---|---|---|---|---|---|---|---|---|---|\n");
  for (const std::string& in : inputs) {
    CscMatrix A;
    if (Status st = load(in, A); !st.ok()) {
      std::fprintf(stderr, "tree_path: %s\n", st.message.c_str());
      return 1;
    }
    const std::string name = in.substr(in.find_last_of('/') + 1);
    for (const Variant& v : variants(cap)) {
      SymbolicFactor sf;
      const auto t0 = std::chrono::steady_clock::now();
      if (Status st = analyse(A, v.opts, sf); !st.ok()) {
        std::fprintf(stderr, "tree_path: %s: %s\n", in.c_str(), st.message.c_str());
        return 1;
      }
      const double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      long long over = 0;
      for (idx_t s = 0; s < sf.nsuper; ++s) over += sf.front_order(s) > cap;
      std::printf("| %s | %s | %s | %lld | %.3e | %lld | %lld | %.0f | %lld | %lld | %.2f |\n",
                  name.c_str(), v.ordering, v.amalgamation, static_cast<long long>(sf.nsuper), sf.flops,
                  static_cast<long long>(sf.max_front), over, sf.critical_path_s * 1e6,
                  static_cast<long long>(sf.critical_path_fronts),
                  static_cast<long long>(sf.critical_path_columns), t);
    }
  }
  return 0;
}
