// Seeded random test matrices (header-only, tests only).
#pragma once

#include <algorithm>
#include <cmath>
#include <random>
#include <set>
#include <utility>
#include <vector>

#include "sparse/csc.hpp"

namespace starfront::testing {

/// Random symmetric positive definite n×n matrix with about `density`·n²/2
/// off-diagonal entries in the lower triangle, values uniform in (-1, 1),
/// made strictly diagonally dominant (diagonal = row sum of |offdiag| + U(0.5, 1.5)).
inline CscMatrix random_spd(idx_t n, double density, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0), d(0.5, 1.5);
  std::vector<idx_t> rows, cols;
  std::vector<double> vals;
  std::vector<double> rowsum(n, 0.0);
  std::set<std::pair<idx_t, idx_t>> seen;
  const auto target = static_cast<idx_t>(density * static_cast<double>(n) * (n - 1) / 2.0);
  std::uniform_int_distribution<idx_t> pick(0, n > 0 ? n - 1 : 0);
  for (idx_t t = 0; t < target; ++t) {
    idx_t i = pick(rng), j = pick(rng);
    if (i == j) continue;
    if (i < j) std::swap(i, j);
    if (!seen.insert({i, j}).second) continue;
    double v = u(rng);
    if (v == 0.0) v = 0.5;
    rows.push_back(i);
    cols.push_back(j);
    vals.push_back(v);
    rowsum[i] += std::fabs(v);
    rowsum[j] += std::fabs(v);
  }
  for (idx_t i = 0; i < n; ++i) {
    rows.push_back(i);
    cols.push_back(i);
    vals.push_back(rowsum[i] + d(rng));
  }
  CscMatrix A;
  lower_csc_from_triplets(n, rows, cols, vals, A);
  return A;
}

/// Dense column-major n×n copy of the symmetric matrix whose lower triangle is A.
inline std::vector<double> to_dense(const CscMatrix& A) {
  std::vector<double> D(A.n * A.n, 0.0);
  for (idx_t j = 0; j < A.n; ++j)
    for (idx_t p = A.colptr[j]; p < A.colptr[j + 1]; ++p) {
      D[A.rowind[p] + j * A.n] = A.values[p];
      D[j + A.rowind[p] * A.n] = A.values[p];
    }
  return D;
}

/// Random vector with entries uniform in (-1, 1), never all zero.
inline std::vector<double> random_vector(idx_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<double> v(n);
  for (double& x : v) x = u(rng);
  if (n > 0) v[0] += 2.0;
  return v;
}

/// max|a - b| / max|b| (max|a - b| when b is zero).
inline double rel_diff(const std::vector<double>& a, const std::vector<double>& b) {
  double num = 0, den = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    num = std::max(num, std::fabs(a[i] - b[i]));
    den = std::max(den, std::fabs(b[i]));
  }
  return den > 0 ? num / den : num;
}

}  // namespace starfront::testing
