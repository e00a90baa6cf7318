// check_permutation / invert_permutation / compose_permutations.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>

#include "analysis/permutation.hpp"

namespace starfront {
namespace {

TEST(AnalysisPermutation, AcceptsRandomBijections) {
  std::mt19937_64 rng(11);
  for (idx_t n = 0; n <= 50; ++n) {
    std::vector<idx_t> p(n);
    std::iota(p.begin(), p.end(), idx_t{0});
    std::shuffle(p.begin(), p.end(), rng);
    EXPECT_TRUE(check_permutation(p, n).ok()) << "n=" << n;
    const auto inv = invert_permutation(p);
    for (idx_t k = 0; k < n; ++k) EXPECT_EQ(inv[p[k]], k);
    const auto id = compose_permutations(p, inv);  // id[k] = p[inv[k]] = k
    for (idx_t k = 0; k < n; ++k) EXPECT_EQ(id[k], k);
  }
}

TEST(AnalysisPermutation, RejectsDuplicateNamingBothPositions) {
  const Status st = check_permutation({0, 2, 1, 2}, 4);
  EXPECT_EQ(st.code, StatusCode::invalid_argument);
  EXPECT_NE(st.message.find("perm[3] = 2"), std::string::npos) << st.message;
  EXPECT_NE(st.message.find("perm[1]"), std::string::npos) << st.message;
}

TEST(AnalysisPermutation, RejectsOutOfRange) {
  Status st = check_permutation({0, 3, 1}, 3);
  EXPECT_EQ(st.code, StatusCode::invalid_argument);
  EXPECT_NE(st.message.find("perm[1] = 3"), std::string::npos) << st.message;
  st = check_permutation({0, -1, 1}, 3);
  EXPECT_EQ(st.code, StatusCode::invalid_argument);
  EXPECT_NE(st.message.find("perm[1] = -1"), std::string::npos) << st.message;
}

TEST(AnalysisPermutation, RejectsWrongSize) {
  EXPECT_EQ(check_permutation({0, 1}, 3).code, StatusCode::invalid_argument);
  EXPECT_EQ(check_permutation({0}, 0).code, StatusCode::invalid_argument);
  EXPECT_TRUE(check_permutation({}, 0).ok());
  EXPECT_EQ(check_permutation({}, -1).code, StatusCode::invalid_argument);
}

TEST(AnalysisPermutation, RandomCorruptionsAreRejected) {
  std::mt19937_64 rng(12);
  for (int trial = 0; trial < 200; ++trial) {
    const idx_t n = 2 + static_cast<idx_t>(rng() % 40);
    std::vector<idx_t> p(n);
    std::iota(p.begin(), p.end(), idx_t{0});
    std::shuffle(p.begin(), p.end(), rng);
    const idx_t a = static_cast<idx_t>(rng() % n), b = (a + 1 + static_cast<idx_t>(rng() % (n - 1))) % n;
    p[b] = p[a];  // duplicate
    EXPECT_EQ(check_permutation(p, n).code, StatusCode::invalid_argument);
  }
}

}  // namespace
}  // namespace starfront
