// Matrix Market reading and writing: sparse symmetric matrices into a lower
// CscMatrix, dense right-hand sides into column-major arrays.
//
// Accepted layout (all readers): optional blank lines and leading blanks before
// the banner `%%MatrixMarket matrix <format> <field> <symmetry>` (keywords in any
// case); then comment lines (`%`, possibly after blanks) and blank lines
// anywhere; tokens separated by spaces or tabs; LF or CRLF line ends; trailing
// blanks. Every error message starts with `<source>:<line>:` (line 1-based) and
// says what was expected.
//
// References: R. F. Boisvert, R. Pozo, K. A. Remington, "The Matrix Market
// Exchange Formats: Initial Design", NISTIR 5935, 1996.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include "sparse/csc.hpp"
#include "sparse/types.hpp"

namespace starfront {

/// What the banner and size line of a Matrix Market file announced.
/// field and symmetry are lower-cased ("real", "symmetric", ...); nentries is
/// the entry count of the size line (nrows*ncols for `array` files).
struct MatrixMarketInfo {
  std::string field, symmetry;
  idx_t nrows = 0, ncols = 0, nentries = 0;
};

/// Reads a sparse symmetric matrix from a `coordinate` file (field real,
/// integer or pattern, pattern values being 1.0; symmetry symmetric or general)
/// into `out` (lower triangle, 0-based, rows sorted; explicit zeros kept).
/// symmetric: entries may lie in either triangle; an entry and its mirror
/// (i,j)/(j,i) are summed into the lower position, as are duplicates.
/// general: duplicates are summed, then the matrix must be exactly symmetric
/// (a(i,j) == a(j,i), a missing counterpart counts as a mismatch).
/// Errors: io_error (cannot open/read), parse_error (banner, size line, index
/// out of 1..n, entry count differing from the size line, value that does not
/// parse or is not finite, summed duplicates that overflow (the message names
/// the position), trailing text), unsupported (array, complex,
/// hermitian, skew-symmetric, non-square), not_symmetric (message gives one
/// offending pair, 1-based, with both values), out_of_memory (also an order
/// whose column pointers cannot be addressed: names the size line). `out` is left
/// untouched on error. `info`, when non-null, is filled once the size line has
/// been read (so also on later errors).
Status read_matrix_market(const std::string& path, CscMatrix& out,
                          MatrixMarketInfo* info = nullptr);

/// Same as above, reading the whole stream; `source_name` stands for the file
/// name in messages.
Status read_matrix_market(std::istream& in, const std::string& source_name, CscMatrix& out,
                          MatrixMarketInfo* info = nullptr);

/// Reads a dense matrix (typically right-hand sides) into `colmajor`
/// (nrows*ncols values, column-major, leading dimension nrows).
/// Accepts `array real|integer general` (values in column-major order, one per
/// line; a size line holding only `m` is read as m x 1) and `coordinate
/// real|integer general` (1-based entries, duplicates summed, the rest zero).
/// With expected_rows >= 0, a size line declaring another row count is
/// invalid_argument naming that line, before anything is allocated (a
/// right-hand side for a matrix of order n: expected_rows = n).
/// Errors as for read_matrix_market; outputs untouched on error.
Status read_dense_matrix(const std::string& path, idx_t& nrows, idx_t& ncols,
                         std::vector<double>& colmajor, idx_t expected_rows = -1);

/// Same as above, reading the whole stream; `source_name` names it in messages.
Status read_dense_matrix(std::istream& in, const std::string& source_name, idx_t& nrows,
                         idx_t& ncols, std::vector<double>& colmajor, idx_t expected_rows = -1);

/// Writes A as `coordinate real symmetric`: the lower triangle, 1-based,
/// column by column, values with 17 significant digits (exact round trip).
/// path "-" writes to stdout. Errors: invalid_argument (A breaks a CscMatrix
/// invariant), io_error naming the path.
Status write_matrix_market(const std::string& path, const CscMatrix& A);

/// Same as above onto a stream; `dest_name` names it in messages.
Status write_matrix_market(std::ostream& os, const CscMatrix& A,
                           const std::string& dest_name = "<stream>");

/// Writes an nrows x ncols column-major array (leading dimension nrows) as
/// `array real general` with 17 significant digits. path "-" writes to stdout.
/// Errors: invalid_argument (negative size, null data for a non-empty
/// matrix), io_error naming the path.
Status write_dense_matrix(const std::string& path, idx_t nrows, idx_t ncols,
                          const double* colmajor);

/// Same as above onto a stream; `dest_name` names it in messages.
Status write_dense_matrix(std::ostream& os, idx_t nrows, idx_t ncols, const double* colmajor,
                          const std::string& dest_name = "<stream>");

}  // namespace starfront
