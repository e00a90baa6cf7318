// The solver object behind the command-line tool and the public APIs:
// analyse once, factorise (and refactorise with new values on the same
// pattern), solve. Owns its symbolic factor, plan and numeric factor.
#pragma once

#include <memory>

#include "analysis/symbolic.hpp"
#include "plan/cb_slots.hpp"
#include "plan/front_plan.hpp"
#include "plan/task_graph.hpp"
#include "solve/factor.hpp"

namespace starfront {

/// Which executor runs the factorisation's task graph.
enum class Executor {
  starpu,      ///< StarPU tasks (needs a started StarpuRuntime)
  sequential,  ///< in-process, one front after the other (the test oracle)
};

/// Timings and counts of the last analysis and factorisation.
struct SolverStats {
  double t_analyse_s = 0.0;  ///< ordering + symbolic analysis + plan, seconds
  FactorStats factor;        ///< last factorisation
};

/// Analyse / factorise / solve of one sparse symmetric matrix.
/// Not thread-safe: use one Solver per thread.
class Solver {
 public:
  /// Symbolic analysis of the lower CSC matrix A, construction of the plan
  /// and compilation of the task graph. Keeps a copy of A's pattern (to
  /// detect a changed pattern later).
  /// Errors: see analyse(), build_front_plan() and build_task_graph().
  Status analyse(const CscMatrix& A, const AnalysisOptions& opts,
                 const GraphOptions& graph_opts = GraphOptions{});

  /// Numeric factorisation of A, whose pattern must be the analysed one
  /// (invalid_argument naming the first differing column otherwise).
  /// A refactorisation with new values reuses the analysis and the plan.
  /// Errors: invalid_argument, not_positive_definite (Status::column is the
  /// failing column in the user's 0-based numbering), runtime_error.
  Status factorize(const CscMatrix& A, const FactorOptions& opts, Executor exec);

  /// Overwrites B (n×nrhs, column-major, leading dimension ldb) with A⁻¹B.
  /// Errors: invalid_argument (no successful factorisation, bad sizes).
  Status solve(double* B, idx_t nrhs, idx_t ldb) const;

  const SymbolicFactor& symbolic() const { return sym_; }
  const FrontPlan& plan() const { return plan_; }
  const TaskGraph& graph() const { return graph_; }
  const SolverStats& stats() const { return stats_; }
  /// Memory the factorisation needs (bytes), from the analysed plan
  /// (plan/cb_slots.hpp); all zero before a successful analyse().
  MemoryEstimates memory() const { return analysed_ ? memory_estimates(graph_) : MemoryEstimates{}; }
  bool factorized() const { return factorized_; }
  /// Smallest d_jj / |a_jj| over the pivots of the last successful
  /// factorisation (how close it came to the pivot tolerance).
  double min_pivot_ratio() const { return factor_.min_pivot_ratio; }

 private:
  Status check_pattern(const CscMatrix& A) const;

  SymbolicFactor sym_;
  FrontPlan plan_;
  TaskGraph graph_;
  NumericFactor factor_;
  std::vector<idx_t> colptr_, rowind_;  // analysed pattern
  bool analysed_ = false, factorized_ = false;
  SolverStats stats_;
};

}  // namespace starfront
