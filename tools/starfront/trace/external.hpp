// Running the external programs the trace commands need (StarPU's
// starpu_fxt_tool, gnuplot): locating them and running them without a shell.
#pragma once

#include <string>
#include <vector>

#include "sparse/types.hpp"

namespace starfront::trace {

/// Finds an executable: `override_env` names an environment variable that,
/// when set and non-empty, is the path to use (no fallback); then each of
/// `candidates` (full paths, e.g. the one known at configure time); then
/// `name` in the directories of PATH. Returns an empty string when none is
/// an executable file.
std::string find_program(const std::string& name, const std::vector<std::string>& candidates,
                         const char* override_env);

/// Runs `program` with `args` (argv[1..]), stdin from /dev/null and stdout
/// and stderr appended to `log_file` (or discarded when it is empty); waits
/// for it. Returns ok when it exits with status 0; runtime_error otherwise,
/// naming the program, the exit status or signal, and the log file.
Status run_program(const std::string& program, const std::vector<std::string>& args,
                   const std::string& log_file);

/// The starpu_fxt_tool this build uses: $STARFRONT_FXT_TOOL when set, else
/// the one of the StarPU prefix starfront was configured with, else PATH.
/// Empty when none is found.
std::string find_fxt_tool();

/// Converts the raw FxT trace that StarPU wrote into `dir` (dir/prof_file_*)
/// with `starpu_fxt_tool -i RAW -d DIR`: paje.trace, dag.dot, tasks.rec,
/// trace.rec, data.rec, activity.data, ... The tool's output goes to
/// dir/starpu_fxt_tool.log. Errors: io_error when no raw trace is there or
/// an expected file was not produced, runtime_error when the tool is missing
/// (the message says how to point to one) or fails.
Status convert_fxt_trace(const std::string& dir);

}  // namespace starfront::trace
