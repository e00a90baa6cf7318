#include "analysis/fronts.hpp"

namespace starfront {

void build_fronts(const CscMatrix& C, SymbolicFactor& sf) {
  const idx_t n = sf.n, ns = sf.nsuper;
  sf.col_to_super.assign(n, -1);
  for (idx_t s = 0; s < ns; ++s)
    for (idx_t j = sf.super_start[s]; j < sf.super_start[s + 1]; ++j) sf.col_to_super[j] = s;

  std::vector<idx_t> first_child(ns, -1), next_sibling(ns, -1);
  for (idx_t s = ns - 1; s >= 0; --s) {
    const idx_t p = sf.super_parent[s];
    if (p == -1) continue;
    next_sibling[s] = first_child[p];
    first_child[p] = s;
  }

  // Pass 1: unsorted CB rows of every supernode, children first.
  std::vector<idx_t> cb_ptr(ns + 1, 0), cb_rows;
  std::vector<idx_t> mark(n, -1);
  for (idx_t s = 0; s < ns; ++s) {
    const idx_t f = sf.super_start[s], l = sf.super_start[s + 1] - 1;
    auto add = [&](idx_t i) {
      if (i > l && mark[i] != s) {
        mark[i] = s;
        cb_rows.push_back(i);
      }
    };
    for (idx_t j = f; j <= l; ++j)
      for (idx_t p = C.colptr[j]; p < C.colptr[j + 1]; ++p) add(C.rowind[p]);
    for (idx_t c = first_child[s]; c != -1; c = next_sibling[c])
      for (idx_t p = cb_ptr[c]; p < cb_ptr[c + 1]; ++p) add(cb_rows[p]);
    cb_ptr[s + 1] = static_cast<idx_t>(cb_rows.size());
  }

  // Pass 2: bucket the (row, supernode) pairs by row, then deal the rows out
  // in increasing order, which leaves every CB sorted.
  std::vector<idx_t> row_ptr(n + 1, 0);
  for (idx_t i : cb_rows) ++row_ptr[i + 1];
  for (idx_t i = 0; i < n; ++i) row_ptr[i + 1] += row_ptr[i];
  std::vector<idx_t> row_supers(cb_rows.size());
  {
    std::vector<idx_t> next(row_ptr.begin(), row_ptr.end() - 1);
    for (idx_t s = 0; s < ns; ++s)
      for (idx_t p = cb_ptr[s]; p < cb_ptr[s + 1]; ++p) row_supers[next[cb_rows[p]]++] = s;
  }
  std::vector<idx_t>().swap(cb_rows);

  sf.front_ptr.assign(ns + 1, 0);
  for (idx_t s = 0; s < ns; ++s)
    sf.front_ptr[s + 1] = sf.front_ptr[s] + sf.ncols(s) + (cb_ptr[s + 1] - cb_ptr[s]);
  sf.front_rows.resize(sf.front_ptr[ns]);
  std::vector<idx_t> fill(ns);
  for (idx_t s = 0; s < ns; ++s) {
    idx_t q = sf.front_ptr[s];
    for (idx_t j = sf.super_start[s]; j < sf.super_start[s + 1]; ++j) sf.front_rows[q++] = j;
    fill[s] = q;
  }
  for (idx_t i = 0; i < n; ++i)
    for (idx_t p = row_ptr[i]; p < row_ptr[i + 1]; ++p) sf.front_rows[fill[row_supers[p]]++] = i;
}

}  // namespace starfront
