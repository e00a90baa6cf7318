// starfront: command-line tool.
//   starfront solve [FILE.mtx] [--rhs B.mtx] [--ordering scotch|natural] [--ncpu N]
//                   [--ncuda N] [--tiles-on-gpu-only|--tiles-anywhere] [--sched NAME] [--executor starpu|sequential|starpu-mpi] [--json]
//                   [--trace DIR] [--gpu-graph] [--tile-size B] [--tile-threshold T]   (--ncuda >= 1: the GPU graph)
//   mpirun -np P starfront solve FILE.mtx   (StarPU-MPI: distributed factorisation, rank 0 reports)
//   starfront trace summary DIR [--json]
//   starfront trace gantt DIR -o OUT.png|OUT.svg [--width W] [--height H] [--title T]
//   starfront generate laplace3d N [--stencil 7|27] [-o FILE]
//   starfront generate laplace2d N [-o FILE]
// Exit status: 0 success, 1 failure (message on stderr), 2 bad usage.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>

#include "cpu/blas_core.hpp"
#include "plan_command.hpp"
#include "solve_command.hpp"
#include "trace_command.hpp"
#include "io/matrix_market.hpp"
#include "sparse/generators.hpp"

namespace {

int generate(const std::string& kind, long long N, int stencil, const std::string& out) {
  starfront::CscMatrix A;
  starfront::Status st = kind == "laplace3d" ? starfront::laplace3d(N, stencil, A)
                                             : starfront::laplace2d(N, A);
  if (st.ok()) st = starfront::write_matrix_market(out, A);
  if (!st.ok()) {
    std::cerr << "starfront generate: " << st.message << "\n";
    return 1;
  }
  return 0;
}

/// Analysis options shared by `solve` and `plan`.
void add_analysis_options(CLI::App* app, starfront::tools::SolveArgs& a) {
  app->add_option("--ordering", a.ordering,
                  "fill-reducing ordering: scotch (best of Scotch nested dissection and minimum "
                  "degree by flops), scotch-path (the same by the assembly tree's modelled critical "
                  "path: latency-bound trees, e.g. the fused GPU kernel), scotch-nd, scotch-amd, natural")
      ->check(CLI::IsMember({"scotch", "scotch-path", "scotch-nd", "scotch-amd", "natural"}))
      ->capture_default_str();
  app->add_flag("--relax-path", a.relax_path,
                "amalgamate only where the assembly tree's modelled critical path does not grow "
                "(AnalysisOptions::relax_critical_path)");
  // A decimal count, parsed here: CLI11's integers also take octal (010)
  // and hexadecimal (0x10) spellings and clamp on overflow.
  app->add_option_function<std::string>(
         "--max-front",
         [&a](const std::string& v) {
           long long x = 0;
           bool ok = !v.empty() && v.size() <= 10;
           for (char ch : v) ok = ok && ch >= '0' && ch <= '9';
           if (ok) x = std::stoll(v);
           if (!ok || x > 1000000000)
             throw CLI::ValidationError("--max-front", "expected a front order 0..1000000000 in decimal "
                                                       "(0: no limit), got '" + v + "'");
           a.max_front = static_cast<starfront::idx_t>(x);
         },
         "no amalgamation makes a front of larger order (default 0: no limit; " +
             std::to_string(starfront::kGpuFusedFront) +
             " is the largest the fused GPU kernel keeps in shared memory; fronts of the fundamental "
             "partition above it stay as they are)")
      ->type_name("INT");
  app->add_flag("--latency-rule,!--no-latency-rule", a.latency_rule,
                "GPU graph (the default there): the latency rule takes the critical-path analysis (the "
                "ordering by path when --ordering is scotch, --relax-path, --max-front " +
                    std::to_string(starfront::kGpuFusedFront) +
                    ") when all its fronts fit the fused GPU kernel and its modelled critical path is shorter; "
                    "--no-latency-rule keeps the default analysis (so do --relax-path and --max-front); "
                    "ignored without the GPU graph")
      ->disable_flag_override();
}

/// Task-graph options shared by `solve` and `plan`.
void add_graph_options(CLI::App* app, starfront::tools::SolveArgs& a) {
  app->add_option("--tile-size", a.tile_size,
                  "order of the tiles of large fronts (GPU graph: " + std::to_string(starfront::kGpuTileSize) + ")")
      ->capture_default_str();
  app->add_option("--tile-threshold", a.tile_threshold,
                  "fronts of larger order are tiled (GPU graph: " + std::to_string(starfront::kGpuTileThreshold) + ")")
      ->capture_default_str();
  app->add_flag("--gpu-graph", a.gpu_graph,
                "the GPU graph: fused subtrees of fronts up to order " +
                    std::to_string(starfront::kGpuGraphSubtreeFront) +
                    " at the bottom, one task per medium front, tiles only for the large fronts (solve "
                    "with --ncuda >= 1: always)");
  app->add_option("--subtree-ratio", a.subtree_ratio,
                  "fused subtrees weigh at most total work / (ratio x workers)")
      ->capture_default_str();
  app->add_flag("--no-fuse", a.no_fuse, "one task per front below the tiled fronts (no fused subtrees)");
  app->add_flag("--no-tile", a.no_tile, "never tile a front");
  app->add_option("--slots", a.slots,
                  "contribution-block slots: private (no reuse), dag (reuse where the graph "
                  "orders it), budget:BYTES (K/M/G suffixes; adds dependencies to fit), budget-min")
      ->capture_default_str();
}

/// Reports a bad argument value the parser could not check; exit status 2.
int usage_error(const std::string& what) {
  std::cerr << "starfront " << what << "\n";
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  starfront::reexec_with_native_blas(argv);  // before any thread: OpenBLAS's kernels for this CPU
  CLI::App app{"starfront: sparse symmetric direct solver (multifrontal Cholesky on StarPU)"};
  app.require_subcommand(1);

  starfront::tools::SolveArgs sa;
  CLI::App* solve = app.add_subcommand(
      "solve", "Factorise and solve A x = b (b = A*1 unless --rhs); without FILE, a built-in "
               "3D 7-point Laplacian 30^3");
  solve->add_option("file", sa.file, "Matrix Market file (symmetric, or numerically symmetric general)");
  solve->add_option("--rhs", sa.rhs, "right-hand side(s): Matrix Market array n x k");
  add_analysis_options(solve, sa);
  solve->add_option("--ncpu", sa.ncpu, "CPU workers (-1: all cores, less one left to this program with --ncuda >= 1)")
      ->capture_default_str();
  solve->add_option("--ncuda", sa.ncuda, "GPUs (each with 4 CUDA workers, i.e. streams; STARPU_NWORKER_PER_CUDA sets another count)")->capture_default_str();
  solve->add_flag("--tiles-on-gpu-only,!--tiles-anywhere", sa.tiles_on_gpu_only,
                  "tile kernels and tiled-front assembly run on the GPUs only (needs --ncuda >= 1; "
                  "the default with --ncuda); --tiles-anywhere lets a cost-model scheduler (dmda, ...) place "
                  "them (under one without cost models, e.g. auto's prio with one GPU, they stay on the GPUs)");
  solve->add_option("--sched", sa.sched,
                    "StarPU scheduler (auto, lws, eager, prio, dmda, ...); auto: lws without GPUs, prio with one "
                    "GPU, dmda with several; with GPUs and a scheduler without cost models (eager, prio, lws, ...) "
                    "tile and Cholesky front tasks run on the GPUs only, LDLT front tasks on the CPUs")
      ->capture_default_str();
  solve->add_option("--executor", sa.executor,
                    "starpu, sequential (in-process reference), or starpu-mpi (StarPU-MPI over "
                    "MPI_COMM_WORLD; the default for starpu when launched by mpirun)")
      ->check(CLI::IsMember({"starpu", "sequential", "starpu-mpi"}))
      ->capture_default_str();
  solve->add_option("--watchdog", sa.watchdog,
                    "seconds without any task completing before the factorisation is cancelled "
                    "with an error (0: no watchdog)")
      ->capture_default_str();
  solve->add_option("--pivot-tol", sa.pivot_tol, "relative pivot tolerance of Cholesky (-1: n*eps)")
      ->capture_default_str();
  solve->add_option("--method", sa.method,
                    "factorisation: llt (Cholesky), ldlt (symmetric indefinite, 1x1/2x2 pivots "
                    "inside each front), quasi-definite (LDL^T without pivoting), auto (llt, then "
                    "ldlt if the matrix is not positive definite)")
      ->check(CLI::IsMember({"llt", "ldlt", "quasi-definite", "auto"}))
      ->capture_default_str();
  solve->add_option("--refine", sa.refine,
                    "iterative refinement steps at most (stops at backward error <= 1e-15 or "
                    "stagnation; 0: none)")
      ->capture_default_str();
  solve->add_option("--ldlt-threshold", sa.ldlt_threshold, "LDL^T pivot threshold u in (0, 0.5]")
      ->capture_default_str();
  solve->add_option("--perturbation", sa.perturbation,
                    "LDL^T static perturbation tau: a tiny pivot with no acceptable alternative "
                    "becomes +-tau*max|a_ij| of its row")
      ->capture_default_str();
  solve->add_option("--repeat", sa.repeat, "factorise this many times (refactorisations; the last is reported)")
      ->capture_default_str();
  solve->add_flag("--json", sa.json,
                  "print one JSON object on stdout, with the same keys on success and on every failure "
                  "(\"status\": ok or the error kind, \"error\": the message; null for values the run "
                  "did not reach or that do not apply, e.g. failed_column on success)");
  solve->add_option("--trace", sa.trace,
                    "record an FxT trace of the factorisation into DIR and convert it there "
                    "(paje.trace, dag.dot, tasks.rec, trace.rec; see `starfront trace`)");
  add_graph_options(solve, sa);

  starfront::tools::SolveArgs pa;  // `plan` shares the analysis and graph options
  std::string dot_out, json_out;
  CLI::App* plan = app.add_subcommand("plan", "Compile and describe the task graph (no factorisation)");
  plan->add_option("file", pa.file, "Matrix Market file (no FILE: the built-in 3D Laplacian 30^3)");
  add_analysis_options(plan, pa);
  plan->add_option("--workers", pa.ncpu,
                   "workers the subtree partition targets (-1: this machine's cores; more than it has "
                   "plans for another machine)")
      ->capture_default_str();
  plan->add_option("--dot", dot_out, "write the graph as Graphviz DOT to this file");
  plan->add_option("--json", json_out,
                   "write the graph as JSON to this file (\"tasks\", \"blocks\", \"stats\"), with the "
                   "matrix and analysis keys of solve --json, same names, meanings and values: n, nnz_a, "
                   "t_analyse_s, nnz_l, nnz_l_exact, flops, flops_exact, max_front, supernodes, "
                   "ordering_used, tree_critical_path_s, tree_critical_path_fronts, amalgamation_used, "
                   "latency_rule");
  starfront::idx_t check_slots = 0;
  plan->add_option("--check-slots", check_slots,
                   "replay N random execution orders and check that no contribution-block slot "
                   "is overwritten while its block is still to be read (exit 1 on a violation)")
      ->check(CLI::Range(static_cast<starfront::idx_t>(0), static_cast<starfront::idx_t>(100000000)));
  add_graph_options(plan, pa);

  std::string gen_kind, gen_out = "-";
  long long gen_n = 0;
  int stencil = 7;
  CLI::App* gen = app.add_subcommand("generate", "write a generated SPD matrix (Matrix Market)");
  gen->add_option("kind", gen_kind, "laplace3d or laplace2d")
      ->required()
      ->check(CLI::IsMember({"laplace3d", "laplace2d"}));
  gen->add_option("N", gen_n, "grid points per dimension (>= 1)")->required();
  gen->add_option("--stencil", stencil, "laplace3d stencil")
      ->check(CLI::IsMember({7, 27}))
      ->capture_default_str();
  gen->add_option("-o,--output", gen_out, "output file ('-': stdout)")->capture_default_str();

  std::string trace_dir;
  starfront::trace::GanttOptions gantt_opts;
  bool summary_json = false;
  CLI::App* trace = app.add_subcommand("trace", "Summarise or draw a trace written by `solve --trace DIR`");
  trace->require_subcommand(1);
  CLI::App* summary = trace->add_subcommand(
      "summary", "per task kind and per worker: count, total and mean seconds, share of the "
                 "makespan; idle share; makespan against the plan's critical path; transfers");
  summary->add_option("dir", trace_dir, "trace folder")->required();
  summary->add_flag("--json", summary_json, "print one JSON object on stdout");
  CLI::App* gantt = trace->add_subcommand("gantt", "Gantt chart (gnuplot): one row per worker, tasks coloured by kind");
  gantt->add_option("dir", trace_dir, "trace folder")->required();
  gantt->add_option("-o,--output", gantt_opts.output, "image file: .png or .svg")->required();
  gantt->add_option("--width", gantt_opts.width, "pixels")->capture_default_str();
  gantt->add_option("--height", gantt_opts.height, "pixels (0: from the number of workers)")
      ->capture_default_str();
  gantt->add_option("--title", gantt_opts.title, "chart title (default: matrix, tasks, workers, makespan)");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e) == 0 ? 0 : 2;
    // `solve ... --json`: stdout still gets one JSON object.
    bool solve_json = false, in_solve = false;
    for (int i = 1; i < argc; ++i) {
      in_solve = in_solve || std::string(argv[i]) == "solve";
      solve_json = solve_json || (in_solve && std::string(argv[i]) == "--json");
    }
    if (code != 0 && solve_json) starfront::tools::print_usage_error_json(e.what());
    return code;
  }
  if (*gen) {
    if (gen_n < 1) return usage_error("generate: N must be >= 1 (got " + std::to_string(gen_n) + ")");
    if (gen_kind == "laplace2d" && gen->count("--stencil"))
      return usage_error("generate: --stencil applies to laplace3d only");
    return generate(gen_kind, gen_n, stencil, gen_out);
  }
  if (*summary) return starfront::tools::run_trace_summary(trace_dir, summary_json);
  if (*gantt) {
    if (gantt_opts.width < 200 || gantt_opts.width > 20000 ||
        (gantt_opts.height != 0 && (gantt_opts.height < 200 || gantt_opts.height > 20000)))
      return usage_error("trace gantt: --width and --height must be 200..20000 pixels");
    return starfront::tools::run_trace_gantt(trace_dir, gantt_opts);
  }
  if (*plan) {
    if (pa.gpu_graph && !plan->count("--tile-size")) pa.tile_size = starfront::kGpuTileSize;
    if (pa.gpu_graph && !plan->count("--tile-threshold")) pa.tile_threshold = starfront::kGpuTileThreshold;
    if (std::string why = starfront::tools::check_plan_args(pa); !why.empty())
      return usage_error("plan: " + why);
    return starfront::tools::run_plan(pa, dot_out, json_out, check_slots);
  }
  // GPU runs use the GPU graph (few, large tasks: per-task cost, not flops,
  // limits a GPU run; bench/README.md, "Where the time goes" and "Fewer,
  // bigger GPU tasks"), with its tiles unless told otherwise.
  if (sa.ncuda > 0) sa.gpu_graph = true;
  if (sa.gpu_graph && !solve->count("--tile-size")) sa.tile_size = starfront::kGpuTileSize;
  if (sa.gpu_graph && !solve->count("--tile-threshold")) sa.tile_threshold = starfront::kGpuTileThreshold;
  // Tiles exist only in fronts above kGpuTileThreshold, where a 2048-tile
  // task on a CPU core stalls the whole factorisation: lap3d 100^3 on one
  // H200 took 0.93 s with the tiles on the GPU only and over 70 s with dmda
  // placing them (bench/README.md, "The largest problem").
  if (sa.ncuda > 0 && !solve->count("--tiles-on-gpu-only")) sa.tiles_on_gpu_only = true;
  sa.mpi = sa.executor == "starpu-mpi" || (sa.executor == "starpu" && starfront::tools::launched_by_mpi());
  if (std::string why = starfront::tools::check_solve_args(sa); !why.empty()) {
    if (sa.json) starfront::tools::print_usage_error_json(why);
    return usage_error("solve: " + why);
  }
  return starfront::tools::run_solve(sa);
}
