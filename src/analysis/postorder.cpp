#include "analysis/postorder.hpp"

namespace starfront {

std::vector<idx_t> postorder(const std::vector<idx_t>& parent) {
  const idx_t n = static_cast<idx_t>(parent.size());
  std::vector<idx_t> first_child(n, -1), next_sibling(n, -1);
  for (idx_t j = n - 1; j >= 0; --j) {  // reverse, so that lists are increasing
    const idx_t p = parent[j];
    if (p == -1) continue;
    next_sibling[j] = first_child[p];
    first_child[p] = j;
  }
  std::vector<idx_t> post;
  post.reserve(n);
  std::vector<idx_t> stack;
  for (idx_t root = 0; root < n; ++root) {
    if (parent[root] != -1) continue;
    stack.push_back(root);
    while (!stack.empty()) {
      const idx_t node = stack.back();
      const idx_t child = first_child[node];
      if (child == -1) {  // all children done
        stack.pop_back();
        post.push_back(node);
      } else {
        first_child[node] = next_sibling[child];  // consume the child
        stack.push_back(child);
      }
    }
  }
  return post;
}

}  // namespace starfront
