#include "plan/cb_slots.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <map>
#include <queue>
#include <set>

namespace starfront {
namespace {

constexpr double kBytes = sizeof(double);

/// Doubles a CB block needs.
idx_t block_doubles(const Block& b) { return b.ld * b.cols; }

/// Lifetimes and accessors of the CB blocks of a graph.
struct Lifetimes {
  std::vector<idx_t> first, last;            // per block; -1: not a CB block or never accessed
  std::vector<std::vector<idx_t>> accessors; // per block, increasing task indices
  std::vector<idx_t> order;                  // CB blocks by (first, id)

  explicit Lifetimes(const TaskGraph& G) {
    const idx_t nb = static_cast<idx_t>(G.blocks.size());
    first.assign(nb, -1);
    last.assign(nb, -1);
    accessors.resize(nb);
    for (idx_t t = 0; t < static_cast<idx_t>(G.tasks.size()); ++t)
      for (idx_t a = G.tasks[t].acc_begin; a < G.tasks[t].acc_end; ++a) {
        const idx_t b = G.accesses[a].block;
        if (G.blocks[b].offset >= 0) continue;
        if (first[b] < 0) first[b] = t;
        last[b] = t;
        if (accessors[b].empty() || accessors[b].back() != t) accessors[b].push_back(t);
      }
    for (idx_t b = 0; b < nb; ++b)
      if (G.blocks[b].offset < 0) order.push_back(b);
    std::stable_sort(order.begin(), order.end(), [&](idx_t x, idx_t y) {
      // never-accessed blocks (first = -1) go last
      const idx_t fx = first[x] < 0 ? std::numeric_limits<idx_t>::max() : first[x];
      const idx_t fy = first[y] < 0 ? std::numeric_limits<idx_t>::max() : first[y];
      return fx < fy;
    });
  }
};

enum class Mode { private_slots, dag, budget, minimum };

/// The greedy slot assignment of one policy (see the header of cb_slots.hpp).
class Planner {
 public:
  /// block_rank: null, or per block the rank owning it (a slot then only
  /// holds blocks of one rank).
  Planner(const TaskGraph& G, const Lifetimes& L, Mode mode, double budget_doubles,
          const std::vector<int>* block_rank)
      : G_(G), L_(L), mode_(mode), budget_(budget_doubles), preds_(task_dependencies(G)),
        stamp_(G.tasks.size(), -1), rank_(block_rank) {}

  /// Runs the assignment; false if the budget could not be met.
  bool run() {
    slot_of_.assign(G_.blocks.size(), -1);
    for (idx_t b : L_.order) {
      const idx_t p = L_.first[b];
      const idx_t size = block_doubles(G_.blocks[b]);
      if (p < 0) {  // never accessed: a slot of its own, never shared
        slot_of_[b] = new_slot(b, size);
        continue;
      }
      release_until(p);
      if (p != producer_) start_search(p);
      cur_rank_ = rank_of(b);
      const idx_t s = choose(size);
      if (s == -2) return false;
      slot_of_[b] = s >= 0 ? s : new_slot(b, size);
      if (s >= 0) occupy(s, b, size);
    }
    return true;
  }

  double total() const { return total_; }

  /// Takes a given assignment (slot_of per block, slots numbered from 0)
  /// and adds the write-after-read edges it needs: for each block, in order
  /// of production, the accessors of the previous occupant of its slot that
  /// do not already precede its producer.
  void adopt(const std::vector<idx_t>& slot_of) {
    slot_of_ = slot_of;
    capacity_.clear();
    slot_rank_.clear();
    std::vector<idx_t> last_occupant;
    for (idx_t b : L_.order) {
      const idx_t s = slot_of_[b];
      if (s >= static_cast<idx_t>(capacity_.size()))
        capacity_.resize(s + 1, 0), last_occupant.resize(s + 1, -1), slot_rank_.resize(s + 1, 0);
      slot_rank_[s] = rank_of(b);
      capacity_[s] = std::max(capacity_[s], block_doubles(G_.blocks[b]));
      const idx_t prev = last_occupant[s];
      last_occupant[s] = b;
      if (prev < 0 || L_.first[b] < 0) continue;
      if (L_.first[b] != producer_) start_search(L_.first[b]);
      if (!ordered_before(prev)) add_edges(prev);
    }
    total_ = 0;
    for (idx_t c : capacity_) total_ += static_cast<double>(c);
  }

  /// Writes the plan into G.
  void store(TaskGraph& G, SlotPolicy policy) const {
    G.slot_of = slot_of_;
    G.slot_capacity = capacity_;
    G.added_deps = added_;
    std::sort(G.added_deps.begin(), G.added_deps.end());
    G.slot_rank = rank_ ? slot_rank_ : std::vector<int>{};
    G.slot_policy = policy;
  }

 private:
  static inline int kMaxChecks = getenv("SF_K") ? atoi(getenv("SF_K")) : 64;  // candidate slots examined per block and pass

  idx_t new_slot(idx_t b, idx_t size) {
    const idx_t s = static_cast<idx_t>(capacity_.size());
    capacity_.push_back(size);
    occupant_.push_back(b);
    slot_rank_.push_back(rank_of(b));
    total_ += static_cast<double>(size);
    busy_.push({L_.last[b], s});
    return s;
  }

  void occupy(idx_t s, idx_t b, idx_t size) {
    free_.erase({capacity_[s], s});
    if (size > capacity_[s]) {
      total_ += static_cast<double>(size - capacity_[s]);
      capacity_[s] = size;
    }
    occupant_[s] = b;
    busy_.push({L_.last[b], s});
  }

  /// Slots whose occupant's last access precedes p in submission order become free.
  void release_until(idx_t p) {
    while (!busy_.empty() && busy_.top().first < p) {
      const idx_t s = busy_.top().second;
      busy_.pop();
      free_.insert({capacity_[s], s});
    }
  }

  // Ancestors of the producer p, found by a backward search in decreasing
  // task order, extended lazily: after extend(lo) every ancestor >= lo is
  // marked (a path from an ancestor a to p only visits tasks >= a).
  void start_search(idx_t p) {
    producer_ = p;
    heap_ = {};
    heap_.push(p);
    stamp_[p] = p;
    bound_ = p + 1;
  }
  void extend(idx_t lo) {
    bound_ = std::min(bound_, lo);
    while (!heap_.empty() && heap_.top() >= bound_) {
      const idx_t u = heap_.top();
      heap_.pop();
      for (idx_t v : preds_[u])
        if (stamp_[v] != producer_) stamp_[v] = producer_, heap_.push(v);
    }
  }
  /// True if every task that accesses block o is an ancestor of the producer.
  bool ordered_before(idx_t o) {
    extend(L_.first[o]);
    for (idx_t a : L_.accessors[o])
      if (stamp_[a] != producer_) return false;
    return true;
  }
  /// Adds the write-after-read edges that order o's accessors before the producer.
  void add_edges(idx_t o) {
    for (idx_t a : L_.accessors[o])
      if (stamp_[a] != producer_) {
        preds_[producer_].push_back(a);
        added_.emplace_back(a, producer_);
        stamp_[a] = producer_;
        heap_.push(a);
      }
    extend(bound_);
  }

  /// Free slots with capacity >= size, smallest first.
  int rank_of(idx_t b) const { return rank_ ? (*rank_)[b] : 0; }

  template <class F>
  idx_t scan_fitting(idx_t size, F accept) {
    for (auto it = free_.lower_bound({size, -1}); it != free_.end(); ++it)
      if (slot_rank_[it->second] == cur_rank_ && accept(it->second)) return it->second;
    return -1;
  }
  /// Free slots with capacity < size, largest first (least growth first).
  template <class F>
  idx_t scan_growing(idx_t size, F accept) {
    auto it = free_.lower_bound({size, -1});
    while (it != free_.begin()) {
      --it;
      if (slot_rank_[it->second] == cur_rank_ && accept(it->second)) return it->second;
    }
    return -1;
  }

  /// The slot for a block of `size` doubles: >= 0 an existing slot, -1 a new
  /// one, -2 the budget cannot be met.
  idx_t choose(idx_t size) {
    auto reachable = [&](idx_t s) { return ordered_before(occupant_[s]); };
    auto any = [](idx_t) { return true; };
    idx_t s = -1;
    switch (mode_) {
      case Mode::private_slots: return -1;
      case Mode::dag:
        if ((s = scan_fitting(size, reachable)) >= 0) return s;
        return scan_growing(size, reachable);
      case Mode::minimum: return -1;  // see adopt()
      case Mode::budget: {
        const double left = budget_ - total_;
        auto grow_ok = [&](idx_t x) { return static_cast<double>(size - capacity_[x]) <= left; };
        if ((s = scan_fitting(size, reachable)) >= 0) return s;
        if ((s = scan_growing(size, [&](idx_t x) { return grow_ok(x) && reachable(x); })) >= 0) return s;
        if (static_cast<double>(size) <= left) return -1;
        if ((s = scan_fitting(size, any)) >= 0 || (s = scan_growing(size, grow_ok)) >= 0) {
          add_edges(occupant_[s]);
          return s;
        }
        return -2;
      }
    }
    return -1;
  }

  const TaskGraph& G_;
  const Lifetimes& L_;
  Mode mode_;
  double budget_;
  std::vector<std::vector<idx_t>> preds_;
  std::vector<idx_t> stamp_;
  std::priority_queue<idx_t> heap_;
  idx_t producer_ = -1, bound_ = 0;

  const std::vector<int>* rank_;
  int cur_rank_ = 0;                 // rank of the block being placed
  std::vector<int> slot_rank_;       // per slot
  std::vector<idx_t> slot_of_, capacity_, occupant_;
  std::vector<std::pair<idx_t, idx_t>> added_;
  double total_ = 0;
  using Entry = std::pair<idx_t, idx_t>;  // (last access of occupant, slot)
  std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>> busy_;
  std::set<std::pair<idx_t, idx_t>> free_;  // (capacity, slot)
};

/// Interval max-colouring by first fit in decreasing size: blocks, largest
/// first, go to the first slot none of whose blocks' lifetimes [first, last]
/// overlap theirs (a slot's capacity is then its first, largest block).
/// Ignores the graph: every reuse may need added edges (Planner::adopt).
/// Cf. S. V. Pemmaraju, R. Raman, K. Varadarajan, "Buffer minimization using
/// max-coloring", SODA 2004 (max-colouring of interval graphs).
std::vector<idx_t> first_fit_decreasing(const TaskGraph& G, const Lifetimes& L,
                                        const std::vector<int>* block_rank) {
  std::vector<idx_t> blocks = L.order;
  std::stable_sort(blocks.begin(), blocks.end(), [&](idx_t x, idx_t y) {
    return block_doubles(G.blocks[x]) > block_doubles(G.blocks[y]);
  });
  std::vector<idx_t> slot_of(G.blocks.size(), -1);
  std::vector<std::map<idx_t, idx_t>> busy;  // per slot: first -> last of its blocks
  std::vector<int> rank;                      // per slot: owner of its blocks
  for (idx_t b : blocks) {
    const idx_t f = L.first[b] < 0 ? std::numeric_limits<idx_t>::max() - 1 : L.first[b];
    const idx_t l = L.first[b] < 0 ? f : L.last[b];
    const int r = block_rank ? (*block_rank)[b] : 0;
    auto fits = [&](idx_t s) {
      if (rank[s] != r) return false;
      const auto next = busy[s].lower_bound(f);
      if (next != busy[s].end() && next->first <= l) return false;
      return next == busy[s].begin() || std::prev(next)->second < f;
    };
    idx_t s = static_cast<idx_t>(busy.size());
    for (idx_t x = 0; x < static_cast<idx_t>(busy.size()); ++x)
      if (fits(x)) {
        s = x;
        break;
      }
    if (s == static_cast<idx_t>(busy.size())) busy.emplace_back(), rank.push_back(r);
    busy[s].emplace(f, l);
    slot_of[b] = s;
  }
  return slot_of;
}

std::string mib(double bytes) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.0f bytes (%.1f MiB)", bytes, bytes / 1048576.0);
  return buf;
}

/// Depth of each front in the assembly tree (roots 0).
std::vector<idx_t> front_depths(const FrontPlan& P) {
  const auto& parent = P.symbolic->super_parent;
  std::vector<idx_t> depth(P.nsuper, 0);
  for (idx_t s = P.nsuper - 1; s >= 0; --s)  // parents come after children in postorder
    if (parent[s] >= 0) depth[s] = depth[parent[s]] + 1;
  return depth;
}

}  // namespace

Status plan_slots(TaskGraph& G, const SlotOptions& opts, const std::vector<int>* block_rank) {
  if (block_rank && block_rank->size() != G.blocks.size())
    return Status::error(StatusCode::invalid_argument, "plan_slots: one rank per block expected");
  G.added_deps.clear();
  const Lifetimes L(G);
  switch (opts.policy) {
    case SlotPolicy::private_slots:
    case SlotPolicy::dag: {
      // dag: the CBs that fused subtree tasks produce share slots only with
      // each other (a class beside the rank), so that the slots the CPU
      // subtrees write stay small: the StarPU executor keeps them in host
      // memory across factorisations (NumericFactor::cb_host). Shared with a
      // front's CB, such a slot would take that CB's size (lap3d 60^3: 1.3 GB
      // of such slots instead of 0.2 GB).
      std::vector<int> cls;
      const std::vector<int>* ranks = block_rank;
      if (opts.policy == SlotPolicy::dag) {
        cls.resize(G.blocks.size());
        for (std::size_t b = 0; b < G.blocks.size(); ++b) {
          const idx_t p = L.first[b];
          const bool subtree_output = p >= 0 && G.tasks[p].kind == TaskKind::subtree;
          cls[b] = (block_rank ? (*block_rank)[b] : 0) * 2 + (subtree_output ? 1 : 0);
        }
        ranks = &cls;
      }
      Planner pl(G, L, opts.policy == SlotPolicy::dag ? Mode::dag : Mode::private_slots, 0, ranks);
      pl.run();
      pl.store(G, opts.policy);
      if (ranks == &cls) {  // back to ranks
        if (!block_rank) G.slot_rank.clear();
        for (int& r : G.slot_rank) r /= 2;
      }
      return Status::success();
    }
    case SlotPolicy::budget_min: {
      Planner pl(G, L, Mode::minimum, 0, block_rank);
      pl.adopt(first_fit_decreasing(G, L, block_rank));
      pl.store(G, opts.policy);
      return Status::success();
    }
    case SlotPolicy::budget: {
      if (!(opts.budget_bytes >= 0))
        return Status::error(StatusCode::invalid_argument, "slot budget must be >= 0 bytes");
      const double budget = std::floor(opts.budget_bytes / kBytes);
      Planner dag(G, L, Mode::dag, 0, block_rank);
      dag.run();
      if (dag.total() <= budget) {  // the graph's own order suffices: nothing added
        dag.store(G, opts.policy);
        return Status::success();
      }
      Planner minimum(G, L, Mode::minimum, 0, block_rank);
      minimum.adopt(first_fit_decreasing(G, L, block_rank));
      if (minimum.total() > budget) {
        minimum.store(G, opts.policy);
        const double lower = memory_estimates(G).cb_lower_bound;
        G.slot_of.clear(), G.slot_capacity.clear(), G.added_deps.clear();
        return Status::error(
            StatusCode::out_of_memory,
            "contribution-block budget of " + mib(opts.budget_bytes) +
                " cannot be met: the smallest slot plan in submission order needs " +
                mib(minimum.total() * kBytes) + " (live contribution blocks reach " +
                mib(lower) + "; with no added dependencies: " + mib(dag.total() * kBytes) + ")");
      }
      Planner fit(G, L, Mode::budget, budget, block_rank);
      if (fit.run())
        fit.store(G, opts.policy);
      else
        minimum.store(G, opts.policy);  // the greedy fit failed; the minimum plan fits
      return Status::success();
    }
  }
  return Status::error(StatusCode::invalid_argument, "unknown slot policy");
}

void plan_slots_by_level(TaskGraph& G) {
  const FrontPlan& P = *G.plan;
  const std::vector<idx_t> depth = front_depths(P);
  const Lifetimes L(G);
  // pool[d % 2][r]: the r-th slot of the levels of that parity
  std::vector<idx_t> pool[2];
  std::vector<idx_t> rank_in_level;  // per depth: blocks placed so far
  G.slot_of.assign(G.blocks.size(), -1);
  G.slot_capacity.clear();
  G.slot_rank.clear();
  G.added_deps.clear();
  for (idx_t b : L.order) {
    const idx_t d = depth[G.blocks[b].front];
    if (static_cast<idx_t>(rank_in_level.size()) <= d) rank_in_level.resize(d + 1, 0);
    const idx_t r = rank_in_level[d]++;
    std::vector<idx_t>& p = pool[d % 2];
    while (static_cast<idx_t>(p.size()) <= r) {
      p.push_back(static_cast<idx_t>(G.slot_capacity.size()));
      G.slot_capacity.push_back(0);
    }
    G.slot_of[b] = p[r];
    G.slot_capacity[p[r]] = std::max(G.slot_capacity[p[r]], block_doubles(G.blocks[b]));
  }
  G.slot_policy = SlotPolicy::private_slots;  // not a real policy: tests only
}

MemoryEstimates memory_estimates(const TaskGraph& G) {
  MemoryEstimates e;
  const FrontPlan& P = *G.plan;
  e.factors = static_cast<double>(P.factor_size()) * kBytes;
  const Lifetimes L(G);
  const idx_t nt = static_cast<idx_t>(G.tasks.size());
  std::vector<double> delta(nt + 1, 0.0);
  for (idx_t b : L.order) {
    const double bytes = static_cast<double>(block_doubles(G.blocks[b])) * kBytes;
    e.cb_private += bytes;
    if (L.first[b] < 0) continue;
    delta[L.first[b]] += bytes;
    delta[L.last[b] + 1] -= bytes;
  }
  double live = 0;
  for (idx_t t = 0; t < nt; ++t) e.cb_lower_bound = std::max(e.cb_lower_bound, live += delta[t]);
  for (idx_t c : G.slot_capacity) e.cb_planned += static_cast<double>(c) * kBytes;
  e.slots = static_cast<idx_t>(G.slot_capacity.size());
  e.added_deps = static_cast<idx_t>(G.added_deps.size());

  const std::vector<idx_t> depth = front_depths(P);
  std::vector<double> level;
  for (idx_t s = 0; s < P.nsuper; ++s) {
    if (static_cast<idx_t>(level.size()) <= depth[s]) level.resize(depth[s] + 1, 0.0);
    level[depth[s]] += static_cast<double>(P.cb_size(s)) * kBytes;
  }
  for (std::size_t d = 0; d < level.size(); ++d)
    e.cb_level_stack =
        std::max(e.cb_level_stack, level[d] + (d + 1 < level.size() ? level[d + 1] : 0.0));

  for (const Task& t : G.tasks) e.subtree_workspace = std::max(e.subtree_workspace, subtree_workspace_bytes(P, t));
  return e;
}

double subtree_workspace_bytes(const FrontPlan& P, const Task& t) {
  if (t.kind != TaskKind::subtree) return 0.0;
  std::vector<std::size_t> offsets;
  return static_cast<double>(subtree_cb_layout(P, t.first_front, t.front, offsets)) * kBytes;
}

std::size_t subtree_cb_layout(const FrontPlan& P, idx_t first, idx_t root, std::vector<std::size_t>& offsets) {
  struct Live {
    std::size_t begin, end;
    idx_t front;
  };
  thread_local std::vector<Live> live;  // sorted by begin, disjoint
  live.clear();
  offsets.assign(static_cast<std::size_t>(std::max<idx_t>(root - first + 1, 0)), 0);
  std::size_t peak = 0;
  for (idx_t s = first; s < root; ++s) {
    const std::size_t size = static_cast<std::size_t>(P.cb_size(s));
    if (size > 0) {
      // First fit among the gaps between the live CBs (the children of s among them).
      std::size_t at = 0, pos = 0;
      for (; pos < live.size(); ++pos) {
        if (live[pos].begin >= at + size) break;
        at = std::max(at, live[pos].end);
      }
      live.insert(live.begin() + static_cast<std::ptrdiff_t>(pos), Live{at, at + size, s});
      offsets[static_cast<std::size_t>(s - first)] = at;
      peak = std::max(peak, at + size);
    }
    // Once s is factorised its children's CBs are dead.
    for (idx_t q = P.child_ptr[s]; q < P.child_ptr[s + 1]; ++q) {
      const idx_t c = P.child_list[q];
      if (c < first) continue;
      for (std::size_t i = 0; i < live.size(); ++i)
        if (live[i].front == c) {
          live.erase(live.begin() + static_cast<std::ptrdiff_t>(i));
          break;
        }
    }
  }
  return peak;
}

const char* slot_policy_name(SlotPolicy p) {
  switch (p) {
    case SlotPolicy::private_slots: return "private";
    case SlotPolicy::dag: return "dag";
    case SlotPolicy::budget: return "budget";
    case SlotPolicy::budget_min: return "budget-min";
  }
  return "?";
}

Status parse_slot_policy(const std::string& text, SlotOptions& opts) {
  SlotOptions o;
  if (text == "private") {
    o.policy = SlotPolicy::private_slots;
  } else if (text == "dag") {
    o.policy = SlotPolicy::dag;
  } else if (text == "budget-min") {
    o.policy = SlotPolicy::budget_min;
  } else if (text.rfind("budget:", 0) == 0) {
    const std::string num = text.substr(7);
    char* end = nullptr;
    errno = 0;
    // Decimal digits only (strtod would also take blanks, hex and "inf").
    const bool decimal = !num.empty() && (std::isdigit(static_cast<unsigned char>(num[0])) || num[0] == '.') &&
                         num.find_first_of("xXpP \t") == std::string::npos;
    double v = decimal ? std::strtod(num.c_str(), &end) : -1;
    if (end && *end) {
      const std::string suffix(end);
      if (suffix == "K" || suffix == "k") v *= 1024.0;
      else if (suffix == "M") v *= 1048576.0;
      else if (suffix == "G") v *= 1073741824.0;
      else v = -1;
    }
    if (errno != 0 || !(v >= 0) || !std::isfinite(v))
      return Status::error(StatusCode::invalid_argument,
                           "slot policy '" + text +
                               "': expected budget:BYTES with BYTES a number >= 0, optionally "
                               "followed by K, M or G");
    o.policy = SlotPolicy::budget;
    o.budget_bytes = v;
  } else {
    return Status::error(StatusCode::invalid_argument,
                         "slot policy '" + text +
                             "': expected private, dag, budget:BYTES or budget-min");
  }
  opts = o;
  return Status::success();
}

}  // namespace starfront
