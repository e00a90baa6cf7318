#include "sparse/csc.hpp"
#include "sparse/memory.hpp"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <cmath>
#include <numeric>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

namespace starfront {

Status check_lower_csc(const CscMatrix& A) {
  if (A.n < 0) return Status::error(StatusCode::invalid_argument, "negative order n");
  if (static_cast<idx_t>(A.colptr.size()) != A.n + 1)
    return Status::error(StatusCode::invalid_argument,
                         "colptr has " + std::to_string(A.colptr.size()) +
                             " entries, expected n+1 = " + std::to_string(A.n + 1));
  if (A.colptr[0] != 0)
    return Status::error(StatusCode::invalid_argument, "colptr[0] must be 0");
  for (idx_t j = 0; j < A.n; ++j)
    if (A.colptr[j + 1] < A.colptr[j])
      return Status::error(StatusCode::invalid_argument,
                           "colptr decreases at column " + std::to_string(j));
  const idx_t nnz = A.colptr[A.n];
  if (static_cast<idx_t>(A.rowind.size()) != nnz || static_cast<idx_t>(A.values.size()) != nnz)
    return Status::error(StatusCode::invalid_argument,
                         "rowind/values sizes differ from colptr[n] = " + std::to_string(nnz));
  for (idx_t j = 0; j < A.n; ++j) {
    for (idx_t p = A.colptr[j]; p < A.colptr[j + 1]; ++p) {
      const idx_t i = A.rowind[p];
      if (i < j || i >= A.n)
        return Status::error(StatusCode::invalid_argument,
                             "row index " + std::to_string(i) + " of column " + std::to_string(j) +
                                 " is outside the lower triangle [" + std::to_string(j) + ", " +
                                 std::to_string(A.n) + ")");
      if (p > A.colptr[j] && A.rowind[p - 1] >= i)
        return Status::error(StatusCode::invalid_argument,
                             "row indices of column " + std::to_string(j) +
                                 " are not strictly increasing at position " + std::to_string(p));
    }
  }
  return Status::success();
}

Status lower_csc_from_triplets(idx_t n, const std::vector<idx_t>& rows,
                               const std::vector<idx_t>& cols,
                               const std::vector<double>& vals, CscMatrix& out) {
  if (n < 0) return Status::error(StatusCode::invalid_argument, "negative order n");
  // n + 1 column pointers must be addressable (and n + 1 must not overflow).
  if (static_cast<std::size_t>(n) >= std::vector<idx_t>().max_size())
    return Status::error(StatusCode::out_of_memory,
                         "order n = " + std::to_string(n) + " exceeds the addressable memory");
  if (Status m = check_fits_in_memory(lower_csc_column_bytes(n),
                                      "order n = " + std::to_string(n) + ": the CSC's column arrays");
      !m.ok())
    return m;
  if (rows.size() != cols.size() || rows.size() != vals.size())
    return Status::error(StatusCode::invalid_argument, "triplet arrays differ in length");
  const idx_t m = static_cast<idx_t>(rows.size());
  for (idx_t k = 0; k < m; ++k)
    if (rows[k] < 0 || rows[k] >= n || cols[k] < 0 || cols[k] >= n)
      return Status::error(StatusCode::invalid_argument,
                           "triplet " + std::to_string(k) + " (" + std::to_string(rows[k]) + ", " +
                               std::to_string(cols[k]) + ") outside 0.." + std::to_string(n - 1));
  // Count per lower column, bucket, then sort and sum duplicates per column.
  std::vector<idx_t> count(n + 1, 0);
  for (idx_t k = 0; k < m; ++k) ++count[std::min(rows[k], cols[k]) + 1];
  std::partial_sum(count.begin(), count.end(), count.begin());
  std::vector<idx_t> ri(m);
  std::vector<double> rv(m);
  std::vector<idx_t> next(count.begin(), count.end() - 1);
  for (idx_t k = 0; k < m; ++k) {
    const idx_t j = std::min(rows[k], cols[k]);
    const idx_t p = next[j]++;
    ri[p] = std::max(rows[k], cols[k]);
    rv[p] = vals[k];
  }
  CscMatrix C;
  C.n = n;
  C.colptr.assign(n + 1, 0);
  C.rowind.reserve(m);
  C.values.reserve(m);
  std::vector<idx_t> order;
  for (idx_t j = 0; j < n; ++j) {
    order.resize(count[j + 1] - count[j]);
    std::iota(order.begin(), order.end(), count[j]);
    std::sort(order.begin(), order.end(), [&](idx_t a, idx_t b) { return ri[a] < ri[b]; });
    for (idx_t q = 0; q < static_cast<idx_t>(order.size()); ++q) {
      const idx_t p = order[q];
      if (q > 0 && ri[order[q - 1]] == ri[p]) {
        C.values.back() += rv[p];
      } else {
        C.rowind.push_back(ri[p]);
        C.values.push_back(rv[p]);
      }
    }
    C.colptr[j + 1] = static_cast<idx_t>(C.rowind.size());
  }
  out = std::move(C);
  return Status::success();
}

void symmetric_matvec(const CscMatrix& A, const double* x, double* y) {
  std::fill(y, y + A.n, 0.0);
  for (idx_t j = 0; j < A.n; ++j) {
    double yj = 0.0;
    for (idx_t p = A.colptr[j]; p < A.colptr[j + 1]; ++p) {
      const idx_t i = A.rowind[p];
      const double a = A.values[p];
      yj += a * x[i];
      if (i != j) y[i] += a * x[j];
    }
    y[j] += yj;
  }
}

namespace {

/// Columns [j0, j1) of symmetric_norm_inf's pass: adds each entry's |a_ij|
/// to rowsum (row i, and row j for i != j) and returns their sum.
double norm_pass(const CscMatrix& A, idx_t j0, idx_t j1, double* rowsum) {
  // Row i's sum: its entries left of the diagonal (row i of the lower
  // triangle, scattered over the columns j < i) plus column i's entries on
  // and below the diagonal, summed in a register.
  double total = 0.0;
  for (idx_t j = j0; j < j1; ++j) {
    double col = 0.0;
    for (idx_t p = A.colptr[j]; p < A.colptr[j + 1]; ++p) {
      const idx_t i = A.rowind[p];
      const double a = std::fabs(A.values[p]);
      col += a;
      if (i != j) rowsum[i] += a;
    }
    rowsum[j] += col;
    total += col;
  }
  return total;
}

}  // namespace

double symmetric_norm_inf(const CscMatrix& A, double* abs_sum) { return symmetric_norm_inf(A, abs_sum, 1); }

double symmetric_norm_inf(const CscMatrix& A, double* abs_sum, int threads) {
  const idx_t n = A.n, nnz = A.nnz();
  const int T = static_cast<int>(std::max<idx_t>(1, std::min<idx_t>(threads, n)));
  // Range t: the columns whose first entry lies in [t·nnz/T, (t+1)·nnz/T).
  std::vector<idx_t> first(T + 1, n);
  first[0] = 0;
  for (int t = 1; t < T; ++t)
    first[t] = static_cast<idx_t>(std::lower_bound(A.colptr.begin(), A.colptr.end() - 1, nnz / T * t) -
                                  A.colptr.begin());
  std::vector<double> rowsum(static_cast<std::size_t>(n) * T, 0.0), total(T, 0.0);
  std::vector<std::thread> helpers;
  for (int t = 1; t < T; ++t) {
    try {
      helpers.emplace_back([&, t] { total[t] = norm_pass(A, first[t], first[t + 1], rowsum.data() + n * t); });
    } catch (const std::system_error&) {  // no thread: this one sums the range
      total[t] = norm_pass(A, first[t], first[t + 1], rowsum.data() + n * t);
    }
  }
  total[0] = norm_pass(A, first[0], first[1], rowsum.data());
  for (std::thread& h : helpers) h.join();
  double m = 0.0, sum = 0.0;
  for (idx_t i = 0; i < n; ++i) {
    double r = rowsum[i];
    for (int t = 1; t < T; ++t) r += rowsum[i + n * t];
    m = std::max(m, r);
  }
  for (int t = 0; t < T; ++t) sum += total[t];
  if (abs_sum) *abs_sum = sum;
  return m;
}

NormRowsIndex symmetric_norm_rows_index(const CscMatrix& A) {
  static std::atomic<std::uint64_t> next_id{1};
  NormRowsIndex X;
  const idx_t n = A.n;
  X.n = n;
  X.id = next_id++;
  X.col_ptr = A.colptr;
  X.row_ptr.assign(static_cast<std::size_t>(n) + 1, 0);
  for (idx_t j = 0; j < n; ++j)
    for (idx_t p = A.colptr[j]; p < A.colptr[j + 1]; ++p)
      if (A.rowind[p] != j) ++X.row_ptr[A.rowind[p] + 1];
  std::partial_sum(X.row_ptr.begin(), X.row_ptr.end(), X.row_ptr.begin());
  X.pos.resize(static_cast<std::size_t>(X.row_ptr[n]));
  std::vector<idx_t> next(X.row_ptr.begin(), X.row_ptr.end() - 1);
  for (idx_t j = 0; j < n; ++j)  // columns in order: each row's positions by increasing j
    for (idx_t p = A.colptr[j]; p < A.colptr[j + 1]; ++p)
      if (A.rowind[p] != j) X.pos[next[A.rowind[p]]++] = p;
  return X;
}

double symmetric_norm_inf_by_rows(const NormRowsIndex& X, const double* values) {
  std::uint64_t best = 0;  // bit pattern of +0.0; the order of non-negative doubles
  for (idx_t i = 0; i < X.n; ++i) {
    double r = 0.0, c = 0.0;
    for (idx_t q = X.row_ptr[i]; q < X.row_ptr[i + 1]; ++q) r += std::fabs(values[X.pos[q]]);
    for (idx_t p = X.col_ptr[i]; p < X.col_ptr[i + 1]; ++p) c += std::fabs(values[p]);
    const double s = std::fabs(r + c);  // fabs: a NaN's sign bit cleared, as the kernel does
    std::uint64_t b;
    std::memcpy(&b, &s, sizeof b);
    best = std::max(best, b);
  }
  double m;
  std::memcpy(&m, &best, sizeof m);
  return m;
}

CscMatrix permute_symmetric(const CscMatrix& A, const std::vector<idx_t>& perm) {
  const idx_t n = A.n;
  std::vector<idx_t> iperm(n);
  for (idx_t k = 0; k < n; ++k) iperm[perm[k]] = k;
  CscMatrix C;
  C.n = n;
  C.colptr.assign(n + 1, 0);
  for (idx_t j = 0; j < n; ++j)
    for (idx_t p = A.colptr[j]; p < A.colptr[j + 1]; ++p)
      ++C.colptr[std::min(iperm[A.rowind[p]], iperm[j]) + 1];
  std::partial_sum(C.colptr.begin(), C.colptr.end(), C.colptr.begin());
  C.rowind.resize(A.nnz());
  C.values.resize(A.nnz());
  std::vector<idx_t> next(C.colptr.begin(), C.colptr.end() - 1);
  for (idx_t j = 0; j < n; ++j)
    for (idx_t p = A.colptr[j]; p < A.colptr[j + 1]; ++p) {
      const idx_t a = iperm[A.rowind[p]], b = iperm[j];
      const idx_t q = next[std::min(a, b)]++;
      C.rowind[q] = std::max(a, b);
      C.values[q] = A.values[p];
    }
  // Sort each column by row index.
  std::vector<std::pair<idx_t, double>> buf;
  for (idx_t j = 0; j < n; ++j) {
    const idx_t lo = C.colptr[j], hi = C.colptr[j + 1];
    if (std::is_sorted(C.rowind.begin() + lo, C.rowind.begin() + hi)) continue;
    buf.clear();
    for (idx_t p = lo; p < hi; ++p) buf.emplace_back(C.rowind[p], C.values[p]);
    std::sort(buf.begin(), buf.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    for (idx_t p = lo; p < hi; ++p) {
      C.rowind[p] = buf[p - lo].first;
      C.values[p] = buf[p - lo].second;
    }
  }
  return C;
}

}  // namespace starfront
