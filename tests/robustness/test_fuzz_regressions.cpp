// The fuzz targets' properties (fuzz/fuzz_checks.hpp) on every file of their
// seed corpus (fuzz/corpus/<target>/) and of their regressions
// (fuzz/regressions/<target>/: each input a fuzzer once found breaking a
// property or crashing, kept after the fix), in the ordinary test build and
// under the sanitizers (tools/run-tests.sh --sanitize).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include "api/solver.hpp"
#include "fuzz_checks.hpp"
#include "io/matrix_market.hpp"

namespace starfront {
namespace {

namespace fs = std::filesystem;
using Check = std::string (*)(const std::uint8_t*, std::size_t);

/// Runs `check` on every file under fuzz/<kind>/<target>; returns how many.
int replay(const std::string& kind, const std::string& target, Check check) {
  const fs::path dir = fs::path(STARFRONT_FUZZ_DIR) / kind / target;
  if (!fs::is_directory(dir)) return 0;
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.is_regular_file() && e.path().filename().string()[0] != '.') files.push_back(e.path());
  std::sort(files.begin(), files.end());
  for (const fs::path& f : files) {
    std::ifstream in(f, std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const std::string failure =
        check(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
    EXPECT_EQ(failure, "") << f;
  }
  return static_cast<int>(files.size());
}

TEST(FuzzRegressions, MatrixMarketCorpusAndRegressions) {
  EXPECT_GE(replay("corpus", "matrix_market", fuzz::check_matrix_market), 5);
  replay("regressions", "matrix_market", fuzz::check_matrix_market);
}

TEST(FuzzRegressions, CscSolveCorpusAndRegressions) {
  EXPECT_GE(replay("corpus", "csc_solve", fuzz::check_csc_solve), 5);
  replay("regressions", "csc_solve", fuzz::check_csc_solve);
}

// Found while fuzzing the reader: every value is finite but duplicates (or an
// entry and its mirror) summed to infinity, which the reader used to accept
// (the factorisation then refused "entry (1, 1) of A is not finite").
TEST(FuzzRegressions, DuplicatesSummingToInfinityAreRefusedByTheReaders) {
  const std::string sym =
      "%%MatrixMarket matrix coordinate real symmetric\n2 2 3\n1 1 1e308\n1 1 1e308\n2 2 1\n";
  const std::string mirrored =  // both triangles: (2,1) and (1,2) summed, twice each
      "%%MatrixMarket matrix coordinate real general\n2 2 6\n1 1 1\n2 2 1\n"
      "2 1 9e307\n2 1 9e307\n1 2 9e307\n1 2 9e307\n";
  for (const std::string& text : {sym, mirrored}) {
    std::istringstream in(text);
    CscMatrix A;
    A.n = 99;
    const Status st = read_matrix_market(in, "sum.mtx", A);
    EXPECT_EQ(st.code, StatusCode::parse_error) << st.message;
    EXPECT_NE(st.message.find("not finite"), std::string::npos) << st.message;
    EXPECT_EQ(A.n, 99) << "output modified on error";
  }
  std::istringstream in("%%MatrixMarket matrix coordinate real general\n2 1 2\n2 1 -1.7e308\n"
                        "2 1 -1.7e308\n");
  idx_t m = -1, n = -1;
  std::vector<double> values;
  const Status st = read_dense_matrix(in, "dense.mtx", m, n, values);
  EXPECT_EQ(st.code, StatusCode::parse_error) << st.message;
  EXPECT_NE(st.message.find("(2, 1)"), std::string::npos) << st.message;
  EXPECT_EQ(m, -1);
}

// Found while fuzzing (a right-hand side A·x that overflowed): the solve
// returned a non-finite solution with a success status. It now refuses a
// non-finite right-hand side (invalid_argument) and a solution that
// overflows (runtime_error), leaving B unchanged.
TEST(FuzzRegressions, SolveRefusesNonFiniteRightHandSidesAndOverflow) {
  CscMatrix A;
  ASSERT_TRUE(lower_csc_from_triplets(2, {0, 1}, {0, 1}, {1e-300, 1e308}, A).ok());
  Solver solver;
  ASSERT_TRUE(solver.analyse(A, AnalysisOptions{}).ok());
  ASSERT_TRUE(solver.factorize(A, FactorOptions{}, Executor::sequential).ok());
  std::vector<double> b = {1e-300, 1e308};  // x = (1, 1)
  ASSERT_TRUE(solver.solve(b.data(), 1, 2).ok());
  EXPECT_EQ(b, (std::vector<double>{1, 1}));
  b = {1e300, 1.0};  // x(1) = 1e600
  Status st = solver.solve(b.data(), 1, 2);
  EXPECT_EQ(st.code, StatusCode::runtime_error) << st.message;
  EXPECT_NE(st.message.find("entry 1 of solution 1 overflows"), std::string::npos) << st.message;
  EXPECT_EQ(b, (std::vector<double>{1e300, 1.0}));
  b = {1.0, 1.0, 1.0, HUGE_VAL};  // two right-hand sides, the second with +inf
  st = solver.solve(b.data(), 2, 2);
  EXPECT_EQ(st.code, StatusCode::invalid_argument) << st.message;
  EXPECT_NE(st.message.find("entry 2 of right-hand side 2 is not finite"), std::string::npos)
      << st.message;
  EXPECT_EQ(b[0], 1.0);
}

}  // namespace
}  // namespace starfront
