#include "solve/graph_solve.hpp"

#include <algorithm>
#include <vector>

#include "plan/rank_mapping.hpp"
#include "solve/solve.hpp"

namespace starfront {
namespace {

/// Runs the tasks of S in submission order; the address of handle h's
/// memory comes from addr(h, ld) (its leading dimension into ld).
template <class Addr>
void run_tasks(const SolveGraph& S, idx_t nrhs, SolveWorkspace& ws, Addr&& addr) {
  for (idx_t t = 0; t < static_cast<idx_t>(S.tasks.size()); ++t) {
    const SolveTask& task = S.tasks[t];
    ws.ptr.clear(), ws.ld.clear();
    for (idx_t a = task.acc_begin; a < task.acc_end; ++a) {
      idx_t ld = 1;
      ws.ptr.push_back(addr(S.accesses[a].handle, ld));
      ws.ld.push_back(ld);
    }
    run_solve_task_cpu(S, t, nrhs, ws.ptr.data(), ws.ld.data(), &ws.scratch);
  }
}

}  // namespace

Status ProcessSolve::build(const TaskGraph& G) {
  *this = ProcessSolve{};
  RankMapping one;
  Status st = map_graph(G, 1, one);
  if (st.ok()) st = build_solve_graph(G, one, S_);
  if (!st.ok()) {
    S_ = SolveGraph{};
    return st;
  }
  const idx_t nh = static_cast<idx_t>(S_.handles.size());
  where_.assign(nh, 0);
  ld_.assign(nh, -1);
  for (idx_t h = 0; h < nh; ++h) {
    const SolveHandle& d = S_.handles[h];
    switch (d.kind) {
      case SolveHandleKind::factor:
        where_[h] = G.blocks[d.block].offset;
        ld_[h] = G.blocks[d.block].ld;
        break;
      case SolveHandleKind::rows:
        where_[h] = d.row0;
        break;
      case SolveHandleKind::front:
      case SolveHandleKind::segment:
        where_[h] = piece_rows_;
        ld_[h] = std::max<idx_t>(1, d.rows);
        piece_rows_ += d.rows;
        break;
    }
  }
  graph_ = &G;
  build_id_ = G.build_id;
  return Status::success();
}

void ProcessSolve::run(const double* Lx, double* X, idx_t nrhs, idx_t ldx, SolveWorkspace& ws) const {
  if (static_cast<idx_t>(ws.pieces.size()) < piece_rows_ * nrhs)
    ws.pieces.resize(static_cast<std::size_t>(piece_rows_ * nrhs));
  double* buf = ws.pieces.data();
  double* L = const_cast<double*>(Lx);  // factor handles are only read
  run_tasks(S_, nrhs, ws, [&](idx_t h, idx_t& ld) -> double* {
    switch (S_.handles[h].kind) {
      case SolveHandleKind::factor: ld = ld_[h]; return L + where_[h];
      case SolveHandleKind::rows: ld = ldx; return X + where_[h];
      default: ld = ld_[h]; return buf + where_[h] * nrhs;
    }
  });
}

Status ProcessSolve::solve(const NumericFactor& F, double* B, idx_t nrhs, idx_t ldb, SolveWorkspace& ws) const {
  if (F.is_ldlt() || !S_.graph || S_.graph->plan != F.plan)
    return Status::error(StatusCode::invalid_argument, "solve: the solve graph is not one of this Cholesky factor");
  return solve_permuted_with(
      F, B, nrhs, ldb, [&](double* X, idx_t r) { run(F.Lx.data(), X, r, F.plan->n, ws); }, &ws.x);
}

void solve_graph_in_process(const SolveGraph& S, const double* Lx, double* X, idx_t nrhs, idx_t ldx) {
  const TaskGraph& G = *S.graph;
  const idx_t nh = static_cast<idx_t>(S.handles.size());
  std::vector<std::vector<double>> own(nh);
  for (idx_t h = 0; h < nh; ++h)
    if (S.handles[h].kind == SolveHandleKind::front || S.handles[h].kind == SolveHandleKind::segment)
      own[h].assign(static_cast<std::size_t>(S.handles[h].rows * nrhs), 0.0);
  SolveWorkspace ws;
  run_tasks(S, nrhs, ws, [&](idx_t h, idx_t& ld) -> double* {
    const SolveHandle& d = S.handles[h];
    switch (d.kind) {
      case SolveHandleKind::factor:  // read only
        ld = G.blocks[d.block].ld;
        return const_cast<double*>(Lx) + G.blocks[d.block].offset;
      case SolveHandleKind::rows: ld = ldx; return X + d.row0;
      default: ld = std::max<idx_t>(1, d.rows); return own[h].data();
    }
  });
}

Status solve_in_place_graph(const SolveGraph& S, const NumericFactor& F, double* B, idx_t nrhs, idx_t ldb) {
  if (F.is_ldlt() || !S.graph || S.graph->plan != F.plan)
    return Status::error(StatusCode::invalid_argument, "solve: the solve graph is not one of this Cholesky factor");
  return solve_permuted_with(F, B, nrhs, ldb, [&](double* X, idx_t r) {
    solve_graph_in_process(S, F.Lx.data(), X, r, F.plan->n);
  });
}

}  // namespace starfront
