// LDLᵀ through the public APIs: the C API (method, inertia, SINGULAR with the
// column in the caller's base, stats: method, pivot counts, refinement,
// option checks) and the C++ layer (FactorOptions, Error, inertia after a
// zero pivot), on StarPU and without a runtime.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "common/c_matrix_view.hpp"
#include "ldlt/ldlt_test_util.hpp"
#include "sparse/csc.hpp"
#include "starfront/starfront.h"
#include "starfront/starfront.hpp"

namespace starfront {
namespace {

TEST(LdltCApi, MethodsInertiaStatsAndErrors) {
  starfront_runtime* rt = nullptr;
  ASSERT_EQ(starfront_runtime_init(nullptr, &rt), STARFRONT_OK) << starfront_last_error();
  const CscMatrix A = testing::random_indefinite(120, 0.03, testing::IndefKind::kkt, 11);
  const testing::EigenInertia want = testing::inertia_of(testing::eigenvalues(testing::to_dense(A), A.n));
  const starfront_matrix M = testing::c_view(A);
  for (starfront_runtime* r : {rt, static_cast<starfront_runtime*>(nullptr)}) {
    starfront_factor* F = nullptr;
    ASSERT_EQ(starfront_analyse(r, &M, nullptr, &F), STARFRONT_OK) << starfront_last_error();
    // Cholesky keeps its clean error, and no inertia is available after it.
    EXPECT_EQ(starfront_factorize(F, &M, nullptr), STARFRONT_NOT_POSITIVE_DEFINITE);
    int64_t p = -1, q = -1, z = -1;
    EXPECT_EQ(starfront_inertia(F, &p, &q, &z), STARFRONT_INVALID_ARGUMENT);
    starfront_factor_options o;
    starfront_factor_options_init(&o);
    EXPECT_EQ(o.refine_steps, 3);
    EXPECT_EQ(o.ldlt_threshold, 0.01);
    for (starfront_method m : {STARFRONT_METHOD_LDLT, STARFRONT_METHOD_AUTO}) {
      o.method = m;
      ASSERT_EQ(starfront_factorize(F, &M, &o), STARFRONT_OK) << starfront_last_error();
      ASSERT_EQ(starfront_inertia(F, &p, &q, &z), STARFRONT_OK);
      EXPECT_EQ(p, want.positive);
      EXPECT_EQ(q, want.negative);
      EXPECT_EQ(z, 0);
      std::vector<double> x = testing::random_vector(A.n, 5), b = x;
      ASSERT_EQ(starfront_solve(F, 1, x.data(), A.n), STARFRONT_OK) << starfront_last_error();
      EXPECT_LE(testing::normwise_backward_error(A, x, b), 1e-14);
      starfront_stats s;
      ASSERT_EQ(starfront_get_stats(F, &s), STARFRONT_OK);
      EXPECT_EQ(s.method, STARFRONT_METHOD_LDLT);
      EXPECT_EQ(s.delayed_pivots, 0);
      EXPECT_LE(s.refine_steps, 3);
      EXPECT_LE(s.backward_error, 1e-14);
    }
    // Bad options.
    o.method = static_cast<starfront_method>(7);
    EXPECT_EQ(starfront_factorize(F, &M, &o), STARFRONT_INVALID_ARGUMENT);
    o.method = STARFRONT_METHOD_LDLT;
    o.ldlt_threshold = 0.9;
    EXPECT_EQ(starfront_factorize(F, &M, &o), STARFRONT_INVALID_ARGUMENT);
    o.ldlt_threshold = 0.0;  // default
    o.perturbation = -1.0;
    EXPECT_EQ(starfront_factorize(F, &M, &o), STARFRONT_INVALID_ARGUMENT);
    o.perturbation = 0.0;
    o.refine_steps = -2;
    EXPECT_EQ(starfront_factorize(F, &M, &o), STARFRONT_INVALID_ARGUMENT);
    starfront_factor_free(F);
  }
  starfront_runtime_free(rt);
}

TEST(LdltCApi, ZeroPivotIsSingularWithColumnAndInertia) {
  // [[1,1,0],[1,1,0],[0,0,1]], 1-based CSC lower, int32.
  const int32_t ptr[] = {1, 3, 4, 5};
  const int32_t ind[] = {1, 2, 2, 3};
  const double val[] = {1, 1, 1, 1};
  starfront_matrix M;
  starfront_matrix_init(&M);
  M.n = 3;
  M.index_type = STARFRONT_INT32;
  M.base = 1;
  M.ptr = ptr;
  M.ind = ind;
  M.values = val;
  starfront_factor* F = nullptr;
  ASSERT_EQ(starfront_analyse(nullptr, &M, nullptr, &F), STARFRONT_OK) << starfront_last_error();
  starfront_factor_options o;
  starfront_factor_options_init(&o);
  o.method = STARFRONT_METHOD_LDLT;
  EXPECT_EQ(starfront_factorize(F, &M, &o), STARFRONT_SINGULAR);
  starfront_error_info info;
  starfront_last_error_info(&info);
  EXPECT_TRUE(info.column == 1 || info.column == 2) << info.column;  // 1-based
  int64_t p = -1, q = -1, z = -1;
  ASSERT_EQ(starfront_inertia(F, &p, &q, &z), STARFRONT_OK);
  EXPECT_EQ(p, 2);
  EXPECT_EQ(q, 0);
  EXPECT_EQ(z, 1);
  double b[3] = {1, 2, 3};
  EXPECT_EQ(starfront_solve(F, 1, b, 3), STARFRONT_INVALID_ARGUMENT);
  EXPECT_STREQ(starfront_status_name(STARFRONT_SINGULAR), "singular");
  starfront_factor_free(F);
}

TEST(LdltCppApi, FactorOptionsAndSingularError) {
  const CscMatrix A = testing::random_indefinite(80, 0.05, testing::IndefKind::all_zero_diag, 3);
  const starfront::Matrix M = starfront::Matrix::csc(A.n, A.colptr.data(), A.rowind.data(), A.values.data());
  starfront::Factor F(nullptr, M);
  starfront::FactorOptions o;
  o.method = starfront::Method::ldlt;
  F.factorize(M, o);
  const testing::EigenInertia want = testing::inertia_of(testing::eigenvalues(testing::to_dense(A), A.n));
  EXPECT_EQ(F.inertia().positive, want.positive);
  EXPECT_EQ(F.inertia().negative, want.negative);
  std::vector<double> b = testing::random_vector(A.n, 1);
  const std::vector<double> x = F.solve(b);
  EXPECT_LE(testing::normwise_backward_error(A, x, b), 1e-14);
  EXPECT_GT(F.stats().two_by_two_pivots, 0);

  const std::vector<int64_t> ptr = {0, 2, 3, 4}, ind = {0, 1, 1, 2};
  const std::vector<double> val = {1, 1, 1, 1};
  const starfront::Matrix S = starfront::Matrix::csc(3, ptr.data(), ind.data(), val.data());
  starfront::Factor G(nullptr, S);
  try {
    G.factorize(S, o);
    ADD_FAILURE() << "a zero pivot must not succeed";
  } catch (const starfront::Error& e) {
    EXPECT_EQ(e.status(), STARFRONT_SINGULAR);
    EXPECT_GE(e.column(), 0);
  }
  EXPECT_EQ(G.inertia().zero, 1);
}

}  // namespace
}  // namespace starfront
