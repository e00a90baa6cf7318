// The `starfront` command-line tool, run as a process: JSON report, exit
// codes, built-in problem, generators, and error reporting.
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>
#include <sys/wait.h>
#include <unistd.h>

#include "cli_run.hpp"

namespace {

using starfront::testing::CliRun;

/// Runs `starfront ARGS`.
CliRun run(const std::string& args) { return starfront::testing::run_cli(args); }

std::string data(const std::string& rel) { return std::string(STARFRONT_DATA_DIR) + "/" + rel; }

std::string write_tmp(const std::string& name, const std::string& content) {
  const std::string path = std::string(STARFRONT_TEST_TMPDIR) + "/" + name;
  std::ofstream(path) << content;
  return path;
}

/// The modelled critical path (µs) that `starfront plan` prints, -1 when absent.
double modelled_path_us(const std::string& out) {
  const auto p = out.find("modelled critical path ");
  return p == std::string::npos ? -1.0 : std::stod(out.substr(p + 23));
}

TEST(Cli, SolvesThePowerGridMatrixWithJsonReport) {
  const CliRun r = run("solve " + data("spd/activsg2000_hykkt_10.mtx") + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["status"], "ok");
  EXPECT_TRUE(j["error"].is_null());
  EXPECT_EQ(j["n"], 25910);
  EXPECT_EQ(j["nnz_a"], 154262);
  EXPECT_LE(j["backward_error"].get<double>(), 1e-14);
  for (const char* k : {"nnz_l", "flops", "max_front", "tasks", "t_analyse_s", "t_factor_s",
                        "t_solve_s", "gflops"})
    EXPECT_TRUE(j.contains(k)) << k;
  EXPECT_GT(j["tasks"].get<long>(), 0);
  EXPECT_GE(j["nnz_l"].get<long>(), j["nnz_l_exact"].get<long>());
  // Where the factorisation's wall time went (FactorStats::phases).
  const auto& ph = j["factor_phases_s"];
  double sum = 0.0;
  for (const char* k : {"check", "setup", "submit", "execute", "writeback", "finish"}) {
    ASSERT_TRUE(ph[k].is_number()) << k;
    EXPECT_GE(ph[k].get<double>(), 0.0) << k;
    sum += ph[k].get<double>();
  }
  EXPECT_GT(ph["execute"].get<double>(), 0.0);
  EXPECT_LE(sum, ph["total"].get<double>() + 1e-6);
  // That the phases cover the wall time is a timing property, checked over
  // several runs in test_factorize (StarpuTest.FactorPhasesCoverTheWallTime):
  // one run on a loaded machine can stall between two phases.
  EXPECT_GT(sum, 0.0);
  EXPECT_LE(j["t_factor_s"].get<double>(), ph["total"].get<double>() + 1e-6);
}

TEST(Cli, BuiltInProblemWithoutFile) {
  const CliRun r = run("solve --ncpu 1");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("built-in 3D 7-point Laplacian"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("backward error"), std::string::npos) << r.out;
}

/// `plan --gpu-graph` on the built-in 30³ Laplacian: the GPU graph's task
/// counts per kind (subtree and front tasks, no tile at this size), fewer
/// tasks than the default graph; `solve --gpu-graph` on CPU workers solves.
TEST(Cli, GpuGraphPlanAndSolve) {
  auto tasks_of = [](const std::string& out) {
    const auto p = out.find("tasks: ");
    return p == std::string::npos ? -1L : std::stol(out.substr(p + 7));
  };
  const CliRun g = run("plan --workers 2 --gpu-graph");
  ASSERT_EQ(g.exit_code, 0) << g.err;
  const CliRun d = run("plan --workers 2");
  ASSERT_EQ(d.exit_code, 0) << d.err;
  EXPECT_NE(g.out.find(" subtree "), std::string::npos) << g.out;
  EXPECT_NE(g.out.find(" front "), std::string::npos) << g.out;
  EXPECT_EQ(g.out.find(" potrf "), std::string::npos) << g.out;
  EXPECT_GT(tasks_of(g.out), 0) << g.out;
  EXPECT_LT(tasks_of(g.out), tasks_of(d.out)) << g.out << d.out;
  const CliRun r = run("solve --ncpu 2 --gpu-graph --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["status"], "ok");
  EXPECT_LE(j["backward_error"].get<double>(), 1e-14);
}

/// The analysis for latency-bound trees through the CLI: `plan` prints the
/// modelled critical path, which --ordering scotch-path --relax-path
/// --max-front 232 shortens on the power-grid matrix; `solve` with them
/// solves; bad --max-front values are usage errors.
TEST(Cli, CriticalPathAnalysisOptions) {
  const std::string f = data("spd/activsg2000_hykkt_10.mtx");
  const CliRun d = run("plan " + f + " --workers 2");
  ASSERT_EQ(d.exit_code, 0) << d.err;
  const CliRun c = run("plan " + f + " --workers 2 --ordering scotch-path --relax-path --max-front 232");
  ASSERT_EQ(c.exit_code, 0) << c.err;
  EXPECT_GT(modelled_path_us(d.out), 0.0) << d.out;
  EXPECT_GT(modelled_path_us(c.out), 0.0) << c.out;
  EXPECT_LT(modelled_path_us(c.out), 0.6 * modelled_path_us(d.out)) << d.out << c.out;
  const CliRun r = run("solve " + f + " --ncpu 2 --ordering scotch-path --relax-path --max-front 232 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["status"], "ok");
  EXPECT_EQ(j["ordering"], "scotch-path");
  EXPECT_EQ(j["ordering_used"], "scotch-nd");  // nested dissection's tree is the shallower
  EXPECT_EQ(j["relax_path"], true);
  EXPECT_EQ(j["max_front_cap"], 232);
  EXPECT_NEAR(j["tree_critical_path_s"].get<double>() * 1e6, modelled_path_us(c.out), 0.1);
  EXPECT_GT(j["tree_critical_path_fronts"].get<long>(), 0);
  EXPECT_LE(j["max_front"].get<long>(), 232);
  EXPECT_LE(j["backward_error"].get<double>(), 1e-14);
  for (const char* bad : {"--max-front -1", "--max-front x", "--max-front 0x10", "--max-front 99999999999",
                          "--ordering scotch-paths"}) {
    const CliRun b = run("plan " + f + " " + bad);
    EXPECT_EQ(b.exit_code, 2) << bad;
    EXPECT_FALSE(b.err.empty()) << bad;
  }
}

/// The GPU graph's latency rule through the CLI: `plan --gpu-graph` on the
/// power-grid matrix takes the critical-path analysis (its modelled path
/// is that of --ordering scotch-path --relax-path --max-front 232, and the
/// plan says so), --no-latency-rule and --relax-path keep the rule off
/// (the default analysis's path), the default graph never runs it,
/// bcsstk13 (column counts above 232) keeps the default analysis; `solve
/// --gpu-graph --json` reports the choice and solves.
TEST(Cli, LatencyRuleOnTheGpuGraph) {
  const std::string f = data("spd/activsg2000_hykkt_10.mtx");
  const CliRun d = run("plan " + f + " --workers 2");
  const CliRun c = run("plan " + f + " --workers 2 --ordering scotch-path --relax-path --max-front 232");
  const CliRun g = run("plan " + f + " --workers 2 --gpu-graph");
  const CliRun n = run("plan " + f + " --workers 2 --gpu-graph --no-latency-rule");
  const CliRun r = run("plan " + f + " --workers 2 --gpu-graph --relax-path");
  for (const CliRun* x : {&d, &c, &g, &n, &r}) ASSERT_EQ(x->exit_code, 0) << x->err;
  EXPECT_NE(g.out.find("latency rule: critical-path analysis taken"), std::string::npos) << g.out;
  EXPECT_DOUBLE_EQ(modelled_path_us(g.out), modelled_path_us(c.out)) << g.out << c.out;
  EXPECT_DOUBLE_EQ(modelled_path_us(n.out), modelled_path_us(d.out)) << n.out << d.out;
  for (const CliRun* x : {&d, &c, &n, &r}) EXPECT_EQ(x->out.find("latency rule"), std::string::npos) << x->out;
  const CliRun b = run("plan " + data("spd/bcsstk13.mtx") + " --workers 2 --gpu-graph");
  ASSERT_EQ(b.exit_code, 0) << b.err;
  EXPECT_NE(b.out.find("latency rule: default analysis kept (a column count above 232"), std::string::npos) << b.out;
  const CliRun s = run("solve " + f + " --ncpu 2 --gpu-graph --json");
  ASSERT_EQ(s.exit_code, 0) << s.err;
  const auto j = nlohmann::json::parse(s.out);
  EXPECT_EQ(j["status"], "ok");
  EXPECT_EQ(j["amalgamation_used"], "critical-path");
  ASSERT_TRUE(j["latency_rule"].is_object()) << s.out;
  EXPECT_EQ(j["latency_rule"]["chose_critical_path"], true);
  EXPECT_EQ(j["latency_rule"]["front_limit"], 232);
  EXPECT_LT(j["latency_rule"]["critical_path_tree_critical_path_s"].get<double>(),
            j["latency_rule"]["default_tree_critical_path_s"].get<double>());
  EXPECT_NEAR(j["tree_critical_path_s"].get<double>() * 1e6, modelled_path_us(c.out), 0.1);
  EXPECT_LE(j["max_front"].get<long>(), 232);
  EXPECT_LE(j["backward_error"].get<double>(), 1e-14);
  const CliRun t = run("solve " + f + " --ncpu 2 --json");
  ASSERT_EQ(t.exit_code, 0) << t.err;
  const auto k = nlohmann::json::parse(t.out);
  EXPECT_EQ(k["amalgamation_used"], "relaxed");
  EXPECT_TRUE(k["latency_rule"].is_null());
}

/// `plan --json FILE` carries the matrix and analysis keys of `solve --json`
/// (matrix_keys and analysis_keys in solve_command.cpp) at the top level of
/// the graph: on the same matrix with the same options, each key has the
/// same value in both reports, doubles included (the same code on the same
/// analysis), and so does every other top-level key the two share (the
/// graph's "tasks" array aside). Cases: bcsstk13 on the default graph, and
/// the power-grid matrix on the GPU graph, where the latency rule takes the
/// critical-path analysis ("latency_rule" an object with every value set).
// A graph file that cannot be written (here a full device: the failure shows
// only when the stream is flushed) is an io_error with exit status 1.
TEST(Cli, PlanReportsAFailedWrite) {
  if (access("/dev/full", W_OK) != 0) GTEST_SKIP() << "no /dev/full";
  for (const char* opt : {"--json", "--dot"}) {
    const CliRun r = run(std::string("plan ") + data("spd/lund_a.mtx") + " " + opt + " /dev/full");
    EXPECT_EQ(r.exit_code, 1) << opt << ": " << r.err;
    EXPECT_NE(r.err.find("cannot write"), std::string::npos) << opt << ": " << r.err;
    EXPECT_NE(r.err.find("/dev/full"), std::string::npos) << opt << ": " << r.err;
  }
}

TEST(Cli, PlanJsonHasTheAnalysisKeysOfSolveJson) {
  const std::vector<std::string> keys = {
      "n", "nnz_a", "nnz_l", "nnz_l_exact", "flops", "flops_exact", "max_front", "supernodes",
      "ordering_used", "tree_critical_path_s", "tree_critical_path_fronts", "amalgamation_used",
      "latency_rule"};
  struct Case {
    std::string file, options;
    long long n;
  };
  const Case cases[] = {{data("spd/bcsstk13.mtx"), "", 2003},
                        {data("spd/activsg2000_hykkt_10.mtx"), " --gpu-graph", 25910}};
  nlohmann::json gpu_plan;
  for (std::size_t c = 0; c < std::size(cases); ++c) {
    const Case& k = cases[c];
    SCOPED_TRACE(k.file + k.options);
    const std::string out = std::string(STARFRONT_TEST_TMPDIR) + "/plan_analysis_keys_" + std::to_string(c) + ".json";
    const CliRun p = run("plan " + k.file + " --workers 2" + k.options + " --json " + out);
    ASSERT_EQ(p.exit_code, 0) << p.err;
    const CliRun s = run("solve " + k.file + " --ncpu 2" + k.options + " --json");
    ASSERT_EQ(s.exit_code, 0) << s.err;
    std::ifstream in(out);
    const auto jp = nlohmann::json::parse(in);
    const auto js = nlohmann::json::parse(s.out);
    std::remove(out.c_str());
    for (const char* g : {"tasks", "blocks", "stats"}) EXPECT_TRUE(jp.contains(g)) << g;  // the graph stays
    EXPECT_EQ(jp["n"].get<long long>(), k.n);
    for (const std::string& key : keys) {
      ASSERT_TRUE(jp.contains(key)) << key;
      ASSERT_TRUE(js.contains(key)) << key;
      EXPECT_EQ(jp[key], js[key]) << key << ": plan " << jp[key] << ", solve " << js[key];
      if (key != "latency_rule") {
        EXPECT_FALSE(jp[key].is_null()) << key;
      }
    }
    // Every other top-level key both have agrees too (timings aside).
    for (const auto& [key, v] : jp.items()) {
      if (js.contains(key) && key != "tasks" && key != "t_analyse_s") {
        EXPECT_EQ(v, js[key]) << key << ": plan " << v << ", solve " << js[key];
      }
    }
    EXPECT_GT(jp["t_analyse_s"].get<double>(), 0.0);
    EXPECT_GT(js["t_analyse_s"].get<double>(), 0.0);
    if (c == 1) gpu_plan = jp;
  }
  // The GPU-graph case compared the latency rule's object, every value set.
  EXPECT_EQ(gpu_plan["amalgamation_used"], "critical-path");
  ASSERT_TRUE(gpu_plan["latency_rule"].is_object()) << gpu_plan["latency_rule"];
  EXPECT_EQ(gpu_plan["latency_rule"]["chose_critical_path"], true);
  for (const auto& [key, v] : gpu_plan["latency_rule"].items()) EXPECT_FALSE(v.is_null()) << key;
}

TEST(Cli, GenerateThenSolveWithRightHandSides) {
  const std::string m = std::string(STARFRONT_TEST_TMPDIR) + "/lap2d.mtx";
  ASSERT_EQ(run("generate laplace2d 12 -o " + m).exit_code, 0);
  // Three right-hand sides (n = 144), values not all equal.
  std::string rhs = "%%MatrixMarket matrix array real general\n144 3\n";
  for (int i = 0; i < 3 * 144; ++i) rhs += std::to_string((i * 37 % 101) / 7.0 - 5.0) + "\n";
  const std::string b = write_tmp("lap2d_rhs.mtx", rhs);
  for (const char* extra : {"", " --ordering natural --sched eager --ncpu 1",
                            " --executor sequential", " --ordering scotch-nd"}) {
    const CliRun r = run("solve " + m + " --rhs " + b + " --json" + extra);
    ASSERT_EQ(r.exit_code, 0) << extra << r.err;
    const auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["nrhs"], 3);
    EXPECT_LE(j["backward_error"].get<double>(), 1e-14) << extra;
  }
}

TEST(Cli, NotPositiveDefiniteNamesColumn) {
  std::string f = "%%MatrixMarket matrix coordinate real symmetric\n10 10 10\n";
  for (int i = 1; i <= 10; ++i) f += std::to_string(i) + " " + std::to_string(i) + (i == 10 ? " 0\n" : " 1\n");
  const CliRun r = run("solve " + write_tmp("id0.mtx", f) + " --json");
  EXPECT_EQ(r.exit_code, 1);
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["status"], "not_positive_definite");
  EXPECT_EQ(j["failed_column"], 10);
  EXPECT_NE(r.err.find("column 10"), std::string::npos) << r.err;
}

TEST(Cli, ErrorsAreReportedWithKindAndExitCode) {
  CliRun r = run("solve /nonexistent/file.mtx --json");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(nlohmann::json::parse(r.out)["status"], "io_error");
  EXPECT_NE(r.err.find("/nonexistent/file.mtx"), std::string::npos) << r.err;

  r = run("solve " + write_tmp("bad.mtx", "%%MatrixMarket matrix coordinate real symmetric\n2 2 3\n1 1 1\n2 2 1\n") +
          " --json");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(nlohmann::json::parse(r.out)["status"], "parse_error");

  // Bad option values are usage errors (exit 2), found before any work.
  r = run("solve " + data("spd/lund_a.mtx") + " --sched nosuchscheduler");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("nosuchscheduler"), std::string::npos) << r.err;
  for (const char* bad : {"--ncpu 0", "--ncpu -5", "--ncpu 100000", "--pivot-tol -2",
                          "--pivot-tol nan", "--repeat 0", "--ncuda -1", "--tiles-on-gpu-only"}) {
    r = run("solve " + data("spd/lund_a.mtx") + " " + bad);
    EXPECT_EQ(r.exit_code, 2) << bad;
    EXPECT_FALSE(r.err.empty()) << bad;
  }
  // `plan --workers` targets a worker count, maybe another machine's: more
  // than this one's cores is a plan, 0 or beyond kMaxPlanWorkers a usage
  // error that names --workers.
  r = run("plan --workers 64 --gpu-graph");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("64 workers targeted"), std::string::npos) << r.out;
  for (const char* bad : {"--workers 0", "--workers -3", "--workers 1000000"}) {
    r = run(std::string("plan ") + bad);
    EXPECT_EQ(r.exit_code, 2) << bad;
    EXPECT_NE(r.err.find("--workers"), std::string::npos) << bad << ": " << r.err;
  }
  EXPECT_EQ(run("generate laplace3d 0").exit_code, 2);
  EXPECT_EQ(run("generate laplace2d 3 --stencil 27").exit_code, 2);

  r = run("solve --no-such-option");
  EXPECT_EQ(r.exit_code, 2);
  r = run("solve --ordering bogus");
  EXPECT_EQ(r.exit_code, 2);
}

/// LDLᵀ through the CLI: --method and --refine, the inertia keys always
/// present (null after an LLᵀ failure), a zero pivot reported as `singular`.
/// With --json, a usage error (bad value, or an option CLI11 refuses) still
/// gives one JSON object on stdout: status usage_error, the message, every
/// report key present (null); exit status 2 and the message on stderr too.
TEST(Cli, JsonUsageErrorsPrintOneJsonObject) {
  const nlohmann::json ok_report = nlohmann::json::parse(run("solve " + data("spd/lund_a.mtx") + " --json").out);
  for (const char* bad : {"--ncpu 0", "--repeat 0", "--tiles-on-gpu-only", "--ncpu abc", "--no-such-option",
                          "--method cholesky"}) {
    const CliRun r = run("solve " + data("spd/lund_a.mtx") + " --json " + bad);
    EXPECT_EQ(r.exit_code, 2) << bad;
    EXPECT_FALSE(r.err.empty()) << bad;
    nlohmann::json j;
    ASSERT_NO_THROW(j = nlohmann::json::parse(r.out)) << bad << ": stdout '" << r.out << "'";
    EXPECT_EQ(j["status"], "usage_error") << bad;
    EXPECT_TRUE(j["error"].is_string() && !j["error"].get<std::string>().empty()) << bad;
    for (const auto& [key, value] : ok_report.items()) {
      EXPECT_TRUE(j.contains(key)) << bad << ": key " << key;
    }
  }
  // Without --json, stdout stays empty.
  EXPECT_TRUE(run("solve " + data("spd/lund_a.mtx") + " --ncpu 0").out.empty());
}

/// The keys of a JSON object.
std::set<std::string> key_set(const nlohmann::json& j) {
  std::set<std::string> keys;
  for (const auto& [key, value] : j.items()) keys.insert(key);
  return keys;
}

/// Keys in `a` and not in `b`, for the failure messages.
std::string keys_missing(const std::set<std::string>& a, const std::set<std::string>& b) {
  std::string s;
  for (const auto& k : a)
    if (!b.count(k)) s += (s.empty() ? "" : ", ") + k;
  return s.empty() ? "(none)" : s;
}

/// `solve --json` prints the same keys on success and on every failure
/// (matrix or right-hand side missing or malformed, not positive definite,
/// a trace folder that cannot be written, usage errors): a value that does
/// not exist is null, never an absent key, and status/error say what went
/// wrong. (The options echoed back, executor, ordering, relax_path and
/// max_front_cap, were missing when the matrix could not be read;
/// failed_column and pivot existed only on a failed factorisation.)
TEST(Cli, JsonReportHasTheSameKeysOnEveryOutcome) {
  const std::string lund = data("spd/lund_a.mtx");
  std::string rhs = "%%MatrixMarket matrix array real general\n147 1\n";
  for (int i = 0; i < 147; ++i) rhs += "1\n";
  const std::string rhs_file = write_tmp("keys_rhs.mtx", rhs);
  std::string npd = "%%MatrixMarket matrix coordinate real symmetric\n10 10 10\n";
  for (int i = 1; i <= 10; ++i) npd += std::to_string(i) + " " + std::to_string(i) + (i == 10 ? " 0\n" : " 1\n");
  const std::string npd_file = write_tmp("keys_npd.mtx", npd);
  // 3 entries announced, 2 given: the error names line 4 (end of file).
  const std::string bad_file =
      write_tmp("keys_bad.mtx", "%%MatrixMarket matrix coordinate real symmetric\n2 2 3\n1 1 1\n2 2 1\n");

  const CliRun ok = run("solve " + lund + " --ncpu 1 --json");
  ASSERT_EQ(ok.exit_code, 0) << ok.err;
  nlohmann::json okj;
  ASSERT_NO_THROW(okj = nlohmann::json::parse(ok.out)) << ok.out;
  const std::set<std::string> expected = key_set(okj);
  EXPECT_EQ(okj["status"], "ok");
  EXPECT_TRUE(okj["error"].is_null());
  // The keys that used to be absent on some outcome are there on success too.
  for (const char* k : {"executor", "ordering", "relax_path", "max_front_cap", "failed_column", "pivot", "rhs",
                        "trace_dir", "mpi", "file", "method_requested", "n", "backward_error"})
    EXPECT_TRUE(expected.count(k)) << k;
  for (const char* k : {"failed_column", "pivot", "rhs", "trace_dir", "mpi"}) EXPECT_TRUE(okj[k].is_null()) << k;
  EXPECT_EQ(okj["executor"], "starpu");

  struct Case {
    std::string args;     ///< after `solve`
    int exit_code;
    std::string status;   ///< expected "status"
    std::string in_error; ///< expected in "error"
    bool options_known;   ///< the options echoed back (executor, ...) are set
  };
  const std::vector<Case> cases = {
      {lund + " --ncpu 1 --rhs " + rhs_file, 0, "ok", "", true},
      {"/nonexistent/keys.mtx", 1, "io_error", "/nonexistent/keys.mtx", true},
      {bad_file, 1, "parse_error", bad_file + ":4:", true},
      {npd_file, 1, "not_positive_definite", "column 10", true},
      {lund + " --rhs /nonexistent/keys_rhs.mtx", 1, "io_error", "/nonexistent/keys_rhs.mtx", true},
      {lund + " --ncpu 1 --trace /proc/no/such/dir", 1, "io_error", "/proc/no/such/dir", true},
      {lund + " --ncpu 0", 2, "usage_error", "--ncpu", false},
      {lund + " --ncpu abc", 2, "usage_error", "abc", false},
      {lund + " --no-such-option", 2, "usage_error", "--no-such-option", false},
  };
  for (const Case& c : cases) {
    const CliRun r = run("solve " + c.args + " --json");
    EXPECT_EQ(r.exit_code, c.exit_code) << c.args << ": " << r.err;
    nlohmann::json j;
    ASSERT_NO_THROW(j = nlohmann::json::parse(r.out)) << c.args << ": stdout '" << r.out << "'";
    const std::set<std::string> got = key_set(j);
    EXPECT_EQ(got, expected) << c.args << ": missing " << keys_missing(expected, got) << "; extra "
                             << keys_missing(got, expected);
    EXPECT_EQ(j["status"], c.status) << c.args;
    if (c.status == "ok") {
      EXPECT_TRUE(j["error"].is_null()) << c.args;
      EXPECT_EQ(j["rhs"], rhs_file);
      EXPECT_EQ(j["nrhs"], 1);
    } else {
      ASSERT_TRUE(j["error"].is_string()) << c.args;
      EXPECT_NE(j["error"].get<std::string>().find(c.in_error), std::string::npos)
          << c.args << ": " << j["error"];
      EXPECT_FALSE(r.err.empty()) << c.args;
    }
    if (c.status == "not_positive_definite") {
      EXPECT_EQ(j["failed_column"], 10);
      EXPECT_TRUE(j["pivot"].is_number());
    } else {
      EXPECT_TRUE(j["failed_column"].is_null()) << c.args;
      EXPECT_TRUE(j["pivot"].is_null()) << c.args;
    }
    if (c.options_known) {
      EXPECT_EQ(j["executor"], "starpu") << c.args;
      EXPECT_EQ(j["ordering"], "scotch") << c.args;
      EXPECT_EQ(j["relax_path"], false) << c.args;
      EXPECT_EQ(j["max_front_cap"], 0) << c.args;
      EXPECT_EQ(j["method_requested"], "llt") << c.args;
    }
    EXPECT_TRUE(j["trace_dir"].is_null()) << c.args;  // no trace written
    if (c.status == "io_error" || c.status == "parse_error" || c.status == "usage_error") {
      EXPECT_TRUE(j["backward_error"].is_null() && j["t_factor_s"].is_null()) << c.args;
    }
  }
}

TEST(Cli, LdltMethodsReportInertia) {
  const char* keys[] = {"method", "inertia", "perturbed_pivots", "delayed_pivots",
                        "inertia_guaranteed", "refine_steps", "method_requested"};
  for (const char* m : {"ldlt", "quasi-definite", "auto"}) {
    const CliRun r = run("solve " + data("kkt/sqd_aug2d.mtx") + " --method " + m + " --refine 2 --json");
    ASSERT_EQ(r.exit_code, 0) << m << ": " << r.err;
    const auto j = nlohmann::json::parse(r.out);
    for (const char* k : keys) EXPECT_TRUE(j.contains(k)) << k;
    EXPECT_EQ(j["method"], std::string(m) == "quasi-definite" ? "quasi-definite" : "ldlt") << m;
    EXPECT_EQ(j["method_requested"], m);
    EXPECT_EQ(j["inertia"]["positive"], 10000) << m;
    EXPECT_EQ(j["inertia"]["negative"], 20200) << m;
    EXPECT_EQ(j["inertia"]["zero"], 0) << m;
    EXPECT_EQ(j["delayed_pivots"], 0);
    EXPECT_EQ(j["inertia_guaranteed"], j["perturbed_pivots"] == 0 && j["below_threshold_pivots"] == 0);
    EXPECT_LE(j["refine_steps"].get<int>(), 2);
    EXPECT_LE(j["backward_error"].get<double>(), 1e-12);
  }
  // Cholesky keeps its error; the inertia keys are there, null.
  CliRun r = run("solve " + data("kkt/sqd_aug2d.mtx") + " --json");
  EXPECT_EQ(r.exit_code, 1);
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["status"], "not_positive_definite");
  for (const char* k : keys) EXPECT_TRUE(j.contains(k)) << k;
  EXPECT_TRUE(j["inertia"].is_null());
  // [[1,1,0],[1,1,0],[0,0,1]]: a zero pivot, inertia (2, 0, 1), no solution.
  const std::string f = write_tmp("zero_pivot.mtx",
                                  "%%MatrixMarket matrix coordinate real symmetric\n"
                                  "3 3 4\n1 1 1\n2 1 1\n2 2 1\n3 3 1\n");
  r = run("solve " + f + " --method ldlt --json");
  EXPECT_EQ(r.exit_code, 1);
  j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["status"], "singular");
  EXPECT_EQ(j["inertia"]["positive"], 2);
  EXPECT_EQ(j["inertia"]["negative"], 0);
  EXPECT_EQ(j["inertia"]["zero"], 1);
  EXPECT_TRUE(j["backward_error"].is_null());
  EXPECT_GE(j["failed_column"].get<int>(), 1);
  r = run("solve " + f + " --method ldlt --refine -1");
  EXPECT_EQ(r.exit_code, 2);
  r = run("solve " + f + " --method bogus");
  EXPECT_EQ(r.exit_code, 2);
}

}  // namespace

namespace {

TEST(Cli, GenericOpenBlasCoreIsReplacedByTheNativeOne) {
  // As on a CPU newer than OpenBLAS (model 207 and OpenBLAS 0.3.21 on the GPU
  // machine): OpenBLAS "chose" Prescott; starfront re-executes itself with
  // OPENBLAS_CORETYPE set, and the report says which core runs and why.
  __builtin_cpu_init();
  if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma"))
    GTEST_SKIP() << "this CPU has no AVX2+FMA: OpenBLAS's generic kernels are the right ones";
  const CliRun r = starfront::testing::run_cli("solve --json", "STARFRONT_TEST_OPENBLAS_CORE=Prescott");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["blas_core"]["detected_by_openblas"], "Prescott");
  const std::string name = j["blas_core"]["name"];
  EXPECT_TRUE(name == "SkylakeX" || name == "Haswell") << name;
  EXPECT_TRUE(j["blas_core"]["recommended"].is_null());
  EXPECT_LE(j["backward_error"].get<double>(), 1e-14);
  // Turned off: the generic core stays, and the report recommends the native one.
  const CliRun k = starfront::testing::run_cli(
      "solve --json", "STARFRONT_TEST_OPENBLAS_CORE=Prescott STARFRONT_KEEP_BLAS_CORE=1");
  ASSERT_EQ(k.exit_code, 0) << k.err;
  const auto jk = nlohmann::json::parse(k.out);
  EXPECT_EQ(jk["blas_core"]["name"], "Prescott");
  EXPECT_EQ(jk["blas_core"]["recommended"], name);
  const CliRun h = starfront::testing::run_cli("solve", "STARFRONT_TEST_OPENBLAS_CORE=Prescott");
  EXPECT_NE(h.out.find("OPENBLAS_CORETYPE set by starfront"), std::string::npos) << h.out;
}

TEST(Cli, SlotPoliciesMemoryReportAndChecker) {
  const std::string f = data("spd/bcsstk13.mtx");
  double private_planned = 0;
  for (const char* pol : {"private", "dag", "budget-min"}) {
    const CliRun r = run("solve " + f + " --json --slots " + pol);
    ASSERT_EQ(r.exit_code, 0) << pol << ": " << r.err;
    const auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["slots_policy"], pol);
    const auto& m = j["memory"];
    for (const char* k : {"factors", "cb_lower_bound", "cb_planned", "cb_private", "cb_level_stack",
                          "subtree_workspace", "added_deps", "slots", "measured_peak"})
      EXPECT_TRUE(m.contains(k)) << k;
    EXPECT_GT(m["factors"].get<double>(), 0);
    EXPECT_LE(m["cb_lower_bound"].get<double>(), m["cb_planned"].get<double>());
    EXPECT_LE(m["cb_planned"].get<double>(), m["cb_private"].get<double>());
    if (std::string(pol) == "private") private_planned = m["cb_planned"].get<double>();
    EXPECT_LE(j["backward_error"].get<double>(), 1e-14);
  }
  EXPECT_GT(private_planned, 0);
  // A budget below the minimum: a clear error naming the minimum, exit 1.
  const CliRun small = run("solve " + f + " --json --slots budget:1K");
  EXPECT_EQ(small.exit_code, 1);
  const auto j = nlohmann::json::parse(small.out);
  EXPECT_EQ(j["status"], "out_of_memory");
  EXPECT_NE(j["error"].get<std::string>().find("cannot be met"), std::string::npos) << j["error"];
  // Bad policy text: a usage error before any work.
  const CliRun bad = run("solve " + f + " --slots budget:lots");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("budget:BYTES"), std::string::npos) << bad.err;
  // A bad watchdog value is a usage error; a generous one changes nothing.
  EXPECT_EQ(run("solve " + f + " --watchdog -1").exit_code, 2);
  EXPECT_EQ(run("solve " + f + " --watchdog 60").exit_code, 0);
  EXPECT_EQ(run("solve " + f + " --watchdog 1e300").exit_code, 0);  // "never": no overflow
  EXPECT_EQ(run("plan " + f + " --check-slots 1000000000").exit_code, 2);  // bounded request
  // LDLᵀ on a tiled graph runs the untiled copy: the report describes that graph.
  {
    const CliRun l = run("solve " + f + " --method ldlt --tile-threshold 64 --tile-size 32 --json");
    ASSERT_EQ(l.exit_code, 0) << l.err;
    const auto jl = nlohmann::json::parse(l.out);
    long long sum = 0;
    for (const auto& [k, v] : jl["tasks_by_kind"].items()) sum += v.get<long long>();
    EXPECT_EQ(sum, jl["tasks"].get<long long>());
    EXPECT_EQ(jl["tasks_by_kind"]["potrf"], 0);
  }
  // The checker, through `plan`.
  for (const char* pol : {"dag", "budget-min"}) {
    const CliRun p = run("plan " + data("spd/activsg2000_hykkt_10.mtx") + " --no-fuse --slots " + pol +
                         " --check-slots 200");
    EXPECT_EQ(p.exit_code, 0) << p.err;
    EXPECT_NE(p.out.find("200 random execution orders, 0 with a violation"), std::string::npos) << p.out;
    EXPECT_NE(p.out.find("memory (MiB)"), std::string::npos) << p.out;
  }
}

}  // namespace
