// Compressed sparse column storage of a symmetric matrix (lower triangle).
#pragma once

#include <cstdint>
#include <vector>

#include "sparse/types.hpp"

namespace starfront {

/// A symmetric n-by-n matrix stored by its lower triangle in CSC form, 0-based.
/// Invariants (checked by `check_lower_csc`): colptr has n+1 non-decreasing
/// entries starting at 0; within column j the row indices are strictly
/// increasing and lie in [j, n); values has colptr[n] entries. Explicit zeros
/// are allowed (they are part of the pattern). The diagonal need not be present.
struct CscMatrix {
  idx_t n = 0;
  std::vector<idx_t> colptr{0};  ///< size n+1
  std::vector<idx_t> rowind;     ///< size nnz, sorted within each column
  std::vector<double> values;    ///< size nnz

  idx_t nnz() const { return colptr.empty() ? 0 : colptr.back(); }
};

/// Checks every invariant of CscMatrix; on failure the message names the
/// column and position at fault.
Status check_lower_csc(const CscMatrix& A);

/// Bytes of the per-column arrays lower_csc_from_triplets allocates and
/// fills for order n (three of n + 1 indices: the counts, the insertion
/// points and the column pointers), the entries' arrays not included.
inline double lower_csc_column_bytes(idx_t n) { return 3.0 * (static_cast<double>(n) + 1) * sizeof(idx_t); }

/// Builds a lower CSC from 0-based triplets (i, j, v) of a symmetric matrix.
/// Each triplet may lie in either triangle (it is mirrored into the lower one);
/// duplicates are summed. Indices must lie in [0, n) (checked: invalid_argument).
/// An order whose n + 1 column pointers cannot be addressed, or whose
/// column arrays (lower_csc_column_bytes) exceed the memory this process may
/// use (usable_memory_bytes), gives out_of_memory before any allocation
/// (std::bad_alloc of the arrays is the caller's to catch).
Status lower_csc_from_triplets(idx_t n, const std::vector<idx_t>& rows,
                               const std::vector<idx_t>& cols,
                               const std::vector<double>& vals, CscMatrix& out);

/// y = A*x for the symmetric matrix whose lower triangle is A (x, y of length n).
void symmetric_matvec(const CscMatrix& A, const double* x, double* y);

/// ‖A‖∞ (= ‖A‖₁) of the symmetric matrix whose lower triangle is A. When
/// abs_sum is not null it receives Σ|a_ij| over the stored entries (the same
/// pass): not finite when a value is NaN or infinite (or the sum overflows).
double symmetric_norm_inf(const CscMatrix& A, double* abs_sum = nullptr);

/// The same with the columns split into `threads` contiguous ranges of about
/// equal entry counts, each summed by its own thread (std::thread; the
/// calling thread takes the first range) into its own row sums, then added
/// range by range: the same figures up to rounding (an order fixed by
/// `threads`, so the same result at every call), about `threads` times
/// faster on a pass that is memory latency bound (the refactorisation's
/// ‖A‖∞ pass, which runs on the host while the fused GPU kernel runs).
/// threads <= 1, or a thread that cannot be started: the one-thread pass.
/// Extra memory: (threads − 1) · n doubles.
double symmetric_norm_inf(const CscMatrix& A, double* abs_sum, int threads);

/// The row-wise index of a lower CSC matrix A for symmetric_norm_inf's row
/// sums without scattered writes (one thread a row on a GPU:
/// codelets/cuda/norm_rows.cuh): row i's entries left of the diagonal,
/// (i, j) with j < i, as positions p in A.values (0-based), in increasing j,
/// at pos[row_ptr[i] .. row_ptr[i+1]); col_ptr is A.colptr. `id` is unique
/// to each index built in the process (a device copy keyed by it is
/// refreshed when the index is rebuilt at the same address). Memory:
/// (2n + 2 + nnz − entries on the diagonal) idx_t.
struct NormRowsIndex {
  idx_t n = 0;
  std::vector<idx_t> col_ptr, row_ptr, pos;
  std::uint64_t id = 0;
};

/// Builds the index of A (its pattern only). O(n + nnz).
NormRowsIndex symmetric_norm_rows_index(const CscMatrix& A);

/// ‖A‖∞ by rows over the index X of A's pattern: row i's sum is its entries
/// left of the diagonal in increasing column order, then plus the sum of
/// column i's entries on and below the diagonal (in their order): the
/// operations of symmetric_norm_inf(A) in the same order, so a finite result
/// is that function's value bitwise. The largest row sum in IEEE bit order:
/// NaN when a row sum is NaN, else +inf when one is infinite (a non-finite
/// value, or an overflow). The reference of the GPU kernel.
double symmetric_norm_inf_by_rows(const NormRowsIndex& X, const double* values);

/// C = P A Pᵀ restricted to its lower triangle, with perm[k] = the original
/// index placed at position k (so C(k,l) = A(perm[k], perm[l])).
/// perm must be a permutation of 0..n-1 (not checked here: see
/// analysis/permutation.hpp). Rows are sorted in each column of C.
CscMatrix permute_symmetric(const CscMatrix& A, const std::vector<idx_t>& perm);

}  // namespace starfront
