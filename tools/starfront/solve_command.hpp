// `starfront solve`: read (or generate) a matrix, analyse, factorise on StarPU,
// solve, and report (human text or one JSON object).
#pragma once

#include <string>

namespace starfront::tools {

/// Options of `starfront solve` (see main.cpp for their help texts).
struct SolveArgs {
  std::string file;              ///< empty: built-in 3D 7-point Laplacian 30^3
  std::string rhs;               ///< empty: b = A*1
  std::string ordering = "scotch";
  int ncpu = -1;
  int ncuda = 0;
  std::string sched = "lws";
  std::string executor = "starpu";
  double pivot_tol = 1e-14;
  int repeat = 1;
  bool json = false;
};

/// Checks the option values that the parser does not (worker counts,
/// scheduler name, pivot tolerance, repeat count) before any work is done.
/// Returns an empty string when they are valid, else what is wrong.
std::string check_solve_args(const SolveArgs& args);

/// Runs the command; returns the process exit status (0 ok, 1 failure).
int run_solve(const SolveArgs& args);

}  // namespace starfront::tools
