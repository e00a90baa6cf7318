// Basic types shared by every stage of starfront: the index type and the
// status returned by every operation that can fail.
#pragma once

#include <cstdint>
#include <string>
#include <utility>

namespace starfront {

/// Index and count type used throughout (row/column indices, nnz, pointers).
/// 64-bit so that nnz(L) and pointer arrays never overflow.
using idx_t = std::int64_t;

/// What went wrong. `ok` means success; every other value comes with a message.
enum class StatusCode {
  ok = 0,
  invalid_argument,       ///< caller passed an inconsistent argument
  io_error,               ///< file could not be opened / read / written
  parse_error,            ///< malformed Matrix Market content
  unsupported,            ///< valid input of a kind starfront does not handle
  not_symmetric,          ///< a `general` matrix that is not numerically symmetric
  not_positive_definite,  ///< Cholesky met a pivot <= tolerance or non-finite
  ordering_error,         ///< the ordering library failed or returned a non-permutation
  runtime_error,          ///< StarPU (or another runtime component) failed
  out_of_memory,          ///< an allocation failed
  // 10 is the C API's STARFRONT_INDEX_OVERFLOW (no internal counterpart).
  singular = 11,          ///< LDLᵀ met a zero pivot (column and inertia reported; no solve)
};

/// Short, stable name of a status code ("ok", "parse_error", ...), used in JSON.
const char* status_name(StatusCode code);

/// Result of an operation: a code, a human message, and for numerical failures
/// the failing column (0-based, in the user's original numbering) and pivot.
struct Status {
  StatusCode code = StatusCode::ok;
  std::string message;
  idx_t column = -1;   ///< failing column (0-based, original numbering), or -1
  double pivot = 0.0;  ///< offending pivot value when column >= 0

  bool ok() const { return code == StatusCode::ok; }
  static Status success() { return {}; }
  static Status error(StatusCode c, std::string msg) {
    Status s;
    s.code = c;
    s.message = std::move(msg);
    return s;
  }
};

}  // namespace starfront
