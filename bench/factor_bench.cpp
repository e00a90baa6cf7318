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

#include "cpu/blas.hpp"

#include "api/solver.hpp"
#include "io/matrix_market.hpp"
#include "runtime/starpu/runtime.hpp"
#include "solve/solve.hpp"
#include "sparse/generators.hpp"

using namespace starfront;

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

Status load(const std::string& in, CscMatrix& A) {
  if (in.rfind("lap3d:", 0) == 0) {
    const int N = std::atoi(in.c_str() + 6);
    const char* c = std::strchr(in.c_str() + 6, ':');
    return laplace3d(N, c ? std::atoi(c + 1) : 7, A);
  }
  if (in.rfind("lap2d:", 0) == 0) return laplace2d(std::atoi(in.c_str() + 6), A);
  return read_matrix_market(in, A);
}

struct CholmodRun {
  double seconds = 0, lnz = 0, fl = 0, berr = 0;
};

/// CHOLMOD supernodal: analyse (default ordering, or `perm` as given), then
/// `repeat` factorisations after a warm-up; backward error of A x = A*1.
CholmodRun run_cholmod(const CscMatrix& A, const std::vector<idx_t>* perm, int repeat, int threads) {
  // CHOLMOD parallelises through OpenBLAS: give it as many threads as
  // starfront has workers (starfront's runtime set one BLAS thread per
  // worker; its workers are paused now).
  openblas_set_num_threads(threads);
  cholmod_common c;
  cholmod_start(&c);
  c.supernodal = CHOLMOD_SUPERNODAL;
  cholmod_sparse* S = cholmod_allocate_sparse(A.n, A.n, A.nnz(), 1, 1, -1, CHOLMOD_REAL, &c);
  for (idx_t j = 0; j <= A.n; ++j) static_cast<int*>(S->p)[j] = static_cast<int>(A.colptr[j]);
  for (idx_t k = 0; k < A.nnz(); ++k) {
    static_cast<int*>(S->i)[k] = static_cast<int>(A.rowind[k]);
    static_cast<double*>(S->x)[k] = A.values[k];
  }
  std::vector<int> p;
  if (perm) {
    p.assign(perm->begin(), perm->end());
    c.nmethods = 1;
    c.method[0].ordering = CHOLMOD_GIVEN;
  }
  cholmod_factor* L = cholmod_analyze_p(S, perm ? p.data() : nullptr, nullptr, 0, &c);
  CholmodRun r;
  r.lnz = c.lnz;
  r.fl = c.fl;
  std::vector<double> t;
  for (int k = 0; k <= repeat; ++k) {
    const auto t0 = std::chrono::steady_clock::now();
    cholmod_factorize(S, L, &c);
    if (k > 0) t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  r.seconds = median(t);
  std::vector<double> ones(A.n, 1.0), b(A.n);
  symmetric_matvec(A, ones.data(), b.data());
  cholmod_dense* B = cholmod_zeros(A.n, 1, CHOLMOD_REAL, &c);
  std::copy(b.begin(), b.end(), static_cast<double*>(B->x));
  cholmod_dense* X = cholmod_solve(CHOLMOD_A, L, B, &c);
  r.berr = backward_error(A, static_cast<double*>(X->x), b.data());
  cholmod_free_dense(&X, &c);
  cholmod_free_dense(&B, &c);
  cholmod_free_factor(&L, &c);
  cholmod_free_sparse(&S, &c);
  cholmod_finish(&c);
  openblas_set_num_threads(1);
  return r;
}

}  // namespace

int main(int argc, char** argv) {
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
