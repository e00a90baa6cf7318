// Graphviz DOT and JSON output of a task graph.
#include <nlohmann/json.hpp>
#include <ostream>

#include "plan/task_graph.hpp"

namespace starfront {
namespace {

const char* kind_colour(TaskKind k) {
  static const char* c[] = {"#8dd3c7", "#ffffb3", "#bebada", "#fb8072",
                            "#80b1d3", "#fdb462", "#b3de69", "#fccde5"};
  return c[static_cast<int>(k)];
}

}  // namespace

void write_dot(const TaskGraph& G, std::ostream& os) {
  const auto preds = task_dependencies(G);
  os << "digraph starfront {\n  node [shape=box, style=filled, fontname=\"Helvetica\"];\n";
  for (std::size_t t = 0; t < G.tasks.size(); ++t)
    os << "  t" << t << " [label=\"" << task_name(G, G.tasks[t]) << "\", fillcolor=\""
       << kind_colour(G.tasks[t].kind) << "\"];\n";
  for (std::size_t t = 0; t < G.tasks.size(); ++t)
    for (idx_t p : preds[t]) os << "  t" << p << " -> t" << t << ";\n";
  os << "}\n";
}

nlohmann::json graph_json_value(const TaskGraph& G) {
  using nlohmann::json;
  json tasks = json::array(), blocks = json::array();
  for (std::size_t t = 0; t < G.tasks.size(); ++t) {
    const Task& k = G.tasks[t];
    json acc = json::array();
    for (idx_t a = k.acc_begin; a < k.acc_end; ++a)
      acc.push_back({G.accesses[a].block, access_mode_name(G.accesses[a].mode)});
    tasks.push_back({{"id", t},           {"kind", task_kind_name(k.kind)}, {"name", task_name(G, k)},
                     {"front", k.front},  {"first_front", k.first_front},   {"child", k.child},
                     {"i", k.i},          {"j", k.j},                       {"k", k.k},
                     {"flops", k.flops},  {"priority", k.priority},         {"accesses", acc}});
  }
  static const char* bk[] = {"panel", "tile", "cb"};
  for (std::size_t b = 0; b < G.blocks.size(); ++b) {
    const Block& x = G.blocks[b];
    blocks.push_back({{"id", b},          {"kind", bk[static_cast<int>(x.kind)]}, {"front", x.front},
                      {"row0", x.row0},   {"col0", x.col0},   {"rows", x.rows},   {"cols", x.cols},
                      {"ld", x.ld},       {"offset", x.offset}, {"lower", x.lower}});
  }
  const GraphStats s = graph_stats(G);
  json by_kind;
  for (int k = 0; k < kTaskKinds; ++k) by_kind[task_kind_name(static_cast<TaskKind>(k))] = s.by_kind[k];
  json stats = {{"tasks", s.tasks},
                {"tasks_by_kind", by_kind},
                {"total_flops", s.total_flops},
                {"critical_path_flops", s.critical_path_flops},
                {"critical_path_seconds", s.critical_path_seconds},
                {"total_seconds", s.total_seconds},
                {"fronts", s.fronts},
                {"fronts_in_subtrees", s.fronts_in_subtrees},
                {"tiled_fronts", s.tiled_fronts}};
  return json{{"tasks", tasks}, {"blocks", blocks}, {"stats", stats}};
}

std::string graph_json(const TaskGraph& G) { return graph_json_value(G).dump(); }

}  // namespace starfront
