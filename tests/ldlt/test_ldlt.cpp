// Sparse LDLᵀ end to end (Solver: analyse, factorise, refined solve) under
// the sequential executor (random task orders) and StarPU: random symmetric
// indefinite matrices against dense LAPACK (DSYSV solution, DSYEV inertia),
// the small cases of issue 7, every matrix of ../shared/data/kkt, the
// quasi-definite mode, `auto`, option checks.
#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <string>

#include "api/solver.hpp"
#include "io/matrix_market.hpp"
#include "ldlt/ldlt_test_util.hpp"
#include "runtime/sequential/sequential_executor.hpp"
#include "runtime/starpu/runtime.hpp"
#include "solve/refine.hpp"
#include "solve/solve.hpp"

namespace starfront {
namespace {

using testing::dense_sysv;
using testing::eigenvalues;
using testing::IndefKind;
using testing::inertia_of;
using testing::random_indefinite;
using testing::from_dense_lower;
using testing::random_vector;
using testing::rel_diff;
using testing::to_dense;

FactorOptions ldlt_options(FactorMethod m = FactorMethod::ldlt) {
  FactorOptions o;
  o.method = m;
  return o;
}

template <class A, class B>
void expect_inertia(const A& got, const B& want, const std::string& tag) {
  EXPECT_EQ(got.positive, want.positive) << tag;
  EXPECT_EQ(got.negative, want.negative) << tag;
  EXPECT_EQ(got.zero, want.zero) << tag;
}

class StarpuLdlt : public ::testing::Test {
 protected:
  void SetUp() override {
    Status st = StarpuRuntime::start(RuntimeOptions{2, 0, "lws"}, rt_);
    ASSERT_TRUE(st.ok()) << st.message;
  }
  void TearDown() override { rt_.reset(); }
  std::unique_ptr<StarpuRuntime> rt_;
};

struct RandomCase {
  CscMatrix A;
  std::string tag;
  IndefKind kind;
};

std::vector<RandomCase> random_cases() {
  std::vector<RandomCase> out;
  const IndefKind kinds[] = {IndefKind::general, IndefKind::zero_diagonal, IndefKind::all_zero_diag,
                             IndefKind::kkt, IndefKind::tiny_diagonal};
  for (std::uint64_t seed = 1; seed <= 12; ++seed)
    for (IndefKind kind : kinds) {
      const idx_t n = 2 + static_cast<idx_t>((seed * 53 + static_cast<int>(kind) * 17) % 299);
      const double density = 0.005 + 0.05 * static_cast<double>(seed % 4) / 3.0;
      RandomCase c;
      c.A = random_indefinite(n, density, kind, seed * 100 + static_cast<int>(kind));
      c.kind = kind;
      c.tag = "seed " + std::to_string(seed) + " kind " + std::to_string(static_cast<int>(kind)) +
              " n " + std::to_string(n);
      out.push_back(std::move(c));
    }
  return out;
}

TEST(LdltSequential, RandomIndefiniteMatchesDenseLapack) {
  int with_2x2 = 0, checked_inertia = 0, cases = 0;
  for (const RandomCase& c : random_cases()) {
    const CscMatrix& A = c.A;
    const std::vector<double> b = random_vector(A.n, A.n + 7);
    const std::vector<double> w = eigenvalues(to_dense(A), A.n);
    double lmin = 1e300, lmax = 0;
    for (double l : w) {
      lmin = std::min(lmin, std::fabs(l));
      lmax = std::max(lmax, std::fabs(l));
    }
    const std::vector<double> xd = dense_sysv(A, b);
    for (OrderingMethod ord : {OrderingMethod::scotch, OrderingMethod::natural}) {
      Solver solver;
      AnalysisOptions ao;
      ao.ordering = ord;
      ASSERT_TRUE(solver.analyse(A, ao).ok()) << c.tag;
      const Status st = solver.factorize(A, ldlt_options(), Executor::sequential);
      ASSERT_TRUE(st.ok()) << c.tag << ": " << st.message;
      ++cases;
      std::vector<double> x = b;
      ASSERT_TRUE(solver.solve(x.data(), 1, A.n).ok()) << c.tag;
      EXPECT_LT(backward_error(A, x.data(), b.data()), 1e-14) << c.tag;
      EXPECT_LT(rel_diff(x, xd), 1e-13 * lmax / lmin + 1e-12) << c.tag;
      // Without delayed pivoting, a front whose only fully-summed column has
      // a zero (or tiny) diagonal has no acceptable pivot: it is perturbed.
      // The inertia is still checked below (exact here by Weyl: the
      // perturbations, ~1.5e-8·c_j, are far below the smallest |λ|).
      if (c.kind == IndefKind::general) {
        EXPECT_EQ(solver.factor().perturbed_pivots, 0) << c.tag;
      }
      EXPECT_EQ(solver.factor().delayed_pivots, 0) << c.tag;
      with_2x2 += solver.factor().two_by_two_pivots > 0;
      if (lmin > 1e-10 * lmax) {
        expect_inertia(solver.inertia(), inertia_of(w), c.tag);
        ++checked_inertia;
      }
      // Random valid task orders: the same factor, bit for bit.
      for (std::uint64_t order = 1; order <= 3; ++order) {
        NumericFactor F;
        ASSERT_TRUE(factorize_sequential(solver.graph(), A, ldlt_options(), F, nullptr, order).ok());
        EXPECT_EQ(F.Lx, solver.factor().Lx) << c.tag << " order " << order;
        EXPECT_EQ(F.pivot_order, solver.factor().pivot_order) << c.tag;
      }
    }
  }
  EXPECT_GT(with_2x2, cases / 3);
  EXPECT_GT(checked_inertia, cases * 9 / 10);
}

TEST_F(StarpuLdlt, RandomIndefiniteStarpuEqualsSequential) {
  for (const RandomCase& c : random_cases()) {
    const CscMatrix& A = c.A;
    const std::vector<double> b = random_vector(A.n, A.n + 9);
    Solver seq, par;
    ASSERT_TRUE(seq.analyse(A, AnalysisOptions{}).ok());
    ASSERT_TRUE(par.analyse(A, AnalysisOptions{}).ok());
    ASSERT_TRUE(seq.factorize(A, ldlt_options(), Executor::sequential).ok()) << c.tag;
    ASSERT_TRUE(par.factorize(A, ldlt_options(), Executor::starpu).ok()) << c.tag;
    std::vector<double> xs = b, xp = b;
    ASSERT_TRUE(seq.solve(xs.data(), 1, A.n).ok());
    ASSERT_TRUE(par.solve(xp.data(), 1, A.n).ok());
    EXPECT_EQ(xs, xp) << c.tag;
    expect_inertia(par.inertia(), seq.inertia(), c.tag);
    EXPECT_EQ(par.factor().two_by_two_pivots, seq.factor().two_by_two_pivots) << c.tag;
  }
}

/// The small cases of issue 7, on both executors and with two orderings.
TEST_F(StarpuLdlt, SmallCasesOfTheIssue) {
  struct Case {
    idx_t n;
    std::vector<double> M;
    testing::EigenInertia want;
    bool singular;
  };
  const std::vector<Case> cases = {
      {2, {0, 1, 1, 0}, {1, 1, 0}, false},
      {3, {1, 0, 0, 0, 0, 1, 0, 1, 0}, {2, 1, 0}, false},
      {3, {1e-12, 1, 1, 1, 0, 1, 1, 1, 0}, {1, 2, 0}, false},
      {3, {1, 1, 0, 1, 1, 0, 0, 0, 1}, {2, 0, 1}, true},
  };
  for (std::size_t ci = 0; ci < cases.size(); ++ci) {
    const Case& c = cases[ci];
    const CscMatrix A = from_dense_lower(c.n, c.M);
    for (Executor ex : {Executor::sequential, Executor::starpu})
      for (OrderingMethod ord : {OrderingMethod::natural, OrderingMethod::scotch}) {
        const std::string tag = "case " + std::to_string(ci + 1) +
                                (ex == Executor::starpu ? " starpu" : " sequential");
        Solver solver;
        AnalysisOptions ao;
        ao.ordering = ord;
        ASSERT_TRUE(solver.analyse(A, ao).ok());
        const Status st = solver.factorize(A, ldlt_options(), ex);
        expect_inertia(solver.inertia(), c.want, tag);
        EXPECT_EQ(solver.factor().perturbed_pivots, 0) << tag;
        std::vector<double> x(c.n, 1.0), b(c.n);
        symmetric_matvec(A, x.data(), b.data());
        x = b;
        if (c.singular) {
          EXPECT_EQ(st.code, StatusCode::singular) << tag << ": " << st.message;
          EXPECT_GE(st.column, 0) << tag;
          EXPECT_FALSE(solver.solve(x.data(), 1, c.n).ok()) << tag;  // never a success
          continue;
        }
        ASSERT_TRUE(st.ok()) << tag << ": " << st.message;
        ASSERT_TRUE(solver.solve(x.data(), 1, c.n).ok()) << tag;
        EXPECT_LE(backward_error(A, x.data(), b.data()), 1e-14) << tag;
        for (double v : x) EXPECT_NEAR(v, 1.0, 1e-10) << tag;
      }
  }
}

/// The SQD matrices [H + ρI, Aᵀ; A, −δI]: the diagonal is positive on the H
/// block and negative on the constraint block, so the block sizes are the
/// numbers of positive and negative diagonal entries (checked: no zero).
testing::EigenInertia sqd_inertia(const CscMatrix& A) {
  testing::EigenInertia in;
  for (idx_t j = 0; j < A.n; ++j) {
    double d = 0;
    for (idx_t p = A.colptr[j]; p < A.colptr[j + 1]; ++p)
      if (A.rowind[p] == j) d = A.values[p];
    if (d > 0) ++in.positive;
    else if (d < 0) ++in.negative;
    else ++in.zero;
  }
  return in;
}

/// Every matrix of ../shared/data/kkt, LDLᵀ on StarPU (2 workers, default
/// graph options: the LDLᵀ graph is then the untiled one) and sequentially:
/// backward error <= 1e-12 after refinement (b = A·1 and a random b), the
/// same solution on both executors, the same factor in random task orders, inertia against dense eigenvalues
/// (activsg200_kkt, sqd_cvxqp3_m) and the SQD block sizes (sqd_*), and the
/// quasi-definite mode on the sqd_* matrices.
TEST_F(StarpuLdlt, KktMatrices) {
  const std::filesystem::path dir = std::filesystem::path(STARFRONT_DATA_DIR) / "kkt";
  ASSERT_TRUE(std::filesystem::is_directory(dir)) << dir;
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.path().extension() == ".mtx") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  ASSERT_EQ(files.size(), 5u);
  for (const auto& f : files) {
    const std::string name = f.stem().string();
    CscMatrix A;
    ASSERT_TRUE(read_matrix_market(f.string(), A).ok()) << name;
    const bool sqd = name.rfind("sqd_", 0) == 0;
    testing::EigenInertia want{-1, -1, -1};
    if (name == "activsg200_kkt" || name == "sqd_cvxqp3_m") {
      want = inertia_of(eigenvalues(to_dense(A), A.n));
      if (sqd) expect_inertia(sqd_inertia(A), want, name + " (diagonal signs vs eigenvalues)");
    } else if (sqd) {
      want = sqd_inertia(A);
    }
    ASSERT_EQ(want.zero, 0) << name;
    std::vector<double> ones(A.n, 1.0), b1(A.n);
    symmetric_matvec(A, ones.data(), b1.data());
    const std::vector<double> b2 = random_vector(A.n, 4242);
    std::vector<FactorMethod> methods = {FactorMethod::ldlt};
    if (sqd) methods.push_back(FactorMethod::quasi_definite);
    for (FactorMethod m : methods) {
      std::vector<double> xs;
      for (Executor ex : {Executor::starpu, Executor::sequential}) {
        const std::string tag = name + " " + factor_method_name(m) +
                                (ex == Executor::starpu ? " starpu" : " sequential");
        Solver solver;
        ASSERT_TRUE(solver.analyse(A, AnalysisOptions{}).ok()) << tag;
        const Status st = solver.factorize(A, ldlt_options(m), ex);
        ASSERT_TRUE(st.ok()) << tag << ": " << st.message;
        // Quasi-definite mode never needs a perturbation on an SQD matrix.
        // LDLᵀ mode on sqd_cvxqp3_m perturbs the δ = 1e-8 pivots of
        // constraint rows eliminated alone in a leaf front (they fail the
        // threshold and a delayed pivot is not implemented): the inertia is
        // then not guaranteed, but must still be right.
        if (m == FactorMethod::quasi_definite || name != "sqd_cvxqp3_m") {
          EXPECT_EQ(solver.factor().perturbed_pivots, 0) << tag;
        }
        expect_inertia(solver.inertia(), want, tag);
        for (const std::vector<double>* b : {static_cast<const std::vector<double>*>(&b1), &b2}) {
          std::vector<double> x = *b;
          ASSERT_TRUE(solver.solve(x.data(), 1, A.n).ok()) << tag;
          EXPECT_LE(backward_error(A, x.data(), b->data()), 1e-12)
              << tag << " refinement steps " << solver.stats().refine.steps;
          if (b == &b2) {
            if (xs.empty()) xs = x;
            else EXPECT_EQ(x, xs) << tag << ": StarPU and sequential differ";
          }
        }
        if (ex == Executor::sequential) {
          // Random valid task orders of the (untiled) graph: the same factor.
          GraphOptions go;
          go.tile = false;
          TaskGraph G;
          ASSERT_TRUE(build_task_graph(solver.plan(), go, G).ok());
          NumericFactor F0;
          ASSERT_TRUE(factorize_sequential(G, A, ldlt_options(m), F0).ok()) << tag;
          for (std::uint64_t order = 1; order <= 2; ++order) {
            NumericFactor F;
            ASSERT_TRUE(factorize_sequential(G, A, ldlt_options(m), F, nullptr, order).ok()) << tag;
            EXPECT_EQ(F.Lx, F0.Lx) << tag << " order " << order;
            expect_inertia(F.inertia, want, tag + " order " + std::to_string(order));
          }
        }
      }
    }
  }
}

TEST(LdltSolver, AutoFallsBackAndCholeskyKeepsItsError) {
  const CscMatrix spd = testing::random_spd(50, 0.1, 3);
  const CscMatrix indef = random_indefinite(50, 0.1, IndefKind::kkt, 5);
  Solver s1, s2;
  ASSERT_TRUE(s1.analyse(spd, AnalysisOptions{}).ok());
  ASSERT_TRUE(s2.analyse(indef, AnalysisOptions{}).ok());
  ASSERT_TRUE(s1.factorize(spd, ldlt_options(FactorMethod::automatic), Executor::sequential).ok());
  EXPECT_EQ(s1.method_used(), FactorMethod::llt);
  expect_inertia(s1.inertia(), testing::EigenInertia{50, 0, 0}, "spd auto");
  const Status llt = s2.factorize(indef, FactorOptions{}, Executor::sequential);
  EXPECT_EQ(llt.code, StatusCode::not_positive_definite);
  EXPECT_GE(llt.column, 0);
  ASSERT_TRUE(s2.factorize(indef, ldlt_options(FactorMethod::automatic), Executor::sequential).ok());
  EXPECT_EQ(s2.method_used(), FactorMethod::ldlt);
  EXPECT_EQ(s2.inertia().positive + s2.inertia().negative, 50);
  EXPECT_GT(s2.inertia().negative, 0);
}

TEST(LdltSolver, BadOptionsAreRefused) {
  const CscMatrix A = random_indefinite(20, 0.2, IndefKind::general, 1);
  Solver s;
  ASSERT_TRUE(s.analyse(A, AnalysisOptions{}).ok());
  for (double u : {0.0, -0.1, 0.6, std::nan("")}) {
    FactorOptions o = ldlt_options();
    o.ldlt_threshold = u;
    EXPECT_EQ(s.factorize(A, o, Executor::sequential).code, StatusCode::invalid_argument) << u;
  }
  for (double tau : {0.0, 1.0, std::nan(""), -1e-8}) {
    FactorOptions o = ldlt_options();
    o.perturbation = tau;
    EXPECT_EQ(s.factorize(A, o, Executor::sequential).code, StatusCode::invalid_argument) << tau;
  }
  FactorOptions o = ldlt_options();
  o.refine_steps = -1;
  EXPECT_EQ(s.factorize(A, o, Executor::sequential).code, StatusCode::invalid_argument);
}

TEST(LdltSolver, OverflowIsAnErrorNeverASuccess) {
  // Finite input whose elimination overflows: never a success with inf/NaN.
  for (FactorMethod m : {FactorMethod::ldlt, FactorMethod::quasi_definite}) {
    // The Schur complement −1e308 − 1e308 overflows to −∞.
    const CscMatrix A = from_dense_lower(3, {1e308, 1e308, 0, 1e308, -1e308, 1, 0, 1, 1});
    Solver s;
    AnalysisOptions ao;
    ao.ordering = OrderingMethod::natural;
    ASSERT_TRUE(s.analyse(A, ao).ok());
    for (Executor ex : {Executor::sequential}) {
      const Status st = s.factorize(A, ldlt_options(m), ex);
      EXPECT_EQ(st.code, StatusCode::runtime_error) << factor_method_name(m) << ": " << st.message;
      EXPECT_GE(st.column, 0);
      std::vector<double> x = {1, 2, 3};
      EXPECT_FALSE(s.solve(x.data(), 1, 3).ok());
    }
  }
}

/// Quasi-definite mode (no pivoting) on matrices that are not
/// quasi-definite: the unstable pivots are counted (inertia not guaranteed),
/// and a solve whose backward error stays above √ε after refinement is an
/// error that leaves b unchanged, never a success with a wrong answer.
TEST(LdltSolver, UnstableQuasiDefiniteIsNeverASuccessWithAWrongAnswer) {
  for (std::uint64_t seed = 1; seed <= 6; ++seed) {
    const CscMatrix A = random_indefinite(300, 0.02, IndefKind::tiny_diagonal, seed);
    Solver s;
    ASSERT_TRUE(s.analyse(A, AnalysisOptions{}).ok());
    FactorOptions o = ldlt_options(FactorMethod::quasi_definite);
    o.perturbation = 1e-30;
    const Status st = s.factorize(A, o, Executor::sequential);
    if (!st.ok()) continue;  // an error is fine; a success must be honest
    EXPECT_FALSE(s.factor().inertia_guaranteed) << "seed " << seed;
    EXPECT_GT(s.factor().below_threshold_pivots, 0) << "seed " << seed;
    const std::vector<double> b = random_vector(A.n, seed + 7);
    std::vector<double> x = b;
    const Status ss = s.solve(x.data(), 1, A.n);
    if (ss.ok()) {
      EXPECT_LE(backward_error(A, x.data(), b.data()), kMaxBackwardError) << "seed " << seed;
    } else {
      EXPECT_EQ(ss.code, StatusCode::runtime_error);
      EXPECT_NE(ss.message.find("inaccurate solution"), std::string::npos) << ss.message;
      EXPECT_EQ(x, b) << "a refused solve must leave b unchanged";
    }
  }
  // The default LDLᵀ on the same matrix: the right inertia.
  const CscMatrix A = random_indefinite(300, 0.02, IndefKind::tiny_diagonal, 1);
  Solver s;
  ASSERT_TRUE(s.analyse(A, AnalysisOptions{}).ok());
  ASSERT_TRUE(s.factorize(A, ldlt_options(FactorMethod::ldlt), Executor::sequential).ok());
  EXPECT_EQ(s.factor().inertia_guaranteed,
            s.factor().perturbed_pivots == 0 && s.factor().below_threshold_pivots == 0);
  EXPECT_EQ(inertia_of(eigenvalues(to_dense(A), A.n)).positive, s.factor().inertia.positive);
}

TEST(LdltSolver, RefinementRecoversPerturbedPivots) {
  // Quasi-definite mode on a matrix that is not quasi-definite: a zero
  // diagonal that is not a zero column gets a perturbed pivot; refinement
  // brings the backward error back, and the inertia is flagged.
  const CscMatrix A = from_dense_lower(3, {0, 1, 2, 1, 4, 1, 2, 1, 5});
  Solver s;
  AnalysisOptions ao;
  ao.ordering = OrderingMethod::natural;
  ASSERT_TRUE(s.analyse(A, ao).ok());
  ASSERT_TRUE(s.factorize(A, ldlt_options(FactorMethod::quasi_definite), Executor::sequential).ok());
  EXPECT_EQ(s.factor().perturbed_pivots, 1);
  std::vector<double> x = {1, 2, 3}, b = x;
  ASSERT_TRUE(s.solve(x.data(), 1, 3).ok());
  EXPECT_LE(s.stats().refine.backward_error, 1e-15 * 8);
  EXPECT_GE(s.stats().refine.steps, 1);
  EXPECT_LE(backward_error(A, x.data(), b.data()), 1e-14);
}

}  // namespace
}  // namespace starfront
