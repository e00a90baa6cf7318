// `starfront trace summary DIR` and `starfront trace gantt DIR -o FILE`: read
// a trace folder written by `starfront solve --trace DIR` (trace/ holds the
// parsing, summary and drawing).
#pragma once

#include <string>

#include "trace/gantt.hpp"

namespace starfront::tools {

/// Prints the summary of the trace in `dir` (text, or one JSON object).
/// Returns the exit status: 0, or 1 with a message on stderr.
int run_trace_summary(const std::string& dir, bool json);

/// Draws the Gantt chart of the trace in `dir`. Returns the exit status.
int run_trace_gantt(const std::string& dir, const trace::GanttOptions& opts);

}  // namespace starfront::tools
