// The CUDA codelets (potrf/trsm/syrk/gemm tiles on a GPU through StarPU):
// the GPU factorisation gives the sequential executor's solution, the same
// not-positive-definite error as the CPU, and tile tasks actually ran on the
// GPU. Skipped without a CUDA device or without the CUDA codelets (unless
// STARFRONT_REQUIRE_GPU=1, which makes that a failure).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include "api/solver.hpp"
#include "common/random_matrices.hpp"
#include "runtime/starpu/runtime.hpp"
#include "runtime/starpu/task_codelets.hpp"
#include "solve/solve.hpp"
#include "sparse/generators.hpp"

namespace starfront {
namespace {

using testing::random_vector;
using testing::rel_diff;

bool gpu_required() {
  const char* e = std::getenv("STARFRONT_REQUIRE_GPU");
  return e && std::string(e) == "1";
}

/// Starts StarPU with 2 CPU workers and one CUDA worker; skips the test when
/// that is impossible here.
#define START_GPU_RUNTIME(rt, sched)                                                  \
  do {                                                                                \
    if (!cuda_codelets_built()) {                                                     \
      if (gpu_required()) FAIL() << "CUDA codelets not built";                        \
      GTEST_SKIP() << "no CUDA device (CUDA codelets not built)";                     \
    }                                                                                 \
    const Status st_ = StarpuRuntime::start(RuntimeOptions{2, 1, sched}, rt);         \
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

/// GPU + 2 CPU workers under dmda and eager: the solution equals the
/// sequential one to 1e-12 relative, backward error <= 1e-14, and the GPU
/// ran tile tasks (potrf among them on the large graph).
TEST(CudaFactorize, TiledGraphsMatchSequential) {
  std::unique_ptr<StarpuRuntime> rt;
  for (const char* sched : {"dmda", "eager"}) {
    rt.reset();
    START_GPU_RUNTIME(rt, sched);
    ASSERT_EQ(rt->cuda_workers(), 1);
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
                  sched, ran, cuda_task_executions(TaskKind::potrf) - potrf_before,
                  static_cast<long long>(solver.graph().tasks.size()));
      if (c.N == 32 || std::string(sched) == "eager") {
        EXPECT_GT(ran, 0) << c.name << " " << sched;
        if (c.N == 32) {
          EXPECT_GT(cuda_task_executions(TaskKind::potrf) - potrf_before, 0) << c.name << " " << sched;
        }
      }
    }
  }
}

/// A negative diagonal entry at the column eliminated last (in the root
/// front, tiled): the GPU run reports the same column and pivot as the
/// sequential (CPU) executor.
TEST(CudaFactorize, NotPositiveDefiniteSameColumnAsCpu) {
  std::unique_ptr<StarpuRuntime> rt;
  START_GPU_RUNTIME(rt, "dmda");
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
    std::printf("[ %s: %s; GPU potrf fallbacks %lld ]\n", c.name.c_str(), gpu.message.c_str(),
                cuda_potrf_fallbacks() - fallbacks);
    // The same solver factorises the SPD matrix afterwards.
    const std::vector<double> b = random_vector(A.n, 9);
    const std::vector<double> x = solve_with(solver, A, b, Executor::starpu);
    EXPECT_LE(backward_error(A, x.data(), b.data()), 1e-14) << c.name;
  }
}

}  // namespace
}  // namespace starfront
