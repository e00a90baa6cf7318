#include "analysis/colcounts.hpp"

#include <numeric>

namespace starfront {

std::vector<idx_t> column_counts(const CscMatrix& A, const std::vector<idx_t>& parent,
                                 const std::vector<idx_t>& post) {
  const idx_t n = A.n;
  std::vector<idx_t> delta(n, 0);        // becomes colcount after the subtree sums
  std::vector<idx_t> first(n, -1);       // postorder index of j's first descendant
  std::vector<idx_t> maxfirst(n, -1);    // largest first[] seen in row subtree i
  std::vector<idx_t> prevleaf(n, -1);    // previous leaf found in row subtree i
  std::vector<idx_t> ancestor(n);        // disjoint-set forest for the LCAs
  std::iota(ancestor.begin(), ancestor.end(), idx_t{0});

  for (idx_t k = 0; k < n; ++k) {
    idx_t j = post[k];
    delta[j] = (first[j] == -1) ? 1 : 0;  // a leaf of the etree starts at 1
    for (; j != -1 && first[j] == -1; j = parent[j]) first[j] = k;
  }

  auto find_root = [&](idx_t q) {  // root of q's set, compressing the path
    idx_t r = q;
    while (ancestor[r] != r) r = ancestor[r];
    while (ancestor[q] != r) {
      const idx_t up = ancestor[q];
      ancestor[q] = r;
      q = up;
    }
    return r;
  };

  for (idx_t k = 0; k < n; ++k) {
    const idx_t j = post[k];
    if (parent[j] != -1) --delta[parent[j]];
    for (idx_t p = A.colptr[j]; p < A.colptr[j + 1]; ++p) {
      const idx_t i = A.rowind[p];
      if (i <= j || first[j] <= maxfirst[i]) continue;  // j is not a leaf of row subtree i
      maxfirst[i] = first[j];
      const idx_t jprev = prevleaf[i];
      prevleaf[i] = j;
      ++delta[j];
      if (jprev != -1) --delta[find_root(jprev)];  // lca(jprev, j) is counted twice
    }
    if (parent[j] != -1) ancestor[j] = parent[j];
  }
  for (idx_t k = 0; k < n; ++k) {  // children precede parents in postorder
    const idx_t j = post[k];
    if (parent[j] != -1) delta[parent[j]] += delta[j];
  }
  return delta;
}

}  // namespace starfront
