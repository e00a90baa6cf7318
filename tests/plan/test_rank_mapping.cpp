// Mapping of the task graph onto MPI ranks (plan/rank_mapping.hpp), checked
// against brute force: proportional intervals and subtree work recomputed
// node by node on random forests; the communication lower bound of a
// one-task-per-front graph against the contribution blocks whose front and
// parent sit on different ranks; per-rank slots replayed by the slot
// checker; per-rank memory summing to the one-process figures.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

#include "common/problem.hpp"
#include "common/random_matrices.hpp"
#include "plan/rank_mapping.hpp"
#include "plan/slot_check.hpp"
#include "sparse/generators.hpp"

namespace starfront {
namespace {

using testing::Problem;
using testing::random_spd;
using testing::setup;

/// A random forest in postorder numbering (parent[s] > s or -1) and random work.
void random_forest(idx_t n, std::uint64_t seed, std::vector<idx_t>& parent, std::vector<double>& work) {
  std::mt19937_64 rng(seed);
  parent.assign(n, -1);
  work.assign(n, 0.0);
  for (idx_t s = 0; s + 1 < n; ++s)
    if (rng() % 10 != 0) parent[s] = s + 1 + static_cast<idx_t>(rng() % std::min<idx_t>(n - s - 1, 6));
  for (idx_t s = 0; s < n; ++s) work[s] = (rng() % 4 == 0) ? 0.0 : static_cast<double>(rng() % 1000000);
}

/// Brute force: is a an ancestor of (or equal to) s?
bool ancestor_or_self(const std::vector<idx_t>& parent, idx_t a, idx_t s) {
  for (; s >= 0; s = parent[s])
    if (s == a) return true;
  return false;
}

TEST(RankMapping, ProportionalIntervalsMatchBruteForce) {
  for (std::uint64_t seed = 1; seed <= 40; ++seed)
    for (int P : {1, 2, 3, 4, 7}) {
      std::vector<idx_t> parent;
      std::vector<double> work;
      const idx_t n = 1 + static_cast<idx_t>(seed * 7 % 90);
      random_forest(n, seed, parent, work);
      TreeMapping m;
      ASSERT_TRUE(proportional_mapping(parent, work, P, m).ok());
      double total = 0;
      for (idx_t s = 0; s < n; ++s) total += work[s] + 1.0;
      for (idx_t s = 0; s < n; ++s) {
        double w = 0;  // brute-force subtree work
        for (idx_t x = 0; x < n; ++x)
          if (ancestor_or_self(parent, s, x)) w += work[x] + 1.0;
        ASSERT_NEAR(m.subtree_work[s], w, 1e-9 * w);
        ASSERT_GE(m.master[s], m.first_rank[s]);
        ASSERT_LT(m.master[s], m.first_rank[s] + m.nranks_of[s]);
        ASSERT_LE(m.first_rank[s] + m.nranks_of[s], P);
        const idx_t p = parent[s];
        if (p >= 0 && m.nranks_of[p] == 1) {  // one-rank subtrees stay on their rank
          EXPECT_EQ(m.nranks_of[s], 1);
          EXPECT_EQ(m.master[s], m.master[p]);
          continue;
        }
        // Otherwise the interval is the share of the subtree's work: a root
        // gets w/total of [0, P), a child w/(its siblings' work) of its parent's.
        double siblings = 0;  // the parent's interval is cut among its children only
        for (idx_t x = 0; x < n; ++x)
          if (parent[x] == p) siblings += m.subtree_work[x];
        const double share = p < 0 ? P * w / total : (m.hi[p] - m.lo[p]) * w / siblings;
        EXPECT_NEAR(m.hi[s] - m.lo[s], share, 1e-9 * P) << "seed " << seed << " node " << s;
        if (p >= 0) {  // inside the parent's interval and rank set
          EXPECT_GE(m.lo[s], m.lo[p] - 1e-9);
          EXPECT_LE(m.hi[s], m.hi[p] + 1e-9);
          EXPECT_GE(m.first_rank[s], m.first_rank[p]);
          EXPECT_LE(m.first_rank[s] + m.nranks_of[s], m.first_rank[p] + m.nranks_of[p]);
        }
        // Shared iff the interval is longer than one rank.
        EXPECT_EQ(m.nranks_of[s] > 1, m.hi[s] - m.lo[s] > 1.0 + 1e-9);
      }
    }
}

TEST(RankMapping, RejectsBadInput) {
  TreeMapping m;
  EXPECT_FALSE(proportional_mapping({-1}, {1.0}, 0, m).ok());
  EXPECT_FALSE(proportional_mapping({-1, -1}, {1.0}, 2, m).ok());
  EXPECT_FALSE(proportional_mapping({1, 0}, {1.0, 1.0}, 2, m).ok());  // parent before child
  EXPECT_FALSE(proportional_mapping({-1}, {-1.0}, 2, m).ok());
  EXPECT_FALSE(proportional_mapping({-1}, {NAN}, 2, m).ok());
}

/// Graph options: one task per front, or tiles of 8 with fused subtrees.
GraphOptions untiled() {
  GraphOptions o;
  o.fuse_subtrees = false;
  o.tile = false;
  return o;
}
GraphOptions tiled() {
  GraphOptions o;
  o.tile_threshold = 16;
  o.tile_size = 8;
  o.workers = 4;
  o.min_subtree_flops = 0;
  return o;
}

TEST(RankMapping, LowerBoundOfOneTaskPerFrontIsTheCrossingContributionBlocks) {
  for (std::uint64_t seed = 1; seed <= 12; ++seed)
    for (int P : {1, 2, 3, 4}) {
      Problem pb;
      setup(pb, random_spd(40 + static_cast<idx_t>(seed * 17 % 160), 0.04, seed));
      TaskGraph G;
      ASSERT_TRUE(build_task_graph(pb.P, untiled(), G).ok());
      RankMapping M;
      ASSERT_TRUE(distribute_graph(G, P, SlotOptions{}, M).ok());
      double expected = 0;
      std::vector<double> recv(P, 0.0);
      for (idx_t c = 0; c < pb.P.nsuper; ++c) {
        const idx_t p = pb.S.super_parent[c];
        if (p < 0 || M.tree.master[c] == M.tree.master[p]) continue;
        const double bytes = static_cast<double>(pb.P.cb_order(c) * pb.P.cb_order(c)) * sizeof(double);
        expected += bytes;
        recv[M.tree.master[p]] += bytes;
      }
      const CommVolume v = communication_volume(G, M);
      EXPECT_DOUBLE_EQ(v.lower_bound_total, expected) << "seed " << seed << " P " << P;
      for (int r = 0; r < P; ++r) EXPECT_DOUBLE_EQ(v.lower_bound_recv[r], recv[r]);
      // The protocol moves whole slots: at least the lower bound.
      EXPECT_GE(v.protocol_total, v.lower_bound_total);
      if (P == 1) { EXPECT_EQ(v.protocol_total, 0.0); }
    }
}

TEST(RankMapping, TilesAreBlockCyclicAndTasksRunWhereTheyWrite) {
  CscMatrix A;
  ASSERT_TRUE(laplace3d(12, 7, A).ok());
  Problem pb;
  setup(pb, A);
  for (int P : {1, 2, 4, 6}) {
    TaskGraph G;
    ASSERT_TRUE(build_task_graph(pb.P, tiled(), G).ok());
    RankMapping M;
    ASSERT_TRUE(distribute_graph(G, P, SlotOptions{}, M).ok());
    idx_t shared_tiled = 0;
    for (idx_t s = 0; s < pb.P.nsuper; ++s) {
      if (G.mode[s] != FrontMode::tiled) continue;
      const int q = M.tree.nranks_of[s], first = M.tree.first_rank[s], pr = M.grid_rows[s];
      ASSERT_EQ(q % pr, 0);
      EXPECT_LE(pr * pr, q);
      shared_tiled += q > 1;
      std::vector<int> seen(P, 0);
      for (idx_t I = 0; I < G.ntiles(s); ++I)
        for (idx_t J = 0; J <= I; ++J) {
          const int o = M.block_owner[G.tile(s, I, J)];
          EXPECT_EQ(o, first + static_cast<int>(I % pr) * (q / pr) + static_cast<int>(J % (q / pr)));
          seen[o] = 1;
        }
      if (G.ntiles(s) >= 2 * q) { EXPECT_EQ(std::accumulate(seen.begin(), seen.end(), 0), q); }
    }
    if (P > 1) { EXPECT_GT(shared_tiled, 0) << "P " << P << ": no front is shared"; }
    double flops = 0;
    for (idx_t t = 0; t < static_cast<idx_t>(G.tasks.size()); ++t) {
      const Task& task = G.tasks[t];
      flops += task.flops;
      ASSERT_GE(M.task_rank[t], 0);
      ASSERT_LT(M.task_rank[t], P);
      if (task.kind == TaskKind::subtree || task.kind == TaskKind::front) {
        EXPECT_EQ(M.task_rank[t], M.tree.master[task.front]);
        continue;
      }
      for (idx_t a = task.acc_begin; a < task.acc_end; ++a)
        if (G.accesses[a].mode != AccessMode::R) {
          EXPECT_EQ(M.task_rank[t], M.block_owner[G.accesses[a].block]);
          break;
        }
    }
    EXPECT_NEAR(std::accumulate(M.rank_flops.begin(), M.rank_flops.end(), 0.0), flops, 1e-6 * flops);
    // Each rank gets work (proportional mapping of a balanced tree).
    for (int r = 0; r < P; ++r) EXPECT_GT(M.rank_flops[r], 0.2 * flops / P) << "rank " << r << " of " << P;
  }
}

TEST(RankMapping, SlotsPerRankAreSafeAndSumToTheProcessFigures) {
  for (std::uint64_t seed = 1; seed <= 6; ++seed)
    for (const GraphOptions& o : {untiled(), tiled()})
      for (SlotPolicy pol : {SlotPolicy::dag, SlotPolicy::budget_min})
        for (int P : {2, 3}) {
          Problem pb;
          setup(pb, random_spd(60 + static_cast<idx_t>(seed * 29 % 140), 0.05, seed));
          TaskGraph G;
          ASSERT_TRUE(build_task_graph(pb.P, o, G).ok());
          const MemoryEstimates one = memory_estimates(G);
          RankMapping M;
          ASSERT_TRUE(distribute_graph(G, P, SlotOptions{pol}, M).ok());
          ASSERT_EQ(G.slot_rank.size(), G.slot_capacity.size());
          for (std::size_t b = 0; b < G.blocks.size(); ++b)
            if (G.blocks[b].offset < 0) { EXPECT_EQ(G.slot_rank[G.slot_of[b]], M.block_owner[b]); }
          const SlotCheckResult r = check_slots(G, 200, seed);
          EXPECT_TRUE(r.ok()) << r.first;
          const std::vector<MemoryEstimates> per = memory_estimates_per_rank(G, M);
          const MemoryEstimates all = memory_estimates(G);
          double factors = 0, planned = 0, priv = 0, lower = 0;
          idx_t slots = 0;
          for (const MemoryEstimates& e : per) {
            factors += e.factors, planned += e.cb_planned, priv += e.cb_private, slots += e.slots;
            lower = std::max(lower, e.cb_lower_bound);
            EXPECT_LE(e.cb_lower_bound, e.cb_planned + 1e-9);
          }
          double in_lx = 0;  // the blocks in Lx (tiled fronts leave the upper parts of their panels out)
          for (const Block& B : G.blocks)
            if (B.offset >= 0) in_lx += static_cast<double>(B.rows * B.cols) * sizeof(double);
          EXPECT_DOUBLE_EQ(factors, in_lx);
          EXPECT_LE(factors, one.factors);
          EXPECT_DOUBLE_EQ(priv, one.cb_private);
          EXPECT_DOUBLE_EQ(planned, all.cb_planned);
          EXPECT_EQ(slots, all.slots);
          EXPECT_LE(lower, one.cb_lower_bound + 1e-9);
        }
}

}  // namespace
}  // namespace starfront
