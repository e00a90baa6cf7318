// The StarPU-MPI executor (issue 11), run by mpirun on P ranks (CTest runs
// it with P = 1, 2 and 4; one CPU worker per rank). Oracle: the sequential
// executor in rank 0's process (the same kernels, in submission order).
// Every rank runs every test (the factorisations and the distributed solves
// are collective); the numerical checks are made on rank 0, where the
// right-hand side and solution are collected, and the agreement checks on
// every rank.
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
#include "plan/solve_graph.hpp"
#include "runtime/starpu_mpi/vector_layout.hpp"
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

/// Analyses A, factorises it (MPI or sequential) and solves A X = B
/// (n×nrhs; rank 0's B; the distributed solve is collective, the
/// sequential one runs on rank 0). refine: FactorOptions::refine_steps.
Outcome solve(const CscMatrix& A, const std::vector<double>& b, bool mpi, Solver& s, idx_t nrhs = 1,
              int refine = 3) {
  Outcome out;
  out.status = s.analyse(A, AnalysisOptions{}, mpi_graph_options());
  if (!out.status.ok()) return out;
  FactorOptions fo;
  fo.refine_steps = refine;
  out.status = mpi ? s.factorize_mpi(A, fo, g_comm) : s.factorize(A, fo, Executor::sequential);
  if (!out.status.ok() || (!mpi && g_rank != 0)) return out;
  out.x = g_rank == 0 ? b : std::vector<double>{};
  out.status = mpi ? s.solve_mpi(root_layout(A.n, g_nranks), out.x.data(), nrhs, A.n, g_comm)
                   : s.solve(out.x.data(), nrhs, A.n);
  if (out.status.ok() && g_rank == 0)
    for (idx_t c = 0; c < nrhs; ++c)
      out.berr = std::max(out.berr, backward_error(A, out.x.data() + c * A.n, b.data() + c * A.n));
  return out;
}

/// The distributed solution equals the one-process one (to 1e-13; the
/// factor is bitwise the sequential executor's: the MPI executor adds
/// extend-add contributions in submission order); communication as the
/// mapping predicts (and at least its lower bound); the distributed solve
/// moves exactly what the solve graph's model says, no factor block, far
/// less than the factor.
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
  // The solve phase: columns solved in all (1 + refinement corrections).
  const MpiSolveInfo& si = dist.mpi_solve_info();
  const SolveVolume one = solve_communication(dist.solve_graph(), 1);
  EXPECT_EQ(one.factor_bytes, 0.0) << what << ": a solve task reads a factor block its rank does not own";
  double solve_sent = 0;
  for (int r = 0; r < g_nranks; ++r) {
    solve_sent += si.sent_bytes[r];
    EXPECT_DOUBLE_EQ(si.sent_bytes[r], one.sent[r] * static_cast<double>(si.nrhs)) << what << ": rank " << r;
  }
  const double factor_bytes = static_cast<double>(dist.plan().factor_size()) * sizeof(double);
  if (g_nranks == 1) { EXPECT_EQ(solve_sent, 0.0) << what; }
  if (g_rank != 0) return;
  Solver seq;
  const Outcome s = solve(A, b, false, seq);
  ASSERT_TRUE(s.status.ok()) << what << ": " << s.status.message;
  EXPECT_LE(testing::rel_diff(d.x, s.x), 1e-13) << what;
  EXPECT_LE(d.berr, 1e-14) << what;
  std::printf("[rank 0 of %d] %s: n %lld, |x_mpi - x_seq|/|x_seq| %.2e, berr %.2e, factorisation sent %.0f bytes "
              "(model %.0f, lower bound %.0f); solve: %d distributed solve(s), %lld column(s), sent %.0f bytes "
              "(model %.0f per column), factor %.0f bytes (a gather to rank 0 would move %.0f)\n",
              g_nranks, what.c_str(), static_cast<long long>(A.n), testing::rel_diff(d.x, s.x), d.berr, sent,
              v.protocol_total, v.lower_bound_total, dist.mpi_solves(), static_cast<long long>(si.nrhs), solve_sent,
              one.total, factor_bytes, v.gather_to_root);
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
  // The solve runs on every rank and moves far less than the factor (which
  // a gather to rank 0 would move in part): one right-hand side, no refinement.
  std::vector<double> x(g_rank == 0 ? A.n : 0, 1.0);
  FactorOptions fo;
  fo.refine_steps = 0;
  ASSERT_TRUE(s.factorize_mpi(A, fo, g_comm).ok());
  ASSERT_TRUE(s.solve_mpi(root_layout(A.n, g_nranks), x.data(), 1, A.n, g_comm).ok());
  double solve_sent = 0;
  for (int r = 0; r < g_nranks; ++r) {
    solve_sent += s.mpi_solve_info().sent_bytes[r];
    EXPECT_GT(s.mpi_solve_info().tasks_run[r], 0) << "rank " << r;
  }
  const double factor_bytes = static_cast<double>(s.plan().factor_size()) * sizeof(double);
  EXPECT_LT(solve_sent, 0.05 * factor_bytes);
  if (g_nranks > 1) { EXPECT_GT(solve_sent, 0.0); }
  if (g_rank == 0)
    std::printf("[rank 0 of %d] laplace3d %lld^3: solve sent %.0f bytes = %.2e of the factor's %.0f bytes "
                "(a gather to rank 0 would move %.0f)\n",
                g_nranks, static_cast<long long>(N), solve_sent, solve_sent / factor_bytes, factor_bytes,
                communication_volume(s.graph(), s.mapping()).gather_to_root);
}

/// Several right-hand sides at once, without refinement: each column equals
/// the one-process solve's (1e-13), in one distributed solve.
TEST(Mpi, SeveralRightHandSidesWithoutRefinement) {
  CscMatrix A;
  ASSERT_TRUE(laplace3d(14, 7, A).ok());
  const idx_t nrhs = 3;
  std::vector<double> B = testing::random_vector(A.n * nrhs, 11);
  Solver dist;
  const Outcome d = solve(A, B, true, dist, nrhs, 0);
  ASSERT_TRUE(d.status.ok()) << d.status.message;
  EXPECT_EQ(dist.mpi_solves(), 1);
  EXPECT_EQ(dist.mpi_solve_info().nrhs, nrhs);
  if (g_rank != 0) return;
  Solver seq;
  const Outcome s = solve(A, B, false, seq, nrhs, 0);
  ASSERT_TRUE(s.status.ok()) << s.status.message;
  EXPECT_LE(testing::rel_diff(d.x, s.x), 1e-13);
  EXPECT_LE(d.berr, 1e-14);
}

/// The distributed-vector layouts round-trip: the owner layout (each rank
/// its own rows) and a block layout give rank 0's solution, row for row;
/// the redistribution alone is the identity.
TEST(Mpi, DistributedVectorsRoundTrip) {
  CscMatrix A;
  ASSERT_TRUE(laplace3d(12, 7, A).ok());
  std::vector<double> xtrue = testing::random_vector(A.n, 5), b(A.n, 0.0);
  symmetric_matvec(A, xtrue.data(), b.data());
  Solver s;
  const Outcome root = solve(A, b, true, s);  // everything on rank 0
  ASSERT_TRUE(root.status.ok()) << root.status.message;
  std::vector<double> x0 = root.x;
  x0.resize(A.n);
  MPI_Bcast(x0.data(), static_cast<int>(A.n), MPI_DOUBLE, 0, g_comm);  // the reference on every rank
  // Owner layout.
  const VectorLayout O = s.solve_layout();
  const std::vector<idx_t> mine = O.rows(g_rank);
  ASSERT_EQ(static_cast<idx_t>(mine.size()), O.count(g_rank));
  long long total = static_cast<long long>(mine.size());
  MPI_Allreduce(MPI_IN_PLACE, &total, 1, MPI_LONG_LONG, MPI_SUM, g_comm);
  EXPECT_EQ(total, A.n);
  std::vector<double> xl(std::max<std::size_t>(mine.size(), 1));
  for (std::size_t i = 0; i < mine.size(); ++i) xl[i] = b[mine[i]];
  ASSERT_TRUE(s.solve_mpi(O, xl.data(), 1, std::max<idx_t>(1, O.count(g_rank)), g_comm).ok());
  for (std::size_t i = 0; i < mine.size(); ++i) EXPECT_NEAR(xl[i], x0[mine[i]], 1e-13 * std::fabs(x0[mine[i]]) + 1e-15);
  // Block layout: uneven blocks, the last rank holds the remainder.
  const idx_t per = A.n / (g_nranks + 1), first = per * g_rank;
  const idx_t count = g_rank == g_nranks - 1 ? A.n - first : per;
  VectorLayout L;
  ASSERT_TRUE(block_layout(A.n, first, count, g_comm, L).ok());
  std::vector<double> xb(b.begin() + first, b.begin() + first + count);
  xb.resize(std::max<idx_t>(count, 1));
  ASSERT_TRUE(s.solve_mpi(L, xb.data(), 1, std::max<idx_t>(1, count), g_comm).ok());
  for (idx_t i = 0; i < count; ++i) EXPECT_NEAR(xb[i], x0[first + i], 1e-13 * std::fabs(x0[first + i]) + 1e-15);
  // Redistribution alone: block -> owner -> block is the identity.
  std::vector<double> yo(std::max<idx_t>(O.count(g_rank), 1)), back(std::max<idx_t>(count, 1));
  redistribute(L, b.data() + first, std::max<idx_t>(1, count), O, yo.data(), std::max<idx_t>(1, O.count(g_rank)), 1, g_comm);
  for (std::size_t i = 0; i < mine.size(); ++i) EXPECT_EQ(yo[i], b[mine[i]]);
  redistribute(O, yo.data(), std::max<idx_t>(1, O.count(g_rank)), L, back.data(), std::max<idx_t>(1, count), 1, g_comm);
  for (idx_t i = 0; i < count; ++i) EXPECT_EQ(back[i], b[first + i]);
}

/// Bad distributed-vector input is refused on every rank with the same
/// status, leaving the vectors unchanged: blocks that do not tile [0, n),
/// a non-finite entry on one rank only, different nrhs on the ranks.
TEST(Mpi, DistributedSolveRefusesBadInputOnEveryRank) {
  CscMatrix A;
  ASSERT_TRUE(laplace3d(8, 7, A).ok());
  Solver s;
  ASSERT_TRUE(s.analyse(A, AnalysisOptions{}, mpi_graph_options()).ok());
  VectorLayout L;
  EXPECT_EQ(block_layout(A.n, 0, A.n, g_comm, L).code, g_nranks == 1 ? StatusCode::ok : StatusCode::invalid_argument);
  // Before a distributed factorisation.
  std::vector<double> x(A.n, 1.0);
  EXPECT_EQ(s.solve_mpi(root_layout(A.n, g_nranks), x.data(), 1, A.n, g_comm).code, StatusCode::invalid_argument);
  ASSERT_TRUE(s.factorize_mpi(A, FactorOptions{}, g_comm).ok());
  const VectorLayout O = s.solve_layout();
  const idx_t nl = std::max<idx_t>(1, O.count(g_rank));
  std::vector<double> xl(nl, 1.0);
  if (g_rank == g_nranks - 1 && O.count(g_rank) > 0) xl[0] = std::nan("");
  std::vector<double> before = xl;
  Status st = s.solve_mpi(O, xl.data(), 1, nl, g_comm);
  EXPECT_EQ(st.code, O.count(g_nranks - 1) > 0 ? StatusCode::invalid_argument : StatusCode::ok) << st.message;
  if (!st.ok()) {
    EXPECT_NE(st.message.find("not finite"), std::string::npos) << st.message;
    for (idx_t i = 0; i < O.count(g_rank); ++i)
      EXPECT_TRUE(xl[i] == before[i] || (std::isnan(xl[i]) && std::isnan(before[i])));
  }
  std::fill(xl.begin(), xl.end(), 1.0);
  st = s.solve_mpi(O, xl.data(), g_rank == 0 ? 1 : 2, nl, g_comm);  // refused before any entry is read
  if (g_nranks > 1) { EXPECT_EQ(st.code, StatusCode::invalid_argument) << st.message; }
  int code = static_cast<int>(st.code), lo = code, hi = code;
  MPI_Allreduce(&code, &lo, 1, MPI_INT, MPI_MIN, g_comm);
  MPI_Allreduce(&code, &hi, 1, MPI_INT, MPI_MAX, g_comm);
  EXPECT_EQ(lo, hi);
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
  LocalFactor local;
  EXPECT_EQ(factorize_starpu_mpi(G, M, A, FactorOptions{}, g_comm, F, local, nullptr, nullptr).code,
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
