// The CUDA codelets (potrf/trsm/syrk/gemm tiles and the assemble /
// extend_add assembly of tiled fronts on a GPU through StarPU):
// the GPU factorisation gives the sequential executor's solution, the same
// not-positive-definite error as the CPU, and tile tasks actually ran on the
// GPU. Skipped without a CUDA device or without the CUDA codelets (unless
// STARFRONT_REQUIRE_GPU=1, which makes that a failure).
#include <gtest/gtest.h>
#include <hwloc.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "api/solver.hpp"
#include "common/cuda_test_util.hpp"
#include "common/random_matrices.hpp"
#include "runtime/starpu/gpu_assembly_cache.hpp"
#include "runtime/starpu/runtime.hpp"
#include "runtime/starpu/task_codelets.hpp"
#include "solve/solve.hpp"
#include "sparse/generators.hpp"

namespace starfront {
namespace {

using testing::random_vector;
using testing::rel_diff;

using testing::gpu_required;

/// Starts StarPU with 2 CPU workers and one CUDA worker (tile tasks on the
/// GPU only when cuda_only); skips the test when that is impossible here.
#define START_GPU_RUNTIME(rt, sched, cuda_only)                                       \
  do {                                                                                \
    if (!cuda_codelets_built()) {                                                     \
      if (gpu_required()) FAIL() << "CUDA codelets not built";                        \
      GTEST_SKIP() << "no CUDA device (CUDA codelets not built)";                     \
    }                                                                                 \
    RuntimeOptions ro_{2, 1, sched};                                                  \
    ro_.tiles_on_cuda_only = cuda_only;                                               \
    const Status st_ = StarpuRuntime::start(ro_, rt);                                 \
    if (!st_.ok()) {                                                                  \
      if (gpu_required()) FAIL() << st_.message;                                      \
      GTEST_SKIP() << "no CUDA device (" << st_.message << ")";                       \
    }                                                                                 \
  } while (0)

std::vector<double> solve_with(Solver& solver, const CscMatrix& A, const std::vector<double>& b,
                               Executor exec) {
  Status st = solver.factorize(A, FactorOptions{}, exec);
  EXPECT_TRUE(st.ok()) << st.message;
  std::vector<double> x = b;
  st = solver.solve(x.data(), 1, std::max<idx_t>(1, A.n));
  EXPECT_TRUE(st.ok()) << st.message;
  return x;
}

long long gpu_tile_tasks() {
  long long n = 0;
  for (TaskKind k : {TaskKind::potrf, TaskKind::trsm, TaskKind::syrk, TaskKind::gemm})
    n += cuda_task_executions(k);
  return n;
}

struct Case {
  std::string name;
  idx_t N;
  GraphOptions go;
};

std::vector<Case> cases() {
  std::vector<Case> c(2);
  c[0].name = "laplace3d 20^3 27-point, tiles of 32 above 64";
  c[0].N = 20;
  c[0].go.tile_threshold = 64;
  c[0].go.tile_size = 32;
  c[1].name = "laplace3d 32^3 27-point, default tiles";
  c[1].N = 32;
  for (Case& x : c) x.go.workers = 3;
  return c;
}

/// GPU + 2 CPU workers under dmda, eager, and dmda with every tile task on
/// the GPU: the solution equals the sequential one to 1e-12 relative,
/// backward error <= 1e-14, and the GPU ran tile tasks (potrf among them on
/// the large graph; all of them when the tiles are on the GPU only).
TEST(CudaFactorize, TiledGraphsMatchSequential) {
  std::unique_ptr<StarpuRuntime> rt;
  for (const char* mode : {"dmda", "eager", "dmda-gpu-only"}) {
    const std::string m = mode;
    const bool cuda_only = m == "dmda-gpu-only";
    const char* sched = cuda_only ? "dmda" : mode;
    rt.reset();
    START_GPU_RUNTIME(rt, sched, cuda_only);
    ASSERT_EQ(rt->gpus(), 1);
    for (const Case& c : cases()) {
      CscMatrix A;
      ASSERT_TRUE(laplace3d(c.N, 27, A).ok());
      Solver solver;
      ASSERT_TRUE(solver.analyse(A, AnalysisOptions{}, c.go).ok());
      ASSERT_GT(graph_stats(solver.graph()).tiled_fronts, 0) << c.name;
      const std::vector<double> b = random_vector(A.n, 5);
      const std::vector<double> ref = solve_with(solver, A, b, Executor::sequential);
      const long long before = gpu_tile_tasks();
      const long long potrf_before = cuda_task_executions(TaskKind::potrf);
      for (int rep = 0; rep < 2; ++rep) {
        const std::vector<double> x = solve_with(solver, A, b, Executor::starpu);
        EXPECT_LE(rel_diff(x, ref), 1e-12) << c.name << " " << sched << " run " << rep;
        EXPECT_LE(backward_error(A, x.data(), b.data()), 1e-14) << c.name << " " << sched;
      }
      const long long ran = gpu_tile_tasks() - before;
      std::printf("[ %s, %s: %lld tile tasks on the GPU (%lld potrf) of %lld tasks x 2 ]\n", c.name.c_str(),
                  mode, ran, cuda_task_executions(TaskKind::potrf) - potrf_before,
                  static_cast<long long>(solver.graph().tasks.size()));
      if (cuda_only) {
        const GraphStats gs = graph_stats(solver.graph());
        long long tiles = 0;
        for (TaskKind k : {TaskKind::potrf, TaskKind::trsm, TaskKind::syrk, TaskKind::gemm})
          tiles += gs.by_kind[static_cast<int>(k)];
        EXPECT_EQ(ran, 2 * tiles) << c.name;
      }
      if (c.N == 32 || m == "eager") {
        EXPECT_GT(ran, 0) << c.name << " " << sched;
        if (c.N == 32) {
          EXPECT_GT(cuda_task_executions(TaskKind::potrf) - potrf_before, 0) << c.name << " " << sched;
        }
      }
    }
  }
}

/// A negative diagonal entry at the column eliminated last (in the root
/// front, tiled), then a tiny positive pivot there that only the relative
/// pivot test refuses: the GPU run reports the same column and pivot as the
/// sequential (CPU) executor, under dmda and with every tile task on the GPU
/// (then the failing POTRF is a GPU one: its host recomputation ran).
TEST(CudaFactorize, NotPositiveDefiniteSameColumnAsCpu) {
  for (bool cuda_only : {false, true}) {
    std::unique_ptr<StarpuRuntime> rt;
    START_GPU_RUNTIME(rt, "dmda", cuda_only);
    for (const Case& c : cases()) {
      CscMatrix A;
      ASSERT_TRUE(laplace3d(c.N, 27, A).ok());
      Solver solver;
      ASSERT_TRUE(solver.analyse(A, AnalysisOptions{}, c.go).ok());
      const idx_t bad = solver.symbolic().perm[A.n - 1];  // original index of the last pivot
      CscMatrix B = A;
      for (idx_t p = B.colptr[bad]; p < B.colptr[bad + 1]; ++p)
        if (B.rowind[p] == bad) B.values[p] = -1.0;
      const Status cpu = solver.factorize(B, FactorOptions{}, Executor::sequential);
      ASSERT_EQ(cpu.code, StatusCode::not_positive_definite);
      ASSERT_EQ(cpu.column, bad);
      const long long fallbacks = cuda_potrf_fallbacks();
      const Status gpu = solver.factorize(B, FactorOptions{}, Executor::starpu);
      EXPECT_EQ(gpu.code, StatusCode::not_positive_definite) << gpu.message;
      EXPECT_EQ(gpu.column, cpu.column) << c.name;
      EXPECT_NEAR(gpu.pivot, cpu.pivot, 1e-10 * std::abs(cpu.pivot)) << c.name;
      EXPECT_FALSE(solver.factorized());
      std::printf("[ %s%s: %s; GPU potrf fallbacks %lld ]\n", c.name.c_str(),
                  cuda_only ? " (tiles on the GPU only)" : "", gpu.message.c_str(),
                  cuda_potrf_fallbacks() - fallbacks);
      if (cuda_only) {
        EXPECT_GE(cuda_potrf_fallbacks() - fallbacks, 1) << c.name;
      }
      // A tiny positive pivot refused by the relative test only (cuSOLVER's
      // info is 0): a_jj = (a_jj - pivot) + 1e-6 leaves a pivot near 1e-6.
      const double schur = -1.0 - cpu.pivot;  // what the elimination subtracts from a_jj
      for (idx_t p = B.colptr[bad]; p < B.colptr[bad + 1]; ++p)
        if (B.rowind[p] == bad) B.values[p] = schur + 1e-6;
      FactorOptions fo;
      fo.pivot_tol = 1e-3;
      const Status cpu2 = solver.factorize(B, fo, Executor::sequential);
      ASSERT_EQ(cpu2.code, StatusCode::not_positive_definite) << cpu2.message;
      ASSERT_EQ(cpu2.column, bad) << cpu2.message;
      ASSERT_GT(cpu2.pivot, 0.0);
      const long long fallbacks2 = cuda_potrf_fallbacks();
      const Status gpu2 = solver.factorize(B, fo, Executor::starpu);
      EXPECT_EQ(gpu2.code, StatusCode::not_positive_definite) << gpu2.message;
      EXPECT_EQ(gpu2.column, cpu2.column) << c.name << ": " << gpu2.message;
      EXPECT_NEAR(gpu2.pivot, cpu2.pivot, 1e-11) << c.name;
      if (cuda_only) {
        EXPECT_GE(cuda_potrf_fallbacks() - fallbacks2, 1) << c.name;
      }
      // The same solver factorises the SPD matrix afterwards.
      const std::vector<double> b = random_vector(A.n, 9);
      const std::vector<double> x = solve_with(solver, A, b, Executor::starpu);
      EXPECT_LE(backward_error(A, x.data(), b.data()), 1e-14) << c.name;
    }
  }
}

/// Assembly of tiled fronts on the GPU (assemble and extend_add kernels):
/// with every task of tiled fronts on the GPU, small tiles (16 above 32), a
/// 3D Laplacian and a random SPD matrix give the sequential solution to
/// 1e-12; every assemble and extend_add task ran on the GPU; a second
/// factorisation with new values (2A + I) matches the sequential one for
/// those values and reuses the uploaded index (no new build), while a new
/// analysis builds a new one.
TEST(CudaFactorize, AssemblyOnGpuMatchesSequential) {
  std::unique_ptr<StarpuRuntime> rt;
  START_GPU_RUNTIME(rt, "dmda", true);
  std::vector<std::pair<std::string, CscMatrix>> ms;
  CscMatrix L;
  ASSERT_TRUE(laplace3d(14, 27, L).ok());
  ms.emplace_back("laplace3d 14^3 27-point", L);
  ms.emplace_back("random SPD n=800", testing::random_spd(800, 0.01, 11));
  GraphOptions go;
  go.tile_threshold = 32;
  go.tile_size = 16;
  go.workers = 3;
  for (const auto& [name, A] : ms) {
    Solver solver;
    ASSERT_TRUE(solver.analyse(A, AnalysisOptions{}, go).ok()) << name;
    const GraphStats gs = graph_stats(solver.graph());
    ASSERT_GT(gs.tiled_fronts, 1) << name;
    const long long n_asm = gs.by_kind[static_cast<int>(TaskKind::assemble)];
    const long long n_ea = gs.by_kind[static_cast<int>(TaskKind::extend_add)];
    ASSERT_GT(n_ea, 0) << name;
    CscMatrix B = A;  // refactorisation values: 2A + I
    for (idx_t j = 0; j < B.n; ++j)
      for (idx_t p = B.colptr[j]; p < B.colptr[j + 1]; ++p)
        B.values[p] = 2.0 * B.values[p] + (B.rowind[p] == j ? 1.0 : 0.0);
    const std::vector<double> b = random_vector(A.n, 3);
    const long long builds0 = gpu_assembly_index_builds();
    for (const CscMatrix* M : {static_cast<const CscMatrix*>(&A), static_cast<const CscMatrix*>(&B)}) {
      const std::vector<double> ref = solve_with(solver, *M, b, Executor::sequential);
      const long long asm0 = cuda_task_executions(TaskKind::assemble);
      const long long ea0 = cuda_task_executions(TaskKind::extend_add);
      const std::vector<double> x = solve_with(solver, *M, b, Executor::starpu);
      const char* which = M == &A ? "A" : "2A+I";
      EXPECT_LE(rel_diff(x, ref), 1e-12) << name << " " << which;
      EXPECT_LE(backward_error(*M, x.data(), b.data()), 1e-14) << name << " " << which;
      EXPECT_EQ(cuda_task_executions(TaskKind::assemble) - asm0, n_asm) << name << " " << which;
      EXPECT_EQ(cuda_task_executions(TaskKind::extend_add) - ea0, n_ea) << name << " " << which;
      std::printf("[ %s, %s: %lld assemble + %lld extend_add tasks on the GPU ]\n", name.c_str(), which,
                  cuda_task_executions(TaskKind::assemble) - asm0,
                  cuda_task_executions(TaskKind::extend_add) - ea0);
    }
    EXPECT_EQ(gpu_assembly_index_builds() - builds0, 1) << name << ": the index is built once per analysis";
  }
}

/// Bad runtime options: tiles on the GPU only without a CUDA worker.
TEST(CudaFactorize, TilesOnCudaOnlyNeedsACudaWorker) {
  RuntimeOptions ro{1, 0, "dmda"};
  ro.tiles_on_cuda_only = true;
  std::unique_ptr<StarpuRuntime> rt;
  const Status st = StarpuRuntime::start(ro, rt);
  EXPECT_EQ(st.code, StatusCode::runtime_error);
  EXPECT_FALSE(rt);
}

/// Default worker counts with a CUDA worker (RuntimeOptions::ncpu = -1):
/// one core is left to the application thread when at least two CPU
/// workers remain (the cores of the process's CPU binding, counted by
/// hwloc as StarPU counts them); an explicit count is taken as given.
TEST(CudaFactorize, DefaultWorkersLeaveACoreToTheApplication) {
  for (const char* v : {"STARPU_NCPU", "STARPU_RESERVE_NCPU", "STARPU_MAIN_THREAD_BIND"})
    if (std::getenv(v) && *std::getenv(v)) GTEST_SKIP() << v << " is set: StarPU's count is the environment's";
  // The cores this process may run on, as StarPU counts them.
  hwloc_topology_t topo;
  ASSERT_EQ(hwloc_topology_init(&topo), 0);
  ASSERT_EQ(hwloc_topology_load(topo), 0);
  hwloc_bitmap_t set = hwloc_bitmap_alloc();
  ASSERT_EQ(hwloc_get_cpubind(topo, set, HWLOC_CPUBIND_PROCESS), 0);
  int cores = 0;
  for (hwloc_obj_t c = nullptr; (c = hwloc_get_next_obj_by_type(topo, HWLOC_OBJ_CORE, c));)
    cores += c->cpuset && hwloc_bitmap_intersects(c->cpuset, set) ? 1 : 0;
  hwloc_bitmap_free(set);
  hwloc_topology_destroy(topo);
  std::unique_ptr<StarpuRuntime> rt;
  const Status st = StarpuRuntime::start(RuntimeOptions{-1, 1, "dmda"}, rt);
  if (!st.ok()) {
    if (testing::gpu_required()) FAIL() << st.message;
    GTEST_SKIP() << "no CUDA device (" << st.message << ")";
  }
  EXPECT_EQ(rt->gpus(), 1);
  if (cores - 1 >= 3) {
    EXPECT_EQ(rt->cpu_workers(), cores - 2) << cores << " cores";
  } else {
    EXPECT_EQ(rt->cpu_workers(), std::max(cores - 1, 0)) << cores << " cores";
  }
  rt.reset();
  if (cores >= 3) {
    ASSERT_TRUE(StarpuRuntime::start(RuntimeOptions{cores - 1, 1, "dmda"}, rt).ok());
    EXPECT_EQ(rt->cpu_workers(), cores - 1);
  }
}

}  // namespace
}  // namespace starfront
