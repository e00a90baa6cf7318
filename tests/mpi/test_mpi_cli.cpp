// `mpirun -np P starfront solve` as processes (issue 11): rank 0's JSON
// report with per-rank communication and memory, communication equal to
// the mapping's model and above its lower bound; a non-SPD matrix makes
// every rank report the same column and all ranks exit with status 1.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <string>

#include "tools/cli_run.hpp"

namespace {

/// Runs `mpirun -np P starfront ARGS` (root allowed, ranks may share cores).
starfront::testing::CliRun mpirun(int np, const std::string& args) {
  return starfront::testing::run_cli(
      "--oversubscribe -np " + std::to_string(np) + " " + STARFRONT_CLI_PROGRAM + " " + args,
      "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl_vader_single_copy_mechanism=none");
}

std::string data(const std::string& rel) { return std::string(STARFRONT_DATA_DIR) + "/" + rel; }

TEST(MpiCli, SolveReportsPerRankCommunicationAndMemory) {
  for (int np : {2, 4}) {
    const auto r = mpirun(np, "solve " + data("spd/bcsstk13.mtx") +
                                  " --json --ncpu 1 --tile-threshold 64 --tile-size 32");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto j = nlohmann::json::parse(r.out);  // one report: rank 0's
    EXPECT_EQ(j["status"], "ok");
    EXPECT_EQ(j["executor"], "starpu-mpi");
    EXPECT_LE(j["backward_error"].get<double>(), 1e-14);
    const auto& m = j["mpi"];
    ASSERT_EQ(m["ranks"], np);
    ASSERT_EQ(m["per_rank"].size(), static_cast<std::size_t>(np));
    double sent = 0;
    long long tasks = 0;
    for (const auto& pr : m["per_rank"]) {
      EXPECT_DOUBLE_EQ(pr["sent_bytes"].get<double>(), pr["predicted_sent_bytes"].get<double>());
      EXPECT_GT(pr["tasks_run"].get<long long>(), 0) << "a rank without work";
      EXPECT_GT(pr["memory"]["factors"].get<double>(), 0);
      EXPECT_GT(pr["memory"]["measured_peak_rss"].get<double>(), 0);
      sent += pr["sent_bytes"].get<double>();
      tasks += pr["tasks_run"].get<long long>();
    }
    EXPECT_EQ(tasks, j["tasks"].get<long long>());
    EXPECT_GT(sent, 0.0);
    EXPECT_GE(sent, m["lower_bound_bytes"].get<double>());
    // The distributed solve: measured bytes as the solve graph's model, every
    // rank ran solve tasks, and far less moved than the factor.
    const auto& sp = m["solve_phase"];
    EXPECT_DOUBLE_EQ(sp["sent_bytes"].get<double>(), sp["predicted_sent_bytes"].get<double>());
    EXPECT_EQ(sp["factor_bytes_moved"].get<double>(), 0.0);
    EXPECT_GT(sp["sent_bytes"].get<double>(), 0.0);
    EXPECT_LT(sp["sent_bytes"].get<double>(), 0.1 * m["factor_bytes"].get<double>());
    long long rows = 0;
    for (const auto& pr : sp["per_rank"]) {
      EXPECT_GT(pr["tasks_run"].get<long long>(), 0) << "a rank without solve work";
      rows += pr["rows"].get<long long>();
    }
    EXPECT_EQ(rows, j["n"].get<long long>());
  }
}

TEST(MpiCli, NonSpdMatrixSameColumnOnEveryRankAndCleanExit) {
  // 2D Laplacian 10x10 (order 100) with a_57,57 = -50: indefinite.
  const std::string path = std::string(STARFRONT_TEST_TMPDIR) + "/mpi_indefinite.mtx";
  {
    std::ofstream f(path);
    f << "%%MatrixMarket matrix coordinate real symmetric\n100 100 280\n";
    for (int i = 0; i < 100; ++i) {
      f << i + 1 << " " << i + 1 << " " << (i == 56 ? -50.0 : 4.0) << "\n";
      if (i % 10 != 9) f << i + 2 << " " << i + 1 << " -1\n";
      if (i + 10 < 100) f << i + 11 << " " << i + 1 << " -1\n";
    }
  }
  for (int np : {2, 4}) {
    const auto r = mpirun(np, "solve " + path + " --json --ncpu 1 --tile-threshold 8 --tile-size 4");
    EXPECT_NE(r.exit_code, 0);
    const auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["status"], "not_positive_definite");
    const long long col = j["failed_column"].get<long long>();
    EXPECT_GE(col, 1);
    // Every rank prints the same error line (and nothing crashed).
    const std::regex line("\\[rank ([0-9]+) of " + std::to_string(np) + "\\] not_positive_definite: ([^\\n]*)");
    std::set<int> ranks;
    std::set<std::string> messages;
    for (auto it = std::sregex_iterator(r.err.begin(), r.err.end(), line); it != std::sregex_iterator(); ++it) {
      ranks.insert(std::stoi((*it)[1]));
      messages.insert((*it)[2]);
    }
    EXPECT_EQ(ranks.size(), static_cast<std::size_t>(np)) << r.err;
    EXPECT_EQ(messages.size(), 1u) << r.err;
    EXPECT_NE(r.err.find("column " + std::to_string(col) + " "), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("Segmentation"), std::string::npos) << r.err;
  }
}

}  // namespace
