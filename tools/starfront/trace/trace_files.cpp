#include "trace_files.hpp"

#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <istream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <unordered_map>

#include "task_name_parse.hpp"

namespace starfront::trace {
namespace {

Status parse_error(const std::string& path, int line, const std::string& what) {
  return Status::error(StatusCode::parse_error, path + ":" + std::to_string(line) + ": " + what);
}

/// Parses all of `s` as a finite double.
bool to_double(const std::string& s, double& v) {
  const char* b = s.data();
  const char* e = b + s.size();
  const auto [p, ec] = std::from_chars(b, e, v);
  return ec == std::errc() && p == e && std::isfinite(v);
}

/// Parses all of `s` as an integer.
template <class T>
bool to_int(const std::string& s, T& v) {
  const char* b = s.data();
  const char* e = b + s.size();
  const auto [p, ec] = std::from_chars(b, e, v);
  return ec == std::errc() && p == e;
}

std::vector<std::string> split_tabs(const std::string& line) {
  std::vector<std::string> f;
  std::size_t b = 0;
  for (;;) {
    const std::size_t t = line.find('\t', b);
    f.push_back(line.substr(b, t - b));
    if (t == std::string::npos) return f;
    b = t + 1;
  }
}

/// "mm3" (optionally with a file prefix before it) -> 3.
bool memnode_of(const std::string& container, int& node) {
  const std::size_t p = container.rfind("mm");
  return p != std::string::npos && to_int(container.substr(p + 2), node);
}

/// Checks and stores the record being read.
Status finish_record(TraceTask& t, bool has_worker, bool has_start, bool has_end,
                     const std::string& path, std::vector<TraceTask>& out) {
  t.timed = has_start && has_end;
  if (is_starfront_task(t)) {
    if (!has_worker || !t.timed)
      return parse_error(path, t.line, "task '" + t.name + "' lacks WorkerId, StartTime or EndTime");
    if (t.end_ms < t.start_ms)
      return parse_error(path, t.line, "task '" + t.name + "' ends before it starts");
  }
  out.push_back(std::move(t));
  return Status::success();
}

Status open(const std::string& path, std::ifstream& in) {
  in.open(path);
  if (!in) return Status::error(StatusCode::io_error, "cannot read '" + path + "'");
  return Status::success();
}

}  // namespace

namespace {
constexpr std::string_view kModelPrefix = "starfront_";
}  // namespace

bool is_starfront_task(const TraceTask& t) { return t.model.rfind(kModelPrefix, 0) == 0; }

bool starfront_task_kind(const TraceTask& t, TaskKind& kind) {
  return is_starfront_task(t) && parse_task_kind(std::string_view(t.model).substr(kModelPrefix.size()), kind);
}

Status parse_tasks_rec(std::istream& in, const std::string& path, std::vector<TraceTask>& out) {
  out.clear();
  std::string line;
  int lineno = 0;
  bool in_record = false, has_worker = false, has_start = false, has_end = false;
  TraceTask t;
  while (std::getline(in, line)) {
    ++lineno;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) {
      if (in_record) {
        if (Status st = finish_record(t, has_worker, has_start, has_end, path, out); !st.ok()) return st;
        in_record = has_worker = has_start = has_end = false;
        t = TraceTask{};
      }
      continue;
    }
    if (line[0] == '#') continue;
    const std::size_t colon = line.find(": ");
    if (colon == std::string::npos || colon == 0) {
      if (line.back() == ':' && line.find(' ') == std::string::npos) {  // "Field:" with an empty value
        if (!in_record) t.line = lineno;
        in_record = true;
        continue;
      }
      return parse_error(path, lineno, "expected 'Field: value', got '" + line.substr(0, 80) + "'");
    }
    if (!in_record) t.line = lineno;
    in_record = true;
    const std::string key = line.substr(0, colon), value = line.substr(colon + 2);
    bool ok = true;
    if (key == "Name") t.name = value;
    else if (key == "Model") t.model = value;
    else if (key == "JobId") ok = to_int(value, t.job_id);
    else if (key == "WorkerId") ok = has_worker = to_int(value, t.worker);
    else if (key == "StartTime") ok = has_start = to_double(value, t.start_ms);
    else if (key == "EndTime") ok = has_end = to_double(value, t.end_ms);
    if (!ok) return parse_error(path, lineno, "bad " + key + " value '" + value + "'");
  }
  if (in.bad()) return Status::error(StatusCode::io_error, "error reading '" + path + "'");
  if (in_record) return finish_record(t, has_worker, has_start, has_end, path, out);
  return Status::success();
}

Status parse_activity(std::istream& in, const std::string& path, std::map<int, std::string>& out) {
  out.clear();
  std::string line;
  int lineno = 0;
  while (std::getline(in, line)) {
    ++lineno;
    if (line.rfind("name\t", 0) != 0) continue;
    const std::vector<std::string> f = split_tabs(line);
    int id = -1;
    if (f.size() < 3 || !to_int(f[1], id) || id < 0)
      return parse_error(path, lineno, "bad worker name line '" + line.substr(0, 80) + "'");
    out[id] = f[2];
  }
  if (in.bad()) return Status::error(StatusCode::io_error, "error reading '" + path + "'");
  return Status::success();
}

Status parse_paje_transfers(std::istream& in, const std::string& path, std::vector<Transfer>& out) {
  out.clear();
  std::unordered_map<std::string, Transfer> open_links;  // key com_<id> -> started transfer
  std::string line;
  int lineno = 0;
  while (std::getline(in, line)) {
    ++lineno;
    const bool start = line.rfind("24\t", 0) == 0, end = line.rfind("19\t", 0) == 0;
    if (!start && !end) continue;
    const std::vector<std::string> f = split_tabs(line);
    // id, time, type, container, value (bytes), memory-node container, key
    if (f.size() < 7 || f[6].rfind("com_", 0) != 0) continue;  // not a data transfer (e.g. steals)
    double time = 0.0, bytes = 0.0;
    int node = -1;
    if (!to_double(f[1], time) || !to_double(f[4], bytes) || bytes < 0 || !memnode_of(f[5], node))
      return parse_error(path, lineno, "bad transfer link '" + line.substr(0, 80) + "'");
    if (start) {
      open_links[f[6]] = Transfer{node, -1, bytes, time, time};
    } else if (auto it = open_links.find(f[6]); it != open_links.end()) {
      it->second.dst_node = node;
      it->second.end_ms = time;
      out.push_back(it->second);
      open_links.erase(it);
    }
  }
  if (in.bad()) return Status::error(StatusCode::io_error, "error reading '" + path + "'");
  return Status::success();
}

Status parse_plan_json(std::istream& in, const std::string& path, PlanFigures& out) {
  try {
    const nlohmann::json j = nlohmann::json::parse(in);
    out.tasks = j.at("tasks").get<long long>();
    out.repeat = j.value("repeat", 1);
    out.critical_path_seconds = j.at("critical_path_est_s").get<double>();
    out.total_seconds = j.value("total_est_s", 0.0);
    out.factor_seconds = j.value("t_factor_s", 0.0);
    out.matrix = j.value("matrix", std::string());
  } catch (const nlohmann::json::exception& e) {
    return Status::error(StatusCode::parse_error, path + ": " + e.what());
  }
  if (out.tasks < 0 || out.repeat < 1)
    return Status::error(StatusCode::parse_error, path + ": tasks must be >= 0 and repeat >= 1");
  return Status::success();
}

void write_plan_json(const PlanFigures& p, std::ostream& os) {
  const nlohmann::json j = {{"tasks", p.tasks},
                            {"repeat", p.repeat},
                            {"critical_path_est_s", p.critical_path_seconds},
                            {"total_est_s", p.total_seconds},
                            {"t_factor_s", p.factor_seconds},
                            {"matrix", p.matrix}};
  os << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
}

Status read_trace(const std::string& dir, Trace& out) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    return Status::error(StatusCode::io_error, "'" + dir + "' is not a trace folder (no such directory)");
  out = Trace{};
  out.dir = dir;
  const std::string tasks = dir + "/tasks.rec", activity = dir + "/activity.data",
                    paje = dir + "/paje.trace", plan = dir + "/plan.json";
  std::ifstream in;
  if (Status st = open(tasks, in); !st.ok())
    return Status::error(StatusCode::io_error, st.message + " (convert the FxT trace first: starfront solve --trace DIR)");
  if (Status st = parse_tasks_rec(in, tasks, out.tasks); !st.ok()) return st;
  std::ifstream ia;
  if (Status st = open(activity, ia); !st.ok()) return st;
  if (Status st = parse_activity(ia, activity, out.worker_names); !st.ok()) return st;
  std::ifstream ip;
  if (Status st = open(paje, ip); !st.ok()) return st;
  if (Status st = parse_paje_transfers(ip, paje, out.transfers); !st.ok()) return st;
  if (fs::exists(plan, ec)) {
    std::ifstream ij;
    if (Status st = open(plan, ij); !st.ok()) return st;
    if (Status st = parse_plan_json(ij, plan, out.plan); !st.ok()) return st;
    out.has_plan = true;
  }
  return Status::success();
}

}  // namespace starfront::trace
