// critical_path(): the longest leaf-to-root path of an assembly tree under a
// front latency model, against walking every node's path to its root.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "analysis/critical_path.hpp"

namespace starfront {
namespace {

struct Forest {
  std::vector<idx_t> parent, ncols, order;
};

// A random forest numbered children first: parent[s] in (s, ns) or -1.
Forest random_forest(idx_t ns, std::mt19937_64& rng) {
  Forest f;
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::uniform_int_distribution<idx_t> k(1, 40), extra(0, 200);
  for (idx_t s = 0; s < ns; ++s) {
    idx_t p = -1;
    if (s + 1 < ns && u(rng) < 0.9) p = std::uniform_int_distribution<idx_t>(s + 1, std::min(ns - 1, s + 6))(rng);
    f.parent.push_back(p);
    const idx_t kk = k(rng);
    f.ncols.push_back(kk);
    f.order.push_back(kk + (p == -1 ? 0 : extra(rng)));
  }
  return f;
}

FrontLatencyModel random_model(std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(0.0, 1.0);
  return {20e-6 * u(rng), 1e-6 * u(rng), 2e-9 * u(rng)};
}

// Brute force: each node's path to its root, summed by walking up.
struct Walked {
  double best = 0.0, second = 0.0;  // the two longest paths over all leaves' paths
  idx_t fronts = 0, columns = 0;
};

Walked walk_all(const Forest& f, const FrontLatencyModel& m) {
  const idx_t ns = static_cast<idx_t>(f.parent.size());
  std::vector<char> has_child(ns, 0);
  for (idx_t s = 0; s < ns; ++s)
    if (f.parent[s] != -1) has_child[f.parent[s]] = 1;
  Walked w;
  w.best = w.second = -1.0;
  for (idx_t leaf = 0; leaf < ns; ++leaf) {
    if (has_child[leaf]) continue;
    double t = 0.0;
    idx_t fr = 0, co = 0;
    for (idx_t s = leaf; s != -1; s = f.parent[s]) {
      t += m.per_front + m.per_column * f.ncols[s] +
           m.per_update * static_cast<double>(f.ncols[s]) * static_cast<double>(f.order[s] - f.ncols[s]);
      ++fr;
      co += f.ncols[s];
    }
    if (t > w.best) {
      w.second = w.best;
      w.best = t;
      w.fronts = fr;
      w.columns = co;
    } else if (t > w.second) {
      w.second = t;
    }
  }
  return w;
}

TEST(CriticalPath, MatchesEveryLeafsWalkToItsRoot) {
  std::mt19937_64 rng(20261204);
  for (int rep = 0; rep < 300; ++rep) {
    const idx_t ns = std::uniform_int_distribution<idx_t>(1, 120)(rng);
    const Forest f = random_forest(ns, rng);
    const FrontLatencyModel m = random_model(rng);
    const CriticalPath cp = critical_path(f.parent, f.ncols, f.order, m);
    const Walked w = walk_all(f, m);
    ASSERT_NEAR(cp.seconds, w.best, 1e-12 * w.best) << "rep " << rep;
    ASSERT_TRUE(cp.top >= 0 && cp.top < ns && f.parent[cp.top] == -1) << "rep " << rep;
    // The path's own figures where the longest path is unique.
    if (w.best - w.second > 1e-9 * w.best) {
      EXPECT_EQ(cp.fronts, w.fronts) << "rep " << rep;
      EXPECT_EQ(cp.columns, w.columns) << "rep " << rep;
    }
    // Height in columns: per_column 1, the rest 0.
    const CriticalPath h = critical_path(f.parent, f.ncols, f.order, FrontLatencyModel{0.0, 1.0, 0.0});
    const Walked wh = walk_all(f, FrontLatencyModel{0.0, 1.0, 0.0});
    EXPECT_EQ(h.seconds, wh.best) << "rep " << rep;
    EXPECT_EQ(static_cast<double>(h.columns), h.seconds) << "rep " << rep;
  }
}

TEST(CriticalPath, EmptyTreeAndSingleFront) {
  const CriticalPath none = critical_path({}, {}, {}, FrontLatencyModel{});
  EXPECT_EQ(none.seconds, 0.0);
  EXPECT_EQ(none.fronts, 0);
  EXPECT_EQ(none.top, -1);
  const FrontLatencyModel m{2.0, 3.0, 5.0};
  EXPECT_DOUBLE_EQ(front_latency(m, 10, 4), 2.0 + 3.0 * 4 + 5.0 * 4 * 6);
  const CriticalPath one = critical_path({-1}, {4}, {4}, m);
  EXPECT_DOUBLE_EQ(one.seconds, 2.0 + 12.0);
  EXPECT_EQ(one.fronts, 1);
  EXPECT_EQ(one.columns, 4);
  EXPECT_EQ(one.top, 0);
}

// A chain a -> b -> root beside a leaf c -> root: the chain is the path
// unless c's front is far longer.
TEST(CriticalPath, PicksTheLongerBranch) {
  const std::vector<idx_t> parent{1, 3, 3, -1};
  const std::vector<idx_t> ncols{2, 3, 4, 5}, order{7, 8, 9, 5};
  const FrontLatencyModel per_column{0.0, 1.0, 0.0};
  const CriticalPath cp = critical_path(parent, ncols, order, per_column);
  EXPECT_EQ(cp.seconds, 10.0);  // 2 + 3 + 5 against 4 + 5
  EXPECT_EQ(cp.fronts, 3);
  const CriticalPath fixed = critical_path(parent, ncols, order, FrontLatencyModel{1.0, 0.0, 0.0});
  EXPECT_EQ(fixed.seconds, 3.0);
  EXPECT_EQ(fixed.columns, 10);
  const std::vector<idx_t> wide{2, 3, 40, 5}, wide_order{7, 8, 45, 5};
  const CriticalPath other = critical_path(parent, wide, wide_order, per_column);
  EXPECT_EQ(other.seconds, 45.0);
  EXPECT_EQ(other.fronts, 2);
}

}  // namespace
}  // namespace starfront
