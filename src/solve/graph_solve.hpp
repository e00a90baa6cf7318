// The triangular solves of a Cholesky factor by the tasks of its solve graph
// (plan/solve_graph.hpp: multifrontal forward and backward substitution,
// tiled fronts tile by tile) run in submission order in this process. It is
// the one-process solve of Solver (LLᵀ) and the oracle of the distributed
// solve: both executors call the same kernels (run_solve_task_cpu) in the
// same order per piece of data, so a solution on P ranks is bitwise the
// one-process solution of the same graph.
#pragma once

#include "plan/solve_graph.hpp"
#include "solve/factor.hpp"

namespace starfront {

/// Overwrites X (n×nrhs, leading dimension ldx >= max(1, n), final
/// numbering) with (L Lᵀ)⁻¹ X, L the factor in Lx (FrontPlan layout) of the
/// graph S was built from (any mapping: ranks are ignored). Workspace: the
/// front vectors and contribution-block segments of S (rows × nrhs each).
void solve_graph_in_process(const SolveGraph& S, const double* Lx, double* X, idx_t nrhs, idx_t ldx);

/// solve_in_place (solve/solve.hpp: checks, permutation, overflow test,
/// errors, B unchanged on error) with the substitution of
/// solve_graph_in_process. F: an LLᵀ factor of S's graph.
Status solve_in_place_graph(const SolveGraph& S, const NumericFactor& F, double* B, idx_t nrhs, idx_t ldb);

}  // namespace starfront
