// The trace library (tools/starfront/trace): task names parse back to the
// tasks they name, the files starpu_fxt_tool writes are read and summarised
// (a hand-made sample with hand-checked figures), bad input gives errors
// with file and line, and the Gantt boxes stay few for huge traces.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "analysis/symbolic.hpp"
#include "plan/front_plan.hpp"
#include "plan/task_graph.hpp"
#include "sparse/generators.hpp"
#include "trace/gantt.hpp"
#include "trace/summary.hpp"
#include "trace/task_name_parse.hpp"
#include "trace/trace_files.hpp"

namespace starfront::trace {
namespace {

const std::string kSample = std::string(STARFRONT_TRACE_SAMPLE_DIR);

std::string tmp(const std::string& name) { return std::string(STARFRONT_TEST_TMPDIR) + "/" + name; }

TEST(TaskNames, EveryTaskOfTiledAndFusedGraphsParsesBack) {
  CscMatrix A;
  ASSERT_TRUE(laplace3d(12, 7, A).ok());
  SymbolicFactor S;
  ASSERT_TRUE(analyse(A, AnalysisOptions{}, S).ok());
  FrontPlan P;
  ASSERT_TRUE(build_front_plan(A, S, P).ok());
  GraphOptions o;
  o.tile_threshold = 40;
  o.tile_size = 16;
  o.workers = 2;
  o.min_subtree_flops = 0;
  TaskGraph G;
  ASSERT_TRUE(build_task_graph(P, o, G).ok());
  bool seen[kTaskKinds] = {};
  for (const Task& t : G.tasks) {
    const std::string name = task_name(G, t);
    ParsedTaskName p;
    ASSERT_TRUE(parse_task_name(name, p)) << name;
    seen[static_cast<int>(t.kind)] = true;
    EXPECT_EQ(p.kind, t.kind) << name;
    EXPECT_EQ(p.front, t.front) << name;
    switch (t.kind) {
      case TaskKind::subtree: EXPECT_EQ(p.fronts, t.front - t.first_front + 1) << name; break;
      case TaskKind::front:
        EXPECT_EQ(p.rows, P.front_order(t.front));
        EXPECT_EQ(p.cols, P.ncols(t.front));
        break;
      case TaskKind::assemble: EXPECT_EQ(p.j, t.j); break;
      case TaskKind::extend_add:
        EXPECT_EQ(p.child, t.child);
        EXPECT_EQ(p.j, t.j);
        break;
      case TaskKind::potrf: EXPECT_EQ(p.k, t.k); break;
      case TaskKind::trsm: EXPECT_EQ(p.i, t.i); EXPECT_EQ(p.k, t.k); break;
      case TaskKind::syrk: EXPECT_EQ(p.j, t.j); EXPECT_EQ(p.k, t.k); break;
      case TaskKind::gemm: EXPECT_EQ(p.i, t.i); EXPECT_EQ(p.j, t.j); EXPECT_EQ(p.k, t.k); break;
    }
  }
  for (int k = 0; k < kTaskKinds; ++k) EXPECT_TRUE(seen[k]) << task_kind_name(static_cast<TaskKind>(k));
}

TEST(TaskNames, RejectsAnythingElse) {
  ParsedTaskName p;
  for (const char* bad :
       {"", "potrf", "potrf f", "potrf f12 (1,2)", "potrf f12 (1,1) ", "syrk f3 (2,1) k0", "gemm f3 (2,1)",
        "gemm f3 (2,1) k", "trsm f-3 (1,0)", "front f8 (40x)", "subtree s3 (0 fronts)", "extend_add f1->2 (col 0)",
        "POTRF f1 (0,0)", "_starpu_data_acquire_cb_pre", "assemble f1 (col 99999999999999999999)",
        "front f8 (40x12) extra"})
    EXPECT_FALSE(parse_task_name(bad, p)) << bad;
  ASSERT_TRUE(parse_task_name("extend_add f88->f90 (col 1)", p));
  EXPECT_EQ(p.child, 88);
  EXPECT_EQ(p.front, 90);
  EXPECT_EQ(p.j, 1);
}

TEST(TraceFiles, SampleIsSummarisedAsWorkedOutByHand) {
  Trace t;
  ASSERT_TRUE(read_trace(kSample, t).ok());
  ASSERT_EQ(t.tasks.size(), 5u);
  EXPECT_EQ(t.tasks[0].name, "front f0 (48x16)");
  EXPECT_EQ(t.tasks[0].line, 3);
  EXPECT_EQ(t.worker_names.at(1), "CPU 1");
  ASSERT_EQ(t.transfers.size(), 3u);  // the steal and the unfinished com_4 are not transfers
  ASSERT_TRUE(t.has_plan);

  const TraceSummary s = summarize(t);
  EXPECT_EQ(s.tasks, 4);
  EXPECT_EQ(s.other_tasks, 1);
  EXPECT_EQ(s.unparsed_names, 0);
  EXPECT_DOUBLE_EQ(s.makespan_ms, 8.0);  // 10 ms .. 18 ms
  EXPECT_EQ(s.by_kind[static_cast<int>(TaskKind::subtree)].count, 1);
  EXPECT_DOUBLE_EQ(s.by_kind[static_cast<int>(TaskKind::subtree)].total_ms, 5.5);
  EXPECT_DOUBLE_EQ(s.by_kind[static_cast<int>(TaskKind::potrf)].total_ms, 0.5);
  ASSERT_EQ(s.workers.size(), 2u);
  EXPECT_EQ(s.workers[0].name, "CPU 0");
  EXPECT_DOUBLE_EQ(s.workers[0].all.total_ms, 7.5);  // subtree 5.5 + gemm 2
  EXPECT_DOUBLE_EQ(s.workers[1].all.total_ms, 2.5);  // front 2 + potrf 0.5
  ASSERT_EQ(s.transfers.size(), 2u);
  EXPECT_EQ(s.transfers[0].src_node, 0);
  EXPECT_EQ(s.transfers[0].dst_node, 1);
  EXPECT_EQ(s.transfers[0].count, 2);
  EXPECT_DOUBLE_EQ(s.transfers[0].bytes, 9192.0);
  EXPECT_DOUBLE_EQ(s.transfers[1].bytes, 4096.0);

  const nlohmann::json j = summary_json(s);
  EXPECT_DOUBLE_EQ(j["makespan_s"].get<double>(), 0.008);
  EXPECT_DOUBLE_EQ(j["makespan_over_critical_path"].get<double>(), 2.0);  // 8 ms / 4 ms
  EXPECT_DOUBLE_EQ(j["by_kind"]["subtree"]["share"].get<double>(), 5.5 / 16.0);
  EXPECT_DOUBLE_EQ(j["workers"][0]["idle_share"].get<double>(), 0.0625);
  EXPECT_DOUBLE_EQ(j["workers"][1]["idle_share"].get<double>(), 0.6875);
  const std::string text = format_summary(s);
  EXPECT_NE(text.find("all recorded"), std::string::npos) << text;
  EXPECT_NE(text.find("makespan / critical path 2.00"), std::string::npos) << text;
  EXPECT_NE(text.find("node 0 -> node 1: 2 transfers"), std::string::npos) << text;
  EXPECT_NE(text.find("93.8%"), std::string::npos) << text;  // CPU 0 busy 7.5 of 8 ms
}

TEST(TraceFiles, RepeatedFactorisationsAreSummedWindowByWindow) {
  // Two factorisations of 2 tasks, 100 ms apart: the makespan is 2 x 3 ms.
  std::istringstream in(
      "Name: potrf f0 (0,0)\nModel: starfront_potrf\nJobId: 1\nWorkerId: 0\nStartTime: 0\nEndTime: 1\n\n"
      "Name: potrf f1 (0,0)\nModel: starfront_potrf\nJobId: 2\nWorkerId: 0\nStartTime: 1\nEndTime: 3\n\n"
      "Name: potrf f0 (0,0)\nModel: starfront_potrf\nJobId: 3\nWorkerId: 0\nStartTime: 100\nEndTime: 101\n\n"
      "Name: potrf f1 (0,0)\nModel: starfront_potrf\nJobId: 4\nWorkerId: 0\nStartTime: 101\nEndTime: 103\n");
  Trace t;
  ASSERT_TRUE(parse_tasks_rec(in, "x.rec", t.tasks).ok());
  t.has_plan = true;
  t.plan.tasks = 2;
  t.plan.repeat = 2;
  TraceSummary s = summarize(t);
  EXPECT_EQ(s.windows, 2);
  EXPECT_DOUBLE_EQ(s.makespan_ms, 6.0);
  t.has_plan = false;
  s = summarize(t);
  EXPECT_EQ(s.windows, 1);
  EXPECT_DOUBLE_EQ(s.makespan_ms, 103.0);
}

TEST(TraceFiles, BadInputGivesFileAndLine) {
  struct Case {
    const char* content;
    const char* where;
  };
  for (const Case& c : {
           Case{"Name: potrf f0 (0,0)\nModel: starfront_potrf\nWorkerId: 0\nStartTime: abc\nEndTime: 1\n", "x.rec:4:"},
           Case{"Name: a\n\nthis is not a field\n", "x.rec:3:"},
           Case{"Name: potrf f0 (0,0)\nModel: starfront_potrf\nWorkerId: 0\nStartTime: 1\n", "x.rec:1:"},
           Case{"Name: potrf f0 (0,0)\nModel: starfront_potrf\nWorkerId: 0\nStartTime: 5\nEndTime: 1\n", "x.rec:1:"},
           Case{"Name: potrf f0 (0,0)\nModel: starfront_potrf\nWorkerId: x\n", "x.rec:3:"},
           Case{"Name: potrf f0 (0,0)\nModel: starfront_potrf\nWorkerId: 0\nStartTime: 1\nEndTime: inf\n", "x.rec:5:"},
       }) {
    std::istringstream in(c.content);
    std::vector<TraceTask> tasks;
    const Status st = parse_tasks_rec(in, "x.rec", tasks);
    EXPECT_EQ(st.code, StatusCode::parse_error) << c.content;
    EXPECT_EQ(st.message.rfind(c.where, 0), 0u) << st.message;
  }
  std::istringstream paje("24\t1.0\tF\tp\tlots\tmm0\tcom_1\n");
  std::vector<Transfer> tr;
  const Status st = parse_paje_transfers(paje, "p.trace", tr);
  EXPECT_EQ(st.code, StatusCode::parse_error);
  EXPECT_EQ(st.message.rfind("p.trace:1:", 0), 0u) << st.message;
  std::istringstream plan("{\"tasks\": \"many\"}");
  PlanFigures pf;
  EXPECT_EQ(parse_plan_json(plan, "plan.json", pf).code, StatusCode::parse_error);
}

TEST(TraceFiles, MissingFolderOrFilesAreIoErrors) {
  Trace t;
  Status st = read_trace("/nonexistent/trace", t);
  EXPECT_EQ(st.code, StatusCode::io_error);
  EXPECT_NE(st.message.find("/nonexistent/trace"), std::string::npos);
  const std::string d = tmp("trace_without_files");
  std::filesystem::create_directories(d);
  st = read_trace(d, t);
  EXPECT_EQ(st.code, StatusCode::io_error);
  EXPECT_NE(st.message.find("tasks.rec"), std::string::npos) << st.message;
}

/// A trace of `n` tasks of alternating kinds on 2 workers, each 1 µs long.
Trace tiny_tasks(int n) {
  Trace t;
  t.worker_names = {{0, "CPU 0"}, {1, "CPU 1"}};
  for (int i = 0; i < n; ++i) {
    TraceTask x;
    const auto k = static_cast<TaskKind>(4 + i % 4);  // potrf, trsm, syrk, gemm
    x.model = std::string("starfront_") + task_kind_name(k);
    x.name = "potrf f0 (0,0)";
    x.worker = i % 2;
    x.start_ms = 0.002 * (i / 2);
    x.end_ms = x.start_ms + 0.001;
    x.timed = true;
    t.tasks.push_back(x);
  }
  return t;
}

TEST(Gantt, HugeTracesBecomeAFewBoxesPerPixel) {
  const Trace t = tiny_tasks(200000);
  const GanttData d = gantt_boxes(t, 1000);
  EXPECT_EQ(d.tasks, 200000);
  EXPECT_EQ(d.rows.size(), 2u);
  EXPECT_LE(d.boxes.size(), 2u * 1000u + 2u);
  long long drawn = 0;
  for (const GanttBox& b : d.boxes) {
    drawn += b.tasks;
    EXPECT_LE(b.x0_ms, b.x1_ms);
    EXPECT_GE(b.x0_ms, 0.0);
    EXPECT_LE(b.x1_ms, d.span_ms * (1 + 1e-9) + d.span_ms / 1000);
  }
  EXPECT_EQ(drawn, 200000);
}

TEST(Gantt, WideTasksAreDrawnOneByOne) {
  const Trace t = tiny_tasks(20);
  const GanttData d = gantt_boxes(t, 100);  // 10 tasks per worker over 100 px: each ~5 px wide
  EXPECT_EQ(d.boxes.size(), 20u);
  std::string script;
  GanttOptions o;
  o.output = tmp("g.png");
  ASSERT_TRUE(gantt_script(d, o, script).ok());
  EXPECT_NE(script.find("pngcairo size 1200,"), std::string::npos);
  EXPECT_NE(script.find("title 'gemm'"), std::string::npos);
  o.output = tmp("g.jpg");
  EXPECT_EQ(gantt_script(d, o, script).code, StatusCode::invalid_argument);
  o.output = tmp("g.svg");
  o.width = 50;
  EXPECT_EQ(gantt_script(d, o, script).code, StatusCode::invalid_argument);
}

TEST(Gantt, ImageSizeRejectsNonImages) {
  int w = 0, h = 0;
  EXPECT_EQ(image_size("/nonexistent.png", w, h).code, StatusCode::io_error);
  const std::string f = tmp("not_an_image.png");
  std::ofstream(f) << "hello";
  EXPECT_EQ(image_size(f, w, h).code, StatusCode::parse_error);
  const std::string s = tmp("truncated.svg");
  std::ofstream(s) << "<svg width=\"10\" height=\"20\">";
  EXPECT_EQ(image_size(s, w, h).code, StatusCode::parse_error);
  std::ofstream(s) << "<svg\n width=\"10\" height=\"20\"\n viewBox=\"0 0 10 20\">\n</svg>\n";
  ASSERT_TRUE(image_size(s, w, h).ok());
  EXPECT_EQ(w, 10);
  EXPECT_EQ(h, 20);
}

}  // namespace
}  // namespace starfront::trace
