#include "solve/graph_solve.hpp"

#include <vector>

#include "cpu/solve_kernels.hpp"
#include "solve/solve.hpp"

namespace starfront {

void solve_graph_in_process(const SolveGraph& S, const double* Lx, double* X, idx_t nrhs, idx_t ldx) {
  const TaskGraph& G = *S.graph;
  const idx_t nh = static_cast<idx_t>(S.handles.size());
  std::vector<double*> mem(nh, nullptr);
  std::vector<idx_t> lds(nh, 1);
  std::vector<std::vector<double>> own(nh);
  for (idx_t h = 0; h < nh; ++h) {
    const SolveHandle& d = S.handles[h];
    switch (d.kind) {
      case SolveHandleKind::factor:  // read only
        mem[h] = const_cast<double*>(Lx) + G.blocks[d.block].offset;
        lds[h] = G.blocks[d.block].ld;
        break;
      case SolveHandleKind::rows:
        mem[h] = X + d.row0;
        lds[h] = ldx;
        break;
      case SolveHandleKind::front:
      case SolveHandleKind::segment:
        own[h].assign(static_cast<std::size_t>(d.rows * nrhs), 0.0);
        mem[h] = own[h].data();
        lds[h] = std::max<idx_t>(1, d.rows);
        break;
    }
  }
  std::vector<double*> ptr;
  std::vector<idx_t> ld;
  for (idx_t t = 0; t < static_cast<idx_t>(S.tasks.size()); ++t) {
    ptr.clear(), ld.clear();
    for (idx_t a = S.tasks[t].acc_begin; a < S.tasks[t].acc_end; ++a) {
      ptr.push_back(mem[S.accesses[a].handle]);
      ld.push_back(lds[S.accesses[a].handle]);
    }
    run_solve_task_cpu(S, t, nrhs, ptr.data(), ld.data());
  }
}

Status solve_in_place_graph(const SolveGraph& S, const NumericFactor& F, double* B, idx_t nrhs, idx_t ldb) {
  if (F.is_ldlt() || !S.graph || S.graph->plan != F.plan)
    return Status::error(StatusCode::invalid_argument, "solve: the solve graph is not one of this Cholesky factor");
  return solve_permuted_with(F, B, nrhs, ldb, [&](double* X, idx_t r) {
    solve_graph_in_process(S, F.Lx.data(), X, r, F.plan->n);
  });
}

}  // namespace starfront
