#include "analysis/permutation.hpp"

#include <string>

namespace starfront {

Status check_permutation(const std::vector<idx_t>& perm, idx_t n) {
  if (n < 0) return Status::error(StatusCode::invalid_argument, "negative permutation order");
  if (static_cast<idx_t>(perm.size()) != n)
    return Status::error(StatusCode::invalid_argument,
                         "permutation has " + std::to_string(perm.size()) +
                             " entries, expected n = " + std::to_string(n));
  // where[v] = 1 + the position holding v, 0 if v not seen yet.
  std::vector<idx_t> where(n, 0);
  for (idx_t k = 0; k < n; ++k) {
    const idx_t v = perm[k];
    if (v < 0 || v >= n)
      return Status::error(StatusCode::invalid_argument,
                           "perm[" + std::to_string(k) + "] = " + std::to_string(v) +
                               " is outside [0, " + std::to_string(n) + ")");
    if (where[v] != 0)
      return Status::error(StatusCode::invalid_argument,
                           "perm[" + std::to_string(k) + "] = " + std::to_string(v) +
                               " repeats perm[" + std::to_string(where[v] - 1) + "]");
    where[v] = k + 1;
  }
  return Status::success();
}

std::vector<idx_t> invert_permutation(const std::vector<idx_t>& perm) {
  std::vector<idx_t> inv(perm.size());
  for (idx_t k = 0; k < static_cast<idx_t>(perm.size()); ++k) inv[perm[k]] = k;
  return inv;
}

std::vector<idx_t> compose_permutations(const std::vector<idx_t>& outer,
                                        const std::vector<idx_t>& inner) {
  std::vector<idx_t> r(inner.size());
  for (std::size_t k = 0; k < inner.size(); ++k) r[k] = outer[inner[k]];
  return r;
}

}  // namespace starfront
