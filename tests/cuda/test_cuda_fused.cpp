// The fused GPU subtree kernel (issue 6) through StarPU, with every subtree
// task on the GPU: the factor equals the sequential (CPU) executor's to
// 1e-13 on seeded random SPD matrices with many small fronts and on every
// ../shared/data/spd matrix; a not-positive-definite input gives the CPU's
// column and pivot; 100 refactorisations with new values keep GPU memory
// flat and reuse the uploaded index. Skipped without a CUDA device (unless
// STARFRONT_REQUIRE_GPU=1, which makes that a failure).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

#ifdef STARFRONT_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

#include "analysis/symbolic.hpp"
#include "api/solver.hpp"
#include "common/c_matrix_view.hpp"
#include "common/cuda_test_util.hpp"
#include "common/graph_test_util.hpp"
#include "common/random_matrices.hpp"
#include "io/matrix_market.hpp"
#include "runtime/starpu/gpu_assembly_cache.hpp"
#include "runtime/starpu/runtime.hpp"
#include "runtime/starpu/starpu_executor.hpp"
#include "runtime/starpu/task_codelets.hpp"
#include "solve/solve.hpp"
#include "sparse/generators.hpp"
#include "starfront/starfront.h"

namespace starfront {
namespace {

using testing::cpu_spread;
using testing::frobenius_rel;
using testing::random_banded_spd;

/// The test matrices' folder: $STARFRONT_DATA_DIR when set (the device
/// machine's bundle), else the build's ../shared/data.
std::filesystem::path data_dir() {
  const char* e = std::getenv("STARFRONT_DATA_DIR");
  return e && *e ? std::filesystem::path(e) : std::filesystem::path(STARFRONT_DATA_DIR);
}

using testing::gpu_required;

struct NamedMatrix {
  std::string name;
  CscMatrix A;
};

std::vector<NamedMatrix> all_matrices() {
  std::vector<NamedMatrix> ms;
  ms.push_back({"random banded SPD n=6000 band 6", random_banded_spd(6000, 6, 11)});
  ms.push_back({"random banded SPD n=4000 band 16", random_banded_spd(4000, 16, 12)});
  ms.push_back({"random SPD n=700 density 0.01", testing::random_spd(700, 0.01, 13)});
  // Wider fronts in the small-front launch (band 60: 274 fronts of order up
  // to 61 with up to 16 pivots, a chain 44 fronts tall; trailing updates of
  // every width modulo the register tile; one launch) and one dense front of
  // order 230 in the large-front launch (k = m, near the shared-memory
  // limit). The real matrices below cover the large launch's many fronts of
  // order 65..220.
  ms.push_back({"random banded SPD n=3000 band 60", random_banded_spd(3000, 60, 14)});
  ms.push_back({"random SPD n=230 density 0.3", testing::random_spd(230, 0.3, 15)});
  const std::filesystem::path dir = data_dir() / "spd";
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.path().extension() == ".mtx") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  EXPECT_GE(files.size(), 7u);
  for (const auto& f : files) {
    NamedMatrix m{f.filename().string(), {}};
    EXPECT_TRUE(read_matrix_market(f.string(), m.A).ok()) << f;
    ms.push_back(std::move(m));
  }
  return ms;
}

double max_rel_diff(const std::vector<double>& a, const std::vector<double>& b) {
  double d = 0, s = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    d = std::max(d, std::fabs(a[i] - b[i]));
    s = std::max(s, std::fabs(b[i]));
  }
  return s > 0 ? d / s : d;
}

/// B = a·A + shift·I on A's pattern (B's pattern must be A's): the new
/// values of the refactorisation tests.
void scale_shift(const CscMatrix& A, double a, double shift, CscMatrix& B) {
  for (idx_t j = 0; j < A.n; ++j)
    for (idx_t p = A.colptr[j]; p < A.colptr[j + 1]; ++p)
      B.values[p] = a * A.values[p] + (A.rowind[p] == j ? shift : 0.0);
}

long long subtree_tasks(const TaskGraph& G) { return graph_stats(G).by_kind[static_cast<int>(TaskKind::subtree)]; }

/// GPU graph (gpu_graph_options) and the default graph: the factor of the
/// StarPU run (subtrees on the GPU) equals the sequential executor's to 1e-13
/// norm-wise (‖ΔL‖_F/‖L‖_F; on an ill-conditioned matrix 10 times the CPU's
/// own spread between two of its graphs when that is larger, and printed),
/// every subtree task ran on the GPU (one or two kernel launches), a graph
/// that is a single subtree task ran it without buffers (copying the
/// caller's pageable values itself), backward error <= 1e-14.
TEST(CudaFused, FactorEqualsCpuOnRandomAndRealSpd) {
  std::unique_ptr<StarpuRuntime> rt;
  START_GPU_ONLY_RUNTIME(rt);
  for (const NamedMatrix& m : all_matrices()) {
    for (int variant = 0; variant < 4; ++variant) {
      // 0: GPU graph; 1: default graph; 2 (bcsstk13 only): fronts up to order
      // 1000 fused, so that the kernel's global-memory path runs (order > 239);
      // 3: GPU graph of the analysis for latency-bound trees (the Scotch
      // ordering with the shorter modelled critical path, the critical-path
      // amalgamation, fronts merged up to kGpuFusedFront).
      if (variant == 2 && m.name != "bcsstk13.mtx") continue;
      const std::string name =
          m.name + (variant == 0   ? " (GPU graph)"
                    : variant == 1 ? " (default graph)"
                    : variant == 2 ? " (fronts up to 1000 fused)"
                                   : " (GPU graph, critical-path analysis)");
      // Two solvers: the StarPU one's factor storage starts zeroed, never
      // holding the reference (a kernel that left L unwritten would pass).
      Solver solver, seq;
      const GraphOptions go = variant == 0 || variant == 3 ? gpu_graph_options(3, kGpuFusedFront)
                              : variant == 1             ? GraphOptions{}
                                                         : gpu_graph_options(3, 1000);
      AnalysisOptions ao;
      if (variant == 3) {
        ao.ordering_choice = OrderingChoice::critical_path;
        ao.relax_critical_path = true;
        ao.relax_max_front = kGpuFusedFront;
      }
      ASSERT_TRUE(solver.analyse(m.A, ao, go).ok()) << name;
      ASSERT_TRUE(seq.analyse(m.A, ao, go).ok()) << name;
      const long long nsub = subtree_tasks(solver.graph());
      ASSERT_TRUE(seq.factorize(m.A, FactorOptions{}, Executor::sequential).ok()) << name;
      const std::vector<double>& ref = seq.factor().Lx;
      const double spread = cpu_spread(m.A, go, ao), tol = std::max(1e-13, 10 * spread);
      const long long ran0 = cuda_task_executions(TaskKind::subtree), l0 = cuda_fused_kernel_launches();
      const long long mapped0 = mapped_panel_tasks(), direct0 = direct_subtree_tasks(),
                      ahead0 = cuda_fused_values_ahead_used(), inline0 = inline_subtree_tasks();
      const Status st = solver.factorize(m.A, FactorOptions{}, Executor::starpu);
      ASSERT_TRUE(st.ok()) << name << ": " << st.message;
      const double d = frobenius_rel(solver.factor().Lx, ref);
      EXPECT_LE(d, tol) << name << " (CPU spread " << spread << ")";
      EXPECT_EQ(cuda_task_executions(TaskKind::subtree) - ran0, nsub) << name;
      // The GPU graph's subtrees fit in shared memory: each writes L straight
      // into the page-locked host factor (unified addressing, host pointers
      // usable on the device: every Linux x86-64 CUDA device here), unless
      // the measurement knob turns that off.
      const char* knob = std::getenv("STARFRONT_FUSED_MAPPED_L");
      if ((variant == 0 || variant == 3) && !(knob && std::string(knob) == "0")) {
        EXPECT_EQ(mapped_panel_tasks() - mapped0, nsub) << name;
        // A graph that is one subtree task (its root without CB) runs it
        // without StarPU buffers (GraphTaskArgs::direct) unless
        // STARFRONT_FUSED_DIRECT=0. factorize() reads the caller's pageable
        // values: the task copies them itself, the executor does not
        // (RefactorizePinsItsValuesAndMatchesCpu checks that path). Such a
        // task runs on this thread without StarPU (run_subtree_inline)
        // unless STARFRONT_FUSED_INLINE=0.
        const char* dk = std::getenv("STARFRONT_FUSED_DIRECT");
        const char* ik = std::getenv("STARFRONT_FUSED_INLINE");
        const bool direct = solver.graph().tasks.size() == 1 && nsub == 1 && !(dk && std::string(dk) == "0");
        const bool inl = direct && !(ik && std::string(ik) == "0");
        EXPECT_EQ(direct_subtree_tasks() - direct0, direct ? 1 : 0) << name;
        EXPECT_EQ(inline_subtree_tasks() - inline0, inl ? 1 : 0) << name;
        EXPECT_EQ(cuda_fused_values_ahead_used() - ahead0, 0) << name;
      }
      const long long launches = cuda_fused_kernel_launches() - l0;
      EXPECT_GE(launches, nsub) << name;
      EXPECT_LE(launches, 2 * nsub) << name;
      std::vector<double> b = testing::random_vector(m.A.n, 5), x = b;
      ASSERT_TRUE(solver.solve(x.data(), 1, std::max<idx_t>(1, m.A.n)).ok()) << name;
      const double berr = backward_error(m.A, x.data(), b.data());
      std::printf("[ %s: %lld tasks, %lld subtree tasks, %lld launches, |dL|_F/|L|_F %.2e (CPU spread %.1e, max|dL|/max|L| %.1e), berr %.1e ]\n",
                  name.c_str(), static_cast<long long>(solver.graph().tasks.size()), nsub, launches, d, spread,
                  max_rel_diff(solver.factor().Lx, ref), berr);
      EXPECT_LE(berr, 1e-14) << name;
    }
  }
}

/// A fused subtree whose largest front exceeds the kernel's shared memory
/// (fused_subtree_shared_max_order: 239 on an H200, checked here) stays on the CPU
/// workers when there are any: bcsstk13 with subtrees cut only above order
/// 1000 (every subtree task holds a front of order > 239), 1 CPU + 1 CUDA
/// worker under `eager` (whichever worker is idle takes a ready task, so
/// without the rule the CUDA worker would take some of them), 10
/// factorisations: no subtree task runs on the GPU, and the factor equals
/// the sequential executor's. With CUDA-only fronts (START_GPU_ONLY_RUNTIME,
/// FactorEqualsCpuOnRandomAndRealSpd) the same tasks do run there.
TEST(CudaFused, SubtreesWithFrontsBeyondSharedMemoryStayOnCpuWorkers) {
  if (!cuda_codelets_built()) {
    if (gpu_required()) FAIL() << "CUDA codelets not built";
    GTEST_SKIP() << "no CUDA device (CUDA codelets not built)";
  }
  std::unique_ptr<StarpuRuntime> rt;
  const Status started = StarpuRuntime::start(RuntimeOptions{1, 1, "eager"}, rt);
  if (!started.ok()) {
    if (gpu_required()) FAIL() << started.message;
    GTEST_SKIP() << "no CUDA device (" << started.message << ")";
  }
  const int fit = fused_subtree_shared_max_order();
  EXPECT_GE(fit, 100);  // 48 KiB at least: order 109
  EXPECT_LE(fit, 2000);
  // With sm_90's 227 KiB a block, the kernel's static shared memory must
  // leave room for a packed front of order 239 (229,440 bytes): every
  // subtree of the GPU graph (fronts up to kGpuFusedFront = 232) then fits,
  // and a few bytes more of static shared memory in the kernel show here.
  int optin = 0;
  ASSERT_EQ(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, 0), cudaSuccess);
  std::printf("fused kernel: fronts up to order %d in shared memory (%d bytes a block)\n", fit, optin);
  if (optin >= 232448) {
    EXPECT_GE(fit, 239);
  }
  CscMatrix A;
  ASSERT_TRUE(read_matrix_market((data_dir() / "spd" / "bcsstk13.mtx").string(), A).ok());
  Solver solver;
  ASSERT_TRUE(solver.analyse(A, AnalysisOptions{}, gpu_graph_options(3, 1000)).ok());
  FusedSubtreeIndex X;
  ASSERT_TRUE(build_fused_subtree_index(solver.graph(), X).ok());
  long long nsub = 0, oversized = 0;
  for (std::size_t t = 0; t < solver.graph().tasks.size(); ++t)
    if (solver.graph().tasks[t].kind == TaskKind::subtree) {
      ++nsub;
      oversized += X.task[t].max_order > fit ? 1 : 0;
    }
  ASSERT_GT(nsub, 0);
  ASSERT_EQ(oversized, nsub) << "the test needs every subtree task to hold a front beyond " << fit;
  ASSERT_TRUE(solver.factorize(A, FactorOptions{}, Executor::sequential).ok());
  const std::vector<double> ref = solver.factor().Lx;
  const long long ran0 = cuda_task_executions(TaskKind::subtree);
  for (int rep = 0; rep < 10; ++rep) {
    const Status st = solver.factorize(A, FactorOptions{}, Executor::starpu);
    ASSERT_TRUE(st.ok()) << st.message;
    EXPECT_LE(frobenius_rel(solver.factor().Lx, ref), 1e-13) << rep;
  }
  EXPECT_EQ(cuda_task_executions(TaskKind::subtree) - ran0, 0);
  std::printf("[ bcsstk13, subtrees cut above 1000: %lld subtree tasks, largest order held in shared memory %d ]\n",
              nsub, fit);
}

/// The GPU graph of a 3D Laplacian 60^3 with every task on the GPU
/// (fronts_on_cuda_only): its 206 fused subtrees hold fronts up to order 600,
/// beyond the kernel's shared memory, so their panels and root CBs are
/// StarPU handles written on the GPU (not mapped host memory). Before the
/// fix of session 30 most such runs never returned: the contribution-block
/// slots were unregistered after the workers' pause, most likely waiting
/// for a StarPU request that only the paused CUDA worker could process (a
/// test that hangs: the device script's 100 s limit fails it). Five factorisations: each one
/// returns, subtree tasks ran on the GPU, the factors agree (1e-13) and the
/// backward error of a solve is <= 1e-14.
TEST(CudaFused, GpuOnlyLaplacianWithOversizedSubtreesFinishesEveryFactorisation) {
  std::unique_ptr<StarpuRuntime> rt;
  START_GPU_ONLY_RUNTIME(rt);
  CscMatrix A;
  ASSERT_TRUE(laplace3d(60, 7, A).ok());
  Solver solver;
  ASSERT_TRUE(solver.analyse(A, AnalysisOptions{}, gpu_graph_options(3)).ok());
  FusedSubtreeIndex X;
  ASSERT_TRUE(build_fused_subtree_index(solver.graph(), X).ok());
  const int fit = fused_subtree_shared_max_order();
  long long oversized = 0;
  for (std::size_t t = 0; t < solver.graph().tasks.size(); ++t)
    oversized += solver.graph().tasks[t].kind == TaskKind::subtree && X.task[t].max_order > fit ? 1 : 0;
  ASSERT_GT(oversized, 0) << "the test needs subtree tasks with fronts beyond " << fit;
  std::vector<double> first;
  for (int rep = 0; rep < 5; ++rep) {
    const long long ran0 = cuda_task_executions(TaskKind::subtree);
    const Status st = solver.factorize(A, FactorOptions{}, Executor::starpu);
    ASSERT_TRUE(st.ok()) << rep << ": " << st.message;
    EXPECT_EQ(cuda_task_executions(TaskKind::subtree) - ran0, subtree_tasks(solver.graph())) << rep;
    if (rep == 0) {
      first = solver.factor().Lx;
    } else {
      EXPECT_LE(frobenius_rel(solver.factor().Lx, first), 1e-13) << rep;
    }
  }
  std::vector<double> b = testing::random_vector(A.n, 31), x = b;
  ASSERT_TRUE(solver.solve(x.data(), 1, A.n).ok());
  const double berr = backward_error(A, x.data(), b.data());
  EXPECT_LE(berr, 1e-14);
  std::printf("[ lap3d 60^3 on the GPU only: %lld subtree tasks, %lld with fronts beyond %d, berr %.1e ]\n",
              subtree_tasks(solver.graph()), oversized, fit, berr);
}

/// A negative diagonal entry at the last pivot of a front inside a fused
/// subtree (several places), and a tiny positive pivot that only the
/// relative test refuses: the GPU run reports the sequential (CPU) run's
/// status code, column and pivot; the solver then factorises the SPD matrix.
TEST(CudaFused, NotPositiveDefiniteSameColumnAsCpu) {
  std::unique_ptr<StarpuRuntime> rt;
  START_GPU_ONLY_RUNTIME(rt);
  std::vector<NamedMatrix> ms;
  ms.push_back({"random banded SPD n=4000 band 8", random_banded_spd(4000, 8, 21)});
  {
    NamedMatrix m{"activsg2000_hykkt_10", {}};
    ASSERT_TRUE(read_matrix_market((data_dir() / "spd" / "activsg2000_hykkt_10.mtx").string(), m.A).ok());
    ms.push_back(std::move(m));
  }
  for (const NamedMatrix& m : ms) {
    Solver solver;
    ASSERT_TRUE(solver.analyse(m.A, AnalysisOptions{}, gpu_graph_options(3, kGpuFusedFront)).ok());
    const FrontPlan& P = solver.plan();
    int checked = 0;
    for (idx_t s = 0; s < P.nsuper && checked < 4; s += std::max<idx_t>(1, P.nsuper / 5)) {
      if (solver.graph().mode[s] != FrontMode::in_subtree) continue;
      const idx_t col = P.symbolic->super_start[s] + P.ncols(s) - 1;
      const idx_t orig = solver.symbolic().perm[col];
      CscMatrix B = m.A;
      for (idx_t p = B.colptr[orig]; p < B.colptr[orig + 1]; ++p)
        if (B.rowind[p] == orig) B.values[p] = -std::fabs(B.values[p]) - 1.0;
      const Status cpu = solver.factorize(B, FactorOptions{}, Executor::sequential);
      ASSERT_EQ(cpu.code, StatusCode::not_positive_definite) << m.name;
      const Status gpu = solver.factorize(B, FactorOptions{}, Executor::starpu);
      EXPECT_EQ(gpu.code, StatusCode::not_positive_definite) << m.name << ": " << gpu.message;
      EXPECT_EQ(gpu.column, cpu.column) << m.name;
      EXPECT_NEAR(gpu.pivot, cpu.pivot, 1e-10 * std::max(1.0, std::fabs(cpu.pivot))) << m.name;
      std::printf("[ %s: negative a_jj at original column %lld: CPU column %lld pivot %.6g, GPU column %lld pivot %.6g ]\n",
                  m.name.c_str(), static_cast<long long>(orig), static_cast<long long>(cpu.column), cpu.pivot,
                  static_cast<long long>(gpu.column), gpu.pivot);
      ++checked;
    }
    EXPECT_GE(checked, 2) << m.name;
    FactorOptions fo;
    fo.pivot_tol = 0.5;  // refuses some honest pivots: the relative test alone
    const Status cpu = solver.factorize(m.A, fo, Executor::sequential);
    const Status gpu = solver.factorize(m.A, fo, Executor::starpu);
    EXPECT_EQ(gpu.code, cpu.code) << m.name << ": " << gpu.message;
    EXPECT_EQ(gpu.column, cpu.column) << m.name;
    EXPECT_NEAR(gpu.pivot, cpu.pivot, 1e-10 * std::max(1.0, std::fabs(cpu.pivot))) << m.name;
    std::printf("[ %s, pivot_tol 0.5: CPU %s; GPU %s ]\n", m.name.c_str(), cpu.message.c_str(), gpu.message.c_str());
    const Status ok = solver.factorize(m.A, FactorOptions{}, Executor::starpu);
    EXPECT_TRUE(ok.ok()) << ok.message;
  }
}

/// 100 refactorisations of the power-grid matrix with new values (same
/// pattern): GPU memory (cudaMemGetInfo) is the same before and after
/// (within 1 MiB), the index is not rebuilt, every 10th factor equals the
/// CPU's.
TEST(CudaFused, RefactorisationKeepsGpuMemoryFlat) {
  std::unique_ptr<StarpuRuntime> rt;
  START_GPU_ONLY_RUNTIME(rt);
#ifdef STARFRONT_HAVE_CUDA
  CscMatrix A;
  ASSERT_TRUE(read_matrix_market((data_dir() / "spd" / "activsg2000_hykkt_10.mtx").string(), A).ok());
  Solver solver;
  ASSERT_TRUE(solver.analyse(A, AnalysisOptions{}, gpu_graph_options(3, kGpuFusedFront)).ok());
  ASSERT_TRUE(solver.factorize(A, FactorOptions{}, Executor::starpu).ok());  // warm-up
  const long long builds0 = gpu_assembly_index_builds();
  std::size_t free0 = 0, free1 = 0, total = 0;
  ASSERT_EQ(cudaMemGetInfo(&free0, &total), cudaSuccess);
  CscMatrix B = A;
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> u(0.5, 2.0);
  for (int rep = 0; rep < 100; ++rep) {
    const double a = u(rng), shift = u(rng);  // B = a·A + shift·I: SPD, new values
    scale_shift(A, a, shift, B);
    const Status st = solver.factorize(B, FactorOptions{}, Executor::starpu);
    ASSERT_TRUE(st.ok()) << "refactorisation " << rep << ": " << st.message;
    if (rep % 10 == 9) {  // against the CPU (tolerance as in FactorEqualsCpuOnRandomAndRealSpd)
      const std::vector<double> gpu = solver.factor().Lx;
      ASSERT_TRUE(solver.factorize(B, FactorOptions{}, Executor::sequential).ok());
      const std::vector<double> ref = solver.factor().Lx;
      const double spread = cpu_spread(B, gpu_graph_options(3, kGpuFusedFront));
      EXPECT_LE(frobenius_rel(gpu, ref), std::max(1e-13, 10 * spread)) << "refactorisation " << rep;
    }
  }
  ASSERT_EQ(cudaMemGetInfo(&free1, &total), cudaSuccess);
  const double delta = static_cast<double>(free0) - static_cast<double>(free1);
  std::printf("[ 100 refactorisations: GPU free memory %zu -> %zu bytes (%.0f bytes more in use) ]\n", free0, free1,
              delta);
  EXPECT_LE(std::fabs(delta), 1024.0 * 1024.0);
  EXPECT_EQ(gpu_assembly_index_builds(), builds0) << "the index is uploaded once per analysis";
#endif
}

/// Solver::refactorize on the GPU path page-locks its copy of A's values
/// (pin_for_gpus; starpu_executor.hpp) and keeps results equal to the CPU's
/// across the pin's life: refactorisations, a factorize() in between, a new
/// analysis of a larger matrix (the copy is reallocated: unlocked first, then
/// locked again), and a non-finite value refused. pin_for_gpus itself: the
/// range is registered with CUDA while the returned object lives, and not
/// after.
TEST(CudaFused, RefactorizePinsItsValuesAndMatchesCpu) {
  std::unique_ptr<StarpuRuntime> rt;
  START_GPU_ONLY_RUNTIME(rt);
#ifdef STARFRONT_HAVE_CUDA
  {
    std::vector<double> buf(1 << 16, 1.0);
    cudaPointerAttributes at{};
    {
      auto pin = pin_for_gpus(buf.data(), buf.size() * sizeof(double));
      ASSERT_NE(pin, nullptr);
      ASSERT_EQ(cudaPointerGetAttributes(&at, buf.data()), cudaSuccess);
      EXPECT_EQ(at.type, cudaMemoryTypeHost);
    }
    ASSERT_EQ(cudaPointerGetAttributes(&at, buf.data()), cudaSuccess);
    EXPECT_EQ(at.type, cudaMemoryTypeUnregistered);
    EXPECT_EQ(pin_for_gpus(nullptr, 8), nullptr);
  }
  Solver solver;
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> u(0.5, 2.0);
  auto check = [&](const CscMatrix& A0, const char* what) {
    const long long direct0 = direct_subtree_tasks(), ahead0 = cuda_fused_values_ahead_used(),
                    inline0 = inline_subtree_tasks();
    CscMatrix B = A0;
    for (int rep = 0; rep < 3; ++rep) {
      const double a = u(rng), shift = u(rng);
      scale_shift(A0, a, shift, B);
      const Status st = solver.refactorize(B.values.data(), FactorOptions{}, Executor::starpu);
      ASSERT_TRUE(st.ok()) << what << " " << rep << ": " << st.message;
      const std::vector<double> gpu = solver.factor().Lx;
      ASSERT_TRUE(solver.factorize(B, FactorOptions{}, Executor::sequential).ok());
      const double spread = cpu_spread(B, gpu_graph_options(3, kGpuFusedFront));
      EXPECT_LE(frobenius_rel(gpu, solver.factor().Lx), std::max(1e-13, 10 * spread)) << what << " " << rep;
      // and factorize() on the GPU with the same values gives the same
      // factor (to rounding: a task may run elsewhere in the other run),
      // after a refactorisation of 2B has put another factor in the
      // storage (so that a factor left unwritten cannot pass)
      std::vector<double> twice = B.values;
      for (double& v : twice) v *= 2.0;
      ASSERT_TRUE(solver.refactorize(twice.data(), FactorOptions{}, Executor::starpu).ok()) << what << " " << rep;
      EXPECT_GT(frobenius_rel(solver.factor().Lx, gpu), 0.1) << what << " " << rep;
      ASSERT_TRUE(solver.factorize(B, FactorOptions{}, Executor::starpu).ok());
      EXPECT_LE(frobenius_rel(solver.factor().Lx, gpu), std::max(1e-13, 10 * spread)) << what << " " << rep;
      // The same values written into the solver's buffer (page-locked, read
      // by the GPU without a copy into the kept matrix), after 2B again.
      ASSERT_TRUE(solver.refactorize(twice.data(), FactorOptions{}, Executor::starpu).ok()) << what << " " << rep;
      double* vb = solver.values_buffer();
      ASSERT_NE(vb, nullptr);
      std::copy(B.values.begin(), B.values.end(), vb);
      ASSERT_TRUE(solver.refactorize(vb, FactorOptions{}, Executor::starpu).ok()) << what << " " << rep;
      EXPECT_LE(frobenius_rel(solver.factor().Lx, gpu), std::max(1e-13, 10 * spread)) << what << " " << rep;
      // Both buffers are page-locked now: vb, the kept matrix the GPU
      // read, and the next one handed out.
      for (const double* q : {static_cast<const double*>(vb), static_cast<const double*>(solver.values_buffer())}) {
        cudaPointerAttributes va{};
        ASSERT_EQ(cudaPointerGetAttributes(&va, q), cudaSuccess);
        EXPECT_EQ(va.type, cudaMemoryTypeHost) << what << " " << rep;
      }
    }
    // A graph of one subtree task ran direct in each of the 5 StarPU
    // factorisations of a round: on this thread without StarPU (unless
    // STARFRONT_FUSED_INLINE=0), else submitted, the 4 refactorize() calls
    // (page-locked values) then on the executor's copy of the values
    // (unless STARFRONT_FUSED_VALUES_AHEAD=0): new values every time, and
    // after a new analysis, a new blob and larger buffers.
    const char* dk = std::getenv("STARFRONT_FUSED_DIRECT");
    const char* ak = std::getenv("STARFRONT_FUSED_VALUES_AHEAD");
    const char* ik = std::getenv("STARFRONT_FUSED_INLINE");
    const bool direct = solver.graph().tasks.size() == 1 && !(dk && std::string(dk) == "0");
    const bool inl = direct && !(ik && std::string(ik) == "0");
    EXPECT_EQ(direct_subtree_tasks() - direct0, direct ? 15 : 0) << what;
    EXPECT_EQ(inline_subtree_tasks() - inline0, inl ? 15 : 0) << what;
    EXPECT_EQ(cuda_fused_values_ahead_used() - ahead0,
              direct && !inl && !(ak && std::string(ak) == "0") ? 12 : 0)
        << what;
    B.values[B.values.size() / 2] = std::nan("");
    EXPECT_EQ(solver.refactorize(B.values.data(), FactorOptions{}, Executor::starpu).code,
              StatusCode::invalid_argument);
  };
  const CscMatrix small = random_banded_spd(800, 12, 41);
  ASSERT_TRUE(solver.analyse(small, AnalysisOptions{}, gpu_graph_options(3, kGpuFusedFront)).ok());
  check(small, "banded n=800");
  CscMatrix big;
  ASSERT_TRUE(read_matrix_market((data_dir() / "spd" / "activsg2000_hykkt_10.mtx").string(), big).ok());
  ASSERT_GT(big.nnz(), small.nnz());
  ASSERT_TRUE(solver.analyse(big, AnalysisOptions{}, gpu_graph_options(3, kGpuFusedFront)).ok());
  ASSERT_EQ(solver.graph().tasks.size(), 1u) << "activsg2000_hykkt_10 is one fused task";
  check(big, "activsg2000_hykkt_10");
#endif
}

/// ‖A‖∞ from the GPU (DeviceNormRequest): refactorisations whose graph is
/// one fused task run inline take it from the device (one result each, no
/// host pass: FactorPhases::overlapped 0), equal bit for bit to the host's
/// symmetric_norm_inf of the new values (a·A + shift·I, fresh seeded a and
/// shift, some values negated), and solve to a backward error <= 1e-14; a
/// NaN or an infinite value is refused as on the CPU (invalid_argument
/// naming the entry); a row whose finite values overflow its sum is not an
/// error and gives ‖A‖∞ = +inf as the host pass does. On a banded random
/// matrix, activsg2000_hykkt_10 (latency rule) and lap2d 100².
/// STARFRONT_DEVICE_NORM=0 or STARFRONT_FUSED_INLINE=0 (knobs): no device
/// result, the same values.
TEST(CudaFused, RefactorizeTakesTheNormFromTheGpu) {
  std::unique_ptr<StarpuRuntime> rt;
  START_GPU_ONLY_RUNTIME(rt);
  const char* dn = std::getenv("STARFRONT_DEVICE_NORM");
  const char* ik = std::getenv("STARFRONT_FUSED_INLINE");
  const bool on = !(dn && std::string(dn) == "0") && !(ik && std::string(ik) == "0");
  std::vector<std::pair<std::string, CscMatrix>> ms;
  ms.emplace_back("banded n=2000", random_banded_spd(2000, 10, 47));
  CscMatrix grid;
  ASSERT_TRUE(read_matrix_market((data_dir() / "spd" / "activsg2000_hykkt_10.mtx").string(), grid).ok());
  ms.emplace_back("activsg2000_hykkt_10", std::move(grid));
  CscMatrix lap;
  ASSERT_TRUE(laplace2d(100, lap).ok());
  ms.emplace_back("lap2d 100", std::move(lap));
  std::mt19937_64 rng(20261205);
  std::uniform_real_distribution<double> u(0.5, 2.0);
  for (const auto& [name, A] : ms) {
    SCOPED_TRACE(name);
    Solver solver;
    AnalysisOptions ao;
    ao.latency_rule_front = kGpuFusedFront;
    ASSERT_TRUE(solver.analyse(A, ao, gpu_graph_options(3, kGpuFusedFront)).ok());
    ASSERT_EQ(solver.graph().tasks.size(), 1u) << "one fused task";
    CscMatrix B = A;
    for (int rep = 0; rep < 3; ++rep) {
      const double a = u(rng), shift = u(rng);
      scale_shift(A, a, shift, B);
      const long long d0 = device_norm_results();
      // Rounds 0 and 2 copy the values in (checked while copied), round 1
      // writes them into the solver's buffer (checked after the kernel).
      const double* vals = B.values.data();
      if (rep == 1) {
        double* vb = solver.values_buffer();
        ASSERT_NE(vb, nullptr);
        std::copy(B.values.begin(), B.values.end(), vb);
        vals = vb;
      }
      const Status st = solver.refactorize(vals, FactorOptions{}, Executor::starpu);
      ASSERT_TRUE(st.ok()) << rep << ": " << st.message;
      EXPECT_EQ(device_norm_results() - d0, on ? 1 : 0) << rep;
      EXPECT_EQ(solver.matrix_norm_inf(), symmetric_norm_inf(B)) << rep;  // bit for bit
      if (on) {
        EXPECT_EQ(solver.stats().factor.phases.overlapped, 0.0) << rep;
      }
      const std::vector<double> b = testing::random_vector(B.n, 60 + rep);
      std::vector<double> x = b;
      ASSERT_TRUE(solver.solve(x.data(), 1, B.n).ok());
      EXPECT_LE(backward_error(B, x.data(), b.data()), 1e-14) << rep;
    }
    for (double bad : {std::nan(""), -std::numeric_limits<double>::infinity()})
      for (bool buffer : {false, true}) {
        CscMatrix C = B;
        const std::size_t at = C.values.size() / 3;
        C.values[at] = bad;
        const double* vals = C.values.data();
        if (buffer) {
          double* vb = solver.values_buffer();
          ASSERT_NE(vb, nullptr);
          std::copy(C.values.begin(), C.values.end(), vb);
          vals = vb;
        }
        const Status st = solver.refactorize(vals, FactorOptions{}, Executor::starpu);
        EXPECT_EQ(st.code, StatusCode::invalid_argument) << bad << (buffer ? " (buffer)" : "");
        EXPECT_NE(st.message.find("not finite"), std::string::npos) << st.message;
      }
    // Two finite values of one row whose sum overflows: the same outcome as
    // the sequential executor's (the host pass decides), ‖A‖∞ = +inf.
    CscMatrix O = B;
    const NormRowsIndex X = symmetric_norm_rows_index(O);
    idx_t row = -1;
    for (idx_t i = 0; i < O.n && row < 0; ++i)
      if (X.row_ptr[i + 1] > X.row_ptr[i]) row = i;
    ASSERT_GE(row, 0);
    O.values[X.pos[X.row_ptr[row]]] = std::numeric_limits<double>::max();
    O.values[O.colptr[row]] = std::numeric_limits<double>::max();
    double* vb = solver.values_buffer();
    ASSERT_NE(vb, nullptr);
    std::copy(O.values.begin(), O.values.end(), vb);
    const Status gpu = solver.refactorize(vb, FactorOptions{}, Executor::starpu);
    const double gpu_norm = gpu.ok() ? solver.matrix_norm_inf() : -1.0;
    const Status cpu = solver.refactorize(O.values.data(), FactorOptions{}, Executor::sequential);
    EXPECT_EQ(gpu.code, cpu.code) << gpu.message << " | " << cpu.message;
    if (gpu.ok()) {
      EXPECT_EQ(gpu_norm, std::numeric_limits<double>::infinity());
    }
  }
}

/// The C API's default analysis on the GPU graph (STARFRONT_AMALGAMATE_AUTO
/// with a CUDA worker) on activsg2000_hykkt_10: the latency rule takes the
/// critical-path analysis (starfront_analysis_used says so; the same
/// supernodes as analyse() with the rule and with the critical-path
/// options, fronts <= 232), the factorisation is one task, and each of
/// three refactorisations with new values (a·A + shift·I) solves to a
/// backward error <= 1e-14 without refinement failing; with
/// STARFRONT_AMALGAMATE_RELAXED the default analysis runs.
TEST(CudaFused, CApiDefaultTakesTheCriticalPathAnalysisOnAPowerGrid) {
  if (!cuda_codelets_built()) {
    if (gpu_required()) FAIL() << "CUDA codelets not built";
    GTEST_SKIP() << "no CUDA device (CUDA codelets not built)";
  }
  CscMatrix A;
  ASSERT_TRUE(read_matrix_market((data_dir() / "spd" / "activsg2000_hykkt_10.mtx").string(), A).ok());
  AnalysisOptions rule, path;
  rule.latency_rule_front = kGpuFusedFront;
  path.ordering_choice = OrderingChoice::critical_path;
  path.relax_critical_path = true;
  path.relax_max_front = kGpuFusedFront;
  SymbolicFactor sr, sp, sd;
  ASSERT_TRUE(analyse(A, rule, sr).ok());
  ASSERT_TRUE(analyse(A, path, sp).ok());
  ASSERT_TRUE(analyse(A, AnalysisOptions{}, sd).ok());
  ASSERT_TRUE(sr.latency_rule.critical_path_chosen);
  ASSERT_EQ(sr.nsuper, sp.nsuper);
  ASSERT_NE(sp.nsuper, sd.nsuper);  // the test would not tell them apart otherwise
  starfront_runtime_options ro;
  ASSERT_EQ(starfront_runtime_options_init(&ro), STARFRONT_OK);
  ro.ncpu = 2;
  ro.ncuda = 1;
  starfront_runtime* rt = nullptr;
  if (starfront_runtime_init(&ro, &rt) != STARFRONT_OK) {
    if (gpu_required()) FAIL() << "starfront_runtime_init with ncuda = 1 failed on a GPU machine";
    GTEST_SKIP() << "no CUDA device (starfront_runtime_init with ncuda = 1 failed)";
  }
  starfront_matrix M = testing::c_view(A);
  for (int amalgamate : {STARFRONT_AMALGAMATE_AUTO, STARFRONT_AMALGAMATE_RELAXED}) {
    SCOPED_TRACE(amalgamate == STARFRONT_AMALGAMATE_AUTO ? "AUTO (the default)" : "RELAXED");
    starfront_analysis_options ao;
    ASSERT_EQ(starfront_analysis_options_init(&ao), STARFRONT_OK);
    ao.amalgamate = amalgamate;
    starfront_factor* F = nullptr;
    ASSERT_EQ(starfront_analyse(rt, &M, &ao, &F), STARFRONT_OK) << starfront_last_error();
    starfront_amalgamation used = STARFRONT_AMALGAMATE_AUTO;
    ASSERT_EQ(starfront_analysis_used(F, nullptr, &used), STARFRONT_OK);
    const bool auto_ = amalgamate == STARFRONT_AMALGAMATE_AUTO;
    EXPECT_EQ(used, auto_ ? STARFRONT_AMALGAMATE_CRITICAL_PATH : STARFRONT_AMALGAMATE_RELAXED);
    starfront_stats st;
    ASSERT_EQ(starfront_get_stats(F, &st), STARFRONT_OK);
    EXPECT_EQ(st.supernodes, auto_ ? sp.nsuper : sd.nsuper);
    if (auto_) {
      EXPECT_LE(st.max_front, kGpuFusedFront);
    }
    ASSERT_EQ(starfront_factorize(F, &M, nullptr), STARFRONT_OK) << starfront_last_error();
    std::mt19937_64 rng(29);
    std::uniform_real_distribution<double> u(0.5, 2.0);
    for (int rep = 0; rep < 3; ++rep) {
      const double a = u(rng), shift = u(rng);
      CscMatrix B = A;
      scale_shift(A, a, shift, B);
      ASSERT_EQ(starfront_refactorize(F, B.values.data(), nullptr), STARFRONT_OK) << starfront_last_error();
      const std::vector<double> b = testing::random_vector(A.n, 31 + rep);
      std::vector<double> x = b;
      ASSERT_EQ(starfront_solve(F, 1, x.data(), A.n), STARFRONT_OK) << starfront_last_error();
      EXPECT_LE(backward_error(B, x.data(), b.data()), 1e-14) << rep;
    }
    ASSERT_EQ(starfront_get_stats(F, &st), STARFRONT_OK);
    if (auto_) {
      EXPECT_EQ(st.tasks, 1);
    }
    std::printf("[ %s: %lld supernodes, largest front %lld, %lld tasks ]\n",
                auto_ ? "AUTO" : "RELAXED", static_cast<long long>(st.supernodes),
                static_cast<long long>(st.max_front), static_cast<long long>(st.tasks));
    starfront_factor_free(F);
  }
  starfront_runtime_free(rt);
}

}  // namespace
}  // namespace starfront
