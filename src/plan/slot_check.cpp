#include "plan/slot_check.hpp"

#include <algorithm>
#include <random>

namespace starfront {
namespace {

/// Replays execution orders of one planned graph.
class Replayer {
 public:
  Replayer(const TaskGraph& G, bool strict)
      : G_(G), strict_(strict), nt_(static_cast<idx_t>(G.tasks.size())),
        nb_(static_cast<idx_t>(G.blocks.size())), ns_(static_cast<idx_t>(G.slot_capacity.size())),
        preds_(task_dependencies(G)) {
    first_.assign(nb_, -1);
    naccess_.assign(nb_, 0);
    prev_.assign(nb_, -1);
    std::vector<idx_t> last_in_slot(ns_, -1);
    if (static_cast<idx_t>(G.slot_of.size()) != nb_) {
      static_error_ = "slot_of has " + std::to_string(G.slot_of.size()) + " entries for " +
                      std::to_string(nb_) + " blocks";
      return;
    }
    for (idx_t b = 0; b < nb_ && static_error_.empty(); ++b) {
      const Block& k = G.blocks[b];
      const idx_t s = G.slot_of[b];
      if (k.offset < 0 && (s < 0 || s >= ns_ || G.slot_capacity[s] < k.ld * k.cols))
        static_error_ = "block " + std::to_string(b) + " has no slot large enough";
    }
    if (!static_error_.empty()) return;
    for (idx_t t = 0; t < nt_; ++t)
      for (idx_t a = G.tasks[t].acc_begin; a < G.tasks[t].acc_end; ++a) {
        const idx_t b = G.accesses[a].block;
        if (G.blocks[b].offset >= 0) continue;
        ++naccess_[b];
        if (first_[b] < 0) {
          first_[b] = t;
          const idx_t s = G.slot_of[b];
          prev_[b] = last_in_slot[s];
          last_in_slot[s] = b;
        }
      }
    succ_.resize(nt_);
    for (idx_t t = 0; t < nt_; ++t)
      for (idx_t p : preds_[t]) succ_[p].push_back(t);
  }

  /// Replays one order; `pick(ready)` chooses the index in `ready` of the next task.
  template <class Pick>
  void replay(Pick pick, SlotCheckResult& r) {
    ++r.orders;
    bool bad = false;
    if (!static_error_.empty()) {
      note(r, static_error_);
      ++r.violations;
      return;
    }
    std::vector<idx_t> remaining = naccess_, occupant(ns_, -1), pending(nt_), ready;
    for (idx_t t = 0; t < nt_; ++t)
      if ((pending[t] = static_cast<idx_t>(preds_[t].size())) == 0) ready.push_back(t);
    idx_t done = 0;
    while (!ready.empty()) {
      const std::size_t i = pick(ready);
      if (i >= ready.size()) {
        bad = true;
        note(r, "the given order runs a task before its predecessors");
        break;
      }
      const idx_t t = ready[i];
      ready[i] = ready.back();
      ready.pop_back();
      ++done;
      for (idx_t a = G_.tasks[t].acc_begin; a < G_.tasks[t].acc_end; ++a) {
        const idx_t b = G_.accesses[a].block;
        if (G_.blocks[b].offset >= 0) continue;
        const idx_t s = G_.slot_of[b];
        const idx_t o = occupant[s];
        if (first_[b] == t && o != b) {
          if (o >= 0 && remaining[o] > 0) {
            bad = true;
            note(r, "task " + std::to_string(t) + " (" + task_name(G_, G_.tasks[t]) + ") writes block " +
                        std::to_string(b) + " into slot " + std::to_string(s) + " while block " +
                        std::to_string(o) + " there has " + std::to_string(remaining[o]) +
                        " accesses pending");
          } else if (strict_ && o != prev_[b]) {
            bad = true;
            note(r, "task " + std::to_string(t) + " (" + task_name(G_, G_.tasks[t]) + ") writes block " +
                        std::to_string(b) + " into slot " + std::to_string(s) + " out of submission order");
          }
          occupant[s] = b;
        } else if (o != b) {
          bad = true;
          note(r, "task " + std::to_string(t) + " (" + task_name(G_, G_.tasks[t]) + ") accesses block " +
                      std::to_string(b) + " in slot " + std::to_string(s) + ", which now holds block " +
                      std::to_string(o));
        }
        --remaining[b];
      }
      for (idx_t v : succ_[t])
        if (--pending[v] == 0) ready.push_back(v);
    }
    if (done != nt_ && !bad) {
      bad = true;
      note(r, std::to_string(nt_ - done) + " tasks never became ready (a dependency cycle)");
    }
    r.violations += bad;
  }

 private:
  static void note(SlotCheckResult& r, const std::string& what) {
    if (r.first.empty()) r.first = "order " + std::to_string(r.orders - 1) + ": " + what;
  }

  const TaskGraph& G_;
  bool strict_;
  idx_t nt_, nb_, ns_;
  std::vector<std::vector<idx_t>> preds_, succ_;
  std::vector<idx_t> first_, naccess_, prev_;
  std::string static_error_;
};

}  // namespace

SlotCheckResult check_slots(const TaskGraph& G, idx_t orders, std::uint64_t seed, bool strict) {
  SlotCheckResult r;
  Replayer rp(G, strict);
  std::mt19937_64 rng(seed);
  for (idx_t o = 0; o < orders; ++o) {
    if (o == 0) {  // the submission order: always the lowest ready index
      rp.replay([](const std::vector<idx_t>& ready) {
        return static_cast<std::size_t>(std::min_element(ready.begin(), ready.end()) - ready.begin());
      }, r);
    } else {
      rp.replay([&](const std::vector<idx_t>& ready) {
        return std::uniform_int_distribution<std::size_t>(0, ready.size() - 1)(rng);
      }, r);
    }
  }
  return r;
}

SlotCheckResult check_slots_in_order(const TaskGraph& G, const std::vector<idx_t>& order, bool strict) {
  SlotCheckResult r;
  Replayer rp(G, strict);
  std::size_t next = 0;
  rp.replay([&](const std::vector<idx_t>& ready) -> std::size_t {
    if (next >= order.size()) return ready.size();
    const auto it = std::find(ready.begin(), ready.end(), order[next++]);
    return static_cast<std::size_t>(it - ready.begin());  // ready.size(): not ready
  }, r);
  return r;
}

}  // namespace starfront
