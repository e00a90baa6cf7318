// Summary of a converted trace: per task kind and per worker, counts and
// times, share of the makespan, idle share, makespan against the plan's
// critical-path estimate, transfers between memory nodes.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "trace_files.hpp"
#include "plan/task_graph.hpp"

namespace starfront::trace {

/// Count and total busy time of a group of tasks (mean = total / count).
struct TaskTimes {
  long long count = 0;
  double total_ms = 0.0;  ///< sum of EndTime - StartTime, ms
};

/// One worker's figures over the makespan.
struct WorkerSummary {
  int id = -1;
  std::string name;                       ///< "CPU 0" (activity.data) or "worker <id>"
  TaskTimes all;                          ///< its starfront tasks
  TaskTimes by_kind[kTaskKinds];
};

/// Bytes moved from one memory node to another.
struct TransferSummary {
  int src_node = -1, dst_node = -1;
  long long count = 0;
  double bytes = 0.0;
};

/// What `starfront trace summary` reports. "Starfront tasks" are the records
/// whose model is starfront_<kind>; the others are StarPU-internal (data
/// acquisition callbacks, unregistration) and only counted.
struct TraceSummary {
  std::string dir;
  long long tasks = 0;          ///< starfront tasks recorded
  long long other_tasks = 0;    ///< StarPU-internal task records
  long long unparsed_names = 0; ///< starfront tasks whose name parse_task_name() rejects
  std::string first_unparsed;   ///< the first such name (for the message)
  int windows = 1;              ///< factorisations the makespan is summed over
  /// Sum over factorisations of (last task end - first task start), ms. With
  /// plan.json and tasks == plan tasks x repeat, the tasks are cut into
  /// factorisations by job id (submission order); otherwise one window.
  double makespan_ms = 0.0;
  TaskTimes by_kind[kTaskKinds];
  std::vector<WorkerSummary> workers;   ///< every named worker and every worker that ran a task, by id
  std::vector<TransferSummary> transfers;  ///< by (source, destination) node
  bool has_plan = false;
  PlanFigures plan;

  /// Worker time available during the makespan: makespan x workers, ms.
  double capacity_ms() const { return makespan_ms * static_cast<double>(workers.size()); }
};

/// Computes the summary of a trace.
TraceSummary summarize(const Trace& trace);

/// Human-readable report (several lines, ends with a newline). Times in
/// seconds; shares in percent.
std::string format_summary(const TraceSummary& s);

/// The same as one JSON object (times in seconds, shares as fractions, bytes).
nlohmann::json summary_json(const TraceSummary& s);

}  // namespace starfront::trace
