#include "analysis/analyse.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <new>
#include <string>
#include <utility>

#include "analysis/amalgamation.hpp"
#include "analysis/colcounts.hpp"
#include "analysis/counts.hpp"
#include "analysis/critical_path.hpp"
#include "analysis/etree.hpp"
#include "analysis/fronts.hpp"
#include "analysis/ordering.hpp"
#include "analysis/permutation.hpp"
#include "analysis/postorder.hpp"
#include "analysis/supernodes.hpp"

namespace starfront {
namespace {

// Column counts of the exact factor of P A Pᵀ, summarised: flops
// (Σ colcount², see counts.hpp) and the largest count (the largest front
// of the fundamental supernodes: no amalgamation makes a front smaller).
struct OrderingCounts {
  double flops = 0.0;
  idx_t max_count = 0;
};

OrderingCounts ordering_counts(const CscMatrix& A, const std::vector<idx_t>& perm) {
  const CscMatrix C = permute_symmetric(A, perm);
  const std::vector<idx_t> tree = elimination_tree(C);
  const std::vector<idx_t> counts = column_counts(C, tree, postorder(tree));
  OrderingCounts oc;
  for (idx_t c : counts) {
    oc.flops += static_cast<double>(c) * static_cast<double>(c);
    oc.max_count = std::max(oc.max_count, c);
  }
  return oc;
}

double ordering_flops(const CscMatrix& A, const std::vector<idx_t>& perm) { return ordering_counts(A, perm).flops; }

// Both of Scotch's orderings: nested dissection and minimum degree.
Status scotch_both(const CscMatrix& A, std::vector<idx_t>& nd, std::vector<idx_t>& md) {
  if (Status st = order_scotch(A, nd, ScotchMethod::nested_dissection); !st.ok()) return st;
  return order_scotch(A, md, ScotchMethod::minimum_degree);
}

// Scotch nested dissection and minimum degree; keeps the one with fewer
// flops (used: which).
Status best_scotch_ordering(const CscMatrix& A, std::vector<idx_t>& perm, OrderingMethod& used) {
  std::vector<idx_t> nd, md;
  if (Status st = scotch_both(A, nd, md); !st.ok()) return st;
  const bool md_wins = ordering_flops(A, md) < ordering_flops(A, nd);
  perm = md_wins ? std::move(md) : std::move(nd);
  used = md_wins ? OrderingMethod::scotch_amd : OrderingMethod::scotch_nd;
  return Status::success();
}

// Step 2: the fill-reducing ordering requested by opts (used: the method
// that gave perm: scotch becomes scotch_nd or scotch_amd).
Status initial_ordering(const CscMatrix& A, const AnalysisOptions& opts,
                        std::vector<idx_t>& perm, OrderingMethod& used) {
  used = opts.ordering;
  switch (opts.ordering) {
    case OrderingMethod::scotch:
      return best_scotch_ordering(A, perm, used);
    case OrderingMethod::scotch_nd:
      return order_scotch(A, perm, ScotchMethod::nested_dissection);
    case OrderingMethod::scotch_amd:
      return order_scotch(A, perm, ScotchMethod::minimum_degree);
    case OrderingMethod::natural:
      perm = order_natural(A.n);
      return Status::success();
    case OrderingMethod::user:
      if (Status st = check_permutation(opts.user_perm, A.n); !st.ok())
        return Status::error(StatusCode::invalid_argument, "user_perm: " + st.message);
      perm = opts.user_perm;
      return Status::success();
  }
  return Status::error(StatusCode::invalid_argument, "unknown ordering method");
}

// Steps 3-9 from the fill-reducing ordering perm.
void symbolic_from_ordering(const CscMatrix& A, const AnalysisOptions& opts,
                            std::vector<idx_t> perm, SymbolicFactor& out) {
  // Steps 3-5 on C = P0 A P0ᵀ, then relabel the tree and counts in postorder.
  std::vector<idx_t> parent, colcount;
  {
    const CscMatrix C = permute_symmetric(A, perm);
    const std::vector<idx_t> tree = elimination_tree(C);
    const std::vector<idx_t> post = postorder(tree);
    const std::vector<idx_t> counts = column_counts(C, tree, post);
    const std::vector<idx_t> ipost = invert_permutation(post);
    parent.resize(A.n);
    colcount.resize(A.n);
    for (idx_t k = 0; k < A.n; ++k) {
      const idx_t p = tree[post[k]];
      parent[k] = (p == -1) ? -1 : ipost[p];
      colcount[k] = counts[post[k]];
    }
    perm = compose_permutations(perm, post);
  }

  SymbolicFactor sf;
  sf.n = A.n;
  compute_exact_counts(colcount, sf);

  // Steps 6-7.
  SupernodePartition part = fundamental_supernodes(parent, colcount);
  if (opts.amalgamate) {
    Amalgamation am = amalgamate(part, colcount, opts);
    perm = compose_permutations(perm, am.order);
    part = std::move(am.super);
  }
  sf.amalgamated = opts.amalgamate;
  sf.critical_path_amalgamation = opts.amalgamate && opts.relax_critical_path;
  sf.amalgamation_max_front = opts.amalgamate ? opts.relax_max_front : 0;
  sf.perm = std::move(perm);
  sf.iperm = invert_permutation(sf.perm);
  sf.nsuper = part.nsuper();
  sf.super_start = std::move(part.start);
  sf.super_parent = std::move(part.parent);

  // Steps 8-9 on the final P A Pᵀ.
  build_fronts(permute_symmetric(A, sf.perm), sf);
  compute_front_counts(sf);
  const CriticalPath cp = critical_path(sf, opts.latency);
  sf.critical_path_s = cp.seconds;
  sf.critical_path_fronts = cp.fronts;
  sf.critical_path_columns = cp.columns;
  out = std::move(sf);
}

// The analysis of the shorter modelled critical path among the given
// orderings (ties: fewer flops of the exact factor; then the first).
// Each runs the whole analysis: the path is the final tree's.
void shortest_path_analysis(const CscMatrix& A, const AnalysisOptions& opts,
                            std::vector<std::pair<std::vector<idx_t>, OrderingMethod>> orderings,
                            SymbolicFactor& out) {
  bool have = false;
  for (auto& [perm, method] : orderings) {
    SymbolicFactor a;
    symbolic_from_ordering(A, opts, std::move(perm), a);
    a.ordering_used = method;
    if (!have || a.critical_path_s < out.critical_path_s ||
        (a.critical_path_s == out.critical_path_s && a.flops_exact < out.flops_exact))
      out = std::move(a);
    have = true;
  }
}

// The analysis the options ask for, without the latency rule, from the
// orderings already computed: both of Scotch's (nd, md) when `both`
// (OrderingMethod::scotch), else `perm` (method `used`: for scotch, the
// one its flops choice took).
// counts: nd's and md's when the caller has them (else computed here).
void flops_analysis(const CscMatrix& A, const AnalysisOptions& opts, bool both, const std::vector<idx_t>& nd,
                    const std::vector<idx_t>& md, const std::vector<idx_t>& perm, OrderingMethod used,
                    SymbolicFactor& out, const OrderingCounts* counts = nullptr) {
  if (!both) {
    symbolic_from_ordering(A, opts, perm, out);
    out.ordering_used = used;
    return;
  }
  if (opts.ordering_choice == OrderingChoice::critical_path) {
    shortest_path_analysis(A, opts, {{nd, OrderingMethod::scotch_nd}, {md, OrderingMethod::scotch_amd}}, out);
    return;
  }
  const bool md_wins = counts ? counts[1].flops < counts[0].flops : ordering_flops(A, md) < ordering_flops(A, nd);
  symbolic_from_ordering(A, opts, md_wins ? md : nd, out);
  out.ordering_used = md_wins ? OrderingMethod::scotch_amd : OrderingMethod::scotch_nd;
}

// AnalysisOptions::latency_rule_front: the flops analysis, the critical-path
// analysis of the orderings whose column counts fit the limit, and the
// choice between them (symbolic.hpp).
void latency_rule_analysis(const CscMatrix& A, const AnalysisOptions& opts, const std::vector<idx_t>& nd,
                           const std::vector<idx_t>& md, const std::vector<idx_t>& perm, OrderingMethod used,
                           SymbolicFactor& out) {
  const idx_t F = opts.latency_rule_front;
  const bool scotch = opts.ordering == OrderingMethod::scotch;
  OrderingCounts counts[2];  // nd, md; or perm's in counts[0]
  counts[0] = ordering_counts(A, scotch ? nd : perm);
  if (scotch) counts[1] = ordering_counts(A, md);
  SymbolicFactor flops;
  flops_analysis(A, opts, scotch, nd, md, perm, used, flops, counts);
  LatencyRuleReport rep;
  rep.applied = true;
  rep.front_limit = F;
  rep.flops_path_s = flops.critical_path_s;
  rep.flops_max_front = flops.max_front;
  std::vector<std::pair<std::vector<idx_t>, OrderingMethod>> fit;
  if (scotch) {
    if (counts[0].max_count <= F) fit.emplace_back(nd, OrderingMethod::scotch_nd);
    if (counts[1].max_count <= F) fit.emplace_back(md, OrderingMethod::scotch_amd);
  } else if (counts[0].max_count <= F) {
    fit.emplace_back(perm, used);
  }
  SymbolicFactor path;
  if (!fit.empty()) {
    AnalysisOptions po = opts;
    po.ordering_choice = OrderingChoice::critical_path;
    po.relax_critical_path = true;
    po.relax_max_front = F;
    shortest_path_analysis(A, po, std::move(fit), path);
    rep.path_path_s = path.critical_path_s;
    rep.path_max_front = path.max_front;
  }
  rep.critical_path_chosen = rep.path_max_front >= 0 && rep.path_max_front <= F &&
                             (flops.max_front > F || path.critical_path_s < flops.critical_path_s);
  out = rep.critical_path_chosen ? std::move(path) : std::move(flops);
  out.latency_rule = rep;
}

Status analyse_checked(const CscMatrix& A, const AnalysisOptions& opts, SymbolicFactor& out) {
  std::vector<idx_t> nd, md, perm;
  OrderingMethod used = opts.ordering;
  const bool both = opts.ordering == OrderingMethod::scotch &&
                    (opts.ordering_choice == OrderingChoice::critical_path || opts.latency_rule_front > 0);
  if (both) {
    if (Status st = scotch_both(A, nd, md); !st.ok()) return st;
  } else if (Status st = initial_ordering(A, opts, perm, used); !st.ok()) {
    return st;
  }
  if (opts.latency_rule_front > 0)
    latency_rule_analysis(A, opts, nd, md, perm, used, out);
  else
    flops_analysis(A, opts, both, nd, md, perm, used, out);
  return Status::success();
}

// The options the critical-path rule and the ordering choice read.
Status check_path_options(const AnalysisOptions& opts) {
  const FrontLatencyModel& m = opts.latency;
  for (const auto& [name, v] : {std::pair<const char*, double>{"per_front", m.per_front},
                                {"per_column", m.per_column},
                                {"per_update", m.per_update}})
    if (!std::isfinite(v) || v < 0.0) {
      char buf[64];
      std::snprintf(buf, sizeof buf, "%g", v);
      return Status::error(StatusCode::invalid_argument, std::string("AnalysisOptions::latency.") + name +
                                                              " = " + buf +
                                                              ": expected a finite number >= 0 (seconds)");
    }
  if (opts.latency_rule_front < 0)
    return Status::error(StatusCode::invalid_argument,
                         "AnalysisOptions::latency_rule_front = " + std::to_string(opts.latency_rule_front) +
                             ": expected 0 (off) or a front order >= 1");
  if (opts.latency_rule_front > 0 && (!opts.amalgamate || opts.relax_critical_path || opts.relax_max_front != 0))
    return Status::error(StatusCode::invalid_argument,
                         "AnalysisOptions::latency_rule_front = " + std::to_string(opts.latency_rule_front) +
                             " chooses the amalgamation itself: it needs the default one (amalgamate, "
                             "relax_critical_path off, relax_max_front 0)");
  if (opts.relax_max_front < 0)
    return Status::error(StatusCode::invalid_argument,
                         "AnalysisOptions::relax_max_front = " + std::to_string(opts.relax_max_front) +
                             ": expected 0 (no limit) or a front order >= 1");
  return Status::success();
}

// The relaxed rule's thresholds: column counts >= 0, fractions finite and
// >= 0 (a NaN would refuse every merge that tests it and accept none, a
// negative count or fraction is a caller's slip, not a setting).
Status check_relax_options(const AnalysisOptions& opts) {
  for (const auto& [name, v] : {std::pair<const char*, idx_t>{"relax_small", opts.relax_small},
                                {"relax_mid", opts.relax_mid}})
    if (v < 0)
      return Status::error(StatusCode::invalid_argument, std::string("AnalysisOptions::") + name + " = " +
                                                              std::to_string(v) + ": expected a column count >= 0");
  for (const auto& [name, v] : {std::pair<const char*, double>{"relax_zeros_small", opts.relax_zeros_small},
                                {"relax_zeros_large", opts.relax_zeros_large},
                                {"relax_marginal", opts.relax_marginal},
                                {"relax_zeros_cap", opts.relax_zeros_cap}})
    if (!std::isfinite(v) || v < 0.0) {
      char buf[64];
      std::snprintf(buf, sizeof buf, "%g", v);
      return Status::error(StatusCode::invalid_argument, std::string("AnalysisOptions::") + name + " = " + buf +
                                                              ": expected a finite fraction >= 0");
    }
  return Status::success();
}

}  // namespace

bool set_ordering_by_name(const std::string& name, AnalysisOptions& opts) {
  OrderingMethod m = OrderingMethod::scotch;
  OrderingChoice c = OrderingChoice::flops;
  if (name == "scotch-path") c = OrderingChoice::critical_path;
  else if (name == "scotch-nd") m = OrderingMethod::scotch_nd;
  else if (name == "scotch-amd") m = OrderingMethod::scotch_amd;
  else if (name == "natural") m = OrderingMethod::natural;
  else if (name != "scotch") return false;
  opts.ordering = m;
  opts.ordering_choice = c;
  return true;
}

const char* ordering_method_name(OrderingMethod m) {
  switch (m) {
    case OrderingMethod::scotch: return "scotch";
    case OrderingMethod::scotch_nd: return "scotch-nd";
    case OrderingMethod::scotch_amd: return "scotch-amd";
    case OrderingMethod::natural: return "natural";
    case OrderingMethod::user: return "user";
  }
  return "?";
}

Status analyse(const CscMatrix& A, const AnalysisOptions& opts, SymbolicFactor& out) {
  if (Status st = check_lower_csc(A); !st.ok()) return st;
  if (Status st = check_path_options(opts); !st.ok()) return st;
  if (Status st = check_relax_options(opts); !st.ok()) return st;
  try {
    return analyse_checked(A, opts, out);
  } catch (const std::bad_alloc&) {
    return Status::error(StatusCode::out_of_memory,
                         "out of memory in the symbolic analysis (n = " + std::to_string(A.n) +
                             ", nnz = " + std::to_string(A.nnz()) + ")");
  }
}

}  // namespace starfront
