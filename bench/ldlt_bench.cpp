// ldlt_bench: starfront's LDLᵀ factorisation (StarPU, task graph without
// tiles, threshold pivoting; and the quasi-definite mode) against CHOLMOD's
// simplicial LDLᵀ (no pivoting) with starfront's permutation given as
// CHOLMOD's user ordering (same elimination order), in one process. Median
// of --repeat timings each after one warm-up (the LDLᵀ also with the
// sequential executor: the kernels without StarPU's task overheads). CHOLMOD's simplicial numeric
// factorisation does not call BLAS (one thread). Prints a Markdown table row
// per input (bench/README.md).
// Usage: ldlt_bench [--repeat K] [--ncpu N] [--sched S] INPUT.mtx...
#include <cholmod.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "api/solver.hpp"
#include "bench_common.hpp"
#include "cpu/blas.hpp"
#include "io/matrix_market.hpp"
#include "runtime/starpu/runtime.hpp"
#include "solve/solve.hpp"

using namespace starfront;

namespace {

using bench::median;

struct CholmodRun {
  double seconds = 0, lnz = 0, berr = 0;
};

/// CHOLMOD simplicial LDLᵀ (final_ll = false) with the given permutation.
CholmodRun run_cholmod_ldl(const CscMatrix& A, const std::vector<idx_t>& perm, int repeat) {
  openblas_set_num_threads(1);
  cholmod_common c;
  cholmod_start(&c);
  c.supernodal = CHOLMOD_SIMPLICIAL;
  c.final_ll = 0;
  c.nmethods = 1;
  c.method[0].ordering = CHOLMOD_GIVEN;
  cholmod_sparse* S = cholmod_allocate_sparse(A.n, A.n, A.nnz(), 1, 1, -1, CHOLMOD_REAL, &c);
  for (idx_t j = 0; j <= A.n; ++j) static_cast<int*>(S->p)[j] = static_cast<int>(A.colptr[j]);
  for (idx_t k = 0; k < A.nnz(); ++k) {
    static_cast<int*>(S->i)[k] = static_cast<int>(A.rowind[k]);
    static_cast<double*>(S->x)[k] = A.values[k];
  }
  std::vector<int> p(perm.begin(), perm.end());
  cholmod_factor* L = cholmod_analyze_p(S, p.data(), nullptr, 0, &c);
  CholmodRun r;
  std::vector<double> t;
  for (int k = 0; k <= repeat; ++k) {
    const auto t0 = std::chrono::steady_clock::now();
    cholmod_factorize(S, L, &c);
    if (k > 0) t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  r.seconds = median(t);
  r.lnz = c.lnz;
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
  return r;
}

struct StarfrontRun {
  double seconds = 0, berr = 0;
  InertiaCounts inertia;
  idx_t perturbed = 0, tasks = 0;
  int refine = 0;
};

StarfrontRun run_starfront(Solver& s, const CscMatrix& A, FactorMethod m, int repeat,
                           Executor ex = Executor::starpu) {
  FactorOptions o;
  o.method = m;
  StarfrontRun r;
  std::vector<double> t;
  for (int k = 0; k <= repeat; ++k) {
    if (Status st = s.factorize(A, o, ex); !st.ok()) {
      std::fprintf(stderr, "ldlt_bench: %s\n", st.message.c_str());
      std::exit(1);
    }
    if (k > 0) t.push_back(s.stats().factor.seconds);
  }
  r.seconds = median(t);
  r.inertia = s.inertia();
  r.perturbed = s.factor().perturbed_pivots;
  r.tasks = s.stats().factor.tasks;
  std::vector<double> ones(A.n, 1.0), b(A.n), x;
  symmetric_matvec(A, ones.data(), b.data());
  x = b;
  s.solve(x.data(), 1, std::max<idx_t>(1, A.n));
  r.berr = backward_error(A, x.data(), b.data());
  r.refine = s.stats().refine.steps;
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  int repeat = 5, ncpu = -1;
  std::string sched = "lws";
  std::vector<std::string> inputs;
  for (int a = 1; a < argc; ++a) {
    if (!std::strcmp(argv[a], "--repeat") && a + 1 < argc) repeat = std::max(1, std::atoi(argv[++a]));
    else if (!std::strcmp(argv[a], "--ncpu") && a + 1 < argc) ncpu = std::atoi(argv[++a]);
    else if (!std::strcmp(argv[a], "--sched") && a + 1 < argc) sched = argv[++a];
    else inputs.push_back(argv[a]);
  }
  std::unique_ptr<StarpuRuntime> rt;
  if (Status st = StarpuRuntime::start(RuntimeOptions{ncpu, 0, sched}, rt); !st.ok()) {
    std::fprintf(stderr, "ldlt_bench: %s\n", st.message.c_str());
    return 1;
  }
  std::printf("| matrix | n | nnz(L) starfront | nnz(L) CHOLMOD | LDLᵀ s | quasi-definite s | LDLᵀ sequential executor s | CHOLMOD LDLᵀ s | LDLᵀ / CHOLMOD | QD / CHOLMOD | inertia (+, −, 0) | perturbed (LDLᵀ) | 2×2 | tasks | berr LDLᵀ (refined) | berr CHOLMOD |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  for (const std::string& in : inputs) {
    CscMatrix A;
    if (Status st = read_matrix_market(in, A); !st.ok()) {
      std::fprintf(stderr, "ldlt_bench: %s\n", st.message.c_str());
      return 1;
    }
    Solver s;
    GraphOptions go;
    go.workers = rt->cpu_workers();
    go.tile = false;  // LDLᵀ runs untiled (tiled LDLᵀ is not implemented)
    if (Status st = s.analyse(A, AnalysisOptions{}, go); !st.ok()) {
      std::fprintf(stderr, "ldlt_bench: %s\n", st.message.c_str());
      return 1;
    }
    const StarfrontRun qd = run_starfront(s, A, FactorMethod::quasi_definite, repeat);
    const StarfrontRun seq = run_starfront(s, A, FactorMethod::ldlt, repeat, Executor::sequential);
    const StarfrontRun ld = run_starfront(s, A, FactorMethod::ldlt, repeat);
    const idx_t two = s.factor().two_by_two_pivots;
    const CholmodRun ch = run_cholmod_ldl(A, s.symbolic().perm, repeat);
    const std::string name = in.substr(in.find_last_of('/') + 1);
    std::printf("| %s | %lld | %lld | %.0f | %.4f | %.4f | %.4f | %.4f | %.2f | %.2f | (%lld, %lld, %lld) | %lld | %lld | %lld | %.1e (%d steps) | %.1e |\n",
                name.c_str(), static_cast<long long>(A.n),
                static_cast<long long>(s.symbolic().nnz_l_exact), ch.lnz, ld.seconds, qd.seconds,
                seq.seconds, ch.seconds, ld.seconds / ch.seconds, qd.seconds / ch.seconds,
                static_cast<long long>(ld.inertia.positive), static_cast<long long>(ld.inertia.negative),
                static_cast<long long>(ld.inertia.zero), static_cast<long long>(ld.perturbed),
                static_cast<long long>(two), static_cast<long long>(ld.tasks), ld.berr, ld.refine,
                ch.berr);
    std::fflush(stdout);
  }
  return 0;
}
