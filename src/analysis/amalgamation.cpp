#include "analysis/amalgamation.hpp"

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

// Bottom-up merging (see header): parents in increasing order, each one
// considering its children in increasing order.
std::vector<Part> merge_bottom_up(const SupernodePartition& fund,
                                  const std::vector<idx_t>& colcount,
                                  const AnalysisOptions& opts) {
  const idx_t nf = fund.nsuper();
  std::vector<NodeSize> size(nf);
  for (idx_t s = 0; s < nf; ++s)
    size[s] = {fund.start[s + 1] - fund.start[s], colcount[fund.start[s]], 0.0};
  std::vector<idx_t> first_child(nf, -1), next_sibling(nf, -1);
  for (idx_t s = nf - 1; s >= 0; --s) {
    const idx_t p = fund.parent[s];
    if (p == -1) continue;
    next_sibling[s] = first_child[p];
    first_child[p] = s;
  }
  std::vector<Part> part(nf);
  for (idx_t p = 0; p < nf; ++p) {
    for (idx_t c = first_child[p]; c != -1; c = next_sibling[c]) {
      double newzeros = 0.0;
      if (!accept_merge(size[c], size[p], opts, newzeros)) continue;
      size[p].zeros += size[c].zeros + newzeros;
      size[p].order += size[c].ncols;
      size[p].ncols += size[c].ncols;
      part[c].merged_into = p;
      // Append (c's merged parts, then c) to p's list.
      const idx_t head = (part[c].pre_head != -1) ? part[c].pre_head : c;
      if (part[c].pre_tail != -1) part[part[c].pre_tail].next = c;
      if (part[p].pre_head == -1) part[p].pre_head = head;
      else part[part[p].pre_tail].next = head;
      part[p].pre_tail = c;
    }
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

}  // namespace

Amalgamation amalgamate(const SupernodePartition& fund, const std::vector<idx_t>& colcount,
                        const AnalysisOptions& opts) {
  const idx_t nf = fund.nsuper();
  std::vector<Part> part = merge_bottom_up(fund, colcount, opts);

  // Number the representatives in increasing order (a postorder, see header).
  std::vector<idx_t> rep_id(nf, -1);
  idx_t nrep = 0;
  for (idx_t s = 0; s < nf; ++s)
    if (part[s].merged_into == -1) rep_id[s] = nrep++;

  Amalgamation out;
  out.order.reserve(fund.start.back());
  out.super.parent.assign(nrep, -1);
  for (idx_t r = 0; r < nf; ++r) {
    if (rep_id[r] == -1) continue;
    if (part[r].pre_tail != -1) part[part[r].pre_tail].next = r;
    for (idx_t q = (part[r].pre_head != -1) ? part[r].pre_head : r;; q = part[q].next) {
      for (idx_t j = fund.start[q]; j < fund.start[q + 1]; ++j) out.order.push_back(j);
      if (q == r) break;
    }
    out.super.start.push_back(static_cast<idx_t>(out.order.size()));
    if (fund.parent[r] != -1) out.super.parent[rep_id[r]] = rep_id[find_rep(part, fund.parent[r])];
  }
  return out;
}

}  // namespace starfront
