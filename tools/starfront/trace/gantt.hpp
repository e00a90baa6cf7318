// Gantt chart of a converted trace, drawn by gnuplot: one row per worker,
// tasks coloured by kind, time axis in ms from the first task's start.
//
// Large traces: a task narrower than one pixel is not drawn by itself. Per
// worker, such tasks are binned into pixel columns; a column becomes one box
// the width of the column, coloured by the kind that is busiest in it, and
// consecutive columns of one kind become one box. Tasks one pixel wide or
// more are drawn as they are. A worker row thus has at most about two boxes
// per pixel column, whatever the number of tasks.
#pragma once

#include <string>
#include <vector>

#include "plan/task_graph.hpp"
#include "trace_files.hpp"

namespace starfront::trace {

/// Options of `starfront trace gantt`.
struct GanttOptions {
  std::string output;  ///< .png or .svg file (the format follows the extension)
  int width = 1200;    ///< image width, pixels (200..20000)
  int height = 0;      ///< image height, pixels (200..20000); 0: from the number of workers
  std::string title;   ///< empty: matrix, task count, workers, makespan
};

/// One rectangle of the chart: worker row `row`, [x0_ms, x1_ms) relative to
/// the first task's start, standing for `tasks` tasks (1 unless merged).
struct GanttBox {
  int row = 0;
  TaskKind kind = TaskKind::front;
  double x0_ms = 0.0, x1_ms = 0.0;
  long long tasks = 1;
};

/// The chart's content before drawing.
struct GanttData {
  std::vector<std::string> rows;  ///< worker names, one row each (worker id order)
  std::vector<GanttBox> boxes;
  double span_ms = 0.0;           ///< first task start to last task end, ms
  long long tasks = 0;            ///< starfront tasks drawn
  long long by_kind[kTaskKinds] = {};  ///< of which, per kind (every kind present gets a legend entry)
};

/// Builds the boxes of the starfront tasks of `trace` for a plot area
/// `plot_pixels` wide (tasks narrower than span/plot_pixels are merged as
/// described above). Workers without tasks keep their (empty) row.
GanttData gantt_boxes(const Trace& trace, int plot_pixels);

/// The gnuplot script that draws `d` into `opts.output` (terminal pngcairo or
/// svg from the extension, data inline). Errors: invalid_argument for
/// another extension or a size out of range.
Status gantt_script(const GanttData& d, const GanttOptions& opts, std::string& script);

/// Draws the chart: builds the boxes and the script and runs gnuplot
/// ($STARFRONT_GNUPLOT, else gnuplot in PATH). Errors: invalid_argument
/// (bad options, a trace without starfront tasks), runtime_error (gnuplot
/// missing, failing, or not writing the file), io_error.
Status draw_gantt(const Trace& trace, const GanttOptions& opts);

/// Width and height of a PNG file (from its IHDR chunk), or of an SVG file
/// (the width and height attributes of its <svg> element). Errors:
/// io_error, parse_error when the file is not a valid PNG/SVG.
Status image_size(const std::string& path, int& width, int& height);

}  // namespace starfront::trace
