// Reading the files that `starpu_fxt_tool` writes from an FxT trace (and the
// plan figures `starfront solve --trace` writes next to them) into plain
// structs. No StarPU headers: the files are text.
//
//   tasks.rec      one record per task (recutils: "Field: value" lines,
//                  records separated by blank lines): Name, Model, WorkerId,
//                  StartTime, EndTime (ms since StarPU started), JobId, ...
//   activity.data  tab-separated; "name <worker id> <worker name>" lines
//   paje.trace     Paje events; data transfers between memory nodes are
//                  links: "24 <time> <type> <container> <bytes> <src>mm<node> com_<id> ..."
//                  (start) and "19 <time> <type> <container> <bytes> <dst>mm<node> com_<id>" (end)
//   plan.json      written by starfront: the plan's task count and critical path
#pragma once

#include <iosfwd>
#include <map>
#include <string>
#include <vector>

#include "plan/task_graph.hpp"
#include "sparse/types.hpp"

namespace starfront::trace {

/// One task record of tasks.rec. Times are in milliseconds since StarPU
/// started (StarPU's clock); `worker` is StarPU's worker id.
struct TraceTask {
  std::string name;    ///< Name: the task's STARPU_NAME (starfront: task_name())
  std::string model;   ///< Model: perf-model symbol ("starfront_potrf"); empty for StarPU-internal tasks
  long long job_id = -1;
  int worker = -1;     ///< WorkerId; -1 when the record has none
  double start_ms = 0.0, end_ms = 0.0;
  bool timed = false;  ///< the record has StartTime and EndTime
  int line = 0;        ///< line of the record's first field in tasks.rec (1-based)
};

/// A data transfer between two memory nodes (paje.trace links).
struct Transfer {
  int src_node = -1, dst_node = -1;
  double bytes = 0.0;
  double start_ms = 0.0, end_ms = 0.0;
};

/// Figures of the plan that was traced (plan.json, written by `solve --trace`).
struct PlanFigures {
  long long tasks = 0;                ///< tasks of one factorisation (graph_stats)
  int repeat = 1;                     ///< factorisations in the trace (--repeat)
  double critical_path_seconds = 0.0; ///< estimated critical path of one factorisation, s
  double total_seconds = 0.0;         ///< estimated work of one factorisation on one core, s
  double factor_seconds = 0.0;        ///< measured wall time of the last factorisation, s
  std::string matrix;                 ///< the matrix file (or the built-in problem)
};

/// Everything read from a converted trace folder.
struct Trace {
  std::string dir;
  std::vector<TraceTask> tasks;             ///< every record of tasks.rec, in file order
  std::map<int, std::string> worker_names;  ///< worker id -> "CPU 0" (activity.data)
  std::vector<Transfer> transfers;          ///< completed transfers between memory nodes
  bool has_plan = false;                    ///< plan.json was present
  PlanFigures plan;
};

/// True for a task that starfront submitted: its model is "starfront_<kind>".
bool is_starfront_task(const TraceTask& t);

/// The kind of a starfront task, from its model "starfront_<kind>". Returns
/// false for any other task (StarPU-internal, or an unknown kind).
bool starfront_task_kind(const TraceTask& t, TaskKind& kind);

/// Parses tasks.rec content. `path` only names the file in messages.
/// Errors (parse_error, "path:line: ..."): a line that is not "Field: value",
/// a malformed number, a starfront task without WorkerId/StartTime/EndTime or
/// ending before it starts.
Status parse_tasks_rec(std::istream& in, const std::string& path, std::vector<TraceTask>& out);

/// Parses activity.data content: the worker names. Other lines are ignored.
Status parse_activity(std::istream& in, const std::string& path, std::map<int, std::string>& out);

/// Parses paje.trace content: the completed transfers between memory nodes
/// (start/end links matched by their com_<id> key). Other events are ignored.
Status parse_paje_transfers(std::istream& in, const std::string& path, std::vector<Transfer>& out);

/// Parses plan.json content.
Status parse_plan_json(std::istream& in, const std::string& path, PlanFigures& out);

/// Writes plan.json content.
void write_plan_json(const PlanFigures& plan, std::ostream& os);

/// Reads a converted trace folder: tasks.rec (required), activity.data and
/// paje.trace (required: starpu_fxt_tool always writes them), plan.json
/// (optional). Errors: io_error naming a missing folder or file,
/// parse_error with file and line.
Status read_trace(const std::string& dir, Trace& out);

}  // namespace starfront::trace
