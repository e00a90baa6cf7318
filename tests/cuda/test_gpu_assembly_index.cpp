// The GPU assembly index (codelets/cuda/assembly_index.hpp), on the CPU: a
// host emulation of the GPU assemble / extend_add kernels, driven by the
// index and the same launch windows, gives bit for bit what the CPU kernels
// give, task by task over a whole factorisation of tiled graphs (small tiles,
// windows of 2 so that every chunking path runs); the fingerprint tells
// graphs apart; the StarPU executor attaches the index buffers and reuses
// the index across factorisations. Runs everywhere (no GPU needed).
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "api/solver.hpp"
#include "common/graph_test_util.hpp"
#include "common/random_matrices.hpp"
#include "cpu/task_kernels.hpp"
#include "cuda/assembly_index.hpp"
#include "runtime/starpu/gpu_assembly_cache.hpp"
#include "runtime/starpu/runtime.hpp"
#include "runtime/starpu/starpu_executor.hpp"
#include "solve/solve.hpp"
#include "sparse/generators.hpp"

namespace starfront {
namespace {

GraphOptions small_tiles() {
  GraphOptions go;
  go.tile_threshold = 32;
  go.tile_size = 16;
  go.workers = 2;
  return go;
}

/// Runs G's tasks in submission order on private buffers (every block with
/// offset < 0 gets its own), each assemble / extend_add both by the CPU
/// kernel and by the emulation (from the same inputs), and compares the
/// tiles they write. Returns the number of tasks compared.
idx_t compare_all_tasks(const TaskGraph& G, const CscMatrix& A, int window) {
  GpuAssemblyIndex X;
  EXPECT_TRUE(build_gpu_assembly_index(G, X).ok());
  EXPECT_FALSE(X.empty);
  testing::HostBlocks host(G);
  std::vector<double*>& base = host.base;
  FactorContext ctx;
  ctx.values = A.values.data();
  idx_t compared = 0;
  for (idx_t ti = 0; ti < static_cast<idx_t>(G.tasks.size()); ++ti) {
    const Task& t = G.tasks[ti];
    std::vector<double*> ptrs;
    std::vector<idx_t> ld;
    for (idx_t a = t.acc_begin; a < t.acc_end; ++a) {
      ptrs.push_back(base[static_cast<std::size_t>(G.accesses[a].block)]);
      ld.push_back(G.blocks[static_cast<std::size_t>(G.accesses[a].block)].ld);
    }
    if (t.kind != TaskKind::assemble && t.kind != TaskKind::extend_add) {
      run_task_cpu(G, ti, ptrs.data(), ctx);
      continue;
    }
    // The written accesses: assemble's first ntiles-J, extend_add's after the child's CB blocks.
    const idx_t n = t.acc_end - t.acc_begin;
    const idx_t w0 = t.kind == TaskKind::assemble ? 0 : G.cb_ptr[t.child + 1] - G.cb_ptr[t.child];
    const idx_t w1 = t.kind == TaskKind::assemble ? G.ntiles(t.front) - t.j : n;
    std::vector<std::vector<double>> before, cpu;
    auto snapshot = [&](std::vector<std::vector<double>>& out) {
      out.clear();
      for (idx_t a = w0; a < w1; ++a) {
        const Block& b = G.blocks[static_cast<std::size_t>(G.accesses[t.acc_begin + a].block)];
        out.emplace_back(ptrs[a], ptrs[a] + (b.cols - 1) * b.ld + b.rows);
      }
    };
    auto restore = [&](const std::vector<std::vector<double>>& in) {
      for (idx_t a = w0; a < w1; ++a) std::memcpy(ptrs[a], in[a - w0].data(), in[a - w0].size() * sizeof(double));
    };
    // Garbage in the tiles that assemble must zero.
    if (t.kind == TaskKind::assemble)
      for (idx_t a = w0; a < w1; ++a) {
        const Block& b = G.blocks[static_cast<std::size_t>(G.accesses[t.acc_begin + a].block)];
        for (idx_t c = 0; c < b.cols; ++c)
          for (idx_t r = 0; r < b.rows; ++r) ptrs[a][r + c * b.ld] = 1e300;
      }
    snapshot(before);
    run_task_cpu(G, ti, ptrs.data(), ctx);
    snapshot(cpu);
    restore(before);
    if (t.kind == TaskKind::assemble)
      gpu_assemble_emulated(G, X, ti, ptrs.data(), ld.data(), A.values.data(), window);
    else
      gpu_extend_add_emulated(G, X, ti, ptrs.data(), ld.data(), window);
    for (idx_t a = w0; a < w1; ++a) {
      const Block& b = G.blocks[static_cast<std::size_t>(G.accesses[t.acc_begin + a].block)];
      for (idx_t c = 0; c < b.cols; ++c)
        for (idx_t r = 0; r < b.rows; ++r) {
          const double want = cpu[a - w0][r + c * b.ld], got = ptrs[a][r + c * b.ld];
          if (want != got) {
            ADD_FAILURE() << task_name(G, t) << " access " << a << " (" << r << "," << c << "): cpu " << want
                          << " emulated " << got;
            return compared;
          }
        }
    }
    ++compared;
  }
  EXPECT_FALSE(ctx.failed.load());
  return compared;
}

TEST(GpuAssemblyIndex, EmulationMatchesCpuKernels) {
  std::vector<std::pair<std::string, CscMatrix>> ms;
  CscMatrix L;
  ASSERT_TRUE(laplace3d(12, 27, L).ok());
  ms.emplace_back("laplace3d 12^3 27-point", L);
  ms.emplace_back("random SPD n=600", testing::random_spd(600, 0.02, 7));
  for (const auto& [name, A] : ms) {
    Solver solver;
    ASSERT_TRUE(solver.analyse(A, AnalysisOptions{}, small_tiles()).ok()) << name;
    const TaskGraph& G = solver.graph();
    const GraphStats gs = graph_stats(G);
    ASSERT_GT(gs.tiled_fronts, 1) << name;
    ASSERT_GT(gs.by_kind[static_cast<int>(TaskKind::extend_add)], 0) << name;
    const idx_t expected = gs.by_kind[static_cast<int>(TaskKind::assemble)] +
                           gs.by_kind[static_cast<int>(TaskKind::extend_add)];
    for (int window : {2, 3, kGpuAssemblyWindow})
      EXPECT_EQ(compare_all_tasks(G, A, window), expected) << name << " window " << window;
  }
}

TEST(GpuAssemblyIndex, FingerprintSeparatesGraphs) {
  CscMatrix A, B;
  ASSERT_TRUE(laplace3d(10, 27, A).ok());
  ASSERT_TRUE(laplace3d(10, 7, B).ok());
  Solver sa, sb;
  ASSERT_TRUE(sa.analyse(A, AnalysisOptions{}, small_tiles()).ok());
  ASSERT_TRUE(sb.analyse(B, AnalysisOptions{}, small_tiles()).ok());
  const std::uint64_t fa = gpu_assembly_fingerprint(sa.graph());
  EXPECT_EQ(fa, gpu_assembly_fingerprint(sa.graph()));
  EXPECT_NE(fa, gpu_assembly_fingerprint(sb.graph()));
  // The same Solver (same graph address) analysed again with other tiles.
  GraphOptions go = small_tiles();
  go.tile_size = 24;
  ASSERT_TRUE(sa.analyse(A, AnalysisOptions{}, go).ok());
  EXPECT_NE(fa, gpu_assembly_fingerprint(sa.graph()));
  GpuAssemblyIndex X;
  ASSERT_TRUE(build_gpu_assembly_index(sa.graph(), X).ok());
  EXPECT_EQ(X.fingerprint, gpu_assembly_fingerprint(sa.graph()));
}

/// The executor's side of GPU assembly, on CPU workers (testing aid on):
/// the index is registered once per analysis and reused by a
/// refactorisation with new values, the extra R buffers (A's values, index
/// arrays) leave the CPU kernels' results unchanged, a new analysis of the
/// same Solver (same graph address) builds a new index, and shutting StarPU
/// down releases the cache.
TEST(GpuAssemblyIndex, ExecutorAttachesIndexBuffers) {
  std::unique_ptr<StarpuRuntime> rt;
  ASSERT_TRUE(StarpuRuntime::start(RuntimeOptions{2, 0, "lws"}, rt).ok());
  set_gpu_assembly_buffers_without_cuda(true);
  CscMatrix A;
  ASSERT_TRUE(laplace3d(12, 27, A).ok());
  CscMatrix B = A;  // 2A + I
  for (idx_t j = 0; j < B.n; ++j)
    for (idx_t p = B.colptr[j]; p < B.colptr[j + 1]; ++p)
      B.values[p] = 2.0 * B.values[p] + (B.rowind[p] == j ? 1.0 : 0.0);
  const std::vector<double> b = testing::random_vector(A.n, 4);
  Solver solver;
  for (idx_t tile : {16, 24}) {
    GraphOptions go = small_tiles();
    go.tile_size = tile;
    ASSERT_TRUE(solver.analyse(A, AnalysisOptions{}, go).ok());
    const long long builds0 = gpu_assembly_index_builds();
    for (const CscMatrix* M : {static_cast<const CscMatrix*>(&A), static_cast<const CscMatrix*>(&B)}) {
      std::vector<double> ref = b, x = b;
      ASSERT_TRUE(solver.factorize(*M, FactorOptions{}, Executor::sequential).ok());
      ASSERT_TRUE(solver.solve(ref.data(), 1, A.n).ok());
      const Status st = solver.factorize(*M, FactorOptions{}, Executor::starpu);
      ASSERT_TRUE(st.ok()) << st.message;
      ASSERT_TRUE(solver.solve(x.data(), 1, A.n).ok());
      EXPECT_LE(testing::rel_diff(x, ref), 1e-12) << "tile " << tile;
    }
    EXPECT_EQ(gpu_assembly_index_builds() - builds0, 1) << "tile " << tile;
  }
  set_gpu_assembly_buffers_without_cuda(false);
  rt.reset();  // releases the cache before starpu_shutdown
  ASSERT_TRUE(StarpuRuntime::start(RuntimeOptions{1, 0, "lws"}, rt).ok());
  rt.reset();
}

/// Mapped subtree and front panels (GraphTaskArgs::mapped_panel) on CPU
/// workers (both testing aids on): the GPU graph's subtree and front tasks
/// get no handle and no buffer for their panel, their other buffers move
/// up one, and the factor equals the sequential executor's to 1e-13, in a
/// factorisation and a refactorisation with new values, also when a
/// subtree root has a CB (tasks above it read it) and when it has none
/// (the whole factorisation is that task: it then has no buffer at all,
/// GraphTaskArgs::direct).
TEST(GpuAssemblyIndex, MappedPanelsOnCpuWorkers) {
  std::unique_ptr<StarpuRuntime> rt;
  ASSERT_TRUE(StarpuRuntime::start(RuntimeOptions{2, 0, "lws"}, rt).ok());
  struct Aids {  // both testing aids on for this test only, also when an ASSERT returns early
    Aids() { set_gpu_assembly_buffers_without_cuda(true), set_mapped_panels_without_cuda(true); }
    ~Aids() { set_mapped_panels_without_cuda(false), set_gpu_assembly_buffers_without_cuda(false); }
  } aids;
  CscMatrix L3, small;
  ASSERT_TRUE(laplace3d(14, 7, L3).ok());
  small = testing::random_spd(60, 0.1, 8);  // one subtree task: a root without CB
  for (const CscMatrix* A : {&L3, &small}) {
    CscMatrix B = *A;  // 2A + I
    for (idx_t j = 0; j < B.n; ++j)
      for (idx_t p = B.colptr[j]; p < B.colptr[j + 1]; ++p)
        B.values[p] = 2.0 * B.values[p] + (B.rowind[p] == j ? 1.0 : 0.0);
    // Two solvers: the StarPU one's factor storage never holds the
    // reference (round 0: fresh; round 1: A's factor while B is factorised).
    Solver solver, seq;
    ASSERT_TRUE(solver.analyse(*A, AnalysisOptions{}, gpu_graph_options(2, 40)).ok());
    ASSERT_TRUE(seq.analyse(*A, AnalysisOptions{}, gpu_graph_options(2, 40)).ok());
    long long nsub = 0, nfront = 0;
    for (const Task& t : solver.graph().tasks) {
      nsub += t.kind == TaskKind::subtree ? 1 : 0;
      nfront += t.kind == TaskKind::front ? 1 : 0;
    }
    ASSERT_GT(nsub, 0);
    if (A == &L3) {
      ASSERT_GT(solver.graph().tasks.size(), static_cast<std::size_t>(nsub)) << "no task above a subtree";
      ASSERT_GT(nfront, 0) << "no front task";
    } else {
      ASSERT_EQ(solver.graph().tasks.size(), 1u) << "not one subtree task";
      ASSERT_EQ(solver.plan().cb_order(solver.graph().tasks[0].front), 0) << "its root has a CB";
    }
    int round = 0;
    for (const CscMatrix* M : {A, static_cast<const CscMatrix*>(&B)}) {
      ASSERT_TRUE(seq.factorize(*M, FactorOptions{}, Executor::sequential).ok());
      const std::vector<double>& ref = seq.factor().Lx;
      const long long m0 = mapped_panel_tasks(), d0 = direct_subtree_tasks(), f0 = mapped_front_tasks();
      const Status st = round++ == 0 ? solver.factorize(*M, FactorOptions{}, Executor::starpu)
                                     : solver.refactorize(M->values.data(), FactorOptions{}, Executor::starpu);
      ASSERT_TRUE(st.ok()) << st.message;
      EXPECT_EQ(mapped_panel_tasks() - m0, nsub);
      EXPECT_EQ(mapped_front_tasks() - f0, nfront);
      EXPECT_EQ(direct_subtree_tasks() - d0, A == &small ? 1 : 0);
      EXPECT_LE(testing::rel_diff(solver.factor().Lx, ref), 1e-13) << "n " << A->n << " round " << round;
      std::vector<double> x = testing::random_vector(A->n, 4), b = x;
      ASSERT_TRUE(solver.solve(x.data(), 1, A->n).ok());
      EXPECT_LE(backward_error(*M, x.data(), b.data()), 1e-14);
    }
  }
}

}  // namespace
}  // namespace starfront
