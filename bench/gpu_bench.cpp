// gpu_bench: starfront on one GPU plus CPU cores against starfront on the
// CPU cores alone, CHOLMOD on the same cores (starfront's permutation), the
// dense cuSOLVER DPOTRF at the order of the largest front (the ceiling of one
// front on the GPU) and cuSOLVER's sparse Cholesky (cusolverSp csrchol on
// P·A·Pᵀ with starfront's permutation, factor time only: the GPU sparse
// baseline). One process, one analysis per input (with --gpu-graph the
// CPU-only run gets its own graph, from an analysis with the same options). Median of --repeat timings after one warm-up; times
// in seconds, rates in TFLOP/s from starfront's exact flop count (CHOLMOD's
// convention: Σ c_j² over the columns of L); ratios are baseline / starfront
// GPU (> 1: the GPU run is faster); "L GPU vs CPU" is ‖L_GPU − L_CPU‖_F /
// ‖L_CPU‖_F between the two starfront runs' factors (issue 5: ≤ 1e-13;
// "–" with --no-cpu, or when the CPU graph's separate analysis found
// another permutation or other supernodes). CHOLMOD is timed once after a warm-up
// (it is the slowest) for each OpenBLAS thread count of --cholmod-threads
// (a comma-separated list, default "1,N": more threads are not always
// faster for it, and issue 5 compares with its best count), and its best
// time is reported with that count; skipped baselines read 0.
// Usage: gpu_bench [--repeat K] [--ncpu N] [--sched S] [--tile-size B]
//                  [--tile-threshold T] [--tiles-on-gpu-only] [--no-cpu] [--no-cusolversp]
//                  [--no-cholmod] [--ncuda G] [--cholmod-threads T[,T...]] [--gpu-graph]
//                  [--max-subtree-front F] [--fronts-on-gpu-only] [--private-slots]
//                  [--watchdog S] [--relax-small R] [--relax-mid M] [--relax-zeros Z]
//                  [--relax-marginal X] [--relax-zeros-cap C] [--relax-path] [--max-front F]
//                  [--ordering O] [--no-latency-rule] [--fused] [--values-buffer] INPUT...
//   --sched S: StarPU policy of the GPU run (default auto: prio with one GPU,
//   dmda with several; see resolve_scheduler; dmda until session 36).
//   --tiles-on-gpu-only: tile tasks never run on CPU workers in the GPU run
//   (RuntimeOptions::tiles_on_cuda_only). --no-*: skip that baseline.
//   --gpu-graph: the GPU graph (gpu_graph_options: fused subtrees of fronts
//   up to order F = kGpuGraphSubtreeFront (600), one task per medium front, tiles of kGpuTileSize
//   above kGpuTileThreshold unless --tile-size / --tile-threshold say
//   otherwise); without it the default graph (tiles of 256 above 512).
//   The CPU-only run always uses the default graph (analysed separately).
//   --relax-small R, --relax-mid M, --relax-zeros Z: amalgamation
//   (AnalysisOptions::relax_small, relax_mid, relax_zeros_large; defaults 4,
//   16 and 0.1), also in --fused mode: larger values merge more small
//   supernodes into their parents (fewer, larger fronts; more flops).
//   --relax-marginal X, --relax-zeros-cap C: the marginal rule
//   (AnalysisOptions::relax_marginal, relax_zeros_cap; defaults 0.01 and
//   0.2; --relax-marginal 0 turns it off, as before session 31).
//   --relax-path, --max-front F: amalgamation that keeps the assembly
//   tree's modelled critical path (AnalysisOptions::relax_critical_path),
//   no merged front above order F (relax_max_front; 0: no limit).
//   --ordering scotch|scotch-path|scotch-nd|scotch-amd|natural: as for
//   `starfront solve` (scotch-path: the Scotch ordering with the shorter
//   modelled critical path, OrderingChoice::critical_path). --fused prints
//   each input's modelled critical path on stderr.
//   --fused applies the GPU graph's latency rule (AnalysisOptions::
//   latency_rule_front = 232, the C API's default STARFRONT_AMALGAMATE_AUTO
//   on the GPU graph) unless --relax-path or --max-front chooses the
//   amalgamation or --no-latency-rule turns it off; the table's analysis
//   column names the ordering and amalgamation that ran ("(rule)": chosen
//   by the rule).
//   --fronts-on-gpu-only: subtree and front tasks never run on CPU workers
//   (RuntimeOptions::fronts_on_cuda_only). A second table gives the graph's
//   tasks per kind and how many of each ran on the GPU per factorisation.
//   --private-slots: one contribution-block slot per block (SlotPolicy::
//   private_slots): every CB moved between host and GPU is its own size,
//   not the capacity of a shared slot.
//   Each GPU run prints the medians of the executor's phases (FactorStats::
//   phases: setup, submit, execute, writeback, and two parts of the
//   writeback: the GPU front tasks' own copies of L, the blocks of L) on stderr.
//   Environment: STARFRONT_PIN_FACTOR=0 leaves the factor pageable (by
//   default it is page-locked once with CUDA workers: starpu_executor.cpp);
//   STARFRONT_DEFER_PIVOTS=0 makes GPU Cholesky fronts synchronise for their
//   pivot test (the behaviour before issue 5's deferred test);
//   STARPU_NWORKER_PER_CUDA=S gives each GPU S CUDA workers (streams);
//   STARFRONT_FRONT_TASKS_ON_GPU=1 keeps every untiled front task on the
//   GPUs (fused subtrees still go where dmda puts them).
//   --watchdog S: a factorisation in which no task completes for S seconds
//   is cancelled and reported with the tasks still running
//   (FactorOptions::watchdog_seconds; default 0: wait for ever).
//   --ncpu N: CPU cores in all (default: all); the GPU run uses N-G CPU
//   workers and G GPUs (default G = 1; StarPU drives each GPU's CUDA
//   workers, 4 streams by default, from one core), the CPU runs use N. INPUT: Matrix Market file, lap3d:N[:27], lap2d:N.
//   --fused: the fused-subtree mode (issue 6): the GPU-oriented graph
//   (gpu_graph_options: small fronts fused, one kernel launch per subtree
//   task, subtrees on the GPU only), then per input the median wall time of
//   Solver::refactorize (new values on the analysed pattern: the
//   interior-point path, starfront_refactorize) over --repeat
//   refactorisations after a warm-up, and of Solver::factorize (the pattern
//   compared too; median of min(--repeat, 10)), the
//   fused tasks' share (launch to synchronisation, and the GPU time of the
//   small-front and large-front launches from CUDA events), StarPU tasks and
//   kernel launches per factorisation, the median solve time (Solver::solve
//   as starfront_solve runs it: one right-hand side, the CPU sweep, the
//   backward error, refinement only if that error asks for it; --repeat
//   calls after a warm-up), the backward error and the refinement steps of
//   the last solve; against CHOLMOD on the CPU cores (the best of the
//   --cholmod-threads counts, default 1 and N: its factorisation, and
//   cholmod_solve with that factor followed by the backward error of its
//   solution, the same work as starfront's solve without refinement) and
//   cusolverSp csrchol's factor phase
//   (medians of min(--repeat, 10) after a warm-up). Prints its own table (bench/README.md),
//   then where refactorize()'s time goes (medians of FactorStats::phases).
//   --values-buffer (with --fused): before each refactorisation the values
//   are copied into Solver::values_buffer() (what starfront_refactorize
//   scatters them into), outside the timed call, and refactorize() is given
//   that buffer (no copy inside; the copy's median is printed beside).
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cusolverDn.h>
#include <cusolverSp.h>
#include <cusolverSp_LOWLEVEL_PREVIEW.h>
#include <cusparse.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <memory>
#include <random>
#include <thread>
#include <type_traits>

#include "cpu/blas_core.hpp"
#include "api/solver.hpp"
#include "cuda/fused_subtree_index.hpp"
#include "cuda/fused_subtree_kernel.hpp"
#include "runtime/starpu/runtime.hpp"
#include "runtime/starpu/task_codelets.hpp"
#include "solve/solve.hpp"

#include "bench_common.hpp"
#include "thread_stacks.hpp"

#include <starpu.h>

using namespace starfront;
using namespace starfront::bench;

namespace {

#define CUDA_CHECK(x)                                                                          \
  do {                                                                                         \
    cudaError_t e_ = (x);                                                                      \
    if (e_ != cudaSuccess) {                                                                   \
      std::fprintf(stderr, "gpu_bench: %s: %s\n", #x, cudaGetErrorString(e_));                 \
      return -1.0;                                                                             \
    }                                                                                          \
  } while (0)
#define STATUS_CHECK(x, ok)                                                                    \
  do {                                                                                         \
    auto s_ = (x);                                                                             \
    if (s_ != (ok)) {                                                                          \
      std::fprintf(stderr, "gpu_bench: %s: status %d\n", #x, static_cast<int>(s_));            \
      return -1.0;                                                                             \
    }                                                                                          \
  } while (0)

/// Median seconds of cuSOLVER DPOTRF (lower) on an n×n SPD matrix already on
/// the GPU (restored from a copy before each run, untimed); -1 on failure.
double dense_potrf_seconds(int n, int repeat) {
  if (n <= 0) return 0.0;
  const std::size_t nn = static_cast<std::size_t>(n) * n;
  std::vector<double> h(nn);
  std::mt19937_64 rng(42);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (int j = 0; j < n; ++j)
    for (int i = j; i < n; ++i) h[i + static_cast<std::size_t>(j) * n] = h[j + static_cast<std::size_t>(i) * n] = i == j ? n : u(rng);
  double *dA = nullptr, *d0 = nullptr, *work = nullptr;
  int* info = nullptr;
  CUDA_CHECK(cudaMalloc(&dA, nn * sizeof(double)));
  CUDA_CHECK(cudaMalloc(&d0, nn * sizeof(double)));
  CUDA_CHECK(cudaMalloc(&info, sizeof(int)));
  CUDA_CHECK(cudaMemcpy(d0, h.data(), nn * sizeof(double), cudaMemcpyHostToDevice));
  cusolverDnHandle_t hs;
  STATUS_CHECK(cusolverDnCreate(&hs), CUSOLVER_STATUS_SUCCESS);
  int lwork = 0;
  STATUS_CHECK(cusolverDnDpotrf_bufferSize(hs, CUBLAS_FILL_MODE_LOWER, n, d0, n, &lwork), CUSOLVER_STATUS_SUCCESS);
  CUDA_CHECK(cudaMalloc(&work, sizeof(double) * std::max(lwork, 1)));
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0);
  cudaEventCreate(&e1);
  std::vector<double> t;
  for (int k = 0; k <= repeat; ++k) {
    CUDA_CHECK(cudaMemcpy(dA, d0, nn * sizeof(double), cudaMemcpyDeviceToDevice));
    cudaEventRecord(e0);
    STATUS_CHECK(cusolverDnDpotrf(hs, CUBLAS_FILL_MODE_LOWER, n, dA, n, work, lwork, info), CUSOLVER_STATUS_SUCCESS);
    cudaEventRecord(e1);
    CUDA_CHECK(cudaEventSynchronize(e1));
    float ms = 0;
    cudaEventElapsedTime(&ms, e0, e1);
    if (k > 0) t.push_back(ms * 1e-3);
  }
  int hinfo = 0;
  CUDA_CHECK(cudaMemcpy(&hinfo, info, sizeof(int), cudaMemcpyDeviceToHost));
  cusolverDnDestroy(hs);
  cudaFree(dA), cudaFree(d0), cudaFree(work), cudaFree(info);
  cudaEventDestroy(e0), cudaEventDestroy(e1);
  if (hinfo != 0) {
    std::fprintf(stderr, "gpu_bench: dense potrf info %d\n", hinfo);
    return -1.0;
  }
  return median(t);
}

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
/// Median seconds of cusolverSp's csrchol factorisation (cusolverSpDcsrcholFactor,
/// after its analysis and buffer query, untimed) of P·A·Pᵀ, both triangles in
/// CSR, perm[k] = original index of row k; -1 on failure.
double cusolversp_seconds(const CscMatrix& A, const std::vector<idx_t>& perm, int repeat) {
  const idx_t n = A.n;
  std::vector<idx_t> inv(n);
  for (idx_t k = 0; k < n; ++k) inv[perm[k]] = k;
  // Full symmetric pattern of B = P A Pᵀ in CSR (rows sorted).
  std::vector<std::vector<std::pair<int, double>>> rows(n);
  for (idx_t j = 0; j < n; ++j)
    for (idx_t p = A.colptr[j]; p < A.colptr[j + 1]; ++p) {
      const idx_t i = A.rowind[p];
      const int pi = static_cast<int>(inv[i]), pj = static_cast<int>(inv[j]);
      rows[pi].push_back({pj, A.values[p]});
      if (i != j) rows[pj].push_back({pi, A.values[p]});
    }
  std::vector<int> rp(n + 1, 0), ci;
  std::vector<double> v;
  for (idx_t r = 0; r < n; ++r) {
    std::sort(rows[r].begin(), rows[r].end());
    for (auto& e : rows[r]) ci.push_back(e.first), v.push_back(e.second);
    rp[r + 1] = static_cast<int>(ci.size());
  }
  const int nnz = static_cast<int>(ci.size());
  int *drp = nullptr, *dci = nullptr;
  double* dv = nullptr;
  void* buf = nullptr;
  CUDA_CHECK(cudaMalloc(&drp, sizeof(int) * (n + 1)));
  CUDA_CHECK(cudaMalloc(&dci, sizeof(int) * nnz));
  CUDA_CHECK(cudaMalloc(&dv, sizeof(double) * nnz));
  CUDA_CHECK(cudaMemcpy(drp, rp.data(), sizeof(int) * (n + 1), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(dci, ci.data(), sizeof(int) * nnz, cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(dv, v.data(), sizeof(double) * nnz, cudaMemcpyHostToDevice));
  cusolverSpHandle_t h;
  STATUS_CHECK(cusolverSpCreate(&h), CUSOLVER_STATUS_SUCCESS);
  cusparseMatDescr_t d;
  STATUS_CHECK(cusparseCreateMatDescr(&d), CUSPARSE_STATUS_SUCCESS);
  cusparseSetMatType(d, CUSPARSE_MATRIX_TYPE_GENERAL);
  cusparseSetMatIndexBase(d, CUSPARSE_INDEX_BASE_ZERO);
  csrcholInfo_t info;
  STATUS_CHECK(cusolverSpCreateCsrcholInfo(&info), CUSOLVER_STATUS_SUCCESS);
  const int in = static_cast<int>(n);
  STATUS_CHECK(cusolverSpXcsrcholAnalysis(h, in, nnz, d, drp, dci, info), CUSOLVER_STATUS_SUCCESS);
  std::size_t internal = 0, ws = 0;
  STATUS_CHECK(cusolverSpDcsrcholBufferInfo(h, in, nnz, d, dv, drp, dci, info, &internal, &ws),
               CUSOLVER_STATUS_SUCCESS);
  CUDA_CHECK(cudaMalloc(&buf, std::max<std::size_t>(ws, 1)));
  std::vector<double> t;
  for (int k = 0; k <= repeat; ++k) {
    CUDA_CHECK(cudaDeviceSynchronize());
    const auto t0 = std::chrono::steady_clock::now();
    STATUS_CHECK(cusolverSpDcsrcholFactor(h, in, nnz, d, dv, drp, dci, info, buf), CUSOLVER_STATUS_SUCCESS);
    CUDA_CHECK(cudaDeviceSynchronize());
    if (k > 0) t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  int pos = -1;
  cusolverSpDcsrcholZeroPivot(h, info, 0.0, &pos);
  cusolverSpDestroyCsrcholInfo(info);
  cusparseDestroyMatDescr(d);
  cusolverSpDestroy(h);
  cudaFree(drp), cudaFree(dci), cudaFree(dv), cudaFree(buf);
  if (pos >= 0) {
    std::fprintf(stderr, "gpu_bench: csrchol zero pivot at %d\n", pos);
    return -1.0;
  }
  return median(t);
}
#pragma GCC diagnostic pop

struct Input {
  std::string name;
  CscMatrix A;
  std::unique_ptr<Solver> solver;
  idx_t max_front = 0;
  double flops = 0;
  double t_gpu = 0, t_cpu = 0, t_cholmod = 0, t_dense = 0, t_sp = 0;
  double berr_gpu = 0, berr_cpu = 0, berr_cholmod = 0;
  /// ‖L_GPU − L_CPU‖_F / ‖L_CPU‖_F: the GPU run's factor against the CPU
  /// run's (issue 5: ≤ 1e-13); negative when not compared (--no-cpu, or the
  /// two analyses differ).
  double l_diff = -1;
  int cholmod_threads = 0;  ///< the OpenBLAS thread count of t_cholmod (the best one)
  long long gpu_tasks = 0;
  GraphStats graph;                            ///< the analysed graph's tasks per kind
  std::array<long long, kTaskKinds> on_gpu{};  ///< per factorisation, tasks of each kind run by CUDA workers
};

/// ‖a − b‖_F / ‖b‖_F over two factors of the same analysis (Lx arrays of
/// one plan: the layout depends on the symbolic factor only, not on the task
/// graph); negative when they cannot be compared (other sizes).
double factor_rel_diff(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size() || a.empty()) return -1.0;
  double num = 0, den = 0;
  for (std::size_t i = 0; i < a.size(); ++i) num += (a[i] - b[i]) * (a[i] - b[i]), den += b[i] * b[i];
  return den > 0 ? std::sqrt(num / den) : std::sqrt(num);
}

/// The table's entry for l_diff ("–" when not compared).
std::string l_diff_text(double d) {
  if (d < 0) return "–";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1e", d);
  return buf;
}

/// After a factorisation abandoned by the watchdog (its tasks never end, so
/// StarPU cannot shut down): StarPU's memory per node and every thread's
/// call stack to stderr, then the process ends (exit status 3): at once, or
/// after STARFRONT_BENCH_STALL_WAIT seconds when that is set.
[[noreturn]] void stalled_exit() {
  std::fflush(stdout);
  for (unsigned node = 0; node < starpu_memory_nodes_get_count(); ++node) {
    char name[64] = {0};
    starpu_memory_node_get_name(node, name, sizeof name);
    std::fprintf(stderr, "gpu_bench: stalled: memory node %u (%s): total %lld, available %lld, used %lld bytes\n", node,
                 name, static_cast<long long>(starpu_memory_get_total(node)),
                 static_cast<long long>(starpu_memory_get_available(node)),
                 static_cast<long long>(starpu_memory_get_used(node)));
  }
  std::fflush(stderr);
  dump_thread_stacks(2);
  // STARFRONT_BENCH_STALL_WAIT=S: stay S seconds more (for a debugger to
  // attach: tools/device/run-relax.sh, step stall).
  const char* wait = std::getenv("STARFRONT_BENCH_STALL_WAIT");
  std::fprintf(stderr, "gpu_bench: stalled: stacks written (pid %d)\n", static_cast<int>(getpid()));
  std::fflush(stderr);
  if (wait && std::atoi(wait) > 0) std::this_thread::sleep_for(std::chrono::seconds(std::atoi(wait)));
  std::_Exit(3);
}

/// Factorises `repeat` times after a warm-up on the running StarPU; median
/// seconds and the backward error of A x = A·1 (negative time on failure).
double time_starpu(Input& in, Solver& solver, int repeat, double& berr, const FactorOptions& fo) {
  std::vector<double> t;
  // setup, submit, execute, writeback and two of its parts (FactorStats::phases)
  std::array<std::vector<double>, 6> ph;
  for (int k = 0; k <= repeat; ++k) {
    if (Status st = solver.factorize(in.A, fo, Executor::starpu); !st.ok()) {
      std::fprintf(stderr, "gpu_bench: %s: %s\n", in.name.c_str(), st.message.c_str());
      if (st.message.find("abandoned") != std::string::npos) stalled_exit();
      return -1.0;
    }
    if (k > 0) {
      const FactorStats& fs = solver.stats().factor;
      t.push_back(fs.seconds);
      ph[0].push_back(fs.phases.setup);
      ph[1].push_back(fs.phases.submit);
      ph[2].push_back(fs.phases.execute);
      ph[3].push_back(fs.phases.writeback);
      ph[4].push_back(fs.phases.writeback_copies);
      ph[5].push_back(fs.phases.writeback_blocks);
    }
  }
  if (repeat > 0)
    std::fprintf(stderr, "gpu_bench: %s executor phases (medians, ms): setup %.2f submit %.2f execute %.2f writeback %.2f "
                 "(front copies %.2f, blocks of L %.2f)\n",
                 in.name.c_str(), 1e3 * median(ph[0]), 1e3 * median(ph[1]), 1e3 * median(ph[2]), 1e3 * median(ph[3]),
                 1e3 * median(ph[4]), 1e3 * median(ph[5]));
  std::vector<double> ones(in.A.n, 1.0), b(in.A.n);
  symmetric_matvec(in.A, ones.data(), b.data());
  std::vector<double> x = b;
  solver.solve(x.data(), 1, std::max<idx_t>(1, in.A.n));
  berr = backward_error(in.A, x.data(), b.data());
  return median(t);
}

long long gpu_tile_tasks() {
  long long n = 0;
  for (TaskKind k : {TaskKind::potrf, TaskKind::trsm, TaskKind::syrk, TaskKind::gemm})
    n += cuda_task_executions(k);
  return n;
}

/// The --fused mode (file header). Returns the exit status.
int fused_mode(const std::vector<std::string>& names, int repeat, int ncpu, bool sp, bool cholmod,
               const std::vector<int>& cholmod_threads, const AnalysisOptions& ao, bool values_buffer) {
  struct Row {
    std::string name;
    std::string analysis;  ///< the amalgamation that ran, and whether the latency rule chose it
    idx_t n = 0, fronts = 0, fused_fronts = 0, max_front = 0;
    double t_fill = 0;  ///< --values-buffer: median of the copy into the buffer, s
    double flops = 0, t_fact = 0, t_full = 0, t_exec = 0, t_kernel = 0, t_small = 0, t_large = 0, t_solve = 0, t_chol = 0, t_sp = 0, berr = 0,
           berr_chol = 0, t_chol_solve = 0;
    long long tasks = 0, launches = 0, subtrees = 0;
    int chol_threads = 1, refine = 0;
    FactorPhases ph;  ///< medians per phase (FactorStats::phases)
  };
  std::vector<Row> rows;
  std::unique_ptr<StarpuRuntime> rt;
  RuntimeOptions ro{ncpu - 1, 1, "dmda"};
  ro.tiles_on_cuda_only = ro.fronts_on_cuda_only = true;
  if (Status st = StarpuRuntime::start(ro, rt); !st.ok()) {
    std::fprintf(stderr, "gpu_bench: %s\n", st.message.c_str());
    return 1;
  }
  for (const std::string& nm : names) {
    Row r;
    r.name = nm.substr(nm.find_last_of('/') + 1);
    CscMatrix A;
    if (Status st = load(nm, A); !st.ok()) {
      std::fprintf(stderr, "gpu_bench: %s\n", st.message.c_str());
      return 1;
    }
    Solver solver;
    if (Status st = solver.analyse(A, ao, gpu_graph_options(ncpu, kGpuFusedFront)); !st.ok()) {
      std::fprintf(stderr, "gpu_bench: %s\n", st.message.c_str());
      return 1;
    }
    const GraphStats gs = graph_stats(solver.graph());
    {
      const SymbolicFactor& sym = solver.symbolic();
      std::fprintf(stderr, "gpu_bench: %s: %lld fronts, %.4g flops (exact %.4g), largest front %lld; modelled critical "
                   "path %.1f us over %lld fronts and %lld columns\n", nm.c_str(),
                   static_cast<long long>(sym.nsuper), sym.flops, sym.flops_exact,
                   static_cast<long long>(sym.max_front), sym.critical_path_s * 1e6,
                   static_cast<long long>(sym.critical_path_fronts),
                   static_cast<long long>(sym.critical_path_columns));
    }
    {
      const SymbolicFactor& sym = solver.symbolic();
      r.analysis = std::string(ordering_method_name(sym.ordering_used)) + ", " +
                   (!sym.amalgamated ? "none" : sym.critical_path_amalgamation ? "critical-path" : "relaxed") +
                   (sym.latency_rule.applied ? " (rule)" : "");
    }
    r.n = A.n;
    r.flops = solver.symbolic().flops_exact;
    r.fronts = gs.fronts;
    r.fused_fronts = gs.fronts_in_subtrees;
    r.subtrees = gs.by_kind[static_cast<int>(TaskKind::subtree)];
    for (idx_t s = 0; s < solver.plan().nsuper; ++s) r.max_front = std::max(r.max_front, solver.plan().front_order(s));
    FactorOptions fo;
    fo.refine_steps = 2;
    std::vector<double> tf, te, tfill;
    std::vector<std::array<double, 7>> tph;
    const long long l0 = cuda_fused_kernel_launches();
    const double k0 = cuda_fused_kernel_seconds();
    double k1 = k0, p0 = 0, p1 = 0;
    for (int k = 0; k <= repeat; ++k) {
      // The interior-point path: new values on the analysed pattern
      // (Solver::refactorize, what starfront_refactorize calls).
      const double* values = A.values.data();
      double fill = 0;
      if (values_buffer) {  // the caller writes the values into the solver's buffer (not timed as refactorize())
        const auto tb = std::chrono::steady_clock::now();
        double* buf = solver.values_buffer();
        std::copy(A.values.begin(), A.values.end(), buf);
        values = buf;
        fill = std::chrono::duration<double>(std::chrono::steady_clock::now() - tb).count();
      }
      const auto t0 = std::chrono::steady_clock::now();
      if (Status st = solver.refactorize(values, fo, Executor::starpu); !st.ok()) {
        std::fprintf(stderr, "gpu_bench: %s: %s\n", r.name.c_str(), st.message.c_str());
        if (st.message.find("abandoned") != std::string::npos) stalled_exit();
        return 1;
      }
      const double dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      if (k == 0) {
        k1 = cuda_fused_kernel_seconds();  // the warm-up's kernel time is left out
        p0 = cuda_fused_kernel_part_seconds(0);
        p1 = cuda_fused_kernel_part_seconds(1);
        continue;
      }
      tf.push_back(dt);
      tfill.push_back(fill);
      te.push_back(solver.stats().factor.seconds);
      const FactorPhases& q = solver.stats().factor.phases;
      tph.push_back({q.check, q.setup, q.submit, q.execute, q.writeback, q.finish, q.overlapped});
    }
    r.t_fact = median(tf);
    r.t_fill = median(tfill);
    r.t_exec = median(te);
    {  // Solver::factorize (the whole matrix given again: its pattern compared)
      std::vector<double> tfull;
      for (int k = 0; k < std::min(repeat, 10); ++k) {
        const auto t0 = std::chrono::steady_clock::now();
        if (Status st = solver.factorize(A, fo, Executor::starpu); !st.ok()) {
          std::fprintf(stderr, "gpu_bench: %s: %s\n", r.name.c_str(), st.message.c_str());
          if (st.message.find("abandoned") != std::string::npos) stalled_exit();
          return 1;
        }
        tfull.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
      }
      r.t_full = median(tfull);
    }
    {
      std::array<double, 7> med{};
      for (int i = 0; i < 7; ++i) {
        std::vector<double> v;
        for (const auto& x : tph) v.push_back(x[static_cast<std::size_t>(i)]);
        med[static_cast<std::size_t>(i)] = median(v);
      }
      r.ph = FactorPhases{};
      r.ph.check = med[0];
      r.ph.setup = med[1];
      r.ph.submit = med[2];
      r.ph.execute = med[3];
      r.ph.writeback = med[4];
      r.ph.finish = med[5];
      r.ph.overlapped = med[6];
    }
    r.t_kernel = (cuda_fused_kernel_seconds() - k1) / (repeat + std::min(repeat, 10));
    r.t_small = (cuda_fused_kernel_part_seconds(0) - p0) / (repeat + std::min(repeat, 10));
    r.t_large = (cuda_fused_kernel_part_seconds(1) - p1) / (repeat + std::min(repeat, 10));
    r.launches = (cuda_fused_kernel_launches() - l0) / (repeat + 1 + std::min(repeat, 10));
    r.tasks = solver.stats().factor.tasks;
    std::vector<double> ones(A.n, 1.0), b(A.n), ts;
    symmetric_matvec(A, ones.data(), b.data());
    // The solve a caller gets (Solver::solve, as starfront_solve): the
    // compiled one-process sweep, the backward error, refinement steps if
    // that error asks for them; the last call's solution is checked below.
    std::vector<double> x(b.size());
    for (int k = 0; k <= repeat; ++k) {
      x = b;
      const auto t0 = std::chrono::steady_clock::now();
      solver.solve(x.data(), 1, std::max<idx_t>(1, A.n));
      if (k > 0) ts.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    r.t_solve = median(ts);
    r.berr = backward_error(A, x.data(), b.data());
    r.refine = solver.stats().refine.steps;
    // The longest chains of fronts of the fused tasks (each front waits for
    // the one below it): a lower bound of the kernels' time in latencies.
    FusedChains chains;
    if (FusedSubtreeIndex X; build_fused_subtree_index(solver.graph(), X).ok())
      for (idx_t t = 0; t < static_cast<idx_t>(X.task.size()); ++t) {
        const FusedChains c = fused_chains(X, t);
        chains.small = std::max(chains.small, c.small);
        chains.large = std::max(chains.large, c.large);
        chains.whole = std::max(chains.whole, c.whole);
      }
    const FusedLaunchShape small = fused_last_launch_shape(true), large = fused_last_launch_shape(false);
    std::fprintf(stderr,
                 "gpu_bench: %s fused GPU %.6f s (kernels %.6f s), %lld tasks; longest chains of fronts in one "
                 "fused task: small launch %lld, large launch %lld, whole task %lld; last launches: small %d blocks "
                 "a multiprocessor (grid %d), large %d (grid %d)\n",
                 r.name.c_str(), r.t_fact, r.t_kernel, r.tasks, static_cast<long long>(chains.small),
                 static_cast<long long>(chains.large), static_cast<long long>(chains.whole), small.blocks_per_sm,
                 small.grid, large.blocks_per_sm, large.grid);
    if (cholmod) {
      const CholmodRun c =
          best_cholmod(A, &solver.symbolic().perm, std::min(repeat, 10), cholmod_threads, r.chol_threads);
      r.t_chol = c.seconds;
      r.t_chol_solve = c.solve_seconds;
      r.berr_chol = c.berr;
    }
    if (sp) r.t_sp = cusolversp_seconds(A, solver.symbolic().perm, std::min(repeat, 10));
    rows.push_back(r);
  }
  std::printf("\ngpu_bench --fused: GPU graph (gpu_graph_options(%d): subtrees up to front order 232, one kernel "
              "each, on the GPU only), 1 GPU + %d CPU workers (dmda); medians of %d after a warm-up\n\n",
              ncpu, ncpu - 1, repeat);
  std::printf("| matrix | n | flops | fronts (fused) | max front | analysis | tasks/fact | subtree kernels/fact | refactorize() s | factorize() s | executor s | fused tasks s | GPU small / large part s | solve s | CHOLMOD s (threads) | CHOLMOD/GPU | CHOLMOD solve + berr s | csrchol s | csrchol/GPU | berr (refine steps) | berr CHOLMOD |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  for (const Row& r : rows)
    std::printf("| %s | %lld | %.3g | %lld (%lld) | %lld | %s | %lld | %lld | %.6f | %.6f | %.6f | %.6f | %.6f / %.6f | %.6f | %.6f (%d) | %.1f | %.6f | %.6f | %.1f | %.1e (%d) | %.1e |\n",
                r.name.c_str(), static_cast<long long>(r.n), r.flops, static_cast<long long>(r.fronts),
                static_cast<long long>(r.fused_fronts), static_cast<long long>(r.max_front), r.analysis.c_str(),
                r.tasks, r.launches,
                r.t_fact, r.t_full, r.t_exec, r.t_kernel, r.t_small, r.t_large, r.t_solve, r.t_chol, r.chol_threads, r.t_chol / r.t_fact,
                r.t_chol_solve, r.t_sp, r.t_sp / r.t_fact, r.berr, r.refine, r.berr_chol);
  std::printf("\nWhere refactorize() goes (FactorStats::phases, medians in ms; check: the values copied in and "
              "checked (--values-buffer: checked only); execute includes the fused tasks, whose GPU parts are the "
              "small / large columns above; norm pass: the ‖A‖∞ pass run on the calling thread while the graph "
              "runs (part of execute); buffer fill: --values-buffer's copy into the buffer, before and outside "
              "refactorize())\n\n");
  std::printf("| matrix | refactorize() ms | check | setup | submit | execute | writeback | finish | execute - fused tasks | norm pass | buffer fill |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|---|\n");
  for (const Row& r : rows) {
    char fill[32] = "-";
    if (values_buffer) std::snprintf(fill, sizeof fill, "%.3f", 1e3 * r.t_fill);
    std::printf("| %s | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f | %s |\n", r.name.c_str(),
                1e3 * r.t_fact, 1e3 * r.ph.check, 1e3 * r.ph.setup, 1e3 * r.ph.submit, 1e3 * r.ph.execute,
                1e3 * r.ph.writeback, 1e3 * r.ph.finish, 1e3 * (r.ph.execute - r.t_kernel), 1e3 * r.ph.overlapped, fill);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  starfront::reexec_with_native_blas(argv);  // before any thread: OpenBLAS's kernels for this CPU
  {
    const starfront::BlasCore b = starfront::blas_core();
    const bool replaced = b.detected != b.name;
    std::fprintf(stderr, "gpu_bench: CPU BLAS (starfront and CHOLMOD): OpenBLAS %s kernels%s%s%s\n", b.name.c_str(),
                 replaced ? " (OPENBLAS_CORETYPE set by gpu_bench; OpenBLAS chose " : "",
                 replaced ? b.detected.c_str() : "", replaced ? ")" : "");
  }
  int repeat = 3, ncpu = static_cast<int>(std::thread::hardware_concurrency()), ncuda = 1;
  bool sp = true, cholmod = true, cpu = true, cuda_only = false, fused = false, gpu_graph = false,
       fronts_only = false, private_slots = false, values_buffer = false, latency_rule = true;
  idx_t tile_size = 0, tile_threshold = 0;  // 0: the graph's default
  idx_t max_subtree_front = kGpuGraphSubtreeFront;
  AnalysisOptions ao;
  FactorOptions fo;  // --watchdog
  std::vector<int> cholmod_threads;  // empty: {1, ncpu}
  std::string sched = "auto";  // RuntimeOptions::sched (auto: prio with one GPU, dmda with several)
  GraphOptions go;
  std::vector<std::string> names;
  // Numeric option values are whole numbers in range (count) or finite reals
  // >= 0 (real); anything else ends the run with status 2 and the option named.
  auto count = [](const char* opt, const char* text, long long lo, long long hi, auto& dst) {
    long long v = 0;
    if (!parse_count(text, lo, hi, v)) {
      std::fprintf(stderr, "gpu_bench: %s wants a whole number %lld..%lld, got '%s'\n", opt, lo, hi, text);
      return false;
    }
    dst = static_cast<std::remove_reference_t<decltype(dst)>>(v);
    return true;
  };
  auto real = [](const char* opt, const char* text, double& dst) {
    if (!parse_real(text, dst)) {
      std::fprintf(stderr, "gpu_bench: %s wants a finite number >= 0, got '%s'\n", opt, text);
      return false;
    }
    return true;
  };
  for (int a = 1; a < argc; ++a) {
    if (!std::strcmp(argv[a], "--repeat") && a + 1 < argc) {
      if (!count(argv[a], argv[a + 1], 1, 1000000, repeat)) return 2;
      ++a;
    } else if (!std::strcmp(argv[a], "--ncpu") && a + 1 < argc) {
      if (!count(argv[a], argv[a + 1], 1, 65536, ncpu)) return 2;
      ++a;
    } else if (!std::strcmp(argv[a], "--ncuda") && a + 1 < argc) {
      if (!count(argv[a], argv[a + 1], 1, 64, ncuda)) return 2;
      ++a;
    }
    else if (!std::strcmp(argv[a], "--cholmod-threads") && a + 1 < argc) {
      cholmod_threads.clear();
      for (const char* p = argv[++a];;) {
        char* end = nullptr;
        const long t = *p >= '0' && *p <= '9' ? std::strtol(p, &end, 10) : 0;  // digits only: no blank or sign
        if (end == nullptr || t < 1 || t > 4096 || (*end && *end != ',') || (*end == ',' && !end[1])) {
          std::fprintf(stderr, "gpu_bench: --cholmod-threads wants thread counts 1..4096 separated by commas, got '%s'\n",
                       argv[a]);
          return 2;
        }
        cholmod_threads.push_back(static_cast<int>(t));
        if (!*end) break;
        p = end + 1;
      }
    }
    else if (!std::strcmp(argv[a], "--sched") && a + 1 < argc) sched = argv[++a];
    else if (!std::strcmp(argv[a], "--tile-size") && a + 1 < argc) {
      if (!count(argv[a], argv[a + 1], 1, 1 << 20, tile_size)) return 2;
      ++a;
    } else if (!std::strcmp(argv[a], "--tile-threshold") && a + 1 < argc) {
      if (!count(argv[a], argv[a + 1], 1, 1 << 30, tile_threshold)) return 2;
      ++a;
    } else if (!std::strcmp(argv[a], "--max-subtree-front") && a + 1 < argc) {
      if (!count(argv[a], argv[a + 1], 0, 1 << 30, max_subtree_front)) return 2;
      ++a;
    }
    else if (!std::strcmp(argv[a], "--gpu-graph")) gpu_graph = true;
    else if (!std::strcmp(argv[a], "--private-slots")) private_slots = true;
    else if (!std::strcmp(argv[a], "--relax-small") && a + 1 < argc) {
      if (!count(argv[a], argv[a + 1], 0, 1 << 30, ao.relax_small)) return 2;
      ++a;
    } else if (!std::strcmp(argv[a], "--relax-mid") && a + 1 < argc) {
      if (!count(argv[a], argv[a + 1], 0, 1 << 30, ao.relax_mid)) return 2;
      ++a;
    } else if (!std::strcmp(argv[a], "--relax-zeros") && a + 1 < argc) {
      if (!real(argv[a], argv[a + 1], ao.relax_zeros_large)) return 2;
      ++a;
    } else if (!std::strcmp(argv[a], "--relax-marginal") && a + 1 < argc) {
      if (!real(argv[a], argv[a + 1], ao.relax_marginal)) return 2;
      ++a;
    } else if (!std::strcmp(argv[a], "--relax-zeros-cap") && a + 1 < argc) {
      if (!real(argv[a], argv[a + 1], ao.relax_zeros_cap)) return 2;
      ++a;
    }
    else if (!std::strcmp(argv[a], "--relax-path")) ao.relax_critical_path = true;
    else if (!std::strcmp(argv[a], "--no-latency-rule")) latency_rule = false;
    else if (!std::strcmp(argv[a], "--max-front") && a + 1 < argc) {
      long long v = 0;
      if (!parse_count(argv[++a], 0, 1000000000, v)) {
        std::fprintf(stderr, "gpu_bench: --max-front wants a front order 0..1000000000 (0: no limit), got '%s'\n",
                     argv[a]);
        return 2;
      }
      ao.relax_max_front = static_cast<idx_t>(v);
    }
    else if (!std::strcmp(argv[a], "--ordering") && a + 1 < argc) {
      if (!set_ordering_by_name(argv[++a], ao)) {
        std::fprintf(stderr, "gpu_bench: --ordering wants scotch, scotch-path, scotch-nd, scotch-amd or natural, got '%s'\n", argv[a]);
        return 2;
      }
    }
    else if (!std::strcmp(argv[a], "--fronts-on-gpu-only")) fronts_only = true;
    else if (!std::strcmp(argv[a], "--no-cusolversp")) sp = false;
    else if (!std::strcmp(argv[a], "--no-cholmod")) cholmod = false;
    else if (!std::strcmp(argv[a], "--no-cpu")) cpu = false;
    else if (!std::strcmp(argv[a], "--tiles-on-gpu-only")) cuda_only = true;
    else if (!std::strcmp(argv[a], "--fused")) fused = true;
    else if (!std::strcmp(argv[a], "--values-buffer")) values_buffer = true;
    else if (!std::strcmp(argv[a], "--watchdog") && a + 1 < argc) {
      if (!real(argv[a], argv[a + 1], fo.watchdog_seconds)) return 2;
      ++a;
    }
    else names.push_back(argv[a]);
  }
  if (cholmod_threads.empty()) {
    cholmod_threads = {1};
    if (ncpu > 1) cholmod_threads.push_back(ncpu);
  }
  if (ncuda < 1 || ncpu < ncuda + 1) {
    std::fprintf(stderr, "gpu_bench: need --ncuda >= 1 and --ncpu >= ncuda + 1 (one core drives each GPU)\n");
    return 2;
  }
  if (values_buffer && !fused) {
    std::fprintf(stderr, "gpu_bench: --values-buffer needs --fused\n");
    return 2;
  }
  // The GPU graph's latency rule, as the library applies it (the C API's
  // STARFRONT_AMALGAMATE_AUTO), unless the amalgamation was chosen here.
  if (fused && latency_rule && ao.amalgamate && !ao.relax_critical_path && ao.relax_max_front == 0)
    ao.latency_rule_front = kGpuFusedFront;
  if (fused) return fused_mode(names, repeat, ncpu, sp, cholmod, cholmod_threads, ao, values_buffer);
  std::vector<Input> inputs(names.size());
  GraphOptions cpu_go = go;  // the CPU-only run's graph when the GPU graph is measured
  cpu_go.workers = ncpu;
  if (gpu_graph) go = gpu_graph_options(ncpu, max_subtree_front);
  if (tile_size > 0) go.tile_size = tile_size;
  if (tile_threshold > 0) go.tile_threshold = tile_threshold;
  go.workers = ncpu;
  if (private_slots) go.slots.policy = SlotPolicy::private_slots;
  for (std::size_t i = 0; i < names.size(); ++i) {
    Input& in = inputs[i];
    in.name = names[i].substr(names[i].find_last_of('/') + 1);
    if (Status st = load(names[i], in.A); !st.ok()) {
      std::fprintf(stderr, "gpu_bench: %s\n", st.message.c_str());
      return 1;
    }
    in.solver = std::make_unique<Solver>();
    if (Status st = in.solver->analyse(in.A, ao, go); !st.ok()) {
      std::fprintf(stderr, "gpu_bench: %s\n", st.message.c_str());
      return 1;
    }
    const FrontPlan& P = in.solver->plan();
    for (idx_t s = 0; s < P.nsuper; ++s) in.max_front = std::max(in.max_front, P.front_order(s));
    in.flops = in.solver->symbolic().flops_exact;
    in.graph = graph_stats(in.solver->graph());
    std::fprintf(stderr, "gpu_bench: %s: %lld fronts, %.4g flops, %lld tasks:", in.name.c_str(),
                 static_cast<long long>(P.nsuper), in.flops, static_cast<long long>(in.graph.tasks));
    for (int k = 0; k < kTaskKinds; ++k)
      if (in.graph.by_kind[k])
        std::fprintf(stderr, " %s %lld", task_kind_name(static_cast<TaskKind>(k)), static_cast<long long>(in.graph.by_kind[k]));
    std::fprintf(stderr, "\n");
  }
  int cuda_workers = 0;  // all the GPUs' CUDA workers (streams)
  {  // starfront, ncuda GPUs + ncpu-ncuda CPU workers
    std::unique_ptr<StarpuRuntime> rt;
    RuntimeOptions ro{ncpu - ncuda, ncuda, sched};
    ro.tiles_on_cuda_only = cuda_only;
    ro.fronts_on_cuda_only = fronts_only;
    if (Status st = StarpuRuntime::start(ro, rt); !st.ok()) {
      std::fprintf(stderr, "gpu_bench: %s\n", st.message.c_str());
      return 1;
    }
    cuda_workers = rt->cuda_workers();
    sched = rt->scheduler();  // "auto" resolved
    for (Input& in : inputs) {
      const long long before = gpu_tile_tasks();
      std::array<long long, kTaskKinds> kinds0{};
      for (int k = 0; k < kTaskKinds; ++k) kinds0[k] = cuda_task_executions(static_cast<TaskKind>(k));
      in.t_gpu = time_starpu(in, *in.solver, repeat, in.berr_gpu, fo);
      in.gpu_tasks = (gpu_tile_tasks() - before) / (repeat + 1);
      for (int k = 0; k < kTaskKinds; ++k)
        in.on_gpu[k] = (cuda_task_executions(static_cast<TaskKind>(k)) - kinds0[k]) / (repeat + 1);
      std::fprintf(stderr, "gpu_bench: %s GPU %.4f s\n", in.name.c_str(), in.t_gpu);
    }
  }
  if (cpu) {  // starfront, ncpu CPU workers
    std::unique_ptr<StarpuRuntime> rt;
    if (Status st = StarpuRuntime::start(RuntimeOptions{ncpu, 0, "lws"}, rt); !st.ok()) {
      std::fprintf(stderr, "gpu_bench: %s\n", st.message.c_str());
      return 1;
    }
    for (Input& in : inputs) {
      // The CPU workers run the graph made for them (GraphOptions' defaults),
      // not the GPU graph: its large fused subtrees are one CPU task each.
      Solver cpu_solver;
      Solver* cs = in.solver.get();
      std::vector<double> l_gpu;  // the GPU run's factor, when the CPU run overwrites it
      if (gpu_graph) {
        if (Status st = cpu_solver.analyse(in.A, ao, cpu_go); !st.ok()) {
          std::fprintf(stderr, "gpu_bench: %s\n", st.message.c_str());
          return 1;
        }
        cs = &cpu_solver;
      } else if (in.t_gpu > 0) {
        l_gpu = in.solver->factor().Lx;
      }
      in.t_cpu = time_starpu(in, *cs, repeat, in.berr_cpu, fo);
      std::fprintf(stderr, "gpu_bench: %s CPU %.4f s\n", in.name.c_str(), in.t_cpu);
      // Both runs factorised the same values; the CPU graph's analysis was
      // made separately, so the factors compare only when it found the same
      // permutation and the same supernodes.
      if (in.t_gpu > 0 && in.t_cpu > 0) {
        const SymbolicFactor &sg = in.solver->symbolic(), &sc = cs->symbolic();
        if (sg.perm == sc.perm && sg.super_start == sc.super_start)
          in.l_diff = factor_rel_diff(gpu_graph ? in.solver->factor().Lx : l_gpu, cs->factor().Lx);
        else
          std::fprintf(stderr, "gpu_bench: %s: the CPU run's analysis differs from the GPU run's: factors not compared\n",
                       in.name.c_str());
      }
    }
  }
  for (Input& in : inputs) {
    if (cholmod) {  // one timed run after the warm-up (CHOLMOD is the slowest here), per thread count
      const std::string label = "gpu_bench: " + in.name;
      const CholmodRun c =
          best_cholmod(in.A, &in.solver->symbolic().perm, 1, cholmod_threads, in.cholmod_threads, label.c_str());
      in.t_cholmod = c.seconds;
      in.berr_cholmod = c.berr;
    }
    in.t_dense = dense_potrf_seconds(static_cast<int>(in.max_front), repeat);
    if (sp) in.t_sp = cusolversp_seconds(in.A, in.solver->symbolic().perm, repeat);
    std::fprintf(stderr, "gpu_bench: %s baselines done\n", in.name.c_str());
  }
  auto tf = [](double flops, double s) { return s > 0 ? flops / s * 1e-12 : 0.0; };
  std::string thread_list;
  for (int th : cholmod_threads) thread_list += (thread_list.empty() ? "" : ",") + std::to_string(th);
  const char* pin = std::getenv("STARFRONT_PIN_FACTOR");
  std::printf("\ngpu_bench: starfront GPU: %d GPU(s), %d CUDA worker(s) (streams) + %d CPU workers (%s%s%s%s); CPU: %d CPU workers (lws, default graph); CHOLMOD: the best of %s OpenBLAS threads; %s graph, tiles %lld above %lld; median of %d after a warm-up\n\n",
              ncuda, cuda_workers, ncpu - ncuda, sched.c_str(),
              cuda_only || !scheduler_uses_models(sched) ? ", tiles on the GPU only" : "",
              fronts_only ? ", subtrees and fronts on the GPU only" : "",
              pin && std::string(pin) == "0" ? ", factor not page-locked" : "", ncpu,
              thread_list.c_str(), gpu_graph ? "GPU" : "default",
              static_cast<long long>(go.tile_size), static_cast<long long>(go.tile_threshold), repeat);
  std::printf("| matrix | n | flops | max front | GPU s | TFLOP/s | GPU tile tasks | CPU s | TFLOP/s | CPU/GPU | CHOLMOD s (threads) | CHOLMOD/GPU | dense POTRF(max front) s | TFLOP/s | csrchol s | csrchol/GPU | berr GPU | berr CPU | berr CHOLMOD | L GPU vs CPU |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  for (const Input& in : inputs) {
    const double mf = static_cast<double>(in.max_front);
    std::printf("| %s | %lld | %.3g | %lld | %.4f | %.2f | %lld | %.4f | %.2f | %.2f | %.4f (%d) | %.2f | %.5f | %.2f | %.4f | %.2f | %.1e | %.1e | %.1e | %s |\n",
                in.name.c_str(), static_cast<long long>(in.A.n), in.flops, static_cast<long long>(in.max_front),
                in.t_gpu, tf(in.flops, in.t_gpu), in.gpu_tasks, in.t_cpu, tf(in.flops, in.t_cpu),
                in.t_cpu / in.t_gpu, in.t_cholmod, in.cholmod_threads, in.t_cholmod / in.t_gpu, in.t_dense,
                tf(mf * mf * mf / 3.0, in.t_dense), in.t_sp, in.t_sp / in.t_gpu, in.berr_gpu, in.berr_cpu,
                in.berr_cholmod, l_diff_text(in.l_diff).c_str());
  }
  std::printf("\nTasks per kind: in the graph / run by CUDA workers per factorisation\n\n| matrix | tasks |");
  for (int k = 0; k < kTaskKinds; ++k) std::printf(" %s |", task_kind_name(static_cast<TaskKind>(k)));
  std::printf("\n|---|---|");
  for (int k = 0; k < kTaskKinds; ++k) std::printf("---|");
  std::printf("\n");
  for (const Input& in : inputs) {
    long long on = 0;
    for (long long x : in.on_gpu) on += x;
    std::printf("| %s | %lld / %lld |", in.name.c_str(), static_cast<long long>(in.graph.tasks), on);
    for (int k = 0; k < kTaskKinds; ++k)
      std::printf(" %lld / %lld |", static_cast<long long>(in.graph.by_kind[k]), in.on_gpu[k]);
    std::printf("\n");
  }
  return 0;
}
