// The fuzz targets' properties (fuzz/fuzz_checks.hpp) on every file of their
// seed corpus (fuzz/corpus/<target>/) and of their regressions
// (fuzz/regressions/<target>/: each input a fuzzer once found breaking a
// property or crashing, kept after the fix), in the ordinary test build and
// under the sanitizers (tools/run-tests.sh --sanitize).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "fuzz_checks.hpp"

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

}  // namespace
}  // namespace starfront
