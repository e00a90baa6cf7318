// Runs the `starfront` command as a process for the CLI tests (header-only,
// tests only): stdout captured, stderr through a file private to the test
// process (CTest runs tests in parallel).
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>

namespace starfront::testing {

/// What a run of the command gave.
struct CliRun {
  int exit_code = -1;  ///< -1: not started or killed by a signal
  std::string out;     ///< stdout
  std::string err;     ///< stderr
};

/// Runs `ENV starfront ARGS` through the shell (ENV: optional variable
/// assignments), capturing stdout and stderr.
inline CliRun run_cli(const std::string& args, const std::string& env = "") {
  const std::string err_file = std::string(STARFRONT_TEST_TMPDIR) + "/cli_stderr_" +
                               ::testing::UnitTest::GetInstance()->current_test_info()->name() +
                               "_" + std::to_string(getpid()) + ".txt";
  const std::string cmd = env + " " + std::string(STARFRONT_CLI) + " " + args + " 2>" + err_file;
  CliRun r;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return r;
  std::array<char, 4096> buf;
  std::size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
  const int status = pclose(p);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  {
    std::ifstream e(err_file);
    r.err.assign(std::istreambuf_iterator<char>(e), std::istreambuf_iterator<char>());
  }
  std::remove(err_file.c_str());
  return r;
}

}  // namespace starfront::testing
