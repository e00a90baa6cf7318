// solve_bench: the triangular solves of one factor, repeated as an
// interior-point method repeats them, against CHOLMOD's cholmod_solve on
// the same matrix with the same permutation, in one process. No StarPU:
// the factorisations run in process (Executor::sequential), the solves are
// sequential on both sides (OpenBLAS with one thread for CHOLMOD too).
//
// Usage: solve_bench [--repeat K] [--nrhs R1,R2,...] [--workers W] [--ldlt] [--wall] INPUT...
//   INPUT: a Matrix Market file, or lap3d:N[:27] / lap2d:N (generated).
//   --workers W: GraphOptions::workers of the analysis (the task graph, hence
//   the solve's units, depends on it; the CLI uses --ncpu), default 2.
//   --ldlt: starfront factorises with method ldlt (CHOLMOD stays LLᵀ).
//   --wall: time with the wall clock; by default the calling thread's CPU
//   time (CLOCK_THREAD_CPUTIME_ID): everything timed runs in that thread,
//   and on a shared machine it leaves out the time spent descheduled.
// Per input and nrhs, the median of K (default 20) timed calls after one
// warm-up, in milliseconds:
//   solve      Solver::solve without refinement (checks, permutation, sweep)
//   refined    Solver::solve with FactorOptions' default refinement
//              (up to 3 steps; "steps" is what it took)
//   core       ProcessSolve::solve: checks, permutation and sweep, without
//              the backward error (LLᵀ only)
//   sweep      the substitution alone on the permuted vector (ProcessSolve::run;
//              LLᵀ only)
//   graph      the solve graph run by solve_in_place_graph: every solve
//              allocates the graph's vector pieces (the executor the
//              one-process solve used before ProcessSolve; LLᵀ only)
//   colseq     solve_in_place: the right-looking supernodal sweep with one
//              BLAS TRSM + GEMM per supernode and a scatter (LLᵀ and LDLᵀ)
//   berr       backward_error() of every column (one matvec + norms each)
//   cholmod    cholmod_solve(CHOLMOD_A) on CHOLMOD's supernodal factor
// and the ratio solve / cholmod. Built with -DSOLVE_BENCH_BEFORE it times
// only what the code before ProcessSolve had (for the before/after table).
#include <cholmod.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

#include "cpu/blas_core.hpp"
#include "api/solver.hpp"
#include "bench_common.hpp"
#include "cpu/blas.hpp"
#include "solve/graph_solve.hpp"
#include "solve/solve.hpp"

using namespace starfront;
using namespace starfront::bench;

namespace {

bool g_wall = false;  // --wall: wall clock instead of the thread's CPU time

/// The calling thread's CPU time (every solve here runs in this thread:
/// OpenBLAS has one thread), or with --wall the wall clock, in seconds.
double now_s() {
  if (g_wall)
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

/// Median in ms of `repeat` timed calls of f after one warm-up; -1 when f fails.
template <class F>
double time_ms(int repeat, F&& f) {
  if (!f()) return -1;
  std::vector<double> t;
  for (int k = 0; k < repeat; ++k) {
    const double t0 = now_s();
    if (!f()) return -1;
    t.push_back((now_s() - t0) * 1e3);
  }
  return median(t);
}

/// CHOLMOD's supernodal LLᵀ of A with permutation perm (CHOLMOD_GIVEN), for
/// timing cholmod_solve.
struct Cholmod {
  cholmod_common c;
  cholmod_sparse* S = nullptr;
  cholmod_factor* L = nullptr;
  explicit Cholmod(const CscMatrix& A, const std::vector<idx_t>& perm) {
    cholmod_start(&c);
    c.supernodal = CHOLMOD_SUPERNODAL;
    c.nmethods = 1;
    c.method[0].ordering = CHOLMOD_GIVEN;
    S = cholmod_allocate_sparse(A.n, A.n, A.nnz(), 1, 1, -1, CHOLMOD_REAL, &c);
    for (idx_t j = 0; j <= A.n; ++j) static_cast<int*>(S->p)[j] = static_cast<int>(A.colptr[j]);
    for (idx_t k = 0; k < A.nnz(); ++k) {
      static_cast<int*>(S->i)[k] = static_cast<int>(A.rowind[k]);
      static_cast<double*>(S->x)[k] = A.values[k];
    }
    std::vector<int> p(perm.begin(), perm.end());
    L = cholmod_analyze_p(S, p.data(), nullptr, 0, &c);
    cholmod_factorize(S, L, &c);
  }
  ~Cholmod() {
    cholmod_free_factor(&L, &c);
    cholmod_free_sparse(&S, &c);
    cholmod_finish(&c);
  }
  bool ok() const { return L && c.status == CHOLMOD_OK && L->minor == L->n; }
};

std::vector<int> parse_list(const char* s) {
  std::vector<int> v;
  for (const char* p = s; *p;) {
    v.push_back(std::atoi(p));
    while (*p && *p != ',') ++p;
    if (*p == ',') ++p;
  }
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  starfront::reexec_with_native_blas(argv);  // before any thread: OpenBLAS's kernels for this CPU
  int repeat = 20, workers = 2;
  bool ldlt = false;
  std::vector<int> nrhs_list{1, 8};
  std::vector<std::string> inputs;
  for (int a = 1; a < argc; ++a) {
    if (!std::strcmp(argv[a], "--repeat") && a + 1 < argc) repeat = std::max(1, std::atoi(argv[++a]));
    else if (!std::strcmp(argv[a], "--nrhs") && a + 1 < argc) nrhs_list = parse_list(argv[++a]);
    else if (!std::strcmp(argv[a], "--workers") && a + 1 < argc) workers = std::max(1, std::atoi(argv[++a]));
    else if (!std::strcmp(argv[a], "--ldlt")) ldlt = true;
    else if (!std::strcmp(argv[a], "--wall")) g_wall = true;
    else inputs.push_back(argv[a]);
  }
  openblas_set_num_threads(1);
  std::printf("| matrix | method | n | nnz(L) | nrhs | solve ms | refined ms (steps) | core ms | sweep ms | graph ms | colseq ms "
              "| berr ms | CHOLMOD ms | solve/CHOLMOD | berr starfront | berr CHOLMOD |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  for (const std::string& in : inputs) {
    CscMatrix A;
    if (Status st = load(in, A); !st.ok()) {
      std::fprintf(stderr, "solve_bench: %s\n", st.message.c_str());
      return 1;
    }
    Solver s, r;  // s: no refinement; r: default refinement
    GraphOptions go;
    go.workers = workers;
    FactorOptions fo;
    fo.method = ldlt ? FactorMethod::ldlt : FactorMethod::llt;
    FactorOptions fr = fo;
    fo.refine_steps = 0;
    for (Solver* x : {&s, &r}) {
      Status st = x->analyse(A, AnalysisOptions{}, go);
      if (st.ok()) st = x->factorize(A, x == &s ? fo : fr, Executor::sequential);
      if (!st.ok()) {
        std::fprintf(stderr, "solve_bench: %s: %s\n", in.c_str(), st.message.c_str());
        return 1;
      }
    }
    const NumericFactor& F = s.factor();
    Cholmod ch(A, s.symbolic().perm);
    if (!ch.ok()) {
      std::fprintf(stderr, "solve_bench: %s: CHOLMOD failed\n", in.c_str());
      return 1;
    }
#ifndef SOLVE_BENCH_BEFORE
    ProcessSolve ps;
    SolveGraph S;
    if (!F.is_ldlt()) {
      if (Status st = ps.build(s.factorized_graph()); !st.ok()) {
        std::fprintf(stderr, "solve_bench: %s\n", st.message.c_str());
        return 1;
      }
      S = ps.solve_graph();
    }
    SolveWorkspace ws;
#endif
    const idx_t n = A.n, ld = std::max<idx_t>(1, n);
    const std::string name = in.substr(in.find_last_of('/') + 1);
    for (int nrhs : nrhs_list) {
      // Right-hand sides A·x with x of entries in [1, 2) (seeded): well
      // scaled, never zero.
      std::vector<double> xt(static_cast<std::size_t>(n * nrhs)), B(xt.size()), X;
      for (std::size_t i = 0; i < xt.size(); ++i) xt[i] = 1.0 + static_cast<double>((i * 2654435761u) % 1000) / 1000;
      for (int c = 0; c < nrhs; ++c) symmetric_matvec(A, xt.data() + c * n, B.data() + c * n);
      auto fresh = [&] { X = B; };
      int steps = 0;
      const double t_solve = time_ms(repeat, [&] { fresh(); return s.solve(X.data(), nrhs, ld).ok(); });
      double be = 0;
      for (int c = 0; c < nrhs; ++c) be = std::max(be, backward_error(A, X.data() + c * n, B.data() + c * n));
      const double t_ref = time_ms(repeat, [&] {
        fresh();
        const bool ok = r.solve(X.data(), nrhs, ld).ok();
        steps = r.stats().refine.steps;
        return ok;
      });
      double t_sweep = -1, t_graph = -1, t_core = -1;
#ifndef SOLVE_BENCH_BEFORE
      if (!F.is_ldlt()) {
        t_core = time_ms(repeat, [&] { fresh(); return ps.solve(F, X.data(), nrhs, ld, ws).ok(); });
        std::vector<double> Y = B;  // the values do not matter for the time; finite throughout
        t_sweep = time_ms(repeat, [&] { Y = B; ps.run(F.Lx.data(), Y.data(), nrhs, ld, ws); return true; });
        t_graph = time_ms(repeat, [&] { fresh(); return solve_in_place_graph(S, F, X.data(), nrhs, ld).ok(); });
      }
#endif
      const double t_col = time_ms(repeat, [&] { fresh(); return solve_in_place(F, X.data(), nrhs, ld).ok(); });
      fresh();
      const double t_berr = time_ms(repeat, [&] {
        double e = 0;
        for (int c = 0; c < nrhs; ++c) e = std::max(e, backward_error(A, X.data() + c * n, B.data() + c * n));
        return e >= 0;
      });
      cholmod_dense* Bc = cholmod_zeros(n, nrhs, CHOLMOD_REAL, &ch.c);
      std::copy(B.begin(), B.end(), static_cast<double*>(Bc->x));
      const double t_chol = time_ms(repeat, [&] {
        cholmod_dense* Xc = cholmod_solve(CHOLMOD_A, ch.L, Bc, &ch.c);
        const bool ok = Xc != nullptr;
        cholmod_free_dense(&Xc, &ch.c);  // freeing is part of a cholmod_solve call's cost
        return ok;
      });
      double be_c = -1;
      if (cholmod_dense* Xc = cholmod_solve(CHOLMOD_A, ch.L, Bc, &ch.c)) {
        be_c = 0;
        for (int c = 0; c < nrhs; ++c)
          be_c = std::max(be_c, backward_error(A, static_cast<double*>(Xc->x) + c * n, B.data() + c * n));
        cholmod_free_dense(&Xc, &ch.c);
      }
      cholmod_free_dense(&Bc, &ch.c);
      std::printf("| %s | %s | %lld | %lld | %d | %.3f | %.3f (%d) | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f | %.2f | %.1e | %.1e |\n",
                  name.c_str(), ldlt ? "ldlt" : "llt", static_cast<long long>(n),
                  static_cast<long long>(s.symbolic().nnz_l_exact), nrhs, t_solve, t_ref, steps, t_core, t_sweep, t_graph,
                  t_col, t_berr, t_chol, t_solve / t_chol, be, be_c);
      std::fflush(stdout);
    }
  }
  return 0;
}
