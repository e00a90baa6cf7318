// Tests of sparse/csc: triplet assembly, invariant checks, and the symmetric
// kernels (permutation, matvec, norm) against dense brute force.
#include "sparse/csc.hpp"

#include <gtest/gtest.h>

#include "common/random_matrices.hpp"
#include "io/matrix_market.hpp"
#include "sparse/memory.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <random>
#include <string>
#include <vector>

namespace starfront {
namespace {

using testing::to_dense;  // dense symmetric copy (row- and column-major alike)

struct Triplets {
  std::vector<idx_t> r, c;
  std::vector<double> v;
};

/// Random triplets of a symmetric n x n matrix, in either triangle, with
/// duplicates; integer values so that sums are exact in any order.
Triplets random_triplets(idx_t n, idx_t count, std::mt19937_64& rng) {
  std::uniform_int_distribution<idx_t> idx(0, n - 1);
  std::uniform_int_distribution<int> val(-9, 9);
  Triplets t;
  for (idx_t k = 0; k < count; ++k) {
    t.r.push_back(idx(rng));
    t.c.push_back(idx(rng));
    t.v.push_back(val(rng));
  }
  return t;
}

/// Dense symmetric matrix the triplets describe (mirror, sum duplicates).
std::vector<double> dense_of(idx_t n, const Triplets& t) {
  std::vector<double> D(n * n, 0.0);
  for (std::size_t k = 0; k < t.r.size(); ++k) {
    const idx_t i = std::max(t.r[k], t.c[k]), j = std::min(t.r[k], t.c[k]);
    D[i * n + j] += t.v[k];
    if (i != j) D[j * n + i] += t.v[k];
  }
  return D;
}

CscMatrix random_csc(idx_t n, std::mt19937_64& rng) {
  const Triplets t = random_triplets(n, 3 * n, rng);
  CscMatrix A;
  EXPECT_TRUE(lower_csc_from_triplets(n, t.r, t.c, t.v, A).ok());
  return A;
}

TEST(CscTriplets, DuplicatesSummedEitherTriangle) {
  // (1,0) given in the lower triangle, as (0,1) in the upper one, and twice more.
  const std::vector<idx_t> r = {0, 1, 0, 1, 2, 2, 1};
  const std::vector<idx_t> c = {0, 0, 1, 0, 2, 0, 1};
  const std::vector<double> v = {4, 1, 2, 3, 5, 0, 6};
  CscMatrix A;
  ASSERT_TRUE(lower_csc_from_triplets(3, r, c, v, A).ok());
  ASSERT_TRUE(check_lower_csc(A).ok());
  EXPECT_EQ(A.colptr, (std::vector<idx_t>{0, 3, 4, 5}));
  EXPECT_EQ(A.rowind, (std::vector<idx_t>{0, 1, 2, 1, 2}));
  EXPECT_EQ(A.values, (std::vector<double>{4, 6, 0, 6, 5}));  // explicit zero kept
}

TEST(CscTriplets, RandomAgainstDense) {
  std::mt19937_64 rng(1);
  for (idx_t n : {1, 2, 7, 30}) {
    const Triplets t = random_triplets(n, 4 * n, rng);
    CscMatrix A;
    ASSERT_TRUE(lower_csc_from_triplets(n, t.r, t.c, t.v, A).ok());
    ASSERT_TRUE(check_lower_csc(A).ok());
    EXPECT_EQ(to_dense(A), dense_of(n, t));
  }
}

TEST(CscTriplets, Refusals) {
  CscMatrix A;
  EXPECT_EQ(lower_csc_from_triplets(2, {0, 2}, {0, 0}, {1, 1}, A).code,
            StatusCode::invalid_argument);
  EXPECT_EQ(lower_csc_from_triplets(2, {0}, {-1}, {1}, A).code, StatusCode::invalid_argument);
  EXPECT_EQ(lower_csc_from_triplets(2, {0, 1}, {0}, {1, 1}, A).code,
            StatusCode::invalid_argument);
  EXPECT_EQ(lower_csc_from_triplets(-1, {}, {}, {}, A).code, StatusCode::invalid_argument);
  // n + 1 column pointers out of reach (n + 1 itself overflows for the largest n)
  EXPECT_EQ(lower_csc_from_triplets(std::numeric_limits<idx_t>::max(), {0}, {0}, {1}, A).code,
            StatusCode::out_of_memory);
  // Addressable but beyond the memory (order 2^50: 27 PB of column arrays;
  // and the least order whose column arrays exceed the memory this process
  // may use): refused before the arrays are allocated and filled, which
  // overcommit would end in a kill.
  const std::uint64_t usable = usable_memory_bytes();
  for (idx_t n : {idx_t{1} << 50, static_cast<idx_t>(usable / (3 * sizeof(idx_t))) + 1}) {
    if (usable == 0) break;  // memory unknown: nothing is refused before allocating
    const Status st = lower_csc_from_triplets(n, {0}, {0}, {1}, A);
    EXPECT_EQ(st.code, StatusCode::out_of_memory) << n;
    EXPECT_NE(st.message.find("of memory this process may use"), std::string::npos) << st.message;
  }
  ASSERT_TRUE(lower_csc_from_triplets(0, {}, {}, {}, A).ok());
  EXPECT_EQ(A.n, 0);
  EXPECT_EQ(A.colptr, (std::vector<idx_t>{0}));
}

TEST(CscCheck, DetectsBrokenInvariants) {
  CscMatrix A;
  A.n = 2;
  A.colptr = {0, 2, 3};
  A.rowind = {0, 1, 1};
  A.values = {1, 2, 3};
  EXPECT_TRUE(check_lower_csc(A).ok());
  CscMatrix B = A;
  B.rowind = {1, 0, 1};  // unsorted column 0
  EXPECT_EQ(check_lower_csc(B).code, StatusCode::invalid_argument);
  B = A;
  B.rowind = {0, 1, 0};  // upper entry in column 1
  EXPECT_EQ(check_lower_csc(B).code, StatusCode::invalid_argument);
  B = A;
  B.colptr = {0, 2};
  EXPECT_EQ(check_lower_csc(B).code, StatusCode::invalid_argument);
  B = A;
  B.values.pop_back();
  EXPECT_EQ(check_lower_csc(B).code, StatusCode::invalid_argument);
}

TEST(CscPermute, MatchesDenseBruteForce) {
  std::mt19937_64 rng(2);
  for (idx_t n : {1, 3, 10, 57}) {
    const CscMatrix A = random_csc(n, rng);
    std::vector<idx_t> perm(n);
    std::iota(perm.begin(), perm.end(), 0);
    std::shuffle(perm.begin(), perm.end(), rng);
    const CscMatrix C = permute_symmetric(A, perm);
    ASSERT_TRUE(check_lower_csc(C).ok()) << check_lower_csc(C).message;
    EXPECT_EQ(C.nnz(), A.nnz());
    const std::vector<double> DA = to_dense(A), DC = to_dense(C);
    for (idx_t k = 0; k < n; ++k)
      for (idx_t l = 0; l < n; ++l)
        ASSERT_EQ(DC[k * n + l], DA[perm[k] * n + perm[l]]) << "n=" << n << " (" << k << "," << l << ")";
  }
}

TEST(CscKernels, MatvecAndNormMatchDense) {
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (idx_t n : {1, 4, 25, 80}) {
    const CscMatrix A = random_csc(n, rng);
    const std::vector<double> D = to_dense(A);
    std::vector<double> x(n), y(n, 123.0);
    for (double& v : x) v = u(rng);
    symmetric_matvec(A, x.data(), y.data());
    double norm = 0.0;
    for (idx_t i = 0; i < n; ++i) {
      double yi = 0.0, row = 0.0;
      for (idx_t j = 0; j < n; ++j) {
        yi += D[i * n + j] * x[j];
        row += std::fabs(D[i * n + j]);
      }
      EXPECT_NEAR(y[i], yi, 1e-12 * (1.0 + row)) << "row " << i;
      norm = std::max(norm, row);
    }
    EXPECT_DOUBLE_EQ(symmetric_norm_inf(A), norm);
  }
}

/// symmetric_norm_inf on matrices without the diagonal entries of the
/// even columns (removed; checked) against the dense row sums, and its
/// abs_sum (Σ|a_ij| over the stored entries) against a plain sum: finite
/// for finite values, NaN or infinite as soon as one value is.
TEST(CscKernels, NormWithMissingDiagonalsAndAbsSum) {
  std::mt19937_64 rng(12);
  for (idx_t n : {3, 17, 60}) {
    const CscMatrix R = random_csc(n, rng);
    CscMatrix A;
    A.n = n;
    A.colptr.assign(1, 0);
    for (idx_t j = 0; j < n; ++j) {
      for (idx_t p = R.colptr[j]; p < R.colptr[j + 1]; ++p)
        if (!(R.rowind[p] == j && j % 2 == 0)) A.rowind.push_back(R.rowind[p]), A.values.push_back(R.values[p]);
      A.colptr.push_back(static_cast<idx_t>(A.rowind.size()));
    }
    ASSERT_TRUE(check_lower_csc(A).ok());
    idx_t missing = 0;
    for (idx_t j = 0; j < n; ++j)
      missing += A.colptr[j] == A.colptr[j + 1] || A.rowind[A.colptr[j]] != j ? 1 : 0;
    ASSERT_GT(missing, 0) << "n " << n;
    const std::vector<double> D = to_dense(A);
    double norm = 0.0, plain = 0.0;
    for (idx_t i = 0; i < n; ++i) {
      double row = 0.0;
      for (idx_t j = 0; j < n; ++j) row += std::fabs(D[i * n + j]);
      norm = std::max(norm, row);
    }
    for (double v : A.values) plain += std::fabs(v);
    double sum = -1.0;
    EXPECT_DOUBLE_EQ(symmetric_norm_inf(A, &sum), norm) << "n " << n;
    EXPECT_NEAR(sum, plain, 1e-13 * plain) << "n " << n;
    for (double bad : {std::nan(""), std::numeric_limits<double>::infinity(),
                       -std::numeric_limits<double>::infinity()}) {
      CscMatrix B = A;
      B.values[B.values.size() / 2] = bad;
      (void)symmetric_norm_inf(B, &sum);
      EXPECT_FALSE(std::isfinite(sum)) << "n " << n << " value " << bad;
    }
  }
}

/// symmetric_norm_inf over several threads: the one-thread figures to
/// rounding for 2 to 7 threads (more threads than columns too), the same
/// result at every call, bitwise the one-argument pass with one thread, and
/// a NaN or infinite value still makes abs_sum non-finite; on
/// activsg2000_hykkt_10 as well.
TEST(CscKernels, NormOverSeveralThreadsMatchesOne) {
  std::mt19937_64 rng(44);
  std::vector<CscMatrix> mats;
  for (idx_t n : {1, 3, 17, 60, 400}) mats.push_back(random_csc(n, rng));
  CscMatrix real;
  const Status rd = read_matrix_market(std::string(STARFRONT_DATA_DIR) + "/spd/activsg2000_hykkt_10.mtx", real);
  ASSERT_TRUE(rd.ok()) << rd.message;
  mats.push_back(real);
  for (const CscMatrix& A : mats) {
    double s1 = -1, s1b = -1;
    const double n1 = symmetric_norm_inf(A, &s1);
    EXPECT_EQ(symmetric_norm_inf(A, &s1b, 1), n1);
    EXPECT_EQ(s1b, s1);
    for (int T : {2, 3, 4, 7}) {
      double sT = -1, sT2 = -1;
      const double nT = symmetric_norm_inf(A, &sT, T);
      EXPECT_NEAR(nT, n1, 1e-14 * n1) << "n " << A.n << " threads " << T;
      EXPECT_NEAR(sT, s1, 1e-14 * s1) << "n " << A.n << " threads " << T;
      EXPECT_EQ(symmetric_norm_inf(A, &sT2, T), nT);  // deterministic
      EXPECT_EQ(sT2, sT);
    }
    for (double bad : {std::nan(""), std::numeric_limits<double>::infinity()}) {
      CscMatrix B = A;
      B.values[B.values.size() - 1] = bad;  // in the last range
      double sum = 0;
      (void)symmetric_norm_inf(B, &sum, 3);
      EXPECT_FALSE(std::isfinite(sum)) << "n " << A.n;
    }
  }
}

/// The row-wise norm (symmetric_norm_rows_index, symmetric_norm_inf_by_rows,
/// the GPU kernel's reference): bitwise symmetric_norm_inf on random
/// matrices (missing diagonals, empty columns, n = 1) and activsg2000_hykkt_10
/// with fresh seeded values of both signs; the index lists each row's
/// entries left of the diagonal once, by increasing column; a NaN anywhere
/// gives NaN, an infinite value +inf, an overflowing row sum +inf; each
/// index gets its own id.
TEST(CscKernels, NormByRowsIsTheColumnPassBitwise) {
  std::mt19937_64 rng(4545);
  std::vector<CscMatrix> mats;
  for (idx_t n : {1, 2, 9, 60, 300, 1000}) mats.push_back(random_csc(n, rng));
  CscMatrix real;
  const Status rd = read_matrix_market(std::string(STARFRONT_DATA_DIR) + "/spd/activsg2000_hykkt_10.mtx", real);
  ASSERT_TRUE(rd.ok()) << rd.message;
  mats.push_back(real);
  std::uniform_real_distribution<double> u(-3.0, 3.0);
  std::uint64_t last_id = 0;
  for (CscMatrix& A : mats) {
    for (double& v : A.values) v = u(rng) * std::pow(10.0, std::uniform_int_distribution<int>(-5, 5)(rng));
    const NormRowsIndex X = symmetric_norm_rows_index(A);
    EXPECT_NE(X.id, last_id);
    last_id = X.id;
    ASSERT_EQ(static_cast<idx_t>(X.row_ptr.size()), A.n + 1);
    // Brute force: each row's positions left of the diagonal, by column.
    std::vector<std::vector<idx_t>> rows(static_cast<std::size_t>(A.n));
    for (idx_t j = 0; j < A.n; ++j)
      for (idx_t p = A.colptr[j]; p < A.colptr[j + 1]; ++p)
        if (A.rowind[p] != j) rows[A.rowind[p]].push_back(p);
    for (idx_t i = 0; i < A.n; ++i)
      EXPECT_EQ(std::vector<idx_t>(X.pos.begin() + X.row_ptr[i], X.pos.begin() + X.row_ptr[i + 1]), rows[i]);
    EXPECT_EQ(symmetric_norm_inf_by_rows(X, A.values.data()), symmetric_norm_inf(A)) << "n " << A.n;
    const std::size_t last = A.values.size() - 1;
    for (double bad : {std::nan(""), -std::nan(""), std::numeric_limits<double>::infinity(),
                       -std::numeric_limits<double>::infinity()}) {
      CscMatrix B = A;
      B.values[last] = bad;
      const double m = symmetric_norm_inf_by_rows(X, B.values.data());
      if (std::isnan(bad)) {
        EXPECT_TRUE(std::isnan(m)) << "n " << A.n;
      } else {
        EXPECT_EQ(m, std::numeric_limits<double>::infinity()) << "n " << A.n;
      }
    }
    // Two finite values in one row whose sum overflows: an entry left of
    // the diagonal of row i and the first entry of column i.
    idx_t row = -1;
    for (idx_t i = 0; i < A.n && row < 0; ++i)
      if (X.row_ptr[i + 1] > X.row_ptr[i] && A.colptr[i + 1] > A.colptr[i]) row = i;
    if (row >= 0) {
      CscMatrix C = A;
      C.values[X.pos[X.row_ptr[row]]] = std::numeric_limits<double>::max();
      C.values[A.colptr[row]] = std::numeric_limits<double>::max();
      EXPECT_EQ(symmetric_norm_inf_by_rows(X, C.values.data()), std::numeric_limits<double>::infinity());
      EXPECT_EQ(symmetric_norm_inf(C), std::numeric_limits<double>::infinity());
    }
  }
}

}  // namespace
}  // namespace starfront
