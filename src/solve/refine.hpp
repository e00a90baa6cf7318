// Iterative refinement of a direct solve (Wilkinson; for LDLᵀ with static
// pivot perturbations, as in Li & Demmel's and PARDISO's use of it):
// x ← x + A⁻¹(b − A x) with the same factor, while the backward error drops.
#pragma once

#include <functional>
#include <vector>

#include "solve/solve.hpp"

namespace starfront {

/// Outcome of a refined solve (over all right-hand sides).
struct RefineInfo {
  int steps = 0;                ///< largest number of refinement steps taken by a right-hand side
  double backward_error = 0.0;  ///< largest final backward error (backward_error() of each column)
};

/// Target backward error at which refinement stops.
constexpr double kRefineTarget = 1e-15;

/// Largest backward error a solve may return with success. A backward-stable
/// factorisation gives about 1e-16 whatever the conditioning; more than
/// √ε ≈ 1.5e-8 after refinement means an unstable factorisation (e.g.
/// quasi-definite mode on a matrix that is not quasi-definite).
constexpr double kMaxBackwardError = 1.4901161193847656e-08;

/// Overwrites B (n×nrhs, column-major, leading dimension ldb, original
/// numbering) with A⁻¹B: solve_in_place, then for each right-hand side up to
/// max_steps refinement steps, stopping when its backward error is <= 1e-15
/// or stagnates (a step that does not halve it; a step that makes it worse is
/// undone). A is the matrix F factorises (lower CSC, original numbering).
/// max_steps = 0 is a plain solve (the backward error is still computed when
/// info is not null). Errors: those of solve_in_place (B unchanged);
/// runtime_error when info is not null and the final backward error exceeds
/// kMaxBackwardError or is not finite (B unchanged: an inaccurate solution is
/// never returned as a success; info still says what was reached).
Status solve_refined(const CscMatrix& A, const NumericFactor& F, double* B, idx_t nrhs, idx_t ldb,
                     int max_steps, RefineInfo* info = nullptr);

/// Buffers of refine_with, grown as needed and reused by a caller that
/// refines again and again (Solver keeps one per concurrent solve), and
/// ‖A‖∞ when the caller knows it.
struct RefineWorkspace {
  double norm_a = -1.0;  ///< symmetric_norm_inf(A) when >= 0; else refine_with computes it
  std::vector<double> x, r, d, xn, rn;
};

/// A solver of A X = R in place: X (n×ncols, leading dimension n; a
/// leading dimension of max(1, n) for the solvers that need one) holds R on
/// entry and the solution on success.
using ColumnSolver = std::function<Status(double* X, idx_t ncols)>;

/// solve_refined with any solver (the distributed solve, mpi_solve.hpp):
/// the first solve takes every right-hand side at once, then each
/// refinement step solves the residuals of the right-hand sides still
/// refining together (one call per step). Same stopping rules, outcome and
/// errors as solve_refined; bad arguments (nrhs < 0, ldb < max(1, n)) are
/// invalid_argument; when `solve` fails in a refinement step, refinement
/// stops there for every right-hand side. ws: reusable buffers and ‖A‖∞
/// (null: allocated and computed for this call). Cost besides the solves:
/// one pass over A per solve, for all its columns (the backward errors,
/// whose residuals are the next step's right-hand sides), ‖A‖∞ once.
Status refine_with(const CscMatrix& A, const ColumnSolver& solve, double* B, idx_t nrhs, idx_t ldb,
                   int max_steps, RefineInfo* info = nullptr, RefineWorkspace* ws = nullptr);

}  // namespace starfront
