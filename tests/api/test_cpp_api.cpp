// The C++17 layer (starfront.hpp): RAII, exceptions carrying the status and
// column, the Matrix views for both index types; and the C99 translation unit
// that includes starfront.h (c_header_check.c).
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "api/api_inputs.hpp"
#include "starfront/starfront.hpp"

extern "C" int c_header_solve(void);

namespace starfront::testing {
namespace {

TEST(CHeader, CompilesAsC99AndSolves) { EXPECT_EQ(c_header_solve(), 0); }

TEST(CppApi, RoundTripRefactorizeAndErrors) {
  Runtime rt(RuntimeOptions{2, 0, "lws"});
  EXPECT_EQ(rt.cpu_workers(), 2);
  const CscMatrix A = random_spd(100, 0.05, 3);
  const Matrix M = Matrix::csc(A.n, A.colptr.data(), A.rowind.data(), A.values.data());
  Factor F(rt, M);
  F.factorize(M);
  const std::vector<double> b = random_vector(A.n, 9);
  std::vector<double> x = F.solve(b);
  EXPECT_LT(rel_diff(x.data(), dense_solve(A, b, 1).data(), b.size()), 1e-12);
  EXPECT_EQ(F.inertia().positive, A.n);
  EXPECT_EQ(F.inertia().negative, 0);
  EXPECT_GT(F.memory().factor_bytes, 0);
  EXPECT_EQ(F.memory().added_deps, 0);  // default slot policy: dag
  {
    AnalysisOptions o;
    o.slot_policy = STARFRONT_SLOTS_PRIVATE;
    Factor Fp(rt, M, o);
    EXPECT_EQ(Fp.memory().cb_planned_bytes, Fp.memory().cb_private_bytes);
    Fp.factorize(M);
    EXPECT_LT(rel_diff(Fp.solve(b).data(), x.data(), b.size()), 1e-13);
  }

  // Refactorise with a shifted diagonal, moved into another object.
  std::vector<double> v = A.values;
  CscMatrix A2 = A;
  for (idx_t j = 0; j < A.n; ++j) {
    v[A.colptr[j]] += 10.0;  // the diagonal comes first in each column of random_spd's CSC
    A2.values[A.colptr[j]] += 10.0;
  }
  Factor G = std::move(F);
  G.refactorize(v.data());
  x = G.solve(b);
  EXPECT_LT(rel_diff(x.data(), dense_solve(A2, b, 1).data(), b.size()), 1e-12);
  EXPECT_EQ(G.stats().factorizations, 2);

  // Not positive definite: Error with the status and the column (0-based here).
  std::vector<double> neg = A.values;
  neg[A.colptr[7]] = -1.0;
  try {
    G.refactorize(neg.data());
    ADD_FAILURE() << "no exception";
  } catch (const Error& e) {
    EXPECT_EQ(e.status(), STARFRONT_NOT_POSITIVE_DEFINITE);
    EXPECT_STREQ(e.status_name(), "not_positive_definite");
    EXPECT_GE(e.column(), 0);
    EXPECT_LT(e.column(), A.n);
    EXPECT_NE(std::string(e.what()).find("not positive definite"), std::string::npos);
  }
  EXPECT_THROW(G.solve(x.data()), Error);  // no successful factorisation now
  EXPECT_THROW(Runtime second, Error);     // one runtime per process
}

TEST(CppApi, Int32CsrUpperOneBasedWithoutStarpu) {
  const CscMatrix A = random_spd(70, 0.06, 8);
  const CallerMatrix C = make_caller_matrix(A, STARFRONT_UPPER, STARFRONT_CSR, 1, STARFRONT_INT32, 8);
  const Matrix M = Matrix::csr(A.n, C.ptr32.data(), C.ind32.data(), C.values.data(), STARFRONT_UPPER, 1);
  AnalysisOptions ao;
  ao.ordering = STARFRONT_ORDERING_SCOTCH_AMD;
  Factor F(nullptr, M, ao);
  F.factorize(M);
  std::vector<double> B(2 * (A.n + 1));
  const std::vector<double> b = random_vector(A.n, 2);
  std::copy(b.begin(), b.end(), B.begin());
  std::copy(b.begin(), b.end(), B.begin() + A.n + 1);
  F.solve(B.data(), 2, A.n + 1);
  const std::vector<double> ref = dense_solve(A, b, 1);
  EXPECT_LT(rel_diff(B.data(), ref.data(), A.n), 1e-12);
  EXPECT_LT(rel_diff(B.data() + A.n + 1, ref.data(), A.n), 1e-12);
  try {
    Factor bad(nullptr, Matrix::csr(A.n, C.ptr32.data(), C.ind32.data(), nullptr, STARFRONT_LOWER, 1));
    ADD_FAILURE() << "no exception";
  } catch (const Error& e) {
    EXPECT_EQ(e.status(), STARFRONT_INVALID_ARGUMENT);
    EXPECT_EQ(e.column(), -1);
  }
}

/// AnalysisOptions::critical_path_amalgamation with STARFRONT_ORDERING_SCOTCH_PATH
/// gives the library's critical-path analysis (its supernode count) and
/// solves to the dense LAPACK solution.
TEST(CppApi, CriticalPathAnalysisSolvesToLapack) {
  const CscMatrix A = random_spd(400, 0.01, 41);
  const CallerMatrix C = make_caller_matrix(A, STARFRONT_LOWER, STARFRONT_CSC, 0, STARFRONT_INT64, 41);
  const Matrix M = Matrix::csc(A.n, C.ptr64.data(), C.ind64.data(), C.values.data(), STARFRONT_LOWER, 0);
  AnalysisOptions ao;
  ao.ordering = STARFRONT_ORDERING_SCOTCH_PATH;
  ao.critical_path_amalgamation = true;
  Factor F(nullptr, M, ao);
  F.factorize(M);
  std::vector<double> x = random_vector(A.n, 42);
  const std::vector<double> ref = dense_solve(A, x, 1);
  F.solve(x.data());
  EXPECT_LT(rel_diff(x.data(), ref.data(), A.n), 1e-12);
  // The wrapper passes STARFRONT_AMALGAMATE_CRITICAL_PATH: the C API's
  // analysis with it has the same fronts, the relaxed rule's has not.
  auto supernodes = [&](int amalgamate) {
    starfront_analysis_options c;
    starfront_analysis_options_init(&c);
    c.ordering = STARFRONT_ORDERING_SCOTCH_PATH;
    c.amalgamate = amalgamate;
    starfront_factor* G = nullptr;
    EXPECT_EQ(starfront_analyse(nullptr, &M.desc, &c, &G), STARFRONT_OK) << starfront_last_error();
    starfront_stats st{};
    st.supernodes = -1;
    if (G) {
      EXPECT_EQ(starfront_get_stats(G, &st), STARFRONT_OK);
    }
    starfront_factor_free(G);
    return st.supernodes;
  };
  EXPECT_EQ(F.stats().supernodes, supernodes(STARFRONT_AMALGAMATE_CRITICAL_PATH));
  EXPECT_NE(F.stats().supernodes, supernodes(STARFRONT_AMALGAMATE_RELAXED));
  EXPECT_EQ(F.analysis_used().amalgamation, STARFRONT_AMALGAMATE_CRITICAL_PATH);
  // The default (latency_rule) without a runtime is the relaxed rule with
  // the default ordering, and so is latency_rule = false.
  starfront_analysis_options c;
  starfront_analysis_options_init(&c);
  c.amalgamate = STARFRONT_AMALGAMATE_RELAXED;
  starfront_factor* H = nullptr;
  ASSERT_EQ(starfront_analyse(nullptr, &M.desc, &c, &H), STARFRONT_OK) << starfront_last_error();
  starfront_stats relaxed{};
  EXPECT_EQ(starfront_get_stats(H, &relaxed), STARFRONT_OK);
  starfront_factor_free(H);
  for (bool rule : {true, false}) {
    AnalysisOptions d;
    d.latency_rule = rule;
    Factor G(nullptr, M, d);
    EXPECT_EQ(G.analysis_used().amalgamation, STARFRONT_AMALGAMATE_RELAXED);
    EXPECT_EQ(G.stats().supernodes, relaxed.supernodes);
  }
}

}  // namespace
}  // namespace starfront::testing
