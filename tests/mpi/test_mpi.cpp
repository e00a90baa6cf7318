// The StarPU-MPI executor (issue 11), run by mpirun on P ranks (CTest runs
// it with P = 1, 2 and 4; one CPU worker per rank). Oracle: the sequential
// executor in rank 0's process (the same kernels, in submission order).
// Every rank runs every test (the factorisations are collective); the
// numerical checks are made on rank 0, where the factor is gathered, and
// the agreement checks on every rank.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "api/solver.hpp"
#include "common/random_matrices.hpp"
#include "io/matrix_market.hpp"
#include "runtime/starpu/runtime.hpp"
#include "solve/solve.hpp"
#include "sparse/generators.hpp"

namespace starfront {
namespace {

MPI_Comm g_comm = MPI_COMM_WORLD;
int g_rank = 0, g_nranks = 1;

/// Graph options that give tiled fronts shared by several ranks on the
/// test matrices (tiles of 32 from order 64), as many subtrees as ranks.
/// STARFRONT_MPI_TEST_TILE=T sets tiles of T from order 2T (runs by hand).
GraphOptions mpi_graph_options() {
  GraphOptions o;
  const char* env = std::getenv("STARFRONT_MPI_TEST_TILE");
  o.tile_size = env ? std::max<idx_t>(8, std::atoll(env)) : 32;
  o.tile_threshold = 2 * o.tile_size;
  o.workers = g_nranks;
  return o;
}

struct Outcome {
  Status status;
  std::vector<double> x;  // rank 0
  double berr = 0;
};

/// Analyses A, factorises it (MPI or sequential) and solves A x = b on rank 0.
Outcome solve(const CscMatrix& A, const std::vector<double>& b, bool mpi, Solver& s) {
  Outcome out;
  out.status = s.analyse(A, AnalysisOptions{}, mpi_graph_options());
  if (!out.status.ok()) return out;
  FactorOptions fo;
  out.status = mpi ? s.factorize_mpi(A, fo, g_comm) : s.factorize(A, fo, Executor::sequential);
  if (!out.status.ok() || g_rank != 0) return out;
  out.x = b;
  out.status = s.solve(out.x.data(), 1, A.n);
  if (out.status.ok()) out.berr = backward_error(A, out.x.data(), b.data());
  return out;
}

/// The distributed solution equals the one-process one (to 1e-13; in fact
/// bitwise: the MPI executor adds extend-add contributions in submission
/// order, as the sequential executor does); communication as the mapping
/// predicts (and at least its lower bound).
void check_matrix(const CscMatrix& A, const std::string& what) {
  std::vector<double> xtrue = testing::random_vector(A.n, 7), b(A.n, 0.0);
  symmetric_matvec(A, xtrue.data(), b.data());
  Solver dist;
  const Outcome d = solve(A, b, true, dist);
  ASSERT_TRUE(d.status.ok()) << what << ": " << d.status.message;
  const MpiRunInfo& info = dist.mpi_info();
  ASSERT_EQ(info.nranks, g_nranks);
  const CommVolume v = communication_volume(dist.graph(), dist.mapping());
  double sent = 0;
  for (int r = 0; r < g_nranks; ++r) {
    sent += info.sent_bytes[r];
    // StarPU-MPI sends exactly what the owner-computes model of the mapping says.
    EXPECT_DOUBLE_EQ(info.sent_bytes[r], v.protocol_sent[r]) << what << ": rank " << r;
  }
  EXPECT_GE(sent, v.lower_bound_total) << what;
  if (g_nranks == 1) { EXPECT_EQ(sent, 0.0) << what; }
  double gathered = 0;
  for (double g : info.gather_sent_bytes) gathered += g;
  EXPECT_DOUBLE_EQ(gathered, v.gather_to_root) << what;
  if (g_rank != 0) return;
  Solver seq;
  const Outcome s = solve(A, b, false, seq);
  ASSERT_TRUE(s.status.ok()) << what << ": " << s.status.message;
  EXPECT_LE(testing::rel_diff(d.x, s.x), 1e-13) << what;
  EXPECT_LE(d.berr, 1e-14) << what;
  std::printf("[rank 0 of %d] %s: n %lld, |x_mpi - x_seq|/|x_seq| %.2e, berr %.2e, sent %.0f bytes "
              "(model %.0f, lower bound %.0f), gather %.0f bytes\n",
              g_nranks, what.c_str(), static_cast<long long>(A.n), testing::rel_diff(d.x, s.x), d.berr, sent,
              v.protocol_total, v.lower_bound_total, gathered);
}

TEST(Mpi, EverySpdMatrixGivesTheOneProcessSolution) {
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(std::filesystem::path(STARFRONT_DATA_DIR) / "spd"))
    files.push_back(e.path());
  std::sort(files.begin(), files.end());  // the same order on every rank
  ASSERT_FALSE(files.empty());
  for (const auto& f : files) {
    CscMatrix A;
    ASSERT_TRUE(read_matrix_market(f.string(), A).ok()) << f;
    check_matrix(A, f.filename().string());
  }
}

TEST(Mpi, Laplacian3dGivesTheOneProcessSolution) {
  // 16³ in CTest (two cores); STARFRONT_MPI_TEST_LAP3D=N runs N³ by hand.
  const char* env = std::getenv("STARFRONT_MPI_TEST_LAP3D");
  const idx_t N = env ? std::max<idx_t>(2, std::atoll(env)) : 16;
  CscMatrix A;
  ASSERT_TRUE(laplace3d(N, 7, A).ok());
  check_matrix(A, "laplace3d " + std::to_string(N) + "^3 7-point");
  // Large enough to be spread: every rank runs tasks, data crosses ranks.
  Solver s;
  ASSERT_TRUE(s.analyse(A, AnalysisOptions{}, mpi_graph_options()).ok());
  ASSERT_TRUE(s.factorize_mpi(A, FactorOptions{}, g_comm).ok());
  for (int r = 0; r < g_nranks; ++r) EXPECT_GT(s.mpi_info().tasks_run[r], 0) << "rank " << r;
  double sent = 0;
  for (double x : s.mpi_info().sent_bytes) sent += x;
  if (g_nranks > 1) { EXPECT_GT(sent, 0.0); }
}

TEST(Mpi, NonSpdInputReportsTheSameColumnOnEveryRank) {
  CscMatrix A;
  ASSERT_TRUE(laplace3d(12, 7, A).ok());
  // Make one diagonal entry very negative: A is then indefinite.
  const idx_t bad = A.n / 3;
  for (idx_t p = A.colptr[bad]; p < A.colptr[bad + 1]; ++p)
    if (A.rowind[p] == bad) A.values[p] = -100.0;
  Solver s;
  ASSERT_TRUE(s.analyse(A, AnalysisOptions{}, mpi_graph_options()).ok());
  const Status st = s.factorize_mpi(A, FactorOptions{}, g_comm);
  EXPECT_EQ(st.code, StatusCode::not_positive_definite) << st.message;
  long long col = st.column;
  std::vector<long long> cols(g_nranks);
  MPI_Allgather(&col, 1, MPI_LONG_LONG, cols.data(), 1, MPI_LONG_LONG, g_comm);
  for (int r = 0; r < g_nranks; ++r) EXPECT_EQ(cols[r], cols[0]) << "rank " << r;
  EXPECT_GE(col, 0);
  Solver seq;  // the one-process run names the same column
  ASSERT_TRUE(seq.analyse(A, AnalysisOptions{}, mpi_graph_options()).ok());
  const Status ss = seq.factorize(A, FactorOptions{}, Executor::sequential);
  EXPECT_EQ(ss.code, StatusCode::not_positive_definite);
  EXPECT_EQ(ss.column, st.column);
  EXPECT_EQ(ss.pivot, st.pivot);
  // The runtime is still usable: the SPD matrix factorises afterwards.
  for (idx_t p = A.colptr[bad]; p < A.colptr[bad + 1]; ++p)
    if (A.rowind[p] == bad) A.values[p] = 6.0;
  EXPECT_TRUE(s.factorize_mpi(A, FactorOptions{}, g_comm).ok());
}

TEST(Mpi, RefusesLdltAndAForeignMapping) {
  CscMatrix A;
  ASSERT_TRUE(laplace3d(6, 7, A).ok());
  Solver s;
  ASSERT_TRUE(s.analyse(A, AnalysisOptions{}, mpi_graph_options()).ok());
  FactorOptions fo;
  fo.method = FactorMethod::ldlt;
  const Status st = s.factorize_mpi(A, fo, g_comm);
  EXPECT_EQ(st.code, StatusCode::invalid_argument);
  EXPECT_NE(st.message.find("LDLT"), std::string::npos) << st.message;
  // A mapping for another number of ranks is refused by the executor.
  TaskGraph G;
  ASSERT_TRUE(build_task_graph(s.plan(), mpi_graph_options(), G).ok());
  RankMapping M;
  ASSERT_TRUE(distribute_graph(G, g_nranks + 1, SlotOptions{}, M).ok());
  NumericFactor F;
  EXPECT_EQ(factorize_starpu_mpi(G, M, A, FactorOptions{}, g_comm, F, nullptr, nullptr).code,
            StatusCode::invalid_argument);
}

}  // namespace
}  // namespace starfront

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &starfront::g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &starfront::g_nranks);
  ::testing::InitGoogleTest(&argc, argv);
  if (starfront::g_rank != 0) {  // one report: rank 0's (failures on other ranks still fail the run)
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
  }
  setenv("STARPU_WORKERS_NOBIND", "1", 0);  // several ranks share the cores
  int failed = 0;
  {
    std::unique_ptr<starfront::StarpuRuntime> rt;
    starfront::RuntimeOptions ro(1, 0, "lws");
    ro.mpi_comm = &starfront::g_comm;
    const starfront::Status st = starfront::StarpuRuntime::start(ro, rt);
    if (!st.ok()) {
      std::fprintf(stderr, "rank %d: %s\n", starfront::g_rank, st.message.c_str());
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
    failed = RUN_ALL_TESTS();
  }
  int any = 0;
  MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (failed) std::fprintf(stderr, "rank %d: tests failed\n", starfront::g_rank);
  MPI_Finalize();
  return any;
}
