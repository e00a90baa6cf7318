#include "analysis/critical_path.hpp"

namespace starfront {

double front_latency(const FrontLatencyModel& model, idx_t m, idx_t k) {
  const double kd = static_cast<double>(k);
  return model.per_front + model.per_column * kd +
         model.per_update * kd * static_cast<double>(m - k);
}

CriticalPath critical_path(const std::vector<idx_t>& parent, const std::vector<idx_t>& ncols,
                           const std::vector<idx_t>& order, const FrontLatencyModel& model) {
  const idx_t ns = static_cast<idx_t>(parent.size());
  // below[s]: the longest path from a leaf up to s's children; via[s]: the
  // child it comes through (-1 at a leaf).
  std::vector<double> below(ns, 0.0);
  std::vector<idx_t> via(ns, -1);
  CriticalPath cp;
  double best = -1.0;
  for (idx_t s = 0; s < ns; ++s) {
    const double path = below[s] + front_latency(model, order[s], ncols[s]);
    const idx_t p = parent[s];
    if (p > s && p < ns) {
      if (via[p] == -1 || path > below[p]) {
        below[p] = path;
        via[p] = s;
      }
    } else if (path > best) {
      best = path;
      cp.top = s;
    }
  }
  if (cp.top == -1) return cp;
  cp.seconds = best;
  for (idx_t s = cp.top; s != -1; s = via[s]) {
    ++cp.fronts;
    cp.columns += ncols[s];
  }
  return cp;
}

CriticalPath critical_path(const SymbolicFactor& sf, const FrontLatencyModel& model) {
  std::vector<idx_t> ncols(sf.nsuper), order(sf.nsuper);
  for (idx_t s = 0; s < sf.nsuper; ++s) {
    ncols[s] = sf.ncols(s);
    order[s] = sf.front_order(s);
  }
  return critical_path(sf.super_parent, ncols, order, model);
}

}  // namespace starfront
