// `starfront solve`: read (or generate) a matrix, analyse, factorise on StarPU,
// solve, and report (human text or one JSON object).
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>

#include "analysis/symbolic.hpp"
#include "plan/task_graph.hpp"
#include "solve/factor.hpp"

namespace starfront {
class Solver;
}

namespace starfront::tools {

/// Options of `starfront solve` (see main.cpp for their help texts).
struct SolveArgs {
  std::string file;              ///< empty: built-in 3D 7-point Laplacian 30^3
  std::string rhs;               ///< empty: b = A*1
  std::string ordering = "scotch";  ///< scotch, scotch-path, scotch-nd, scotch-amd, natural
  bool relax_path = false;          ///< AnalysisOptions::relax_critical_path
  idx_t max_front = 0;              ///< AnalysisOptions::relax_max_front
  /// The GPU graph's latency rule (AnalysisOptions::latency_rule_front =
  /// kGpuFusedFront) unless --no-latency-rule, --relax-path or --max-front
  /// is given, or the executor is StarPU-MPI (whose subtrees stay on CPUs).
  bool latency_rule = true;
  int ncpu = -1;
  int ncuda = 0;
  /// Tile kernels and the assembly of tiled fronts run on CUDA workers only
  /// (RuntimeOptions::tiles_on_cuda_only); needs --ncuda >= 1. The CLI sets
  /// it whenever --ncuda >= 1 unless --tiles-anywhere is given.
  bool tiles_on_gpu_only = false;
  std::string sched = "auto";  ///< StarPU policy or "auto" (RuntimeOptions::sched)
  std::string executor = "starpu";
  double pivot_tol = -1.0;  ///< < 0: n·ε (FactorOptions)
  double watchdog = 0.0;    ///< FactorOptions::watchdog_seconds
  std::string method = "llt";  ///< llt, ldlt, quasi-definite, auto (FactorOptions::method)
  int refine = 3;              ///< refinement steps at most (FactorOptions::refine_steps)
  double ldlt_threshold = 0.01;     ///< LDLᵀ threshold u
  double perturbation = 1.4901161193847656e-08;  ///< LDLᵀ static perturbation τ
  int repeat = 1;
  bool json = false;
  /// Non-empty: record an FxT trace of the factorisation(s) into this folder
  /// and convert it there with starpu_fxt_tool (see trace/external.hpp).
  std::string trace;
  // Task-graph options (plan/task_graph.hpp).
  idx_t tile_size = 256;
  idx_t tile_threshold = 512;
  double subtree_ratio = 4.0;
  bool no_fuse = false;
  bool no_tile = false;
  /// The GPU graph (gpu_graph_options: fused subtrees up to front order 600
  /// (kGpuGraphSubtreeFront; those above 232 run on CPU workers),
  /// single front tasks, tiles of kGpuTileSize above kGpuTileThreshold);
  /// solve with --ncuda >= 1 sets it. tile_size and tile_threshold still apply.
  bool gpu_graph = false;
  std::string slots = "dag";  ///< slot policy (parse_slot_policy)
  /// Run on the StarPU-MPI executor over MPI_COMM_WORLD (set by main when
  /// launched by mpirun, or by --executor starpu-mpi): every rank reads the
  /// matrix and analyses it, the factorisation is distributed, rank 0
  /// solves and prints the report.
  bool mpi = false;
};

/// True when this process was started by an MPI launcher (Open MPI's
/// mpirun/mpiexec, or a PMI/PMIx launcher such as srun).
bool launched_by_mpi();

/// The task-graph options of a command line (the slot policy must have
/// passed check_solve_args).
GraphOptions graph_options(const SolveArgs& a, int workers);

/// Reads FILE, or generates the built-in problem when `file` is empty;
/// `source` says which.
Status load_matrix(const std::string& file, CscMatrix& A, std::string& source);

/// The matrix keys of `solve --json` and `plan --json`: "n" (order) and
/// "nnz_a" (entries of the lower triangle, diagonal included).
nlohmann::json matrix_keys(const CscMatrix& A);

/// The analysis keys of `solve --json` and `plan --json` (one definition, so
/// that both report the same figures of the same analysis): "t_analyse_s"
/// (Solver::analyse's seconds, task graph included), "nnz_l", "nnz_l_exact",
/// "flops", "flops_exact", "max_front", "supernodes", "ordering_used",
/// "tree_critical_path_s", "tree_critical_path_fronts" (the assembly tree's
/// modelled critical path), "amalgamation_used" (none, relaxed,
/// critical-path) and "latency_rule" (the GPU graph's latency-rule
/// comparison, null where the rule did not run), all from
/// solver.symbolic() after a successful analyse().
nlohmann::json analysis_keys(const Solver& solver);

/// Factorisation method of the --method value (llt, ldlt, quasi-definite, auto).
FactorMethod factor_method(const std::string& name);

/// Analysis options of --ordering, --relax-path and --max-front.
AnalysisOptions analysis_options(const SolveArgs& a);

/// Checks the option values that the parser does not (worker counts,
/// scheduler name, pivot tolerance, repeat count) before any work is done.
/// Returns an empty string when they are valid, else what is wrong.
std::string check_solve_args(const SolveArgs& args);

/// The same checks for `plan`, whose --workers (args.ncpu) is the worker
/// count the plan targets, not threads started here: it may exceed this
/// machine's cores (a plan for another machine), up to kMaxPlanWorkers.
/// Messages name --workers.
std::string check_plan_args(const SolveArgs& args);

/// Largest --workers of `plan`.
constexpr int kMaxPlanWorkers = 1 << 16;

/// Runs the command; returns the process exit status (0 ok, 1 failure).
///
/// With --json it prints one object on stdout whose key set is the same on
/// every outcome: success, a failure at any stage (io_error or parse_error
/// reading the matrix or --rhs, not_positive_definite, singular, a trace
/// that cannot be written, out_of_memory, ...) and a usage error
/// (print_usage_error_json). A key whose value does not exist on this run is
/// null, never absent:
///  - "status" ("ok" or the error kind), "error" (the message; null on success);
///  - "failed_column" (1-based) and "pivot": set when the status is
///    not_positive_definite or singular, null otherwise;
///  - the options echoed back, set before any work (so also when the matrix
///    cannot be read; null only on a usage error): "method_requested",
///    "executor", "ordering", "relax_path", "max_front_cap", and "rhs" (the
///    --rhs file; null without --rhs, i.e. b = A*1);
///  - "file" (the matrix file, or the built-in problem's description);
///  - "trace_dir" (the --trace folder once written; null otherwise) and
///    "mpi" (the StarPU-MPI figures; null on a run without MPI);
///  - the figures of each stage (n, nnz_a, nrhs, t_read_s, the analysis,
///    graph, runtime, factorisation, inertia and solve keys, "blas_core"),
///    null where the run did not get that far or they do not apply.
/// The full list is null_report() in solve_command.cpp.
int run_solve(const SolveArgs& args);

/// `solve --json` with a usage error (bad option or value, exit status 2):
/// prints on stdout the report with every key of run_solve's report, null,
/// but "status": "usage_error" and "error": `message`, so that a caller
/// parsing stdout always gets one JSON object with the same keys.
void print_usage_error_json(const std::string& message);

}  // namespace starfront::tools
