// Tests of sparse/generators: the grid Laplacians against their definition
// (dense brute force on small grids), entry counts, diagonal dominance and
// positive definiteness (dense Cholesky).
#include "sparse/generators.hpp"

#include <gtest/gtest.h>

#include "common/random_matrices.hpp"

#include <cmath>
#include <cstdlib>
#include <vector>

namespace starfront {
namespace {

/// Dense row-major Laplacian of an N x N x Nz grid by definition: `diag` on
/// the diagonal, -1 between neighbours, i.e. points at Chebyshev distance 1
/// (box) or Manhattan distance 1.
std::vector<double> dense_laplacian(idx_t N, idx_t Nz, bool box, double diag) {
  const idx_t n = N * N * Nz;
  std::vector<double> D(n * n, 0.0);
  for (idx_t p = 0; p < n; ++p)
    for (idx_t q = 0; q < n; ++q) {
      const idx_t dx = std::abs(p % N - q % N), dy = std::abs(p / N % N - q / N % N),
                  dz = std::abs(p / (N * N) - q / (N * N));
      const idx_t cheb = std::max({dx, dy, dz}), manh = dx + dy + dz;
      if (p == q) D[p * n + q] = diag;
      else if (box ? cheb == 1 : manh == 1) D[p * n + q] = -1.0;
    }
  return D;
}

using testing::to_dense;  // dense symmetric copy (row- and column-major alike)

/// True when the dense Cholesky of the row-major symmetric D succeeds.
bool dense_cholesky_ok(std::vector<double> D, idx_t n) {
  for (idx_t k = 0; k < n; ++k) {
    if (D[k * n + k] <= 0.0) return false;
    const double d = std::sqrt(D[k * n + k]);
    for (idx_t i = k; i < n; ++i) D[i * n + k] /= d;
    for (idx_t j = k + 1; j < n; ++j)
      for (idx_t i = j; i < n; ++i) D[i * n + j] -= D[i * n + k] * D[j * n + k];
  }
  return true;
}

/// Every row has diagonal >= sum of |off-diagonals|, strictly in at least one.
void expect_diagonally_dominant(const std::vector<double>& D, idx_t n) {
  bool strict = false;
  for (idx_t i = 0; i < n; ++i) {
    double off = 0.0;
    for (idx_t j = 0; j < n; ++j)
      if (j != i) off += std::fabs(D[i * n + j]);
    EXPECT_GE(D[i * n + i], off) << "row " << i;
    strict = strict || D[i * n + i] > off;
  }
  EXPECT_TRUE(strict);
}

idx_t nnz_2d(idx_t N) { return N * N + 2 * N * (N - 1); }
idx_t nnz_7(idx_t N) { return N * N * N + 3 * N * N * (N - 1); }
idx_t nnz_27(idx_t N) { return (N * N * N + (3 * N - 2) * (3 * N - 2) * (3 * N - 2)) / 2; }

TEST(GeneratorLaplace2d, MatchesDefinition) {
  for (idx_t N : {1, 2, 3, 6}) {
    CscMatrix A;
    ASSERT_TRUE(laplace2d(N, A).ok());
    ASSERT_TRUE(check_lower_csc(A).ok()) << check_lower_csc(A).message;
    EXPECT_EQ(A.n, N * N);
    EXPECT_EQ(A.nnz(), nnz_2d(N));
    const std::vector<double> D = to_dense(A);
    EXPECT_EQ(D, dense_laplacian(N, 1, false, 4.0)) << "N=" << N;
    expect_diagonally_dominant(D, A.n);
    EXPECT_TRUE(dense_cholesky_ok(D, A.n));
  }
}

TEST(GeneratorLaplace3d, SevenPointMatchesDefinition) {
  for (idx_t N : {1, 2, 3, 4}) {
    CscMatrix A;
    ASSERT_TRUE(laplace3d(N, 7, A).ok());
    ASSERT_TRUE(check_lower_csc(A).ok()) << check_lower_csc(A).message;
    EXPECT_EQ(A.n, N * N * N);
    EXPECT_EQ(A.nnz(), nnz_7(N));
    const std::vector<double> D = to_dense(A);
    EXPECT_EQ(D, dense_laplacian(N, N, false, 6.0)) << "N=" << N;
    expect_diagonally_dominant(D, A.n);
    EXPECT_TRUE(dense_cholesky_ok(D, A.n));
  }
}

TEST(GeneratorLaplace3d, TwentySevenPointMatchesDefinition) {
  for (idx_t N : {1, 2, 3, 4}) {
    CscMatrix A;
    ASSERT_TRUE(laplace3d(N, 27, A).ok());
    ASSERT_TRUE(check_lower_csc(A).ok()) << check_lower_csc(A).message;
    EXPECT_EQ(A.n, N * N * N);
    EXPECT_EQ(A.nnz(), nnz_27(N));
    const std::vector<double> D = to_dense(A);
    EXPECT_EQ(D, dense_laplacian(N, N, true, 26.0)) << "N=" << N;
    expect_diagonally_dominant(D, A.n);
    EXPECT_TRUE(dense_cholesky_ok(D, A.n));
  }
  // Hand count for N = 3: 27 diagonal entries; interior point has 26
  // neighbours, face centres 17, edge centres 11, corners 7: (26 + 6*17 +
  // 12*11 + 8*7) / 2 = 158 off-diagonal pairs.
  CscMatrix A;
  ASSERT_TRUE(laplace3d(3, 27, A).ok());
  EXPECT_EQ(A.nnz(), 27 + 158);
}

TEST(GeneratorLaplace3d, LargerGridCounts) {
  CscMatrix A;
  ASSERT_TRUE(laplace3d(40, 27, A).ok());
  EXPECT_EQ(A.nnz(), nnz_27(40));
  EXPECT_TRUE(check_lower_csc(A).ok());
  ASSERT_TRUE(laplace3d(50, 7, A).ok());
  EXPECT_EQ(A.nnz(), nnz_7(50));
  EXPECT_TRUE(check_lower_csc(A).ok());
  ASSERT_TRUE(laplace2d(300, A).ok());
  EXPECT_EQ(A.nnz(), nnz_2d(300));
  EXPECT_TRUE(check_lower_csc(A).ok());
}

TEST(GeneratorArguments, Refusals) {
  CscMatrix A;
  A.n = 5;
  EXPECT_EQ(laplace2d(0, A).code, StatusCode::invalid_argument);
  EXPECT_EQ(laplace2d(-3, A).code, StatusCode::invalid_argument);
  EXPECT_EQ(laplace3d(0, 7, A).code, StatusCode::invalid_argument);
  EXPECT_EQ(laplace3d(4, 9, A).code, StatusCode::invalid_argument);
  EXPECT_EQ(laplace3d(4, 0, A).code, StatusCode::invalid_argument);
  EXPECT_EQ(laplace3d(10000000, 7, A).code, StatusCode::invalid_argument);
  EXPECT_EQ(A.n, 5);  // untouched
}

}  // namespace
}  // namespace starfront
