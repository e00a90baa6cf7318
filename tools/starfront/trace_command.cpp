#include "trace_command.hpp"

#include <iostream>

#include "trace/summary.hpp"
#include "trace/trace_files.hpp"

namespace starfront::tools {
namespace {

int fail(const char* what, const Status& st) {
  std::cerr << "starfront trace " << what << ": " << status_name(st.code) << ": " << st.message << "\n";
  return 1;
}

}  // namespace

int run_trace_summary(const std::string& dir, bool json) {
  trace::Trace t;
  if (Status st = trace::read_trace(dir, t); !st.ok()) return fail("summary", st);
  const trace::TraceSummary s = trace::summarize(t);
  if (s.tasks == 0)
    return fail("summary", Status::error(StatusCode::invalid_argument,
                                         "no starfront task in " + dir + "/tasks.rec (an incomplete "
                                         "conversion? see " + dir + "/starpu_fxt_tool.log)"));
  if (json)
    std::cout << trace::summary_json(s).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)
              << std::endl;
  else
    std::cout << trace::format_summary(s);
  return 0;
}

int run_trace_gantt(const std::string& dir, const trace::GanttOptions& opts) {
  trace::Trace t;
  if (Status st = trace::read_trace(dir, t); !st.ok()) return fail("gantt", st);
  if (Status st = trace::draw_gantt(t, opts); !st.ok()) return fail("gantt", st);
  return 0;
}

}  // namespace starfront::tools
