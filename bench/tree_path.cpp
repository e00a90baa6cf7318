// tree_path: the assembly tree's modelled critical path (analysis/
// critical_path.hpp) under each ordering and amalgamation, one table row per
// variant. No factorisation: a CPU-only look at what the fused GPU kernel's
// time follows on latency-bound trees (bench/README.md, issue 6, session 43).
// Usage: tree_path [--max-front F] [--model A,B,C] INPUT...   (INPUT: Matrix
//        Market file, lap3d:N[:27], lap2d:N, dense:N)
//        tree_path --fit CHAIN.txt...
//   --fit: least-squares fit of the front latency model (FrontLatencyModel:
//   t = a + b k + c k (m - k)) to the "fused chain" lines of the fused
//   kernel's traces (STARFRONT_FUSED_TRACE=2, run-relax.sh's chain step:
//   per front m, k and its lag, extend-add, factor and write times, us),
//   the fronts of the small and the large launch apart and together. A
//   file without such lines, or with one not understood, is an error.
//   --max-front F: the cap of the critical-path rows (default
//   kGpuFusedFront = 232, the largest front the fused GPU kernel keeps in
//   shared memory: plan/task_graph.hpp).
//   --model A,B,C: the front latency model (us, us a column, ns per
//   k·(m − k) entry; default FrontLatencyModel's 10.5,0.36,0.6).
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

// Parses one "fused chain" line (fused_subtree.cu's trace, e.g. "fused chain
// subtree s2147 (2148 fronts): ticket 2147 (large) m 179 k 179 children 6:
// lag 1.02, extend-add 7.94, factor 70.40, write 0.00 us"; since session 44
// "children 6: late start 0.00, overrun 0.00, lag 1.02, ..."): false when
// it is not one of those or a figure is missing or not finite. The front's
// latency is lag + extend-add + factor + write (a late start is the
// launch's residency, not the front's cost; the overrun is its prologue).
bool parse_chain_line(const char* line, ChainFront& f) {
  const char* t = std::strstr(line, "ticket ");
  if (!t) return false;
  long ticket = 0;
  char kind[8] = {0};
  double m, k, late = 0, over = 0, lag, ea, fa, wr;
  int children, used = 0;
  if ((std::sscanf(t,
                   "ticket %ld (%7[a-z]) m %lf k %lf children %d: late start %lf, overrun %lf, lag %lf, "
                   "extend-add %lf, factor %lf, write %lf us%n",
                   &ticket, kind, &m, &k, &children, &late, &over, &lag, &ea, &fa, &wr, &used) != 11 ||
       used == 0) &&
      (used = 0, std::sscanf(t, "ticket %ld (%7[a-z]) m %lf k %lf children %d: lag %lf, extend-add %lf, factor %lf, write %lf us%n",
                  &ticket, kind, &m, &k, &children, &lag, &ea, &fa, &wr, &used) != 9 || used == 0))
    return false;
  const bool large = !std::strcmp(kind, "large");
  if (!large && std::strcmp(kind, "small")) return false;
  for (double v : {m, k, late, over, lag, ea, fa, wr})
    if (!std::isfinite(v) || v < 0) return false;
  if (k < 1 || m < k) return false;
  f = {large, m, k, lag + ea + fa + wr};
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
    char line[4096];
    long lineno = 0, found = 0;
    while (std::fgets(line, sizeof line, fp)) {
      ++lineno;
      if (!std::strstr(line, "fused chain ")) continue;
      ChainFront f;
      if (!parse_chain_line(line, f)) {
        std::fprintf(stderr, "tree_path: %s:%ld: a \"fused chain\" line not understood (expected \"ticket T "
                     "(small|large) m M k K children C: lag L, extend-add E, factor F, write W us\" with finite "
                     "figures, 1 <= k <= m): %s", name.c_str(), lineno, line);
        std::fclose(fp);
        return 1;
      }
      fronts.push_back(f);
      ++found;
    }
    const bool read_error = std::ferror(fp);
    std::fclose(fp);
    if (read_error) {
      std::fprintf(stderr, "tree_path: %s: read error (a folder?)\n", name.c_str());
      return 1;
    }
    if (found == 0) {
      std::fprintf(stderr, "tree_path: %s: no \"fused chain\" lines (STARFRONT_FUSED_TRACE=2 output)\n",
                   name.c_str());
      return 1;
    }
  }
  std::printf("| fronts | count | a (us) | b (us a column) | c (us per 100 k(m-k)) | rms (us) |\n|---|---|---|---|---|---|\n");
  for (int which = 0; which < 3; ++which) {
    std::vector<ChainFront> sel;
    for (const ChainFront& f : fronts)
      if (which == 2 || f.large == (which == 1)) sel.push_back(f);
    double c[3], rms;
    const char* label = which == 0 ? "small launch" : which == 1 ? "large launch" : "all";
    if (sel.size() < 4) {
      std::printf("| %s | %zu | too few fronts to fit three figures | | | |\n", label, sel.size());
    } else if (!fit(sel, c, rms)) {
      std::printf("| %s | %zu | rank-deficient (k and k(m-k) do not vary independently) | | | |\n", label,
                  sel.size());
    } else {
      std::printf("| %s | %zu | %.2f | %.3f | %.3f | %.2f |\n", label, sel.size(), c[0], c[1], c[2], rms);
    }
  }
  return 0;
}

constexpr const char* kUsage =
    "usage: tree_path [--max-front F] [--model A,B,C] INPUT...\n"
    "       tree_path --fit CHAIN.txt...\n"
    "  INPUT: Matrix Market file, lap3d:N[:27], lap2d:N or dense:N\n"
    "  --max-front F: cap of the \"cap\" rows, 1..1000000000 (default kGpuFusedFront)\n"
    "  --model A,B,C: front latency model, us + us a column + ns per k(m-k) entry\n"
    "                 (default FrontLatencyModel: 10.5,0.36,0.6)\n"
    "  --fit: fit the model to fused chain traces (STARFRONT_FUSED_TRACE=2)\n";

}  // namespace

int main(int argc, char** argv) {
  long long cap = kGpuFusedFront;
  FrontLatencyModel model;
  bool fit_files = false;
  std::vector<std::string> inputs;
  for (int a = 1; a < argc; ++a) {
    const char* arg = argv[a];
    if (!std::strcmp(arg, "--help") || !std::strcmp(arg, "-h")) {
      std::printf("%s", kUsage);
      return 0;
    } else if (!std::strcmp(arg, "--fit")) {
      fit_files = true;
    } else if (!std::strcmp(arg, "--max-front") || !std::strcmp(arg, "--model")) {
      if (a + 1 >= argc) {
        std::fprintf(stderr, "tree_path: %s needs a value\n%s", arg, kUsage);
        return 2;
      }
      const char* v = argv[++a];
      if (!std::strcmp(arg, "--max-front") ? !parse_count(v, 1, 1000000000, cap) : !parse_model(v, model)) {
        std::fprintf(stderr, "tree_path: %s: bad value '%s'\n%s", arg, v, kUsage);
        return 2;
      }
    } else if (arg[0] == '-' && arg[1] == '-') {
      std::fprintf(stderr, "tree_path: unknown option %s\n%s", arg, kUsage);
      return 2;
    } else {
      inputs.push_back(arg);
    }
  }
  if (inputs.empty()) {
    std::fprintf(stderr, "%s", kUsage);
    return 2;
  }
  if (fit_files) return fit_mode(inputs);
  std::vector<CscMatrix> mats(inputs.size());
  for (std::size_t i = 0; i < inputs.size(); ++i)
    if (Status st = load(inputs[i], mats[i]); !st.ok()) {
      std::fprintf(stderr, "tree_path: %s\n", st.message.c_str());
      return 1;
    }
  std::printf("| matrix | ordering | amalgamation | supernodes | flops | max front | fronts > %lld | "
              "path us | path fronts | path columns | analysis s |\n",
              cap);
  std::printf("|---|---|---|---|---|---|---|---|---|---|---|\n");
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const std::string& in = inputs[i];
    const std::string name = in.substr(in.find_last_of('/') + 1);
    for (Variant v : variants(static_cast<idx_t>(cap))) {
      v.opts.latency = model;
      SymbolicFactor sf;
      const auto t0 = std::chrono::steady_clock::now();
      if (Status st = analyse(mats[i], v.opts, sf); !st.ok()) {
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
