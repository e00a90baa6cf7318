#include "plan/rank_mapping.hpp"

#include <algorithm>
#include <cmath>
#include <set>

namespace starfront {
namespace {

constexpr double kEps = 1e-9;

/// The rank whose unit interval [r, r+1) overlaps [lo, hi) most (lowest on a tie).
int largest_overlap(double lo, double hi, int nranks) {
  int best = std::clamp(static_cast<int>(std::floor(lo + kEps)), 0, nranks - 1);
  double best_len = -1;
  for (int r = best; r < nranks && r < hi; ++r) {
    const double len = std::min(hi, r + 1.0) - std::max(lo, static_cast<double>(r));
    if (len > best_len + kEps) best = r, best_len = len;
  }
  return best;
}

/// Largest divisor of q not above √q.
int grid_rows_for(int q) {
  int pr = 1;
  for (int d = 1; d * d <= q; ++d)
    if (q % d == 0) pr = d;
  return pr;
}

bool writes(AccessMode m) { return m != AccessMode::R; }
bool reads(AccessMode m) { return m != AccessMode::W; }

}  // namespace

Status proportional_mapping(const std::vector<idx_t>& parent, const std::vector<double>& work, int nranks,
                            TreeMapping& out) {
  const idx_t n = static_cast<idx_t>(parent.size());
  if (nranks < 1) return Status::error(StatusCode::invalid_argument, "proportional mapping: nranks must be >= 1");
  if (work.size() != parent.size())
    return Status::error(StatusCode::invalid_argument, "proportional mapping: one work value per node expected");
  for (idx_t s = 0; s < n; ++s) {
    if (parent[s] != -1 && (parent[s] <= s || parent[s] >= n))
      return Status::error(StatusCode::invalid_argument, "proportional mapping: parent[" + std::to_string(s) +
                                                             "] must be -1 or a later node");
    if (!(work[s] >= 0) || !std::isfinite(work[s]))
      return Status::error(StatusCode::invalid_argument, "proportional mapping: work must be finite and >= 0");
  }
  TreeMapping m;
  m.nranks = nranks;
  m.subtree_work.assign(n, 0.0);
  for (idx_t s = 0; s < n; ++s) {  // children come before their parent
    m.subtree_work[s] += work[s] + 1.0;
    if (parent[s] >= 0) m.subtree_work[parent[s]] += m.subtree_work[s];
  }
  m.lo.assign(n, 0.0), m.hi.assign(n, 0.0);
  m.first_rank.assign(n, 0), m.nranks_of.assign(n, 1), m.master.assign(n, 0);
  // Cut [lo, hi) among the nodes of `group` (children of one node, or the
  // roots) in proportion to their subtree work, in increasing node order.
  std::vector<std::vector<idx_t>> children(n);
  std::vector<idx_t> roots;
  for (idx_t s = 0; s < n; ++s) (parent[s] >= 0 ? children[parent[s]] : roots).push_back(s);
  auto cut = [&](const std::vector<idx_t>& group, double lo, double hi) {
    double total = 0;
    for (idx_t c : group) total += m.subtree_work[c];
    double at = lo;
    for (idx_t c : group) {
      m.lo[c] = at;
      at += (hi - lo) * m.subtree_work[c] / total;
      m.hi[c] = std::min(at, hi);
    }
    if (!group.empty()) m.hi[group.back()] = hi;
  };
  cut(roots, 0.0, nranks);
  for (idx_t s = n - 1; s >= 0; --s) {  // parents before children
    const bool inherited = parent[s] >= 0 && m.nranks_of[parent[s]] == 1;
    if (inherited) {  // inside a one-rank subtree: the same rank
      m.lo[s] = m.lo[parent[s]], m.hi[s] = m.hi[parent[s]];
      m.first_rank[s] = m.master[s] = m.master[parent[s]];
      m.nranks_of[s] = 1;
    } else if (m.hi[s] - m.lo[s] <= 1.0 + kEps) {
      m.first_rank[s] = m.master[s] = largest_overlap(m.lo[s], m.hi[s], nranks);
      m.nranks_of[s] = 1;
    } else {
      const int first = std::clamp(static_cast<int>(std::floor(m.lo[s] + kEps)), 0, nranks - 1);
      const int last = std::clamp(static_cast<int>(std::ceil(m.hi[s] - kEps)) - 1, first, nranks - 1);
      m.first_rank[s] = first;
      m.nranks_of[s] = last - first + 1;
      m.master[s] = largest_overlap(m.lo[s], m.hi[s], nranks);
    }
    if (m.nranks_of[s] > 1) cut(children[s], m.lo[s], m.hi[s]);
  }
  out = std::move(m);
  return Status::success();
}

Status map_graph(const TaskGraph& G, int nranks, RankMapping& out) {
  const FrontPlan& P = *G.plan;
  RankMapping M;
  M.nranks = nranks;
  if (Status st = proportional_mapping(P.symbolic->super_parent, P.front_flops, nranks, M.tree); !st.ok())
    return st;
  const idx_t nb = static_cast<idx_t>(G.blocks.size()), nt = static_cast<idx_t>(G.tasks.size());
  M.block_owner.assign(nb, -1);
  M.grid_rows.assign(P.nsuper, 1);
  for (idx_t s = 0; s < P.nsuper; ++s) {
    if (G.mode[s] != FrontMode::tiled) continue;
    const int first = M.tree.first_rank[s], q = M.tree.nranks_of[s];
    const int pr = M.grid_rows[s] = grid_rows_for(q);
    for (idx_t I = 0; I < G.ntiles(s); ++I)
      for (idx_t J = 0; J <= I; ++J) M.block_owner[G.tile(s, I, J)] = tile_owner(first, q, pr, I, J);
  }
  M.task_rank.assign(nt, 0);
  M.rank_flops.assign(nranks, 0.0);
  for (idx_t t = 0; t < nt; ++t) {
    const Task& task = G.tasks[t];
    int r = M.tree.master[task.front];
    if (task.kind != TaskKind::subtree && task.kind != TaskKind::front)
      for (idx_t a = task.acc_begin; a < task.acc_end; ++a)
        if (writes(G.accesses[a].mode) && M.block_owner[G.accesses[a].block] >= 0) {
          r = M.block_owner[G.accesses[a].block];
          break;
        }
    M.task_rank[t] = r;
    M.rank_flops[r] += task.flops;
    for (idx_t a = task.acc_begin; a < task.acc_end; ++a)  // producers own the other blocks
      if (M.block_owner[G.accesses[a].block] < 0) M.block_owner[G.accesses[a].block] = r;
  }
  for (idx_t b = 0; b < nb; ++b)  // never accessed: its front's master
    if (M.block_owner[b] < 0) M.block_owner[b] = M.tree.master[G.blocks[b].front];
  out = std::move(M);
  return Status::success();
}

Status distribute_graph(TaskGraph& G, int nranks, const SlotOptions& slots, RankMapping& out) {
  if (Status st = map_graph(G, nranks, out); !st.ok()) return st;
  return plan_slots(G, slots, &out.block_owner);
}

CommVolume communication_volume(const TaskGraph& G, const RankMapping& M) {
  const int R = M.nranks;
  const idx_t nb = static_cast<idx_t>(G.blocks.size());
  CommVolume v;
  v.lower_bound_recv.assign(R, 0.0);
  v.protocol_sent.assign(R, 0.0);
  v.protocol_recv.assign(R, 0.0);
  // Lower bound, per block version: the writer's rank and the ranks that
  // already received this version.
  std::vector<int> writer(nb, -1);
  std::vector<std::set<int>> got(nb);
  // Protocol, per runtime handle (a block in Lx, or a slot): who holds the
  // current version (the owner always does, after a write-back).
  const idx_t nh = nb + static_cast<idx_t>(G.slot_capacity.size());
  auto handle = [&](idx_t b) { return G.blocks[b].offset >= 0 ? b : nb + G.slot_of[b]; };
  std::vector<double> hbytes(nh, 0.0);
  std::vector<int> howner(nh, 0);
  for (idx_t b = 0; b < nb; ++b) {
    const idx_t h = handle(b);
    howner[h] = M.block_owner[b];
    hbytes[h] = G.blocks[b].offset >= 0 ? static_cast<double>(G.blocks[b].bytes())
                                        : static_cast<double>(G.slot_capacity[G.slot_of[b]]) * sizeof(double);
  }
  std::vector<std::set<int>> holders(nh);
  for (idx_t h = 0; h < nh; ++h) holders[h].insert(howner[h]);
  for (idx_t t = 0; t < static_cast<idx_t>(G.tasks.size()); ++t) {
    const Task& task = G.tasks[t];
    const int e = M.task_rank[t];
    for (idx_t a = task.acc_begin; a < task.acc_end; ++a) {  // reads first
      const Access& x = G.accesses[a];
      if (!reads(x.mode)) continue;
      if (writer[x.block] >= 0 && writer[x.block] != e && got[x.block].insert(e).second)
        v.lower_bound_recv[e] += static_cast<double>(G.blocks[x.block].bytes());
      const idx_t h = handle(x.block);
      if (holders[h].insert(e).second) {
        v.protocol_sent[howner[h]] += hbytes[h];
        v.protocol_recv[e] += hbytes[h];
      }
    }
    for (idx_t a = task.acc_begin; a < task.acc_end; ++a) {
      const Access& x = G.accesses[a];
      if (!writes(x.mode)) continue;
      writer[x.block] = e;
      got[x.block].clear();
      const idx_t h = handle(x.block);
      holders[h] = {howner[h]};  // a write clears every cached copy, the writer's too
      if (e != howner[h]) {
        v.protocol_sent[e] += hbytes[h];
        v.protocol_recv[howner[h]] += hbytes[h];
      }
    }
  }
  for (int r = 0; r < R; ++r) v.lower_bound_total += v.lower_bound_recv[r], v.protocol_total += v.protocol_sent[r];
  for (idx_t b = 0; b < nb; ++b)  // the blocks rank 0 does not hold already
    if (G.blocks[b].offset >= 0 && M.block_owner[b] != 0 && !holders[b].count(0))
      v.gather_to_root += static_cast<double>(G.blocks[b].bytes());
  return v;
}

std::vector<MemoryEstimates> memory_estimates_per_rank(const TaskGraph& G, const RankMapping& M) {
  const int R = M.nranks;
  std::vector<MemoryEstimates> me(R);
  const idx_t nb = static_cast<idx_t>(G.blocks.size()), nt = static_cast<idx_t>(G.tasks.size());
  constexpr double d = sizeof(double);
  for (idx_t b = 0; b < nb; ++b) {
    const Block& B = G.blocks[b];
    if (B.offset >= 0) me[M.block_owner[b]].factors += static_cast<double>(B.bytes());
    else me[M.block_owner[b]].cb_private += static_cast<double>(B.ld * B.cols) * d;
  }
  for (std::size_t s = 0; s < G.slot_capacity.size(); ++s) {
    const int r = G.slot_rank.empty() ? 0 : G.slot_rank[s];
    me[r].cb_planned += static_cast<double>(G.slot_capacity[s]) * d;
    ++me[r].slots;
  }
  // Live CB bytes of each rank over the submission order (first to last access).
  std::vector<idx_t> first(nb, -1), last(nb, -1);
  for (idx_t t = 0; t < nt; ++t)
    for (idx_t a = G.tasks[t].acc_begin; a < G.tasks[t].acc_end; ++a) {
      const idx_t b = G.accesses[a].block;
      if (first[b] < 0) first[b] = t;
      last[b] = t;
    }
  std::vector<std::vector<std::pair<idx_t, double>>> events(nt + 1);
  for (idx_t b = 0; b < nb; ++b)
    if (G.blocks[b].offset < 0 && first[b] >= 0) {
      const double bytes = static_cast<double>(G.blocks[b].ld * G.blocks[b].cols) * d;
      events[first[b]].push_back({M.block_owner[b], bytes});
      events[last[b] + 1].push_back({M.block_owner[b], -bytes});
    }
  std::vector<double> live(R, 0.0);
  for (idx_t t = 0; t <= nt; ++t) {
    for (auto [r, x] : events[t])
      if (x < 0) live[r] += x;
    for (auto [r, x] : events[t])
      if (x > 0) live[r] += x;
    for (int r = 0; r < R; ++r) me[r].cb_lower_bound = std::max(me[r].cb_lower_bound, live[r]);
  }
  for (idx_t t = 0; t < nt; ++t) {
    MemoryEstimates& e = me[M.task_rank[t]];
    e.subtree_workspace = std::max(e.subtree_workspace, subtree_workspace_bytes(*G.plan, G.tasks[t]));
  }
  return me;
}

}  // namespace starfront
