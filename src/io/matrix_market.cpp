// Matrix Market reader and writer. The reader loads the whole text into memory
// and scans it line by line with std::from_chars; every refusal names the
// source, the 1-based line and what was expected there.
#include "io/matrix_market.hpp"
#include "sparse/memory.hpp"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <iostream>
#include <limits>
#include <new>
#include <sstream>
#include <stdexcept>
#include <string_view>
#include <utility>

namespace starfront {
namespace {

// ------------------------------------------------------------------ scanning

bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }

std::string_view trim(std::string_view s) {
  std::size_t b = 0, e = s.size();
  while (b < e && is_blank(s[b])) ++b;
  while (e > b && is_blank(s[e - 1])) --e;
  return s.substr(b, e - b);
}

std::string lower(std::string_view s) {
  std::string r(s);
  for (char& c : r)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return r;
}

/// Text quoted for a message, cut to 60 characters.
std::string excerpt(std::string_view s) {
  // Built by appending: "'" + std::string(...) trips GCC 12's -Wrestrict (PR 105329).
  std::string r(1, '\'');
  r.append(s.substr(0, 60));
  r.append(s.size() > 60 ? "...'" : "'");
  return r;
}

/// Walks the lines of an in-memory text and counts them (1-based).
class LineCursor {
 public:
  explicit LineCursor(std::string_view text) : text_(text) {}

  /// Next physical line without its '\n'; false at the end of the text.
  bool next(std::string_view& line) {
    if (pos_ >= text_.size()) return false;
    const char* start = text_.data() + pos_;
    const std::size_t left = text_.size() - pos_;
    const void* nl = std::memchr(start, '\n', left);
    const std::size_t len = nl ? static_cast<std::size_t>(static_cast<const char*>(nl) - start) : left;
    pos_ += len + (nl ? 1 : 0);
    ++line_;
    line = std::string_view(start, len);
    return true;
  }

  /// Next line that is neither blank nor a '%' comment, trimmed (CR included).
  bool next_content(std::string_view& line) {
    while (next(line)) {
      line = trim(line);
      if (!line.empty() && line.front() != '%') return true;
    }
    return false;
  }

  /// Number of the last line returned, at least 1 (for messages at end of file).
  idx_t line() const { return std::max<idx_t>(line_, 1); }
  std::size_t bytes_left() const { return text_.size() - pos_; }

 private:
  std::string_view text_;
  std::size_t pos_ = 0;
  idx_t line_ = 0;
};

/// Splits one line into blank-separated tokens.
class Tokens {
 public:
  explicit Tokens(std::string_view line) : p_(line.data()), end_(line.data() + line.size()) {}

  /// Next token; empty at the end of the line.
  std::string_view next() {
    skip_blanks();
    const char* b = p_;
    while (p_ < end_ && !is_blank(*p_)) ++p_;
    return {b, static_cast<std::size_t>(p_ - b)};
  }
  /// Rest of the line after the tokens read so far (empty when none).
  std::string_view rest() {
    skip_blanks();
    return {p_, static_cast<std::size_t>(end_ - p_)};
  }

 private:
  void skip_blanks() {
    while (p_ < end_ && is_blank(*p_)) ++p_;
  }
  const char* p_;
  const char* end_;
};

enum class Num { ok, bad, out_of_range, non_finite };

/// Drops one leading '+' (from_chars refuses it); false for "+-..." or "++...".
bool strip_plus(std::string_view& tok) {
  if (tok.empty() || tok.front() != '+') return true;
  tok.remove_prefix(1);
  return tok.empty() || (tok.front() != '+' && tok.front() != '-');
}

Num parse_integer(std::string_view tok, idx_t& v) {
  if (!strip_plus(tok) || tok.empty()) return Num::bad;
  const char* end = tok.data() + tok.size();
  const auto [ptr, ec] = std::from_chars(tok.data(), end, v);
  if (ec == std::errc::result_out_of_range && ptr == end) return Num::out_of_range;
  return (ec == std::errc() && ptr == end) ? Num::ok : Num::bad;
}

Num parse_real(std::string_view tok, double& v) {
  if (!strip_plus(tok) || tok.empty()) return Num::bad;
  const char* end = tok.data() + tok.size();
  const auto [ptr, ec] = std::from_chars(tok.data(), end, v);
  if (ec == std::errc::result_out_of_range && ptr == end) {
    // from_chars leaves v unset; strtod tells overflow (inf) from underflow (0, subnormal).
    v = std::strtod(std::string(tok).c_str(), nullptr);
    return std::isfinite(v) ? Num::ok : Num::out_of_range;
  }
  if (ec != std::errc() || ptr != end) return Num::bad;
  return std::isfinite(v) ? Num::ok : Num::non_finite;
}

/// Shortest exact decimal text of a double, for messages.
std::string number_text(double v) {
  char buf[32];
  return std::string(buf, std::to_chars(buf, buf + sizeof buf, v).ptr);
}

Status fail_at(StatusCode code, const std::string& src, idx_t line, const std::string& what) {
  return Status::error(code, src + ":" + std::to_string(line) + ": " + what);
}

// ---------------------------------------------------------------- header

enum class Format { coordinate, array };
enum class Field { real, integer, pattern, complex };
enum class Symmetry { general, symmetric, skew_symmetric, hermitian };

/// Banner and size line of a file, and where they were.
struct Header {
  Format format = Format::coordinate;
  Field field = Field::real;
  Symmetry symmetry = Symmetry::general;
  std::string format_name, field_name, symmetry_name;
  idx_t nrows = 0, ncols = 0, nentries = 0;
  idx_t banner_line = 0, size_line = 0;
};

constexpr const char* kBannerForm = "'%%MatrixMarket matrix <format> <field> <symmetry>'";

/// Maps a lower-case keyword to its enum value; false when unknown.
template <class E>
bool lookup(const std::string& word, std::initializer_list<std::pair<const char*, E>> table,
            E& out) {
  for (const auto& [name, value] : table)
    if (word == name) {
      out = value;
      return true;
    }
  return false;
}

Status bad_banner(const std::string& src, idx_t line, const std::string& what) {
  return fail_at(StatusCode::parse_error, src, line, "bad banner: " + what);
}

/// Reads the first non-blank line as the banner and decodes its keywords.
Status read_banner(LineCursor& cur, const std::string& src, Header& h) {
  std::string_view line;
  do {
    if (!cur.next(line))
      return bad_banner(src, cur.line(), std::string("empty file, expected ") + kBannerForm);
    line = trim(line);
  } while (line.empty());
  h.banner_line = cur.line();
  Tokens t(line);
  if (lower(t.next()) != "%%matrixmarket")
    return bad_banner(src, h.banner_line,
                      std::string("expected ") + kBannerForm + ", found " + excerpt(line));
  const std::string object = lower(t.next());
  h.format_name = lower(t.next());
  h.field_name = lower(t.next());
  h.symmetry_name = lower(t.next());
  if (object != "matrix")
    return bad_banner(src, h.banner_line, "expected object 'matrix', found " + excerpt(object));
  if (!lookup(h.format_name, {{"coordinate", Format::coordinate}, {"array", Format::array}},
              h.format))
    return bad_banner(src, h.banner_line,
                      "expected format 'coordinate' or 'array', found " + excerpt(h.format_name));
  if (!lookup(h.field_name,
              {{"real", Field::real}, {"integer", Field::integer}, {"pattern", Field::pattern},
               {"complex", Field::complex}},
              h.field))
    return bad_banner(src, h.banner_line,
                      "expected field 'real', 'integer', 'pattern' or 'complex', found " +
                          excerpt(h.field_name));
  if (!lookup(h.symmetry_name,
              {{"general", Symmetry::general}, {"symmetric", Symmetry::symmetric},
               {"skew-symmetric", Symmetry::skew_symmetric}, {"hermitian", Symmetry::hermitian}},
              h.symmetry))
    return bad_banner(src, h.banner_line,
                      "expected symmetry 'general', 'symmetric', 'skew-symmetric' or "
                      "'hermitian', found " + excerpt(h.symmetry_name));
  if (!t.rest().empty())
    return bad_banner(src, h.banner_line, "unexpected text after the symmetry: " + excerpt(t.rest()));
  return Status::success();
}

Status bad_size_line(const std::string& src, idx_t line, const Header& h, std::string_view text) {
  const char* form = h.format == Format::coordinate
                         ? "'rows columns entries' (three non-negative integers)"
                         : "'rows columns' (two non-negative integers)";
  return fail_at(StatusCode::parse_error, src, line,
                 std::string("bad size line: expected ") + form + ", found " + excerpt(text));
}

/// Reads the size line: `m n nnz` (coordinate) or `m n` (array; a lone `m`
/// is taken as m x 1). Sets nentries = m*n for arrays, refusing overflow.
Status read_size_line(LineCursor& cur, const std::string& src, Header& h) {
  std::string_view line;
  if (!cur.next_content(line)) return bad_size_line(src, cur.line(), h, "end of file");
  h.size_line = cur.line();
  const int wanted = h.format == Format::coordinate ? 3 : 2;
  idx_t v[3] = {0, 0, 0};
  int count = 0;
  Tokens t(line);
  for (std::string_view tok = t.next(); !tok.empty(); tok = t.next()) {
    if (count == wanted || parse_integer(tok, v[count]) != Num::ok || v[count] < 0)
      return bad_size_line(src, h.size_line, h, line);
    ++count;
  }
  const bool lone_rows = h.format == Format::array && count == 1;
  if (count != wanted && !lone_rows) return bad_size_line(src, h.size_line, h, line);
  h.nrows = v[0];
  h.ncols = lone_rows ? 1 : v[1];
  h.nentries = v[2];
  if (h.format == Format::array) {
    if (h.ncols > 0 && h.nrows > std::numeric_limits<idx_t>::max() / h.ncols)
      return fail_at(StatusCode::parse_error, src, h.size_line,
                     "bad size line: rows*columns overflows a 64-bit count: " + excerpt(line));
    h.nentries = h.nrows * h.ncols;
  }
  return Status::success();
}

void fill_info(const Header& h, MatrixMarketInfo* info) {
  if (!info) return;
  info->field = h.field_name;
  info->symmetry = h.symmetry_name;
  info->nrows = h.nrows;
  info->ncols = h.ncols;
  info->nentries = h.nentries;
}

// ---------------------------------------------------------------- data lines

/// Reads exactly h.nentries data lines, handing each to parse(line, lineno);
/// refuses a file with fewer or more of them (counting all of them).
template <class ParseLine>
Status read_data_lines(LineCursor& cur, const std::string& src, const Header& h,
                       ParseLine&& parse) {
  auto mismatch = [&](idx_t line, idx_t found, const char* where) {
    return fail_at(StatusCode::parse_error, src, line,
                   "entry count mismatch: expected " + std::to_string(h.nentries) +
                       " entries as announced by the size line (line " +
                       std::to_string(h.size_line) + "), found " + std::to_string(found) + " (" +
                       where + ")");
  };
  std::string_view line;
  for (idx_t k = 0; k < h.nentries; ++k) {
    if (!cur.next_content(line)) return mismatch(cur.line(), k, "end of file reached");
    Status s = parse(line, cur.line());
    if (!s.ok()) return s;
  }
  if (!cur.next_content(line)) return Status::success();
  const idx_t first_extra = cur.line();
  idx_t found = h.nentries + 1;
  while (cur.next_content(line)) ++found;
  return mismatch(first_extra, found, "first extra entry on this line");
}

/// Decodes a value token of the header's field ("" = missing) into v.
Status parse_value(std::string_view tok, const Header& h, const std::string& src, idx_t lineno,
                   double& v) {
  if (tok.empty())
    return fail_at(StatusCode::parse_error, src, lineno, "expected a value after the indices");
  Num r;
  if (h.field == Field::integer) {
    idx_t iv = 0;
    r = parse_integer(tok, iv);
    v = static_cast<double>(iv);
  } else {
    r = parse_real(tok, v);
  }
  const std::string what = "value " + excerpt(tok);
  switch (r) {
    case Num::ok: return Status::success();
    case Num::out_of_range:
      return fail_at(StatusCode::parse_error, src, lineno, what + " overflows (out of range)");
    case Num::non_finite:
      return fail_at(StatusCode::parse_error, src, lineno, what + " is not finite (nan/inf are refused)");
    case Num::bad: break;
  }
  return fail_at(StatusCode::parse_error, src, lineno,
                 std::string("expected ") + (h.field == Field::integer ? "an integer" : "a real") +
                     " value, found " + excerpt(tok) + " (does not parse)");
}

/// Decodes a 1-based index token, checks it lies in 1..limit, returns it 0-based.
Status parse_index(std::string_view tok, idx_t limit, const char* which, const std::string& src,
                   idx_t lineno, idx_t& out) {
  if (tok.empty())
    return fail_at(StatusCode::parse_error, src, lineno,
                   std::string("expected a ") + which + " index, found end of line");
  idx_t v = 0;
  const Num r = parse_integer(tok, v);
  if (r == Num::bad)
    return fail_at(StatusCode::parse_error, src, lineno,
                   std::string("expected an integer ") + which + " index, found " + excerpt(tok));
  if (r == Num::out_of_range || v < 1 || v > limit)
    return fail_at(StatusCode::parse_error, src, lineno,
                   std::string("index out of range: ") + which + " index " + std::string(tok) +
                       " is not in 1.." + std::to_string(limit));
  out = v - 1;
  return Status::success();
}

Status refuse_trailing(Tokens& t, const std::string& src, idx_t lineno, const char* form) {
  const std::string_view rest = t.rest();
  if (rest.empty()) return Status::success();
  return fail_at(StatusCode::parse_error, src, lineno,
                 "unexpected text " + excerpt(rest) + " after the entry (expected " + form + ")");
}

/// Symmetric matrix as 0-based triplets, as read (either triangle).
struct Triplets {
  std::vector<idx_t> rows, cols;
  std::vector<double> vals;
  void reserve(std::size_t m) {
    rows.reserve(m);
    cols.reserve(m);
    vals.reserve(m);
  }
  void push(idx_t i, idx_t j, double v) {
    rows.push_back(i);
    cols.push_back(j);
    vals.push_back(v);
  }
};

/// Reads the `i j [value]` lines of a coordinate file into 0-based triplets.
Status read_coordinate(LineCursor& cur, const std::string& src, const Header& h, Triplets& t) {
  // Each entry line takes at least 4 bytes ("1 1\n"): never trust the size line alone.
  t.reserve(static_cast<std::size_t>(
      std::min<idx_t>(h.nentries, static_cast<idx_t>(cur.bytes_left() / 4 + 1))));
  const char* form = h.field == Field::pattern ? "'row column'" : "'row column value'";
  return read_data_lines(cur, src, h, [&](std::string_view line, idx_t lineno) {
    Tokens tok(line);
    idx_t i = 0, j = 0;
    double v = 1.0;
    Status s = parse_index(tok.next(), h.nrows, "row", src, lineno, i);
    if (s.ok()) s = parse_index(tok.next(), h.ncols, "column", src, lineno, j);
    if (s.ok() && h.field != Field::pattern) s = parse_value(tok.next(), h, src, lineno, v);
    if (s.ok()) s = refuse_trailing(tok, src, lineno, form);
    if (s.ok()) t.push(i, j, v);
    return s;
  });
}

/// Reads the one-value lines of an array file, in file (column-major) order.
Status read_array(LineCursor& cur, const std::string& src, const Header& h,
                  std::vector<double>& values) {
  values.reserve(static_cast<std::size_t>(
      std::min<idx_t>(h.nentries, static_cast<idx_t>(cur.bytes_left() / 2 + 1))));
  return read_data_lines(cur, src, h, [&](std::string_view line, idx_t lineno) {
    Tokens tok(line);
    double v = 0.0;
    Status s = parse_value(tok.next(), h, src, lineno, v);
    if (s.ok()) s = refuse_trailing(tok, src, lineno, "one value per line");
    if (s.ok()) values.push_back(v);
    return s;
  });
}

// ---------------------------------------------------------------- assembly

Status not_symmetric(const std::string& src, idx_t i, idx_t j, const double* aij,
                     const double* aji) {
  const std::string I = std::to_string(i + 1), J = std::to_string(j + 1);
  const std::string lhs = "a(" + I + "," + J + ")", rhs = "a(" + J + "," + I + ")";
  const std::string a = aij ? lhs + " = " + number_text(*aij) : lhs + " is missing";
  const std::string b = aji ? rhs + " = " + number_text(*aji) : rhs + " is missing";
  return Status::error(StatusCode::not_symmetric,
                       src + ": matrix is not symmetric (a 'general' file, or a 'symmetric' file listing both triangles): " + a + " but " + b +
                           " (1-based indices, duplicates summed)");
}

/// Checks that the strictly lower part of L (entries given below the diagonal)
/// equals U (entries given above it, mirrored): same pattern, same values.
Status check_mirror(const std::string& src, const CscMatrix& L, const CscMatrix& U) {
  for (idx_t j = 0; j < L.n; ++j) {
    idx_t p = L.colptr[j], q = U.colptr[j];
    const idx_t pe = L.colptr[j + 1], qe = U.colptr[j + 1];
    if (p < pe && L.rowind[p] == j) ++p;  // the diagonal has no mirror
    for (; p < pe || q < qe; ++p, ++q) {
      const idx_t li = p < pe ? L.rowind[p] : L.n, ui = q < qe ? U.rowind[q] : U.n;
      if (li < ui) return not_symmetric(src, li, j, &L.values[p], nullptr);
      if (ui < li) return not_symmetric(src, ui, j, nullptr, &U.values[q]);
      if (L.values[p] != U.values[q])
        return not_symmetric(src, li, j, &L.values[p], &U.values[q]);
    }
  }
  return Status::success();
}

/// Assembles a `general` file: sums duplicates, requires exact symmetry and
/// keeps the lower triangle.
Status assemble_general(const std::string& src, idx_t n, Triplets&& t, CscMatrix& out) {
  Triplets lo, up;
  for (std::size_t k = 0; k < t.rows.size(); ++k)
    (t.rows[k] >= t.cols[k] ? lo : up).push(t.rows[k], t.cols[k], t.vals[k]);
  t = Triplets{};
  CscMatrix L, U;
  Status s = lower_csc_from_triplets(n, lo.rows, lo.cols, lo.vals, L);
  if (s.ok()) s = lower_csc_from_triplets(n, up.rows, up.cols, up.vals, U);
  if (s.ok()) s = check_mirror(src, L, U);
  if (s.ok()) out = std::move(L);
  return s;
}

/// Every value read is finite, but duplicates (or an entry and its mirror)
/// are summed, and a sum can overflow: refused like a non-finite value.
Status sum_not_finite(const std::string& src, idx_t i, idx_t j) {
  return Status::error(StatusCode::parse_error,
                       src + ": the entries at (" + std::to_string(i + 1) + ", " +
                           std::to_string(j + 1) +
                           ") sum to a value that is not finite (duplicates are summed; the sum "
                           "overflows)");
}

Status refuse_kind(const std::string& src, const Header& h, const std::string& what) {
  return fail_at(StatusCode::unsupported, src, h.banner_line, what);
}

/// Refuses the banner kinds read_matrix_market does not handle.
Status check_sparse_kind(const std::string& src, const Header& h) {
  if (h.format == Format::array)
    return refuse_kind(src, h,
                       "'array' (dense) format is not supported for a sparse matrix: expected "
                       "'coordinate' (read dense arrays with read_dense_matrix)");
  if (h.field == Field::complex)
    return refuse_kind(src, h, "'complex' field is not supported: expected real, integer or pattern");
  if (h.symmetry == Symmetry::skew_symmetric || h.symmetry == Symmetry::hermitian)
    return refuse_kind(src, h, "'" + h.symmetry_name +
                                   "' symmetry is not supported: expected symmetric or general");
  return Status::success();
}

/// Refuses the banner kinds read_dense_matrix does not handle.
Status check_dense_kind(const std::string& src, const Header& h) {
  if (h.field != Field::real && h.field != Field::integer)
    return refuse_kind(src, h, "'" + h.field_name +
                                   "' field is not supported for a dense matrix: expected real or integer");
  if (h.symmetry != Symmetry::general)
    return refuse_kind(src, h, "'" + h.symmetry_name +
                                   "' symmetry is not supported for a dense matrix: expected general");
  return Status::success();
}

Status read_sparse_text(std::string_view text, const std::string& src, CscMatrix& out,
                        MatrixMarketInfo* info) {
  LineCursor cur(text);
  Header h;
  Status s = read_banner(cur, src, h);
  if (s.ok()) s = check_sparse_kind(src, h);
  if (s.ok()) s = read_size_line(cur, src, h);
  if (!s.ok()) return s;
  fill_info(h, info);
  if (h.nrows != h.ncols)
    return fail_at(StatusCode::unsupported, src, h.size_line,
                   "matrix is not square (" + std::to_string(h.nrows) + " x " +
                       std::to_string(h.ncols) + "): expected a square symmetric matrix");
  if (static_cast<std::size_t>(h.nrows) >= std::vector<idx_t>().max_size())  // n + 1 column pointers
    return fail_at(StatusCode::out_of_memory, src, h.size_line,
                   "order " + std::to_string(h.nrows) + " exceeds the addressable memory");
  // The CSC's column arrays are written whole, so an order beyond the
  // memory would not fail an allocation (overcommit) but kill the process.
  // Both triangles (assemble_general) keep the lower CSC's n + 1 pointers
  // while the upper one's arrays are built: one array more.
  if (Status m = check_fits_in_memory(lower_csc_column_bytes(h.nrows) + (static_cast<double>(h.nrows) + 1) * sizeof(idx_t),
                                      "order " + std::to_string(h.nrows) + ": the CSC's column arrays");
      !m.ok())
    return fail_at(StatusCode::out_of_memory, src, h.size_line, m.message);
  Triplets t;
  s = read_coordinate(cur, src, h, t);
  if (!s.ok()) return s;
  // A symmetric file normally lists one triangle (mirrored here). One that
  // lists entries on both sides of the diagonal holds both triangles: each
  // off-diagonal entry must then come with its mirror (checked exactly, as
  // for `general`), and it is counted once, not twice.
  bool below = false, above = false;
  for (std::size_t k = 0; k < t.rows.size(); ++k) {
    below |= t.rows[k] > t.cols[k];
    above |= t.rows[k] < t.cols[k];
  }
  CscMatrix A;
  if (h.symmetry == Symmetry::general || (below && above))
    s = assemble_general(src, h.nrows, std::move(t), A);
  else
    s = lower_csc_from_triplets(h.nrows, t.rows, t.cols, t.vals, A);
  for (idx_t j = 0; s.ok() && j < A.n; ++j)
    for (idx_t p = A.colptr[j]; s.ok() && p < A.colptr[j + 1]; ++p)
      if (!std::isfinite(A.values[p])) s = sum_not_finite(src, A.rowind[p], j);
  if (s.ok()) out = std::move(A);
  return s;
}

/// Reads the entries of a `coordinate` file into a zero-filled column-major array.
Status read_coordinate_dense(LineCursor& cur, const std::string& src, const Header& h,
                             std::vector<double>& values) {
  if (h.ncols > 0 && h.nrows > std::numeric_limits<idx_t>::max() / h.ncols)
    return fail_at(StatusCode::parse_error, src, h.size_line,
                   "bad size line: rows*columns overflows a 64-bit count");
  // The zero-filled array is written whole: refuse one beyond the memory
  // before reading the entries.
  if (Status m = check_fits_in_memory(static_cast<double>(h.nrows) * static_cast<double>(h.ncols) * sizeof(double),
                                      std::to_string(h.nrows) + " x " + std::to_string(h.ncols) + " dense array");
      !m.ok())
    return fail_at(StatusCode::out_of_memory, src, h.size_line, m.message);
  Triplets t;
  Status s = read_coordinate(cur, src, h, t);
  if (!s.ok()) return s;
  values.assign(static_cast<std::size_t>(h.nrows * h.ncols), 0.0);
  for (std::size_t k = 0; k < t.rows.size(); ++k)
    values[static_cast<std::size_t>(t.rows[k] + t.cols[k] * h.nrows)] += t.vals[k];
  for (std::size_t k = 0; k < t.rows.size(); ++k)
    if (!std::isfinite(values[static_cast<std::size_t>(t.rows[k] + t.cols[k] * h.nrows)]))
      return sum_not_finite(src, t.rows[k], t.cols[k]);
  return Status::success();
}

Status read_dense_text(std::string_view text, const std::string& src, idx_t& nrows, idx_t& ncols,
                       std::vector<double>& colmajor, idx_t expected_rows) {
  LineCursor cur(text);
  Header h;
  Status s = read_banner(cur, src, h);
  if (s.ok()) s = check_dense_kind(src, h);
  if (s.ok()) s = read_size_line(cur, src, h);
  // A row count the caller cannot use is refused before the array is built
  // (a coordinate file's array is zero-filled whole).
  if (s.ok() && expected_rows >= 0 && h.nrows != expected_rows)
    return fail_at(StatusCode::invalid_argument, src, h.size_line,
                   std::to_string(h.nrows) + " rows, expected " + std::to_string(expected_rows));
  std::vector<double> values;
  if (s.ok())
    s = h.format == Format::array ? read_array(cur, src, h, values)
                                  : read_coordinate_dense(cur, src, h, values);
  if (!s.ok()) return s;
  nrows = h.nrows;
  ncols = h.ncols;
  colmajor = std::move(values);
  return Status::success();
}

// ---------------------------------------------------------------- files

Status read_stream(std::istream& in, const std::string& src, std::string& text) {
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) return Status::error(StatusCode::io_error, "error while reading " + src);
  text = std::move(ss).str();
  return Status::success();
}

/// Loads a whole file; pipes and character devices are read to their end.
Status read_file(const std::string& path, std::string& text) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    return Status::error(StatusCode::io_error, "cannot read '" + path + "': it is a directory");
  std::ifstream f(path, std::ios::binary);
  if (!f)
    return Status::error(StatusCode::io_error,
                         "cannot open '" + path + "' for reading: " + std::strerror(errno));
  f.seekg(0, std::ios::end);
  const std::streamoff size = f.tellg();
  if (size < 0) return read_stream(f, "'" + path + "'", text);  // not seekable
  f.seekg(0);
  text.resize(static_cast<std::size_t>(size));
  if (!f.read(text.data(), size))
    return Status::error(StatusCode::io_error, "error while reading '" + path + "'");
  return Status::success();
}

/// Runs body(), turning allocation failures into out_of_memory.
template <class Body>
Status guard_memory(const std::string& src, Body&& body) {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    return Status::error(StatusCode::out_of_memory, src + ": out of memory");
  } catch (const std::length_error&) {
    return Status::error(StatusCode::out_of_memory, src + ": size exceeds the addressable memory");
  }
}

/// Buffers formatted text and hands it to a stream in large blocks.
class TextWriter {
 public:
  explicit TextWriter(std::ostream& os) : os_(os) { buf_.reserve(kBlock + 256); }
  TextWriter& text(std::string_view s) {
    buf_.append(s);
    return *this;
  }
  TextWriter& integer(idx_t v) {
    char tmp[24];
    buf_.append(tmp, std::to_chars(tmp, tmp + sizeof tmp, v).ptr);
    return *this;
  }
  /// 17 significant digits: reading the text back gives the same double.
  TextWriter& real(double v) {
    char tmp[40];
    buf_.append(tmp, std::to_chars(tmp, tmp + sizeof tmp, v, std::chars_format::general, 17).ptr);
    return *this;
  }
  void end_line() {
    buf_ += '\n';
    if (buf_.size() >= kBlock) flush();
  }
  /// Writes out the buffer; false when the stream has failed (now or before).
  bool flush() {
    os_.write(buf_.data(), static_cast<std::streamsize>(buf_.size()));
    buf_.clear();
    return static_cast<bool>(os_.flush());
  }

 private:
  static constexpr std::size_t kBlock = 1 << 16;
  std::ostream& os_;
  std::string buf_;
};

/// Opens path ("-" = stdout), runs write(stream, name) and closes, checking each step.
template <class Write>
Status write_to_path(const std::string& path, Write&& write) {
  if (path == "-") return write(std::cout, std::string("<stdout>"));
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  if (!f)
    return Status::error(StatusCode::io_error,
                         "cannot open '" + path + "' for writing: " + std::strerror(errno));
  Status s = write(f, path);
  if (!s.ok()) return s;
  f.close();
  if (!f) return Status::error(StatusCode::io_error, "error while closing '" + path + "'");
  return Status::success();
}

Status write_failed(const std::string& dest) {
  return Status::error(StatusCode::io_error, "error while writing '" + dest + "'");
}

Status check_writable(const CscMatrix& A, const std::string& dest) {
  Status s = check_lower_csc(A);
  if (!s.ok()) return Status::error(s.code, dest + ": cannot write: " + s.message);
  return s;
}

Status check_dense_writable(idx_t nrows, idx_t ncols, const double* colmajor,
                            const std::string& dest) {
  if (nrows < 0 || ncols < 0)
    return Status::error(StatusCode::invalid_argument, dest + ": negative dense size");
  if (!colmajor && nrows > 0 && ncols > 0)
    return Status::error(StatusCode::invalid_argument, dest + ": null data for a non-empty matrix");
  return Status::success();
}

}  // namespace

// ------------------------------------------------------------------ public API

Status read_matrix_market(std::istream& in, const std::string& source_name, CscMatrix& out,
                          MatrixMarketInfo* info) {
  return guard_memory(source_name, [&] {
    std::string text;
    Status s = read_stream(in, source_name, text);
    return s.ok() ? read_sparse_text(text, source_name, out, info) : s;
  });
}

Status read_matrix_market(const std::string& path, CscMatrix& out, MatrixMarketInfo* info) {
  return guard_memory(path, [&] {
    std::string text;
    Status s = read_file(path, text);
    return s.ok() ? read_sparse_text(text, path, out, info) : s;
  });
}

Status read_dense_matrix(std::istream& in, const std::string& source_name, idx_t& nrows,
                         idx_t& ncols, std::vector<double>& colmajor, idx_t expected_rows) {
  return guard_memory(source_name, [&] {
    std::string text;
    Status s = read_stream(in, source_name, text);
    return s.ok() ? read_dense_text(text, source_name, nrows, ncols, colmajor, expected_rows) : s;
  });
}

Status read_dense_matrix(const std::string& path, idx_t& nrows, idx_t& ncols,
                         std::vector<double>& colmajor, idx_t expected_rows) {
  return guard_memory(path, [&] {
    std::string text;
    Status s = read_file(path, text);
    return s.ok() ? read_dense_text(text, path, nrows, ncols, colmajor, expected_rows) : s;
  });
}

Status write_matrix_market(std::ostream& os, const CscMatrix& A, const std::string& dest_name) {
  Status s = check_writable(A, dest_name);
  if (!s.ok()) return s;
  TextWriter w(os);
  w.text("%%MatrixMarket matrix coordinate real symmetric\n% written by starfront\n");
  w.integer(A.n).text(" ").integer(A.n).text(" ").integer(A.nnz()).end_line();
  for (idx_t j = 0; j < A.n; ++j)
    for (idx_t p = A.colptr[j]; p < A.colptr[j + 1]; ++p)
      w.integer(A.rowind[p] + 1).text(" ").integer(j + 1).text(" ").real(A.values[p]).end_line();
  return w.flush() ? Status::success() : write_failed(dest_name);
}

Status write_matrix_market(const std::string& path, const CscMatrix& A) {
  Status s = check_writable(A, path);  // before the file is created or truncated
  if (!s.ok()) return s;
  return write_to_path(path, [&](std::ostream& os, const std::string& name) {
    return write_matrix_market(os, A, name);
  });
}

Status write_dense_matrix(std::ostream& os, idx_t nrows, idx_t ncols, const double* colmajor,
                          const std::string& dest_name) {
  Status s = check_dense_writable(nrows, ncols, colmajor, dest_name);
  if (!s.ok()) return s;
  TextWriter w(os);
  w.text("%%MatrixMarket matrix array real general\n% written by starfront\n");
  w.integer(nrows).text(" ").integer(ncols).end_line();
  for (idx_t k = 0; k < nrows * ncols; ++k) w.real(colmajor[k]).end_line();
  return w.flush() ? Status::success() : write_failed(dest_name);
}

Status write_dense_matrix(const std::string& path, idx_t nrows, idx_t ncols,
                          const double* colmajor) {
  Status s = check_dense_writable(nrows, ncols, colmajor, path);  // before touching the file
  if (!s.ok()) return s;
  return write_to_path(path, [&](std::ostream& os, const std::string& name) {
    return write_dense_matrix(os, nrows, ncols, colmajor, name);
  });
}

}  // namespace starfront
