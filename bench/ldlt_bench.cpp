// ldlt_bench: starfront's LDLᵀ factorisation (StarPU, task graph without
// tiles, threshold pivoting; and the quasi-definite mode) against CHOLMOD's
// simplicial LDLᵀ (no pivoting) with starfront's permutation given as
// CHOLMOD's user ordering (same elimination order), in one process. Median
// of --repeat timings each after one warm-up (the LDLᵀ also with the
// sequential executor: the kernels without StarPU's task overheads). CHOLMOD's simplicial numeric
// factorisation does not call BLAS (one thread). Prints a Markdown table row
// per input (bench/README.md).
// With --gpu (issue 7, GPU part): LDLᵀ with CPU workers only against the same
// with one CUDA worker and N−1 CPU workers (LDLᵀ front tasks on the GPU: under dmda with the
// default graph, and with one task per front, every front on the GPU), in
// one process (StarPU restarted between configurations), with the inertia,
// perturbation counts and pivot sequences of the GPU runs compared with the
// CPU run. INPUT may also be indef3d:N (the 27-point 3D Laplacian N³ with
// 13 subtracted from its diagonal: symmetric indefinite, large fronts).
// Usage: ldlt_bench [--repeat K] [--ncpu N] [--sched S] [--gpu] INPUT...
#include <cholmod.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "cpu/blas_core.hpp"
#include "api/solver.hpp"
#include "bench_common.hpp"
#include "cpu/blas.hpp"
#include "io/matrix_market.hpp"
#include "runtime/starpu/runtime.hpp"
#include "runtime/starpu/task_codelets.hpp"
#include "solve/solve.hpp"
#include "sparse/generators.hpp"

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

/// Reads a Matrix Market file, or builds indef3d:N.
Status load_input(const std::string& in, CscMatrix& A) {
  if (in.rfind("indef3d:", 0) == 0) {
    const idx_t n = std::atoll(in.c_str() + 8);
    if (Status st = laplace3d(n, 27, A); !st.ok()) return st;
    for (idx_t j = 0; j < A.n; ++j)
      for (idx_t p = A.colptr[j]; p < A.colptr[j + 1]; ++p)
        if (A.rowind[p] == j) A.values[p] -= 13.0;
    return Status::success();
  }
  return read_matrix_market(in, A);
}

/// One configuration of the --gpu table: its timing and what it decided.
struct GpuRun {
  StarfrontRun r;
  std::vector<idx_t> pivot_order;
  std::vector<signed char> pivot_size;
  idx_t below = 0, two = 0;
  long long gpu_fronts = 0;  ///< front tasks run by the CUDA worker (all repetitions / (repeat + 1))
};

GpuRun run_config(const CscMatrix& A, const GraphOptions& go, FactorMethod m, int repeat) {
  Solver s;
  if (Status st = s.analyse(A, AnalysisOptions{}, go); !st.ok()) {
    std::fprintf(stderr, "ldlt_bench: %s\n", st.message.c_str());
    std::exit(1);
  }
  GpuRun g;
  const long long f0 = cuda_task_executions(TaskKind::front);
  g.r = run_starfront(s, A, m, repeat);
  g.gpu_fronts = (cuda_task_executions(TaskKind::front) - f0) / (repeat + 1);
  g.pivot_order = s.factor().pivot_order;
  g.pivot_size = s.factor().pivot_size;
  g.below = s.factor().below_threshold_pivots;
  g.two = s.factor().two_by_two_pivots;
  return g;
}

bool same_decisions(const GpuRun& a, const GpuRun& b) {
  return a.pivot_order == b.pivot_order && a.pivot_size == b.pivot_size && a.below == b.below &&
         a.two == b.two && a.r.perturbed == b.r.perturbed && a.r.inertia.positive == b.r.inertia.positive &&
         a.r.inertia.negative == b.r.inertia.negative && a.r.inertia.zero == b.r.inertia.zero;
}

/// The --gpu table: per input and method (ldlt; quasi-definite too for
/// sqd_* inputs), CPU workers only (sched, default graph without tiles),
/// then one CUDA worker under dmda (default graph: fused subtrees stay on
/// CPUs) and with one task per front, every front on the GPU.
int gpu_table(const std::vector<std::string>& inputs, int repeat, int ncpu, const std::string& sched) {
  struct Row {
    std::string name, method;
    std::size_t mat = 0;  ///< index in inputs
    idx_t n = 0;
    GpuRun cpu, dmda, gpu_only;
  };
  std::vector<Row> rows;
  std::vector<CscMatrix> mats(inputs.size());
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    if (Status st = load_input(inputs[i], mats[i]); !st.ok()) {
      std::fprintf(stderr, "ldlt_bench: %s\n", st.message.c_str());
      return 1;
    }
    const std::string name = inputs[i].substr(inputs[i].find_last_of('/') + 1);
    for (FactorMethod m : {FactorMethod::ldlt, FactorMethod::quasi_definite}) {
      if (m == FactorMethod::quasi_definite && name.rfind("sqd_", 0) != 0) continue;
      rows.push_back({name, factor_method_name(m), i, mats[i].n, {}, {}, {}});
    }
  }
  for (int config = 0; config < 3; ++config) {
    // With a GPU, one core drives it: ncpu - 1 CPU workers (as gpu_bench).
    const int cpus = config == 0 || ncpu <= 1 ? ncpu : ncpu - 1;
    RuntimeOptions ro{cpus, config == 0 ? 0 : 1, config == 0 ? sched : std::string("dmda")};
    ro.tiles_on_cuda_only = ro.fronts_on_cuda_only = config == 2;
    std::unique_ptr<StarpuRuntime> rt;
    if (Status st = StarpuRuntime::start(ro, rt); !st.ok()) {
      std::fprintf(stderr, "ldlt_bench: %s\n", st.message.c_str());
      return 1;
    }
    for (Row& w : rows) {
      GraphOptions go;
      go.workers = rt->cpu_workers() + rt->gpus();
      go.tile = false;  // LDLᵀ runs untiled (tiled LDLᵀ is not implemented)
      if (config == 2) go.fuse_subtrees = false;
      const FactorMethod m = w.method == "ldlt" ? FactorMethod::ldlt : FactorMethod::quasi_definite;
      GpuRun& g = config == 0 ? w.cpu : config == 1 ? w.dmda : w.gpu_only;
      g = run_config(mats[w.mat], go, m, repeat);
      std::fprintf(stderr, "ldlt_bench: %s %s config %d: %.4f s, %lld fronts on the GPU\n", w.name.c_str(),
                   w.method.c_str(), config, g.r.seconds, g.gpu_fronts);
    }
  }
  std::printf("| matrix | n | method | CPU s (%s) | GPU+CPU s (dmda) | fronts on GPU | GPU-only fronts s | fronts on GPU | CPU / GPU+CPU | CPU / GPU-only | inertia (+, −, 0) | perturbed | 2×2 | same decisions (dmda, GPU-only) | berr CPU / dmda / GPU-only |\n",
              sched.c_str());
  std::printf("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  for (const Row& w : rows) {
    std::printf("| %s | %lld | %s | %.4f | %.4f | %lld | %.4f | %lld | %.2f | %.2f | (%lld, %lld, %lld) | %lld | %lld | %s, %s | %.1e / %.1e / %.1e |\n",
                w.name.c_str(), static_cast<long long>(w.n), w.method.c_str(), w.cpu.r.seconds, w.dmda.r.seconds,
                w.dmda.gpu_fronts, w.gpu_only.r.seconds, w.gpu_only.gpu_fronts, w.cpu.r.seconds / w.dmda.r.seconds,
                w.cpu.r.seconds / w.gpu_only.r.seconds, static_cast<long long>(w.cpu.r.inertia.positive),
                static_cast<long long>(w.cpu.r.inertia.negative), static_cast<long long>(w.cpu.r.inertia.zero),
                static_cast<long long>(w.cpu.r.perturbed), static_cast<long long>(w.cpu.two),
                same_decisions(w.cpu, w.dmda) ? "yes" : "NO", same_decisions(w.cpu, w.gpu_only) ? "yes" : "NO",
                w.cpu.r.berr, w.dmda.r.berr, w.gpu_only.r.berr);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  starfront::reexec_with_native_blas(argv);  // before any thread: OpenBLAS's kernels for this CPU
  int repeat = 5, ncpu = -1;
  std::string sched = "lws";
  bool gpu = false;
  std::vector<std::string> inputs;
  for (int a = 1; a < argc; ++a) {
    if (!std::strcmp(argv[a], "--repeat") && a + 1 < argc) repeat = std::max(1, std::atoi(argv[++a]));
    else if (!std::strcmp(argv[a], "--ncpu") && a + 1 < argc) ncpu = std::atoi(argv[++a]);
    else if (!std::strcmp(argv[a], "--sched") && a + 1 < argc) sched = argv[++a];
    else if (!std::strcmp(argv[a], "--gpu")) gpu = true;
    else inputs.push_back(argv[a]);
  }
  if (gpu) return gpu_table(inputs, repeat, ncpu, sched);
  std::unique_ptr<StarpuRuntime> rt;
  if (Status st = StarpuRuntime::start(RuntimeOptions{ncpu, 0, sched}, rt); !st.ok()) {
    std::fprintf(stderr, "ldlt_bench: %s\n", st.message.c_str());
    return 1;
  }
  std::printf("| matrix | n | nnz(L) starfront | nnz(L) CHOLMOD | LDLᵀ s | quasi-definite s | LDLᵀ sequential executor s | CHOLMOD LDLᵀ s | LDLᵀ / CHOLMOD | QD / CHOLMOD | inertia (+, −, 0) | perturbed (LDLᵀ) | 2×2 | tasks | berr LDLᵀ (refined) | berr CHOLMOD |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  for (const std::string& in : inputs) {
    CscMatrix A;
    if (Status st = load_input(in, A); !st.ok()) {
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
