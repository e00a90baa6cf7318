// The distributed solve's graph (plan/solve_graph.hpp), checked against
// brute force: every row of the vectors has one owner, the rank holding the
// factor block of its diagonal entry; every task that reads a factor block
// runs on that block's owner (the factor never moves); local positions are
// 0..count-1 in increasing row order. And numerically: the solve graph run
// in process (solve/graph_solve.hpp) against the column-oriented sequential
// solve (solve/solve.hpp), on graphs with subtrees, single and tiled fronts.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "common/problem.hpp"
#include "common/random_matrices.hpp"
#include "plan/rank_mapping.hpp"
#include "plan/solve_graph.hpp"
#include "runtime/sequential/sequential_executor.hpp"
#include "solve/graph_solve.hpp"
#include "solve/solve.hpp"
#include "sparse/generators.hpp"

namespace starfront {
namespace {

using testing::Problem;
using testing::setup;

GraphOptions small_tiles() {
  GraphOptions o;
  o.tile_threshold = 16;
  o.tile_size = 8;
  o.workers = 4;
  return o;
}

/// Brute force: the owner of the factor block (in Lx) holding Lx[pos].
int owner_of_position(const TaskGraph& G, const RankMapping& M, idx_t pos) {
  int found = -1;
  for (idx_t b = 0; b < static_cast<idx_t>(G.blocks.size()); ++b) {
    const Block& B = G.blocks[b];
    if (B.offset < 0 || pos < B.offset) continue;
    const idx_t d = pos - B.offset, r = d % B.ld, c = d / B.ld;
    if (r < B.rows && c < B.cols) {
      EXPECT_EQ(found, -1) << "two blocks hold Lx[" << pos << "]";
      found = M.block_owner[b];
    }
  }
  return found;
}

TEST(SolveGraph, RowsBelongToTheOwnerOfTheirDiagonalAndTheFactorNeverMoves) {
  CscMatrix A;
  ASSERT_TRUE(laplace3d(9, 7, A).ok());
  Problem pb;
  setup(pb, A);
  for (int P : {1, 2, 3, 4}) {
    TaskGraph G;
    ASSERT_TRUE(build_task_graph(pb.P, small_tiles(), G).ok());
    RankMapping M;
    ASSERT_TRUE(distribute_graph(G, P, SlotOptions{}, M).ok());
    SolveGraph S;
    ASSERT_TRUE(build_solve_graph(G, M, S).ok());
    std::vector<idx_t> next(P, 0);
    for (idx_t s = 0; s < pb.P.nsuper; ++s)
      for (idx_t k = pb.S.super_start[s]; k < pb.S.super_start[s + 1]; ++k) {
        const idx_t j = k - pb.S.super_start[s], m = pb.P.front_order(s);
        ASSERT_EQ(S.row_owner[k], owner_of_position(G, M, pb.P.l_offset[s] + j + j * m)) << "row " << k << " P " << P;
        EXPECT_EQ(S.local_index[k], next[S.row_owner[k]]++);
      }
    for (int r = 0; r < P; ++r) EXPECT_EQ(S.local_count[r], next[r]);
    bool tiled = false;
    for (const SolveTask& t : S.tasks) {
      tiled |= t.kind == SolveTaskKind::fwd_gemm;
      for (idx_t a = t.acc_begin; a < t.acc_end; ++a) {
        const SolveHandle& h = S.handles[S.accesses[a].handle];
        if (h.kind == SolveHandleKind::factor) {
          EXPECT_EQ(S.accesses[a].mode, AccessMode::R);
          EXPECT_EQ(t.rank, h.owner) << solve_task_kind_name(t.kind) << " of front " << t.front;
        }
        if (h.kind == SolveHandleKind::rows && S.accesses[a].mode != AccessMode::R &&
            (t.kind == SolveTaskKind::fwd_unit || t.kind == SolveTaskKind::bwd_unit)) {
          EXPECT_EQ(t.rank, h.owner);
        }
      }
    }
    EXPECT_TRUE(tiled);
    const SolveVolume v = solve_communication(S, 2);
    EXPECT_EQ(v.factor_bytes, 0.0);
    if (P == 1) { EXPECT_EQ(v.total, 0.0); }
    if (P > 1) { EXPECT_GT(v.total, 0.0); }
    double recv = 0;
    for (double x : v.recv) recv += x;
    EXPECT_DOUBLE_EQ(recv, v.total);
  }
}

TEST(SolveGraph, InProcessSolveMatchesTheSequentialSolve) {
  struct Case {
    CscMatrix A;
    GraphOptions o;
  };
  std::vector<Case> cases;
  CscMatrix L3;
  ASSERT_TRUE(laplace3d(8, 27, L3).ok());
  cases.push_back({L3, small_tiles()});
  cases.push_back({L3, GraphOptions{}});
  cases.push_back({testing::random_spd(300, 0.02, 3), small_tiles()});
  for (const Case& c : cases) {
    Problem pb;
    setup(pb, c.A);
    TaskGraph G;
    ASSERT_TRUE(build_task_graph(pb.P, c.o, G).ok());
    NumericFactor F;
    ASSERT_TRUE(factorize_sequential(G, pb.A, FactorOptions{}, F, nullptr).ok());
    RankMapping M;
    ASSERT_TRUE(map_graph(G, 1, M).ok());
    SolveGraph S;
    ASSERT_TRUE(build_solve_graph(G, M, S).ok());
    const idx_t n = pb.A.n, nrhs = 3;
    std::vector<double> B = testing::random_vector(n * nrhs, 9), X1 = B, X2 = B;
    ASSERT_TRUE(solve_in_place(F, X1.data(), nrhs, n).ok());
    ASSERT_TRUE(solve_in_place_graph(S, F, X2.data(), nrhs, n).ok());
    EXPECT_LE(testing::rel_diff(X2, X1), 1e-12);
    for (idx_t col = 0; col < nrhs; ++col)
      EXPECT_LE(backward_error(pb.A, X2.data() + col * n, B.data() + col * n), 1e-14);
    // A non-finite right-hand side is refused with B unchanged.
    std::vector<double> bad = B;
    bad[5] = std::nan("");
    std::vector<double> keep = bad;
    EXPECT_EQ(solve_in_place_graph(S, F, bad.data(), 1, n).code, StatusCode::invalid_argument);
    EXPECT_TRUE(std::equal(bad.begin() + 6, bad.end(), keep.begin() + 6));
  }
}

}  // namespace
}  // namespace starfront
