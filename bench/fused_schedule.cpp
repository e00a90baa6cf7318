// fused_schedule: a model of the fused GPU subtree kernel's schedule
// (codelets/cuda/fused_subtree_kernel.hpp), run on the host: thread blocks
// that take the fronts' tickets in order, wait for the children, and hold
// their multiprocessor while they wait. It weighs what the critical path
// alone (tree_path) leaves out: how many blocks are resident, when the
// large launch's blocks find a free multiprocessor, and the ticket order
// (FusedTicketOrder). A model, not a measurement (bench/README.md, issue 6,
// session 44): its figures are only as good as its costs.
//
// Model. Each front of order m with k pivots costs its prologue P (small or
// large launch, from the traces' per-front means) before it can take in its
// children, then front_latency(m, k) (analysis/critical_path.hpp: the wait,
// the extend-add, the factorisation and the write-out) after the later of
// its prologue's end and its last child's completion. The small launch has
// SMS × PER_SM blocks (6 a multiprocessor: the kernel's launch bounds),
// PER_SM on each multiprocessor; a block takes the next small ticket when
// it is free and exits when none is left. The large launch has one block a
// multiprocessor (up to 227 KiB of shared memory: nothing else fits beside
// it), which starts when the multiprocessor's small blocks have all exited
// (the programmatic launch lets it start then, not after the whole first
// launch), and takes large tickets. Time 0 is the first launch's start.
//
// Usage: fused_schedule [--sms N] [--per-sm B] [--prologue SMALL,LARGE]
//                       [--model A,B,C] INPUT...
//   INPUT: a Matrix Market file, lap3d:N[:27], lap2d:N. For each analysis
//   (the default, and the critical-path analysis of issue 6: scotch-path,
//   --relax-path, --max-front 232) and each ticket order (height, path),
//   on the GPU graph's fused tasks: the model's makespan of the longest
//   task, its critical path (no block limit), and how long the fronts of
//   the task's critical path waited for a block (late starts), in µs.
//   Defaults: 132 multiprocessors (H200), 6 blocks each, prologues 6.4 and
//   1.8 µs (session 41's traces of activsg2000_hykkt_10), FrontLatencyModel.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <queue>
#include <string>
#include <vector>

#include "analysis/critical_path.hpp"
#include "api/solver.hpp"
#include "bench_common.hpp"
#include "cuda/fused_subtree_index.hpp"
#include "plan/task_graph.hpp"

using namespace starfront;
using namespace starfront::bench;

namespace {

struct Machine {
  int sms = 132, per_sm = 6;
  double prologue_small = 6.4e-6, prologue_large = 1.8e-6;
  FrontLatencyModel model;
};

struct Outcome {
  double makespan = 0, path = 0, late = 0;  ///< seconds
  double span[2] = {0, 0};  ///< per launch: first start to last completion (the trace's spans), seconds
  idx_t fronts = 0;
};

/// Simulates task t of X on machine M (file header).
Outcome simulate(const FusedSubtreeIndex& X, idx_t t, const Machine& M) {
  const FusedTaskIndex& ti = X.task[t];
  const idx_t n = ti.nfronts;
  std::vector<double> start(n, 0), done(n, 0), own(n, 0), cost(n, 0), path(n, 0);
  for (idx_t q = 0; q < n; ++q) {
    const FusedFront& f = X.fronts[ti.front_begin + q];
    cost[q] = front_latency(M.model, f.m, f.k);
    own[q] = q < ti.nsmall ? M.prologue_small : M.prologue_large;
  }
  // The front's completion once it has a block at time s (its children have
  // smaller tickets, hence are scheduled already: done[] is known).
  auto run = [&](idx_t q, double s) {
    const FusedFront& f = X.fronts[ti.front_begin + q];
    double ready = s + own[q];
    for (std::int64_t c = f.child_begin; c < f.child_end; ++c) ready = std::max(ready, done[X.children[c].ticket]);
    start[q] = s;
    done[q] = ready + cost[q];
  };
  // Small launch: blocks as (free time, multiprocessor) in a min-heap; a
  // multiprocessor frees when its last small block exits.
  using Ev = std::pair<double, int>;
  std::priority_queue<Ev, std::vector<Ev>, std::greater<Ev>> blocks;
  for (int sm = 0; sm < M.sms; ++sm)
    for (int b = 0; b < M.per_sm; ++b) blocks.push({0.0, sm});
  std::vector<double> sm_free(M.sms, 0.0);
  for (idx_t q = 0; q < ti.nsmall; ++q) {
    const Ev e = blocks.top();
    blocks.pop();
    run(q, e.first);
    blocks.push({done[q], e.second});
  }
  while (!blocks.empty()) {  // no small ticket left: the blocks exit
    const Ev e = blocks.top();
    blocks.pop();
    sm_free[e.second] = std::max(sm_free[e.second], e.first);
  }
  for (int sm = 0; sm < M.sms; ++sm) blocks.push({sm_free[sm], sm});
  for (idx_t q = ti.nsmall; q < n; ++q) {
    const Ev e = blocks.top();
    blocks.pop();
    run(q, e.first);
    blocks.push({done[q], e.second});
  }
  Outcome o;
  idx_t top = 0;
  double first[2] = {1e300, 1e300}, last[2] = {0, 0};
  for (idx_t q = 0; q < n; ++q) {
    const int part = q < ti.nsmall ? 0 : 1;
    first[part] = std::min(first[part], start[q]);
    last[part] = std::max(last[part], done[q]);
    o.makespan = std::max(o.makespan, done[q]);
    if (done[q] > done[top]) top = q;
    // No block limit: every front starts at 0.
    const FusedFront& f = X.fronts[ti.front_begin + q];
    double ready = own[q];
    for (std::int64_t c = f.child_begin; c < f.child_end; ++c) ready = std::max(ready, path[X.children[c].ticket]);
    path[q] = ready + cost[q];
    o.path = std::max(o.path, path[q]);
  }
  for (int part = 0; part < 2; ++part)
    if (last[part] > 0) o.span[part] = last[part] - first[part];
  // Late starts along the simulated critical chain (at each front the child
  // completed last): how long its block came after that child (the chain's
  // leaf: after the launch's start).
  for (idx_t q = top; q >= 0;) {
    const FusedFront& f = X.fronts[ti.front_begin + q];
    idx_t below = -1;
    for (std::int64_t c = f.child_begin; c < f.child_end; ++c)
      if (below < 0 || done[X.children[c].ticket] > done[below]) below = X.children[c].ticket;
    o.late += std::max(0.0, start[q] - (below >= 0 ? done[below] : 0.0));
    ++o.fronts;
    q = below;
  }
  return o;
}

const char* kUsage =
    "usage: fused_schedule [--sms N] [--per-sm B] [--prologue SMALL,LARGE] [--model A,B,C] INPUT...\n"
    "  INPUT: Matrix Market file, lap3d:N[:27], lap2d:N; prologues in us; model: us, us a column,\n"
    "  ns per k(m-k) entry (FrontLatencyModel)\n";

}  // namespace

int main(int argc, char** argv) {
  Machine M;
  std::vector<std::string> inputs;
  for (int a = 1; a < argc; ++a) {
    const std::string arg = argv[a];
    double v[2];
    if ((arg == "--sms" || arg == "--per-sm") && a + 1 < argc) {
      long long x = 0;
      if (!parse_count(argv[++a], 1, 100000, x)) {
        std::fprintf(stderr, "fused_schedule: %s wants an integer in 1..100000, got '%s'\n%s", arg.c_str(), argv[a],
                     kUsage);
        return 2;
      }
      (arg == "--sms" ? M.sms : M.per_sm) = static_cast<int>(x);
    } else if (arg == "--prologue" && a + 1 < argc) {
      if (!parse_list(argv[++a], 2, v)) {
        std::fprintf(stderr, "fused_schedule: --prologue wants SMALL,LARGE (us, >= 0), got '%s'\n%s", argv[a], kUsage);
        return 2;
      }
      M.prologue_small = v[0] * 1e-6, M.prologue_large = v[1] * 1e-6;
    } else if (arg == "--model" && a + 1 < argc) {
      if (!parse_model(argv[++a], M.model)) {
        std::fprintf(stderr, "fused_schedule: --model wants A,B,C (>= 0), got '%s'\n%s", argv[a], kUsage);
        return 2;
      }
    } else if (!arg.empty() && arg[0] == '-') {
      std::fprintf(stderr, "fused_schedule: unknown option '%s'\n%s", arg.c_str(), kUsage);
      return 2;
    } else {
      inputs.push_back(arg);
    }
  }
  if (inputs.empty()) {
    std::fprintf(stderr, "%s", kUsage);
    return 2;
  }
  std::printf("fused_schedule: %d multiprocessors, %d small blocks each, prologues %.1f / %.1f us, model %.2f us + "
              "%.3f us a column + %.2f ns per k(m-k)\n\n",
              M.sms, M.per_sm, 1e6 * M.prologue_small, 1e6 * M.prologue_large, 1e6 * M.model.per_front,
              1e6 * M.model.per_column, 1e9 * M.model.per_update);
  std::printf("| matrix | analysis | tickets | fused fronts | small | makespan us | span small / large us | "
              "critical path us | makespan / path | chain fronts | late starts on the chain us |\n"
              "|---|---|---|---|---|---|---|---|---|---|---|\n");
  int status = 0;
  for (const std::string& name : inputs) {
    CscMatrix A;
    if (Status st = load(name, A); !st.ok()) {
      std::fprintf(stderr, "fused_schedule: %s: %s\n", name.c_str(), st.message.c_str());
      status = 1;
      continue;
    }
    for (int analysis = 0; analysis < 2; ++analysis) {
      AnalysisOptions ao;
      if (analysis == 1) {
        ao.ordering_choice = OrderingChoice::critical_path;
        ao.relax_critical_path = true;
        ao.relax_max_front = kGpuFusedFront;
      }
      ao.latency = M.model;
      Solver solver;
      if (Status st = solver.analyse(A, ao, gpu_graph_options(16, kGpuFusedFront)); !st.ok()) {
        std::fprintf(stderr, "fused_schedule: %s: %s\n", name.c_str(), st.message.c_str());
        status = 1;
        break;
      }
      for (FusedTicketOrder order : {FusedTicketOrder::height, FusedTicketOrder::path}) {
        FusedSubtreeIndex X;
        if (Status st = build_fused_subtree_index(solver.graph(), X, order, M.model); !st.ok()) {
          std::fprintf(stderr, "fused_schedule: %s: %s\n", name.c_str(), st.message.c_str());
          status = 1;
          break;
        }
        Outcome worst;
        idx_t nf = 0, ns = 0;
        for (idx_t t = 0; t < static_cast<idx_t>(X.task.size()); ++t) {
          if (X.task[t].nfronts == 0) continue;
          const Outcome o = simulate(X, t, M);
          if (o.makespan > worst.makespan) worst = o, nf = X.task[t].nfronts, ns = X.task[t].nsmall;
        }
        std::printf("| %s | %s | %s | %lld | %lld | %.0f | %.0f / %.0f | %.0f | %.2f | %lld | %.1f |\n",
                    name.substr(name.find_last_of('/') + 1).c_str(),
                    analysis ? "scotch-path, --relax-path, cap 232" : "default",
                    order == FusedTicketOrder::path ? "path" : "height", static_cast<long long>(nf),
                    static_cast<long long>(ns), 1e6 * worst.makespan, 1e6 * worst.span[0], 1e6 * worst.span[1],
                    1e6 * worst.path,
                    worst.path > 0 ? worst.makespan / worst.path : 0.0, static_cast<long long>(worst.fronts),
                    1e6 * worst.late);
      }
    }
  }
  return status;
}
