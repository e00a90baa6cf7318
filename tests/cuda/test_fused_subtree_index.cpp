// The fused-subtree index (codelets/cuda/fused_subtree_index.hpp), on the
// CPU: its arrays against the front plan by brute force (ticket order a
// permutation of each task's fronts with children first, children, relative
// indices, A's scatter map, diagonal sources, disjoint CB workspace regions);
// a host emulation of the fused kernel driven by the index gives the CPU
// subtree kernel's factor and root CB (<= 1e-13) and its failing column and
// pivot on not-positive-definite input; the GPU graph option makes the
// power-grid matrix a handful of tasks; the StarPU executor uploads the index
// once per analysis. Runs everywhere (no GPU needed).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "analysis/critical_path.hpp"
#include "api/solver.hpp"
#include "common/graph_test_util.hpp"
#include "common/random_matrices.hpp"
#include "cpu/task_kernels.hpp"
#include "cuda/fused_subtree_index.hpp"
#include "io/matrix_market.hpp"
#include "runtime/starpu/gpu_assembly_cache.hpp"
#include "runtime/starpu/runtime.hpp"
#include "sparse/generators.hpp"

namespace starfront {
namespace {

using testing::cpu_spread;
using testing::frobenius_rel;
using testing::random_banded_spd;

/// The test matrices' folder: $STARFRONT_DATA_DIR when set (the device
/// machine's bundle), else the build's ../shared/data.
std::filesystem::path data_dir() {
  const char* e = std::getenv("STARFRONT_DATA_DIR");
  return e && *e ? std::filesystem::path(e) : std::filesystem::path(STARFRONT_DATA_DIR);
}

CscMatrix read_spd(const std::string& name) {
  CscMatrix A;
  const auto path = data_dir() / "spd" / name;
  EXPECT_TRUE(read_matrix_market(path.string(), A).ok()) << path;
  return A;
}

/// Brute-force check of the index of every subtree task of G.
void check_structure(const TaskGraph& G, const FusedSubtreeIndex& X, const std::string& name) {
  const FrontPlan& P = *G.plan;
  idx_t tasks = 0;
  for (idx_t t = 0; t < static_cast<idx_t>(G.tasks.size()); ++t) {
    const Task& task = G.tasks[t];
    const FusedTaskIndex& ti = X.task[t];
    if (task.kind != TaskKind::subtree) {
      EXPECT_EQ(ti.nfronts, 0) << name;
      continue;
    }
    ++tasks;
    const idx_t first = task.first_front, root = task.front;
    ASSERT_EQ(ti.nfronts, root - first + 1) << name;
    // Recover each ticket's front from its panel offset (l_offset is strictly increasing).
    std::vector<idx_t> front_of(ti.nfronts), ticket_of(root - first + 1, -1);
    idx_t ws_sum = 0, max_order = 0;
    std::vector<std::pair<idx_t, idx_t>> regions;
    for (idx_t q = 0; q < ti.nfronts; ++q) {
      const FusedFront& f = X.fronts[ti.front_begin + q];
      const idx_t off = f.l_off + P.l_offset[first];
      const auto it = std::lower_bound(P.l_offset.begin() + first, P.l_offset.begin() + root + 1, off);
      ASSERT_TRUE(it != P.l_offset.begin() + root + 1 && *it == off) << name << " ticket " << q;
      const idx_t s = static_cast<idx_t>(it - P.l_offset.begin());
      ASSERT_EQ(ticket_of[s - first], -1) << name << ": front " << s << " twice";
      front_of[q] = s;
      ticket_of[s - first] = q;
      EXPECT_EQ(f.m, P.front_order(s));
      EXPECT_EQ(f.k, P.ncols(s));
      EXPECT_EQ(f.col0, P.symbolic->super_start[s]);
      if (q < ti.nsmall) {
        EXPECT_LE(f.m, kFusedSmallOrder) << name << ": a large front in the small part";
      }
      max_order = std::max(max_order, P.front_order(s));
      if (s == root) {
        EXPECT_EQ(f.cb_off, -1) << name;
      } else if (P.cb_order(s) > 0) {
        EXPECT_GE(f.cb_off, 0);
        regions.emplace_back(f.cb_off, f.cb_off + P.cb_size(s));
        ws_sum += P.cb_size(s);
      }
      // A's entries of the front, as the plan's (same order).
      ASSERT_EQ(f.a_end - f.a_begin, P.a_ptr[s + 1] - P.a_ptr[s]);
      for (idx_t e = 0; e < f.a_end - f.a_begin; ++e) {
        EXPECT_EQ(X.entries[f.a_begin + e].src, P.a_src[P.a_ptr[s] + e]);
        EXPECT_EQ(X.entries[f.a_begin + e].dst, P.a_dst[P.a_ptr[s] + e]);
      }
      for (idx_t j = 0; j < P.ncols(s); ++j) EXPECT_EQ(X.diag[f.diag_begin + j], P.diag_src[f.col0 + j]);
    }
    EXPECT_EQ(ti.workspace, ws_sum) << name;
    EXPECT_EQ(ti.max_order, max_order) << name;
    // The small part: every front whose whole subtree has orders <= kFusedSmallOrder.
    std::vector<idx_t> biggest(root - first + 1, 0);
    for (idx_t s = first; s <= root; ++s) {
      biggest[s - first] = std::max(biggest[s - first], P.front_order(s));
      const idx_t par = P.symbolic->super_parent[s];
      if (par >= 0 && par <= root) biggest[par - first] = std::max(biggest[par - first], biggest[s - first]);
    }
    idx_t nsmall = 0;
    for (idx_t s = first; s <= root; ++s) nsmall += biggest[s - first] <= kFusedSmallOrder ? 1 : 0;
    EXPECT_EQ(ti.nsmall, nsmall) << name;
    // Disjoint CB regions inside the workspace.
    std::sort(regions.begin(), regions.end());
    for (std::size_t r = 0; r < regions.size(); ++r) {
      EXPECT_GE(regions[r].first, r ? regions[r - 1].second : 0) << name;
      EXPECT_LE(regions[r].second, ti.workspace) << name;
    }
    // Children: the plan's, with smaller tickets, their CB offsets and relative indices.
    for (idx_t q = 0; q < ti.nfronts; ++q) {
      const FusedFront& f = X.fronts[ti.front_begin + q];
      const idx_t s = front_of[q];
      ASSERT_EQ(f.child_end - f.child_begin, P.child_ptr[s + 1] - P.child_ptr[s]) << name;
      for (idx_t c_ = 0; c_ < f.child_end - f.child_begin; ++c_) {
        const FusedChild& ch = X.children[f.child_begin + c_];
        const idx_t c = P.child_list[P.child_ptr[s] + c_];
        EXPECT_EQ(ch.ticket, ticket_of[c - first]) << name;
        EXPECT_LT(ch.ticket, q) << name << ": a child after its parent";
        EXPECT_EQ(ch.mc, P.cb_order(c));
        EXPECT_EQ(ch.cb_off, X.fronts[ti.front_begin + ch.ticket].cb_off);
        for (idx_t r = 0; r < ch.mc; ++r) EXPECT_EQ(X.rel[ch.rel_begin + r], P.rel[P.rel_ptr[c] + r]);
      }
    }
  }
  EXPECT_EQ(X.empty, tasks == 0) << name;
}

/// Runs G's tasks in submission order on private buffers; every subtree task
/// also by the emulation (on copies, from the same inputs), comparing the
/// panel and root CB to the CPU kernel's (max |diff| <= 1e-13 · max |L|) or
/// the failure. Returns the number of subtree tasks compared.
idx_t compare_subtrees(const TaskGraph& G, const CscMatrix& A, double pivot_tol, const std::string& name,
                       double tol = 1e-13) {
  const FrontPlan& P = *G.plan;
  FusedSubtreeIndex X;
  EXPECT_TRUE(build_fused_subtree_index(G, X).ok());
  testing::HostBlocks host(G);
  std::vector<double*>& base = host.base;
  FactorContext ctx;
  ctx.values = A.values.data();
  ctx.pivot_tol = pivot_tol;
  idx_t compared = 0;
  for (idx_t ti = 0; ti < static_cast<idx_t>(G.tasks.size()) && !ctx.failed; ++ti) {
    const Task& t = G.tasks[ti];
    std::vector<double*> ptrs;
    for (idx_t a = t.acc_begin; a < t.acc_end; ++a) ptrs.push_back(base[static_cast<std::size_t>(G.accesses[a].block)]);
    if (t.kind != TaskKind::subtree) {
      run_task_cpu(G, ti, ptrs.data(), ctx);
      continue;
    }
    const Block& pb = G.blocks[static_cast<std::size_t>(G.accesses[t.acc_begin].block)];
    const idx_t mc = P.cb_order(t.front);
    std::vector<double> panel(static_cast<std::size_t>(pb.rows), 7.0), cb(static_cast<std::size_t>(mc * mc), 7.0);
    std::vector<double> ws(static_cast<std::size_t>(std::max<idx_t>(X.task[ti].workspace, 1)), 1e300);
    const FrontResult em = fused_subtree_emulated(G, X, ti, A.values.data(), panel.data(),
                                                  mc ? cb.data() : nullptr, ws.data(), pivot_tol);
    FactorContext one;
    one.values = A.values.data();
    one.pivot_tol = pivot_tol;
    run_task_cpu(G, ti, ptrs.data(), one);
    ctx.record(FrontResult{one.failed ? FrontResult::State::failed : FrontResult::State::done, one.fail_column,
                           one.fail_pivot, one.min_pivot_ratio});
    ++compared;
    if (one.failed) {
      EXPECT_EQ(em.state, FrontResult::State::failed) << name << " " << task_name(G, t);
      EXPECT_EQ(em.failed_column, one.fail_column) << name << " " << task_name(G, t);
      EXPECT_NEAR(em.pivot, one.fail_pivot, 1e-10 * std::max(1.0, std::fabs(one.fail_pivot))) << name;
      continue;
    }
    EXPECT_EQ(em.state, FrontResult::State::done) << name << " " << task_name(G, t);
    EXPECT_NEAR(em.min_pivot_ratio, one.min_pivot_ratio, 1e-6 * one.min_pivot_ratio) << name;
    // Norm-wise: ‖ΔL‖_F / ‖L‖_F over the panel and the root CB's lower
    // triangle (element-wise
    // agreement is not to be expected on ill-conditioned matrices: the CPU's
    // blocked BLAS sums in another order, and cancellation amplifies it).
    double num = 0, den = 0, maxd = 0, maxv = 0;
    auto add = [&](double want, double got) {
      num += (want - got) * (want - got), den += want * want;
      maxd = std::max(maxd, std::fabs(want - got)), maxv = std::max(maxv, std::fabs(want));
    };
    for (idx_t i = 0; i < pb.rows; ++i) add(ptrs[0][i], panel[i]);
    // The CB's lower triangle only: its strict upper triangle is never read
    // (the CPU kernel may leave partial sums there: front_cholesky.hpp).
    for (idx_t j = 0; j < mc; ++j)
      for (idx_t i = j; i < mc; ++i) add(ptrs[1][i + j * mc], cb[i + j * mc]);
    const double rel = den > 0 ? std::sqrt(num / den) : std::sqrt(num);
    EXPECT_LE(rel, tol) << name << " " << task_name(G, t) << " (max element difference " << maxd << " of "
                          << maxv << ")";
    std::printf("[ %s %s: |dL|_F/|L|_F %.1e, max|dL|/max|L| %.1e ]\n", name.c_str(), task_name(G, t).c_str(), rel,
                maxv > 0 ? maxd / maxv : maxd);
  }
  return compared;
}

struct NamedMatrix {
  std::string name;
  CscMatrix A;
};

std::vector<NamedMatrix> matrices() {
  std::vector<NamedMatrix> ms;
  ms.push_back({"random banded SPD n=4000 band 6 seed 1", random_banded_spd(4000, 6, 1)});
  ms.push_back({"random banded SPD n=3000 band 12 seed 2", random_banded_spd(3000, 12, 2)});
  ms.push_back({"random SPD n=500 density 0.01", testing::random_spd(500, 0.01, 3)});
  ms.push_back({"activsg2000_hykkt_10", read_spd("activsg2000_hykkt_10.mtx")});
  ms.push_back({"bcsstk13", read_spd("bcsstk13.mtx")});
  ms.push_back({"opf_case10000_goc_kkt", read_spd("opf_case10000_goc_kkt.mtx")});
  return ms;
}

/// The analysis for latency-bound trees (the Scotch ordering with the
/// shorter modelled critical path, the critical-path amalgamation, merged
/// fronts up to kGpuFusedFront): other trees, the same index invariants.
AnalysisOptions latency_analysis() {
  AnalysisOptions ao;
  ao.ordering_choice = OrderingChoice::critical_path;
  ao.relax_critical_path = true;
  ao.relax_max_front = kGpuFusedFront;
  return ao;
}

TEST(FusedSubtreeIndex, StructureMatchesThePlan) {
  for (const NamedMatrix& m : matrices())
    for (int variant = 0; variant < 4; ++variant) {
      // 0: default graph; 1: GPU graph; 2: GPU graph of the latency
      // analysis; 3: the same with the tickets by path to the root.
      Solver solver;
      const GraphOptions go = variant > 0 ? gpu_graph_options(16, kGpuFusedFront) : GraphOptions{};
      const AnalysisOptions ao = variant >= 2 ? latency_analysis() : AnalysisOptions{};
      ASSERT_TRUE(solver.analyse(m.A, ao, go).ok()) << m.name;
      FusedSubtreeIndex X;
      const FusedTicketOrder order = variant == 3 ? FusedTicketOrder::path : FusedTicketOrder::height;
      ASSERT_TRUE(build_fused_subtree_index(solver.graph(), X, order).ok()) << m.name;
      EXPECT_FALSE(X.empty) << m.name;
      EXPECT_EQ(X.order, order);
      check_structure(solver.graph(), X,
                      m.name + (variant == 1   ? " (GPU graph)"
                                : variant == 2 ? " (GPU graph, latency analysis)"
                                : variant == 3 ? " (GPU graph, latency analysis, tickets by path)"
                                               : ""));
    }
}

/// FusedTicketOrder::path: within each part, tickets by decreasing modelled
/// time to the task root's end (front_latency summed up the ancestors,
/// recomputed here from the plan's parent links), ties by front index; on
/// the power-grid matrix it differs from the height order, and the first
/// ticket of the small part starts its longest path.
TEST(FusedSubtreeIndex, PathTicketOrderByRemainingPath) {
  for (const NamedMatrix& m : matrices()) {
    Solver solver;
    ASSERT_TRUE(solver.analyse(m.A, latency_analysis(), gpu_graph_options(16, kGpuFusedFront)).ok()) << m.name;
    const TaskGraph& G = solver.graph();
    const FrontPlan& P = *G.plan;
    FusedSubtreeIndex H, X;
    ASSERT_TRUE(build_fused_subtree_index(G, H).ok());
    ASSERT_TRUE(build_fused_subtree_index(G, X, FusedTicketOrder::path).ok());
    bool differs = false;
    for (idx_t t = 0; t < static_cast<idx_t>(G.tasks.size()); ++t) {
      const FusedTaskIndex& ti = X.task[t];
      if (ti.nfronts == 0) continue;
      ASSERT_EQ(ti.nsmall, H.task[t].nsmall) << m.name;  // the same parts
      const idx_t first = ti.first_front, root = ti.root;
      std::vector<double> to_root(root - first + 1);
      for (idx_t s = first; s <= root; ++s) {  // brute force: up the parent links, summed from the root down
        std::vector<idx_t> up;
        for (idx_t a = s; a >= first && a <= root; a = P.symbolic->super_parent[a]) up.push_back(a);
        for (std::size_t i = up.size(); i-- > 0;)
          to_root[s - first] += front_latency(FrontLatencyModel{}, P.front_order(up[i]), P.ncols(up[i]));
      }
      auto front_of = [&](const FusedSubtreeIndex& I, idx_t q) {  // from its panel offset (check_structure)
        const idx_t off = I.fronts[I.task[t].front_begin + q].l_off + P.l_offset[first];
        return static_cast<idx_t>(std::lower_bound(P.l_offset.begin() + first, P.l_offset.begin() + root + 1, off) -
                                  P.l_offset.begin());
      };
      for (idx_t q = 1; q < ti.nfronts; ++q) {
        if (q == ti.nsmall) continue;  // a new part
        const idx_t a = front_of(X, q - 1), b = front_of(X, q);
        EXPECT_TRUE(to_root[a - first] > to_root[b - first] ||
                    (to_root[a - first] == to_root[b - first] && a < b))
            << m.name << " tickets " << q - 1 << ", " << q;
      }
      for (idx_t q = 0; q < ti.nfronts; ++q) differs = differs || front_of(X, q) != front_of(H, q);
      // The part's first ticket starts its longest path.
      if (ti.nsmall > 0) {
        double best = 0;
        for (idx_t q = 0; q < ti.nsmall; ++q) best = std::max(best, to_root[front_of(H, q) - first]);
        EXPECT_EQ(to_root[front_of(X, 0) - first], best) << m.name;
      }
    }
    if (m.name == "activsg2000_hykkt_10") {
      EXPECT_TRUE(differs);
    }
  }
}

/// The emulation gives the CPU subtree kernel's panel and root CB to 1e-13
/// norm-wise (or 10 times the CPU's own spread when that is larger).
TEST(FusedSubtreeIndex, EmulationEqualsCpuSubtreeKernel) {
  for (const NamedMatrix& m : matrices())
    for (bool latency : {false, true}) {
      const std::string name = m.name + (latency ? " (latency analysis)" : "");
      const AnalysisOptions ao = latency ? latency_analysis() : AnalysisOptions{};
      Solver solver;
      ASSERT_TRUE(solver.analyse(m.A, ao, gpu_graph_options(16, kGpuFusedFront)).ok()) << name;
      const double spread = cpu_spread(m.A, gpu_graph_options(16, kGpuFusedFront), ao);
      std::printf("[ %s: CPU sensitivity (1e-15 perturbation) %.1e ]\n", name.c_str(), spread);
      EXPECT_GT(compare_subtrees(solver.graph(), m.A, 0.0, name, std::max(1e-13, 10 * spread)), 0) << name;
    }
}

/// The ticket order changes no arithmetic: the emulation (fronts in ticket
/// order, children's CBs in the plan's child order) gives bitwise the same
/// panels and root CB under both orders; a latency model with a negative or
/// non-finite figure is refused for the path order.
TEST(FusedSubtreeIndex, TicketOrderChangesNoArithmetic) {
  for (const NamedMatrix& m : matrices()) {
    Solver solver;
    ASSERT_TRUE(solver.analyse(m.A, latency_analysis(), gpu_graph_options(16, kGpuFusedFront)).ok()) << m.name;
    const TaskGraph& G = solver.graph();
    const FrontPlan& P = *G.plan;
    FusedSubtreeIndex H, X;
    ASSERT_TRUE(build_fused_subtree_index(G, H).ok());
    ASSERT_TRUE(build_fused_subtree_index(G, X, FusedTicketOrder::path).ok());
    for (idx_t t = 0; t < static_cast<idx_t>(G.tasks.size()); ++t) {
      if (X.task[t].nfronts == 0) continue;
      const Block& pb = G.blocks[static_cast<std::size_t>(G.accesses[G.tasks[t].acc_begin].block)];
      const idx_t mc = P.cb_order(G.tasks[t].front);
      std::vector<double> panel[2], cb[2];
      for (int o = 0; o < 2; ++o) {
        const FusedSubtreeIndex& I = o ? X : H;
        panel[o].assign(static_cast<std::size_t>(pb.rows), 7.0);
        cb[o].assign(static_cast<std::size_t>(mc * mc), 7.0);
        std::vector<double> ws(static_cast<std::size_t>(std::max<idx_t>(I.task[t].workspace, 1)), 1e300);
        const FrontResult r = fused_subtree_emulated(G, I, t, m.A.values.data(), panel[o].data(),
                                                     mc ? cb[o].data() : nullptr, ws.data(), 0.0);
        ASSERT_EQ(r.state, FrontResult::State::done) << m.name;
      }
      EXPECT_EQ(panel[0], panel[1]) << m.name << " task " << t;
      EXPECT_EQ(cb[0], cb[1]) << m.name << " task " << t;
    }
  }
  const CscMatrix A = random_banded_spd(500, 8, 3);
  Solver solver;
  ASSERT_TRUE(solver.analyse(A, AnalysisOptions{}, gpu_graph_options(16)).ok());
  for (const FrontLatencyModel& bad : {FrontLatencyModel{-1e-6, 0, 0}, FrontLatencyModel{1e-6, std::nan(""), 0},
                                       FrontLatencyModel{1e-6, 0, HUGE_VAL}}) {
    FusedSubtreeIndex X;
    const Status st = build_fused_subtree_index(solver.graph(), X, FusedTicketOrder::path, bad);
    EXPECT_EQ(st.code, StatusCode::invalid_argument);
    EXPECT_NE(st.message.find("latency model"), std::string::npos) << st.message;
    FusedSubtreeIndex Y;  // the height order does not use the model
    EXPECT_TRUE(build_fused_subtree_index(solver.graph(), Y, FusedTicketOrder::height, bad).ok());
  }
}

/// A negative diagonal entry in a column inside a fused subtree (a
/// non-positive pivot: LAPACK's info), then a tiny positive pivot that only
/// the relative test refuses: the emulation reports the CPU's column and pivot.
TEST(FusedSubtreeIndex, EmulationNotPositiveDefiniteSameColumn) {
  const CscMatrix A0 = random_banded_spd(3000, 8, 5);
  Solver solver;
  ASSERT_TRUE(solver.analyse(A0, AnalysisOptions{}, gpu_graph_options(16, kGpuFusedFront)).ok());
  const TaskGraph& G = solver.graph();
  const FrontPlan& P = solver.plan();
  idx_t checked = 0;
  for (idx_t s = 0; s < P.nsuper && checked < 6; s += std::max<idx_t>(1, P.nsuper / 7)) {
    if (G.mode[s] != FrontMode::in_subtree) continue;
    const idx_t col = P.symbolic->super_start[s] + P.ncols(s) - 1;  // last pivot of front s
    const idx_t orig = solver.symbolic().perm[col];
    CscMatrix B = A0;
    for (idx_t p = B.colptr[orig]; p < B.colptr[orig + 1]; ++p)
      if (B.rowind[p] == orig) B.values[p] = -B.values[p];
    EXPECT_GT(compare_subtrees(G, B, 0.0, "negative pivot at column " + std::to_string(col)), 0);
    ++checked;
  }
  EXPECT_GT(checked, 2);
  // Relative test only: with pivot_tol 0.9 most pivots of a diagonally
  // dominant matrix still pass, some fail: the first failing one counts.
  EXPECT_GT(compare_subtrees(G, A0, 0.9, "pivot_tol 0.9"), 0);
}

/// The GPU graph option: the power-grid matrix is at most 50 tasks, every
/// fused front has order <= 232 (the default bound).
TEST(FusedSubtreeIndex, GpuGraphOptionFusesThePowerGridMatrix) {
  const CscMatrix A = read_spd("activsg2000_hykkt_10.mtx");
  for (bool latency : {false, true}) {
    Solver solver;
    ASSERT_TRUE(solver.analyse(A, latency ? latency_analysis() : AnalysisOptions{},
                               gpu_graph_options(16, kGpuFusedFront)).ok());
    const TaskGraph& G = solver.graph();
    const GraphStats gs = graph_stats(G);
    std::printf("[ activsg2000_hykkt_10, GPU graph%s: %lld tasks (%lld subtree), %lld of %lld fronts fused ]\n",
                latency ? " (latency analysis)" : "", static_cast<long long>(gs.tasks),
                static_cast<long long>(gs.by_kind[0]), static_cast<long long>(gs.fronts_in_subtrees),
                static_cast<long long>(gs.fronts));
    EXPECT_LE(gs.tasks, 50);
    for (idx_t s = 0; s < solver.plan().nsuper; ++s)
      if (G.mode[s] == FrontMode::in_subtree) {
        EXPECT_LE(solver.plan().front_order(s), 232);
      }
  }
  GraphOptions bad = gpu_graph_options(16, kGpuFusedFront);
  bad.max_subtree_front = -1;
  Solver s2;
  EXPECT_EQ(s2.analyse(A, AnalysisOptions{}, bad).code, StatusCode::invalid_argument);
}

/// fused_chains against brute force: for every front, walk up the parent
/// links (from the children lists) and count the fronts of each chain
/// ending there; on random banded matrices (one part or two) and the
/// power-grid matrix, whose chains the benchmark notes quote.
TEST(FusedSubtreeIndex, ChainsMatchBruteForce) {
  struct Case {
    std::string name;
    CscMatrix A;
  };
  std::vector<Case> cases;
  cases.push_back({"random banded SPD n=3000 band 60", random_banded_spd(3000, 60, 14)});
  cases.push_back({"random banded SPD n=2000 band 90", random_banded_spd(2000, 90, 15)});
  cases.push_back({"activsg2000_hykkt_10", read_spd("activsg2000_hykkt_10.mtx")});
  for (const Case& c : cases) {
    Solver solver;
    ASSERT_TRUE(solver.analyse(c.A, AnalysisOptions{}, gpu_graph_options(16)).ok()) << c.name;
    FusedSubtreeIndex X;
    ASSERT_TRUE(build_fused_subtree_index(solver.graph(), X).ok()) << c.name;
    for (idx_t t = 0; t < static_cast<idx_t>(X.task.size()); ++t) {
      const FusedTaskIndex& ti = X.task[t];
      const FusedChains got = fused_chains(X, t);
      if (ti.nfronts == 0) {
        EXPECT_EQ(got.whole, 0);
        continue;
      }
      std::vector<idx_t> parent(ti.nfronts, -1);
      for (idx_t q = 0; q < ti.nfronts; ++q) {
        const FusedFront& f = X.fronts[ti.front_begin + q];
        for (std::int64_t ch = f.child_begin; ch < f.child_end; ++ch) parent[X.children[ch].ticket] = q;
      }
      FusedChains want;
      for (idx_t q = 0; q < ti.nfronts; ++q) {  // chains starting at q, going up
        const bool small = q < ti.nsmall;
        idx_t len_part = 0, len_whole = 0;
        for (idx_t a = q; a >= 0; a = parent[a]) {
          ++len_whole;
          if ((a < ti.nsmall) == small && len_part == len_whole - 1) ++len_part;  // still in q's part
        }
        (small ? want.small : want.large) = std::max(small ? want.small : want.large, len_part);
        want.whole = std::max(want.whole, len_whole);
      }
      EXPECT_EQ(got.small, want.small) << c.name << " task " << t;
      EXPECT_EQ(got.large, want.large) << c.name << " task " << t;
      EXPECT_EQ(got.whole, want.whole) << c.name << " task " << t;
      EXPECT_LE(std::max(got.small, got.large), got.whole);
      EXPECT_GE(got.small + got.large, got.whole);  // a chain leaves the small part at most once
      std::printf("[ %s, task %lld: %lld fronts (%lld small); longest chains: small launch %lld, large launch %lld, "
                  "whole task %lld ]\n",
                  c.name.c_str(), static_cast<long long>(t), static_cast<long long>(ti.nfronts),
                  static_cast<long long>(ti.nsmall), static_cast<long long>(got.small),
                  static_cast<long long>(got.large), static_cast<long long>(got.whole));
    }
  }
}

/// fused_trace_summary against a simulated kernel: every front has its own
/// block from t = 1000 ns, its prologue takes a, the extend-add b, the
/// factorisation c, the write-out d, and its wait ends `lag` ns after its
/// last child's publication (or at once). With equal durations the critical
/// chain is a longest chain of the task (fused_chains' whole), and the sums
/// along it and the per-part means and spans are known in closed form.
TEST(FusedSubtreeIndex, TraceSummaryOfASimulatedKernel) {
  const CscMatrix A = random_banded_spd(2000, 90, 15);
  Solver solver;
  ASSERT_TRUE(solver.analyse(A, AnalysisOptions{}, gpu_graph_options(16)).ok());
  FusedSubtreeIndex X;
  ASSERT_TRUE(build_fused_subtree_index(solver.graph(), X).ok());
  const double a = 700, b = 1100, c = 2300, d = 500, lag = 900, t0 = 1000;
  idx_t checked = 0;
  for (idx_t t = 0; t < static_cast<idx_t>(X.task.size()); ++t) {
    const FusedTaskIndex& ti = X.task[t];
    if (ti.nfronts == 0) continue;
    for (bool early : {true, false}) {
      std::vector<std::uint64_t> tr(static_cast<std::size_t>(kFusedTracePoints * ti.nfronts), 0);
      auto T = [&](idx_t q, int i) -> std::uint64_t& { return tr[q * kFusedTracePoints + i]; };
      double first_large = 1e300, last_small = 0, last_large = 0;
      for (idx_t q = 0; q < ti.nfronts; ++q) {  // children first (ticket order)
        const FusedFront& f = X.fronts[ti.front_begin + q];
        double children_done = -1;
        for (std::int64_t ch = f.child_begin; ch < f.child_end; ++ch)
          children_done = std::max(children_done, static_cast<double>(T(X.children[ch].ticket, 5)));
        const double wait_end = children_done < 0 ? (early ? t0 + a : t0) : children_done + lag;
        T(q, 0) = static_cast<std::uint64_t>(t0);
        T(q, 1) = static_cast<std::uint64_t>(early ? t0 + a : wait_end);
        T(q, 2) = static_cast<std::uint64_t>(early ? wait_end : wait_end + a);
        T(q, 3) = T(q, 2) + static_cast<std::uint64_t>(b);
        T(q, 4) = T(q, 3) + static_cast<std::uint64_t>(c);
        T(q, 5) = T(q, 4) + static_cast<std::uint64_t>(d);
        if (q < ti.nsmall) last_small = std::max(last_small, static_cast<double>(T(q, 5)));
        else {
          first_large = std::min(first_large, static_cast<double>(T(q, 0)));
          last_large = std::max(last_large, static_cast<double>(T(q, 5)));
        }
      }
      const FusedTraceSummary S = fused_trace_summary(X, t, tr.data(), early);
      const idx_t len = fused_chains(X, t).whole;
      const double nf = static_cast<double>(len);
      EXPECT_EQ(S.fronts, len) << "task " << t << " early " << early;
      EXPECT_DOUBLE_EQ(S.own, nf * a);
      EXPECT_DOUBLE_EQ(S.extend_add, nf * b);
      EXPECT_DOUBLE_EQ(S.factor, nf * c);
      EXPECT_DOUBLE_EQ(S.write, nf * d);
      // Each front above the chain's first waits `lag` after its child;
      // the first front's wait ends a after the start when early (its
      // prologue ran first), at once otherwise.
      EXPECT_DOUBLE_EQ(S.lag, (nf - 1) * lag + (early ? a : 0.0));
      // The chain's steps, from the last front published down: each the
      // parent of the next, each a front's own times.
      ASSERT_EQ(static_cast<idx_t>(S.chain.size()), len);
      idx_t top = 0;
      for (idx_t q = 1; q < ti.nfronts; ++q)
        if (T(q, 5) > T(top, 5)) top = q;
      EXPECT_EQ(S.chain.front().ticket, top);
      for (std::size_t i = 0; i < S.chain.size(); ++i) {
        const FusedChainStep& st = S.chain[i];
        const FusedFront& f = X.fronts[ti.front_begin + st.ticket];
        EXPECT_EQ(st.m, f.m);
        EXPECT_EQ(st.k, f.k);
        EXPECT_EQ(st.children, f.child_end - f.child_begin);
        EXPECT_DOUBLE_EQ(st.extend_add, b);
        EXPECT_DOUBLE_EQ(st.factor, c);
        EXPECT_DOUBLE_EQ(st.write, d);
        EXPECT_DOUBLE_EQ(st.lag, i + 1 < S.chain.size() ? lag : (early ? a : 0.0));
        if (i + 1 < S.chain.size()) {
          bool is_child = false;
          for (std::int64_t ch = f.child_begin; ch < f.child_end; ++ch)
            is_child = is_child || X.children[ch].ticket == S.chain[i + 1].ticket;
          EXPECT_TRUE(is_child) << "chain step " << i + 1 << " is not a child of step " << i;
        }
      }
      EXPECT_EQ(S.chain.back().children, 0);  // down to a leaf
      {
        // Stamps 3 and 4 moved by amounts that depend on the ticket, the
        // publications (stamp 5) kept: the same chain, and each step must
        // carry its own front's times; the steps add up to the summary.
        std::vector<std::uint64_t> sh = tr;
        auto H = [&](idx_t q, int i) -> std::uint64_t& { return sh[q * kFusedTracePoints + i]; };
        for (idx_t q = 0; q < ti.nfronts; ++q) {
          H(q, 3) += static_cast<std::uint64_t>(10 * (q % 7));
          H(q, 4) += static_cast<std::uint64_t>(10 * (q % 7) + 7 * (q % 5));  // below stamp 5: d = 500
        }
        const FusedTraceSummary S3 = fused_trace_summary(X, t, sh.data(), early);
        ASSERT_EQ(S3.chain.size(), S.chain.size());
        double sum_lag = 0, sum_ea = 0, sum_factor = 0, sum_write = 0;
        for (std::size_t i = 0; i < S3.chain.size(); ++i) {
          const FusedChainStep& st = S3.chain[i];
          const idx_t q = st.ticket;
          EXPECT_EQ(q, S.chain[i].ticket);
          EXPECT_DOUBLE_EQ(st.extend_add, static_cast<double>(H(q, 3) - H(q, 2))) << "ticket " << q;
          EXPECT_DOUBLE_EQ(st.factor, static_cast<double>(H(q, 4) - H(q, 3))) << "ticket " << q;
          EXPECT_DOUBLE_EQ(st.write, static_cast<double>(H(q, 5) - H(q, 4))) << "ticket " << q;
          sum_lag += st.lag;
          sum_ea += st.extend_add;
          sum_factor += st.factor;
          sum_write += st.write;
        }
        EXPECT_DOUBLE_EQ(sum_lag, S3.lag);
        EXPECT_DOUBLE_EQ(sum_ea, S3.extend_add);
        EXPECT_DOUBLE_EQ(sum_factor, S3.factor);
        EXPECT_DOUBLE_EQ(sum_write, S3.write);
      }
      // All fronts start at t0 in the simulation: the large launch's first
      // stamp precedes every publication, so no boundary time.
      EXPECT_DOUBLE_EQ(S.boundary, 0.0);
      EXPECT_EQ(S.traced[0], ti.nsmall);
      EXPECT_EQ(S.traced[1], ti.nfronts - ti.nsmall);
      if (ti.nsmall > 0) {
        EXPECT_DOUBLE_EQ(S.span[0], last_small - t0);
        EXPECT_DOUBLE_EQ(S.mean_factor[0], c);
        EXPECT_DOUBLE_EQ(S.mean_own[0], a);
      }
      if (ti.nfronts > ti.nsmall) {
        EXPECT_DOUBLE_EQ(S.span[1], last_large - first_large);
        EXPECT_DOUBLE_EQ(S.mean_extend_add[1], b);
        EXPECT_DOUBLE_EQ(S.mean_write[1], d);
      }
      // The large part started later (as a second launch does): the
      // boundary is the large launch's start minus the publication of the
      // chain's last small front, when the chain crosses.
      if (ti.nsmall > 0 && ti.nfronts > ti.nsmall) {
        std::vector<std::uint64_t> late = tr;
        const std::uint64_t shift = static_cast<std::uint64_t>(last_small + 5000);  // after every small front
        for (idx_t q = ti.nsmall; q < ti.nfronts; ++q)
          for (int i = 0; i < kFusedTracePoints; ++i) late[q * kFusedTracePoints + i] += shift;
        const FusedTraceSummary L = fused_trace_summary(X, t, late.data(), early);
        double want = 0;  // the chain from the last publication down, by brute force
        idx_t q = 0;
        for (idx_t r = 0; r < ti.nfronts; ++r)
          if (late[r * kFusedTracePoints + 5] > late[q * kFusedTracePoints + 5]) q = r;
        while (q >= 0) {
          const FusedFront& f = X.fronts[ti.front_begin + q];
          idx_t below = -1;
          for (std::int64_t ch = f.child_begin; ch < f.child_end; ++ch) {
            const idx_t c2 = X.children[ch].ticket;
            if (below < 0 || late[c2 * kFusedTracePoints + 5] > late[below * kFusedTracePoints + 5]) below = c2;
          }
          if (below >= 0 && below < ti.nsmall && q >= ti.nsmall)
            want = static_cast<double>(first_large) + static_cast<double>(shift) -
                   static_cast<double>(late[below * kFusedTracePoints + 5]);
          q = below;
        }
        EXPECT_DOUBLE_EQ(L.boundary, want);
      }
      // A skipped front (no stamps) is left out of the counts.
      T(0, 5) = 0;
      const FusedTraceSummary S2 = fused_trace_summary(X, t, tr.data(), early);
      EXPECT_EQ(S2.traced[0] + S2.traced[1], ti.nfronts - 1);
      ++checked;
    }
  }
  EXPECT_GT(checked, 0);
  // Out-of-range task or no trace: an empty summary.
  EXPECT_EQ(fused_trace_summary(X, -1, nullptr, true).fronts, 0);
}

/// A simulated kernel whose blocks take some fronts' tickets only after
/// their last child has published (a late start of 0, 1500 or 4000 ns by
/// ticket) and whose prologues vary (300 to 2700 ns): each chain step's
/// late start and prologue overrun are the stamps' differences defined in
/// FusedChainStep, and the steps add up to the chain's span (first stamp to
/// the last publication), with the prologues in it when not `early`.
TEST(FusedSubtreeIndex, TraceSummaryLateStartsAddUpToTheSpan) {
  const CscMatrix A = random_banded_spd(1500, 60, 16);
  Solver solver;
  ASSERT_TRUE(solver.analyse(A, AnalysisOptions{}, gpu_graph_options(16)).ok());
  FusedSubtreeIndex X;
  ASSERT_TRUE(build_fused_subtree_index(solver.graph(), X).ok());
  const double t0 = 1000, lag = 900, b = 1100, c = 2300, d = 500;
  idx_t with_late = 0, with_overrun = 0;
  for (idx_t t = 0; t < static_cast<idx_t>(X.task.size()); ++t) {
    const FusedTaskIndex& ti = X.task[t];
    if (ti.nfronts == 0) continue;
    for (bool early : {true, false}) {
      std::vector<std::uint64_t> tr(static_cast<std::size_t>(kFusedTracePoints * ti.nfronts), 0);
      auto T = [&](idx_t q, int i) -> std::uint64_t& { return tr[q * kFusedTracePoints + i]; };
      auto late_of = [](idx_t q) { return q % 3 == 0 ? 0.0 : q % 3 == 1 ? 1500.0 : 4000.0; };
      auto own_of = [](idx_t q) { return 300.0 + 600.0 * static_cast<double>(q % 5); };
      for (idx_t q = 0; q < ti.nfronts; ++q) {
        const FusedFront& f = X.fronts[ti.front_begin + q];
        double pub = -1;  // the last child's publication
        for (std::int64_t ch = f.child_begin; ch < f.child_end; ++ch)
          pub = std::max(pub, static_cast<double>(T(X.children[ch].ticket, 5)));
        const double start = pub < 0 ? t0 : std::max(t0, pub + late_of(q) - 1000.0);
        T(q, 0) = static_cast<std::uint64_t>(start);
        if (early) {
          T(q, 1) = static_cast<std::uint64_t>(start + own_of(q));
          T(q, 2) = static_cast<std::uint64_t>(std::max(start + own_of(q), pub + lag));
        } else {
          T(q, 1) = static_cast<std::uint64_t>(std::max(start, pub + lag));
          T(q, 2) = T(q, 1) + static_cast<std::uint64_t>(own_of(q));
        }
        T(q, 3) = T(q, 2) + static_cast<std::uint64_t>(b);
        T(q, 4) = T(q, 3) + static_cast<std::uint64_t>(c);
        T(q, 5) = T(q, 4) + static_cast<std::uint64_t>(d);
      }
      const FusedTraceSummary S = fused_trace_summary(X, t, tr.data(), early);
      ASSERT_FALSE(S.chain.empty());
      double sum = 0, late = 0, over = 0, own = 0;
      for (std::size_t i = 0; i < S.chain.size(); ++i) {
        const FusedChainStep& st = S.chain[i];
        const idx_t q = st.ticket;
        if (i + 1 < S.chain.size()) {
          const double pub = static_cast<double>(T(S.chain[i + 1].ticket, 5)), start = static_cast<double>(T(q, 0));
          EXPECT_DOUBLE_EQ(st.late_start, std::max(0.0, start - pub)) << "ticket " << q;
          EXPECT_DOUBLE_EQ(st.overrun, early ? std::max(0.0, static_cast<double>(T(q, 1)) - std::max(start, pub)) : 0.0)
              << "ticket " << q;
        } else {
          EXPECT_EQ(st.children, 0);
          EXPECT_DOUBLE_EQ(st.late_start, 0.0);
          EXPECT_DOUBLE_EQ(st.overrun, 0.0);
        }
        with_late += st.late_start > 0;
        with_overrun += st.overrun > 0;
        late += st.late_start;
        over += st.overrun;
        own += early ? 0.0 : static_cast<double>(T(q, 2) - T(q, 1));
        sum += st.late_start + st.overrun + st.lag + st.extend_add + st.factor + st.write;
      }
      EXPECT_DOUBLE_EQ(S.late_start, late);
      EXPECT_DOUBLE_EQ(S.overrun, over);
      const double span = static_cast<double>(T(S.chain.front().ticket, 5)) - t0;
      EXPECT_DOUBLE_EQ(sum + own, span) << "task " << t << " early " << early;
    }
  }
  EXPECT_GT(with_late, 0);  // the simulation exercised both
  EXPECT_GT(with_overrun, 0);
}

/// With the testing aid that attaches GPU buffers without CUDA workers, the
/// executor registers the fused index once per analysis: two factorisations
/// build it once, a new analysis builds it again; results are unchanged.
TEST(FusedSubtreeIndex, ExecutorUploadsTheIndexOncePerAnalysis) {
  std::unique_ptr<StarpuRuntime> rt;
  ASSERT_TRUE(StarpuRuntime::start(RuntimeOptions{2, 0, "lws"}, rt).ok());
  set_gpu_assembly_buffers_without_cuda(true);
  const CscMatrix A = random_banded_spd(2000, 6, 9);
  Solver solver;
  GraphOptions go = gpu_graph_options(2, kGpuFusedFront);
  // Several subtree tasks and front tasks above them: the smallest bound on
  // fused front orders that leaves more than one subtree task.
  for (go.max_subtree_front = 8; go.max_subtree_front < 64; go.max_subtree_front += 2) {
    ASSERT_TRUE(solver.analyse(A, AnalysisOptions{}, go).ok());
    if (graph_stats(solver.graph()).by_kind[static_cast<int>(TaskKind::subtree)] > 1) break;
  }
  ASSERT_GT(graph_stats(solver.graph()).by_kind[static_cast<int>(TaskKind::subtree)], 1);
  const long long b0 = gpu_assembly_index_builds();
  ASSERT_TRUE(solver.factorize(A, FactorOptions{}, Executor::sequential).ok());
  const std::vector<double> ref = solver.factor().Lx;
  for (int rep = 0; rep < 2; ++rep) {
    ASSERT_TRUE(solver.factorize(A, FactorOptions{}, Executor::starpu).ok());
    EXPECT_EQ(solver.factor().Lx, ref);
  }
  EXPECT_EQ(gpu_assembly_index_builds() - b0, 1);
  ASSERT_TRUE(solver.analyse(A, AnalysisOptions{}, go).ok());
  ASSERT_TRUE(solver.factorize(A, FactorOptions{}, Executor::starpu).ok());
  EXPECT_EQ(gpu_assembly_index_builds() - b0, 2);
  set_gpu_assembly_buffers_without_cuda(false);
}

}  // namespace
}  // namespace starfront
