// The fuzz targets' properties (see fuzz_checks.hpp).
#include "fuzz_checks.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <sstream>
#include <string_view>
#include <vector>

#include "analysis/etree.hpp"
#include "analysis/permutation.hpp"
#include "analysis/symbolic.hpp"
#include "io/matrix_market.hpp"
#include "plan/front_plan.hpp"
#include "plan/task_graph.hpp"
#include "runtime/sequential/sequential_executor.hpp"
#include "solve/solve.hpp"
#include "sparse/csc.hpp"

namespace starfront::fuzz {
namespace {

std::string fail(const std::string& what, const Status& st) {
  return what + " (status " + status_name(st.code) + ": " + st.message + ")";
}

// ------------------------------------------------------------ CSC pipeline

/// A sequential factorisation and the structures its factor points into
/// (heap-allocated: the plan, graph and factor hold pointers to each other).
struct CoreFactor {
  SymbolicFactor sym;
  FrontPlan plan;
  TaskGraph graph;
  NumericFactor F;
};

Status factorize(const CscMatrix& A, std::uint64_t seed, CoreFactor& c) {
  return factorize_sequential(c.graph, A, FactorOptions{}, c.F, nullptr, seed);
}

bool all_finite(const std::vector<double>& v) {
  return std::all_of(v.begin(), v.end(), [](double x) { return std::isfinite(x); });
}

/// The factorisation outcome must be one of the documented ones, with a
/// valid column; a success must solve A x = b to a small backward error.
std::string check_factorisation(const CscMatrix& A, const Status& st, bool must_succeed) {
  const bool finite = all_finite(A.values);
  if (!finite) {
    if (st.code != StatusCode::invalid_argument)
      return fail("non-finite values not refused with invalid_argument", st);
    return "";
  }
  if (st.code == StatusCode::not_positive_definite) {
    if (must_succeed) return fail("a strictly diagonally dominant matrix was refused", st);
    if (st.column < 0 || st.column >= A.n) return fail("failing column outside 0..n-1", st);
    if (st.message.find("column " + std::to_string(st.column + 1) + " ") == std::string::npos)
      return fail("message does not name the failing column", st);
    return "";
  }
  if (!st.ok()) return fail("unexpected factorisation status", st);
  return "";
}

std::string check_solution(const CscMatrix& A, const CoreFactor& c) {
  std::vector<double> x_true(A.n), b(A.n);
  for (idx_t i = 0; i < A.n; ++i) x_true[i] = 1.0 + static_cast<double>(i % 3);
  symmetric_matvec(A, x_true.data(), b.data());
  std::vector<double> x = b;
  const Status st = solve_in_place(c.F, x.data(), 1, std::max<idx_t>(1, A.n));
  if (!all_finite(b)) {  // A·x_true overflowed: the solve must refuse b
    if (st.code != StatusCode::invalid_argument ||
        std::memcmp(x.data(), b.data(), b.size() * sizeof(double)) != 0)
      return fail("a non-finite right-hand side was not refused (or B was modified)", st);
    return "";
  }
  // The exact solution x_true is small: nothing may overflow.
  if (!st.ok()) return fail("solve failed after a successful factorisation", st);
  if (!all_finite(x)) return "solve returned a non-finite value after a successful factorisation";
  const double berr = backward_error(A, x.data(), b.data());
  if (!(berr <= 1e-12))
    return "wrong answer with a success status: backward error " + std::to_string(berr);
  return "";
}

/// Dense cross-check of a reported not-positive-definite column k (final
/// numbering): its pivot depends only on the columns below it in the
/// elimination tree of P A Pᵀ, which every executor eliminates, with
/// accepted pivots, before it can compute k's (whatever the front, tile or
/// task order). So a dense Cholesky of P A Pᵀ restricted to those columns
/// and k, in increasing order, must accept every pivot before k and find
/// the one at k vanishing. To stay clear of rounding, only a clear
/// contradiction is reported, and only when the pivots before k are far from
/// the tolerance (no large growth).
std::string check_failing_column(const CscMatrix& A, const SymbolicFactor& S, const Status& st) {
  const CscMatrix C = permute_symmetric(A, S.perm);
  const std::vector<idx_t> parent = elimination_tree(C);
  const idx_t k = S.iperm[st.column];
  std::vector<idx_t> cols;  // descendants of k, then k, increasing
  for (idx_t j = 0; j < k; ++j) {
    idx_t a = j;
    while (a >= 0 && a < k) a = parent[a];
    if (a == k) cols.push_back(j);
  }
  cols.push_back(k);
  const idx_t m = static_cast<idx_t>(cols.size());
  std::vector<idx_t> pos(C.n, -1);
  for (idx_t q = 0; q < m; ++q) pos[cols[q]] = q;
  std::vector<double> D(m * m, 0.0);
  double amax = 0.0;
  for (idx_t j = 0; j < C.n; ++j)
    for (idx_t p = C.colptr[j]; p < C.colptr[j + 1]; ++p) {
      const idx_t r = pos[C.rowind[p]], c = pos[j];
      if (r < 0 || c < 0) continue;
      D[r + c * m] = D[c + r * m] = C.values[p];
      amax = std::max(amax, std::fabs(C.values[p]));
    }
  const double clear = 1e-8 * amax;
  for (idx_t j = 0; j < m; ++j) {
    const double d = D[j + j * m];
    if (j == m - 1)
      return d > clear ? "reported column " + std::to_string(st.column + 1) +
                             " has a clearly positive pivot " + std::to_string(d) +
                             " in a dense elimination of its elimination-tree descendants"
                       : "";
    if (d < -clear)
      return "a descendant of reported column " + std::to_string(st.column + 1) +
             " has a clearly negative pivot, yet the factorisation went past it";
    if (!(d > 1e-6 * amax)) return "";  // close to the tolerance: inconclusive
    const double l = std::sqrt(d);
    for (idx_t i = j; i < m; ++i) D[i + j * m] /= l;
    for (idx_t c = j + 1; c < m; ++c)
      for (idx_t i = c; i < m; ++i) D[i + c * m] -= D[i + j * m] * D[c + j * m];
  }
  return "";
}

/// `valid`: what check_lower_csc said about A. Runs analyse, plan,
/// factorisation (submission order, then the random order `seed` when
/// non-zero) and solve, checking every documented outcome.
std::string check_pipeline(const CscMatrix& A, const Status& valid, const AnalysisOptions& ao,
                           const GraphOptions& go, std::uint64_t seed, bool must_succeed) {
  auto c = std::make_unique<CoreFactor>();
  Status st = analyse(A, ao, c->sym);
  if (!valid.ok()) {
    if (st.code != StatusCode::invalid_argument)
      return fail("malformed CSC (" + valid.message + ") not refused by analyse", st);
    return "";
  }
  if (!st.ok()) return fail("analyse refused a valid CSC matrix", st);
  if (Status p = check_permutation(c->sym.perm, A.n); !p.ok())
    return fail("analyse returned a non-permutation", p);
  st = build_front_plan(A, c->sym, c->plan);
  if (!st.ok()) return fail("plan of an analysed matrix failed", st);
  st = build_task_graph(c->plan, go, c->graph);
  if (!st.ok()) return fail("task graph of a valid plan failed", st);
  // Submission order, then (seed != 0) a random valid order: same outcome
  // kind; a not-positive-definite column may differ between orders when
  // several independent columns fail (the executors stop at the first failure
  // they meet), but each must be a genuinely failing one.
  const std::uint64_t orders[] = {0, seed};
  StatusCode first = StatusCode::ok;
  for (int run = 0; run < (seed ? 2 : 1); ++run) {
    const Status f = factorize(A, orders[run], *c);
    const std::string which = run ? "random task order: " : "";
    if (run && f.code != first)
      return which + fail("the outcome changed (was " + std::string(status_name(first)) + ")", f);
    first = f.code;
    if (std::string e = check_factorisation(A, f, must_succeed); !e.empty()) return which + e;
    if (f.code == StatusCode::not_positive_definite)
      if (std::string e = check_failing_column(A, c->sym, f); !e.empty()) return which + e;
    if (f.ok())
      if (std::string e = check_solution(A, *c); !e.empty()) return which + e;
  }
  return "";
}

// ------------------------------------------------------------ byte decoding

/// Reads the fuzz bytes in order; 0 once they run out.
class ByteReader {
 public:
  ByteReader(const std::uint8_t* data, std::size_t size) : data_(data), size_(size) {}
  std::uint8_t next() { return pos_ < size_ ? data_[pos_++] : 0; }
  bool done() const { return pos_ >= size_; }

 private:
  const std::uint8_t* data_;
  std::size_t size_, pos_ = 0;
};

/// A value code: 0x7f NaN, 0x7e +inf, otherwise the signed byte / 8.
double decode_value(std::uint8_t b) {
  if (b == 0x7f) return std::nan("");
  if (b == 0x7e) return HUGE_VAL;
  return static_cast<std::int8_t>(b) / 8.0;
}

// ------------------------------------------------------------ Matrix Market

/// The size line's numbers (after the banner and comments), for the
/// resource cap of check_matrix_market; false when there is none.
bool size_line(std::string_view text, std::vector<long long>& numbers) {
  bool banner = false;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    const std::size_t b = line.find_first_not_of(" \t\r\v\f");
    if (b == std::string_view::npos) continue;
    line.remove_prefix(b);
    if (!banner) {
      banner = true;
      continue;
    }
    if (line.front() == '%') continue;
    std::istringstream in{std::string(line)};
    std::string tok;
    while (in >> tok) numbers.push_back(std::strtoll(tok.c_str(), nullptr, 10));
    return true;
  }
  return false;
}

bool too_large(std::string_view text) {
  std::vector<long long> v;
  if (!size_line(text, v)) return false;
  constexpr long long kMax = 1 << 20;
  for (long long x : v)
    if (x > kMax) return true;
  // Both in [-2^63, 2^20]: a negative size is refused by the reader anyway.
  return v.size() >= 2 && v[0] > 0 && v[1] > 0 && v[0] * v[1] > (1LL << 24);
}

std::string check_sparse_read(const std::string& text) {
  CscMatrix A;
  MatrixMarketInfo info;
  std::istringstream in(text);
  const Status st = read_matrix_market(in, "fuzz", A, &info);
  if (!st.ok()) {
    if (st.message.rfind("fuzz", 0) != 0) return fail("message does not start with the source", st);
    return "";
  }
  if (Status v = check_lower_csc(A); !v.ok()) return fail("reader returned a malformed CSC", v);
  if (A.n != info.nrows || A.n != info.ncols) return "order differs from the size line";
  if (!all_finite(A.values)) return "reader accepted a matrix with a non-finite value";
  std::ostringstream out;
  if (Status w = write_matrix_market(out, A); !w.ok()) return fail("writing it back failed", w);
  CscMatrix B;
  std::istringstream back(out.str());
  if (Status r = read_matrix_market(back, "round trip", B); !r.ok())
    return fail("reading back what was written failed", r);
  if (B.n != A.n || B.colptr != A.colptr || B.rowind != A.rowind || B.values != A.values)
    return "write / read round trip is not exact";
  if (A.n <= 200 && A.nnz() <= 4000) {
    AnalysisOptions ao;
    ao.ordering = OrderingMethod::natural;
    return check_pipeline(A, Status::success(), ao, GraphOptions{}, 1, false);
  }
  return "";
}

std::string check_dense_read(const std::string& text) {
  idx_t m = -1, n = -1;
  std::vector<double> values;
  std::istringstream in(text);
  const Status st = read_dense_matrix(in, "fuzz", m, n, values);
  if (!st.ok()) return "";
  if (m < 0 || n < 0 || static_cast<std::size_t>(m * n) != values.size())
    return "dense reader: rows*cols differs from the number of values";
  if (!all_finite(values)) return "dense reader accepted a non-finite value";
  return "";
}

}  // namespace

std::string check_matrix_market(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  if (too_large(text)) return "";
  if (std::string e = check_sparse_read(text); !e.empty()) return e;
  return check_dense_read(text);
}

// Layout of the bytes:
//   byte 0, flags: bits 0-1 ordering (natural, scotch-nd, scotch-amd, scotch);
//     bit 2 no amalgamation; bit 3 raw CSC arrays (else triplets); bit 4
//     make the matrix strictly diagonally dominant (triplets only: it must
//     then factorise); bits 5-7 seed of a second run in a random task order.
//   byte 1, task graph: bit 0 no fused subtrees; bit 1 tiling with
//     tile_threshold = bits 2-4 + 1 and tile_size = bits 5-7 + 1 (else none).
//   byte 2: n = byte % 24.
//   triplets: (row % n, column % n, value code) for each 3 bytes left;
//   raw: n column lengths (byte < 0xf0: byte % 4, else -(byte & 15), which
//     makes colptr decrease), then one row byte (row = byte % (n + 1), so n is
//     out of range) and one value code per entry.
//   Value codes: 0x7f NaN, 0x7e +inf, otherwise the signed byte / 8.
std::string check_csc_solve(const std::uint8_t* data, std::size_t size) {
  ByteReader in(data, size);
  const std::uint8_t flags = in.next(), graph = in.next();
  const idx_t n = in.next() % 24;
  AnalysisOptions ao;
  constexpr OrderingMethod kOrder[] = {OrderingMethod::natural, OrderingMethod::scotch_nd,
                                       OrderingMethod::scotch_amd, OrderingMethod::scotch};
  ao.ordering = kOrder[flags & 3];
  ao.amalgamate = !(flags & 4);
  const bool raw = flags & 8, dominant = (flags & 16) && !raw;
  const std::uint64_t seed = flags >> 5;
  GraphOptions go;
  go.workers = 2;
  go.fuse_subtrees = !(graph & 1);
  go.tile = graph & 2;
  go.tile_threshold = ((graph >> 2) & 7) + 1;
  go.tile_size = (graph >> 5) + 1;

  CscMatrix A;
  Status valid;
  if (raw) {
    A.n = n;
    A.colptr.assign(n + 1, 0);
    for (idx_t j = 0; j < n; ++j) {
      const std::uint8_t b = in.next();
      A.colptr[j + 1] = A.colptr[j] + (b < 0xf0 ? b % 4 : -(b & 15));
    }
    const idx_t nnz = std::max<idx_t>(A.colptr[n], 0);
    for (idx_t p = 0; p < nnz; ++p) {
      A.rowind.push_back(in.next() % (n + 1));
      A.values.push_back(decode_value(in.next()));
    }
    valid = check_lower_csc(A);
  } else {
    std::vector<idx_t> rows, cols;
    std::vector<double> vals;
    std::vector<double> rowsum(n, 0.0);
    while (n > 0 && !in.done()) {
      const idx_t i = in.next() % n, j = in.next() % n;
      const double v = decode_value(in.next());
      rows.push_back(i), cols.push_back(j), vals.push_back(v);
      rowsum[i] += std::fabs(v);
      if (i != j) rowsum[j] += std::fabs(v);
    }
    if (dominant)
      for (idx_t i = 0; i < n; ++i)
        rows.push_back(i), cols.push_back(i), vals.push_back(rowsum[i] + 1);
    const Status st = lower_csc_from_triplets(n, rows, cols, vals, A);
    if (!st.ok()) return fail("lower_csc_from_triplets refused indices in range", st);
    valid = check_lower_csc(A);
    if (!valid.ok()) return fail("lower_csc_from_triplets built a malformed CSC", valid);
  }
  return check_pipeline(A, valid, ao, go, seed, dominant);
}

}  // namespace starfront::fuzz
