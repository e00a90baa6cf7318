// Contribution-block slots: every policy's plan replayed under random valid
// execution orders (plan/slot_check.hpp) with zero violations, on random
// assembly trees and on every real matrix; a level-derived plan that the
// checker must reject (a test of the test); budgets honoured or refused with
// the minimum; memory estimates against brute force; numerical results of
// each policy equal to private slots (sequential executor, random orders,
// NaN-poisoned slots).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string>

#include "analysis/symbolic.hpp"
#include "common/problem.hpp"
#include "common/random_matrices.hpp"
#include "io/matrix_market.hpp"
#include "plan/cb_slots.hpp"
#include "plan/slot_check.hpp"
#include "plan/task_graph.hpp"
#include "sparse/generators.hpp"
#include "runtime/sequential/sequential_executor.hpp"
#include "solve/solve.hpp"

namespace starfront {
namespace {

using testing::random_spd;
using testing::rel_diff;

using testing::Problem;
using testing::setup;

/// Graph shapes: one task per front; small tiles with fused subtrees; small tiles, no fusion.
std::vector<GraphOptions> shapes() {
  GraphOptions ref;
  ref.fuse_subtrees = false;
  ref.tile = false;
  GraphOptions fused;
  fused.tile_threshold = 8;
  fused.tile_size = 4;
  fused.workers = 2;
  fused.subtree_ratio = 1.0;
  fused.min_subtree_flops = 0;
  GraphOptions tiled = fused;
  tiled.fuse_subtrees = false;
  return {ref, fused, tiled};
}

/// The policies under test for graph options o: private, dag, budget-min,
/// and a budget halfway between the minimum and the dag plan.
std::vector<SlotOptions> policies(const FrontPlan& P, const GraphOptions& o) {
  SlotOptions priv{SlotPolicy::private_slots}, dag{SlotPolicy::dag}, min{SlotPolicy::budget_min};
  TaskGraph Gd, Gm;
  GraphOptions od = o, om = o;
  od.slots = dag;
  om.slots = min;
  EXPECT_TRUE(build_task_graph(P, od, Gd).ok());
  EXPECT_TRUE(build_task_graph(P, om, Gm).ok());
  SlotOptions mid{SlotPolicy::budget};
  mid.budget_bytes = 0.5 * (memory_estimates(Gd).cb_planned + memory_estimates(Gm).cb_planned);
  return {priv, dag, min, mid};
}

/// Independent recount of the CB lower bound: at every task index, the
/// bytes of the CB blocks with an access at or before it and one at or after it.
double brute_lower_bound(const TaskGraph& G) {
  double best = 0;
  for (idx_t t = 0; t < static_cast<idx_t>(G.tasks.size()); ++t) {
    double live = 0;
    for (idx_t b = 0; b < static_cast<idx_t>(G.blocks.size()); ++b) {
      if (G.blocks[b].offset >= 0) continue;
      bool before = false, after = false;
      for (idx_t u = 0; u < static_cast<idx_t>(G.tasks.size()); ++u)
        for (idx_t a = G.tasks[u].acc_begin; a < G.tasks[u].acc_end; ++a)
          if (G.accesses[a].block == b) before |= u <= t, after |= u >= t;
      if (before && after) live += static_cast<double>(G.blocks[b].ld * G.blocks[b].cols) * 8.0;
    }
    best = std::max(best, live);
  }
  return best;
}

void expect_estimates_consistent(const TaskGraph& G, const SlotOptions& so, const std::string& what) {
  const MemoryEstimates e = memory_estimates(G);
  EXPECT_GT(e.factors, 0) << what;
  EXPECT_LE(e.cb_lower_bound, e.cb_planned) << what;
  EXPECT_LE(e.cb_planned, e.cb_private) << what;
  EXPECT_EQ(e.slots, static_cast<idx_t>(G.slot_capacity.size())) << what;
  EXPECT_EQ(e.added_deps, static_cast<idx_t>(G.added_deps.size())) << what;
  if (so.policy == SlotPolicy::private_slots) {
    EXPECT_EQ(e.cb_planned, e.cb_private) << what;
  }
  if (so.policy == SlotPolicy::private_slots || so.policy == SlotPolicy::dag) {
    EXPECT_EQ(e.added_deps, 0) << what;
  }
  if (so.policy == SlotPolicy::budget) {
    EXPECT_LE(e.cb_planned, so.budget_bytes) << what;
  }
  for (const auto& [a, b] : G.added_deps) EXPECT_LT(a, b) << what << ": an added edge against submission order";
}

TEST(SlotPlan, SafeOnRandomTreesEveryPolicy) {
  idx_t orders_per_policy[4] = {0, 0, 0, 0};
  for (std::uint64_t seed = 1; seed <= 14; ++seed) {
    Problem pb;
    setup(pb, random_spd(20 + static_cast<idx_t>(seed * 13 % 180), 0.03, seed));
    for (const GraphOptions& shape : shapes()) {
      const std::vector<SlotOptions> pols = policies(pb.P, shape);
      for (std::size_t k = 0; k < pols.size(); ++k) {
        GraphOptions o = shape;
        o.slots = pols[k];
        TaskGraph G;
        ASSERT_TRUE(build_task_graph(pb.P, o, G).ok());
        const std::string what = std::string(slot_policy_name(pols[k].policy)) + " seed " +
                                 std::to_string(seed) + " tasks " + std::to_string(G.tasks.size());
        const SlotCheckResult r = check_slots(G, 240, seed);
        orders_per_policy[k] += r.orders;
        EXPECT_TRUE(r.ok()) << what << ": " << r.first;
        expect_estimates_consistent(G, pols[k], what);
      }
    }
  }
  for (idx_t n : orders_per_policy) EXPECT_GE(n, 10000);
}

TEST(SlotPlan, SafeOnEveryRealMatrixEveryPolicy) {
  for (const char* kind : {"spd", "kkt"})
    for (const auto& e : std::filesystem::directory_iterator(std::filesystem::path(STARFRONT_DATA_DIR) / kind)) {
      CscMatrix A;
      ASSERT_TRUE(read_matrix_market(e.path().string(), A).ok()) << e.path();
      Problem pb;
      setup(pb, A);
      GraphOptions fused;  // the default graph
      GraphOptions unfused;
      unfused.fuse_subtrees = false;
      for (const GraphOptions& shape : {fused, unfused})
        for (const SlotOptions& so : policies(pb.P, shape)) {
          GraphOptions o = shape;
          o.slots = so;
          TaskGraph G;
          ASSERT_TRUE(build_task_graph(pb.P, o, G).ok()) << e.path();
          const std::string what = e.path().filename().string() + " " + slot_policy_name(so.policy) +
                                   (shape.fuse_subtrees ? " fused" : " unfused") + " (" +
                                   std::to_string(G.tasks.size()) + " tasks)";
          // 10,000 orders of the default graphs; 1,000 of the one-task-per-front ones
          const SlotCheckResult r = check_slots(G, shape.fuse_subtrees ? 10000 : 1000, 99);
          EXPECT_TRUE(r.ok()) << what << ": " << r.first;
          expect_estimates_consistent(G, so, what);
        }
    }
}

TEST(SlotPlan, LevelDerivedPlanIsRejectedOnThePowerGridMatrix) {
  CscMatrix A;
  ASSERT_TRUE(read_matrix_market(std::string(STARFRONT_DATA_DIR) + "/spd/activsg2000_hykkt_10.mtx", A).ok());
  Problem pb;
  setup(pb, A);
  GraphOptions o;
  o.fuse_subtrees = false;
  TaskGraph G;
  ASSERT_TRUE(build_task_graph(pb.P, o, G).ok());
  plan_slots_by_level(G);
  // Sound when fronts run level by level (deepest first): the checker (not
  // strict: this plan does not follow submission order inside a slot)
  // accepts that order...
  std::vector<idx_t> depth(pb.P.nsuper, 0), level_order(G.tasks.size());
  for (idx_t s = pb.P.nsuper - 1; s >= 0; --s)
    if (pb.S.super_parent[s] >= 0) depth[s] = depth[pb.S.super_parent[s]] + 1;
  for (idx_t t = 0; t < static_cast<idx_t>(G.tasks.size()); ++t) level_order[t] = t;
  std::stable_sort(level_order.begin(), level_order.end(), [&](idx_t a, idx_t b) {
    return depth[G.tasks[a].front] > depth[G.tasks[b].front];
  });
  const SlotCheckResult lv = check_slots_in_order(G, level_order, false);
  EXPECT_TRUE(lv.ok()) << lv.first;
  // ... and rejects the orders a task runtime may pick.
  const SlotCheckResult r = check_slots(G, 100, 7, false);
  EXPECT_GT(r.violations, 0) << "the checker accepted a level-derived slot plan";
  EXPECT_FALSE(r.first.empty());
  std::printf("level-derived plan: %lld of %lld orders violate; first: %s\n",
              static_cast<long long>(r.violations), static_cast<long long>(r.orders), r.first.c_str());
  // And the damage is real: with the same plan the sequential executor
  // (slots poisoned with NaN when a block takes them) goes wrong in some
  // random order.
  FactorOptions fo;
  NumericFactor ref;
  {
    TaskGraph Gp;
    o.slots.policy = SlotPolicy::private_slots;
    ASSERT_TRUE(build_task_graph(pb.P, o, Gp).ok());
    ASSERT_TRUE(factorize_sequential(Gp, pb.A, fo, ref, nullptr, 0).ok());
  }
  int wrong = 0;
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    NumericFactor F;
    const Status st = factorize_sequential(G, pb.A, fo, F, nullptr, seed);
    if (!st.ok() || rel_diff(F.Lx, ref.Lx) > 1e-13) ++wrong;
  }
  EXPECT_GT(wrong, 0);
}

TEST(SlotPlan, PoliciesGiveThePrivateFactorInRandomOrders) {
  for (std::uint64_t seed = 21; seed <= 26; ++seed) {
    Problem pb;
    setup(pb, random_spd(60 + static_cast<idx_t>(seed * 17 % 140), 0.04, seed));
    for (const GraphOptions& shape : shapes()) {
      GraphOptions o = shape;
      o.slots.policy = SlotPolicy::private_slots;
      TaskGraph Gp;
      ASSERT_TRUE(build_task_graph(pb.P, o, Gp).ok());
      NumericFactor ref;
      ASSERT_TRUE(factorize_sequential(Gp, pb.A, FactorOptions{}, ref, nullptr, 0).ok());
      for (const SlotOptions& so : policies(pb.P, shape)) {
        o.slots = so;
        TaskGraph G;
        ASSERT_TRUE(build_task_graph(pb.P, o, G).ok());
        for (std::uint64_t order = 0; order < 8; ++order) {
          NumericFactor F;
          ASSERT_TRUE(factorize_sequential(G, pb.A, FactorOptions{}, F, nullptr, order * 31 + seed).ok())
              << slot_policy_name(so.policy) << " seed " << seed;
          EXPECT_LE(rel_diff(F.Lx, ref.Lx), 1e-13) << slot_policy_name(so.policy) << " seed " << seed;
        }
      }
    }
  }
}

TEST(SlotPlan, BudgetIsMetOrRefusedWithTheMinimum) {
  Problem pb;
  setup(pb, random_spd(400, 0.01, 4242));
  GraphOptions o = shapes()[1];
  TaskGraph Gd, Gm;
  o.slots.policy = SlotPolicy::dag;
  ASSERT_TRUE(build_task_graph(pb.P, o, Gd).ok());
  o.slots.policy = SlotPolicy::budget_min;
  ASSERT_TRUE(build_task_graph(pb.P, o, Gm).ok());
  const double dag = memory_estimates(Gd).cb_planned, min = memory_estimates(Gm).cb_planned;
  ASSERT_LT(min, dag) << "the test needs a graph where reuse with added edges saves memory";
  o.slots.policy = SlotPolicy::budget;
  // A budget the graph's own order meets: the dag plan, nothing added.
  o.slots.budget_bytes = dag;
  TaskGraph G1;
  ASSERT_TRUE(build_task_graph(pb.P, o, G1).ok());
  EXPECT_TRUE(G1.added_deps.empty());
  EXPECT_EQ(memory_estimates(G1).cb_planned, dag);
  // The minimum itself fits.
  o.slots.budget_bytes = min;
  TaskGraph G2;
  ASSERT_TRUE(build_task_graph(pb.P, o, G2).ok());
  EXPECT_LE(memory_estimates(G2).cb_planned, min);
  EXPECT_TRUE(check_slots(G2, 500, 3).ok());
  // Below the minimum: refused, naming the minimum; the output graph untouched.
  o.slots.budget_bytes = min - 8;
  TaskGraph G3 = G2;
  const Status st = build_task_graph(pb.P, o, G3);
  EXPECT_EQ(st.code, StatusCode::out_of_memory);
  EXPECT_NE(st.message.find("cannot be met"), std::string::npos) << st.message;
  EXPECT_NE(st.message.find(std::to_string(static_cast<long long>(min)) + " bytes"), std::string::npos)
      << st.message;
  EXPECT_EQ(G3.tasks.size(), G2.tasks.size());
  EXPECT_EQ(G3.slot_capacity, G2.slot_capacity);
  // A negative budget is an invalid argument.
  o.slots.budget_bytes = -1;
  EXPECT_EQ(build_task_graph(pb.P, o, G3).code, StatusCode::invalid_argument);
}

TEST(SlotPlan, LowerBoundMatchesBruteForce) {
  for (std::uint64_t seed = 30; seed <= 34; ++seed) {
    Problem pb;
    setup(pb, random_spd(50 + static_cast<idx_t>(seed % 3) * 20, 0.06, seed));
    for (const GraphOptions& shape : shapes()) {
      TaskGraph G;
      ASSERT_TRUE(build_task_graph(pb.P, shape, G).ok());
      EXPECT_DOUBLE_EQ(memory_estimates(G).cb_lower_bound, brute_lower_bound(G)) << "seed " << seed;
    }
  }
}

/// Brute-force check of subtree_cb_layout on the fronts [first, root]: the CB
/// of s is live at the fronts s..parent(s) (positions in the range); any two
/// CBs live at one front occupy disjoint ranges inside the workspace, and the
/// workspace is at least the largest sum of live CBs. Returns that sum.
std::size_t expect_layout_valid(const FrontPlan& P, idx_t first, idx_t root, const std::string& what) {
  std::vector<std::size_t> off;
  const std::size_t size = subtree_cb_layout(P, first, root, off);
  EXPECT_EQ(off.size(), static_cast<std::size_t>(root - first + 1)) << what;
  const std::vector<idx_t>& parent = P.symbolic->super_parent;
  auto live_at = [&](idx_t s, idx_t at) {  // CB of s live while front `at` runs
    const idx_t p = parent[s];
    return s < root && P.cb_size(s) > 0 && s <= at && (p < 0 || p > root || at <= p);
  };
  std::size_t peak = 0;
  for (idx_t at = first; at <= root; ++at) {
    std::size_t live = 0;
    for (idx_t a = first; a <= at; ++a) {
      if (!live_at(a, at)) continue;
      live += static_cast<std::size_t>(P.cb_size(a));
      const std::size_t a0 = off[a - first], a1 = a0 + static_cast<std::size_t>(P.cb_size(a));
      EXPECT_LE(a1, size) << what << ": CB of front " << a << " outside the workspace";
      for (idx_t b = first; b < a; ++b) {
        if (!live_at(b, at)) continue;
        const std::size_t b0 = off[b - first], b1 = b0 + static_cast<std::size_t>(P.cb_size(b));
        EXPECT_TRUE(a1 <= b0 || b1 <= a0) << what << ": CBs of fronts " << a << " and " << b
                                          << " overlap while front " << at << " runs";
      }
    }
    peak = std::max(peak, live);
  }
  EXPECT_GE(size, peak) << what;
  return peak;
}

TEST(SubtreeCbLayout, LiveBlocksNeverOverlapOnRandomTreesAndEveryFusedTask) {
  idx_t checked = 0;
  for (std::uint64_t seed = 40; seed <= 52; ++seed) {
    Problem pb;
    setup(pb, random_spd(100 + static_cast<idx_t>(seed * 17 % 150), 0.01, seed));
    // The whole postorder as one range, and every fused task of a fused graph.
    expect_layout_valid(pb.P, 0, pb.P.nsuper - 1, "whole tree, seed " + std::to_string(seed));
    TaskGraph G;
    GraphOptions o = shapes()[1];
    o.workers = 8;
    ASSERT_TRUE(build_task_graph(pb.P, o, G).ok());
    for (const Task& t : G.tasks) {
      if (t.kind != TaskKind::subtree) continue;
      expect_layout_valid(pb.P, t.first_front, t.front, "subtree s" + std::to_string(t.front) + ", seed " + std::to_string(seed));
      std::vector<std::size_t> off;
      EXPECT_EQ(subtree_workspace_bytes(pb.P, t),
                8.0 * static_cast<double>(subtree_cb_layout(pb.P, t.first_front, t.front, off)))
          << "subtree s" << t.front;
      ++checked;
    }
  }
  std::printf("%lld fused tasks checked\n", static_cast<long long>(checked));
  EXPECT_GE(checked, 13);
}

TEST(SubtreeCbLayout, FirstFitStaysCloseToTheLiveBoundOnALaplacian) {
  // A 3D Laplacian's GPU graph (fused subtrees of fronts up to order 600, the
  // layout the CPU subtree kernel uses there): the workspace is the bound
  // (the largest sum of CBs live at once) up to fragmentation, checked here
  // to stay under 1.5x on every task.
  CscMatrix A;
  ASSERT_TRUE(laplace3d(24, 7, A).ok());
  Problem pb;
  setup(pb, A);
  TaskGraph G;
  ASSERT_TRUE(build_task_graph(pb.P, gpu_graph_options(4), G).ok());
  idx_t subtrees = 0;
  for (const Task& t : G.tasks) {
    if (t.kind != TaskKind::subtree) continue;
    const std::size_t bound = expect_layout_valid(pb.P, t.first_front, t.front, "subtree s" + std::to_string(t.front));
    std::vector<std::size_t> off;
    EXPECT_LE(static_cast<double>(subtree_cb_layout(pb.P, t.first_front, t.front, off)), 1.5 * static_cast<double>(bound))
        << "subtree s" << t.front;
    ++subtrees;
  }
  EXPECT_GE(subtrees, 4);
}

TEST(SlotPlan, ParsePolicy) {
  SlotOptions so;
  ASSERT_TRUE(parse_slot_policy("private", so).ok());
  EXPECT_EQ(so.policy, SlotPolicy::private_slots);
  ASSERT_TRUE(parse_slot_policy("dag", so).ok());
  EXPECT_EQ(so.policy, SlotPolicy::dag);
  ASSERT_TRUE(parse_slot_policy("budget-min", so).ok());
  EXPECT_EQ(so.policy, SlotPolicy::budget_min);
  ASSERT_TRUE(parse_slot_policy("budget:1.5M", so).ok());
  EXPECT_EQ(so.policy, SlotPolicy::budget);
  EXPECT_EQ(so.budget_bytes, 1.5 * 1048576);
  ASSERT_TRUE(parse_slot_policy("budget:4096", so).ok());
  EXPECT_EQ(so.budget_bytes, 4096);
  for (const char* bad : {"", "Dag", "budget:", "budget:-1", "budget:12X", "budget:nan", "budget:1e999",
                          "budget:0x10", "budget: 5", "budget:5 ", "budget:inf"}) {
    SlotOptions keep;
    keep.policy = SlotPolicy::budget_min;
    const Status st = parse_slot_policy(bad, keep);
    EXPECT_EQ(st.code, StatusCode::invalid_argument) << bad;
    EXPECT_NE(st.message.find("expected"), std::string::npos) << st.message;
    EXPECT_EQ(keep.policy, SlotPolicy::budget_min) << "options changed on error";
  }
}

}  // namespace
}  // namespace starfront
