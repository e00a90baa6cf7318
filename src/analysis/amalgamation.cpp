#include "analysis/amalgamation.hpp"

#include <algorithm>
#include <iterator>
#include <set>

#include "analysis/critical_path.hpp"

namespace starfront {
namespace {

// Figures of a (possibly merged) supernode.
struct NodeSize {
  idx_t ncols;   // k: columns
  idx_t order;   // m: front order (rows of the first column)
  double zeros;  // explicit zeros in its L trapezoid
};

bool accept_merge(const NodeSize& c, const NodeSize& p, const AnalysisOptions& opts,
                  double& newzeros) {
  const idx_t ns = c.ncols + p.ncols;
  newzeros = static_cast<double>(c.ncols) * static_cast<double>(c.ncols + p.order - c.order);
  if (ns <= opts.relax_small || newzeros == 0.0) return true;
  const double xns = static_cast<double>(ns);
  const double size = xns * (xns + 1) / 2 + xns * static_cast<double>(p.order - p.ncols);
  const double z = (c.zeros + p.zeros + newzeros) / size;
  if ((ns <= opts.relax_mid && z <= opts.relax_zeros_small) || z <= opts.relax_zeros_large) return true;
  // Marginal rule: few new zeros for the child's columns, measured against
  // the child's own L trapezoid (its zeros included).
  const double kc = static_cast<double>(c.ncols);
  const double child = kc * (kc + 1) / 2 + kc * static_cast<double>(c.order - c.ncols);
  return newzeros <= opts.relax_marginal * child && z <= opts.relax_zeros_cap;
}

// Children of each fundamental supernode, in increasing order.
struct ChildLists {
  std::vector<idx_t> first_child, next_sibling;
};

ChildLists child_lists(const SupernodePartition& fund) {
  const idx_t nf = fund.nsuper();
  ChildLists t{std::vector<idx_t>(nf, -1), std::vector<idx_t>(nf, -1)};
  for (idx_t s = nf - 1; s >= 0; --s) {
    const idx_t p = fund.parent[s];
    if (p == -1) continue;
    t.next_sibling[s] = t.first_child[p];
    t.first_child[p] = s;
  }
  return t;
}

// Merge state of a fundamental supernode s. merged_into: the supernode s was
// merged into, or -1 while s is a representative. The parts merged into a
// representative r form a list pre_head .. pre_tail (linked through next),
// placed before r's own columns.
struct Part {
  idx_t merged_into = -1;
  idx_t pre_head = -1;
  idx_t pre_tail = -1;
  idx_t next = -1;
};

// The modelled critical path below each representative, for the
// critical-path rule (see header). bl[r]: the longest path from a leaf up to
// and including r's front; below[r]: the longest among r's current children
// (0 at a leaf).
struct PathState {
  FrontLatencyModel model;
  std::vector<double> bl, below;
  double cost(const NodeSize& z) const { return front_latency(model, z.order, z.ncols); }
};

// The longest path among a front's candidate children, less one of them: the
// candidates not merged yet (a multiset of their bl) and the children adopted
// from merged ones (only their maximum matters).
struct ChildPaths {
  std::multiset<double> open;
  double adopted = 0.0;
  double max_except(double blc) const {
    double m = adopted;
    if (!open.empty()) {
      auto top = std::prev(open.end());
      if (*top != blc) m = std::max(m, *top);
      else if (top != open.begin()) m = std::max(m, *std::prev(top));
    }
    return m;
  }
  double max_all() const { return open.empty() ? adopted : std::max(adopted, *open.rbegin()); }
};

// `sz` grown by child c (its columns join the front; see header).
NodeSize merged_size(const NodeSize& p, const NodeSize& c, double newzeros) {
  return {p.ncols + c.ncols, p.order + c.ncols, p.zeros + c.zeros + newzeros};
}

// Appends (c's merged parts, then c) to p's list: pass 1, where c is a
// fundamental child of p, so p's own columns stay after c's.
void append_part(std::vector<Part>& part, idx_t p, idx_t c) {
  part[c].merged_into = p;
  const idx_t head = (part[c].pre_head != -1) ? part[c].pre_head : c;
  if (part[c].pre_tail != -1) part[part[c].pre_tail].next = c;
  if (part[p].pre_head == -1) part[p].pre_head = head;
  else part[part[p].pre_tail].next = head;
  part[p].pre_tail = c;
}

// Prepends (c's merged parts, then c) to p's list: pass 2, where c is a child
// of one of p's parts f; c's columns before all of p's keep the order a
// topological order of the elimination tree (c before f).
void prepend_part(std::vector<Part>& part, idx_t p, idx_t c) {
  part[c].merged_into = p;
  const idx_t head = (part[c].pre_head != -1) ? part[c].pre_head : c;
  if (part[c].pre_tail != -1) part[part[c].pre_tail].next = c;
  part[c].next = part[p].pre_head;
  if (part[p].pre_head == -1) part[p].pre_tail = c;
  part[p].pre_head = head;
}

bool within_cap(const NodeSize& merged, const AnalysisOptions& opts) {
  return opts.relax_max_front <= 0 || merged.order <= opts.relax_max_front;
}

// Bottom-up merging (see header): parents in increasing order, each one
// considering its children in increasing order.
std::vector<Part> merge_bottom_up(const SupernodePartition& fund, std::vector<NodeSize>& size,
                                  const ChildLists& kids, const AnalysisOptions& opts) {
  const idx_t nf = fund.nsuper();
  std::vector<Part> part(nf);
  for (idx_t p = 0; p < nf; ++p) {
    for (idx_t c = kids.first_child[p]; c != -1; c = kids.next_sibling[c]) {
      double newzeros = 0.0;
      if (!accept_merge(size[c], size[p], opts, newzeros)) continue;
      const NodeSize merged = merged_size(size[p], size[c], newzeros);
      if (!within_cap(merged, opts)) continue;
      size[p] = merged;
      append_part(part, p, c);
    }
  }
  return part;
}

// Pass 1 of the critical-path rule (see header): parents in increasing
// order; a parent tries its children by decreasing path below them (bl),
// each one through the merge rule, and keeps the merges of the prefix of
// that order that gives it the shortest path (none when no prefix is
// shorter than merging nothing).
std::vector<Part> merge_shortest_prefix(const SupernodePartition& fund, std::vector<NodeSize>& size,
                                        const ChildLists& kids, const AnalysisOptions& opts,
                                        PathState& path) {
  const idx_t nf = fund.nsuper();
  std::vector<Part> part(nf);
  std::vector<idx_t> order;
  std::vector<char> accepted;  // per tried child: merged in the prefix walk
  for (idx_t p = 0; p < nf; ++p) {
    order.clear();
    for (idx_t c = kids.first_child[p]; c != -1; c = kids.next_sibling[c]) order.push_back(c);
    std::stable_sort(order.begin(), order.end(),
                     [&](idx_t a, idx_t b) { return path.bl[a] > path.bl[b]; });
    const idx_t d = static_cast<idx_t>(order.size());
    // Prefix i: order[0..i) tried. Its path: the grown front, then the
    // longest of the merged children's children, the refused children
    // and the untried ones (order[i] has the longest of those).
    accepted.assign(order.size(), 0);
    NodeSize cur = size[p], best_size = cur;
    double adopted = 0.0, refused = 0.0;
    double best = path.cost(cur) + (d > 0 ? path.bl[order[0]] : 0.0);
    idx_t best_prefix = 0;
    for (idx_t i = 0; i < d; ++i) {
      const idx_t c = order[i];
      double newzeros = 0.0;
      const NodeSize merged = merged_size(cur, size[c], 0.0);
      if (accept_merge(size[c], cur, opts, newzeros) && within_cap(merged, opts)) {
        cur = merged_size(cur, size[c], newzeros);
        adopted = std::max(adopted, path.below[c]);
        accepted[i] = 1;
      } else {
        refused = std::max(refused, path.bl[c]);
      }
      const double rest = i + 1 < d ? path.bl[order[i + 1]] : 0.0;
      const double val = path.cost(cur) + std::max({adopted, refused, rest});
      if (val < best) {
        best = val;
        best_prefix = i + 1;
        best_size = cur;
      }
    }
    // Make the merges of the best prefix.
    size[p] = best_size;
    double below = best_prefix < d ? path.bl[order[best_prefix]] : 0.0;
    for (idx_t i = 0; i < best_prefix; ++i) {
      const idx_t c = order[i];
      if (accepted[i]) {
        append_part(part, p, c);
        below = std::max(below, path.below[c]);
      } else {
        below = std::max(below, path.bl[c]);
      }
    }
    path.below[p] = below;
    path.bl[p] = path.cost(size[p]) + below;
  }
  return part;
}

// Representative of s (the merged supernode holding it), compressing the path.
idx_t find_rep(std::vector<Part>& part, idx_t s) {
  idx_t r = s;
  while (part[r].merged_into != -1) r = part[r].merged_into;
  while (part[s].merged_into != -1 && part[s].merged_into != r) {
    const idx_t up = part[s].merged_into;
    part[s].merged_into = r;
    s = up;
  }
  return r;
}


// Pass 2 of the critical-path rule (see header): the merges pass 1 refused,
// made where every path through the grown front stays within the critical
// path L that pass 1 left. Parents in increasing order; a front's candidates
// are the representatives among the fundamental children of its parts.
void merge_within_path(const SupernodePartition& fund, std::vector<NodeSize>& size,
                       const ChildLists& kids, const AnalysisOptions& opts, PathState& path,
                       std::vector<Part>& part) {
  const idx_t nf = fund.nsuper();
  // top[r]: the path above representative r (its strict ancestors' fronts),
  // fixed while r is visited, as its ancestors are visited after it.
  std::vector<double> top(nf, 0.0);
  std::vector<idx_t> up(nf, -1);
  double L = 0.0;
  for (idx_t r = nf - 1; r >= 0; --r) {
    if (part[r].merged_into != -1) continue;
    if (fund.parent[r] != -1) {
      up[r] = find_rep(part, fund.parent[r]);
      top[r] = top[up[r]] + path.cost(size[up[r]]);
    }
    L = std::max(L, top[r] + path.bl[r]);
  }
  const double bound = L * (1.0 + 1e-12);
  std::vector<idx_t> cand;
  for (idx_t p = 0; p < nf; ++p) {
    if (part[p].merged_into != -1) continue;
    cand.clear();
    for (idx_t q = (part[p].pre_head != -1) ? part[p].pre_head : p;;
         q = (q == part[p].pre_tail) ? p : part[q].next) {
      for (idx_t c = kids.first_child[q]; c != -1; c = kids.next_sibling[c])
        if (part[c].merged_into == -1) cand.push_back(c);
      if (q == p) break;
    }
    ChildPaths open;
    for (idx_t c : cand) open.open.insert(path.bl[c]);
    for (idx_t c : cand) {
      double newzeros = 0.0;
      if (!accept_merge(size[c], size[p], opts, newzeros)) continue;
      const NodeSize merged = merged_size(size[p], size[c], newzeros);
      if (!within_cap(merged, opts)) continue;
      const double other = open.max_except(path.bl[c]);
      const double after = path.cost(merged) + std::max(other, path.below[c]);
      if (top[p] + after > bound) continue;
      open.open.erase(open.open.find(path.bl[c]));
      open.adopted = std::max(open.adopted, path.below[c]);
      size[p] = merged;
      prepend_part(part, p, c);
    }
    path.below[p] = open.max_all();
    path.bl[p] = path.cost(size[p]) + path.below[p];
  }
}

// The modelled critical path of a merged partition (representatives' sizes).
double merged_path(const SupernodePartition& fund, std::vector<Part>& part,
                   const std::vector<NodeSize>& size, const FrontLatencyModel& model) {
  const idx_t nf = fund.nsuper();
  std::vector<double> below(nf, 0.0);
  double L = 0.0;
  for (idx_t r = 0; r < nf; ++r) {
    if (part[r].merged_into != -1) continue;
    const double bl = below[r] + front_latency(model, size[r].order, size[r].ncols);
    if (fund.parent[r] == -1) {
      L = std::max(L, bl);
    } else {
      const idx_t up = find_rep(part, fund.parent[r]);
      below[up] = std::max(below[up], bl);
    }
  }
  return L;
}

// The merged partition of `part` in the new numbering (see header).
Amalgamation merged_partition(const SupernodePartition& fund, std::vector<Part>& part,
                              const std::vector<NodeSize>& size) {
  const idx_t nf = fund.nsuper();
  // Number the representatives in increasing order (a postorder, see header).
  std::vector<idx_t> rep_id(nf, -1);
  idx_t nrep = 0;
  for (idx_t s = 0; s < nf; ++s)
    if (part[s].merged_into == -1) rep_id[s] = nrep++;

  Amalgamation out;
  out.order.reserve(fund.start.back());
  out.super.parent.assign(nrep, -1);
  out.front_order.reserve(nrep);
  for (idx_t r = 0; r < nf; ++r) {
    if (rep_id[r] == -1) continue;
    if (part[r].pre_tail != -1) part[part[r].pre_tail].next = r;
    for (idx_t q = (part[r].pre_head != -1) ? part[r].pre_head : r;; q = part[q].next) {
      for (idx_t j = fund.start[q]; j < fund.start[q + 1]; ++j) out.order.push_back(j);
      if (q == r) break;
    }
    out.super.start.push_back(static_cast<idx_t>(out.order.size()));
    out.front_order.push_back(size[r].order);
    if (fund.parent[r] != -1) out.super.parent[rep_id[r]] = rep_id[find_rep(part, fund.parent[r])];
  }
  return out;
}

std::vector<NodeSize> fundamental_sizes(const SupernodePartition& fund,
                                        const std::vector<idx_t>& colcount) {
  const idx_t nf = fund.nsuper();
  std::vector<NodeSize> size(nf);
  for (idx_t s = 0; s < nf; ++s)
    size[s] = {fund.start[s + 1] - fund.start[s], colcount[fund.start[s]], 0.0};
  return size;
}

// The critical-path rule's passes (see header) into part/size.
std::vector<Part> critical_path_passes(const SupernodePartition& fund, std::vector<NodeSize>& size,
                                       const ChildLists& kids, const AnalysisOptions& opts,
                                       bool second_pass) {
  const idx_t nf = fund.nsuper();
  PathState path{opts.latency, std::vector<double>(nf, 0.0), std::vector<double>(nf, 0.0)};
  std::vector<Part> part = merge_shortest_prefix(fund, size, kids, opts, path);
  if (second_pass) merge_within_path(fund, size, kids, opts, path, part);
  return part;
}

}  // namespace

Amalgamation amalgamate(const SupernodePartition& fund, const std::vector<idx_t>& colcount,
                        const AnalysisOptions& opts) {
  std::vector<NodeSize> size = fundamental_sizes(fund, colcount);
  const ChildLists kids = child_lists(fund);
  std::vector<Part> part = merge_bottom_up(fund, size, kids, opts);
  if (opts.relax_critical_path) {
    // The critical-path rule's two passes from the fundamental partition,
    // kept when their path is shorter than the rule above alone gives.
    std::vector<NodeSize> size2 = fundamental_sizes(fund, colcount);
    std::vector<Part> part2 = critical_path_passes(fund, size2, kids, opts, true);
    if (merged_path(fund, part2, size2, opts.latency) <
        merged_path(fund, part, size, opts.latency)) {
      part = std::move(part2);
      size = std::move(size2);
    }
  }
  return merged_partition(fund, part, size);
}

Amalgamation amalgamate_critical_path(const SupernodePartition& fund,
                                      const std::vector<idx_t>& colcount,
                                      const AnalysisOptions& opts, bool second_pass) {
  std::vector<NodeSize> size = fundamental_sizes(fund, colcount);
  std::vector<Part> part = critical_path_passes(fund, size, child_lists(fund), opts, second_pass);
  return merged_partition(fund, part, size);
}

}  // namespace starfront
