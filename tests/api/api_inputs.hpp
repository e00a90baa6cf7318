// Test inputs of the C API (header-only, tests only): one symmetric matrix
// (given by its lower CSC) written in any accepted layout — triangle, CSC or
// CSR, base, index type — with shuffled entries and split duplicates, plus
// the dense LAPACK reference solution.
#pragma once

#include <lapacke.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "common/random_matrices.hpp"
#include "starfront/starfront.h"

namespace starfront::testing {

/// A matrix in caller layout: the arrays live here, desc points into them.
struct CallerMatrix {
  std::vector<int32_t> ptr32, ind32;
  std::vector<int64_t> ptr64, ind64;
  std::vector<double> values;
  starfront_matrix desc{};

  /// Re-points desc at the arrays (after a copy or move of *this).
  void bind() {
    const bool i32 = desc.index_type == STARFRONT_INT32;
    desc.ptr = i32 ? static_cast<const void*>(ptr32.data()) : ptr64.data();
    desc.ind = i32 ? static_cast<const void*>(ind32.data()) : ind64.data();
    desc.values = values.data();
  }
  int64_t nnz() const { return static_cast<int64_t>(values.size()); }
  /// Overwrites index entry p (either type).
  void set_ind(int64_t p, int64_t v) {
    if (desc.index_type == STARFRONT_INT32) ind32[p] = static_cast<int32_t>(v);
    else ind64[p] = v;
  }
  int64_t get_ind(int64_t p) const {
    return desc.index_type == STARFRONT_INT32 ? ind32[p] : ind64[p];
  }
};

/// Writes the symmetric matrix whose lower triangle is A in the given layout.
/// Entries are shuffled within each column (row) and every third one is
/// split into two halves (exact in binary), so duplicates must be summed.
inline CallerMatrix make_caller_matrix(const CscMatrix& A, starfront_triangle tri,
                                       starfront_format fmt, int base,
                                       starfront_index_type itype, std::uint64_t seed) {
  struct E { int64_t r, c; double v; };
  std::vector<E> entries;
  for (idx_t j = 0; j < A.n; ++j)
    for (idx_t p = A.colptr[j]; p < A.colptr[j + 1]; ++p) {
      const idx_t i = A.rowind[p];
      const double v = A.values[p];
      if (tri != STARFRONT_UPPER) entries.push_back({i, j, v});
      if (tri == STARFRONT_UPPER || (tri == STARFRONT_FULL && i != j)) entries.push_back({j, i, v});
    }
  std::vector<E> split;
  for (std::size_t k = 0; k < entries.size(); ++k) {
    if (k % 3 == 1) {
      split.push_back({entries[k].r, entries[k].c, entries[k].v / 2});
      split.push_back({entries[k].r, entries[k].c, entries[k].v / 2});
    } else {
      split.push_back(entries[k]);
    }
  }
  std::mt19937_64 rng(seed);
  std::shuffle(split.begin(), split.end(), rng);
  const auto outer = [&](const E& e) { return fmt == STARFRONT_CSC ? e.c : e.r; };
  const auto inner = [&](const E& e) { return fmt == STARFRONT_CSC ? e.r : e.c; };
  std::stable_sort(split.begin(), split.end(),
                   [&](const E& a, const E& b) { return outer(a) < outer(b); });
  CallerMatrix M;
  std::vector<int64_t> ptr(A.n + 1, 0), ind;
  for (const E& e : split) {
    ++ptr[outer(e) + 1];
    ind.push_back(inner(e) + base);
    M.values.push_back(e.v);
  }
  ptr[0] = base;
  for (idx_t j = 0; j < A.n; ++j) ptr[j + 1] += ptr[j];
  M.ptr64 = ptr;
  M.ind64 = ind;
  M.ptr32.assign(ptr.begin(), ptr.end());
  M.ind32.assign(ind.begin(), ind.end());
  starfront_matrix_init(&M.desc);
  M.desc.n = A.n;
  M.desc.format = fmt;
  M.desc.triangle = tri;
  M.desc.index_type = itype;
  M.desc.base = base;
  M.bind();
  return M;
}

/// Dense LAPACK solution (DPOSV) of A X = B, B n×nrhs with leading dimension n.
inline std::vector<double> dense_solve(const CscMatrix& A, std::vector<double> B, int64_t nrhs) {
  std::vector<double> D = to_dense(A);
  const auto n = static_cast<lapack_int>(A.n);
  if (n == 0) return B;
  const lapack_int info = LAPACKE_dposv(LAPACK_COL_MAJOR, 'L', n, static_cast<lapack_int>(nrhs),
                                        D.data(), n, B.data(), n);
  if (info != 0) B.assign(B.size(), std::nan(""));
  return B;
}

/// max |a - b| / max |b|.
inline double rel_diff(const double* a, const double* b, std::size_t len) {
  double num = 0, den = 0;
  for (std::size_t i = 0; i < len; ++i) {
    num = std::max(num, std::fabs(a[i] - b[i]));
    den = std::max(den, std::fabs(b[i]));
  }
  return den > 0 ? num / den : num;
}

}  // namespace starfront::testing
