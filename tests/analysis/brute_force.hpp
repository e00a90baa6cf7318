// Test oracles for the symbolic analysis: a dense boolean symbolic Cholesky
// (O(n³), for n up to a few hundred) and seeded random sparsity patterns.
#pragma once

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "analysis/supernodes.hpp"
#include "analysis/symbolic.hpp"
#include "sparse/csc.hpp"

namespace starfront::testing {

/// Dense lower pattern of L for the symmetric matrix whose lower triangle is A:
/// L[j][i] (i >= j) is true when L(i, j) != 0. Column j of L = {j} ∪ rows of
/// A(j+1:n, j) ∪ the rows > j of every column k < j with L(j, k) != 0.
struct DenseSymbolic {
  idx_t n = 0;
  std::vector<std::vector<char>> col;  ///< col[j][i], i in [0, n)

  explicit DenseSymbolic(const CscMatrix& A) : n(A.n), col(A.n, std::vector<char>(A.n, 0)) {
    for (idx_t j = 0; j < n; ++j) {
      col[j][j] = 1;
      for (idx_t p = A.colptr[j]; p < A.colptr[j + 1]; ++p) col[j][A.rowind[p]] = 1;
      for (idx_t k = 0; k < j; ++k)
        if (col[k][j])
          for (idx_t i = j + 1; i < n; ++i)
            if (col[k][i]) col[j][i] = 1;
    }
  }
  /// min { i > j : L(i, j) != 0 }, or -1.
  idx_t parent(idx_t j) const {
    for (idx_t i = j + 1; i < n; ++i)
      if (col[j][i]) return i;
    return -1;
  }
  idx_t count(idx_t j) const {
    return static_cast<idx_t>(std::count(col[j].begin() + j, col[j].end(), 1));
  }
  idx_t nnz() const {
    idx_t s = 0;
    for (idx_t j = 0; j < n; ++j) s += count(j);
    return s;
  }
  /// Σ_j colcount_j², CHOLMOD's flop count of the exact factor.
  double flops() const {
    double f = 0;
    for (idx_t j = 0; j < n; ++j) f += static_cast<double>(count(j)) * static_cast<double>(count(j));
    return f;
  }
};

/// Builds a pattern-only lower CSC (values 1) from a list of (i, j) pairs in
/// either triangle.
inline CscMatrix pattern_from_pairs(idx_t n, const std::vector<std::pair<idx_t, idx_t>>& pairs) {
  std::vector<idx_t> r, c;
  std::vector<double> v;
  for (auto [i, j] : pairs) {
    r.push_back(i);
    c.push_back(j);
    v.push_back(1.0);
  }
  CscMatrix A;
  lower_csc_from_triplets(n, r, c, v, A);
  return A;
}

/// The kinds of random pattern exercised by the tests.
enum class PatternKind { random, diagonal, dense, chain, disconnected, empty_cols, arrow, no_diag };

inline const char* pattern_name(PatternKind k) {
  switch (k) {
    case PatternKind::random: return "random";
    case PatternKind::diagonal: return "diagonal";
    case PatternKind::dense: return "dense";
    case PatternKind::chain: return "chain";
    case PatternKind::disconnected: return "disconnected";
    case PatternKind::empty_cols: return "empty_cols";
    case PatternKind::arrow: return "arrow";
    case PatternKind::no_diag: return "no_diag";
  }
  return "?";
}

/// A seeded random symmetric pattern of order n of the given kind. Labels are
/// shuffled for the structured kinds, so that the natural order is not special.
inline CscMatrix random_pattern(PatternKind kind, idx_t n, std::mt19937_64& rng) {
  std::vector<std::pair<idx_t, idx_t>> pairs;
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::vector<idx_t> label(n);
  std::iota(label.begin(), label.end(), idx_t{0});
  std::shuffle(label.begin(), label.end(), rng);
  const bool with_diag = kind != PatternKind::no_diag && kind != PatternKind::empty_cols;
  if (with_diag)
    for (idx_t i = 0; i < n; ++i) pairs.emplace_back(i, i);
  switch (kind) {
    case PatternKind::random:
    case PatternKind::no_diag: {
      const double density = u(rng) * 0.25;
      for (idx_t j = 0; j < n; ++j)
        for (idx_t i = j + 1; i < n; ++i)
          if (u(rng) < density) pairs.emplace_back(i, j);
      break;
    }
    case PatternKind::diagonal:
      break;
    case PatternKind::dense:
      for (idx_t j = 0; j < n; ++j)
        for (idx_t i = j + 1; i < n; ++i) pairs.emplace_back(i, j);
      break;
    case PatternKind::chain:
      for (idx_t i = 1; i < n; ++i) pairs.emplace_back(label[i], label[i - 1]);
      break;
    case PatternKind::disconnected: {
      // Random blocks along the diagonal, each random inside, then shuffled.
      idx_t b0 = 0;
      while (b0 < n) {
        const idx_t len = std::min<idx_t>(n - b0, 1 + static_cast<idx_t>(u(rng) * 12));
        const double density = 0.2 + 0.6 * u(rng);
        for (idx_t j = b0; j < b0 + len; ++j)
          for (idx_t i = j + 1; i < b0 + len; ++i)
            if (u(rng) < density) pairs.emplace_back(label[i], label[j]);
        b0 += len;
      }
      break;
    }
    case PatternKind::empty_cols: {
      // Random pattern, then some indices lose every entry (even the diagonal).
      const double density = u(rng) * 0.3;
      std::vector<char> empty(n);
      for (idx_t i = 0; i < n; ++i) empty[i] = u(rng) < 0.3;
      for (idx_t j = 0; j < n; ++j) {
        if (empty[j]) continue;
        if (u(rng) < 0.7) pairs.emplace_back(j, j);
        for (idx_t i = j + 1; i < n; ++i)
          if (!empty[i] && u(rng) < density) pairs.emplace_back(i, j);
      }
      break;
    }
    case PatternKind::arrow: {
      const idx_t hub = n > 0 ? label[0] : 0;
      for (idx_t i = 0; i < n; ++i)
        if (i != hub) pairs.emplace_back(i, hub);
      break;
    }
  }
  return pattern_from_pairs(n, pairs);
}

constexpr PatternKind kAllKinds[] = {PatternKind::random,       PatternKind::diagonal,
                                     PatternKind::dense,        PatternKind::chain,
                                     PatternKind::disconnected, PatternKind::empty_cols,
                                     PatternKind::arrow,        PatternKind::no_diag};

/// Random order in [0, 60], with the small orders 0, 1, 2 over-represented.
inline idx_t random_order(std::mt19937_64& rng) {
  std::uniform_int_distribution<int> pick(0, 70);
  const int v = pick(rng);
  return v > 60 ? (v - 61) % 3 : v;
}

/// Brute-force fundamental supernodes of a dense symbolic factor: column j+1
/// continues j's supernode iff L(:, j) \ {j} == L(:, j+1) and j is the only
/// child of j+1. Returns the supernode start columns, ending with n.
inline std::vector<idx_t> fundamental_supernode_starts(const DenseSymbolic& L) {
  const idx_t n = L.n;
  std::vector<idx_t> nchild(n, 0);
  for (idx_t j = 0; j < n; ++j)
    if (L.parent(j) != -1) ++nchild[L.parent(j)];
  std::vector<idx_t> start = {0};
  for (idx_t j = 1; j < n; ++j) {
    bool same = nchild[j] == 1 && L.col[j - 1][j];
    for (idx_t i = j + 1; i < n && same; ++i) same = L.col[j - 1][i] == L.col[j][i];
    if (!same) start.push_back(j);
  }
  if (n > 0) start.push_back(n);
  return start;
}

/// The fundamental partition and column counts of sf, a symbolic analysis
/// made without amalgamation (every supernode's front is then its first
/// column's pattern), in sf's final numbering.
inline void fundamental_of(const SymbolicFactor& sf, SupernodePartition& fund,
                           std::vector<idx_t>& colcount) {
  fund.start = sf.super_start;
  fund.parent = sf.super_parent;
  colcount.assign(sf.n, 0);
  for (idx_t s = 0; s < sf.nsuper; ++s)
    for (idx_t j = sf.super_start[s]; j < sf.super_start[s + 1]; ++j)
      colcount[j] = sf.front_order(s) - (j - sf.super_start[s]);
}

}  // namespace starfront::testing
