// analyse(): the whole symbolic analysis, checked against the dense boolean
// symbolic Cholesky of P A Pᵀ with the final permutation.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <limits>
#include <numeric>
#include <random>

#include "analysis/amalgamation.hpp"
#include "analysis/counts.hpp"
#include "analysis/critical_path.hpp"
#include "analysis/fronts.hpp"
#include "analysis/ordering.hpp"
#include "analysis/permutation.hpp"
#include "analysis/symbolic.hpp"
#include "brute_force.hpp"
#include "sparse/generators.hpp"

namespace starfront {
namespace {

using testing::DenseSymbolic;

// Structural invariants that need no oracle (cheap: usable on large inputs).
void expect_structure(const SymbolicFactor& sf) {
  const idx_t n = sf.n, ns = sf.nsuper;
  ASSERT_TRUE(check_permutation(sf.perm, n).ok());
  ASSERT_EQ(sf.iperm, invert_permutation(sf.perm));
  ASSERT_EQ(static_cast<idx_t>(sf.super_start.size()), ns + 1);
  ASSERT_EQ(static_cast<idx_t>(sf.super_parent.size()), ns);
  ASSERT_EQ(static_cast<idx_t>(sf.front_ptr.size()), ns + 1);
  ASSERT_EQ(static_cast<idx_t>(sf.col_to_super.size()), n);
  ASSERT_EQ(sf.super_start[0], 0);
  ASSERT_EQ(sf.super_start[ns], n);
  ASSERT_EQ(sf.front_ptr[0], 0);
  ASSERT_EQ(static_cast<idx_t>(sf.front_rows.size()), sf.front_ptr[ns]);
  idx_t nnz = 0, maxf = 0;
  double fl = 0;
  std::vector<idx_t> mark(n, -1);
  for (idx_t s = 0; s < ns; ++s) {
    const idx_t f = sf.super_start[s], l = sf.super_start[s + 1] - 1, k = sf.ncols(s);
    ASSERT_GE(k, 1) << "empty supernode " << s;
    ASSERT_TRUE(sf.super_parent[s] == -1 || sf.super_parent[s] > s) << "parent before child";
    for (idx_t j = f; j <= l; ++j) ASSERT_EQ(sf.col_to_super[j], s);
    const idx_t* rows = sf.front_rows.data() + sf.front_ptr[s];
    const idx_t m = sf.front_order(s);
    ASSERT_GE(m, k);
    for (idx_t t = 0; t < k; ++t) ASSERT_EQ(rows[t], f + t) << "front " << s << " own columns";
    for (idx_t t = k; t < m; ++t) {
      ASSERT_GT(rows[t], l) << "CB row not below the supernode";
      if (t > k) {
        ASSERT_GT(rows[t], rows[t - 1]) << "CB rows not increasing";
      }
    }
    // Extend-add: the CB rows of s are rows of its parent's front.
    const idx_t p = sf.super_parent[s];
    if (p != -1) {
      for (idx_t q = sf.front_ptr[p]; q < sf.front_ptr[p + 1]; ++q) mark[sf.front_rows[q]] = p;
      for (idx_t t = k; t < m; ++t) ASSERT_EQ(mark[rows[t]], p) << "CB row missing from parent";
    } else {
      ASSERT_EQ(m, k) << "a root front has a contribution block";
    }
    nnz += k * m - k * (k - 1) / 2;
    for (idx_t t = 0; t < k; ++t) fl += static_cast<double>(m - t) * static_cast<double>(m - t);
    maxf = std::max(maxf, m);
  }
  EXPECT_EQ(sf.nnz_l, nnz);
  EXPECT_EQ(sf.flops, fl);
  EXPECT_EQ(sf.max_front, maxf);
  EXPECT_GE(sf.nnz_l, sf.nnz_l_exact);
  EXPECT_GE(sf.flops, sf.flops_exact);
  // Supernodal tree in postorder: the subtree of s is the range of size[s]
  // numbers ending at s. Linear test: every range lies inside its parent's
  // range (then each range holds all size[s] descendants, hence only them).
  std::vector<idx_t> size(ns, 1);
  for (idx_t s = 0; s < ns; ++s)
    if (sf.super_parent[s] != -1) size[sf.super_parent[s]] += size[s];
  for (idx_t s = 0; s < ns; ++s) {
    const idx_t p = sf.super_parent[s];
    if (p != -1) {
      ASSERT_GE(s - size[s], p - size[p]) << "supernodal subtree of " << p << " not contiguous";
    }
  }
}

// Checks against the brute-force factor of P A Pᵀ (final perm).
void expect_matches_brute_force(const CscMatrix& A, const SymbolicFactor& sf, bool amalgamated) {
  expect_structure(sf);
  if (::testing::Test::HasFatalFailure()) return;
  const idx_t n = sf.n;
  const DenseSymbolic L(permute_symmetric(A, sf.perm));
  EXPECT_EQ(sf.nnz_l_exact, L.nnz());
  EXPECT_EQ(sf.flops_exact, L.flops());
  std::vector<char> in_front(n);
  for (idx_t s = 0; s < sf.nsuper; ++s) {
    std::fill(in_front.begin(), in_front.end(), 0);
    for (idx_t q = sf.front_ptr[s]; q < sf.front_ptr[s + 1]; ++q) in_front[sf.front_rows[q]] = 1;
    const idx_t f = sf.super_start[s], l = sf.super_start[s + 1] - 1;
    for (idx_t j = f; j <= l; ++j) {
      // Children before parents at the column level; the tree respects supernodes.
      const idx_t pj = L.parent(j);
      ASSERT_TRUE(pj == -1 || pj > j);
      if (j < l) ASSERT_TRUE(pj != -1 && pj <= l) << "column " << j << " leaves its supernode";
      else if (pj == -1) ASSERT_EQ(sf.super_parent[s], -1);
      else ASSERT_EQ(sf.col_to_super[pj], sf.super_parent[s]);
      for (idx_t i = j; i < n; ++i)
        if (L.col[j][i]) {
          ASSERT_TRUE(in_front[i]) << "L(" << i << "," << j << ") not in front " << s;
        }
    }
    if (!amalgamated) {  // exact: the front is the pattern of its first column
      for (idx_t i = f; i < n; ++i) ASSERT_EQ(static_cast<bool>(in_front[i]), L.col[f][i] != 0);
    }
  }
  if (!amalgamated) {
    EXPECT_EQ(sf.nnz_l, sf.nnz_l_exact);
    EXPECT_EQ(sf.flops, sf.flops_exact);
    // Exactly the fundamental supernodes of the final (postordered) tree.
    const std::vector<idx_t> start = testing::fundamental_supernode_starts(L);
    EXPECT_EQ(sf.super_start, start);
  }
}

AnalysisOptions options(OrderingMethod m, bool amalgamate) {
  AnalysisOptions o;
  o.ordering = m;
  o.amalgamate = amalgamate;
  return o;
}

class AnalysisBruteForce : public ::testing::TestWithParam<int> {};

// Every seed: all pattern kinds, with natural, Scotch and a random user
// ordering, with and without amalgamation (seeds x 8 kinds x 6 runs).
TEST_P(AnalysisBruteForce, AllKindsAllOrderings) {
  std::mt19937_64 rng(1000 + GetParam());
  for (auto kind : testing::kAllKinds) {
    const idx_t n = testing::random_order(rng);
    const CscMatrix A = testing::random_pattern(kind, n, rng);
    std::vector<idx_t> user(n);
    std::iota(user.begin(), user.end(), idx_t{0});
    std::shuffle(user.begin(), user.end(), rng);
    for (auto method : {OrderingMethod::natural, OrderingMethod::scotch, OrderingMethod::user})
      for (bool amalg : {false, true}) {
        SCOPED_TRACE(std::string(testing::pattern_name(kind)) + " n=" + std::to_string(n) +
                     " method=" + std::to_string(static_cast<int>(method)) +
                     " amalgamate=" + std::to_string(amalg));
        AnalysisOptions o = options(method, amalg);
        o.user_perm = user;
        SymbolicFactor sf;
        const Status st = analyse(A, o, sf);
        ASSERT_TRUE(st.ok()) << st.message;
        ASSERT_EQ(sf.n, n);
        expect_matches_brute_force(A, sf, amalg);
        if (HasFatalFailure()) return;
      }
  }
}
INSTANTIATE_TEST_SUITE_P(Seeds, AnalysisBruteForce, ::testing::Range(0, 40));

// Aggressive amalgamation (everything merges) still gives a valid structure.
TEST(AnalysisDriver, AggressiveAmalgamation) {
  std::mt19937_64 rng(77);
  for (int rep = 0; rep < 30; ++rep)
    for (auto kind : testing::kAllKinds) {
      const idx_t n = testing::random_order(rng);
      const CscMatrix A = testing::random_pattern(kind, n, rng);
      AnalysisOptions o = options(OrderingMethod::scotch, true);
      o.relax_small = 1000;
      SymbolicFactor sf;
      ASSERT_TRUE(analyse(A, o, sf).ok());
      expect_matches_brute_force(A, sf, true);
      // Every child merges: one supernode per connected component of the filled graph.
      for (idx_t s = 0; s < sf.nsuper; ++s) ASSERT_EQ(sf.super_parent[s], -1);
    }
}

// The marginal rule of the amalgamation (AnalysisOptions::relax_marginal), on
// a hand-made chain a -> c -> p (fundamental supernodes 0, 1, 2 in
// postorder; kc columns, front order m: a 6 x 20, c 8 x mc, p 20 x 100).
// a merges into c under the relax_mid rule (14 columns, z <= 0.8) with
// 6·(6 + mc − 20) explicit zeros. With mc = 107 the merged c (14 columns,
// order 113, 558 zeros) then costs p 14·(14 + 100 − 113) = 14 new zeros,
// 0.94% of its trapezoid (105 + 14·99 = 1491 entries), but the merged
// front's zero fraction is (558 + 14) / (34·35/2 + 34·80 = 3315) = 17.3%:
// CHOLMOD's rule refuses (> 10%), the marginal rule at 1% takes it (cap
// 20%), and refuses it under a cap of 15%, or with mc = 106 (28 new zeros,
// 1.9%).
SupernodePartition chain_partition(idx_t mc, std::vector<idx_t>& colcount) {
  SupernodePartition f;
  f.start = {0, 6, 14, 34};
  f.parent = {1, 2, -1};
  colcount.assign(34, 0);
  const idx_t order[3] = {20, mc, 100};
  for (idx_t s = 0; s < 3; ++s)  // a fundamental supernode's columns: m, m - 1, ...
    for (idx_t j = f.start[s]; j < f.start[s + 1]; ++j) colcount[j] = order[s] - (j - f.start[s]);
  return f;
}

TEST(Amalgamation, MarginalRuleTakesAThinChildIntoAFilledParent) {
  std::vector<idx_t> cc;
  AnalysisOptions o;
  ASSERT_EQ(o.relax_marginal, 0.01);  // the default
  ASSERT_EQ(o.relax_zeros_cap, 0.2);
  struct Case {
    idx_t mc;
    double marginal, cap;
    std::vector<idx_t> start;
  };
  const Case cases[] = {
      {107, 0.01, 0.2, {0, 34}},       // the marginal rule merges all three
      {107, 0.0, 0.2, {0, 14, 34}},    // off: CHOLMOD's rule alone (a+c, p)
      {107, 0.01, 0.15, {0, 14, 34}},  // z = 17.3% over the cap
      {106, 0.01, 0.2, {0, 14, 34}},   // 28 new zeros: 1.9% of the child
      {106, 0.02, 0.2, {0, 34}},
  };
  for (const Case& k : cases) {
    SCOPED_TRACE("mc " + std::to_string(k.mc) + " marginal " + std::to_string(k.marginal) + " cap " +
                 std::to_string(k.cap));
    const SupernodePartition f = chain_partition(k.mc, cc);
    o.relax_marginal = k.marginal;
    o.relax_zeros_cap = k.cap;
    const Amalgamation am = amalgamate(f, cc, o);
    EXPECT_EQ(am.super.start, k.start);
    std::vector<idx_t> identity(34);
    std::iota(identity.begin(), identity.end(), idx_t{0});
    EXPECT_EQ(am.order, identity);  // a chain's parts are already contiguous
  }
}

// The marginal rule on every pattern kind, taken to its extreme (every merge
// whose new zeros are at most the child's trapezoid, up to a zero fraction of
// 1): the structure still holds every entry of the exact factor.
TEST(Amalgamation, MarginalRuleKeepsTheStructureValid) {
  std::mt19937_64 rng(4242);
  for (int rep = 0; rep < 10; ++rep)
    for (auto kind : testing::kAllKinds) {
      const idx_t n = testing::random_order(rng);
      const CscMatrix A = testing::random_pattern(kind, n, rng);
      for (double marginal : {0.01, 1.0}) {
        SCOPED_TRACE(std::string(testing::pattern_name(kind)) + " n=" + std::to_string(n) +
                     " marginal=" + std::to_string(marginal));
        AnalysisOptions o = options(OrderingMethod::scotch, true);
        o.relax_marginal = marginal;
        o.relax_zeros_cap = marginal >= 1.0 ? 1.0 : o.relax_zeros_cap;
        SymbolicFactor sf;
        ASSERT_TRUE(analyse(A, o, sf).ok());
        expect_matches_brute_force(A, sf, true);
        if (HasFatalFailure()) return;
      }
    }
}

// On the 3D 7-point Laplacian 40^3 (where Scotch's separators leave chains
// of thin supernodes) the rule takes fronts away and keeps nnz(L) within
// 1% of CHOLMOD's rule alone.
TEST(Amalgamation, MarginalRuleOnLaplacian) {
  CscMatrix A;
  ASSERT_TRUE(laplace3d(40, 7, A).ok());
  AnalysisOptions off;
  off.relax_marginal = 0.0;
  SymbolicFactor with, without;
  ASSERT_TRUE(analyse(A, AnalysisOptions{}, with).ok());
  ASSERT_TRUE(analyse(A, off, without).ok());
  expect_structure(with);
  EXPECT_EQ(with.nnz_l_exact, without.nnz_l_exact);
  EXPECT_LT(with.nsuper, without.nsuper);
  auto large = [](const SymbolicFactor& sf) {
    idx_t n = 0;
    for (idx_t s = 0; s < sf.nsuper; ++s) n += sf.front_ptr[s + 1] - sf.front_ptr[s] > 600;
    return n;
  };
  EXPECT_LT(large(with), large(without));
  EXPECT_LT(static_cast<double>(with.nnz_l), 1.01 * static_cast<double>(without.nnz_l));
  std::printf("lap3d 40^3: %lld supernodes (%lld of order > 600) with the marginal rule, %lld (%lld) without; "
              "nnz(L) %lld / %lld\n",
              static_cast<long long>(with.nsuper), static_cast<long long>(large(with)),
              static_cast<long long>(without.nsuper), static_cast<long long>(large(without)),
              static_cast<long long>(with.nnz_l), static_cast<long long>(without.nnz_l));
}

// The critical-path rule (AnalysisOptions::relax_critical_path) and the
// front cap, on random patterns of every kind and random latency models:
// the structure is valid (brute force), the exact fill is the plain rule's
// (merging only renumbers within topological orders), the modelled path is
// never longer than without amalgamation or with the plain rule (same cap),
// the reported path is the final tree's, and merged fronts respect the cap.
TEST(Amalgamation, CriticalPathRuleNeverLengthensThePath) {
  std::mt19937_64 rng(4343);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  int shorter = 0, runs = 0;
  for (int rep = 0; rep < 40; ++rep)
    for (auto kind : testing::kAllKinds) {
      const idx_t n = rep % 4 == 3 ? 150 + static_cast<idx_t>(rng() % 150) : testing::random_order(rng);
      const CscMatrix A = testing::random_pattern(kind, n, rng);
      AnalysisOptions o = options(rep % 2 ? OrderingMethod::scotch_amd : OrderingMethod::scotch_nd, true);
      o.latency = {20e-6 * u(rng), 1e-6 * u(rng), 2e-9 * u(rng)};
      o.relax_max_front = rep % 3 == 0 ? 0 : 4 + static_cast<idx_t>(rng() % 40);
      if (rep % 5 == 4) o.relax_small = 64;  // the plain rule merges nearly everything
      AnalysisOptions plain = o, fund = o;
      o.relax_critical_path = true;
      fund.amalgamate = false;
      SCOPED_TRACE(std::string(testing::pattern_name(kind)) + " n=" + std::to_string(n) +
                   " rep=" + std::to_string(rep) + " cap=" + std::to_string(o.relax_max_front));
      SymbolicFactor sf, sp, sn;
      ASSERT_TRUE(analyse(A, o, sf).ok());
      ASSERT_TRUE(analyse(A, plain, sp).ok());
      ASSERT_TRUE(analyse(A, fund, sn).ok());
      if (n <= 300) expect_matches_brute_force(A, sf, true);
      if (HasFatalFailure()) return;
      EXPECT_EQ(sf.nnz_l_exact, sp.nnz_l_exact);
      EXPECT_EQ(sf.critical_path_s, critical_path(sf, o.latency).seconds);
      EXPECT_LE(sf.critical_path_s, sp.critical_path_s * (1 + 1e-9));
      EXPECT_LE(sf.critical_path_s, sn.critical_path_s * (1 + 1e-9));
      if (o.relax_max_front > 0) {
        EXPECT_LE(sf.max_front, std::max(o.relax_max_front, sn.max_front));
        EXPECT_LE(sp.max_front, std::max(o.relax_max_front, sn.max_front));
      }
      ++runs;
      shorter += sf.critical_path_s < sp.critical_path_s * (1 - 1e-9);
    }
  // The rule is not a no-op on these inputs.
  EXPECT_GT(shorter, runs / 10) << shorter << " of " << runs << " trees got a shorter path";
  std::printf("critical-path rule: %d of %d trees shorter than with the plain rule\n", shorter, runs);
}

// The merged structure `am` of the fundamental analysis `fsf`, built for
// real: permutation composed, fronts by build_fronts on P A Pᵀ.
SymbolicFactor apply_amalgamation(const CscMatrix& A, const SymbolicFactor& fsf, const Amalgamation& am) {
  SymbolicFactor out;
  out.n = fsf.n;
  out.perm = compose_permutations(fsf.perm, am.order);
  out.iperm = invert_permutation(out.perm);
  out.nsuper = am.super.nsuper();
  out.super_start = am.super.start;
  out.super_parent = am.super.parent;
  build_fronts(permute_symmetric(A, out.perm), out);
  compute_front_counts(out);
  return out;
}

// The critical-path rule's own result (amalgamate_critical_path, pass 1
// alone and both passes), on random patterns, random models and caps:
// every merged front's order is the real one (fronts built from scratch),
// the exact fill is unchanged (brute force), the path is never longer than
// without amalgamation, pass 2 never lengthens pass 1's path nor adds
// fronts, and only unmerged fundamental fronts exceed the cap.
TEST(Amalgamation, CriticalPathPassesOwnResult) {
  std::mt19937_64 rng(4411);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  int fewer = 0;
  for (int rep = 0; rep < 200; ++rep)
    for (auto kind : testing::kAllKinds) {
      const idx_t n = rep % 8 == 7 ? 120 + static_cast<idx_t>(rng() % 180) : testing::random_order(rng);
      const CscMatrix A = testing::random_pattern(kind, n, rng);
      AnalysisOptions o = options(rep % 2 ? OrderingMethod::scotch_amd : OrderingMethod::scotch_nd, false);
      // Random models, and extreme ones: fixed cost only, columns only,
      // the CB update dominant.
      const int model = rep % 5;
      o.latency = model == 1   ? FrontLatencyModel{1.0, 0.0, 0.0}
                  : model == 2 ? FrontLatencyModel{0.0, 1.0, 0.0}
                  : model == 3 ? FrontLatencyModel{1e-3 * u(rng), 1e-3 * u(rng), u(rng)}
                               : FrontLatencyModel{20e-6 * u(rng), 1e-6 * u(rng), 2e-9 * u(rng)};
      o.relax_max_front = rep % 4 == 0 ? 0 : 3 + static_cast<idx_t>(rng() % 40);
      if (rep % 5 == 4) o.relax_small = 64;
      SCOPED_TRACE(std::string(testing::pattern_name(kind)) + " n=" + std::to_string(n) +
                   " rep=" + std::to_string(rep));
      SymbolicFactor fsf;
      ASSERT_TRUE(analyse(A, o, fsf).ok());
      SupernodePartition fund;
      std::vector<idx_t> colcount;
      testing::fundamental_of(fsf, fund, colcount);
      const double path0 = critical_path(fsf, o.latency).seconds;
      double path1 = 0.0;
      idx_t nsuper1 = 0;
      for (bool second : {false, true}) {
        const Amalgamation am = amalgamate_critical_path(fund, colcount, o, second);
        const SymbolicFactor sf = apply_amalgamation(A, fsf, am);
        expect_structure(sf);
        if (HasFatalFailure()) return;
        for (idx_t s = 0; s < sf.nsuper; ++s) {
          ASSERT_EQ(sf.front_order(s), am.front_order[s]) << "supernode " << s << " second " << second;
          // Above the cap only a fundamental front left alone.
          if (o.relax_max_front > 0 && sf.front_order(s) > o.relax_max_front) {
            const idx_t last = am.order[am.super.start[s + 1] - 1];
            const idx_t f = fsf.col_to_super[last];
            EXPECT_EQ(sf.ncols(s), fsf.ncols(f)) << "a merged front above the cap";
          }
        }
        if (n <= 300) {
          const DenseSymbolic L(permute_symmetric(A, sf.perm));
          EXPECT_EQ(L.nnz(), fsf.nnz_l_exact) << "second " << second;
        }
        const double path = critical_path(sf, o.latency).seconds;
        EXPECT_LE(path, path0 * (1 + 1e-9)) << "second " << second;
        if (!second) {
          path1 = path;
          nsuper1 = sf.nsuper;
        } else {
          EXPECT_LE(path, path1 * (1 + 1e-9));
          EXPECT_LE(sf.nsuper, nsuper1);
          fewer += sf.nsuper < nsuper1;
        }
      }
    }
  EXPECT_GT(fewer, 50) << "pass 2 merged nothing";
  std::printf("critical-path rule: pass 2 left fewer fronts than pass 1 alone in %d trees\n", fewer);
}

// A broom: a handle (a chain of single columns) and bristles (leaves), all
// under one root column, natural order, zeros allowed. The plain rule merges
// everything into one front, the bristles' columns onto the handle's path;
// the critical-path rule merges the handle into one front and keeps it, the
// root and the bristles apart (merging the handle into the root would put
// the bristles below the grown root: 0.5 + 21 + 1.5 against 0.5 + 20 + 1.5):
// a shorter path, and amalgamate() keeps it.
TEST(Amalgamation, CriticalPathRuleOnABroom) {
  const idx_t handle = 20, bristles = 12, n = handle + bristles + 1, root = n - 1;
  std::vector<std::pair<idx_t, idx_t>> pairs;
  for (idx_t j = 0; j < bristles; ++j) pairs.push_back({root, j});  // leaves first
  for (idx_t j = bristles; j + 1 < root; ++j) pairs.push_back({j + 1, j});
  pairs.push_back({root, root - 1});
  const CscMatrix A = testing::pattern_from_pairs(n, pairs);
  AnalysisOptions plain = options(OrderingMethod::natural, true);
  plain.relax_small = 1000;  // the zero rule accepts every merge
  plain.latency = {0.5, 1.0, 0.0};
  AnalysisOptions path = plain;
  path.relax_critical_path = true;
  SymbolicFactor sp, sc;
  ASSERT_TRUE(analyse(A, plain, sp).ok());
  ASSERT_TRUE(analyse(A, path, sc).ok());
  expect_matches_brute_force(A, sc, true);
  EXPECT_EQ(sp.nsuper, 1);
  EXPECT_EQ(sp.critical_path_s, 0.5 + n);
  EXPECT_EQ(sc.nsuper, 2 + bristles);
  EXPECT_EQ(sc.critical_path_s, (0.5 + handle) + (0.5 + 1));
  EXPECT_EQ(sc.critical_path_fronts, 2);
  EXPECT_EQ(sc.critical_path_columns, handle + 1);
  // Under a cap of 8 rows the handle is cut into fronts of order <= 8.
  path.relax_max_front = 8;
  ASSERT_TRUE(analyse(A, path, sc).ok());
  expect_matches_brute_force(A, sc, true);
  EXPECT_LE(sc.max_front, 8);
  EXPECT_GT(sc.critical_path_fronts, 1);
}

// OrderingChoice::critical_path keeps whichever of Scotch's two orderings
// gives the shorter modelled path (same options otherwise).
TEST(AnalysisOrdering, CriticalPathChoiceKeepsTheShorterPath) {
  std::mt19937_64 rng(17);
  for (int rep = 0; rep < 12; ++rep)
    for (auto kind : {testing::PatternKind::random, testing::PatternKind::arrow,
                      testing::PatternKind::disconnected}) {
      const idx_t n = 20 + static_cast<idx_t>(rng() % 200);
      const CscMatrix A = testing::random_pattern(kind, n, rng);
      AnalysisOptions o = options(OrderingMethod::scotch, true);
      o.ordering_choice = OrderingChoice::critical_path;
      o.relax_critical_path = rep % 2 == 1;
      AnalysisOptions nd = o, md = o;
      nd.ordering = OrderingMethod::scotch_nd;
      md.ordering = OrderingMethod::scotch_amd;
      SymbolicFactor sf, snd, smd;
      ASSERT_TRUE(analyse(A, o, sf).ok());
      ASSERT_TRUE(analyse(A, nd, snd).ok());
      ASSERT_TRUE(analyse(A, md, smd).ok());
      expect_structure(sf);
      const bool md_wins = smd.critical_path_s < snd.critical_path_s ||
                           (smd.critical_path_s == snd.critical_path_s && smd.flops_exact < snd.flops_exact);
      EXPECT_EQ(sf.perm, md_wins ? smd.perm : snd.perm) << "n=" << n << " rep " << rep;
      EXPECT_EQ(sf.critical_path_s, std::min(snd.critical_path_s, smd.critical_path_s));
    }
}

// The latency rule by brute force: the flops analysis and the
// critical-path analysis of each candidate ordering run separately (no
// column-count shortcut), the ones whose fronts exceed the limit dropped.
struct RuleReference {
  SymbolicFactor chosen;
  bool path_chosen = false;
  double path_s = -1.0;
};

RuleReference latency_rule_reference(const CscMatrix& A, const AnalysisOptions& o, idx_t F) {
  RuleReference r;
  SymbolicFactor flops;
  EXPECT_TRUE(analyse(A, o, flops).ok());
  std::vector<OrderingMethod> methods{o.ordering};
  if (o.ordering == OrderingMethod::scotch) methods = {OrderingMethod::scotch_nd, OrderingMethod::scotch_amd};
  bool have = false;
  SymbolicFactor best;
  for (OrderingMethod m : methods) {
    AnalysisOptions p = o;
    p.ordering = m;
    p.relax_critical_path = true;
    p.relax_max_front = F;
    SymbolicFactor s;
    EXPECT_TRUE(analyse(A, p, s).ok());
    if (s.max_front > F) continue;
    if (!have || s.critical_path_s < best.critical_path_s ||
        (s.critical_path_s == best.critical_path_s && s.flops_exact < best.flops_exact))
      best = std::move(s), have = true;
  }
  if (have) r.path_s = best.critical_path_s;
  r.path_chosen = have && (flops.max_front > F || best.critical_path_s < flops.critical_path_s);
  r.chosen = r.path_chosen ? std::move(best) : std::move(flops);
  return r;
}

// AnalysisOptions::latency_rule_front against the brute-force rule on
// random, arrow and disconnected patterns, limits from 4 to 64 (both
// outcomes occur), Scotch's choice by flops and explicit orderings: the
// same permutation, supernodes and path, a valid structure, and a report
// that says what was compared.
TEST(LatencyRule, MatchesTheRuleRunByBruteForce) {
  std::mt19937_64 rng(20261205);
  int chose[2] = {0, 0};
  for (int rep = 0; rep < 10; ++rep)
    for (auto kind : {testing::PatternKind::random, testing::PatternKind::arrow,
                      testing::PatternKind::disconnected}) {
      const idx_t n = 30 + static_cast<idx_t>(rng() % 250);
      const CscMatrix A = testing::random_pattern(kind, n, rng);
      const OrderingMethod m = rep % 3 == 2 ? OrderingMethod::scotch_amd : OrderingMethod::scotch;
      const AnalysisOptions o = options(m, true);
      for (idx_t F : {4, 12, 24, 64}) {
        SCOPED_TRACE("n=" + std::to_string(n) + " rep " + std::to_string(rep) + " F " + std::to_string(F));
        AnalysisOptions r = o;
        r.latency_rule_front = F;
        SymbolicFactor sf;
        ASSERT_TRUE(analyse(A, r, sf).ok());
        expect_structure(sf);
        const RuleReference ref = latency_rule_reference(A, o, F);
        EXPECT_EQ(sf.perm, ref.chosen.perm);
        EXPECT_EQ(sf.super_start, ref.chosen.super_start);
        EXPECT_EQ(sf.critical_path_s, ref.chosen.critical_path_s);
        EXPECT_EQ(sf.ordering_used, ref.chosen.ordering_used);
        EXPECT_TRUE(sf.latency_rule.applied);
        EXPECT_EQ(sf.latency_rule.critical_path_chosen, ref.path_chosen);
        EXPECT_EQ(sf.latency_rule.front_limit, F);
        EXPECT_EQ(sf.latency_rule.path_path_s, ref.path_s);
        EXPECT_EQ(sf.critical_path_amalgamation, ref.path_chosen);
        EXPECT_EQ(sf.amalgamation_max_front, ref.path_chosen ? F : 0);
        if (ref.path_chosen) {
          EXPECT_LE(sf.max_front, F);
        }
        ++chose[ref.path_chosen ? 1 : 0];
      }
    }
  EXPECT_GT(chose[0], 0) << "no case kept the flops analysis";
  EXPECT_GT(chose[1], 0) << "no case took the critical-path analysis";
  std::printf("[ info ] latency rule: flops analysis kept %d times, critical-path analysis taken %d times\n", chose[0],
              chose[1]);
}

// A mesh keeps the flops analysis: its largest column count is far above
// the limit, so no critical-path analysis is built (the report says -1);
// with the rule off the report says it did not run.
TEST(LatencyRule, MeshKeepsTheFlopsAnalysis) {
  CscMatrix A;
  ASSERT_TRUE(laplace3d(16, 7, A).ok());
  SymbolicFactor plain, ruled;
  ASSERT_TRUE(analyse(A, AnalysisOptions{}, plain).ok());
  EXPECT_FALSE(plain.latency_rule.applied);
  EXPECT_FALSE(plain.critical_path_amalgamation);
  AnalysisOptions o;
  o.latency_rule_front = 232;
  ASSERT_TRUE(analyse(A, o, ruled).ok());
  EXPECT_TRUE(ruled.latency_rule.applied);
  EXPECT_FALSE(ruled.latency_rule.critical_path_chosen);
  EXPECT_EQ(ruled.latency_rule.path_path_s, -1.0);
  EXPECT_EQ(ruled.latency_rule.path_max_front, -1);
  EXPECT_EQ(ruled.latency_rule.flops_max_front, plain.max_front);
  EXPECT_GT(plain.max_front, 232);
  EXPECT_EQ(ruled.perm, plain.perm);
  EXPECT_EQ(ruled.super_start, plain.super_start);
}

// The rule chooses the amalgamation itself: with another amalgamation, or a
// negative limit, it is refused naming the option, `out` untouched.
TEST(LatencyRule, RejectsOptionsItWouldOverride) {
  std::mt19937_64 rng(7);
  const CscMatrix A = testing::random_pattern(testing::PatternKind::random, 40, rng);
  SymbolicFactor sf;
  sf.n = -7;
  for (int which = 0; which < 4; ++which) {
    AnalysisOptions o;
    o.latency_rule_front = which == 0 ? -1 : 232;
    if (which == 1) o.amalgamate = false;
    if (which == 2) o.relax_critical_path = true;
    if (which == 3) o.relax_max_front = 100;
    const Status st = analyse(A, o, sf);
    EXPECT_EQ(st.code, StatusCode::invalid_argument) << which;
    EXPECT_NE(st.message.find("latency_rule_front"), std::string::npos) << st.message;
    EXPECT_EQ(sf.n, -7);
  }
}

TEST(AnalysisDriver, EmptyAndTinyMatrices) {
  for (auto method : {OrderingMethod::natural, OrderingMethod::scotch, OrderingMethod::user}) {
    SymbolicFactor sf;
    AnalysisOptions o = options(method, true);
    ASSERT_TRUE(analyse(CscMatrix{}, o, sf).ok());
    EXPECT_EQ(sf.n, 0);
    EXPECT_EQ(sf.nsuper, 0);
    EXPECT_EQ(sf.nnz_l, 0);
    EXPECT_EQ(sf.super_start, std::vector<idx_t>{0});
    EXPECT_EQ(sf.front_ptr, std::vector<idx_t>{0});

    CscMatrix one;  // 1x1 without even a diagonal entry
    one.n = 1;
    one.colptr = {0, 0};
    o.user_perm = {0};
    ASSERT_TRUE(analyse(one, o, sf).ok());
    EXPECT_EQ(sf.nsuper, 1);
    EXPECT_EQ(sf.nnz_l, 1);
    EXPECT_EQ(sf.flops, 1.0);
    EXPECT_EQ(sf.front_rows, std::vector<idx_t>{0});
  }
}

TEST(AnalysisDriver, DiagonalMatrixHasOneSupernodePerColumn) {
  const idx_t n = 100;
  std::vector<std::pair<idx_t, idx_t>> d;
  for (idx_t i = 0; i < n; ++i) d.emplace_back(i, i);
  const CscMatrix A = testing::pattern_from_pairs(n, d);
  for (auto method : {OrderingMethod::natural, OrderingMethod::scotch}) {
    SymbolicFactor sf;
    ASSERT_TRUE(analyse(A, options(method, true), sf).ok());
    EXPECT_EQ(sf.nsuper, n);
    EXPECT_EQ(sf.nnz_l, n);
    EXPECT_EQ(sf.max_front, 1);
  }
}

// Bad latency figures or a negative front cap are refused, naming the
// option, and leave `out` untouched.
TEST(AnalysisDriver, RejectsBadCriticalPathOptions) {
  std::mt19937_64 rng(5);
  const CscMatrix A = testing::random_pattern(testing::PatternKind::random, 30, rng);
  SymbolicFactor sf;
  sf.n = -7;  // a marker: must survive every refusal
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  for (int which = 0; which < 3; ++which)
    for (double bad : {-1e-6, nan, inf}) {
      AnalysisOptions o;
      o.relax_critical_path = true;
      double* field = which == 0 ? &o.latency.per_front : which == 1 ? &o.latency.per_column : &o.latency.per_update;
      *field = bad;
      const Status st = analyse(A, o, sf);
      EXPECT_EQ(st.code, StatusCode::invalid_argument) << which << " " << bad;
      EXPECT_NE(st.message.find(which == 0 ? "per_front" : which == 1 ? "per_column" : "per_update"),
                std::string::npos)
          << st.message;
      EXPECT_EQ(sf.n, -7);
    }
  AnalysisOptions o;
  o.relax_max_front = -1;
  const Status st = analyse(A, o, sf);
  EXPECT_EQ(st.code, StatusCode::invalid_argument);
  EXPECT_NE(st.message.find("relax_max_front"), std::string::npos) << st.message;
  EXPECT_EQ(sf.n, -7);
}

TEST(AnalysisDriver, RejectsRelaxedRuleThresholdsNamingTheField) {
  std::mt19937_64 rng(11);
  const CscMatrix A = testing::random_pattern(testing::PatternKind::random, 40, rng);
  SymbolicFactor sf;
  sf.n = -7;  // a marker: must survive every refusal
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  const char* fractions[] = {"relax_zeros_small", "relax_zeros_large", "relax_marginal", "relax_zeros_cap"};
  for (int which = 0; which < 4; ++which)
    for (double bad : {-0.5, nan, inf, -inf}) {
      AnalysisOptions o;
      double* field = which == 0   ? &o.relax_zeros_small
                      : which == 1 ? &o.relax_zeros_large
                      : which == 2 ? &o.relax_marginal
                                   : &o.relax_zeros_cap;
      *field = bad;
      const Status st = analyse(A, o, sf);
      EXPECT_EQ(st.code, StatusCode::invalid_argument) << fractions[which] << " " << bad;
      EXPECT_NE(st.message.find(fractions[which]), std::string::npos) << st.message;
      EXPECT_EQ(sf.n, -7);
    }
  for (int which = 0; which < 2; ++which) {
    AnalysisOptions o;
    (which == 0 ? o.relax_small : o.relax_mid) = -1;
    const Status st = analyse(A, o, sf);
    EXPECT_EQ(st.code, StatusCode::invalid_argument);
    EXPECT_NE(st.message.find(which == 0 ? "relax_small" : "relax_mid"), std::string::npos) << st.message;
    EXPECT_EQ(sf.n, -7);
  }
  // The boundary values are settings, not errors.
  AnalysisOptions zero;
  zero.relax_small = zero.relax_mid = 0;
  zero.relax_zeros_small = zero.relax_zeros_large = zero.relax_marginal = zero.relax_zeros_cap = 0.0;
  EXPECT_TRUE(analyse(A, zero, sf).ok());
  EXPECT_EQ(sf.n, A.n);
}

TEST(AnalysisDriver, RejectsMalformedMatrix) {
  CscMatrix A;
  A.n = 2;
  A.colptr = {0, 1, 2};
  A.rowind = {1, 0};  // (0, 1) is in the upper triangle
  A.values = {1, 1};
  SymbolicFactor sf;
  EXPECT_EQ(analyse(A, AnalysisOptions{}, sf).code, StatusCode::invalid_argument);
}

TEST(AnalysisDriver, RejectsBadUserPermutationNamingTheEntry) {
  std::mt19937_64 rng(3);
  const CscMatrix A = testing::random_pattern(testing::PatternKind::random, 5, rng);
  AnalysisOptions o = options(OrderingMethod::user, true);
  SymbolicFactor sf;
  o.user_perm = {0, 1, 2, 1, 4};
  Status st = analyse(A, o, sf);
  EXPECT_EQ(st.code, StatusCode::invalid_argument);
  EXPECT_NE(st.message.find("user_perm"), std::string::npos) << st.message;
  EXPECT_NE(st.message.find("perm[3] = 1"), std::string::npos) << st.message;
  o.user_perm = {0, 1, 2, 3, 5};
  st = analyse(A, o, sf);
  EXPECT_EQ(st.code, StatusCode::invalid_argument);
  EXPECT_NE(st.message.find("perm[4] = 5"), std::string::npos) << st.message;
  o.user_perm = {0, 1, 2};
  EXPECT_EQ(analyse(A, o, sf).code, StatusCode::invalid_argument);
  EXPECT_EQ(sf.n, 0) << "output written on failure";
}

TEST(AnalysisOrdering, ScotchIsDeterministicAndAPermutation) {
  CscMatrix A;
  ASSERT_TRUE(laplace2d(30, A).ok());
  std::vector<idx_t> p1, p2;
  ASSERT_TRUE(order_scotch(A, p1).ok());
  ASSERT_TRUE(order_scotch(A, p2).ok());
  EXPECT_TRUE(check_permutation(p1, A.n).ok());
  EXPECT_EQ(p1, p2);
}

TEST(AnalysisOrdering, ScotchHandlesDegenerateGraphs) {
  std::vector<idx_t> p;
  ASSERT_TRUE(order_scotch(CscMatrix{}, p).ok());
  EXPECT_TRUE(p.empty());
  std::mt19937_64 rng(4);
  for (auto kind : {testing::PatternKind::diagonal, testing::PatternKind::empty_cols,
                    testing::PatternKind::disconnected, testing::PatternKind::no_diag}) {
    const CscMatrix A = testing::random_pattern(kind, 40, rng);
    ASSERT_TRUE(order_scotch(A, p).ok()) << testing::pattern_name(kind);
    EXPECT_TRUE(check_permutation(p, 40).ok());
  }
}

// order_scotch checks its input itself (it no longer relies on
// SCOTCH_graphCheck): a column with a repeated or unsorted row index, or an
// index out of range, gives an error and leaves perm as it was. A dense
// matrix (every vertex adjacent to all others) orders to a permutation.
TEST(AnalysisOrdering, ScotchRejectsAnInvalidCscAndOrdersADenseOne) {
  CscMatrix A;
  ASSERT_TRUE(laplace2d(6, A).ok());
  const std::vector<idx_t> before{7, 7, 7};
  for (int fault = 0; fault < 3; ++fault) {
    CscMatrix B = A;
    const idx_t p = B.colptr[3] + 1;  // column 3's second entry (below the diagonal)
    if (fault == 0) B.rowind[p + 1] = B.rowind[p];        // an off-diagonal entry repeated
    if (fault == 1) std::swap(B.rowind[p], B.rowind[p + 1]);  // unsorted
    if (fault == 2) B.rowind[p] = B.n + 5;                // out of range
    std::vector<idx_t> perm = before;
    EXPECT_FALSE(order_scotch(B, perm).ok()) << "fault " << fault;
    EXPECT_EQ(perm, before) << "fault " << fault;
  }
  CscMatrix D;
  D.n = 60;
  D.colptr.assign(61, 0);
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (idx_t j = 0; j < D.n; ++j) {
    for (idx_t i = j; i < D.n; ++i) {
      D.rowind.push_back(i);
      D.values.push_back(i == j ? 60.0 : u(rng));
    }
    D.colptr[j + 1] = static_cast<idx_t>(D.rowind.size());
  }
  std::vector<idx_t> perm;
  ASSERT_TRUE(order_scotch(D, perm).ok());
  EXPECT_TRUE(check_permutation(perm, D.n).ok());
}

// Nested dissection must beat the natural order by far on a 2D grid.
TEST(AnalysisDriver, ScotchReducesFillOnGrid) {
  CscMatrix A;
  ASSERT_TRUE(laplace2d(60, A).ok());
  SymbolicFactor nat, nd;
  ASSERT_TRUE(analyse(A, options(OrderingMethod::natural, true), nat).ok());
  ASSERT_TRUE(analyse(A, options(OrderingMethod::scotch, true), nd).ok());
  expect_structure(nd);
  // Natural (banded, bandwidth 60): nnz(L) ~ 60^3 = 2.2e5, flops ~ 60^4 = 1.3e7.
  std::printf("[ info ] laplace2d 60^2: natural nnz(L) %lld flops %.3g; scotch nnz(L) %lld flops %.3g\n",
              static_cast<long long>(nat.nnz_l_exact), nat.flops_exact,
              static_cast<long long>(nd.nnz_l_exact), nd.flops_exact);
  EXPECT_LT(nd.nnz_l_exact * 3, nat.nnz_l_exact * 2);
  EXPECT_LT(nd.flops_exact * 3, nat.flops_exact);
}

// Large inputs stay fast (no O(n²) step): a chain of 10^6 (a tree of depth
// 10^6) and a 3D grid with Scotch.
TEST(AnalysisDriver, LargeInputsAreFast) {
  using clock = std::chrono::steady_clock;
  const idx_t n = 1000000;
  std::vector<idx_t> r, c;
  std::vector<double> v;
  for (idx_t i = 0; i < n; ++i) {
    r.push_back(i), c.push_back(i), v.push_back(2.0);
    if (i > 0) r.push_back(i), c.push_back(i - 1), v.push_back(-1.0);
  }
  CscMatrix chain;
  ASSERT_TRUE(lower_csc_from_triplets(n, r, c, v, chain).ok());
  auto t0 = clock::now();
  SymbolicFactor sf;
  ASSERT_TRUE(analyse(chain, options(OrderingMethod::natural, true), sf).ok());
  const double t_chain = std::chrono::duration<double>(clock::now() - t0).count();
  expect_structure(sf);
  EXPECT_EQ(sf.nnz_l_exact, 2 * n - 1);

  CscMatrix grid;
  ASSERT_TRUE(laplace3d(40, 7, grid).ok());
  t0 = clock::now();
  ASSERT_TRUE(analyse(grid, options(OrderingMethod::scotch, true), sf).ok());
  const double t_grid = std::chrono::duration<double>(clock::now() - t0).count();
  expect_structure(sf);
  std::printf("[ info ] chain n=1e6 natural: %.2f s; laplace3d 40^3 scotch: %.2f s, nnz(L) %lld "
              "(exact %lld), flops %.3g (exact %.3g), %lld supernodes, max front %lld\n",
              t_chain, t_grid, static_cast<long long>(sf.nnz_l),
              static_cast<long long>(sf.nnz_l_exact), sf.flops, sf.flops_exact,
              static_cast<long long>(sf.nsuper), static_cast<long long>(sf.max_front));
  EXPECT_LT(t_grid, 30.0);
}

}  // namespace
}  // namespace starfront
