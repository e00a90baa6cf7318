// Elimination tree, postorder, column counts and fundamental supernodes
// against the dense boolean symbolic Cholesky (brute_force.hpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>

#include "analysis/colcounts.hpp"
#include "analysis/etree.hpp"
#include "analysis/permutation.hpp"
#include "analysis/postorder.hpp"
#include "analysis/supernodes.hpp"
#include "brute_force.hpp"

namespace starfront {
namespace {

using testing::DenseSymbolic;

// post is a postorder of `parent`: a permutation in which every node comes
// after all its descendants, every subtree is contiguous, and siblings appear
// in increasing order.
void expect_valid_postorder(const std::vector<idx_t>& parent, const std::vector<idx_t>& post) {
  const idx_t n = static_cast<idx_t>(parent.size());
  ASSERT_TRUE(check_permutation(post, n).ok());
  const auto pos = invert_permutation(post);
  std::vector<idx_t> size(n, 1);
  for (idx_t k = 0; k < n; ++k) {  // children before parents: sizes accumulate
    const idx_t j = post[k];
    if (parent[j] != -1) {
      ASSERT_LT(pos[j], pos[parent[j]]) << "child after parent";
      size[parent[j]] += size[j];
    }
  }
  for (idx_t j = 0; j < n; ++j) {
    // The size[j] positions ending at j are exactly j's subtree.
    for (idx_t k = pos[j] - size[j] + 1; k < pos[j]; ++k) {
      idx_t a = post[k];
      while (a != -1 && a != j) a = parent[a];
      ASSERT_EQ(a, j) << "subtree of " << j << " not contiguous";
    }
  }
  for (idx_t a = 0; a < n; ++a)
    for (idx_t b = a + 1; b < n; ++b)
      if (parent[a] == parent[b]) {
        ASSERT_LT(pos[a], pos[b]) << "siblings out of order";
      }
}

TEST(AnalysisEtree, MatchesBruteForce) {
  std::mt19937_64 rng(2024);
  int cases = 0;
  for (int rep = 0; rep < 40; ++rep)
    for (auto kind : testing::kAllKinds) {
      const idx_t n = testing::random_order(rng);
      const CscMatrix A = testing::random_pattern(kind, n, rng);
      ASSERT_TRUE(check_lower_csc(A).ok());
      const DenseSymbolic L(A);
      const auto parent = elimination_tree(A);
      ASSERT_EQ(static_cast<idx_t>(parent.size()), n);
      for (idx_t j = 0; j < n; ++j)
        ASSERT_EQ(parent[j], L.parent(j)) << testing::pattern_name(kind) << " n=" << n << " j=" << j;
      ++cases;
    }
  EXPECT_EQ(cases, 320);
}

TEST(AnalysisPostorder, RandomForests) {
  std::mt19937_64 rng(7);
  for (int rep = 0; rep < 300; ++rep) {
    const idx_t n = testing::random_order(rng);
    // Random forest with parent > child, then random relabelling.
    std::vector<idx_t> up(n, -1);
    for (idx_t j = 0; j + 1 < n; ++j)
      if (rng() % 5 != 0) up[j] = j + 1 + static_cast<idx_t>(rng() % (n - j - 1));
    std::vector<idx_t> label(n);
    std::iota(label.begin(), label.end(), idx_t{0});
    std::shuffle(label.begin(), label.end(), rng);
    std::vector<idx_t> parent(n, -1);
    for (idx_t j = 0; j < n; ++j) parent[label[j]] = up[j] == -1 ? -1 : label[up[j]];
    expect_valid_postorder(parent, postorder(parent));
  }
}

TEST(AnalysisPostorder, DeepChainIsNotRecursive) {
  const idx_t n = 2000000;
  std::vector<idx_t> parent(n);
  for (idx_t j = 0; j < n; ++j) parent[j] = j + 1 < n ? j + 1 : -1;
  const auto post = postorder(parent);
  ASSERT_EQ(static_cast<idx_t>(post.size()), n);
  for (idx_t k = 0; k < n; ++k) ASSERT_EQ(post[k], k);
}

TEST(AnalysisColumnCounts, MatchBruteForce) {
  std::mt19937_64 rng(99);
  for (int rep = 0; rep < 40; ++rep)
    for (auto kind : testing::kAllKinds) {
      const idx_t n = testing::random_order(rng);
      const CscMatrix A = testing::random_pattern(kind, n, rng);
      const DenseSymbolic L(A);
      const auto parent = elimination_tree(A);
      const auto post = postorder(parent);
      expect_valid_postorder(parent, post);
      const auto cc = column_counts(A, parent, post);
      ASSERT_EQ(static_cast<idx_t>(cc.size()), n);
      for (idx_t j = 0; j < n; ++j)
        ASSERT_EQ(cc[j], L.count(j)) << testing::pattern_name(kind) << " n=" << n << " j=" << j;
    }
}

// Hand-checked 11x11 example (0-based; the elimination tree and the column
// counts were derived by hand, column by column, fill included).
TEST(AnalysisColumnCounts, HandChecked11) {
  const idx_t n = 11;
  const std::vector<std::pair<idx_t, idx_t>> offdiag = {
      {5, 0}, {6, 0}, {2, 1}, {7, 1}, {9, 2}, {10, 2}, {5, 3}, {9, 3}, {7, 4}, {10, 4},
      {8, 5}, {9, 5}, {10, 6}, {9, 7}, {10, 7}, {10, 8}, {10, 9}};
  std::vector<std::pair<idx_t, idx_t>> pairs = offdiag;
  for (idx_t i = 0; i < n; ++i) pairs.emplace_back(i, i);
  const CscMatrix A = testing::pattern_from_pairs(n, pairs);
  const auto parent = elimination_tree(A);
  const std::vector<idx_t> expected_parent = {5, 2, 7, 5, 7, 6, 8, 9, 9, 10, -1};
  EXPECT_EQ(parent, expected_parent);
  // Counted by hand (column j of L: its A entries plus the fill from its children).
  const std::vector<idx_t> expected_counts = {3, 3, 4, 3, 3, 4, 4, 3, 3, 2, 1};
  EXPECT_EQ(column_counts(A, parent, postorder(parent)), expected_counts);
}

TEST(AnalysisSupernodes, FundamentalMatchBruteForce) {
  std::mt19937_64 rng(5);
  for (int rep = 0; rep < 40; ++rep)
    for (auto kind : testing::kAllKinds) {
      const idx_t n = testing::random_order(rng);
      CscMatrix A = testing::random_pattern(kind, n, rng);
      // Postorder the tree first (fundamental_supernodes needs it).
      const auto post = postorder(elimination_tree(A));
      A = permute_symmetric(A, post);
      const auto parent = elimination_tree(A);
      for (idx_t j = 0; j < n; ++j) ASSERT_TRUE(parent[j] == -1 || parent[j] > j);
      const auto cc = column_counts(A, parent, postorder(parent));
      const SupernodePartition sp = fundamental_supernodes(parent, cc);
      const DenseSymbolic L(A);
      const std::vector<idx_t> start = testing::fundamental_supernode_starts(L);
      ASSERT_EQ(sp.start, start) << testing::pattern_name(kind) << " n=" << n;
      for (idx_t s = 0; s < sp.nsuper(); ++s) {
        const idx_t p = L.parent(sp.start[s + 1] - 1);
        if (p == -1) {
          EXPECT_EQ(sp.parent[s], -1);
        } else {
          ASSERT_GT(sp.parent[s], s);
          EXPECT_TRUE(sp.start[sp.parent[s]] <= p && p < sp.start[sp.parent[s] + 1]);
        }
      }
    }
}

}  // namespace
}  // namespace starfront
