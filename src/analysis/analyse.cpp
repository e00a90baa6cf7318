#include "analysis/analyse.hpp"

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

// Flops of the exact factor of P A Pᵀ (Σ colcount², see counts.hpp).
double ordering_flops(const CscMatrix& A, const std::vector<idx_t>& perm) {
  const CscMatrix C = permute_symmetric(A, perm);
  const std::vector<idx_t> tree = elimination_tree(C);
  const std::vector<idx_t> counts = column_counts(C, tree, postorder(tree));
  double fl = 0.0;
  for (idx_t c : counts) fl += static_cast<double>(c) * static_cast<double>(c);
  return fl;
}

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

Status analyse_checked(const CscMatrix& A, const AnalysisOptions& opts, SymbolicFactor& out) {
  if (opts.ordering == OrderingMethod::scotch &&
      opts.ordering_choice == OrderingChoice::critical_path) {
    // Both orderings through the whole analysis: the path is the final tree's.
    std::vector<idx_t> nd, md;
    if (Status st = scotch_both(A, nd, md); !st.ok()) return st;
    SymbolicFactor a, b;
    symbolic_from_ordering(A, opts, std::move(nd), a);
    symbolic_from_ordering(A, opts, std::move(md), b);
    a.ordering_used = OrderingMethod::scotch_nd;
    b.ordering_used = OrderingMethod::scotch_amd;
    const bool md_wins = b.critical_path_s < a.critical_path_s ||
                         (b.critical_path_s == a.critical_path_s && b.flops_exact < a.flops_exact);
    out = md_wins ? std::move(b) : std::move(a);
    return Status::success();
  }
  std::vector<idx_t> perm;
  OrderingMethod used = opts.ordering;
  if (Status st = initial_ordering(A, opts, perm, used); !st.ok()) return st;
  symbolic_from_ordering(A, opts, std::move(perm), out);
  out.ordering_used = used;
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
  if (opts.relax_max_front < 0)
    return Status::error(StatusCode::invalid_argument,
                         "AnalysisOptions::relax_max_front = " + std::to_string(opts.relax_max_front) +
                             ": expected 0 (no limit) or a front order >= 1");
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
  try {
    return analyse_checked(A, opts, out);
  } catch (const std::bad_alloc&) {
    return Status::error(StatusCode::out_of_memory,
                         "out of memory in the symbolic analysis (n = " + std::to_string(A.n) +
                             ", nnz = " + std::to_string(A.nnz()) + ")");
  }
}

}  // namespace starfront
