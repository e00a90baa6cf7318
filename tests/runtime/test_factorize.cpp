// Numeric factorisation: the sequential executor and the StarPU executor
// against dense LAPACK on random SPD matrices, against each other (bitwise:
// every front runs the same kernel on the same inputs in the same child
// order), on every real SPD matrix under several schedulers and worker
// counts, and the not-positive-definite error.
#include <gtest/gtest.h>
#include <lapacke.h>
#include <starpu.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cmath>
#include <cstring>
#include <random>
#include <filesystem>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "api/solver.hpp"
#include "common/problem.hpp"
#include "cpu/blas.hpp"
#include "cpu/front_cholesky.hpp"
#include "cpu/small_dense.hpp"
#include "common/random_matrices.hpp"
#include "io/matrix_market.hpp"
#include "plan/cb_slots.hpp"
#include "runtime/sequential/sequential_executor.hpp"
#include "runtime/starpu/runtime.hpp"
#include "runtime/starpu/starpu_executor.hpp"
#include "runtime/starpu/task_codelets.hpp"
#include "solve/solve.hpp"
#include "sparse/csc.hpp"
#include "sparse/generators.hpp"

namespace starfront {
namespace {

using testing::random_spd;
using testing::random_vector;
using testing::to_dense;

/// Solves A x = b with `solver` (already analysed) and returns x.
std::vector<double> solve_with(Solver& solver, const CscMatrix& A, const std::vector<double>& b,
                               Executor exec) {
  FactorOptions fo;
  fo.watchdog_seconds = 120;  // a hang fails the test with the stalled tasks named
  Status st = solver.factorize(A, fo, exec);
  EXPECT_TRUE(st.ok()) << st.message;
  std::vector<double> x = b;
  st = solver.solve(x.data(), 1, std::max<idx_t>(1, A.n));
  EXPECT_TRUE(st.ok()) << st.message;
  return x;
}

/// Dense LAPACK solution of A x = b (DPOSV).
std::vector<double> dense_solve(const CscMatrix& A, const std::vector<double>& b) {
  std::vector<double> D = to_dense(A), x = b;
  const lapack_int n = static_cast<lapack_int>(A.n);
  EXPECT_EQ(LAPACKE_dposv(LAPACK_COL_MAJOR, 'L', n, 1, D.data(), n, x.data(), n), 0);
  return x;
}

using testing::rel_diff;

class StarpuTest : public ::testing::Test {
 protected:
  void start(const std::string& sched, int ncpu) {
    rt_.reset();
    Status st = StarpuRuntime::start(RuntimeOptions{ncpu, 0, sched}, rt_);
    ASSERT_TRUE(st.ok()) << st.message;
  }
  void TearDown() override { rt_.reset(); }
  std::unique_ptr<StarpuRuntime> rt_;
};

/// The .mtx files of ../shared/data/spd, sorted (none when the folder is missing).
std::vector<std::filesystem::path> spd_files() {
  const std::filesystem::path dir = std::filesystem::path(STARFRONT_DATA_DIR) / "spd";
  std::vector<std::filesystem::path> files;
  if (!std::filesystem::is_directory(dir)) return files;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.path().extension() == ".mtx") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  return files;
}

TEST(SequentialFactorize, RandomSpdMatchesDenseLapack) {
  for (std::uint64_t seed = 1; seed <= 60; ++seed) {
    const idx_t n = 1 + static_cast<idx_t>(seed * 7 % 120);
    const CscMatrix A = random_spd(n, 0.02 + 0.3 * (seed % 5) / 5.0, seed);
    const std::vector<double> b = random_vector(n, seed + 1000);
    for (OrderingMethod ord : {OrderingMethod::scotch, OrderingMethod::natural}) {
      Solver solver;
      AnalysisOptions ao;
      ao.ordering = ord;
      ASSERT_TRUE(solver.analyse(A, ao).ok());
      const std::vector<double> x = solve_with(solver, A, b, Executor::sequential);
      EXPECT_LT(rel_diff(x, dense_solve(A, b)), 1e-12) << "seed " << seed << " n " << n;
      EXPECT_LT(backward_error(A, x.data(), b.data()), 1e-14) << "seed " << seed;
    }
  }
}

/// The analysis for latency-bound trees (OrderingChoice::critical_path, the
/// critical-path amalgamation, a front cap) gives a different tree, not a
/// different answer: random SPD matrices against dense LAPACK, and every
/// real SPD matrix through StarPU on 2 CPU workers equal to the sequential
/// executor, backward error <= 1e-14.
TEST(SequentialFactorize, CriticalPathAnalysisMatchesDenseLapack) {
  for (std::uint64_t seed = 1; seed <= 40; ++seed) {
    const idx_t n = 1 + static_cast<idx_t>(seed * 11 % 150);
    const CscMatrix A = random_spd(n, 0.02 + 0.3 * (seed % 5) / 5.0, seed + 500);
    const std::vector<double> b = random_vector(n, seed + 2000);
    AnalysisOptions ao;
    ao.ordering_choice = OrderingChoice::critical_path;
    ao.relax_critical_path = true;
    ao.relax_max_front = seed % 2 ? 0 : 3 + static_cast<idx_t>(seed % 17);
    Solver solver;
    ASSERT_TRUE(solver.analyse(A, ao).ok());
    const std::vector<double> x = solve_with(solver, A, b, Executor::sequential);
    EXPECT_LT(rel_diff(x, dense_solve(A, b)), 1e-12) << "seed " << seed << " n " << n;
    EXPECT_LT(backward_error(A, x.data(), b.data()), 1e-14) << "seed " << seed;
  }
}

TEST_F(StarpuTest, CriticalPathAnalysisOnRealSpdMatrices) {
  const std::vector<std::filesystem::path> files = spd_files();
  ASSERT_GE(files.size(), 7u) << STARFRONT_DATA_DIR;
  start("dmda", 2);
  AnalysisOptions ao;
  ao.ordering_choice = OrderingChoice::critical_path;
  ao.relax_critical_path = true;
  ao.relax_max_front = 232;
  for (const auto& f : files) {
    CscMatrix A;
    ASSERT_TRUE(read_matrix_market(f.string(), A).ok()) << f;
    Solver solver;
    ASSERT_TRUE(solver.analyse(A, ao).ok()) << f;
    const std::vector<double> b = random_vector(A.n, 43);
    const std::vector<double> xs = solve_with(solver, A, b, Executor::sequential);
    const std::vector<double> xp = solve_with(solver, A, b, Executor::starpu);
    EXPECT_EQ(xs, xp) << f;
    EXPECT_LE(backward_error(A, xp.data(), b.data()), 1e-14) << f;
  }
}

/// The factor of a multifrontal pass over every front of P in postorder,
/// each front by factor_front_cpu with CB column blocks of width w (0: one
/// DSYRK); every CB in its own buffer.
std::vector<double> factor_all_fronts(const FrontPlan& P, const double* values, idx_t w) {
  std::vector<double> Lx(static_cast<std::size_t>(P.factor_size()), 0.0);
  std::vector<std::vector<double>> cb(static_cast<std::size_t>(P.nsuper));
  for (idx_t s = 0; s < P.nsuper; ++s) {
    cb[s].assign(static_cast<std::size_t>(P.cb_order(s) * P.cb_order(s)), std::nan(""));  // never read before written
    std::vector<const double*> child;
    for (idx_t q = P.child_ptr[s]; q < P.child_ptr[s + 1]; ++q) {
      EXPECT_LT(P.child_list[q], s);
      child.push_back(cb[P.child_list[q]].data());
    }
    const FrontResult r = factor_front_cpu(P, s, values, Lx.data() + P.l_offset[s],
                                           P.cb_order(s) > 0 ? cb[s].data() : nullptr, child.data(), 0.0, w);
    EXPECT_EQ(r.state, FrontResult::State::done) << "front " << s;
  }
  return Lx;
}

TEST(CpuFrontKernel, CbByColumnBlocksEqualsOneDsyrk) {
  // A 3D Laplacian (CBs of order up to ~250 from few columns: several
  // blocks each, children's columns spread over them) and random SPD
  // patterns with random values; widths 1 (every column its own block),
  // odd ones, the default and one above every CB (a single block).
  std::vector<CscMatrix> As(1);
  ASSERT_TRUE(laplace3d(11, 7, As[0]).ok());
  for (std::uint64_t seed : {3u, 8u}) As.push_back(random_spd(500, 0.01 * seed, seed));
  for (const CscMatrix& A : As) {
    testing::Problem pb;
    testing::setup(pb, A);
    idx_t blocked_fronts = 0;
    for (idx_t s = 0; s < pb.P.nsuper; ++s)
      blocked_fronts += pb.P.ncols(s) < kCbBlockMaxColumns && pb.P.cb_order(s) > kCbBlockColumns;
    EXPECT_GT(blocked_fronts, 3) << "n " << A.n << ": too few fronts with several column blocks";
    const std::vector<double> ref = factor_all_fronts(pb.P, pb.A.values.data(), 0);
    double scale = 0;
    for (double v : ref) scale = std::max(scale, std::fabs(v));
    for (idx_t w : {idx_t{1}, idx_t{5}, idx_t{17}, kCbBlockColumns, idx_t{100000}}) {
      const std::vector<double> Lx = factor_all_fronts(pb.P, pb.A.values.data(), w);
      double diff = 0;
      for (std::size_t i = 0; i < Lx.size(); ++i) {
        const double d = std::fabs(Lx[i] - ref[i]);
        if (!(d <= diff)) diff = d;  // a NaN difference counts (and fails)
      }
      EXPECT_LE(diff, 1e-13 * scale) << "n " << A.n << " width " << w;
    }
  }
}

/// trsm_right_lower_trans_small (the thin-panel TRSM of the CPU Cholesky
/// front) against OpenBLAS's DTRSM on fresh random inputs: every row-tile
/// edge (32-row tiles, 8-row tiles, a 1..7-row remainder) and k from 0 to
/// kSmallTrsmMaxK; L's strict upper part and X's padding rows hold NaN and
/// must stay unread and untouched. Wider panels are refused, untouched. On a
/// CPU without AVX-512 (small_trsm_supported() false) every call must
/// decline and leave X as it was (factor_front_cpu then uses DTRSM).
TEST(SmallTrsm, EqualsOpenBlasDtrsm) {
  if (!small_trsm_supported()) {
    std::printf("[ no x86-64-v4 here: checking that the kernel declines ]\n");
    std::vector<double> L(16 * 16, 1.0), X(40 * 16, 3.0);
    const std::vector<double> X0 = X;
    EXPECT_FALSE(trsm_right_lower_trans_small(40, 16, L.data(), 16, X.data(), 40));
    EXPECT_EQ(X, X0);
    return;
  }
  const unsigned seed = std::random_device{}();
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0), diag(0.5, 2.0);
  const double nan = std::nan("");
  int cases = 0;
  for (idx_t mc : {0, 1, 5, 7, 8, 9, 15, 31, 32, 33, 39, 40, 47, 64, 71, 257})
    for (idx_t k : {idx_t{0}, idx_t{1}, idx_t{2}, idx_t{3}, idx_t{8}, idx_t{13}, idx_t{31}, idx_t{32}, idx_t{33},
                    idx_t{63}, kSmallTrsmMaxK}) {
      const idx_t ldl = k + 2, ldx = mc + 3;
      std::vector<double> L(static_cast<std::size_t>(ldl * std::max<idx_t>(k, 1)), nan);
      for (idx_t j = 0; j < k; ++j) {
        L[j + j * ldl] = diag(rng);
        for (idx_t i = j + 1; i < k; ++i) L[i + j * ldl] = u(rng) / static_cast<double>(k);
      }
      std::vector<double> X(static_cast<std::size_t>(ldx * std::max<idx_t>(k, 1)), nan);
      for (idx_t j = 0; j < k; ++j)
        for (idx_t r = 0; r < mc; ++r) X[r + j * ldx] = u(rng);
      std::vector<double> ref = X;
      if (mc > 0 && k > 0)
        cblas_dtrsm(CblasColMajor, CblasRight, CblasLower, CblasTrans, CblasNonUnit, static_cast<int>(mc),
                    static_cast<int>(k), 1.0, L.data(), static_cast<int>(ldl), ref.data(), static_cast<int>(ldx));
      ASSERT_TRUE(trsm_right_lower_trans_small(mc, k, L.data(), ldl, X.data(), ldx))
          << "mc " << mc << " k " << k << " seed " << seed;
      double diff = 0, scale = 0;
      for (idx_t j = 0; j < k; ++j)
        for (idx_t r = 0; r < ldx; ++r) {
          const double x = X[r + j * ldx], y = ref[r + j * ldx];
          if (r >= mc) {
            EXPECT_TRUE(std::isnan(x)) << "padding row " << r << " written, mc " << mc << " k " << k;
            continue;
          }
          scale = std::max(scale, std::fabs(y));
          const double d = std::fabs(x - y);
          if (!(d <= diff)) diff = d;  // a NaN difference counts (and fails)
        }
      EXPECT_LE(diff, 1e-14 * std::max(scale, 1.0)) << "mc " << mc << " k " << k << " seed " << seed;
      ++cases;
    }
  EXPECT_EQ(cases, 16 * 11);
  std::vector<double> L(static_cast<std::size_t>(65 * 65), 1.0), X(static_cast<std::size_t>(10 * 65), 3.0);
  const std::vector<double> X0 = X;
  EXPECT_FALSE(trsm_right_lower_trans_small(10, kSmallTrsmMaxK + 1, L.data(), 65, X.data(), 10));
  EXPECT_FALSE(trsm_right_lower_trans_small(-1, 4, L.data(), 65, X.data(), 10));
  EXPECT_EQ(X, X0);
}

TEST(SequentialFactorize, RandomTopologicalOrdersGiveIdenticalFactors) {
  const CscMatrix A = random_spd(300, 0.02, 77);
  Solver solver;
  ASSERT_TRUE(solver.analyse(A, AnalysisOptions{}).ok());
  NumericFactor ref;
  ASSERT_TRUE(factorize_sequential(solver.graph(), A, FactorOptions{}, ref).ok());
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    NumericFactor F;
    ASSERT_TRUE(factorize_sequential(solver.graph(), A, FactorOptions{}, F, nullptr, seed).ok());
    EXPECT_EQ(F.Lx, ref.Lx) << "order seed " << seed;
  }
}

TEST_F(StarpuTest, StarpuEqualsSequentialBitwiseOnRandomSpd) {
  for (const char* sched : {"lws", "eager", "dmda", "random"}) {
    start(sched, 2);
    for (std::uint64_t seed = 1; seed <= 15; ++seed) {
      const idx_t n = 20 + static_cast<idx_t>(seed * 13 % 200);
      const CscMatrix A = random_spd(n, 0.03, seed);
      Solver solver;
      ASSERT_TRUE(solver.analyse(A, AnalysisOptions{}).ok());
      const std::vector<double> b = random_vector(n, seed);
      const std::vector<double> xs = solve_with(solver, A, b, Executor::sequential);
      const std::vector<double> xp = solve_with(solver, A, b, Executor::starpu);
      EXPECT_EQ(xs, xp) << sched << " seed " << seed;
      EXPECT_LT(rel_diff(xp, dense_solve(A, b)), 1e-12) << sched << " seed " << seed;
    }
  }
}

/// Every matrix of ../shared/data/spd: backward error <= 1e-14 with b = A*1
/// and with a random b, under each scheduler and 1 and 2 CPU workers; the
/// solution identical to the sequential executor's.
TEST_F(StarpuTest, RealSpdMatricesAllSchedulersAndWorkerCounts) {
  const std::vector<std::filesystem::path> files = spd_files();
  ASSERT_GE(files.size(), 7u) << STARFRONT_DATA_DIR;
  struct Case {
    CscMatrix A;
    std::unique_ptr<Solver> solver;
    std::vector<double> b, x_ref;
  };
  std::vector<Case> cases;
  for (const auto& f : files) {
    Case c;
    Status st = read_matrix_market(f.string(), c.A);
    ASSERT_TRUE(st.ok()) << st.message;
    c.solver = std::make_unique<Solver>();
    ASSERT_TRUE(c.solver->analyse(c.A, AnalysisOptions{}).ok()) << f;
    c.b = random_vector(c.A.n, 42);
    c.x_ref = solve_with(*c.solver, c.A, c.b, Executor::sequential);
    cases.push_back(std::move(c));
  }
  for (const char* sched : {"lws", "eager", "dmda"}) {
    for (int ncpu : {1, 2}) {
      start(sched, ncpu);
      for (std::size_t i = 0; i < cases.size(); ++i) {
        Case& c = cases[i];
        const std::vector<double> x = solve_with(*c.solver, c.A, c.b, Executor::starpu);
        const double berr = backward_error(c.A, x.data(), c.b.data());
        EXPECT_LE(berr, 1e-14) << files[i] << " " << sched << " ncpu " << ncpu;
        EXPECT_EQ(x, c.x_ref) << files[i] << " " << sched << " ncpu " << ncpu;
        std::vector<double> ones(c.A.n, 1.0), b1(c.A.n);
        symmetric_matvec(c.A, ones.data(), b1.data());
        const std::vector<double> x1 = solve_with(*c.solver, c.A, b1, Executor::starpu);
        EXPECT_LE(backward_error(c.A, x1.data(), b1.data()), 1e-14) << files[i];
      }
    }
  }
}

/// A tiled graph (small tiles, commutative extend-adds): every scheduler and
/// worker count gives the sequential executor's solution to 1e-13 relative.
TEST_F(StarpuTest, TiledGraphSameValuesAcrossSchedulers) {
  CscMatrix A;
  ASSERT_TRUE(laplace3d(12, 27, A).ok());
  GraphOptions go;
  go.tile_threshold = 32;
  go.tile_size = 16;
  go.workers = 2;
  Solver solver;
  ASSERT_TRUE(solver.analyse(A, AnalysisOptions{}, go).ok());
  const GraphStats gs = graph_stats(solver.graph());
  ASSERT_GT(gs.tiled_fronts, 0);
  ASSERT_GT(gs.by_kind[static_cast<int>(TaskKind::extend_add)], 0);
  const std::vector<double> b = random_vector(A.n, 3);
  const std::vector<double> ref = solve_with(solver, A, b, Executor::sequential);
  for (const char* sched : {"lws", "dmda", "dmdas", "random", "eager"})
    for (int ncpu : {1, 2}) {
      start(sched, ncpu);
      for (int rep = 0; rep < 3; ++rep) {
        const std::vector<double> x = solve_with(solver, A, b, Executor::starpu);
        EXPECT_LT(rel_diff(x, ref), 1e-13) << sched << " ncpu " << ncpu;
        EXPECT_LE(backward_error(A, x.data(), b.data()), 1e-14) << sched;
      }
    }
}

/// A refactorisation reuses the factor's storage (starpu_executor.cpp): every
/// entry of L must be overwritten. Factorise other values first (diagonal ×
/// a random factor in [2, 5]), then the matrix itself, on a tiled graph with
/// fused subtrees and single fronts: L equals a fresh solver's L entry by
/// entry to 1e-13 of max|L| (stale entries would differ by O(1)).
TEST_F(StarpuTest, RefactorisationOverwritesEveryEntryOfTheReusedFactor) {
  CscMatrix A;
  ASSERT_TRUE(laplace3d(16, 7, A).ok());
  GraphOptions go;
  go.tile_threshold = 100;
  go.tile_size = 32;
  go.workers = 2;
  CscMatrix other = A;
  std::mt19937_64 rng(77);
  std::uniform_real_distribution<double> scale(2.0, 5.0);
  for (idx_t j = 0; j < other.n; ++j) other.values[other.colptr[j]] *= scale(rng);
  start("dmda", 2);
  Solver reused, fresh;
  ASSERT_TRUE(reused.analyse(A, AnalysisOptions{}, go).ok());
  ASSERT_TRUE(fresh.analyse(A, AnalysisOptions{}, go).ok());
  const GraphStats gs = graph_stats(reused.graph());
  ASSERT_GT(gs.tiled_fronts, 0);
  ASSERT_GT(gs.by_kind[static_cast<int>(TaskKind::subtree)], 0);
  ASSERT_GT(gs.by_kind[static_cast<int>(TaskKind::front)], 0);
  ASSERT_TRUE(reused.factorize(other, FactorOptions{}, Executor::starpu).ok());
  const double* first = reused.factor().Lx.data();
  ASSERT_TRUE(reused.factorize(A, FactorOptions{}, Executor::starpu).ok());
  EXPECT_EQ(reused.factor().Lx.data(), first);  // the storage was reused
  ASSERT_TRUE(fresh.factorize(A, FactorOptions{}, Executor::starpu).ok());
  const std::vector<double>& L1 = reused.factor().Lx;
  const std::vector<double>& L2 = fresh.factor().Lx;
  ASSERT_EQ(L1.size(), L2.size());
  double lmax = 0, dmax = 0;
  for (std::size_t i = 0; i < L1.size(); ++i) {
    lmax = std::max(lmax, std::fabs(L2[i]));
    dmax = std::max(dmax, std::fabs(L1[i] - L2[i]));
  }
  ASSERT_GT(lmax, 0.0);
  EXPECT_LE(dmax, 1e-13 * lmax);
}

/// Contribution-block slot policies (plan/cb_slots.hpp): with every policy
/// the StarPU factorisation gives the private-slot solution to 1e-13
/// relative under schedulers lws, dmda and random, 20 runs each, on a tiled
/// graph (slots per CB tile) and on the power-grid matrix (whole CBs).
TEST_F(StarpuTest, SlotPoliciesGiveThePrivateSlotResult) {
  struct Case {
    CscMatrix A;
    GraphOptions go;
    std::string name;
  };
  std::vector<Case> cases(2);
  ASSERT_TRUE(laplace3d(9, 27, cases[0].A).ok());
  cases[0].go.tile_threshold = 32;
  cases[0].go.tile_size = 16;
  cases[0].go.workers = 2;
  cases[0].name = "laplace3d 9^3 27-point, tiles of 16";
  ASSERT_TRUE(read_matrix_market(std::string(STARFRONT_DATA_DIR) + "/spd/activsg2000_hykkt_10.mtx",
                                 cases[1].A).ok());
  cases[1].go.workers = 2;
  cases[1].name = "activsg2000_hykkt_10";
  struct Run {
    Solver solver;
    std::string policy;
  };
  for (Case& c : cases) {
    const std::vector<double> b = random_vector(c.A.n, 17);
    std::vector<std::unique_ptr<Run>> runs;
    for (const char* pol : {"private", "dag", "budget-min", "budget"}) {
      auto r = std::make_unique<Run>();
      r->policy = pol;
      GraphOptions go = c.go;
      if (r->policy == "budget") {  // halfway between the minimum and the dag plan
        GraphOptions gd = c.go, gm = c.go;
        gm.slots.policy = SlotPolicy::budget_min;
        Solver sd, sm;
        ASSERT_TRUE(sd.analyse(c.A, AnalysisOptions{}, gd).ok());
        ASSERT_TRUE(sm.analyse(c.A, AnalysisOptions{}, gm).ok());
        go.slots.policy = SlotPolicy::budget;
        go.slots.budget_bytes = 0.5 * (sd.memory().cb_planned + sm.memory().cb_planned);
      } else {
        ASSERT_TRUE(parse_slot_policy(r->policy, go.slots).ok());
      }
      ASSERT_TRUE(r->solver.analyse(c.A, AnalysisOptions{}, go).ok()) << c.name << " " << pol;
      runs.push_back(std::move(r));
    }
    if (&c == &cases[0]) {
      ASSERT_GT(graph_stats(runs[0]->solver.graph()).tiled_fronts, 0);
    }
    EXPECT_LT(runs[1]->solver.memory().cb_planned, runs[0]->solver.memory().cb_planned) << c.name;
    EXPECT_GT(runs[2]->solver.memory().added_deps, 0) << c.name;
    const std::vector<double> ref = solve_with(runs[0]->solver, c.A, b, Executor::sequential);
    for (const char* sched : {"lws", "dmda", "random"}) {
      start(sched, 2);
      for (auto& r : runs)
        for (int rep = 0; rep < 20; ++rep) {
          const std::vector<double> x = solve_with(r->solver, c.A, b, Executor::starpu);
          EXPECT_LE(rel_diff(x, ref), 1e-13) << c.name << " " << r->policy << " " << sched << " run " << rep;
        }
    }
  }
}

/// The watchdog: a task that never finishes (FactorOptions::debug_stall_task,
/// cooperative: it returns once cancelled) turns into runtime_error naming
/// it after watchdog_seconds without progress; the runtime stays usable and
/// the next factorisation is right; a watchdog that is not triggered changes
/// nothing.
TEST_F(StarpuTest, WatchdogCancelsAStalledFactorisation) {
  CscMatrix A;
  ASSERT_TRUE(laplace3d(10, 27, A).ok());
  GraphOptions go;
  go.tile_threshold = 32;
  go.tile_size = 16;
  go.workers = 2;
  Solver solver;
  ASSERT_TRUE(solver.analyse(A, AnalysisOptions{}, go).ok());
  const std::vector<double> b = random_vector(A.n, 8);
  const std::vector<double> ref = solve_with(solver, A, b, Executor::sequential);
  for (const char* sched : {"lws", "dmda"}) {
    start(sched, 2);
    const TaskGraph& G = solver.graph();
    const idx_t stall = static_cast<idx_t>(G.tasks.size()) / 2;
    FactorOptions fo;
    fo.watchdog_seconds = 0.5;
    fo.debug_stall_task = stall;
    const auto t0 = std::chrono::steady_clock::now();
    const Status st = solver.factorize(A, fo, Executor::starpu);
    const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    EXPECT_EQ(st.code, StatusCode::runtime_error) << sched;
    EXPECT_NE(st.message.find("no task completed for 0.5 s"), std::string::npos) << st.message;
    EXPECT_NE(st.message.find(task_name(G, G.tasks[stall])), std::string::npos) << st.message;
    EXPECT_NE(st.message.find("cancelled"), std::string::npos) << st.message;
    // The diagnosis of a stall: how many tasks the graph allows to run that
    // have not started (the stalled task itself is running, not among them).
    const std::size_t ready = st.message.find("ready by the graph but not started: ");
    EXPECT_NE(ready, std::string::npos) << st.message;
    if (ready != std::string::npos) {
      const std::size_t end = st.message.find("; the factorisation", ready);
      const std::string list = st.message.substr(ready, end == std::string::npos ? std::string::npos : end - ready);
      EXPECT_EQ(list.find(task_name(G, G.tasks[stall])), std::string::npos) << st.message;
      std::printf("%s: %s\n", sched, st.message.c_str());
    }
    EXPECT_LT(waited, 30.0) << sched;
    EXPECT_FALSE(solver.factorized());
    std::vector<double> x = b;
    EXPECT_EQ(solver.solve(x.data(), 1, A.n).code, StatusCode::invalid_argument);
    // The runtime is still usable; a watchdog that is not triggered changes nothing.
    fo.debug_stall_task = -1;
    fo.watchdog_seconds = 60;
    ASSERT_TRUE(solver.factorize(A, fo, Executor::starpu).ok()) << sched;
    x = b;
    ASSERT_TRUE(solver.solve(x.data(), 1, A.n).ok());
    EXPECT_LT(rel_diff(x, ref), 1e-13) << sched;
  }
  FactorOptions bad;
  bad.watchdog_seconds = -1;
  EXPECT_EQ(solver.factorize(A, bad, Executor::starpu).code, StatusCode::invalid_argument);
}

/// Sets (or, with nullptr, unsets) environment variables and restores their
/// earlier values when destroyed.
class EnvGuard {
 public:
  void set(const char* name, const char* value) {
    const char* old = std::getenv(name);
    saved_.push_back({name, old ? std::optional<std::string>(old) : std::nullopt});
    if (value) setenv(name, value, 1);
    else unsetenv(name);
  }
  ~EnvGuard() {
    for (auto it = saved_.rbegin(); it != saved_.rend(); ++it) {
      if (it->second) setenv(it->first.c_str(), it->second->c_str(), 1);
      else unsetenv(it->first.c_str());
    }
  }

 private:
  std::vector<std::pair<std::string, std::optional<std::string>>> saved_;
};

TEST(StarpuRuntimeOptions, StreamsPerGpuOutOfRangeIsAnError) {
  for (int streams : {-1, 65}) {
    std::unique_ptr<StarpuRuntime> rt;
    RuntimeOptions ro{1, 0, "lws"};
    ro.streams_per_gpu = streams;
    const Status st = StarpuRuntime::start(ro, rt);
    EXPECT_EQ(st.code, StatusCode::invalid_argument) << streams;
    EXPECT_NE(st.message.find("streams_per_gpu"), std::string::npos) << st.message;
    EXPECT_FALSE(rt) << streams;
  }
  // A bad STARPU_NWORKER_PER_CUDA is refused even without GPUs: a StarPU
  // built with CUDA reads it at every starpu_init and aborts on it. Then
  // StarPU can still be started.
  const char* old = std::getenv("STARPU_NWORKER_PER_CUDA");
  const std::optional<std::string> saved = old ? std::optional<std::string>(old) : std::nullopt;
  for (const char* bad : {"0", "-2", "4x", ""}) {
    setenv("STARPU_NWORKER_PER_CUDA", bad, 1);
    std::unique_ptr<StarpuRuntime> rt;
    const Status st = StarpuRuntime::start(RuntimeOptions{1, 0, "lws"}, rt);
    EXPECT_EQ(st.code, StatusCode::invalid_argument) << "'" << bad << "': " << st.message;
  }
  if (saved) setenv("STARPU_NWORKER_PER_CUDA", saved->c_str(), 1);
  else unsetenv("STARPU_NWORKER_PER_CUDA");
  std::unique_ptr<StarpuRuntime> rt;
  ASSERT_TRUE(StarpuRuntime::start(RuntimeOptions{1, 0, "lws"}, rt).ok());
}

/// "auto" (the default) resolves by GPU count; the policies that place tasks
/// by cost models are told from the others; StarPU runs the resolved one
/// (or the environment's STARPU_SCHED, which scheduler() then reports).
TEST(StarpuRuntimeOptions, AutoSchedulerResolvesByGpuCount) {
  EXPECT_EQ(RuntimeOptions{}.sched, "auto");
  EXPECT_EQ(resolve_scheduler("auto", 0), "lws");
  EXPECT_EQ(resolve_scheduler("auto", 1), "prio");
  EXPECT_EQ(resolve_scheduler("auto", 2), "dmda");
  EXPECT_EQ(resolve_scheduler("auto", 8), "dmda");
  EXPECT_EQ(resolve_scheduler("dmdas", 1), "dmdas");
  EXPECT_EQ(resolve_scheduler("eager", 0), "eager");
  EXPECT_EQ(resolve_scheduler("auto", 1, true), "lws") << "under MPI";
  EXPECT_TRUE(check_scheduler("auto").ok());
  const Status bad = check_scheduler("Auto");
  EXPECT_EQ(bad.code, StatusCode::runtime_error);
  EXPECT_NE(bad.message.find("known: auto, "), std::string::npos) << bad.message;
  const std::vector<std::string> with_models = {
      "dm", "dmda", "dmdap", "dmdas", "dmdasd", "dmdar", "pheft", "graph_test", "modular-heft", "modular-heft2",
      "modular-heft-prio", "modular-heft-hierarchical", "modular-dmda", "modular-dmdap", "modular-dmdar",
      "modular-dmdas", "modular-pheft"};
  const std::vector<std::string> without_models = {
      "eager", "prio", "lws", "ws", "random", "peager", "heteroprio", "modular-heteroprio",
      "modular-heteroprio-heft", "modular-gemm", "modular-eager", "modular-eager-prefetching", "modular-eager-prio",
      "modular-prio", "modular-prio-prefetching", "modular-random", "modular-random-prio", "modular-prandom",
      "modular-prandom-prio", "modular-ws", "modular-random-prefetching", "modular-random-prio-prefetching"};
  for (const std::string& m : with_models) EXPECT_TRUE(scheduler_uses_models(m)) << m;
  for (const std::string& m : without_models) EXPECT_FALSE(scheduler_uses_models(m)) << m;
  // Every policy this StarPU knows is one of the two lists above (a new one
  // must be classified).
  auto listed = [](const std::vector<std::string>& l, const std::string& n) {
    return std::find(l.begin(), l.end(), n) != l.end();
  };
  for (struct starpu_sched_policy** p = starpu_sched_get_predefined_policies(); *p; ++p) {
    const std::string name = (*p)->policy_name;
    EXPECT_TRUE(listed(with_models, name) || listed(without_models, name)) << "unclassified StarPU policy " << name;
  }
  // Without GPUs "auto" runs lws, unless the environment says otherwise;
  // and without CUDA workers a policy without cost models changes no
  // placement (CPU-only users see no difference).
  EnvGuard env;
  env.set("STARPU_SCHED", nullptr);
  env.set("STARPU_NCUDA", nullptr);
  {
    std::unique_ptr<StarpuRuntime> rt;
    ASSERT_TRUE(StarpuRuntime::start(RuntimeOptions{1, 0}, rt).ok());
    EXPECT_EQ(rt->scheduler(), "lws");
    EXPECT_STREQ(starpu_sched_get_sched_policy()->policy_name, "lws");
  }
  for (const char* sched : {"prio", "eager"}) {
    std::unique_ptr<StarpuRuntime> rt;
    ASSERT_TRUE(StarpuRuntime::start(RuntimeOptions{1, 0, sched}, rt).ok()) << sched;
    EXPECT_FALSE(front_placement_by_kind()) << sched;
    for (TaskKind k : {TaskKind::subtree, TaskKind::front, TaskKind::gemm})
      EXPECT_TRUE(task_codelet(k)->where & STARPU_CPU) << sched << " " << task_kind_name(k);
  }
  env.set("STARPU_SCHED", "eager");
  {
    std::unique_ptr<StarpuRuntime> rt;
    ASSERT_TRUE(StarpuRuntime::start(RuntimeOptions{1, 0, "dmda"}, rt).ok());
    EXPECT_EQ(rt->scheduler(), "eager") << "StarPU runs the environment's policy";
  }
}

TEST_F(StarpuTest, MainMemoryIsNotCappedUnlessTheCallerCapsIt) {
  // StarPU's own cap (90% of what hwloc saw at starpu_init) is lifted: with
  // it, a VM whose memory grew after boot stalled its first large
  // factorisation (bench/README.md, session 32). A cap the caller sets stays.
  EnvGuard env;
  env.set("STARPU_LIMIT_CPU_MEM", nullptr);
  env.set("STARPU_LIMIT_CPU_NUMA_MEM", nullptr);
  env.set("STARPU_USE_NUMA", nullptr);  // one main-memory node
  start("lws", 1);
  EXPECT_EQ(starpu_memory_get_total(STARPU_MAIN_RAM), -1);  // StarPU's "no limit"
  EXPECT_EQ(std::getenv("STARPU_LIMIT_CPU_NUMA_MEM"), nullptr);  // set for starpu_init only
  rt_.reset();
  env.set("STARPU_LIMIT_CPU_MEM", "256");
  start("lws", 1);
  EXPECT_EQ(starpu_memory_get_total(STARPU_MAIN_RAM), 256LL << 20);
}

TEST_F(StarpuTest, MainMemoryCapBelowTheSlotsIsAnErrorNotAStall) {
  // With the caller's cap below the contribution-block slots StarPU must
  // allocate, StarPU waited for ever for memory (a CPU worker in
  // starpu_memory_allocate); the factorisation now says so up front, before
  // it touches the caller's factor.
  EnvGuard env;
  env.set("STARPU_LIMIT_CPU_MEM", "1");
  env.set("STARPU_USE_NUMA", nullptr);
  start("lws", 2);
  CscMatrix small, big;
  ASSERT_TRUE(laplace3d(4, 7, small).ok());
  ASSERT_TRUE(laplace3d(24, 7, big).ok());
  Solver ok_solver, solver;
  ASSERT_TRUE(ok_solver.analyse(small, AnalysisOptions{}).ok());
  FactorOptions fo;
  fo.watchdog_seconds = 10;  // a stall fails (and, abandoned, may still hang the binary at shutdown)
  ASSERT_TRUE(ok_solver.factorize(small, fo, Executor::starpu).ok());  // its slots fit: it runs
  ASSERT_TRUE(solver.analyse(big, AnalysisOptions{}).ok());
  NumericFactor F;
  ASSERT_TRUE(factorize_sequential(solver.graph(), big, fo, F).ok());
  const std::vector<double> before = F.Lx;
  const Status st = factorize_starpu(solver.graph(), big, fo, F);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.code, StatusCode::runtime_error);
  EXPECT_NE(st.message.find("capped at 1 MiB"), std::string::npos) << st.message;
  EXPECT_NE(st.message.find("STARPU_LIMIT_CPU_MEM"), std::string::npos) << st.message;
  EXPECT_EQ(F.Lx, before) << "the caller's factor was touched";
  // The Solver reports it the same way (and, as after any failed
  // factorisation, holds no factor).
  const Status st2 = solver.factorize(big, fo, Executor::starpu);
  EXPECT_EQ(st2.code, StatusCode::runtime_error) << st2.message;
}

/// Tridiagonal SPD matrix except one negative diagonal entry at column j:
/// under every ordering the failing pivot is column j (its pivot is at most
/// a_jj < 0 whatever the order; the others only grow).
TEST_F(StarpuTest, NotPositiveDefiniteNamesTheColumn) {
  start("lws", 2);
  const idx_t n = 200;
  for (idx_t bad : {idx_t{0}, idx_t{57}, n - 1}) {
    std::vector<idx_t> r, c;
    std::vector<double> v;
    for (idx_t i = 0; i < n; ++i) {
      r.push_back(i), c.push_back(i), v.push_back(i == bad ? -3.0 : 4.0);
      if (i + 1 < n) r.push_back(i + 1), c.push_back(i), v.push_back(-1.0);
    }
    CscMatrix A;
    ASSERT_TRUE(lower_csc_from_triplets(n, r, c, v, A).ok());
    for (OrderingMethod ord : {OrderingMethod::scotch, OrderingMethod::natural}) {
      for (Executor ex : {Executor::starpu, Executor::sequential}) {
        Solver solver;
        AnalysisOptions ao;
        ao.ordering = ord;
        ASSERT_TRUE(solver.analyse(A, ao).ok());
        const Status st = solver.factorize(A, FactorOptions{}, ex);
        EXPECT_EQ(st.code, StatusCode::not_positive_definite);
        EXPECT_EQ(st.column, bad);
        EXPECT_LT(st.pivot, 0.0);
        EXPECT_NE(st.message.find("column " + std::to_string(bad + 1)), std::string::npos)
            << st.message;
        EXPECT_FALSE(solver.factorized());
        std::vector<double> x(n, 1.0);
        EXPECT_FALSE(solver.solve(x.data(), 1, n).ok());
      }
    }
  }
}

TEST_F(StarpuTest, SingularAndZeroPivotsAreReported) {
  start("eager", 1);
  // Identity 10x10 with (10,10) = 0: column 10.
  {
    std::vector<idx_t> r, c;
    std::vector<double> v;
    for (idx_t i = 0; i < 10; ++i) r.push_back(i), c.push_back(i), v.push_back(i == 9 ? 0.0 : 1.0);
    CscMatrix A;
    ASSERT_TRUE(lower_csc_from_triplets(10, r, c, v, A).ok());
    Solver solver;
    ASSERT_TRUE(solver.analyse(A, AnalysisOptions{}).ok());
    const Status st = solver.factorize(A, FactorOptions{}, Executor::starpu);
    EXPECT_EQ(st.code, StatusCode::not_positive_definite);
    EXPECT_EQ(st.column, 9);
  }
  // Rank deficient: column 3 = column 1 + column 2 (natural order: column 3 fails).
  {
    CscMatrix A;
    ASSERT_TRUE(lower_csc_from_triplets(3, {0, 1, 2, 1, 2, 2}, {0, 0, 0, 1, 1, 2},
                                        {2, 1, 3, 2, 3, 6}, A)
                    .ok());
    Solver solver;
    AnalysisOptions ao;
    ao.ordering = OrderingMethod::natural;
    ASSERT_TRUE(solver.analyse(A, ao).ok());
    const Status st = solver.factorize(A, FactorOptions{}, Executor::starpu);
    EXPECT_EQ(st.code, StatusCode::not_positive_definite) << st.message;
    EXPECT_EQ(st.column, 2);
  }
  // A NaN value is refused before any work.
  {
    CscMatrix A;
    ASSERT_TRUE(lower_csc_from_triplets(2, {0, 1}, {0, 1}, {1.0, std::nan("")}, A).ok());
    Solver solver;
    ASSERT_TRUE(solver.analyse(A, AnalysisOptions{}).ok());
    const Status st = solver.factorize(A, FactorOptions{}, Executor::starpu);
    EXPECT_EQ(st.code, StatusCode::invalid_argument);
    EXPECT_NE(st.message.find("(2, 2)"), std::string::npos) << st.message;
  }
}

TEST_F(StarpuTest, RefactorisationWithNewValuesAndPatternCheck) {
  start("lws", 2);
  CscMatrix A = random_spd(150, 0.05, 5);
  Solver solver;
  ASSERT_TRUE(solver.analyse(A, AnalysisOptions{}).ok());
  for (int it = 0; it < 5; ++it) {
    for (idx_t j = 0; j < A.n; ++j) A.values[A.colptr[j]] *= 1.0 + 0.1 * (it + 1);  // diagonal
    const std::vector<double> b = random_vector(A.n, it);
    const std::vector<double> x = solve_with(solver, A, b, Executor::starpu);
    EXPECT_LT(rel_diff(x, dense_solve(A, b)), 1e-12);
  }
  CscMatrix B = random_spd(150, 0.05, 6);  // another pattern
  const Status st = solver.factorize(B, FactorOptions{}, Executor::starpu);
  EXPECT_EQ(st.code, StatusCode::invalid_argument);
  EXPECT_NE(st.message.find("pattern"), std::string::npos) << st.message;
}

/// The phase breakdown of FactorStats: every phase >= 0, their sum within
/// the wall time of Solver::factorize, the executor's own figure inside it,
/// and the phases each executor has are filled. Returns whether the phases
/// cover at least half the wall time (the gaps between phases are a few
/// statements): the callers require it of at least one of several runs,
/// since a loaded machine can stall a thread between two phases (seen under
/// the sanitizers beside a build: 1.9 of 3.1 ms), while a phase left out
/// misses it in every run.
bool expect_phases_cover(const Solver& solver, double wall, Executor exec) {
  const FactorStats& fs = solver.stats().factor;
  const FactorPhases& ph = fs.phases;
  for (double x : {ph.check, ph.setup, ph.submit, ph.execute, ph.writeback, ph.finish}) EXPECT_GE(x, 0.0);
  EXPECT_GT(fs.total_seconds, 0.0);
  EXPECT_LE(fs.total_seconds, wall);
  EXPECT_LE(fs.seconds, fs.total_seconds);
  EXPECT_LE(ph.sum(), fs.total_seconds + 1e-6);
  EXPECT_GT(ph.check, 0.0);
  EXPECT_GT(ph.setup, 0.0);
  EXPECT_GT(ph.execute, 0.0);
  EXPECT_GT(ph.finish, 0.0);
  if (exec == Executor::starpu) {
    EXPECT_GT(ph.submit, 0.0);
    EXPECT_GT(ph.writeback, 0.0);
    // The executor's wall time is setup to writeback.
    EXPECT_LE(ph.setup + ph.submit + ph.execute + ph.writeback, fs.seconds + 1e-6);  // separate clock reads
  } else {
    EXPECT_EQ(ph.submit, 0.0);
    EXPECT_EQ(ph.writeback, 0.0);
  }
  return ph.sum() >= 0.5 * fs.total_seconds;
}

TEST_F(StarpuTest, FactorPhasesCoverTheWallTime) {
  start("lws", 2);
  CscMatrix A = random_spd(400, 0.02, 11);
  Solver solver;
  ASSERT_TRUE(solver.analyse(A, AnalysisOptions{}).ok());
  for (Executor exec : {Executor::sequential, Executor::starpu}) {
    int covered = 0;
    for (int run = 0; run < 4; ++run) {
      const auto t0 = std::chrono::steady_clock::now();
      ASSERT_TRUE(solver.factorize(A, FactorOptions{}, exec).ok());
      const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      covered += expect_phases_cover(solver, wall, exec);
    }
    EXPECT_GT(covered, 0) << "the phases cover less than half the wall time in every run: one is missing";
  }
  // A failure in the checks: this call's statistics, not the last success's.
  CscMatrix B = A;
  B.values[0] = std::nan("");
  EXPECT_EQ(solver.factorize(B, FactorOptions{}, Executor::starpu).code, StatusCode::invalid_argument);
  EXPECT_EQ(solver.stats().factor.phases.execute, 0.0);
  EXPECT_EQ(solver.stats().factor.tasks, 0);
}

TEST_F(StarpuTest, RefactorizeValuesEqualsFactorize) {
  // Solver::refactorize (values in the analysed order, no pattern compared)
  // gives bit for bit the factor of factorize() with the same values, on
  // both executors, keeps them for refinement, and reports errors alike.
  start("lws", 2);
  CscMatrix A = random_spd(300, 0.03, 31);
  Solver fresh, re;
  ASSERT_TRUE(fresh.analyse(A, AnalysisOptions{}).ok());
  ASSERT_TRUE(re.analyse(A, AnalysisOptions{}).ok());
  EXPECT_EQ(re.refactorize(A.values.data(), FactorOptions{}, Executor::sequential).code, StatusCode::ok);
  int covered[2] = {0, 0};  // runs whose phases cover the wall time: sequential, StarPU
  for (int it = 0; it < 3; ++it) {
    for (idx_t j = 0; j < A.n; ++j) A.values[A.colptr[j]] *= 1.0 + 0.25 * (it + 1);  // new diagonal
    for (Executor exec : {Executor::sequential, Executor::starpu}) {
      ASSERT_TRUE(fresh.factorize(A, FactorOptions{}, Executor::sequential).ok());
      const auto t0 = std::chrono::steady_clock::now();
      ASSERT_TRUE(re.refactorize(A.values.data(), FactorOptions{}, exec).ok());
      const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      covered[exec == Executor::starpu] += expect_phases_cover(re, wall, exec);
      EXPECT_EQ(re.factor().Lx, fresh.factor().Lx) << "iteration " << it;
      const std::vector<double> b = random_vector(A.n, it);
      std::vector<double> x = b;
      ASSERT_TRUE(re.solve(x.data(), 1, A.n).ok());
      EXPECT_LT(backward_error(A, x.data(), b.data()), 1e-15);  // refinement used the new values
      // ‖A‖∞ of these values (the StarPU executor computes it while the graph
      // runs), not of the previous ones (row sums 20-25% apart): the scale of
      // solve()'s backward errors. (Not compared through the backward errors
      // themselves: residuals at rounding level differ with the summation order.)
      EXPECT_EQ(re.matrix_norm_inf(), symmetric_norm_inf(A)) << "iteration " << it;
    }
  }
  EXPECT_GT(covered[0], 0) << "sequential: the phases cover less than half the wall time in every run";
  EXPECT_GT(covered[1], 0) << "StarPU: the phases cover less than half the wall time in every run";
  // Not positive definite: the same column and pivot as factorize().
  CscMatrix B = A;
  B.values[B.colptr[B.n / 2]] = -1.0;
  const Status sf = fresh.factorize(B, FactorOptions{}, Executor::starpu);
  const Status sr = re.refactorize(B.values.data(), FactorOptions{}, Executor::starpu);
  ASSERT_EQ(sf.code, StatusCode::not_positive_definite);
  EXPECT_EQ(sr.code, StatusCode::not_positive_definite);
  EXPECT_EQ(sr.column, sf.column);
  EXPECT_EQ(sr.pivot, sf.pivot);
  std::vector<double> x(A.n, 1.0);
  EXPECT_EQ(re.solve(x.data(), 1, A.n).code, StatusCode::invalid_argument);  // no factor after a failure
  // A non-finite value is refused; null values and a solver never analysed too.
  // (refactorize copies and checks the values in one pass: the error still
  // names the entry, and no factor is left behind.)
  B = A;
  B.values[7] = std::numeric_limits<double>::infinity();
  const Status sinf = re.refactorize(B.values.data(), FactorOptions{}, Executor::starpu);
  EXPECT_EQ(sinf.code, StatusCode::invalid_argument);
  EXPECT_NE(sinf.message.find("not finite"), std::string::npos) << sinf.message;
  EXPECT_NE(sinf.message.find("entry ("), std::string::npos) << sinf.message;
  EXPECT_FALSE(re.factorized());
  B.values[7] = A.values[7];
  B.values[B.values.size() - 1] = std::nan("");
  EXPECT_EQ(re.refactorize(B.values.data(), FactorOptions{}, Executor::sequential).code, StatusCode::invalid_argument);
  EXPECT_EQ(re.refactorize(nullptr, FactorOptions{}, Executor::starpu).code, StatusCode::invalid_argument);
  Solver none;
  EXPECT_EQ(none.refactorize(A.values.data(), FactorOptions{}, Executor::sequential).code,
            StatusCode::invalid_argument);
  EXPECT_TRUE(re.refactorize(A.values.data(), FactorOptions{}, Executor::starpu).ok());  // and it recovers
}

TEST_F(StarpuTest, RefactorizeFromValuesBufferEqualsTheCopyPath) {
  // Solver::values_buffer(): values written into it and refactorised
  // without a copy give bit for bit the factor of refactorize() on the
  // caller's array; the buffer becomes the matrix kept for refinement, so
  // writing the next values into the next buffer changes neither the
  // factor nor solve()'s refinement; a value that is not finite is named.
  start("lws", 2);
  CscMatrix A = random_spd(300, 0.03, 77);
  Solver copy, buf;
  EXPECT_EQ(buf.values_buffer(), nullptr);  // not analysed
  ASSERT_TRUE(copy.analyse(A, AnalysisOptions{}).ok());
  ASSERT_TRUE(buf.analyse(A, AnalysisOptions{}).ok());
  std::mt19937_64 rng(2026);
  std::uniform_real_distribution<double> scale(1.0, 2.0);
  const double* previous = nullptr;
  const double* before_previous = nullptr;
  for (int it = 0; it < 4; ++it) {
    for (idx_t j = 0; j < A.n; ++j) A.values[A.colptr[j]] *= scale(rng);  // new diagonal: still SPD
    const Executor exec = it % 2 ? Executor::starpu : Executor::sequential;
    double* b = buf.values_buffer();
    ASSERT_NE(b, nullptr);
    EXPECT_EQ(buf.values_buffer(), b);  // the same buffer until refactorize
    if (previous) {
      EXPECT_NE(b, previous) << "the kept copy is never handed out";
    }
    if (before_previous) {
      EXPECT_EQ(b, before_previous) << "two buffers alternate: nothing allocated after the first refactorisation";
    }
    std::copy(A.values.begin(), A.values.end(), b);
    ASSERT_TRUE(copy.refactorize(A.values.data(), FactorOptions{}, exec).ok());
    const Status st = buf.refactorize(b, FactorOptions{}, exec);
    ASSERT_TRUE(st.ok()) << st.message;
    EXPECT_EQ(buf.factor().Lx, copy.factor().Lx) << "iteration " << it;
    before_previous = previous;
    previous = b;
    // The next values go into the next buffer: fill it with other numbers;
    // the current factor's refinement must still use A.
    double* next = buf.values_buffer();
    ASSERT_NE(next, b);
    std::fill(next, next + A.values.size(), 3.5);
    const std::vector<double> rhs = random_vector(A.n, 100 + it);
    std::vector<double> x = rhs;
    ASSERT_TRUE(buf.solve(x.data(), 1, A.n).ok());
    EXPECT_LT(backward_error(A, x.data(), rhs.data()), 1e-15) << "iteration " << it;
    EXPECT_EQ(buf.matrix_norm_inf(), symmetric_norm_inf(A));
  }
  // A value that is not finite in the buffer: the entry named, no factor
  // left; the next call recovers. (On StarPU a Cholesky factorisation runs
  // on the buffer before the check, which the ‖A‖∞ pass makes while the
  // graph runs: a NaN or infinite pivot must give this error too, not
  // "not positive definite" and not automatic's fallback to LDLᵀ.)
  const idx_t diag = A.colptr[A.n / 2];  // a diagonal entry (columns start with it)
  ASSERT_EQ(A.rowind[diag], A.n / 2);
  const std::pair<std::size_t, double> bad_values[] = {
      {A.values.size() / 3, std::numeric_limits<double>::quiet_NaN()},
      {static_cast<std::size_t>(diag), std::numeric_limits<double>::quiet_NaN()},
      {static_cast<std::size_t>(diag), std::numeric_limits<double>::infinity()},
      {A.values.size() - 1, -std::numeric_limits<double>::infinity()}};
  for (Executor exec : {Executor::sequential, Executor::starpu})
    for (FactorMethod method : {FactorMethod::automatic, FactorMethod::llt, FactorMethod::ldlt})
      for (const auto& [pos, value] : bad_values) {
        FactorOptions o;
        o.method = method;
        double* b = buf.values_buffer();
        std::copy(A.values.begin(), A.values.end(), b);
        b[pos] = value;
        const Status bad = buf.refactorize(b, o, exec);
        EXPECT_EQ(bad.code, StatusCode::invalid_argument) << bad.message;
        EXPECT_NE(bad.message.find("not finite"), std::string::npos) << bad.message;
        EXPECT_NE(bad.message.find("entry ("), std::string::npos) << bad.message;
        EXPECT_FALSE(buf.factorized());
        // LDLᵀ never ran on it (automatic's fallback, after a NaN pivot).
        EXPECT_EQ(buf.method_used(), FactorMethod::llt);
        b = buf.values_buffer();
        std::copy(A.values.begin(), A.values.end(), b);
        ASSERT_TRUE(buf.refactorize(b, FactorOptions{}, exec).ok());
        EXPECT_EQ(buf.factor().Lx, copy.factor().Lx);
      }
  // Finite values whose |a_ij| sum overflows (the deferred check's fast
  // test fails; the values are checked one by one and accepted): A scaled by
  // a power of 2 that brings its largest entry near DBL_MAX / 4, still SPD,
  // factorised as the copy path does.
  {
    CscMatrix H = A;
    double amax = 0.0;
    for (double v : H.values) amax = std::max(amax, std::fabs(v));
    const int e = std::ilogb(std::numeric_limits<double>::max()) - std::ilogb(amax) - 2;
    for (double& v : H.values) v = std::ldexp(v, e);
    double total = 0.0;
    for (double v : H.values) total += std::fabs(v);
    ASSERT_FALSE(std::isfinite(total));
    double* b = buf.values_buffer();
    std::copy(H.values.begin(), H.values.end(), b);
    const Status big = buf.refactorize(b, FactorOptions{}, Executor::starpu);
    ASSERT_TRUE(big.ok()) << big.message;
    ASSERT_TRUE(copy.refactorize(H.values.data(), FactorOptions{}, Executor::starpu).ok());
    EXPECT_EQ(buf.factor().Lx, copy.factor().Lx);
    b = buf.values_buffer();
    std::copy(A.values.begin(), A.values.end(), b);
    ASSERT_TRUE(buf.refactorize(b, FactorOptions{}, Executor::starpu).ok());
    ASSERT_TRUE(copy.refactorize(A.values.data(), FactorOptions{}, Executor::starpu).ok());
  }
  // factorize() keeps its own copy; the buffer stays usable after it.
  ASSERT_TRUE(buf.factorize(A, FactorOptions{}, Executor::starpu).ok());
  double* b = buf.values_buffer();
  std::copy(A.values.begin(), A.values.end(), b);
  ASSERT_TRUE(buf.refactorize(b, FactorOptions{}, Executor::starpu).ok());
  EXPECT_EQ(buf.factor().Lx, copy.factor().Lx);
  // A new analysis (another pattern) sizes the buffer again.
  const CscMatrix C = random_spd(120, 0.05, 78);
  ASSERT_TRUE(buf.analyse(C, AnalysisOptions{}).ok());
  b = buf.values_buffer();
  std::copy(C.values.begin(), C.values.end(), b);
  ASSERT_TRUE(buf.refactorize(b, FactorOptions{}, Executor::starpu).ok());
  const std::vector<double> rhs = random_vector(C.n, 9);
  std::vector<double> x = rhs;
  ASSERT_TRUE(buf.solve(x.data(), 1, C.n).ok());
  EXPECT_LT(backward_error(C, x.data(), rhs.data()), 1e-15);
}

/// values_finite (solve/factor.hpp) against std::isfinite: one
/// non-finite value (±inf, NaN, a NaN with payload; also at the largest
/// finite and smallest normal neighbours) at every position of arrays whose
/// lengths leave every remainder of the eight-value step, at both
/// alignments of the first value.
TEST(ValuesFinite, MatchesIsfiniteAtEveryPositionAndAlignment) {
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> u(-1e3, 1e3);
  const double specials[] = {std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity(),
                             std::nan(""), -std::nan("77")};
  EXPECT_TRUE(values_finite(nullptr, 0));
  for (std::size_t n = 1; n <= 40; ++n)
    for (std::size_t off : {0u, 1u}) {
      std::vector<double> buf(n + 1);
      for (double& x : buf) x = u(rng);
      double* v = buf.data() + off;
      v[n / 2] = std::numeric_limits<double>::max();
      v[0] = -std::numeric_limits<double>::min();
      v[n - 1] = std::numeric_limits<double>::denorm_min();
      if (n > 2) v[1] = -0.0;
      ASSERT_TRUE(values_finite(v, n)) << "n " << n;
      for (std::size_t p = 0; p < n; ++p)
        for (double s : specials) {
          const double keep = v[p];
          v[p] = s;
          EXPECT_FALSE(values_finite(v, n)) << "n " << n << " offset " << off << " position " << p;
          EXPECT_FALSE(values_finite(v, p + 1)) << "n " << p + 1;  // the bad value last
          if (p > 0) {
            EXPECT_TRUE(values_finite(v, p)) << "n " << p;  // left out
          }
          v[p] = keep;
        }
    }
  std::vector<double> big(100003);
  for (double& x : big) x = u(rng);
  EXPECT_TRUE(values_finite(big.data(), big.size()));
  for (int r = 0; r < 50; ++r) {
    const std::size_t p = static_cast<std::size_t>(rng() % big.size());
    const double keep = big[p];
    big[p] = specials[r % 4];
    EXPECT_FALSE(values_finite(big.data(), big.size())) << "position " << p;
    big[p] = keep;
  }
}

/// copy_values_finite (solve/factor.hpp) against std::isfinite, one
/// non-finite value (±inf, NaN, a NaN with payload) at every position of
/// arrays of several lengths (the vectorised loop's remainders), and the
/// largest finite values; the copy is exact in every case.
TEST(CopyValuesFinite, MatchesIsfiniteAndCopiesExactly) {
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> u(-1e3, 1e3);
  const double specials[] = {std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity(),
                             std::nan(""), std::nan("123")};
  for (std::size_t n : {1u, 2u, 3u, 7u, 8u, 9u, 31u, 64u, 65u}) {
    std::vector<double> src(n), dst(n);
    for (double& x : src) x = u(rng);
    src[n / 2] = std::numeric_limits<double>::max();
    src[0] = -std::numeric_limits<double>::denorm_min();
    ASSERT_TRUE(copy_values_finite(src.data(), n, dst.data()));
    EXPECT_EQ(std::memcmp(src.data(), dst.data(), n * sizeof(double)), 0);
    for (std::size_t p = 0; p < n; ++p)
      for (double s : specials) {
        std::vector<double> bad = src;
        bad[p] = s;
        std::fill(dst.begin(), dst.end(), 0.0);
        EXPECT_FALSE(copy_values_finite(bad.data(), n, dst.data())) << "n " << n << " position " << p;
        EXPECT_EQ(std::memcmp(bad.data(), dst.data(), n * sizeof(double)), 0);
      }
  }
  EXPECT_TRUE(copy_values_finite(nullptr, 0, nullptr));
  // The streamed path (streaming, n >= 4096) and the plain one at those
  // sizes: source and destination at every alignment (offsets of 0 or 1
  // double into their arrays), lengths with remainders, one non-finite
  // value at the ends, around the head and at random places, and the
  // largest finite value and the smallest normal one.
  for (const bool streaming : {true, false})
  for (std::size_t n : {4096u, 4099u, 10001u})
    for (std::size_t so : {0u, 1u})
      for (std::size_t d_off : {0u, 1u}) {
        std::vector<double> sbuf(n + 1), dbuf(n + 1);
        for (double& x : sbuf) x = u(rng);
        double* src = sbuf.data() + so;
        double* dst = dbuf.data() + d_off;
        src[n / 3] = std::numeric_limits<double>::max();
        src[n / 2] = -std::numeric_limits<double>::min();
        ASSERT_TRUE(copy_values_finite(src, n, dst, streaming)) << "n " << n;
        EXPECT_EQ(std::memcmp(src, dst, n * sizeof(double)), 0);
        std::vector<std::size_t> where = {0, 1, 2, 3, 4, 5, n - 5, n - 4, n - 3, n - 2, n - 1};
        for (int r = 0; r < 40; ++r) where.push_back(static_cast<std::size_t>(rng() % n));
        for (std::size_t p : where)
          for (double sp : specials) {
            const double keep = src[p];
            src[p] = sp;
            std::fill(dbuf.begin(), dbuf.end(), 0.0);
            EXPECT_FALSE(copy_values_finite(src, n, dst, streaming)) << "n " << n << " position " << p;
            EXPECT_EQ(std::memcmp(src, dst, n * sizeof(double)), 0);
            src[p] = keep;
          }
      }
}

TEST_F(StarpuTest, SameSizesOtherPatternNamesTheColumn) {
  // The pattern check's fast path (whole arrays compared) must still refuse
  // a pattern with the analysed sizes and name the first differing column.
  start("lws", 1);
  CscMatrix A = random_spd(120, 0.05, 21);
  Solver solver;
  ASSERT_TRUE(solver.analyse(A, AnalysisOptions{}).ok());
  ASSERT_TRUE(solver.factorize(A, FactorOptions{}, Executor::starpu).ok());
  // First column (0-based j) with an off-diagonal entry whose row can move
  // to a free row below: same nnz, same column pointers, other rows.
  CscMatrix B = A;
  idx_t changed = -1;
  for (idx_t j = 0; j < B.n && changed < 0; ++j) {
    const idx_t last = B.colptr[j + 1] - 1;
    if (last > B.colptr[j] && B.rowind[last] + 1 < B.n) {
      B.rowind[last] += 1;  // still sorted, still below the diagonal, a row not used in that column
      changed = j;
    }
  }
  ASSERT_GE(changed, 0);
  const Status st = solver.factorize(B, FactorOptions{}, Executor::starpu);
  EXPECT_EQ(st.code, StatusCode::invalid_argument);
  EXPECT_NE(st.message.find("column " + std::to_string(changed + 1) + " "), std::string::npos) << st.message;
  EXPECT_TRUE(solver.factorize(A, FactorOptions{}, Executor::starpu).ok());  // the analysed one still works
}

TEST_F(StarpuTest, EmptyAndTinyMatrices) {
  start("lws", 1);
  for (idx_t n : {0, 1, 2}) {
    CscMatrix A = random_spd(n, 0.5, 3);
    Solver solver;
    ASSERT_TRUE(solver.analyse(A, AnalysisOptions{}).ok());
    ASSERT_TRUE(solver.factorize(A, FactorOptions{}, Executor::starpu).ok());
    std::vector<double> b = random_vector(n, 1), x = b;
    ASSERT_TRUE(solver.solve(x.data(), 1, std::max<idx_t>(1, n)).ok());
    if (n > 0) {
      EXPECT_LT(backward_error(A, x.data(), b.data()), 1e-15);
    }
  }
}

}  // namespace
}  // namespace starfront
