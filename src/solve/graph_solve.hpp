// The triangular solves of a Cholesky factor by the tasks of its solve graph
// (plan/solve_graph.hpp: multifrontal forward and backward substitution,
// tiled fronts tile by tile) run in submission order in this process. It is
// the one-process solve of Solver (LLᵀ) and the oracle of the distributed
// solve: both executors call the same kernels (run_solve_task_cpu) in the
// same order per piece of data, so a solution on P ranks is bitwise the
// one-process solution of the same graph.
//
// ProcessSolve compiles a graph's solve once (per factorised graph, not per
// solve): the one-rank mapping, the solve graph, every access's address as
// an offset, one workspace (SolveWorkspace) reused by every later solve.
// A solve is then a sequential sweep over the units (fused subtrees, single
// fronts, tiles of tiled fronts) with no graph building and, once the
// workspace has grown to the solve's shape, no allocation.
#pragma once

#include <vector>

#include "cpu/solve_kernels.hpp"
#include "plan/solve_graph.hpp"
#include "solve/factor.hpp"

namespace starfront {

/// Workspace of a one-process graph solve: the front vectors and
/// contribution-block segments of the solve graph (rows × nrhs each), the
/// permuted right-hand sides (n × nrhs), the kernels' scratch. Grows to the
/// largest nrhs seen, never shrinks. One per thread at a time.
struct SolveWorkspace {
  std::vector<double> pieces;   ///< the solve graph's own vector pieces
  std::vector<double> x;        ///< permuted right-hand sides (solve_permuted_with)
  std::vector<double*> ptr;     ///< a task's access addresses
  std::vector<idx_t> ld;        ///< and leading dimensions
  SolveScratch scratch;         ///< kernel workspace (cpu/solve_kernels.hpp)
};

/// The one-process solve of one task graph, built once and run many times.
/// Holds a pointer to the graph (which must outlive it and stay unchanged;
/// built_for() tells whether it is the graph's current build).
class ProcessSolve {
 public:
  /// Maps G onto one rank and builds its solve graph (plan/solve_graph.hpp)
  /// and the address table. Errors: those of map_graph / build_solve_graph
  /// (invalid_argument); on error the object is empty.
  Status build(const TaskGraph& G);
  /// True when built from G as it is now (same object, same build_id).
  bool built_for(const TaskGraph& G) const { return graph_ == &G && build_id_ == G.build_id && S_.graph; }
  const SolveGraph& solve_graph() const { return S_; }

  /// Overwrites X (n×nrhs, leading dimension ldx >= max(1, n), final
  /// numbering) with (L Lᵀ)⁻¹ X, L the factor in Lx (FrontPlan layout of
  /// the graph). No checks. ws: grown as needed, then reused.
  void run(const double* Lx, double* X, idx_t nrhs, idx_t ldx, SolveWorkspace& ws) const;

  /// solve_in_place (solve/solve.hpp: checks, permutation, overflow test,
  /// errors, B unchanged on error) with run(); the permuted copy of B lives
  /// in ws. F: an LLᵀ factor of the graph's plan, else invalid_argument.
  Status solve(const NumericFactor& F, double* B, idx_t nrhs, idx_t ldb, SolveWorkspace& ws) const;

 private:
  SolveGraph S_;
  const TaskGraph* graph_ = nullptr;
  std::uint64_t build_id_ = 0;
  /// Per handle: factor: offset in Lx; rows: first row; front / segment:
  /// offset in rows in the pieces buffer (times nrhs).
  std::vector<idx_t> where_;
  std::vector<idx_t> ld_;      ///< per handle: factor ld, or rows (pieces); rows handles: -1 (ldx)
  idx_t piece_rows_ = 0;       ///< rows of all front / segment handles
};

/// Overwrites X (n×nrhs, leading dimension ldx >= max(1, n), final
/// numbering) with (L Lᵀ)⁻¹ X, L the factor in Lx (FrontPlan layout) of the
/// graph S was built from (any mapping: ranks are ignored). Workspace: the
/// front vectors and contribution-block segments of S (rows × nrhs each),
/// allocated for this call (ProcessSolve reuses them).
void solve_graph_in_process(const SolveGraph& S, const double* Lx, double* X, idx_t nrhs, idx_t ldx);

/// solve_in_place (solve/solve.hpp: checks, permutation, overflow test,
/// errors, B unchanged on error) with the substitution of
/// solve_graph_in_process. F: an LLᵀ factor of S's graph.
Status solve_in_place_graph(const SolveGraph& S, const NumericFactor& F, double* B, idx_t nrhs, idx_t ldb);

}  // namespace starfront
