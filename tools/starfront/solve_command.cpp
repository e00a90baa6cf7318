#include "solve_command.hpp"

#include <algorithm>
#include <cmath>
#include <thread>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <vector>

#include <cstdlib>

#include "api/solver.hpp"
#include "cpu/blas_core.hpp"
#include "plan/cb_slots.hpp"
#include "process_memory.hpp"
#include "io/matrix_market.hpp"
#include "runtime/starpu/runtime.hpp"
#include "solve/solve.hpp"
#include "sparse/generators.hpp"
#include "trace/external.hpp"
#include "trace/trace_files.hpp"

namespace starfront::tools {
namespace {

using clock_type = std::chrono::steady_clock;

double seconds_since(clock_type::time_point t0) {
  return std::chrono::duration<double>(clock_type::now() - t0).count();
}

/// Everything the report shows.
struct Report {
  nlohmann::json j;
  Status status;
};


Status load_rhs(const SolveArgs& a, const CscMatrix& A, std::vector<double>& B, idx_t& nrhs) {
  if (a.rhs.empty()) {  // b = A * 1
    nrhs = 1;
    B.assign(A.n, 0.0);
    const std::vector<double> ones(A.n, 1.0);
    symmetric_matvec(A, ones.data(), B.data());
    return Status::success();
  }
  idx_t rows = 0;
  return read_dense_matrix(a.rhs, rows, nrhs, B, A.n);  // another row count: refused at the size line
}

/// Ends a traced run: shuts StarPU down (it writes the raw FxT file then),
/// writes DIR/plan.json (the plan's figures, for `trace summary`) and
/// converts the raw trace with starpu_fxt_tool.
Status finish_trace(const SolveArgs& a, const GraphStats& gs, Report& r,
                    std::unique_ptr<StarpuRuntime>& rt) {
  rt.reset();
  trace::PlanFigures pf;
  pf.tasks = gs.tasks;
  pf.repeat = a.repeat;
  pf.critical_path_seconds = gs.critical_path_seconds;
  pf.total_seconds = gs.total_seconds;
  pf.factor_seconds = r.j["t_factor_s"].is_number() ? r.j["t_factor_s"].get<double>() : 0.0;
  pf.matrix = r.j.value("file", std::string());
  const std::string plan_file = a.trace + "/plan.json";
  std::ofstream os(plan_file);
  trace::write_plan_json(pf, os);
  if (!os) return Status::error(StatusCode::io_error, "cannot write '" + plan_file + "'");
  os.close();
  Status st = trace::convert_fxt_trace(a.trace);
  if (st.ok()) r.j["trace_dir"] = a.trace;
  return st;
}

/// The method that ran, the inertia and the pivot counts of a factorisation
/// that succeeded or stopped on a zero pivot (singular: the inertia counts
/// it); left null after any other failure (e.g. LLᵀ on an indefinite matrix).
void report_inertia(const Solver& solver, const Status& st, Report& r) {
  if (!st.ok() && st.code != StatusCode::singular) return;
  const NumericFactor& F = solver.factor();
  r.j["method"] = factor_method_name(F.method);
  r.j["inertia"] = {{"positive", F.inertia.positive},
                    {"negative", F.inertia.negative},
                    {"zero", F.inertia.zero}};
  r.j["perturbed_pivots"] = F.perturbed_pivots;
  r.j["delayed_pivots"] = F.delayed_pivots;
  r.j["two_by_two_pivots"] = F.two_by_two_pivots;
  r.j["inertia_guaranteed"] = F.inertia_guaranteed;
  r.j["below_threshold_pivots"] = F.below_threshold_pivots;
}

/// The task-graph figures of the report: tasks by kind, critical path, slot
/// policy and memory estimates (the measured keys null). Returns G's stats.
GraphStats describe_graph(const TaskGraph& G, Report& r) {
  const GraphStats gs = graph_stats(G);
  nlohmann::json by_kind;
  for (int k = 0; k < kTaskKinds; ++k) by_kind[task_kind_name(static_cast<TaskKind>(k))] = gs.by_kind[k];
  r.j["tasks_by_kind"] = by_kind;
  r.j["critical_path_flops"] = gs.critical_path_flops;
  r.j["critical_path_est_s"] = gs.critical_path_seconds;
  r.j["slots_policy"] = slot_policy_name(G.slot_policy);
  const MemoryEstimates me = memory_estimates(G);
  r.j["memory"] = {{"factors", me.factors},
                   {"cb_lower_bound", me.cb_lower_bound},
                   {"cb_planned", me.cb_planned},
                   {"cb_private", me.cb_private},
                   {"cb_level_stack", me.cb_level_stack},
                   {"subtree_workspace", me.subtree_workspace},
                   {"added_deps", me.added_deps},
                   {"slots", me.slots},
                   {"measured_peak", nullptr},
                   {"measured_rss_before", nullptr}};
  return gs;
}

/// The pipeline; fills r.j as far as it gets and returns the first error.
Status run(const SolveArgs& a, Report& r) {
  CscMatrix A;
  std::string source;
  auto t0 = clock_type::now();
  Status st = load_matrix(a.file, A, source);
  r.j["file"] = source;
  if (!st.ok()) return st;
  r.j["t_read_s"] = seconds_since(t0);
  r.j.update(matrix_keys(A));
  std::vector<double> B;
  idx_t nrhs = 0;
  st = load_rhs(a, A, B, nrhs);
  if (!st.ok()) return st;
  r.j["nrhs"] = nrhs;

  Solver solver;
  const int workers = a.ncpu > 0 ? a.ncpu : static_cast<int>(std::thread::hardware_concurrency());
  st = solver.analyse(A, analysis_options(a), graph_options(a, workers));
  if (!st.ok()) return st;
  r.j.update(analysis_keys(solver));
  const GraphStats gs = describe_graph(solver.graph(), r);

  // StarPU starts after the analysis: its workers would compete for the cores.
  std::unique_ptr<StarpuRuntime> rt;
  const bool use_starpu = a.executor == "starpu";
  if (use_starpu) {
    RuntimeOptions ro(a.ncpu, a.ncuda, a.sched, a.trace);
    ro.tiles_on_cuda_only = a.tiles_on_gpu_only;
    st = StarpuRuntime::start(ro, rt);
    if (!st.ok()) return st;
    r.j["scheduler"] = rt->scheduler();
    r.j["cpu_workers"] = rt->cpu_workers();
    r.j["cuda_workers"] = rt->cuda_workers();
    r.j["gpus"] = rt->gpus();
  }

  FactorOptions fo;
  fo.pivot_tol = a.pivot_tol;
  fo.watchdog_seconds = a.watchdog;
  // Measured peak: the process's resident-set high-water mark over the
  // factorisations, above the resident set just before them.
  const bool peak_ok = reset_peak_rss();
  const double rss_before = current_rss_bytes();
  fo.method = factor_method(a.method);
  fo.refine_steps = a.refine;
  fo.ldlt_threshold = a.ldlt_threshold;
  fo.perturbation = a.perturbation;
  for (int it = 0; it < a.repeat; ++it) {
    st = solver.factorize(A, fo, use_starpu ? Executor::starpu : Executor::sequential);
    // LDLᵀ on a tiled graph runs its untiled copy: describe the graph that ran.
    if (&solver.factorized_graph() != &solver.graph()) describe_graph(solver.factorized_graph(), r);
    if (st.ok() && peak_ok && rss_before > 0) {
      r.j["memory"]["measured_peak"] = std::max(0.0, peak_rss_bytes() - rss_before);
      r.j["memory"]["measured_rss_before"] = rss_before;
    }
    const FactorStats& fs = solver.stats().factor;
    r.j["tasks"] = fs.tasks;
    r.j["t_factor_s"] = fs.seconds;
    r.j["gflops"] = fs.seconds > 0 ? fs.flops / fs.seconds * 1e-9 : 0.0;
    r.j["mean_task_s"] = fs.tasks > 0 ? fs.task_seconds / static_cast<double>(fs.tasks) : 0.0;
    const FactorPhases& ph = fs.phases;
    r.j["factor_phases_s"] = {{"check", ph.check},         {"setup", ph.setup},
                              {"submit", ph.submit},       {"execute", ph.execute},
                              {"writeback", ph.writeback}, {"finish", ph.finish},
                              {"total", fs.total_seconds}};
    report_inertia(solver, st, r);
    if (!st.ok()) break;
  }
  if (!a.trace.empty()) {  // also when the factorisation failed: its trace shows how far it got
    const Status ts = finish_trace(a, gs, r, rt);
    if (st.ok()) st = ts;
  }
  if (!st.ok()) return st;
  if (!solver.factor().is_ldlt()) r.j["min_pivot_ratio"] = solver.min_pivot_ratio();
  std::vector<double> X = B;
  t0 = clock_type::now();
  st = solver.solve(X.data(), nrhs, std::max<idx_t>(1, A.n));
  r.j["t_solve_s"] = seconds_since(t0);
  r.j["refine_steps"] = solver.stats().refine.steps;
  if (!st.ok()) return st;
  double berr = 0.0;
  for (idx_t c = 0; c < nrhs; ++c)
    berr = std::max(berr, backward_error(A, X.data() + c * A.n, B.data() + c * A.n));
  r.j["backward_error"] = berr;
  if (!std::isfinite(berr))
    return Status::error(StatusCode::runtime_error,
                         "the solution or the right-hand side is not finite (overflow: the "
                         "matrix or b is too badly scaled for double precision)");
  return Status::success();
}

#ifdef STARFRONT_HAVE_MPI
/// When several ranks share this node, StarPU's workers are not bound to
/// cores (each rank would bind its first worker to the same core); the
/// caller's STARPU_WORKERS_NOBIND wins.
void unbind_when_sharing_a_node(MPI_Comm comm) {
  MPI_Comm node;
  MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  int n = 1;
  MPI_Comm_size(node, &n);
  MPI_Comm_free(&node);
  if (n > 1) setenv("STARPU_WORKERS_NOBIND", "1", 0);
}

/// The per-rank figures of a distributed factorisation (JSON key "mpi").
nlohmann::json mpi_report(const Solver& solver, MPI_Comm comm) {
  const RankMapping& M = solver.mapping();
  const MpiRunInfo& info = solver.mpi_info();
  const CommVolume v = communication_volume(solver.graph(), M);
  const std::vector<MemoryEstimates> me = memory_estimates_per_rank(solver.graph(), M);
  double peak = peak_rss_bytes();
  std::vector<double> peaks(static_cast<std::size_t>(M.nranks), 0.0);
  MPI_Gather(&peak, 1, MPI_DOUBLE, peaks.data(), 1, MPI_DOUBLE, 0, comm);
  nlohmann::json per = nlohmann::json::array();
  double sent = 0;
  for (int r = 0; r < M.nranks; ++r) {
    sent += info.sent_bytes[r];
    per.push_back({{"rank", r},
                   {"tasks_run", info.tasks_run[r]},
                   {"tasks_submitted", info.tasks_submitted[r]},
                   {"handles", info.handles[r]},
                   {"flops", M.rank_flops[r]},
                   {"factor_s", info.factor_seconds[r]},
                   {"sent_bytes", info.sent_bytes[r]},
                   {"predicted_sent_bytes", v.protocol_sent[r]},
                   {"predicted_recv_bytes", v.protocol_recv[r]},
                   {"recv_lower_bound_bytes", v.lower_bound_recv[r]},
                   {"memory", {{"factors", me[r].factors},
                               {"cb_planned", me[r].cb_planned},
                               {"cb_lower_bound", me[r].cb_lower_bound},
                               {"cb_private", me[r].cb_private},
                               {"subtree_workspace", me[r].subtree_workspace},
                               {"slots", me[r].slots},
                               {"measured_peak_rss", peaks[r]}}}});
  }
  return {{"ranks", M.nranks},
          {"mapping", "proportional mapping (Pothen-Sun 1993), tiles of shared fronts 2D block-cyclic, owner computes"},
          {"solve", "distributed: multifrontal forward/backward substitution as StarPU-MPI tasks on the ranks "
                    "owning the factor blocks; right-hand side scattered from rank 0, solution gathered there"},
          {"sent_bytes", sent},
          {"predicted_sent_bytes", v.protocol_total},
          {"lower_bound_bytes", v.lower_bound_total},
          {"factor_bytes", static_cast<double>(solver.plan().factor_size()) * sizeof(double)},
          {"gather_avoided_bytes", v.gather_to_root},
          {"per_rank", per}};
}

/// The figures of the last distributed solve (JSON key "mpi"."solve_phase").
nlohmann::json mpi_solve_report(const Solver& solver) {
  const MpiSolveInfo& info = solver.mpi_solve_info();
  const SolveVolume one = solve_communication(solver.solve_graph(), 1);  // linear in the columns
  double sent = 0;
  nlohmann::json per = nlohmann::json::array();
  for (std::size_t r = 0; r < info.sent_bytes.size(); ++r) {
    sent += info.sent_bytes[r];
    per.push_back({{"rank", r},
                   {"sent_bytes", info.sent_bytes[r]},
                   {"tasks_run", info.tasks_run[r]},
                   {"tasks_submitted", info.tasks_submitted[r]},
                   {"rows", solver.solve_graph().local_count[r]}});
  }
  return {{"distributed_solves", solver.mpi_solves()},
          {"columns", info.nrhs},
          {"sent_bytes", sent},
          {"predicted_sent_bytes", one.total * static_cast<double>(info.nrhs)},
          {"factor_bytes_moved", one.factor_bytes * static_cast<double>(info.nrhs)},
          {"t_s", info.seconds},
          {"per_rank", per}};
}

/// The distributed pipeline (SolveArgs::mpi): every rank runs it; rank 0's
/// report is the one printed. Every error is agreed on by all ranks.
Status run_mpi(const SolveArgs& a, Report& r, MPI_Comm comm) {
  int rank = 0, nranks = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &nranks);
  CscMatrix A;
  std::string source;
  auto t0 = clock_type::now();
  Status st = agree_status(load_matrix(a.file, A, source), comm);
  r.j["file"] = source;
  if (!st.ok()) return st;
  r.j["t_read_s"] = seconds_since(t0);
  r.j.update(matrix_keys(A));
  std::vector<double> B;
  idx_t nrhs = 0;
  st = agree_status(rank == 0 ? load_rhs(a, A, B, nrhs) : Status::success(), comm);  // b lives on rank 0
  if (!st.ok()) return st;
  r.j["nrhs"] = nrhs;
  Solver solver;
  const int per_rank = a.ncpu > 0 ? a.ncpu : std::max(1, static_cast<int>(std::thread::hardware_concurrency()) / nranks);
  st = agree_status(solver.analyse(A, analysis_options(a), graph_options(a, per_rank * nranks)), comm);
  if (!st.ok()) return st;
  r.j.update(analysis_keys(solver));
  unbind_when_sharing_a_node(comm);
  std::unique_ptr<StarpuRuntime> rt;
  RuntimeOptions ro(a.ncpu, a.ncuda, a.sched);
  ro.mpi_comm = &comm;
  st = agree_status(StarpuRuntime::start(ro, rt), comm);
  if (!st.ok()) return st;
  r.j["scheduler"] = rt->scheduler();
  r.j["cpu_workers"] = rt->cpu_workers();
  r.j["cuda_workers"] = rt->cuda_workers();
  r.j["gpus"] = rt->gpus();
  FactorOptions fo;
  fo.pivot_tol = a.pivot_tol;
  fo.watchdog_seconds = a.watchdog;
  fo.method = factor_method(a.method);
  fo.refine_steps = a.refine;
  for (int it = 0; it < a.repeat && st.ok(); ++it) {
    st = solver.factorize_mpi(A, fo, comm);
    const FactorStats& fs = solver.stats().factor;
    r.j["t_factor_s"] = fs.seconds;
    r.j["gflops"] = fs.seconds > 0 ? fs.flops / fs.seconds * 1e-9 : 0.0;
  }
  if (solver.mapping().nranks == nranks) {  // the graph as mapped (slots per rank)
    describe_graph(solver.graph(), r);
    r.j["tasks"] = solver.graph().tasks.size();
    r.j["mpi"] = mpi_report(solver, comm);
  }
  if (!st.ok()) return st;
  r.j["min_pivot_ratio"] = solver.min_pivot_ratio();
  r.j["method"] = "llt";
  // The right-hand sides live on rank 0: the solve scatters them to the
  // ranks owning the factor and gathers the solution back (collective).
  long long nrhs_all = nrhs;
  MPI_Bcast(&nrhs_all, 1, MPI_LONG_LONG, 0, comm);
  std::vector<double> X = B;
  t0 = clock_type::now();
  Status solved = solver.solve_mpi(root_layout(A.n, nranks), rank == 0 ? X.data() : nullptr,
                                   static_cast<idx_t>(nrhs_all), std::max<idx_t>(1, A.n), comm);
  r.j["t_solve_s"] = seconds_since(t0);
  r.j["refine_steps"] = solver.stats().refine.steps;
  r.j["mpi"]["solve_phase"] = mpi_solve_report(solver);
  if (rank == 0) {
    double berr = 0.0;
    for (idx_t c = 0; solved.ok() && c < nrhs; ++c)
      berr = std::max(berr, backward_error(A, X.data() + c * A.n, B.data() + c * A.n));
    if (solved.ok()) r.j["backward_error"] = berr;
    if (solved.ok() && !std::isfinite(berr))
      solved = Status::error(StatusCode::runtime_error, "the solution or the right-hand side is not finite");
  }
  return agree_status(solved, comm);
}
#endif

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

void print_human(const nlohmann::json& j) {
  auto get = [&](const char* k) { return j[k].is_null() ? std::string("-") : j[k].dump(); };
  std::cout << "starfront solve: " << j.value("file", std::string("?")) << ", " << get("nrhs")
            << " right-hand side(s)" << (j["rhs"].is_string() ? " from " + j["rhs"].get<std::string>() : " (b = A*1)") << "\n";
  std::cout << "  n " << get("n") << ", nnz(A) " << get("nnz_a") << " (lower), nnz(L) "
            << get("nnz_l") << ", flops " << (j["flops"].is_null() ? "-" : fmt("%.3e", j["flops"]))
            << ", largest front " << get("max_front") << "\n";
  std::cout << "  " << get("supernodes") << " supernodes, " << get("tasks") << " tasks, ordering "
            << j.value("ordering", std::string("-"));
  if (j["ordering_used"].is_string() && j["amalgamation_used"].is_string())
    std::cout << " (" << j["ordering_used"].get<std::string>() << ", " << j["amalgamation_used"].get<std::string>()
              << " amalgamation"
              << (!j["latency_rule"].is_object() ? ""
                  : j["latency_rule"]["chose_critical_path"] == true ? ", chosen by the latency rule"
                                                                     : ", kept by the latency rule")
              << ")";
  std::cout << ", executor " << j.value("executor", std::string("-"));
  if (!j["scheduler"].is_null())
    std::cout << " (scheduler " << j["scheduler"].get<std::string>() << ", "
              << j["cpu_workers"] << " CPU + " << j["cuda_workers"] << " CUDA workers"
              << (j["mpi"].is_object() ? " per rank)" : ")");
  std::cout << "\n";
  if (j["blas_core"].is_object()) {
    const auto& b = j["blas_core"];
    if (b["name"] != b["detected_by_openblas"])
      std::cout << "  CPU BLAS: OpenBLAS " << b["name"].get<std::string>() << " kernels (OPENBLAS_CORETYPE set by starfront: "
                << "this OpenBLAS took the CPU for " << b["detected_by_openblas"].get<std::string>() << ")\n";
    else if (!b["recommended"].is_null())
      std::cout << "  CPU BLAS: OpenBLAS " << b["name"].get<std::string>() << " kernels, slow on this CPU: set OPENBLAS_CORETYPE="
                << b["recommended"].get<std::string>() << "\n";
  }
  if (!j["t_factor_s"].is_null())
    std::cout << "  analysis " << fmt("%.4f", j["t_analyse_s"]) << " s, factorisation "
              << fmt("%.4f", j["t_factor_s"]) << " s (" << fmt("%.3g", j["gflops"])
              << " GFLOP/s), solve " << (j["t_solve_s"].is_null() ? "-" : fmt("%.4f", j["t_solve_s"]))
              << " s\n";
  if (!j["inertia"].is_null())
    std::cout << "  method " << j["method"].get<std::string>() << ", inertia ("
              << j["inertia"]["positive"] << ", " << j["inertia"]["negative"] << ", "
              << j["inertia"]["zero"] << ")"
              << (j["inertia_guaranteed"].get<bool>() ? "" : " (not guaranteed: perturbed or below-threshold pivots)")
              << ", perturbed pivots " << j["perturbed_pivots"] << ", delayed pivots "
              << j["delayed_pivots"] << ", 2x2 pivots " << j["two_by_two_pivots"] << "\n";
  if (j["mpi"].is_object()) {
    const auto& m = j["mpi"];
    double peak = 0;
    for (const auto& pr : m["per_rank"]) peak = std::max(peak, pr["memory"]["measured_peak_rss"].get<double>());
    std::cout << "  MPI: " << m["ranks"] << " ranks, sent " << fmt("%.3g", m["sent_bytes"].get<double>() * 1e-6)
              << " MB (predicted " << fmt("%.3g", m["predicted_sent_bytes"].get<double>() * 1e-6)
              << ", lower bound " << fmt("%.3g", m["lower_bound_bytes"].get<double>() * 1e-6)
              << ")";
    if (m.contains("solve_phase"))
      std::cout << "; distributed solve sent " << fmt("%.3g", m["solve_phase"]["sent_bytes"].get<double>() * 1e-6)
                << " MB (factor of " << fmt("%.3g", m["factor_bytes"].get<double>() * 1e-6) << " MB not moved)";
    std::cout << "; largest peak RSS of a rank " << fmt("%.0f", peak / 1048576.0) << " MiB (--json: per rank)\n";
  }
  if (!j["backward_error"].is_null())
    std::cout << "  backward error " << fmt("%.3e", j["backward_error"]) << " after "
              << get("refine_steps") << " refinement step(s)\n";
  if (j["trace_dir"].is_string())
    std::cout << "  trace: " << j["trace_dir"].get<std::string>()
              << " (paje.trace for ViTE, dag.dot, tasks.rec, trace.rec; starfront trace summary|gantt "
              << j["trace_dir"].get<std::string>() << ")\n";
}

}  // namespace

Status load_matrix(const std::string& file, CscMatrix& A, std::string& source) {
  if (file.empty()) {
    source = "built-in 3D 7-point Laplacian 30^3 (no FILE given)";
    return laplace3d(30, 7, A);
  }
  source = file;
  return read_matrix_market(file, A);
}

nlohmann::json matrix_keys(const CscMatrix& A) { return {{"n", A.n}, {"nnz_a", A.nnz()}}; }

nlohmann::json analysis_keys(const Solver& solver) {
  const SymbolicFactor& S = solver.symbolic();
  nlohmann::json j;
  j["t_analyse_s"] = solver.stats().t_analyse_s;
  j["nnz_l"] = S.nnz_l;
  j["nnz_l_exact"] = S.nnz_l_exact;
  j["flops"] = S.flops;
  j["flops_exact"] = S.flops_exact;
  j["max_front"] = S.max_front;
  j["supernodes"] = S.nsuper;
  j["ordering_used"] = ordering_method_name(S.ordering_used);
  j["tree_critical_path_s"] = S.critical_path_s;
  j["tree_critical_path_fronts"] = S.critical_path_fronts;
  j["amalgamation_used"] = !S.amalgamated ? "none" : S.critical_path_amalgamation ? "critical-path" : "relaxed";
  const LatencyRuleReport& lr = S.latency_rule;
  j["latency_rule"] = lr.applied ? nlohmann::json{{"chose_critical_path", lr.critical_path_chosen},
                                                  {"front_limit", lr.front_limit},
                                                  {"default_tree_critical_path_s", lr.flops_path_s},
                                                  {"default_max_front", lr.flops_max_front},
                                                  {"critical_path_tree_critical_path_s",
                                                   lr.path_max_front >= 0 ? nlohmann::json(lr.path_path_s) : nlohmann::json()},
                                                  {"critical_path_max_front",
                                                   lr.path_max_front >= 0 ? nlohmann::json(lr.path_max_front) : nlohmann::json()}}
                                 : nlohmann::json();
  return j;
}

FactorMethod factor_method(const std::string& name) {
  return name == "ldlt"             ? FactorMethod::ldlt
         : name == "quasi-definite" ? FactorMethod::quasi_definite
         : name == "auto"           ? FactorMethod::automatic
                                    : FactorMethod::llt;
}

AnalysisOptions analysis_options(const SolveArgs& a) {
  AnalysisOptions ao;
  set_ordering_by_name(a.ordering, ao);  // checked by the parser (scotch when unknown)
  ao.relax_critical_path = a.relax_path;
  ao.relax_max_front = a.max_front;
  if (a.gpu_graph && a.latency_rule && !a.relax_path && a.max_front == 0 && !a.mpi && a.executor != "starpu-mpi")
    ao.latency_rule_front = kGpuFusedFront;
  return ao;
}

GraphOptions graph_options(const SolveArgs& a, int workers) {
  GraphOptions g = a.gpu_graph ? gpu_graph_options() : GraphOptions{};
  g.workers = std::max(1, workers);
  g.tile_size = a.tile_size;
  g.tile_threshold = a.tile_threshold;
  g.subtree_ratio = a.subtree_ratio;
  g.fuse_subtrees = !a.no_fuse;
  g.tile = !a.no_tile;
  (void)parse_slot_policy(a.slots, g.slots);  // checked by check_solve_args
  return g;
}

std::string check_plan_args(const SolveArgs& a) {
  if (a.ncpu == 0 || a.ncpu < -1) return "--workers must be >= 1, or -1 for this machine's cores";
  if (a.ncpu > kMaxPlanWorkers) return "--workers must be at most " + std::to_string(kMaxPlanWorkers);
  SolveArgs rest = a;
  rest.ncpu = -1;  // checked above; the other values as for solve
  return check_solve_args(rest);
}

std::string check_solve_args(const SolveArgs& a) {
  const int cores = static_cast<int>(std::thread::hardware_concurrency());
  if (a.ncpu == 0 || a.ncpu < -1) return "--ncpu must be >= 1, or -1 for all cores";
  if (cores > 0 && a.ncpu > cores)
    return "--ncpu " + std::to_string(a.ncpu) + " exceeds the " + std::to_string(cores) +
           " hardware threads of this machine";
  if (a.ncuda < 0) return "--ncuda must be >= 0";
  if (a.tiles_on_gpu_only && a.ncuda < 1) return "--tiles-on-gpu-only needs --ncuda >= 1";
  if (!std::isfinite(a.pivot_tol) || (a.pivot_tol < 0 && a.pivot_tol != -1.0))
    return "--pivot-tol must be a finite number >= 0, or -1 for n*eps";
  if (a.repeat < 1) return "--repeat must be >= 1";
  if (!(a.watchdog >= 0) || !std::isfinite(a.watchdog)) return "--watchdog must be a finite number >= 0";
  if (a.refine < 0 || a.refine > 100) return "--refine must be in 0..100";
  if (!(a.ldlt_threshold > 0 && a.ldlt_threshold <= 0.5)) return "--ldlt-threshold must be in (0, 0.5]";
  if (!(a.perturbation > 0 && a.perturbation < 1)) return "--perturbation must be in (0, 1)";
  if (a.tile_size < 1 || a.tile_threshold < 1) return "--tile-size and --tile-threshold must be >= 1";
  if (!(a.subtree_ratio > 0) || !std::isfinite(a.subtree_ratio)) return "--subtree-ratio must be > 0";
  {
    SlotOptions so;
    if (const Status ps = parse_slot_policy(a.slots, so); !ps.ok()) return "--slots: " + ps.message;
  }
  if (a.executor == "starpu" || a.executor == "starpu-mpi") {
    if (Status st = check_scheduler(a.sched); !st.ok()) return st.message;
  }
  if (!a.trace.empty() && a.executor != "starpu") return "--trace needs --executor starpu";
  if (!a.trace.empty() && a.mpi) return "--trace is not supported with MPI yet";
  if (a.mpi && a.method != "llt" && a.method != "auto")
    return "--method " + a.method + ": the MPI executor runs Cholesky (llt) only";
  return {};
}

static int report(const SolveArgs& args, Report& r);
static nlohmann::json null_report();

bool launched_by_mpi() {
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", "PMI_SIZE"})
    if (std::getenv(v)) return true;
  return false;
}

int run_solve(const SolveArgs& args) {
  Report r;
  if (args.mpi) {
#ifdef STARFRONT_HAVE_MPI
    int provided = 0;
    MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided);
    int code = 1;
    try {
      code = report(args, r);
    } catch (const std::bad_alloc&) {
      std::cerr << "starfront solve: out_of_memory: not enough memory for this problem\n";
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPI_Finalize();
    return code;
#else
    const std::string why = "this starfront was built without MPI (STARFRONT_MPI=OFF)";
    if (args.json) print_usage_error_json(why);
    std::cerr << "starfront solve: " << why << "\n";
    return 2;
#endif
  }
  try {
    return report(args, r);
  } catch (const std::bad_alloc&) {
    // What the run had filled stays (its memory is released by now); the
    // report still gets its one object, as every other failure's does.
    r.status = Status::error(StatusCode::out_of_memory, "out of memory");
    if (args.json) {
      nlohmann::json full = null_report();  // every key, should it fail before report() filled them
      if (r.j.is_object()) full.update(r.j);
      r.j = std::move(full);
      r.j["status"] = status_name(r.status.code);
      r.j["error"] = r.status.message;
      std::cout << r.j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << std::endl;
    }
    std::cerr << "starfront solve: out_of_memory: not enough memory for this problem\n";
    return 1;
  }
}

/// Every key of the `solve --json` report, null: every report (success,
/// failure at any stage, usage error, out of memory) has exactly these keys
/// (the test Cli.JsonReportHasTheSameKeysOnEveryOutcome checks it).
static nlohmann::json null_report() {
  nlohmann::json j;
  for (const char* k : {"status", "error", "failed_column", "pivot", "method_requested", "file", "rhs",
                        "executor", "ordering", "relax_path", "max_front_cap", "trace_dir", "mpi",
                        "n", "nnz_a", "nnz_l", "nnz_l_exact", "flops", "flops_exact", "max_front",
                        "supernodes", "tasks", "t_read_s", "t_analyse_s", "t_factor_s",
                        "t_solve_s", "gflops", "backward_error", "nrhs", "scheduler",
                        "cpu_workers", "cuda_workers", "gpus", "tasks_by_kind", "critical_path_flops",
                        "critical_path_est_s", "mean_task_s", "factor_phases_s", "min_pivot_ratio", "memory",
                        "slots_policy", "method", "inertia", "perturbed_pivots", "delayed_pivots",
                        "two_by_two_pivots", "inertia_guaranteed", "below_threshold_pivots",
                        "refine_steps", "blas_core", "ordering_used", "tree_critical_path_s",
                        "tree_critical_path_fronts", "amalgamation_used", "latency_rule"})
    j[k] = nullptr;
  return j;
}

void print_usage_error_json(const std::string& message) {
  nlohmann::json j = null_report();
  j["status"] = "usage_error";
  j["error"] = message;
  std::cout << j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << std::endl;
}

/// Runs the pipeline and prints the report; returns the exit status.
static int report(const SolveArgs& args, Report& r) {
  // Every documented key is present; null where the run did not get that far
  // or the key does not apply. The options echoed back are known before any
  // work, so a failure to read the matrix or the right-hand side has them too.
  r.j.update(null_report());
  r.j["method_requested"] = args.method;
  r.j["executor"] = args.mpi ? std::string("starpu-mpi") : args.executor;
  r.j["ordering"] = args.ordering;
  r.j["relax_path"] = args.relax_path;
  r.j["max_front_cap"] = args.max_front;
  if (!args.rhs.empty()) r.j["rhs"] = args.rhs;
  {
    // The CPU BLAS kernels: OpenBLAS's core, and whether starfront set
    // OPENBLAS_CORETYPE because OpenBLAS did not know this CPU (blas_core.hpp).
    const BlasCore b = blas_core();
    r.j["blas_core"] = {{"name", b.name},
                        {"detected_by_openblas", b.detected},
                        {"recommended", b.recommended.empty() ? nlohmann::json(nullptr) : nlohmann::json(b.recommended)}};
  }
  int rank = 0, nranks = 1;
#ifdef STARFRONT_HAVE_MPI
  if (args.mpi) {
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    r.status = run_mpi(args, r, MPI_COMM_WORLD);
  } else {
    r.status = run(args, r);
  }
#else
  r.status = run(args, r);
#endif
  r.j["status"] = status_name(r.status.code);
  r.j["error"] = r.status.ok() ? nullptr : nlohmann::json(r.status.message);
  if (r.status.code == StatusCode::not_positive_definite || r.status.code == StatusCode::singular) {
    r.j["failed_column"] = r.status.column + 1;
    r.j["pivot"] = r.status.pivot;
  }
  if (rank == 0 && args.json)
    std::cout << r.j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << std::endl;
  else if (rank == 0 && r.status.ok())
    print_human(r.j);
  if (!r.status.ok()) {  // every rank says it (the ranks agree on the status)
    // One write per line: ranks share stderr through mpirun, and pieces
    // written separately interleave under load.
    const std::string line =
        "starfront solve: " +
        (nranks > 1 ? "[rank " + std::to_string(rank) + " of " + std::to_string(nranks) + "] " : std::string()) +
        status_name(r.status.code) + ": " + r.status.message + "\n";
    std::fwrite(line.data(), 1, line.size(), stderr);
    std::fflush(stderr);
    return 1;
  }
  return 0;
}

}  // namespace starfront::tools
