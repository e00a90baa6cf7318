#include "plan/task_graph.hpp"

#include "plan/cb_slots.hpp"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <numeric>
#include <queue>
#include <thread>

namespace starfront {
namespace {

/// Builds the graph front by front, in postorder.
class Builder {
 public:
  Builder(const FrontPlan& P, const GraphOptions& o, TaskGraph& G) : P_(P), S_(*P.symbolic), o_(o), G_(G) {}

  void run() {
    const idx_t ns = P_.nsuper;
    G_.plan = &P_;
    G_.mode.assign(ns, FrontMode::single);
    G_.subtree_first.assign(ns, -1);
    G_.npanel_tiles.assign(ns, 0);
    G_.tile_ptr.assign(ns, -1);
    G_.bounds_ptr.assign(ns + 1, 0);
    G_.cb_ptr.assign(ns + 1, 0);
    subtree_last_.assign(ns, -1);
    choose_tiled();
    choose_subtrees();
    for (idx_t s = 0; s < ns; ++s) make_blocks(s);
    for (idx_t s = 0; s < ns; ++s) {
      if (G_.mode[s] == FrontMode::tiled)
        add_tiled_front(s);
      else if (G_.mode[s] == FrontMode::single)
        add_front_task(s);
      else if (is_subtree_root(s))
        add_subtree_task(G_.subtree_first[s], s);
    }
  }

 private:
  // A front is tiled when its order exceeds the threshold or a child is tiled
  // (so that non-tiled fronts only ever read whole, untiled CBs).
  void choose_tiled() {
    if (!o_.tile) return;
    for (idx_t s = 0; s < P_.nsuper; ++s) {
      bool t = P_.front_order(s) > o_.tile_threshold;
      for (idx_t q = P_.child_ptr[s]; q < P_.child_ptr[s + 1] && !t; ++q)
        t = G_.mode[P_.child_list[q]] == FrontMode::tiled;
      if (t) G_.mode[s] = FrontMode::tiled;
    }
  }

  // Geist–Ng layer: split the heaviest subtree until every subtree of the
  // layer weighs at most total/(ratio·workers); see the file header.
  void choose_subtrees() {
    if (!o_.fuse_subtrees) return;
    const idx_t ns = P_.nsuper;
    std::vector<double> work(ns, 0.0);
    std::vector<idx_t> size(ns, 1), biggest(ns, 0);  // biggest: largest front order in the subtree
    double total = 0.0;
    for (idx_t s = 0; s < ns; ++s) {
      work[s] += P_.front_flops[s];
      total += P_.front_flops[s];
      biggest[s] = std::max(biggest[s], P_.front_order(s));
      const idx_t p = S_.super_parent[s];
      if (p >= 0) work[p] += work[s], size[p] += size[s], biggest[p] = std::max(biggest[p], biggest[s]);
    }
    const bool too_big_limit = o_.max_subtree_front > 0;
    const double limit =
        std::max(total / (o_.subtree_ratio * std::max(1, o_.workers)), o_.min_subtree_flops);
    auto lighter = [&](idx_t a, idx_t b) { return work[a] < work[b]; };
    std::priority_queue<idx_t, std::vector<idx_t>, decltype(lighter)> heap(lighter);
    for (idx_t s = 0; s < ns; ++s)
      if (S_.super_parent[s] < 0) heap.push(s);
    std::vector<idx_t> layer;
    while (!heap.empty()) {
      const idx_t s = heap.top();
      heap.pop();
      const bool leaf = P_.child_ptr[s + 1] == P_.child_ptr[s];
      const bool too_big = too_big_limit && biggest[s] > o_.max_subtree_front;
      if (G_.mode[s] == FrontMode::tiled || (work[s] > limit && !leaf) || too_big) {
        for (idx_t q = P_.child_ptr[s]; q < P_.child_ptr[s + 1]; ++q) heap.push(P_.child_list[q]);
        continue;
      }
      layer.push_back(s);
    }
    // Consecutive whole trees of the forest (disconnected parts of A) that
    // are light are grouped into one task too: their fronts form one
    // contiguous range of the postorder.
    std::sort(layer.begin(), layer.end());
    std::vector<std::pair<idx_t, idx_t>> groups;  // [first, last] ranges
    double group_work = 0.0;
    for (idx_t r : layer) {
      const idx_t first = r - size[r] + 1;
      const bool tree = S_.super_parent[r] < 0;
      if (tree && !groups.empty() && groups.back().second == first - 1 &&
          S_.super_parent[groups.back().second] < 0 && group_work + work[r] <= limit) {
        groups.back().second = r;
        group_work += work[r];
      } else {
        groups.emplace_back(first, r);
        group_work = work[r];
      }
    }
    for (const auto& [first, last] : groups) {
      if (first == last) continue;  // a lone front stays a front task
      for (idx_t s = first; s <= last; ++s) {
        G_.mode[s] = FrontMode::in_subtree;
        G_.subtree_first[s] = first;
        subtree_last_[s] = last;
      }
    }
  }

  idx_t add_block(const Block& b) {
    G_.blocks.push_back(b);
    return static_cast<idx_t>(G_.blocks.size()) - 1;
  }

  // Tile bounds: the panel columns [0, k) cut every tile_size, then the CB
  // rows [k, m) likewise.
  void make_bounds(idx_t s) {
    const idx_t m = P_.front_order(s), k = P_.ncols(s), b = o_.tile_size;
    for (idx_t x = 0; x < k; x += b) G_.bounds.push_back(x);
    G_.npanel_tiles[s] = static_cast<idx_t>(G_.bounds.size()) - G_.bounds_ptr[s];
    for (idx_t x = k; x < m; x += b) G_.bounds.push_back(x);
    G_.bounds.push_back(m);
  }

  void make_blocks(idx_t s) {
    const idx_t m = P_.front_order(s), k = P_.ncols(s), mc = m - k;
    if (G_.mode[s] == FrontMode::tiled) make_bounds(s);
    G_.bounds_ptr[s + 1] = static_cast<idx_t>(G_.bounds.size());
    if (G_.mode[s] == FrontMode::tiled) {
      const idx_t nt = G_.ntiles(s), kt = G_.npanel_tiles[s];
      G_.tile_ptr[s] = static_cast<idx_t>(G_.blocks.size());
      for (idx_t I = 0; I < nt; ++I)
        for (idx_t J = 0; J <= I; ++J) {
          Block b{BlockKind::tile, s};
          b.row0 = G_.bound(s, I);
          b.col0 = G_.bound(s, J);
          b.rows = G_.bound(s, I + 1) - b.row0;
          b.cols = G_.bound(s, J + 1) - b.col0;
          b.lower = I == J;
          if (J < kt) {
            b.offset = P_.l_offset[s] + b.row0 + b.col0 * m;
            b.ld = m;
          } else {
            b.ld = b.rows;
          }
          const idx_t id = add_block(b);
          if (J >= kt) G_.cb_blocks.push_back(id);
        }
    } else if (mc > 0 && !(G_.mode[s] == FrontMode::in_subtree && !is_subtree_root(s))) {
      Block b{BlockKind::cb, s};
      b.rows = b.cols = b.ld = mc;
      b.lower = true;
      G_.cb_blocks.push_back(add_block(b));
    }
    G_.cb_ptr[s + 1] = static_cast<idx_t>(G_.cb_blocks.size());
  }

  /// True for the last front of a fused group (the root of its subtree).
  bool is_subtree_root(idx_t s) const { return subtree_last_[s] == s; }

  Task& new_task(TaskKind kind, idx_t front) {
    Task t;
    t.kind = kind;
    t.front = front;
    t.acc_begin = t.acc_end = static_cast<idx_t>(G_.accesses.size());
    G_.tasks.push_back(t);
    return G_.tasks.back();
  }
  void access(idx_t block, AccessMode mode) {
    G_.accesses.push_back({block, mode});
    G_.tasks.back().acc_end = static_cast<idx_t>(G_.accesses.size());
  }
  void access_cbs(idx_t c, AccessMode mode) {
    for (idx_t q = G_.cb_ptr[c]; q < G_.cb_ptr[c + 1]; ++q) access(G_.cb_blocks[q], mode);
  }

  idx_t panel_block(idx_t first, idx_t last) {
    Block b{BlockKind::panel, last};
    b.offset = P_.l_offset[first];
    b.rows = b.ld = P_.l_offset[last + 1] - P_.l_offset[first];
    b.cols = 1;
    return add_block(b);
  }

  void add_subtree_task(idx_t first, idx_t root) {
    const idx_t panel = panel_block(first, root);
    Task& t = new_task(TaskKind::subtree, root);
    t.first_front = first;
    for (idx_t s = first; s <= root; ++s) t.flops += P_.front_flops[s];
    access(panel, AccessMode::W);
    access_cbs(root, AccessMode::W);
  }

  void add_front_task(idx_t s) {
    const idx_t panel = panel_block(s, s);
    Task& t = new_task(TaskKind::front, s);
    t.flops = P_.front_flops[s];
    access(panel, AccessMode::W);
    access_cbs(s, AccessMode::W);
    for (idx_t q = P_.child_ptr[s]; q < P_.child_ptr[s + 1]; ++q) access_cbs(P_.child_list[q], AccessMode::R);
  }

  /// Tile index (of front s) holding front position pos.
  idx_t tile_of(idx_t s, idx_t pos) const {
    const idx_t* b = &G_.bounds[G_.bounds_ptr[s]];
    return static_cast<idx_t>(std::upper_bound(b, b + G_.ntiles(s) + 1, pos) - b) - 1;
  }

  void add_tiled_front(idx_t s) {
    const idx_t nt = G_.ntiles(s), kt = G_.npanel_tiles[s];
    auto dim = [&](idx_t t) { return static_cast<double>(G_.bound(s, t + 1) - G_.bound(s, t)); };
    for (idx_t J = 0; J < nt; ++J) {
      Task& t = new_task(TaskKind::assemble, s);
      t.j = static_cast<int>(J);
      for (idx_t I = J; I < nt; ++I) t.flops += dim(I) * dim(J);
      for (idx_t I = J; I < nt; ++I) access(G_.tile(s, I, J), AccessMode::W);
      // A contribution-block column comes to life only once the children's
      // contribution blocks are complete (it reads them, without using
      // them), as in a sequential multifrontal pass: otherwise its tiles
      // would be live from the start and could never reuse a slot.
      if (J >= kt)
        for (idx_t q = P_.child_ptr[s]; q < P_.child_ptr[s + 1]; ++q)
          access_cbs(P_.child_list[q], AccessMode::R);
    }
    for (idx_t q = P_.child_ptr[s]; q < P_.child_ptr[s + 1]; ++q) add_extend_adds(P_.child_list[q], s);
    for (idx_t K = 0; K < kt; ++K) {
      const double bk = dim(K);
      Task& p = new_task(TaskKind::potrf, s);
      p.k = static_cast<int>(K);
      p.flops = bk * bk * bk / 3.0;
      access(G_.tile(s, K, K), AccessMode::RW);
      for (idx_t I = K + 1; I < nt; ++I) {
        Task& t = new_task(TaskKind::trsm, s);
        t.i = static_cast<int>(I), t.k = static_cast<int>(K);
        t.flops = dim(I) * bk * bk;
        access(G_.tile(s, K, K), AccessMode::R);
        access(G_.tile(s, I, K), AccessMode::RW);
      }
      for (idx_t J = K + 1; J < nt; ++J) {
        Task& y = new_task(TaskKind::syrk, s);
        y.j = static_cast<int>(J), y.k = static_cast<int>(K);
        y.flops = dim(J) * dim(J) * bk;
        access(G_.tile(s, J, K), AccessMode::R);
        access(G_.tile(s, J, J), AccessMode::RW);
        for (idx_t I = J + 1; I < nt; ++I) {
          Task& g = new_task(TaskKind::gemm, s);
          g.i = static_cast<int>(I), g.j = static_cast<int>(J), g.k = static_cast<int>(K);
          g.flops = 2.0 * dim(I) * dim(J) * bk;
          access(G_.tile(s, I, K), AccessMode::R);
          access(G_.tile(s, J, K), AccessMode::R);
          access(G_.tile(s, I, J), AccessMode::RW);
        }
      }
    }
  }

  /// One extend_add task per parent block column J that child c touches:
  /// reads all of c's CB blocks, adds into the tiles (I, J) it touches.
  void add_extend_adds(idx_t c, idx_t s) {
    const idx_t mc = P_.cb_order(c);
    const idx_t* rel = &P_.rel[P_.rel_ptr[c]];
    std::vector<idx_t> row_tiles;
    for (idx_t r = 0; r < mc; ++r) row_tiles.push_back(tile_of(s, rel[r]));
    row_tiles.erase(std::unique(row_tiles.begin(), row_tiles.end()), row_tiles.end());
    for (idx_t J : row_tiles) {  // columns of c's CB land in the same tiles as its rows
      Task& t = new_task(TaskKind::extend_add, s);
      t.child = c;
      t.j = static_cast<int>(J);
      for (idx_t r = 0; r < mc; ++r)
        if (tile_of(s, rel[r]) == J) t.flops += static_cast<double>(mc - r);
      access_cbs(c, AccessMode::R);
      for (idx_t I : row_tiles)
        if (I >= J) access(G_.tile(s, I, J), AccessMode::RW_COMMUTE);
    }
  }

  std::vector<idx_t> subtree_last_;  // per front in a fused group: its last front
  const FrontPlan& P_;
  const SymbolicFactor& S_;
  const GraphOptions& o_;
  TaskGraph& G_;
};

/// Bottom levels (estimated seconds of the heaviest path from a task to the
/// end), scaled to priorities 0..1000.
void set_priorities(TaskGraph& G) {
  const auto preds = task_dependencies(G);
  const idx_t nt = static_cast<idx_t>(G.tasks.size());
  std::vector<double> level(nt, 0.0);
  for (idx_t t = nt - 1; t >= 0; --t) {  // submission order is topological
    level[t] += estimate_seconds(G.tasks[t]);
    for (idx_t p : preds[t]) level[p] = std::max(level[p], level[t]);
  }
  const double top = nt ? *std::max_element(level.begin(), level.end()) : 0.0;
  for (idx_t t = 0; t < nt; ++t)
    G.tasks[t].priority = top > 0 ? static_cast<int>(1000.0 * level[t] / top) : 0;
}

}  // namespace

const char* task_kind_name(TaskKind k) {
  static const char* names[] = {"subtree", "front", "assemble", "extend_add",
                                "potrf",   "trsm",  "syrk",     "gemm"};
  return names[static_cast<int>(k)];
}

const char* access_mode_name(AccessMode m) {
  static const char* names[] = {"R", "W", "RW", "RW|COMMUTE"};
  return names[static_cast<int>(m)];
}

Status build_task_graph(const FrontPlan& P, const GraphOptions& opts, TaskGraph& out) {
  if (opts.tile_size < 1 || opts.tile_threshold < 1 || opts.workers < 0 || !(opts.subtree_ratio > 0) ||
      !(opts.min_subtree_flops >= 0))
    return Status::error(StatusCode::invalid_argument,
                         "task graph options: tile_size, tile_threshold and subtree_ratio must be "
                         "positive, workers and min_subtree_flops >= 0");
  GraphOptions o = opts;
  if (o.workers == 0) o.workers = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  if (!(opts.slots.budget_bytes >= 0))
    return Status::error(StatusCode::invalid_argument, "slot budget must be >= 0 bytes");
  if (opts.max_subtree_front < 0)
    return Status::error(StatusCode::invalid_argument, "task graph options: max_subtree_front must be >= 0");
  static std::atomic<std::uint64_t> next_build_id{1};
  TaskGraph G;
  G.build_id = next_build_id++;
  Builder(P, o, G).run();
  Status st = plan_slots(G, opts.slots);
  if (!st.ok()) return st;
  set_priorities(G);
  out = std::move(G);
  return Status::success();
}

GraphOptions gpu_graph_options(int workers, idx_t max_front, idx_t tile_threshold, idx_t tile_size) {
  GraphOptions o;
  o.workers = workers;
  o.min_subtree_flops = 1e12;
  o.max_subtree_front = max_front;
  o.tile_threshold = tile_threshold;
  o.tile_size = tile_size;
  return o;
}

double estimate_seconds(const Task& t) {
  const bool blas3 = t.kind == TaskKind::potrf || t.kind == TaskKind::trsm ||
                     t.kind == TaskKind::syrk || t.kind == TaskKind::gemm;
  return 5e-6 + t.flops / (blas3 ? 8e9 : 2e9);
}

std::vector<std::vector<idx_t>> task_dependencies(const TaskGraph& G) {
  struct State {
    std::vector<idx_t> writers, readers, group_preds;
    bool commute = false;
  };
  std::vector<State> st(G.blocks.size());
  std::vector<std::vector<idx_t>> preds(G.tasks.size());
  for (idx_t t = 0; t < static_cast<idx_t>(G.tasks.size()); ++t) {
    std::vector<idx_t>& p = preds[t];
    for (idx_t a = G.tasks[t].acc_begin; a < G.tasks[t].acc_end; ++a) {
      State& b = st[G.accesses[a].block];
      switch (G.accesses[a].mode) {
        case AccessMode::R:
          p.insert(p.end(), b.writers.begin(), b.writers.end());
          b.readers.push_back(t);
          break;
        case AccessMode::W:
        case AccessMode::RW:
          p.insert(p.end(), b.writers.begin(), b.writers.end());
          p.insert(p.end(), b.readers.begin(), b.readers.end());
          b.writers = {t};
          b.readers.clear();
          b.commute = false;
          break;
        case AccessMode::RW_COMMUTE:
          if (!b.commute || !b.readers.empty()) {
            b.group_preds = b.writers;
            b.group_preds.insert(b.group_preds.end(), b.readers.begin(), b.readers.end());
            b.writers.clear();
            b.readers.clear();
            b.commute = true;
          }
          p.insert(p.end(), b.group_preds.begin(), b.group_preds.end());
          b.writers.push_back(t);
          break;
      }
    }
  }
  for (const auto& [a, b] : G.added_deps) preds[b].push_back(a);
  for (idx_t t = 0; t < static_cast<idx_t>(G.tasks.size()); ++t) {
    std::vector<idx_t>& p = preds[t];
    std::sort(p.begin(), p.end());
    p.erase(std::unique(p.begin(), p.end()), p.end());
    p.erase(std::remove(p.begin(), p.end(), t), p.end());
  }
  return preds;
}

GraphStats graph_stats(const TaskGraph& G) {
  GraphStats s;
  s.tasks = static_cast<idx_t>(G.tasks.size());
  const auto preds = task_dependencies(G);
  std::vector<double> fl(G.tasks.size(), 0.0), sec(G.tasks.size(), 0.0);
  for (idx_t t = 0; t < s.tasks; ++t) {
    const Task& k = G.tasks[t];
    ++s.by_kind[static_cast<int>(k.kind)];
    s.total_flops += k.flops;
    s.total_seconds += estimate_seconds(k);
    for (idx_t p : preds[t]) fl[t] = std::max(fl[t], fl[p]), sec[t] = std::max(sec[t], sec[p]);
    fl[t] += k.flops;
    sec[t] += estimate_seconds(k);
    s.critical_path_flops = std::max(s.critical_path_flops, fl[t]);
    s.critical_path_seconds = std::max(s.critical_path_seconds, sec[t]);
  }
  s.fronts = static_cast<idx_t>(G.mode.size());
  for (FrontMode m : G.mode) {
    s.fronts_in_subtrees += m == FrontMode::in_subtree;
    s.tiled_fronts += m == FrontMode::tiled;
  }
  return s;
}

std::string task_name(const TaskGraph& G, const Task& t) {
  char buf[96];
  const long long f = t.front;
  switch (t.kind) {
    case TaskKind::subtree:
      std::snprintf(buf, sizeof buf, "subtree s%lld (%lld fronts)", f,
                    static_cast<long long>(t.front - t.first_front + 1));
      break;
    case TaskKind::front:
      std::snprintf(buf, sizeof buf, "front f%lld (%lldx%lld)", f,
                    static_cast<long long>(G.plan->front_order(t.front)),
                    static_cast<long long>(G.plan->ncols(t.front)));
      break;
    case TaskKind::assemble: std::snprintf(buf, sizeof buf, "assemble f%lld (col %d)", f, t.j); break;
    case TaskKind::extend_add:
      std::snprintf(buf, sizeof buf, "extend_add f%lld->f%lld (col %d)",
                    static_cast<long long>(t.child), f, t.j);
      break;
    case TaskKind::potrf: std::snprintf(buf, sizeof buf, "potrf f%lld (%d,%d)", f, t.k, t.k); break;
    case TaskKind::trsm: std::snprintf(buf, sizeof buf, "trsm f%lld (%d,%d)", f, t.i, t.k); break;
    case TaskKind::syrk:
      std::snprintf(buf, sizeof buf, "syrk f%lld (%d,%d) k%d", f, t.j, t.j, t.k);
      break;
    case TaskKind::gemm:
      std::snprintf(buf, sizeof buf, "gemm f%lld (%d,%d) k%d", f, t.i, t.j, t.k);
      break;
  }
  return buf;
}

}  // namespace starfront
