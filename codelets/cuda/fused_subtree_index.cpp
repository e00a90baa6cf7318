#include "cuda/fused_subtree_index.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <string>

#include "analysis/critical_path.hpp"
#include "cpu/front_cholesky.hpp"

namespace starfront {
namespace {

constexpr idx_t kInt32Max = std::numeric_limits<std::int32_t>::max();

/// Ticket order of fronts [first, root] (file header): small part first,
/// then by height (or, FusedTicketOrder::path, by decreasing modelled path to
/// the root), then by front index. nsmall: size of the small part.
std::vector<idx_t> ticket_order(const FrontPlan& P, idx_t first, idx_t root, FusedTicketOrder how,
                                const FrontLatencyModel& model, idx_t& nsmall) {
  const idx_t n = root - first + 1;
  std::vector<idx_t> height(n, 0), biggest(n, 0);
  for (idx_t s = first; s <= root; ++s) {  // children precede parents in the postorder
    biggest[s - first] = std::max(biggest[s - first], P.front_order(s));
    for (idx_t q = P.child_ptr[s]; q < P.child_ptr[s + 1]; ++q) {
      height[s - first] = std::max(height[s - first], height[P.child_list[q] - first] + 1);
      biggest[s - first] = std::max(biggest[s - first], biggest[P.child_list[q] - first]);
    }
  }
  auto large = [&](idx_t s) { return biggest[s - first] > kFusedSmallOrder ? 1 : 0; };
  // FusedTicketOrder::path: each front's modelled time from its start to the
  // end of its tree's root, parents first (a parent in the range has a
  // larger index than its children).
  std::vector<double> to_root(how == FusedTicketOrder::path ? n : 0, 0.0);
  if (how == FusedTicketOrder::path) {
    for (idx_t s = root; s >= first; --s) {
      to_root[s - first] += front_latency(model, P.front_order(s), P.ncols(s));
      for (idx_t q = P.child_ptr[s]; q < P.child_ptr[s + 1]; ++q) to_root[P.child_list[q] - first] = to_root[s - first];
    }
  }
  std::vector<idx_t> order(n);
  std::iota(order.begin(), order.end(), first);
  std::stable_sort(order.begin(), order.end(), [&](idx_t a, idx_t b) {
    if (large(a) != large(b)) return large(a) < large(b);
    if (how == FusedTicketOrder::path) return to_root[a - first] > to_root[b - first];
    return height[a - first] < height[b - first];
  });
  nsmall = 0;
  for (idx_t s : order) nsmall += 1 - large(s);
  return order;
}

template <class T>
std::size_t append_array(std::vector<std::uint64_t>& blob, const std::vector<T>& v) {
  const std::size_t off = blob.size() * sizeof(std::uint64_t);
  const std::size_t bytes = v.size() * sizeof(T);
  std::size_t words = (bytes + 15) / 16 * 2;  // 16-byte aligned
  blob.resize(blob.size() + words, 0);
  if (bytes) std::memcpy(reinterpret_cast<char*>(blob.data()) + off, v.data(), bytes);
  return off;
}

Status add_task(const TaskGraph& G, idx_t t, FusedTicketOrder how, const FrontLatencyModel& model,
                FusedSubtreeIndex& X) {
  const FrontPlan& P = *G.plan;
  const Task& task = G.tasks[t];
  const idx_t first = task.first_front, root = task.front;
  if (root - first + 1 > kInt32Max)
    return Status::error(StatusCode::invalid_argument, "fused subtree index: too many fronts in one task");
  idx_t nsmall = 0;
  const std::vector<idx_t> order = ticket_order(P, first, root, how, model, nsmall);
  std::vector<idx_t> ticket(root - first + 1, -1);
  FusedTaskIndex& ti = X.task[t];
  ti.front_begin = static_cast<idx_t>(X.fronts.size());
  ti.nfronts = static_cast<idx_t>(order.size());
  ti.first_front = first;
  ti.root = root;
  ti.nsmall = nsmall;
  idx_t ws = 0;
  std::vector<idx_t> cb_off(root - first + 1, -1);
  for (idx_t q = 0; q < ti.nfronts; ++q) {
    const idx_t s = order[q];
    ticket[s - first] = q;
    const idx_t m = P.front_order(s), k = P.ncols(s), mc = m - k;
    if (m > kInt32Max || m * m > (idx_t{1} << 53))
      return Status::error(StatusCode::invalid_argument, "fused subtree index: front order out of 32-bit range");
    ti.max_order = std::max(ti.max_order, m);
    if (q < nsmall) ti.max_order_small = std::max(ti.max_order_small, m);
    if (s != root && mc > 0) {  // private region of the workspace (file header)
      cb_off[s - first] = ws;
      ws += mc * mc;
    }
    FusedFront f{};
    f.l_off = P.l_offset[s] - P.l_offset[first];
    f.cb_off = s == root ? -1 : cb_off[s - first];
    f.m = static_cast<std::int32_t>(m);
    f.k = static_cast<std::int32_t>(k);
    f.a_begin = static_cast<std::int64_t>(X.entries.size());
    for (idx_t e = P.a_ptr[s]; e < P.a_ptr[s + 1]; ++e) X.entries.push_back({P.a_src[e], P.a_dst[e]});
    f.a_end = static_cast<std::int64_t>(X.entries.size());
    f.child_begin = static_cast<std::int64_t>(X.children.size());
    for (idx_t c_ = P.child_ptr[s]; c_ < P.child_ptr[s + 1]; ++c_) {
      const idx_t c = P.child_list[c_];
      FusedChild ch{};
      if (ticket[c - first] < 0)  // the kernel would wait on a front it hands out later
        return Status::error(StatusCode::invalid_argument,
                             "fused subtree index: the ticket order puts front " + std::to_string(s) +
                                 " before its child " + std::to_string(c) + " (latency model out of range?)");
      ch.ticket = static_cast<std::int32_t>(ticket[c - first]);
      ch.mc = static_cast<std::int32_t>(P.cb_order(c));
      ch.cb_off = cb_off[c - first];
      ch.rel_begin = static_cast<std::int64_t>(X.rel.size());
      for (idx_t r = 0; r < P.cb_order(c); ++r) X.rel.push_back(static_cast<std::int32_t>(P.rel[P.rel_ptr[c] + r]));
      X.children.push_back(ch);
    }
    f.child_end = static_cast<std::int64_t>(X.children.size());
    f.diag_begin = static_cast<std::int64_t>(X.diag.size());
    const idx_t c0 = P.symbolic->super_start[s];
    for (idx_t j = 0; j < k; ++j) X.diag.push_back(P.diag_src[c0 + j]);
    f.col0 = c0;
    X.fronts.push_back(f);
  }
  ti.workspace = ws;
  X.max_workspace = std::max(X.max_workspace, ws);
  X.max_fronts = std::max(X.max_fronts, ti.nfronts);
  return Status::success();
}

}  // namespace

Status build_fused_subtree_index(const TaskGraph& G, FusedSubtreeIndex& out, FusedTicketOrder order,
                                 const FrontLatencyModel& model) {
  if (order == FusedTicketOrder::path &&
      !(std::isfinite(model.per_front) && std::isfinite(model.per_column) && std::isfinite(model.per_update) &&
        model.per_front >= 0 && model.per_column >= 0 && model.per_update >= 0))
    return Status::error(StatusCode::invalid_argument,
                         "fused subtree index: the ticket order's latency model needs finite figures >= 0");
  FusedSubtreeIndex X;
  X.order = order;
  X.task.assign(G.tasks.size(), FusedTaskIndex{});
  for (idx_t t = 0; t < static_cast<idx_t>(G.tasks.size()); ++t) {
    if (G.tasks[t].kind != TaskKind::subtree) continue;
    X.empty = false;
    Status st = add_task(G, t, order, model, X);
    if (!st.ok()) return st;
  }
  if (X.fronts.empty()) X.fronts.push_back(FusedFront{});
  if (X.children.empty()) X.children.push_back(FusedChild{});
  if (X.rel.empty()) X.rel.push_back(0);
  if (X.entries.empty()) X.entries.push_back(FusedEntry{});
  if (X.diag.empty()) X.diag.push_back(-1);
  X.off_fronts = append_array(X.blob, X.fronts);
  X.off_children = append_array(X.blob, X.children);
  X.off_rel = append_array(X.blob, X.rel);
  X.off_entries = append_array(X.blob, X.entries);
  X.off_diag = append_array(X.blob, X.diag);
  out = std::move(X);
  return Status::success();
}

FusedChains fused_chains(const FusedSubtreeIndex& X, idx_t task) {
  FusedChains c;
  if (task < 0 || task >= static_cast<idx_t>(X.task.size())) return c;
  const FusedTaskIndex& ti = X.task[task];
  // Longest chain ending at each front (itself included): within its part,
  // and over the whole task. Children have smaller tickets (file header).
  std::vector<idx_t> part(static_cast<std::size_t>(ti.nfronts), 0), whole(part.size(), 0);
  for (idx_t q = 0; q < ti.nfronts; ++q) {
    const FusedFront& f = X.fronts[ti.front_begin + q];
    const bool small = q < ti.nsmall;
    idx_t best_part = 0, best_whole = 0;
    for (std::int64_t ch = f.child_begin; ch < f.child_end; ++ch) {
      const idx_t t = X.children[ch].ticket;
      best_whole = std::max(best_whole, whole[t]);
      if ((t < ti.nsmall) == small) best_part = std::max(best_part, part[t]);
    }
    part[q] = best_part + 1;
    whole[q] = best_whole + 1;
    (small ? c.small : c.large) = std::max(small ? c.small : c.large, part[q]);
    c.whole = std::max(c.whole, whole[q]);
  }
  return c;
}

FusedTraceSummary fused_trace_summary(const FusedSubtreeIndex& X, idx_t task, const std::uint64_t* trace,
                                      bool early) {
  FusedTraceSummary S;
  if (task < 0 || task >= static_cast<idx_t>(X.task.size()) || !trace) return S;
  const FusedTaskIndex& ti = X.task[task];
  auto at = [&](idx_t q, int i) { return static_cast<double>(trace[q * kFusedTracePoints + i]); };
  auto complete = [&](idx_t q) {
    for (int i = 0; i < kFusedTracePoints; ++i)
      if (trace[q * kFusedTracePoints + i] == 0) return false;
    return true;
  };
  // Stamps of the prologue's end and the wait's end (their order: `early`).
  auto own_end = [&](idx_t q) { return at(q, early ? 1 : 2); };
  auto ready = [&](idx_t q) { return at(q, early ? 2 : 1); };
  auto own = [&](idx_t q) { return early ? at(q, 1) - at(q, 0) : at(q, 2) - at(q, 1); };
  double first[2] = {0, 0}, last[2] = {0, 0}, t_first = 0;
  idx_t top = -1;
  for (idx_t q = 0; q < ti.nfronts; ++q) {
    if (!complete(q)) continue;
    const int part = q < ti.nsmall ? 0 : 1;
    if (S.traced[part] == 0 || at(q, 0) < first[part]) first[part] = at(q, 0);
    if (S.traced[part] == 0 || at(q, 5) > last[part]) last[part] = at(q, 5);
    if (top < 0 || at(q, 0) < t_first) t_first = at(q, 0);
    if (top < 0 || at(q, 5) > at(top, 5)) top = q;
    ++S.traced[part];
    S.mean_own[part] += own(q);
    S.mean_extend_add[part] += at(q, 3) - at(q, 2);
    S.mean_factor[part] += at(q, 4) - at(q, 3);
    S.mean_write[part] += at(q, 5) - at(q, 4);
  }
  for (int part = 0; part < 2; ++part) {
    if (S.traced[part] == 0) continue;
    const double nt = static_cast<double>(S.traced[part]);
    S.span[part] = last[part] - first[part];
    S.mean_own[part] /= nt;
    S.mean_extend_add[part] /= nt;
    S.mean_factor[part] /= nt;
    S.mean_write[part] /= nt;
  }
  for (idx_t q = top; q >= 0;) {
    const FusedFront& f = X.fronts[ti.front_begin + q];
    idx_t below = -1;
    for (std::int64_t c = f.child_begin; c < f.child_end; ++c) {
      const idx_t t = X.children[c].ticket;
      if (t >= 0 && t < q && complete(t) && (below < 0 || at(t, 5) > at(below, 5))) below = t;
    }
    FusedChainStep step;
    double from = t_first;
    if (below >= 0) {
      // The front begins to wait at its prologue's end (early) or at its
      // start; what lies between the child's publication and that is the
      // block's late start and the prologue's overrun.
      const double pub = at(below, 5), start = at(q, 0), wait_from = early ? own_end(q) : start;
      step.late_start = std::max(0.0, start - pub);
      step.overrun = early ? std::max(0.0, own_end(q) - std::max(start, pub)) : 0.0;
      from = std::max(pub, wait_from);
    }
    step.ticket = q;
    step.m = f.m;
    step.k = f.k;
    step.children = static_cast<idx_t>(f.child_end - f.child_begin);
    step.lag = std::max(0.0, ready(q) - from);
    step.extend_add = at(q, 3) - at(q, 2);
    step.factor = at(q, 4) - at(q, 3);
    step.write = at(q, 5) - at(q, 4);
    S.chain.push_back(step);
    ++S.fronts;
    S.own += own(q);
    S.late_start += step.late_start;
    S.overrun += step.overrun;
    S.lag += step.lag;
    S.extend_add += step.extend_add;
    S.factor += step.factor;
    S.write += step.write;
    if (below >= 0 && below < ti.nsmall && q >= ti.nsmall && S.traced[1] > 0)
      S.boundary = std::max(0.0, first[1] - at(below, 5));
    q = below;
  }
  return S;
}

FrontResult fused_subtree_emulated(const TaskGraph& /*G*/, const FusedSubtreeIndex& X, idx_t task,
                                   const double* values, double* panel, double* root_cb, double* workspace,
                                   double pivot_tol) {
  const FusedTaskIndex& ti = X.task[task];
  std::vector<char> state(static_cast<std::size_t>(ti.nfronts), 0);  // 1 done, 2 failed or skipped
  FrontResult best;
  best.state = FrontResult::State::done;
  best.min_pivot_ratio = std::numeric_limits<double>::infinity();
  std::vector<double> F;
  for (idx_t q = 0; q < ti.nfronts; ++q) {
    const FusedFront& f = X.fronts[ti.front_begin + q];
    const idx_t m = f.m, k = f.k, mc = m - k;
    bool skip = false;
    for (std::int64_t c = f.child_begin; c < f.child_end; ++c) {
      const std::int32_t ct = X.children[c].ticket;
      if (ct >= q) return FrontResult{FrontResult::State::failed, -2};  // not topological: a defect
      skip = skip || state[ct] != 1;
    }
    if (skip) {
      state[q] = 2;
      continue;
    }
    // Dense m×m front (lower part used), as the kernel's shared-memory path.
    F.assign(static_cast<std::size_t>(m * m), 0.0);
    for (std::int64_t e = f.a_begin; e < f.a_end; ++e) F[X.entries[e].dst] += values[X.entries[e].src];
    for (std::int64_t c = f.child_begin; c < f.child_end; ++c) {
      const FusedChild& ch = X.children[c];
      const double* cb = workspace + ch.cb_off;
      const std::int32_t* rel = &X.rel[ch.rel_begin];
      for (idx_t jj = 0; jj < ch.mc; ++jj)
        for (idx_t ii = jj; ii < ch.mc; ++ii) F[rel[ii] + rel[jj] * m] += cb[ii + jj * ch.mc];
    }
    // Blocked Cholesky of the k pivots, as the kernel (fused_subtree.cu's
    // factor(): blocks of 4 columns in the small part, 8 in the large), with
    // the CPU's pivot rules: a pivot d <= 0 or NaN stops (LAPACK's info),
    // else the first d = l² that is not finite or <= tol·|a_jj| fails after all k.
    const idx_t NB = q < ti.nsmall ? 4 : 8;
    idx_t info_col = -1, rel_col = -1;
    double info_piv = 0.0, rel_piv = 0.0, ratio = std::numeric_limits<double>::infinity();
    auto at = [&](idx_t i, idx_t j) -> double& { return F[i + j * m]; };
    for (idx_t j0 = 0; j0 < k && info_col < 0; j0 += NB) {
      const idx_t w = std::min(NB, k - j0), j1 = j0 + w;
      double rdiag[8] = {};  // 1 / l_tt of the block's columns (rsqrt of the pivots)
      for (idx_t t = 0; t < w; ++t) {  // diagonal block, right-looking
        const idx_t j = j0 + t;
        const double d = at(j, j);
        if (!(d > 0.0)) {
          info_col = j;
          info_piv = d;
          break;
        }
        // As the kernel: rl = rsqrt_chain(d) (CUDA rsqrt's refinement, within 1 ulp of
        // 1/sqrt(d)), l = d·rl, the column scaled by rl.
        const double rl = 1.0 / std::sqrt(d), l = std::isinf(d) ? d : d * rl, d2 = l * l;
        const std::int64_t src = X.diag[f.diag_begin + j];
        const double ajj = src >= 0 ? std::fabs(values[src]) : 0.0;
        if (rel_col < 0 && (!std::isfinite(d2) || d2 <= pivot_tol * ajj)) {
          rel_col = j;
          rel_piv = std::isfinite(l) ? d2 : l;
        }
        if (ajj > 0) ratio = std::min(ratio, d2 / ajj);
        rdiag[t] = rl;
        at(j, j) = l;
        for (idx_t r = j + 1; r < j1; ++r) at(r, j) *= rl;
        for (idx_t c = j + 1; c < j1; ++c)
          for (idx_t r = c; r < j1; ++r) at(r, c) -= at(r, j) * at(c, j);
      }
      if (info_col >= 0) break;
      for (idx_t i = j1; i < m; ++i) {  // rows below: row-wise triangular solve
        double x[8];
        for (idx_t t = 0; t < w; ++t) {
          double acc = at(i, j0 + t);
          for (idx_t s2 = 0; s2 < t; ++s2) acc -= x[s2] * at(j0 + t, j0 + s2);
          x[t] = acc * rdiag[t];
        }
        for (idx_t t = 0; t < w; ++t) at(i, j0 + t) = x[t];
      }
      for (idx_t c = j1; c < m; ++c)  // trailing update, sums first
        for (idx_t i = c; i < m; ++i) {
          double acc = 0.0;
          for (idx_t t = 0; t < w; ++t) acc += at(i, j0 + t) * at(c, j0 + t);
          at(i, c) -= acc;
        }
    }
    const idx_t bad = info_col >= 0 ? info_col : rel_col;
    if (bad >= 0) {
      state[q] = 2;
      const idx_t col = f.col0 + bad;
      if (best.state != FrontResult::State::failed || col < best.failed_column) {
        best.state = FrontResult::State::failed;
        best.failed_column = col;
        best.pivot = info_col >= 0 ? info_piv : rel_piv;
      }
      continue;
    }
    best.min_pivot_ratio = std::min(best.min_pivot_ratio, ratio);
    double* L = panel + f.l_off;
    for (idx_t j = 0; j < k; ++j)
      for (idx_t i = 0; i < m; ++i) L[i + j * m] = F[i + j * m];
    double* cb = f.cb_off >= 0 ? workspace + f.cb_off : root_cb;
    if (mc > 0 && cb)
      for (idx_t j = 0; j < mc; ++j)
        for (idx_t i = 0; i < mc; ++i) cb[i + j * mc] = F[(k + i) + (k + j) * m];
    state[q] = 1;
  }
  return best;
}

}  // namespace starfront
