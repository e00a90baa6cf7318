#include "runtime/starpu/starpu_executor.hpp"

#include <starpu.h>

#include <algorithm>
#include <chrono>
#include <string>

#include "runtime/starpu/front_codelet.hpp"
#include "runtime/starpu/runtime.hpp"

namespace starfront {
namespace {

/// Task priorities from the bottom level: the flops on the path from a front
/// to its root, mapped linearly onto StarPU's priority range, so that fronts
/// far from the root (on long paths) start first.
std::vector<int> front_priorities(const FrontPlan& P) {
  std::vector<double> level(P.nsuper, 0.0);
  for (idx_t s = P.nsuper - 1; s >= 0; --s) {  // parents have larger numbers
    const idx_t p = P.symbolic->super_parent[s];
    level[s] = P.front_flops[s] + (p >= 0 ? level[p] : 0.0);
  }
  const double top = level.empty() ? 0.0 : *std::max_element(level.begin(), level.end());
  const int lo = starpu_sched_get_min_priority(), hi = starpu_sched_get_max_priority();
  std::vector<int> prio(P.nsuper, lo);
  if (top > 0)
    for (idx_t s = 0; s < P.nsuper; ++s)
      prio[s] = lo + static_cast<int>((hi - lo) * (level[s] / top));
  return prio;
}

/// Handles of one factorisation: A's values, each front's panel and CB.
struct Handles {
  starpu_data_handle_t values = nullptr;
  std::vector<starpu_data_handle_t> panel, cb;
};

void register_handles(const FrontPlan& P, const CscMatrix& A, NumericFactor& F, Handles& H) {
  starpu_vector_data_register(&H.values, STARPU_MAIN_RAM,
                              reinterpret_cast<uintptr_t>(A.values.data()),
                              static_cast<uint32_t>(A.nnz()), sizeof(double));
  H.panel.assign(P.nsuper, nullptr);
  H.cb.assign(P.nsuper, nullptr);
  for (idx_t s = 0; s < P.nsuper; ++s) {
    const auto m = static_cast<uint32_t>(P.front_order(s));
    const auto k = static_cast<uint32_t>(P.ncols(s));
    starpu_matrix_data_register(&H.panel[s], STARPU_MAIN_RAM,
                                reinterpret_cast<uintptr_t>(F.Lx.data() + P.l_offset[s]), m, m, k,
                                sizeof(double));
    const auto mc = static_cast<uint32_t>(P.cb_order(s));
    if (mc > 0)  // home node -1: StarPU allocates it where the producer runs, when it runs
      starpu_matrix_data_register(&H.cb[s], -1, 0, mc, mc, mc, sizeof(double));
  }
}

}  // namespace

Status factorize_starpu(const FrontPlan& P, const CscMatrix& A, const FactorOptions& opts,
                        NumericFactor& F, FactorStats* stats) {
  if (!starpu_is_initialized())
    return Status::error(StatusCode::runtime_error, "StarPU is not started");
  Status st = check_values(P, A);
  if (!st.ok()) return st;
  const auto t0 = std::chrono::steady_clock::now();
  F.plan = &P;
  F.Lx.assign(P.factor_size(), 0.0);
  std::vector<FrontResult> results(P.nsuper);
  if (P.nsuper == 0) {
    if (stats) *stats = FactorStats{};
    return front_results_status(P, results, opts.pivot_tol, F);
  }
  Handles H;
  register_handles(P, A, F, H);
  std::vector<FrontTaskArgs> args(P.nsuper);
  std::vector<std::string> names(P.nsuper);
  const std::vector<int> prio = front_priorities(P);
  std::vector<struct starpu_data_descr> descr;
  idx_t submitted = 0;
  for (idx_t s : P.task_order) {
    args[s] = FrontTaskArgs{&P, s, opts.pivot_tol, &results};
    names[s] = "front f" + std::to_string(s) + " (" + std::to_string(P.front_order(s)) + "x" +
               std::to_string(P.ncols(s)) + ")";
    descr.clear();
    descr.push_back({H.values, STARPU_R});
    descr.push_back({H.panel[s], STARPU_W});
    if (H.cb[s]) descr.push_back({H.cb[s], STARPU_W});
    for (idx_t q = P.child_ptr[s]; q < P.child_ptr[s + 1]; ++q)
      descr.push_back({H.cb[P.child_list[q]], STARPU_R});
    const int ret = starpu_task_insert(
        &front_codelet, STARPU_DATA_MODE_ARRAY, descr.data(), static_cast<int>(descr.size()),
        STARPU_CL_ARGS_NFREE, &args[s], sizeof(FrontTaskArgs), STARPU_PRIORITY, prio[s],
        STARPU_FLOPS, P.front_flops[s], STARPU_NAME, names[s].c_str(), 0);
    if (ret != 0) {
      st = Status::error(StatusCode::runtime_error,
                         "starpu_task_insert failed for front " + std::to_string(s) + " (" +
                             std::to_string(ret) + ")");
      break;
    }
    ++submitted;
    // Each child's CB is read by this task only: release it once the task ran.
    for (idx_t q = P.child_ptr[s]; q < P.child_ptr[s + 1]; ++q) {
      starpu_data_unregister_submit(H.cb[P.child_list[q]]);
      H.cb[P.child_list[q]] = nullptr;
    }
  }
  // Workers run only now: while paused they do not compete with the
  // submitting thread for the cores.
  const WorkersActive active;
  // Unregistering a panel waits for its writer and brings it home: this waits
  // for exactly this factorisation's tasks.
  for (idx_t s = 0; s < P.nsuper; ++s) starpu_data_unregister(H.panel[s]);
  for (idx_t s = 0; s < P.nsuper; ++s)
    if (H.cb[s]) starpu_data_unregister_submit(H.cb[s]);
  starpu_data_unregister(H.values);
  if (stats) {
    stats->tasks = submitted;
    stats->flops = 0;
    for (double f : P.front_flops) stats->flops += f;
    stats->seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
  if (!st.ok()) return st;
  return front_results_status(P, results, opts.pivot_tol, F);
}

}  // namespace starfront
