// `starfront plan`: analyse a matrix, compile its task graph and describe it
// (task counts by kind, total work, critical path), optionally writing it as
// Graphviz DOT and JSON.
#pragma once

#include <string>

#include "solve_command.hpp"

namespace starfront::tools {

/// Runs the command; returns the process exit status (0 ok, 1 failure,
/// including a slot violation found by `check_slots` random orders).
int run_plan(const SolveArgs& args, const std::string& dot_file, const std::string& json_file,
             idx_t check_slots = 0);

}  // namespace starfront::tools
