#include "analysis/supernodes.hpp"

namespace starfront {

SupernodePartition fundamental_supernodes(const std::vector<idx_t>& parent,
                                          const std::vector<idx_t>& colcount) {
  const idx_t n = static_cast<idx_t>(parent.size());
  std::vector<idx_t> nchild(n, 0);
  for (idx_t j = 0; j < n; ++j)
    if (parent[j] != -1) ++nchild[parent[j]];

  SupernodePartition sp;
  sp.start.assign(1, 0);
  std::vector<idx_t> col_to_super(n);
  for (idx_t j = 0; j < n; ++j) {
    const bool joins = j > 0 && parent[j - 1] == j && nchild[j] == 1 &&
                       colcount[j - 1] == colcount[j] + 1;
    if (j > 0 && !joins) sp.start.push_back(j);
    col_to_super[j] = static_cast<idx_t>(sp.start.size()) - 1;
  }
  if (n > 0) sp.start.push_back(n);

  const idx_t nsuper = static_cast<idx_t>(sp.start.size()) - 1;
  sp.parent.resize(nsuper);
  for (idx_t s = 0; s < nsuper; ++s) {
    const idx_t p = parent[sp.start[s + 1] - 1];  // parent of the last column
    sp.parent[s] = (p == -1) ? -1 : col_to_super[p];
  }
  return sp;
}

}  // namespace starfront
