// `starfront plan`: analyse a matrix, compile its task graph and describe it
// (task counts by kind, total work, critical path), optionally writing it as
// Graphviz DOT and JSON. The JSON file is graph_json's object ("tasks",
// "blocks", "stats") plus, at its top level, the matrix and analysis keys
// of `solve --json` under the same names, from the same functions
// (matrix_keys, analysis_keys in solve_command.hpp): n, nnz_a, t_analyse_s,
// nnz_l, nnz_l_exact, flops, flops_exact, max_front, supernodes,
// ordering_used, tree_critical_path_s, tree_critical_path_fronts,
// amalgamation_used, latency_rule (null where the rule did not run).
#pragma once

#include <string>

#include "solve_command.hpp"

namespace starfront::tools {

/// Runs the command; returns the process exit status (0 ok, 1 failure,
/// including a slot violation found by `check_slots` random orders).
int run_plan(const SolveArgs& args, const std::string& dot_file, const std::string& json_file,
             idx_t check_slots = 0);

}  // namespace starfront::tools
