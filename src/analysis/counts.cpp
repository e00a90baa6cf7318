#include "analysis/counts.hpp"

#include <algorithm>

namespace starfront {

idx_t front_factor_entries(idx_t m, idx_t k) { return k * m - k * (k - 1) / 2; }

double front_factor_flops(idx_t m, idx_t k) {
  double fl = 0.0;
  for (idx_t t = 0; t < k; ++t) {
    const double c = static_cast<double>(m - t);
    fl += c * c;
  }
  return fl;
}

void compute_front_counts(SymbolicFactor& sf) {
  sf.nnz_l = 0;
  sf.flops = 0.0;
  sf.max_front = 0;
  for (idx_t s = 0; s < sf.nsuper; ++s) {
    const idx_t m = sf.front_order(s), k = sf.ncols(s);
    sf.nnz_l += front_factor_entries(m, k);
    sf.flops += front_factor_flops(m, k);
    sf.max_front = std::max(sf.max_front, m);
  }
}

void compute_exact_counts(const std::vector<idx_t>& colcount, SymbolicFactor& sf) {
  sf.nnz_l_exact = 0;
  sf.flops_exact = 0.0;
  for (idx_t c : colcount) {
    sf.nnz_l_exact += c;
    sf.flops_exact += static_cast<double>(c) * static_cast<double>(c);
  }
}

}  // namespace starfront
