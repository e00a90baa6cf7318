#include "gantt.hpp"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>

#include "external.hpp"

namespace starfront::trace {
namespace {

/// Colour per task kind (Tableau 10), in TaskKind order.
constexpr std::array<const char*, kTaskKinds> kColours = {"#4e79a7", "#f28e2b", "#edc948", "#b07aa1",
                                                          "#e15759", "#76b7b2", "#59a14f", "#9c755f"};

/// Tiny tasks of one worker binned into the current pixel column.
struct Column {
  long long index = -1;
  std::array<double, kTaskKinds> busy{};
  long long tasks = 0;
};

/// Emits the box of a finished column, extending the previous column box of
/// the same kind when it ends where this one starts.
void flush_column(Column& c, int row, double px, std::vector<GanttBox>& out, long long& last_tiny) {
  if (c.tasks == 0) return;
  const int k = static_cast<int>(std::max_element(c.busy.begin(), c.busy.end()) - c.busy.begin());
  const double x0 = static_cast<double>(c.index) * px, x1 = x0 + px;
  if (last_tiny >= 0 && out[last_tiny].kind == static_cast<TaskKind>(k) &&
      std::abs(out[last_tiny].x1_ms - x0) < 1e-9 * px && last_tiny + 1 == static_cast<long long>(out.size())) {
    out[last_tiny].x1_ms = x1;
    out[last_tiny].tasks += c.tasks;
  } else {
    out.push_back(GanttBox{row, static_cast<TaskKind>(k), x0, x1, c.tasks});
    last_tiny = static_cast<long long>(out.size()) - 1;
  }
  c = Column{};
}

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

/// Escapes a string for a double-quoted gnuplot string.
std::string quoted(const std::string& s) {
  std::string o = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') o += '\\';
    if (c == '\n') continue;
    o += c;
  }
  return o + "\"";
}

bool ends_with(const std::string& s, const std::string& e) {
  return s.size() >= e.size() && s.compare(s.size() - e.size(), e.size(), e) == 0;
}

}  // namespace

GanttData gantt_boxes(const Trace& trace, int plot_pixels) {
  GanttData d;
  std::map<int, int> row_of;
  for (const auto& [id, name] : trace.worker_names) row_of[id] = 0;
  std::vector<const TraceTask*> tasks;
  double t0 = 0.0, t1 = 0.0;
  for (const TraceTask& t : trace.tasks) {
    TaskKind k;
    if (!starfront_task_kind(t, k)) continue;
    if (tasks.empty() || t.start_ms < t0) t0 = t.start_ms;
    if (tasks.empty() || t.end_ms > t1) t1 = t.end_ms;
    tasks.push_back(&t);
    d.by_kind[static_cast<int>(k)]++;
    row_of[t.worker] = 0;
  }
  for (auto& [id, row] : row_of) {
    row = static_cast<int>(d.rows.size());
    auto it = trace.worker_names.find(id);
    d.rows.push_back(it != trace.worker_names.end() ? it->second : "worker " + std::to_string(id));
  }
  d.span_ms = t1 - t0;
  d.tasks = static_cast<long long>(tasks.size());
  if (tasks.empty()) return d;
  std::stable_sort(tasks.begin(), tasks.end(), [](const TraceTask* a, const TraceTask* b) {
    return a->worker != b->worker ? a->worker < b->worker : a->start_ms < b->start_ms;
  });
  const double px = d.span_ms > 0 ? d.span_ms / std::max(1, plot_pixels) : 1.0;
  Column col;
  long long last_tiny = -1;
  int cur_worker = tasks.front()->worker;
  for (const TraceTask* t : tasks) {
    if (t->worker != cur_worker) {
      flush_column(col, row_of[cur_worker], px, d.boxes, last_tiny);
      last_tiny = -1;
      cur_worker = t->worker;
    }
    TaskKind k = TaskKind::front;
    starfront_task_kind(*t, k);
    const double x0 = t->start_ms - t0, x1 = t->end_ms - t0;
    if (x1 - x0 >= px) {
      d.boxes.push_back(GanttBox{row_of[t->worker], k, x0, x1, 1});
      continue;
    }
    const auto c = static_cast<long long>(std::floor(x0 / px));
    if (c != col.index) flush_column(col, row_of[t->worker], px, d.boxes, last_tiny);
    col.index = c;
    col.busy[static_cast<int>(k)] += x1 - x0;
    col.tasks++;
  }
  flush_column(col, row_of[cur_worker], px, d.boxes, last_tiny);
  return d;
}

Status gantt_script(const GanttData& d, const GanttOptions& o, std::string& script) {
  const bool png = ends_with(o.output, ".png"), svg = ends_with(o.output, ".svg");
  if (!png && !svg)
    return Status::error(StatusCode::invalid_argument,
                         "the output file must end in .png or .svg: '" + o.output + "'");
  const int rows = std::max<int>(1, static_cast<int>(d.rows.size()));
  const int height = o.height > 0 ? o.height : std::clamp(150 + 40 * rows, 240, 4000);
  if (o.width < 200 || o.width > 20000 || height < 200 || height > 20000)
    return Status::error(StatusCode::invalid_argument, "image width and height must be 200..20000 pixels");
  std::ostringstream s;
  s << "# starfront trace gantt: " << d.tasks << " tasks drawn as " << d.boxes.size() << " boxes\n";
  if (png)
    s << "set terminal pngcairo size " << o.width << "," << height << " font 'sans,10' noenhanced\n";
  else
    s << "set terminal svg size " << o.width << "," << height
      << " font 'sans,10' noenhanced background '#ffffff'\n";
  s << "set output " << quoted(o.output) << "\n";
  s << "set title " << quoted(o.title) << "\n";
  s << "set xlabel 'time (ms)'\nset xrange [0:" << fmt("%.9g", std::max(d.span_ms, 1e-6)) << "]\n";
  s << "set yrange [" << rows - 0.5 << ":-0.5]\nset ytics (";
  for (std::size_t r = 0; r < d.rows.size(); ++r) s << (r ? ", " : "") << quoted(d.rows[r]) << " " << r;
  s << ")\nset ytics nomirror scale 0\nset grid xtics lc rgb '#dddddd'\n";
  s << "set key outside below horizontal\nset style fill solid 1.0 "
    << (d.boxes.size() <= 400 ? "border lc rgb '#ffffff'" : "noborder") << "\n";
  std::vector<std::string> clauses;  // in kind order, so that the legend is too
  for (int k = 0; k < kTaskKinds; ++k) {
    bool any = false;
    for (const GanttBox& b : d.boxes) {
      if (static_cast<int>(b.kind) != k) continue;
      if (!any) s << "$k" << k << " << EOD\n";
      any = true;
      // x y xlow xhigh ylow yhigh
      s << fmt("%.9g", 0.5 * (b.x0_ms + b.x1_ms)) << " " << b.row << " " << fmt("%.9g", b.x0_ms) << " "
        << fmt("%.9g", b.x1_ms) << " " << b.row - 0.4 << " " << b.row + 0.4 << "\n";
    }
    const std::string title = std::string(" title '") + task_kind_name(static_cast<TaskKind>(k)) + "'";
    if (any) {
      s << "EOD\n";
      clauses.push_back("$k" + std::to_string(k) + " using 1:2:3:4:5:6 with boxxyerror lc rgb '" +
                        kColours[k] + "'" + title);
    } else if (d.by_kind[k] > 0) {  // only inside columns another kind dominates: legend entry only
      clauses.push_back(std::string("keyentry with boxes fc rgb '") + kColours[k] + "'" + title);
    }
  }
  std::string plot = "plot ";
  for (std::size_t c = 0; c < clauses.size(); ++c) plot += (c ? ", \\\n     " : "") + clauses[c];
  if (clauses.empty()) plot = "plot NaN notitle";
  s << plot << "\nunset output\n";
  script = s.str();
  return Status::success();
}

Status draw_gantt(const Trace& trace, const GanttOptions& opts) {
  namespace fs = std::filesystem;
  // The plot area is about 85 % of the image width (tics and margins).
  GanttData d = gantt_boxes(trace, std::max(1, opts.width * 85 / 100));
  if (d.tasks == 0)
    return Status::error(StatusCode::invalid_argument, "no starfront tasks in the trace '" + trace.dir + "'");
  GanttOptions o = opts;
  if (o.title.empty()) {
    const std::string m = trace.has_plan ? fs::path(trace.plan.matrix).filename().string() + ": " : "";
    o.title = m + std::to_string(d.tasks) + " tasks on " + std::to_string(d.rows.size()) +
              " workers, " + fmt("%.3f", d.span_ms) + " ms";
  }
  std::string script;
  if (Status st = gantt_script(d, o, script); !st.ok()) return st;
  const std::string gnuplot = find_program("gnuplot", {}, "STARFRONT_GNUPLOT");
  if (gnuplot.empty())
    return Status::error(StatusCode::runtime_error,
                         "gnuplot not found in PATH (Debian package gnuplot-nox; or set STARFRONT_GNUPLOT)");
  char tmpl[] = "/tmp/starfront-gantt-XXXXXX";
  const int fd = ::mkstemp(tmpl);
  if (fd < 0) return Status::error(StatusCode::io_error, "cannot create a temporary gnuplot script");
  ::close(fd);
  const std::string script_file = tmpl, log_file = script_file + ".log";
  {
    std::ofstream os(script_file);
    os << script;
    if (!os) {
      fs::remove(script_file);
      return Status::error(StatusCode::io_error, "cannot write the gnuplot script " + script_file);
    }
  }
  std::error_code ec;
  fs::remove(o.output, ec);
  Status st = run_program(gnuplot, {script_file}, log_file);
  std::string log;
  {
    std::ifstream in(log_file);
    log.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  fs::remove(script_file, ec);
  fs::remove(log_file, ec);
  if (!st.ok())
    return Status::error(StatusCode::runtime_error, "gnuplot failed: " + log.substr(0, 2000));
  int w = 0, h = 0;
  if (Status sz = image_size(o.output, w, h); !sz.ok())
    return Status::error(StatusCode::runtime_error,
                         "gnuplot did not write a valid image to '" + o.output + "': " + sz.message +
                             (log.empty() ? "" : " (gnuplot: " + log.substr(0, 2000) + ")"));
  return Status::success();
}

Status image_size(const std::string& path, int& width, int& height) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::error(StatusCode::io_error, "cannot read '" + path + "'");
  const std::string head((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  static const char sig[] = "\x89PNG\r\n\x1a\n";
  if (head.size() >= 8 && head.compare(0, 8, sig, 8) == 0) {
    // signature, then the IHDR chunk: length (4), "IHDR", width (4, big endian), height (4)
    if (head.size() < 24 || head.compare(12, 4, "IHDR") != 0)
      return Status::error(StatusCode::parse_error, path + ": PNG without an IHDR chunk");
    auto be32 = [&](std::size_t p) {
      return static_cast<long long>(static_cast<unsigned char>(head[p])) << 24 |
             static_cast<unsigned char>(head[p + 1]) << 16 | static_cast<unsigned char>(head[p + 2]) << 8 |
             static_cast<unsigned char>(head[p + 3]);
    };
    const long long w = be32(16), h = be32(20);
    if (w <= 0 || h <= 0 || w > 1 << 30 || h > 1 << 30)
      return Status::error(StatusCode::parse_error, path + ": PNG with an invalid size");
    // A complete file ends with the IEND chunk (length 0, "IEND", CRC).
    if (head.size() < 12 || head.compare(head.size() - 8, 4, "IEND") != 0)
      return Status::error(StatusCode::parse_error, path + ": truncated PNG (no IEND chunk at the end)");
    width = static_cast<int>(w);
    height = static_cast<int>(h);
    return Status::success();
  }
  const std::size_t svg = head.find("<svg");
  if (svg != std::string::npos) {
    const std::size_t end = head.find('>', svg);
    const std::string tag = head.substr(svg, end == std::string::npos ? std::string::npos : end - svg);
    std::smatch mw, mh;
    static const std::regex rw(R"(\swidth="([0-9]+)(px)?")"), rh(R"(\sheight="([0-9]+)(px)?")");
    if (head.find("</svg>", svg) == std::string::npos)
      return Status::error(StatusCode::parse_error, path + ": truncated SVG (no </svg>)");
    if (std::regex_search(tag, mw, rw) && std::regex_search(tag, mh, rh)) {
      width = std::stoi(mw[1].str());
      height = std::stoi(mh[1].str());
      return Status::success();
    }
    return Status::error(StatusCode::parse_error, path + ": <svg> element without width and height");
  }
  return Status::error(StatusCode::parse_error, path + ": neither a PNG nor an SVG file");
}

}  // namespace starfront::trace
