// `starfront solve --trace`, `starfront trace summary` and `trace gantt`, run
// as processes on a small tiled factorisation (CPU only): the trace is
// produced and converted, the summary counts exactly the plan's tasks,
// every recorded name parses, the images have the requested size; bad input
// gives a clear error and a non-zero exit; no trace without --trace.
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

#include "trace/gantt.hpp"
#include "trace/task_name_parse.hpp"
#include "trace/trace_files.hpp"

#include "cli_run.hpp"

namespace fs = std::filesystem;

namespace {

using starfront::testing::CliRun;

/// Runs `ENV starfront ARGS`.
CliRun run(const std::string& args, const std::string& env = "") {
  return starfront::testing::run_cli(args, env);
}

std::string tmp(const std::string& name) { return std::string(STARFRONT_TEST_TMPDIR) + "/" + name; }

/// A fresh folder for one test.
std::string fresh_dir(const std::string& name) {
  const std::string d = tmp(name);
  fs::remove_all(d);
  return d;
}

const std::string kMatrix = std::string(STARFRONT_DATA_DIR) + "/spd/bcsstk13.mtx";
// Small tiles: a few thousand tasks of every kind, in about a second.
const std::string kGraph = " --ncpu 2 --tile-threshold 64 --tile-size 32";

TEST(TraceCli, TraceIsRecordedConvertedSummarisedAndDrawn) {
  const std::string dir = fresh_dir("trace_bcsstk13");
  const CliRun s = run("solve " + kMatrix + kGraph + " --json --trace " + dir);
  ASSERT_EQ(s.exit_code, 0) << s.err;
  const auto js = nlohmann::json::parse(s.out);
  EXPECT_EQ(js["trace_dir"], dir);
  for (const char* f : {"paje.trace", "dag.dot", "tasks.rec", "trace.rec", "plan.json", "prof_file_0"})
    EXPECT_TRUE(fs::exists(dir + "/" + f)) << f;

  // The plan, compiled independently for the same options and worker count.
  const std::string graph = tmp("trace_bcsstk13_graph.json");
  ASSERT_EQ(run("plan " + kMatrix + " --workers 2 --tile-threshold 64 --tile-size 32 --json " + graph).exit_code, 0);
  std::ifstream gin(graph);
  const long long plan_tasks = nlohmann::json::parse(gin)["stats"]["tasks"].get<long long>();
  EXPECT_GT(plan_tasks, 1000);
  EXPECT_EQ(js["tasks"].get<long long>(), plan_tasks);

  const CliRun sum = run("trace summary " + dir + " --json");
  ASSERT_EQ(sum.exit_code, 0) << sum.err;
  const auto j = nlohmann::json::parse(sum.out);
  EXPECT_EQ(j["tasks"].get<long long>(), plan_tasks);
  EXPECT_EQ(j["plan"]["tasks"].get<long long>(), plan_tasks);
  EXPECT_EQ(j["unparsed_names"], 0);
  EXPECT_EQ(j["workers"].size(), 2u);
  EXPECT_GT(j["makespan_s"].get<double>(), 0.0);
  long long by_kind = 0;
  for (const auto& [kind, v] : j["by_kind"].items()) by_kind += v["count"].get<long long>();
  EXPECT_EQ(by_kind, plan_tasks);
  for (const char* k : {"subtree", "assemble", "extend_add", "potrf", "trsm", "syrk", "gemm"})
    EXPECT_TRUE(j["by_kind"].contains(k)) << k;

  // Every name StarPU recorded for a starfront task parses, and matches its codelet.
  starfront::trace::Trace t;
  ASSERT_TRUE(starfront::trace::read_trace(dir, t).ok());
  long long ours = 0;
  for (const auto& task : t.tasks) {
    if (!starfront::trace::is_starfront_task(task)) continue;
    ++ours;
    starfront::trace::ParsedTaskName p;
    ASSERT_TRUE(starfront::trace::parse_task_name(task.name, p)) << task.name;
    EXPECT_EQ(task.model, std::string("starfront_") + starfront::task_kind_name(p.kind)) << task.name;
  }
  EXPECT_EQ(ours, plan_tasks);

  const CliRun text = run("trace summary " + dir);
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("all recorded"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("CPU 1"), std::string::npos) << text.out;

  for (const auto& [file, w, h] : {std::tuple{tmp("trace_gantt.png"), 800, 300},
                                   std::tuple{tmp("trace_gantt.svg"), 1000, 400}}) {
    fs::remove(file);
    const CliRun g = run("trace gantt " + dir + " -o " + file + " --width " + std::to_string(w) +
                         " --height " + std::to_string(h));
    ASSERT_EQ(g.exit_code, 0) << g.err;
    int iw = 0, ih = 0;
    const starfront::Status st = starfront::trace::image_size(file, iw, ih);
    ASSERT_TRUE(st.ok()) << st.message;
    EXPECT_EQ(iw, w) << file;
    EXPECT_EQ(ih, h) << file;
  }
}

TEST(TraceCli, RepeatedFactorisationsAreAllRecorded) {
  const std::string dir = fresh_dir("trace_repeat");
  const CliRun s = run("solve " + kMatrix + " --ncpu 2 --repeat 2 --json --trace " + dir);
  ASSERT_EQ(s.exit_code, 0) << s.err;
  const long long tasks = nlohmann::json::parse(s.out)["tasks"].get<long long>();
  const CliRun sum = run("trace summary " + dir + " --json");
  ASSERT_EQ(sum.exit_code, 0) << sum.err;
  const auto j = nlohmann::json::parse(sum.out);
  EXPECT_EQ(j["tasks"].get<long long>(), 2 * tasks);
  EXPECT_EQ(j["factorisations"], 2);
}

TEST(TraceCli, NoTraceUnlessAsked) {
  // StarPU would write prof_file_* into STARPU_FXT_PREFIX if it traced.
  const std::string dir = fresh_dir("trace_off");
  fs::create_directories(dir);
  const CliRun s = run("solve " + kMatrix + " --ncpu 2 --json", "STARPU_FXT_PREFIX=" + dir);
  ASSERT_EQ(s.exit_code, 0) << s.err;
  EXPECT_TRUE(nlohmann::json::parse(s.out)["trace_dir"].is_null());  // present, null: no trace
  EXPECT_TRUE(fs::is_empty(dir));
}

TEST(TraceCli, BadInputIsAClearErrorNeverACrash) {
  CliRun r = run("trace summary /nonexistent/trace");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("/nonexistent/trace"), std::string::npos) << r.err;

  // A corrupt tasks.rec: the message names the file and the line.
  const std::string bad = fresh_dir("trace_corrupt");
  fs::create_directories(bad);
  for (const char* f : {"activity.data", "paje.trace"})
    fs::copy_file(std::string(STARFRONT_TRACE_SAMPLE_DIR) + "/" + f, bad + "/" + f);
  std::ofstream(bad + "/tasks.rec") << "Name: potrf f0 (0,0)\nModel: starfront_potrf\nWorkerId: 0\n"
                                       "StartTime: 1.0\nEndTime: soon\n";
  r = run("trace summary " + bad);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find(bad + "/tasks.rec:5:"), std::string::npos) << r.err;
  r = run("trace gantt " + bad + " -o " + tmp("x.png"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("tasks.rec:5:"), std::string::npos) << r.err;

  // Only StarPU-internal records (e.g. a conversion that stopped early): an error, not an empty table.
  std::ofstream(bad + "/tasks.rec") << "Name: _starpu_data_acquire_cb_pre\nJobId: 5\n";
  r = run("trace summary " + bad);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("no starfront task"), std::string::npos) << r.err;

  const std::string sample = STARFRONT_TRACE_SAMPLE_DIR;
  r = run("trace gantt " + sample + " -o " + tmp("x.jpg"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find(".png or .svg"), std::string::npos) << r.err;
  r = run("trace gantt " + sample + " -o " + tmp("x.png"), "STARFRONT_GNUPLOT=/nonexistent/gnuplot");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("gnuplot not found"), std::string::npos) << r.err;
  EXPECT_EQ(run("trace gantt " + sample + " -o " + tmp("x.png") + " --width 10").exit_code, 2);
  EXPECT_EQ(run("trace gantt " + sample).exit_code, 2);  // -o is required
  EXPECT_EQ(run("trace").exit_code, 2);

  // Tracing needs StarPU; a missing starpu_fxt_tool is named, the raw trace kept.
  EXPECT_EQ(run("solve " + kMatrix + " --executor sequential --trace " + tmp("t_seq")).exit_code, 2);
  const std::string nofxt = fresh_dir("trace_no_tool");
  r = run("solve " + kMatrix + " --ncpu 1 --trace " + nofxt, "STARFRONT_FXT_TOOL=/nonexistent/starpu_fxt_tool");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("starpu_fxt_tool not found"), std::string::npos) << r.err;
  EXPECT_TRUE(fs::exists(nofxt + "/prof_file_0"));
  r = run("solve " + kMatrix + " --ncpu 1 --trace /proc/no/such/dir");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("/proc/no/such/dir"), std::string::npos) << r.err;
}

TEST(TraceCli, SampleTraceIsDrawn) {
  const std::string out = tmp("sample_gantt.svg");
  fs::remove(out);
  const CliRun r = run("trace gantt " + std::string(STARFRONT_TRACE_SAMPLE_DIR) + " -o " + out);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  int w = 0, h = 0;
  ASSERT_TRUE(starfront::trace::image_size(out, w, h).ok());
  EXPECT_EQ(w, 1200);
}

}  // namespace
