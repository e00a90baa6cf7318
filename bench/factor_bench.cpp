// factor_bench: starfront's factorisation (StarPU, task graph) against
// CHOLMOD's supernodal factorisation, in one process, on the same matrix:
// CHOLMOD once with its default ordering and once with starfront's
// permutation given as the user ordering (same fill). Median of --repeat
// timings each (after one warm-up). CHOLMOD gets as many OpenBLAS threads
// as starfront has StarPU CPU workers (one BLAS thread each). Prints a Markdown table row per input.
// Usage: factor_bench [--repeat K] [--ncpu N] [--sched S] [--no-own-ordering] INPUT...
//   --no-own-ordering: skip CHOLMOD with its own ordering (its columns read 0).
//   INPUT: a Matrix Market file, or lap3d:N[:27] / lap2d:N (generated).
#include <cholmod.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "cpu/blas_core.hpp"
#include "cpu/blas.hpp"

#include "api/solver.hpp"
#include "io/matrix_market.hpp"
#include "runtime/starpu/runtime.hpp"
#include "solve/solve.hpp"
#include "sparse/generators.hpp"

#include "bench_common.hpp"

using namespace starfront;
using namespace starfront::bench;

int main(int argc, char** argv) {
  starfront::reexec_with_native_blas(argv);  // before any thread: OpenBLAS's kernels for this CPU
  int repeat = 5, ncpu = -1;
  bool own_ordering = true;
  std::string sched = "lws";
  std::vector<std::string> inputs;
  for (int a = 1; a < argc; ++a) {
    if (!std::strcmp(argv[a], "--repeat") && a + 1 < argc) repeat = std::max(1, std::atoi(argv[++a]));
    else if (!std::strcmp(argv[a], "--ncpu") && a + 1 < argc) ncpu = std::atoi(argv[++a]);
    else if (!std::strcmp(argv[a], "--sched") && a + 1 < argc) sched = argv[++a];
    else if (!std::strcmp(argv[a], "--no-own-ordering")) own_ordering = false;
    else inputs.push_back(argv[a]);
  }
  std::unique_ptr<StarpuRuntime> rt;
  if (Status st = StarpuRuntime::start(RuntimeOptions{ncpu, 0, sched}, rt); !st.ok()) {
    std::fprintf(stderr, "factor_bench: %s\n", st.message.c_str());
    return 1;
  }
  std::printf("| matrix | n | nnz(L) starfront | nnz(L) CHOLMOD | flops | starfront s | CHOLMOD s (same perm) | ratio | CHOLMOD s (own ordering) | ratio | tasks | supernodes | berr starfront | berr CHOLMOD |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  for (const std::string& in : inputs) {
    CscMatrix A;
    if (Status st = load(in, A); !st.ok()) {
      std::fprintf(stderr, "factor_bench: %s\n", st.message.c_str());
      return 1;
    }
    Solver s;
    GraphOptions go;
    go.workers = rt->cpu_workers();
    if (Status st = s.analyse(A, AnalysisOptions{}, go); !st.ok()) {
      std::fprintf(stderr, "factor_bench: %s\n", st.message.c_str());
      return 1;
    }
    std::vector<double> t;
    for (int k = 0; k <= repeat; ++k) {
      if (Status st = s.factorize(A, FactorOptions{}, Executor::starpu); !st.ok()) {
        std::fprintf(stderr, "factor_bench: %s\n", st.message.c_str());
        return 1;
      }
      if (k > 0) t.push_back(s.stats().factor.seconds);
    }
    std::vector<double> ones(A.n, 1.0), b(A.n), x;
    symmetric_matvec(A, ones.data(), b.data());
    x = b;
    s.solve(x.data(), 1, std::max<idx_t>(1, A.n));
    const double berr = backward_error(A, x.data(), b.data());
    const double ts = median(t);
    const CholmodRun same = run_cholmod(A, &s.symbolic().perm, repeat, rt->cpu_workers());
    CholmodRun own;
    if (own_ordering) own = run_cholmod(A, nullptr, repeat, rt->cpu_workers());
    std::string name = in.substr(in.find_last_of('/') + 1);
    std::printf("| %s | %lld | %lld | %.0f | %.3g | %.4f | %.4f | %.2f | %.4f | %.2f | %lld | %lld | %.1e | %.1e |\n",
                name.c_str(), static_cast<long long>(A.n), static_cast<long long>(s.symbolic().nnz_l_exact),
                own.lnz, s.symbolic().flops_exact, ts, same.seconds, ts / same.seconds, own.seconds,
                ts / own.seconds, static_cast<long long>(s.stats().factor.tasks),
                static_cast<long long>(s.symbolic().nsuper), berr, same.berr);
    std::fflush(stdout);
  }
  return 0;
}
