#include "plan_command.hpp"

#include <cstdio>
#include <fstream>
#include <iostream>
#include <thread>

#include "api/solver.hpp"

namespace starfront::tools {
namespace {

Status write_file(const std::string& path, const std::string& what, const auto& writer) {
  std::ofstream os(path);
  if (os) writer(os);
  if (!os) return Status::error(StatusCode::io_error, "cannot write the " + what + " to '" + path + "'");
  return Status::success();
}

Status run(const SolveArgs& a, const std::string& dot_file, const std::string& json_file) {
  CscMatrix A;
  std::string source;
  Status st = load_matrix(a.file, A, source);
  if (!st.ok()) return st;
  const int workers = a.ncpu > 0 ? a.ncpu : static_cast<int>(std::thread::hardware_concurrency());
  Solver solver;
  st = solver.analyse(A, analysis_options(a.ordering), graph_options(a, workers));
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
  if (!dot_file.empty()) {
    st = write_file(dot_file, "DOT graph", [&](std::ostream& os) { write_dot(G, os); });
    if (!st.ok()) return st;
  }
  if (!json_file.empty())
    st = write_file(json_file, "JSON graph", [&](std::ostream& os) { os << graph_json(G) << "\n"; });
  return st;
}

}  // namespace

int run_plan(const SolveArgs& args, const std::string& dot_file, const std::string& json_file) {
  const Status st = run(args, dot_file, json_file);
  if (st.ok()) return 0;
  std::cerr << "starfront plan: " << status_name(st.code) << ": " << st.message << "\n";
  return 1;
}

}  // namespace starfront::tools
