#include "runtime/sequential/sequential_executor.hpp"

#include <chrono>
#include <random>

#include "cpu/blas.hpp"

namespace starfront {
namespace {

/// A random topological order of the assembly tree: repeatedly pick a random
/// front among those whose children are all done.
std::vector<idx_t> random_tree_order(const FrontPlan& P, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<idx_t> pending(P.nsuper);
  std::vector<idx_t> ready, order;
  for (idx_t s = 0; s < P.nsuper; ++s) {
    pending[s] = P.child_ptr[s + 1] - P.child_ptr[s];
    if (pending[s] == 0) ready.push_back(s);
  }
  while (!ready.empty()) {
    std::uniform_int_distribution<std::size_t> pick(0, ready.size() - 1);
    const std::size_t i = pick(rng);
    const idx_t s = ready[i];
    ready[i] = ready.back();
    ready.pop_back();
    order.push_back(s);
    const idx_t p = P.symbolic->super_parent[s];
    if (p >= 0 && --pending[p] == 0) ready.push_back(p);
  }
  return order;
}

}  // namespace

Status factorize_sequential(const FrontPlan& P, const CscMatrix& A, const FactorOptions& opts,
                            NumericFactor& F, FactorStats* stats, std::uint64_t shuffle_seed) {
  Status st = check_values(P, A);
  if (!st.ok()) return st;
  const auto t0 = std::chrono::steady_clock::now();
  openblas_set_num_threads(1);
  F.plan = &P;
  F.Lx.assign(P.factor_size(), 0.0);
  std::vector<std::vector<double>> cb(P.nsuper);
  std::vector<FrontResult> results(P.nsuper);
  std::vector<const double*> child_cb;
  const std::vector<idx_t> order = shuffle_seed ? random_tree_order(P, shuffle_seed) : P.task_order;
  for (idx_t s : order) {
    child_cb.clear();
    bool child_failed = false;
    for (idx_t q = P.child_ptr[s]; q < P.child_ptr[s + 1]; ++q) {
      const idx_t c = P.child_list[q];
      child_cb.push_back(cb[c].data());
      child_failed |= results[c].state != FrontResult::State::done;
    }
    if (child_failed) {
      results[s].state = FrontResult::State::skipped;
    } else {
      cb[s].assign(P.cb_size(s), 0.0);
      results[s] = factor_front_cpu(P, s, A.values.data(), F.Lx.data() + P.l_offset[s],
                                    cb[s].data(), child_cb.data(), opts.pivot_tol);
    }
    for (idx_t q = P.child_ptr[s]; q < P.child_ptr[s + 1]; ++q)
      std::vector<double>().swap(cb[P.child_list[q]]);  // the CB is consumed
  }
  if (stats) {
    stats->tasks = P.nsuper;
    stats->flops = 0;
    for (double f : P.front_flops) stats->flops += f;
    stats->seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
  return front_results_status(P, results, opts.pivot_tol, F);
}

}  // namespace starfront
