// Forward and backward substitution with the supernodal factor, and the
// backward error of a computed solution.
#pragma once

#include <functional>
#include <vector>

#include "solve/factor.hpp"

namespace starfront {

/// Overwrites B (n×nrhs, column-major, leading dimension ldb >= n, original
/// numbering) with the solution X of A X = B, where P A Pᵀ = L Lᵀ is the
/// factor F (or P A Pᵀ = L D Lᵀ for an LDLᵀ factor: ldlt_solve.hpp). Sequential: a forward pass over the fronts in postorder
/// (TRSM on L11, GEMM with L21), then a backward pass in reverse.
/// Preconditions (checked: invalid_argument): F was factorised successfully,
/// nrhs >= 0, ldb >= max(1, n), every entry of B finite (the message names
/// the first that is not). A solution that overflows (an entry not finite:
/// a matrix or right-hand side too badly scaled for double precision) is
/// refused with runtime_error naming the entry, never returned as a success.
/// B is left unchanged on every error.
Status solve_in_place(const NumericFactor& F, double* B, idx_t nrhs, idx_t ldb);

/// solve_in_place's checks, permutation and overflow test around another
/// substitution: core(X, nrhs) overwrites X (n×nrhs, leading dimension n,
/// final numbering) with (P A Pᵀ)⁻¹ X using F. Same errors as solve_in_place.
/// work: where the permuted copy X lives (grown as needed and reused; null:
/// a vector allocated for this call).
Status solve_permuted_with(const NumericFactor& F, double* B, idx_t nrhs, idx_t ldb,
                           const std::function<void(double* X, idx_t nrhs)>& core,
                           std::vector<double>* work = nullptr);

/// Normwise backward error of x for A x = b:
///   ‖A x − b‖∞ / (‖A‖∞ ‖x‖∞ + ‖b‖∞), 0 when the denominator is 0, +∞ when
/// x, b or A x has a non-finite entry (overflow must never look like success)
/// (A is the lower CSC of a symmetric matrix; x, b of length n).
double backward_error(const CscMatrix& A, const double* x, const double* b);

/// backward_error with ‖A‖∞ given (norm_a = symmetric_norm_inf(A), computed
/// once by callers that measure many vectors); when residual is not null it
/// receives b − A x (length n), the residual iterative refinement solves for.
double backward_error(const CscMatrix& A, double norm_a, const double* x, const double* b, double* residual);

/// backward_error of ncols columns at once (one pass over A for all of
/// them; the same values, column for column): be[c] for x_c = X + c·ldx and
/// b_c = B + c·ldb; R (n×ncols, leading dimension n) receives the residuals
/// b_c − A x_c.
void backward_errors(const CscMatrix& A, double norm_a, const double* X, idx_t ldx, const double* B, idx_t ldb,
                     idx_t ncols, double* be, double* R);

}  // namespace starfront
