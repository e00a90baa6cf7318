#include "summary.hpp"

#include <algorithm>
#include <cstdio>
#include <map>

#include "task_name_parse.hpp"

namespace starfront::trace {
namespace {

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

/// Sum over windows of (last end - first start): one window, or one per
/// factorisation when the plan says how many tasks each has.
double makespan(std::vector<const TraceTask*> tasks, long long per_window, int& windows) {
  if (tasks.empty()) return 0.0;
  std::sort(tasks.begin(), tasks.end(),
            [](const TraceTask* a, const TraceTask* b) { return a->job_id < b->job_id; });
  const std::size_t w = per_window > 0 ? static_cast<std::size_t>(per_window) : tasks.size();
  double total = 0.0;
  windows = 0;
  for (std::size_t b = 0; b < tasks.size(); b += w) {
    double t0 = tasks[b]->start_ms, t1 = tasks[b]->end_ms;
    for (std::size_t i = b; i < std::min(tasks.size(), b + w); ++i) {
      t0 = std::min(t0, tasks[i]->start_ms);
      t1 = std::max(t1, tasks[i]->end_ms);
    }
    total += t1 - t0;
    ++windows;
  }
  return total;
}

std::string bytes_text(double b) {
  if (b >= 1e9) return fmt("%.2f GB", b * 1e-9);
  if (b >= 1e6) return fmt("%.2f MB", b * 1e-6);
  if (b >= 1e3) return fmt("%.2f kB", b * 1e-3);
  return fmt("%.0f B", b);
}

nlohmann::json times_json(const TaskTimes& t, double capacity_ms) {
  return {{"count", t.count},
          {"total_s", t.total_ms * 1e-3},
          {"mean_s", t.count ? t.total_ms * 1e-3 / static_cast<double>(t.count) : 0.0},
          {"share", capacity_ms > 0 ? t.total_ms / capacity_ms : 0.0}};
}

}  // namespace

TraceSummary summarize(const Trace& trace) {
  TraceSummary s;
  s.dir = trace.dir;
  s.has_plan = trace.has_plan;
  s.plan = trace.plan;
  std::map<int, WorkerSummary> workers;
  for (const auto& [id, name] : trace.worker_names) workers[id] = WorkerSummary{id, name, {}, {}};
  std::vector<const TraceTask*> ours;
  for (const TraceTask& t : trace.tasks) {
    TaskKind k;
    if (!starfront_task_kind(t, k)) {
      ++s.other_tasks;
      continue;
    }
    ours.push_back(&t);
    ++s.tasks;
    ParsedTaskName p;
    if (!parse_task_name(t.name, p) || p.kind != k) {
      if (s.unparsed_names++ == 0) s.first_unparsed = t.name;
    }
    const double d = t.end_ms - t.start_ms;
    s.by_kind[static_cast<int>(k)].count++;
    s.by_kind[static_cast<int>(k)].total_ms += d;
    WorkerSummary& w = workers[t.worker];
    if (w.name.empty()) {
      w.id = t.worker;
      w.name = "worker " + std::to_string(t.worker);
    }
    w.all.count++;
    w.all.total_ms += d;
    w.by_kind[static_cast<int>(k)].count++;
    w.by_kind[static_cast<int>(k)].total_ms += d;
  }
  const bool by_factorisation =
      s.has_plan && s.plan.tasks > 0 && s.tasks == s.plan.tasks * s.plan.repeat;
  s.makespan_ms = makespan(ours, by_factorisation ? s.plan.tasks : 0, s.windows);
  for (auto& [id, w] : workers) s.workers.push_back(w);
  std::map<std::pair<int, int>, TransferSummary> tr;
  for (const Transfer& x : trace.transfers) {
    TransferSummary& t = tr[{x.src_node, x.dst_node}];
    t.src_node = x.src_node;
    t.dst_node = x.dst_node;
    t.count++;
    t.bytes += x.bytes;
  }
  for (auto& [key, t] : tr) s.transfers.push_back(t);
  return s;
}

std::string format_summary(const TraceSummary& s) {
  std::string o = "starfront trace summary: " + s.dir;
  if (s.has_plan && !s.plan.matrix.empty()) o += " (" + s.plan.matrix + ")";
  o += "\n  tasks: " + std::to_string(s.tasks) + " starfront";
  if (s.has_plan)
    o += " (plan: " + std::to_string(s.plan.tasks) + " per factorisation x " +
         std::to_string(s.plan.repeat) +
         (s.tasks == s.plan.tasks * s.plan.repeat ? ", all recorded)" : ", MISMATCH)");
  o += ", " + std::to_string(s.other_tasks) + " StarPU-internal\n";
  if (s.unparsed_names)
    o += "  warning: " + std::to_string(s.unparsed_names) + " task names do not parse, e.g. '" +
         s.first_unparsed + "'\n";
  o += "  makespan " + fmt("%.4f", s.makespan_ms * 1e-3) + " s (first task start to last task end";
  o += s.windows > 1 ? ", summed over " + std::to_string(s.windows) + " factorisations)" : ")";
  if (s.has_plan && s.plan.critical_path_seconds > 0 && s.makespan_ms > 0) {
    const double cp = s.plan.critical_path_seconds * s.windows;
    o += "\n  plan's critical-path estimate " + fmt("%.4f", cp) + " s: makespan / critical path " +
         fmt("%.2f", s.makespan_ms * 1e-3 / cp);
    if (s.plan.total_seconds > 0 && s.makespan_ms > 0)
      o += ", estimated work / makespan " + fmt("%.2f", s.plan.total_seconds * s.windows / (s.makespan_ms * 1e-3));
  }
  o += "\n\n  kind           count     total s      mean s   share\n";
  const double cap = s.capacity_ms();
  for (int k = 0; k < kTaskKinds; ++k) {
    const TaskTimes& t = s.by_kind[k];
    if (!t.count) continue;
    char line[160];
    std::snprintf(line, sizeof line, "  %-10s %9lld %11.4f %11.3e %6.1f%%\n",
                  task_kind_name(static_cast<TaskKind>(k)), t.count, t.total_ms * 1e-3,
                  t.total_ms * 1e-3 / static_cast<double>(t.count), cap > 0 ? 100.0 * t.total_ms / cap : 0.0);
    o += line;
  }
  o += "\n  worker         tasks      busy s      mean s    busy    idle\n";
  for (const WorkerSummary& w : s.workers) {
    char line[200];
    const double busy = s.makespan_ms > 0 ? w.all.total_ms / s.makespan_ms : 0.0;
    std::snprintf(line, sizeof line, "  %-10s %9lld %11.4f %11.3e %6.1f%% %6.1f%%\n", w.name.c_str(),
                  w.all.count, w.all.total_ms * 1e-3,
                  w.all.count ? w.all.total_ms * 1e-3 / static_cast<double>(w.all.count) : 0.0,
                  100.0 * busy, 100.0 * std::max(0.0, 1.0 - busy));
    o += line;
  }
  o += "\n  transfers between memory nodes:";
  if (s.transfers.empty()) o += " none\n";
  else {
    o += "\n";
    for (const TransferSummary& t : s.transfers)
      o += "    node " + std::to_string(t.src_node) + " -> node " + std::to_string(t.dst_node) + ": " +
           std::to_string(t.count) + " transfers, " + bytes_text(t.bytes) + " (" +
           fmt("%.0f", t.bytes) + " bytes)\n";
  }
  return o;
}

nlohmann::json summary_json(const TraceSummary& s) {
  const double cap = s.capacity_ms();
  nlohmann::json j;
  j["dir"] = s.dir;
  j["tasks"] = s.tasks;
  j["other_tasks"] = s.other_tasks;
  j["unparsed_names"] = s.unparsed_names;
  j["factorisations"] = s.windows;
  j["makespan_s"] = s.makespan_ms * 1e-3;
  j["plan"] = nullptr;
  if (s.has_plan)
    j["plan"] = {{"tasks", s.plan.tasks},
                 {"repeat", s.plan.repeat},
                 {"critical_path_est_s", s.plan.critical_path_seconds},
                 {"total_est_s", s.plan.total_seconds},
                 {"matrix", s.plan.matrix}};
  j["makespan_over_critical_path"] =
      s.has_plan && s.plan.critical_path_seconds > 0
          ? nlohmann::json(s.makespan_ms * 1e-3 / (s.plan.critical_path_seconds * s.windows))
          : nlohmann::json(nullptr);
  nlohmann::json kinds = nlohmann::json::object();
  for (int k = 0; k < kTaskKinds; ++k)
    if (s.by_kind[k].count) kinds[task_kind_name(static_cast<TaskKind>(k))] = times_json(s.by_kind[k], cap);
  j["by_kind"] = kinds;
  nlohmann::json ws = nlohmann::json::array();
  for (const WorkerSummary& w : s.workers) {
    nlohmann::json wj = times_json(w.all, s.makespan_ms);
    wj["id"] = w.id;
    wj["name"] = w.name;
    wj["idle_share"] = s.makespan_ms > 0 ? std::max(0.0, 1.0 - w.all.total_ms / s.makespan_ms) : 0.0;
    nlohmann::json wk = nlohmann::json::object();
    for (int k = 0; k < kTaskKinds; ++k)
      if (w.by_kind[k].count) wk[task_kind_name(static_cast<TaskKind>(k))] = times_json(w.by_kind[k], s.makespan_ms);
    wj["by_kind"] = wk;
    ws.push_back(wj);
  }
  j["workers"] = ws;
  nlohmann::json tr = nlohmann::json::array();
  for (const TransferSummary& t : s.transfers)
    tr.push_back({{"src_node", t.src_node}, {"dst_node", t.dst_node}, {"count", t.count}, {"bytes", t.bytes}});
  j["transfers"] = tr;
  return j;
}

}  // namespace starfront::trace
