#include "analysis/etree.hpp"

namespace starfront {

std::vector<idx_t> elimination_tree(const CscMatrix& A) {
  const idx_t n = A.n;
  std::vector<idx_t> parent(n, -1);
  std::vector<idx_t> ancestor(n, -1);  // path-compressed "virtual" ancestors
  std::vector<idx_t> head(n, -1);      // head[k]: first column waiting for row k
  std::vector<idx_t> link(n, -1);      // next column in the same row list
  std::vector<idx_t> cursor(n);        // cursor[j]: next off-diagonal position of column j

  // Link column j into the list of the row at its cursor, if any remains.
  auto enqueue = [&](idx_t j) {
    if (cursor[j] < A.colptr[j + 1]) {
      const idx_t r = A.rowind[cursor[j]];
      link[j] = head[r];
      head[r] = j;
    }
  };
  for (idx_t j = 0; j < n; ++j) {
    cursor[j] = A.colptr[j];
    if (cursor[j] < A.colptr[j + 1] && A.rowind[cursor[j]] == j) ++cursor[j];  // skip diagonal
    enqueue(j);
  }
  for (idx_t k = 0; k < n; ++k) {
    idx_t j = head[k];
    while (j != -1) {  // entry (k, j), j < k
      const idx_t next_j = link[j];
      for (idx_t i = j; i != -1 && i != k;) {
        const idx_t up = ancestor[i];
        ancestor[i] = k;
        if (up == -1) parent[i] = k;
        i = up;
      }
      ++cursor[j];
      enqueue(j);
      j = next_j;
    }
  }
  return parent;
}

}  // namespace starfront
