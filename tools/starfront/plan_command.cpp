#include "plan_command.hpp"

#include <cstdio>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <thread>

#include "api/solver.hpp"
#include "plan/cb_slots.hpp"
#include "plan/slot_check.hpp"

namespace starfront::tools {
namespace {

Status write_file(const std::string& path, const std::string& what, const auto& writer) {
  std::ofstream os(path);
  if (os) writer(os);
  // A full disk (or /dev/full) fails only when the buffer reaches the file:
  // flush and close before judging the stream.
  if (os.is_open()) os.close();
  if (!os) return Status::error(StatusCode::io_error, "cannot write the " + what + " to '" + path + "'");
  return Status::success();
}

Status run(const SolveArgs& a, const std::string& dot_file, const std::string& json_file,
           idx_t check_orders) {
  CscMatrix A;
  std::string source;
  Status st = load_matrix(a.file, A, source);
  if (!st.ok()) return st;
  const int workers = a.ncpu > 0 ? a.ncpu : static_cast<int>(std::thread::hardware_concurrency());
  Solver solver;
  st = solver.analyse(A, analysis_options(a), graph_options(a, workers));
  if (!st.ok()) return st;
  const TaskGraph& G = solver.graph();
  const GraphStats s = graph_stats(G);
  std::printf("starfront plan: %s (n %lld, %lld supernodes, %d workers targeted)\n", source.c_str(),
              static_cast<long long>(A.n), static_cast<long long>(solver.symbolic().nsuper), workers);
  std::printf("  fronts: %lld in fused subtrees, %lld tiled, %lld as single tasks\n",
              static_cast<long long>(s.fronts_in_subtrees), static_cast<long long>(s.tiled_fronts),
              static_cast<long long>(s.fronts - s.fronts_in_subtrees - s.tiled_fronts));
  std::printf("  tasks: %lld =", static_cast<long long>(s.tasks));
  for (int k = 0; k < kTaskKinds; ++k)
    if (s.by_kind[k]) std::printf(" %s %lld", task_kind_name(static_cast<TaskKind>(k)), static_cast<long long>(s.by_kind[k]));
  std::printf("\n  work: %.4g flops (%.4g s estimated on one core)\n", s.total_flops, s.total_seconds);
  std::printf("  critical path: %.4g flops, %.4g s estimated (parallelism bound %.1f)\n",
              s.critical_path_flops, s.critical_path_seconds,
              s.critical_path_seconds > 0 ? s.total_seconds / s.critical_path_seconds : 0.0);
  const SymbolicFactor& sym = solver.symbolic();
  std::printf("  assembly tree: %.4g flops, largest front %lld; modelled critical path %.1f us over "
              "%lld fronts and %lld columns (front latency model of the fused GPU kernel)\n",
              sym.flops, static_cast<long long>(sym.max_front), sym.critical_path_s * 1e6,
              static_cast<long long>(sym.critical_path_fronts),
              static_cast<long long>(sym.critical_path_columns));
  if (const LatencyRuleReport& lr = sym.latency_rule; lr.applied) {
    if (lr.path_max_front < 0)
      std::printf("  latency rule: default analysis kept (a column count above %lld: no critical-path analysis "
                  "fits the fused kernel)\n",
                  static_cast<long long>(lr.front_limit));
    else
      std::printf("  latency rule: %s (critical-path analysis %.1f us, largest front %lld; default analysis "
                  "%.1f us, largest front %lld; limit %lld)\n",
                  lr.critical_path_chosen ? "critical-path analysis taken" : "default analysis kept",
                  lr.path_path_s * 1e6, static_cast<long long>(lr.path_max_front), lr.flops_path_s * 1e6,
                  static_cast<long long>(lr.flops_max_front), static_cast<long long>(lr.front_limit));
  }
  if (a.max_front > 0 && sym.max_front > a.max_front) {
    long long over = 0;
    for (idx_t f = 0; f < sym.nsuper; ++f) over += sym.front_order(f) > a.max_front;
    std::printf("  %lld fronts above --max-front %lld: fronts of the fundamental partition, which the "
                "cap does not split\n",
                over, static_cast<long long>(a.max_front));
  }
  const MemoryEstimates me = solver.memory();
  auto mb = [](double bytes) { return bytes / 1048576.0; };
  std::printf("  memory (MiB): factors %.2f; contribution blocks: planned %.2f in %lld slots (%s, %lld "
              "added dependencies), lower bound %.2f, private %.2f, level-synchronous stack %.2f; "
              "fused-subtree workspace %.2f per worker\n",
              mb(me.factors), mb(me.cb_planned), static_cast<long long>(me.slots),
              slot_policy_name(G.slot_policy), static_cast<long long>(me.added_deps),
              mb(me.cb_lower_bound), mb(me.cb_private), mb(me.cb_level_stack),
              mb(me.subtree_workspace));
  if (check_orders > 0) {
    std::fflush(stdout);  // the plan first: the check may take a while
    const SlotCheckResult c = check_slots(G, check_orders, 20261130);
    std::printf("  slot check: %lld random execution orders, %lld with a violation%s%s\n",
                static_cast<long long>(c.orders), static_cast<long long>(c.violations),
                c.ok() ? "" : "; first: ", c.first.c_str());
    if (!c.ok())
      return Status::error(StatusCode::runtime_error,
                           "contribution-block slot plan is unsafe: " + c.first);
  }
  if (!dot_file.empty()) {
    st = write_file(dot_file, "DOT graph", [&](std::ostream& os) { write_dot(G, os); });
    if (!st.ok()) return st;
  }
  if (!json_file.empty()) {
    // The graph (graph_json_value: "tasks", "blocks", "stats") and, at the
    // top level, the matrix and analysis keys of `solve --json`, computed by
    // the same functions (matrix_keys, analysis_keys) from this analysis.
    nlohmann::json j = graph_json_value(G);
    j.update(matrix_keys(A));
    j.update(analysis_keys(solver));
    st = write_file(json_file, "JSON graph", [&](std::ostream& os) {
      os << j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
    });
  }
  return st;
}

}  // namespace

int run_plan(const SolveArgs& args, const std::string& dot_file, const std::string& json_file,
             idx_t check_slots) {
  const Status st = run(args, dot_file, json_file, check_slots);
  if (st.ok()) return 0;
  std::cerr << "starfront plan: " << status_name(st.code) << ": " << st.message << "\n";
  return 1;
}

}  // namespace starfront::tools
