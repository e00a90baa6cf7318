// The one-process triangular solves (solve/graph_solve.hpp: ProcessSolve,
// Solver::solve): against dense LAPACK (DPOSV, DSYSV) on seeded random
// matrices with several right-hand sides; bitwise against the solve graph's
// reference executor (solve_graph_in_process, fresh workspace per call: the
// arithmetic the distributed solve shares) on random matrices and every
// ../shared/data/spd matrix, with one workspace reused across solves of
// different widths; LLᵀ and LDLᵀ; refactorisation; concurrent solves from
// several threads; bad right-hand sides refused with B unchanged.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <random>
#include <thread>
#include <vector>

#include "api/solver.hpp"
#include "common/random_matrices.hpp"
#include "cpu/blas.hpp"
#include "cpu/solve_kernels.hpp"
#include "io/matrix_market.hpp"
#include "ldlt/ldlt_test_util.hpp"
#include "solve/graph_solve.hpp"
#include "solve/solve.hpp"
#include "sparse/generators.hpp"

namespace starfront {
namespace {

using testing::rel_diff;

/// X = A⁻¹ B by dense LAPACK (DPOSV when spd, else DSYSV), B n×nrhs.
std::vector<double> dense_solve(const CscMatrix& A, const std::vector<double>& B, idx_t nrhs, bool spd) {
  std::vector<double> D = testing::to_dense(A), X = B;
  const int n = static_cast<int>(A.n);
  std::vector<int> ipiv(n);
  const int info = spd ? LAPACKE_dposv(LAPACK_COL_MAJOR, 'L', n, static_cast<int>(nrhs), D.data(), n, X.data(), n)
                       : LAPACKE_dsysv(LAPACK_COL_MAJOR, 'L', n, static_cast<int>(nrhs), D.data(), n, ipiv.data(),
                                       X.data(), n);
  EXPECT_EQ(info, 0);
  return X;
}

struct Graphs {
  const char* name;
  GraphOptions o;
};

std::vector<Graphs> graph_variants() {
  GraphOptions tiles;  // tiled fronts (tile-by-tile solve tasks) as well as subtrees
  tiles.tile_threshold = 16;
  tiles.tile_size = 8;
  GraphOptions nofuse;  // one unit per front
  nofuse.fuse_subtrees = false;
  return {{"default", GraphOptions{}}, {"tiles", tiles}, {"no-fuse", nofuse}};
}

/// Solver analysed and factorised with method m (sequential executor), no refinement.
void factor(Solver& s, const CscMatrix& A, const GraphOptions& go, FactorMethod m, int refine = 0) {
  ASSERT_TRUE(s.analyse(A, AnalysisOptions{}, go).ok());
  FactorOptions fo;
  fo.method = m;
  fo.refine_steps = refine;
  const Status st = s.factorize(A, fo, Executor::sequential);
  ASSERT_TRUE(st.ok()) << st.message;
}

/// The reference: the solve graph of s's factorised graph on one rank, run
/// by solve_in_place_graph (its own fresh workspace per call).
std::vector<double> graph_reference(const Solver& s, const std::vector<double>& B, idx_t nrhs) {
  ProcessSolve ps;
  EXPECT_TRUE(ps.build(s.factorized_graph()).ok());
  std::vector<double> X = B;
  EXPECT_TRUE(solve_in_place_graph(ps.solve_graph(), s.factor(), X.data(), nrhs, s.plan().n).ok());
  return X;
}

/// The unit kernels' small-block loops (trsm_vector, gemm_vector) against
/// BLAS DTRSM / DGEMM on seeded random blocks, every order from 1 to 50
/// (past the loops' limit, where they call BLAS), both transposes, 1, 2, 3
/// and 9 right-hand sides, leading dimensions above the block's rows; the padding
/// rows of x and y are left alone; within the loops' limit, each column of a
/// solve with several right-hand sides is bitwise that column's solve alone.
TEST(SolveKernels, SmallBlockLoopsMatchBlas) {
  // max |x - ref| / max |ref| over n entries
  auto rel_diff = [](const double* x, const double* ref, idx_t n) {
    double d = 0.0, r = 0.0;
    for (idx_t i = 0; i < n; ++i) d = std::max(d, std::abs(x[i] - ref[i])), r = std::max(r, std::abs(ref[i]));
    return r > 0.0 ? d / r : d;
  };
  std::mt19937_64 rng(20261205);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (idx_t b = 1; b <= 50; ++b)
    for (idx_t nrhs : {1, 2, 3, 9})  // 9: two blocks of right-hand sides in the transposed solve
      for (bool trans : {false, true}) {
        SCOPED_TRACE(::testing::Message() << "b " << b << " nrhs " << nrhs << " trans " << trans);
        const idx_t ldl = b + 3, ld = b + 2, rows = b + 5;
        // A lower triangle with a dominant diagonal of either sign pattern
        // (the kernels do not assume positive pivots), random below.
        std::vector<double> L(static_cast<std::size_t>(ldl * std::max(b, rows)), 7.0);
        for (idx_t j = 0; j < b; ++j)
          for (idx_t i = j; i < ldl; ++i) L[i + j * ldl] = i == j ? (j % 3 == 1 ? -2.0 : 2.0) + u(rng) : u(rng);
        std::vector<double> x(static_cast<std::size_t>(ld * nrhs));
        for (double& v : x) v = u(rng);
        std::vector<double> ref = x, one = x;
        trsm_vector(L.data(), ldl, b, x.data(), ld, nrhs, trans);
        if (b * b * nrhs <= 2 * kSolveLoopMaxWork)  // the loops: each column as if solved alone, bitwise
          for (idx_t c = 0; c < nrhs; ++c) {
            trsm_vector(L.data(), ldl, b, one.data() + c * ld, ld, 1, trans);
            for (idx_t i = 0; i < b; ++i) EXPECT_EQ(one[i + c * ld], x[i + c * ld]) << "column " << c << " row " << i;
          }
        cblas_dtrsm(CblasColMajor, CblasLeft, CblasLower, trans ? CblasTrans : CblasNoTrans, CblasNonUnit,
                    static_cast<int>(b), static_cast<int>(nrhs), 1.0, L.data(), static_cast<int>(ldl), ref.data(),
                    static_cast<int>(ld));
        for (idx_t c = 0; c < nrhs; ++c) {
          EXPECT_LT(rel_diff(x.data() + c * ld, ref.data() + c * ld, b), 1e-13);
          for (idx_t i = b; i < ld; ++i) EXPECT_EQ(x[i + c * ld], ref[i + c * ld]);  // padding untouched
        }
        // gemm_vector: y (rows or b) -= L21 x or L21ᵀ x, L21 rows × b below the block.
        const idx_t ny = trans ? b : rows, nx = trans ? rows : b, ldx = nx + 1, ldy = ny + 2;
        std::vector<double> G(static_cast<std::size_t>(rows * b));
        for (double& v : G) v = u(rng);
        std::vector<double> xv(static_cast<std::size_t>(ldx * nrhs)), y(static_cast<std::size_t>(ldy * nrhs));
        for (double& v : xv) v = u(rng);
        for (double& v : y) v = u(rng);
        std::vector<double> yref = y;
        gemm_vector(G.data(), rows, rows, b, xv.data(), ldx, y.data(), ldy, nrhs, trans);
        cblas_dgemm(CblasColMajor, trans ? CblasTrans : CblasNoTrans, CblasNoTrans, static_cast<int>(ny),
                    static_cast<int>(nrhs), static_cast<int>(trans ? rows : b), -1.0, G.data(),
                    static_cast<int>(rows), xv.data(), static_cast<int>(ldx), 1.0, yref.data(), static_cast<int>(ldy));
        for (idx_t c = 0; c < nrhs; ++c) {
          EXPECT_LT(rel_diff(y.data() + c * ldy, yref.data() + c * ldy, ny), 1e-13);
          for (idx_t i = ny; i < ldy; ++i) EXPECT_EQ(y[i + c * ldy], yref[i + c * ldy]);
        }
      }
}

TEST(ProcessSolve, MatchesDenseLapackAndTheGraphExecutorBitwise) {
  for (const Graphs& g : graph_variants())
    for (std::uint64_t seed = 1; seed <= 4; ++seed) {
      const idx_t n = 60 + 70 * static_cast<idx_t>(seed);
      const CscMatrix A = testing::random_spd(n, 0.03, seed);
      Solver s;
      factor(s, A, g.o, FactorMethod::llt);
      ProcessSolve ps;
      ASSERT_TRUE(ps.build(s.factorized_graph()).ok());
      SolveWorkspace ws;  // one workspace through every width, wide first, then narrower
      for (idx_t nrhs : {8, 1, 3}) {
        const std::vector<double> B = testing::random_vector(n * nrhs, seed * 10 + nrhs);
        std::vector<double> X = B;
        ASSERT_TRUE(ps.solve(s.factor(), X.data(), nrhs, n, ws).ok());
        EXPECT_LT(rel_diff(X, dense_solve(A, B, nrhs, true)), 1e-12) << g.name << " seed " << seed;
        EXPECT_EQ(X, graph_reference(s, B, nrhs)) << g.name << " seed " << seed << " nrhs " << nrhs;
        std::vector<double> Y = B;  // Solver::solve: the same sweep
        ASSERT_TRUE(s.solve(Y.data(), nrhs, n).ok());
        EXPECT_EQ(Y, X) << g.name << " seed " << seed;
      }
    }
}

TEST(ProcessSolve, LeadingDimensionAboveNLeavesTheGapAlone) {
  const CscMatrix A = testing::random_spd(150, 0.04, 21);
  Solver s;
  factor(s, A, GraphOptions{}, FactorMethod::llt);
  const idx_t n = A.n, ldb = n + 5, nrhs = 2;
  std::vector<double> B(ldb * nrhs, 7.0), compact(n * nrhs);
  const std::vector<double> r = testing::random_vector(n * nrhs, 3);
  for (idx_t c = 0; c < nrhs; ++c)
    for (idx_t i = 0; i < n; ++i) B[i + c * ldb] = compact[i + c * n] = r[i + c * n];
  ASSERT_TRUE(s.solve(B.data(), nrhs, ldb).ok());
  ASSERT_TRUE(s.solve(compact.data(), nrhs, n).ok());
  for (idx_t c = 0; c < nrhs; ++c) {
    for (idx_t i = 0; i < n; ++i) EXPECT_EQ(B[i + c * ldb], compact[i + c * n]);
    for (idx_t i = n; i < ldb; ++i) EXPECT_EQ(B[i + c * ldb], 7.0);
  }
}

/// Every ../shared/data/spd matrix: LLᵀ solves bitwise the graph executor's
/// (hence the distributed solve's), LDLᵀ solves bitwise solve_in_place's;
/// both after refinement with backward error <= 1e-14 (LLᵀ) and 1e-12
/// (LDLᵀ: on opf_case10000_goc_kkt its refinement stagnates near 1.2e-13, as
/// it did before this solve existed: main's CLI gave 1.37e-13), three
/// right-hand sides at once.
TEST(ProcessSolve, EverySpdMatrixLltAndLdlt) {
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(std::filesystem::path(STARFRONT_DATA_DIR) / "spd"))
    files.push_back(e.path());
  std::sort(files.begin(), files.end());
  ASSERT_FALSE(files.empty());
  for (const auto& f : files) {
    CscMatrix A;
    ASSERT_TRUE(read_matrix_market(f.string(), A).ok()) << f;
    const idx_t n = A.n, nrhs = 3;
    std::vector<double> xt = testing::random_vector(n * nrhs, 5), B(n * nrhs);
    for (idx_t c = 0; c < nrhs; ++c) symmetric_matvec(A, xt.data() + c * n, B.data() + c * n);
    for (FactorMethod m : {FactorMethod::llt, FactorMethod::ldlt}) {
      const char* tag = m == FactorMethod::llt ? "llt" : "ldlt";
      Solver plain, refined;
      factor(plain, A, GraphOptions{}, m, 0);
      factor(refined, A, GraphOptions{}, m, 3);
      std::vector<double> X = B, R = B;
      ASSERT_TRUE(plain.solve(X.data(), nrhs, n).ok()) << f << " " << tag;
      if (m == FactorMethod::llt) {
        EXPECT_EQ(X, graph_reference(plain, B, nrhs)) << f << " " << tag;
      } else {
        std::vector<double> Y = B;
        ASSERT_TRUE(solve_in_place(plain.factor(), Y.data(), nrhs, n).ok());
        EXPECT_EQ(X, Y) << f << " " << tag;
      }
      ASSERT_TRUE(refined.solve(R.data(), nrhs, n).ok()) << f << " " << tag;
      const double tol = m == FactorMethod::llt ? 1e-14 : 1e-12;
      for (idx_t c = 0; c < nrhs; ++c)
        EXPECT_LE(backward_error(A, R.data() + c * n, B.data() + c * n), tol) << f << " " << tag << " col " << c;
    }
  }
}

TEST(ProcessSolve, LdltMatchesDenseLapackOnRandomKkt) {
  for (std::uint64_t seed = 1; seed <= 4; ++seed) {
    const CscMatrix A = testing::random_indefinite(120 + 30 * static_cast<idx_t>(seed), 0.03, testing::IndefKind::kkt,
                                                   seed);
    Solver s;
    factor(s, A, GraphOptions{}, FactorMethod::ldlt, 3);
    const idx_t n = A.n, nrhs = 4;
    const std::vector<double> B = testing::random_vector(n * nrhs, seed + 40);
    std::vector<double> X = B;
    ASSERT_TRUE(s.solve(X.data(), nrhs, n).ok());
    EXPECT_LT(rel_diff(X, dense_solve(A, B, nrhs, false)), 1e-10) << "seed " << seed;
  }
}

/// A refactorisation with new values reuses the compiled solve and gives
/// bitwise the solution of a fresh solver on the new values.
TEST(ProcessSolve, RefactorizationReusesTheCompiledSolve) {
  CscMatrix A;
  ASSERT_TRUE(laplace2d(30, A).ok());
  Solver s;
  factor(s, A, GraphOptions{}, FactorMethod::llt);
  const std::vector<double> b = testing::random_vector(A.n, 8);
  for (int k = 1; k <= 3; ++k) {
    CscMatrix Ak = A;
    for (idx_t j = 0; j < A.n; ++j) Ak.values[A.colptr[j]] *= 1.0 + 0.1 * k;  // the diagonal entry heads each column
    FactorOptions fo;
    fo.refine_steps = 0;
    ASSERT_TRUE(s.refactorize(Ak.values.data(), fo, Executor::sequential).ok());
    Solver fresh;
    factor(fresh, Ak, GraphOptions{}, FactorMethod::llt);
    std::vector<double> x = b, y = b;
    ASSERT_TRUE(s.solve(x.data(), 1, A.n).ok());
    ASSERT_TRUE(fresh.solve(y.data(), 1, A.n).ok());
    EXPECT_EQ(x, y) << "refactorisation " << k;
    EXPECT_LT(rel_diff(x, dense_solve(Ak, b, 1, true)), 1e-12);
  }
}

/// solve() is const and may run in several threads at once: each gets the
/// solution of a serial solve, bitwise.
TEST(ProcessSolve, ConcurrentSolvesFromSeveralThreads) {
  CscMatrix A;
  ASSERT_TRUE(laplace3d(12, 7, A).ok());
  for (FactorMethod m : {FactorMethod::llt, FactorMethod::ldlt}) {
    Solver s;
    factor(s, A, GraphOptions{}, m, 2);
    const int nthreads = 4, rounds = 10;
    std::vector<std::vector<double>> B(nthreads), serial(nthreads), got(nthreads);
    for (int t = 0; t < nthreads; ++t) {
      B[t] = testing::random_vector(A.n * (t + 1), 100 + t);
      serial[t] = B[t];
      ASSERT_TRUE(s.solve(serial[t].data(), t + 1, A.n).ok());
    }
    std::vector<int> ok(nthreads, 0);
    std::vector<std::thread> th;
    for (int t = 0; t < nthreads; ++t)
      th.emplace_back([&, t] {
        for (int r = 0; r < rounds; ++r) {
          got[t] = B[t];
          if (!s.solve(got[t].data(), t + 1, A.n).ok() || got[t] != serial[t]) return;
        }
        ok[t] = 1;
      });
    for (std::thread& x : th) x.join();
    for (int t = 0; t < nthreads; ++t) EXPECT_EQ(ok[t], 1) << "thread " << t << (m == FactorMethod::llt ? " llt" : " ldlt");
  }
}

TEST(ProcessSolve, BadRightHandSidesAreRefusedUnchanged) {
  const CscMatrix A = testing::random_spd(80, 0.05, 2);
  Solver none;
  std::vector<double> b = testing::random_vector(A.n, 1);
  EXPECT_EQ(none.solve(b.data(), 1, A.n).code, StatusCode::invalid_argument);  // not factorised
  Solver s;
  factor(s, A, GraphOptions{}, FactorMethod::llt, 3);
  std::vector<double> bad = b;
  bad[17] = std::nan("");
  const std::vector<double> keep = bad;
  EXPECT_EQ(s.solve(bad.data(), 1, A.n).code, StatusCode::invalid_argument);
  EXPECT_TRUE(std::equal(bad.begin(), bad.begin() + 17, keep.begin()));
  EXPECT_TRUE(std::equal(bad.begin() + 18, bad.end(), keep.begin() + 18));
  EXPECT_EQ(s.solve(b.data(), 1, A.n - 1).code, StatusCode::invalid_argument);  // ldb < n
  EXPECT_EQ(s.solve(b.data(), -1, A.n).code, StatusCode::invalid_argument);
  EXPECT_TRUE(s.solve(b.data(), 0, A.n).ok());  // nothing to do
  std::vector<double> x = b;
  ASSERT_TRUE(s.solve(x.data(), 1, A.n).ok());  // a good solve after the refusals
  EXPECT_LT(rel_diff(x, dense_solve(A, b, 1, true)), 1e-12);
}

}  // namespace
}  // namespace starfront
