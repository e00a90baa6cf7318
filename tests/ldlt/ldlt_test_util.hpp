// Helpers of the LDLᵀ tests: random symmetric indefinite matrices (seeded)
// and dense LAPACK oracles (DSYSV solution, DSYEV eigenvalue signs).
#pragma once

#include <lapacke.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <set>
#include <vector>

#include "common/random_matrices.hpp"

namespace starfront::testing {

/// Kinds of random symmetric indefinite matrices.
enum class IndefKind {
  general,       ///< random signs on the diagonal
  zero_diagonal, ///< a third of the diagonal exactly zero
  all_zero_diag, ///< every diagonal entry zero (1×1 pivots fail: 2×2 pivots needed)
  kkt,           ///< [H Bᵀ; B 0], H sparse SPD (n1 rows), B sparse full rank (n2 = n/3 rows)
  tiny_diagonal, ///< diagonal of 1e-12 (fails the threshold test: 2×2 pivots)
};

/// Random sparse symmetric indefinite n×n matrix (lower CSC), about
/// density·n²/2 off-diagonal entries uniform in ±(0.1, 1), plus the structure
/// `kind` asks for. Seeded; never all zero.
inline CscMatrix random_indefinite(idx_t n, double density, IndefKind kind, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> mag(0.1, 1.0), unit(0.0, 1.0);
  auto value = [&] { return (unit(rng) < 0.5 ? -1.0 : 1.0) * mag(rng); };
  std::vector<idx_t> rows, cols;
  std::vector<double> vals;
  std::set<std::pair<idx_t, idx_t>> seen;
  auto add = [&](idx_t i, idx_t j, double v) {
    if (i < j) std::swap(i, j);
    if (!seen.insert({i, j}).second) return;
    rows.push_back(i);
    cols.push_back(j);
    vals.push_back(v);
  };
  const idx_t n2 = kind == IndefKind::kkt ? std::max<idx_t>(1, n / 3) : 0, n1 = n - n2;
  std::uniform_int_distribution<idx_t> pick(0, n - 1);
  if (kind == IndefKind::kkt) {
    // H: a path plus random entries, diagonally dominant; B: row i has an
    // entry in column i mod n1 (full rank) and a few random ones.
    std::uniform_int_distribution<idx_t> pick1(0, n1 - 1);
    std::vector<double> rowsum(n1, 0.0);
    for (idx_t i = 1; i < n1; ++i) {
      const double v = value();
      add(i, i - 1, v);
      rowsum[i] += std::fabs(v);
      rowsum[i - 1] += std::fabs(v);
    }
    const auto extra = static_cast<idx_t>(density * n1 * n1 / 2);
    for (idx_t t = 0; t < extra; ++t) {
      const idx_t i = pick1(rng), j = pick1(rng);
      if (i == j || seen.count({std::max(i, j), std::min(i, j)})) continue;
      const double v = value();
      add(i, j, v);
      rowsum[i] += std::fabs(v);
      rowsum[j] += std::fabs(v);
    }
    for (idx_t i = 0; i < n1; ++i) add(i, i, rowsum[i] + 0.5 + unit(rng));
    for (idx_t r = 0; r < n2; ++r) {
      add(n1 + r, r % n1, 1.0 + unit(rng));
      for (int t = 0; t < 3; ++t) add(n1 + r, pick1(rng), value());
    }
  } else {
    for (idx_t i = 1; i < n; ++i) add(i, i - 1, value());  // connected
    const auto extra = static_cast<idx_t>(density * n * n / 2);
    for (idx_t t = 0; t < extra; ++t) {
      const idx_t i = pick(rng), j = pick(rng);
      if (i != j) add(i, j, value());
    }
    for (idx_t i = 0; i < n; ++i) {
      double d = value() * 2.0;
      if (kind == IndefKind::all_zero_diag || (kind == IndefKind::zero_diagonal && i % 3 == 1)) continue;
      if (kind == IndefKind::tiny_diagonal) d = 1e-12;
      add(i, i, d);
    }
  }
  CscMatrix A;
  lower_csc_from_triplets(n, rows, cols, vals, A);
  return A;
}

/// Eigenvalues (ascending) of the dense symmetric n×n column-major D (DSYEV).
inline std::vector<double> eigenvalues(std::vector<double> D, idx_t n) {
  std::vector<double> w(n);
  if (n == 0) return w;
  const lapack_int info = LAPACKE_dsyev(LAPACK_COL_MAJOR, 'N', 'L', static_cast<lapack_int>(n),
                                        D.data(), static_cast<lapack_int>(n), w.data());
  if (info != 0) w.assign(n, std::nan(""));
  return w;
}

/// Positive, negative and zero counts (of eigenvalues). Free of the library's
/// internal headers, so that tests of the public C++ layer can use it too.
struct EigenInertia {
  idx_t positive = 0, negative = 0, zero = 0;
};

/// Inertia from eigenvalues: |λ| <= zero_tol counts as zero.
inline EigenInertia inertia_of(const std::vector<double>& w, double zero_tol = 0.0) {
  EigenInertia in;
  for (double l : w) {
    if (std::fabs(l) <= zero_tol) ++in.zero;
    else if (l > 0) ++in.positive;
    else ++in.negative;
  }
  return in;
}

/// ‖A x − b‖∞ / (‖A‖∞ ‖x‖∞ + ‖b‖∞) (A: lower CSC of a symmetric matrix).
inline double normwise_backward_error(const CscMatrix& A, const std::vector<double>& x,
                                      const std::vector<double>& b) {
  std::vector<double> r(A.n);
  symmetric_matvec(A, x.data(), r.data());
  double rn = 0, xn = 0, bn = 0;
  for (idx_t i = 0; i < A.n; ++i) {
    rn = std::max(rn, std::fabs(r[i] - b[i]));
    xn = std::max(xn, std::fabs(x[i]));
    bn = std::max(bn, std::fabs(b[i]));
  }
  const double den = symmetric_norm_inf(A) * xn + bn;
  return den > 0 ? rn / den : 0.0;
}

/// Dense LAPACK solution of A x = b (DSYSV, Bunch–Kaufman).
inline std::vector<double> dense_sysv(const CscMatrix& A, const std::vector<double>& b) {
  std::vector<double> D = to_dense(A), x = b;
  std::vector<lapack_int> ipiv(A.n);
  const lapack_int n = static_cast<lapack_int>(A.n);
  if (LAPACKE_dsysv(LAPACK_COL_MAJOR, 'L', n, 1, D.data(), n, ipiv.data(), x.data(), n) != 0)
    x.assign(A.n, std::nan(""));
  return x;
}

/// Lower CSC of the symmetric n×n matrix M (dense, column-major; its lower
/// triangle is read): every nonzero, and every diagonal entry even when 0.
inline CscMatrix from_dense_lower(idx_t n, const std::vector<double>& M) {
  std::vector<idx_t> r, c;
  std::vector<double> v;
  for (idx_t j = 0; j < n; ++j)
    for (idx_t i = j; i < n; ++i)
      if (M[i + j * n] != 0.0 || i == j) {
        r.push_back(i);
        c.push_back(j);
        v.push_back(M[i + j * n]);
      }
  CscMatrix A;
  lower_csc_from_triplets(n, r, c, v, A);
  return A;
}

}  // namespace starfront::testing
