#include "plan/solve_graph.hpp"

#include <algorithm>
#include <set>
#include <string>

namespace starfront {

const char* solve_task_kind_name(SolveTaskKind k) {
  switch (k) {
    case SolveTaskKind::fwd_unit: return "fwd_unit";
    case SolveTaskKind::fwd_init: return "fwd_init";
    case SolveTaskKind::fwd_trsm: return "fwd_trsm";
    case SolveTaskKind::fwd_gemm: return "fwd_gemm";
    case SolveTaskKind::bwd_unit: return "bwd_unit";
    case SolveTaskKind::bwd_init: return "bwd_init";
    case SolveTaskKind::bwd_gemm: return "bwd_gemm";
    case SolveTaskKind::bwd_trsm: return "bwd_trsm";
  }
  return "?";
}

namespace {

/// A unit of the solve: a non-tiled unit (fronts [first, root], its factor
/// panel block) or a tiled front (first == root, panel == -1).
struct Unit {
  idx_t first, root, panel;
  int rank;
};

class Builder {
 public:
  Builder(const TaskGraph& G, const RankMapping& M, SolveGraph& S)
      : G_(G), M_(M), P_(*G.plan), Sy_(*G.plan->symbolic), S_(S) {}

  Status build() {
    S_.graph = &G_;
    S_.nranks = M_.nranks;
    if (Status st = collect_units(); !st.ok()) return st;
    make_vector_handles();
    for (std::size_t u = 0; u < units_.size(); ++u) forward(units_[u]);
    for (std::size_t u = units_.size(); u-- > 0;) backward(units_[u]);
    return local_layout();
  }

 private:
  Status collect_units() {
    unit_of_.assign(P_.nsuper, -1);
    for (idx_t t = 0; t < static_cast<idx_t>(G_.tasks.size()); ++t) {
      const Task& task = G_.tasks[t];
      const idx_t s = task.front;
      if (task.kind == TaskKind::subtree || task.kind == TaskKind::front) {
        const idx_t first = task.kind == TaskKind::subtree ? task.first_front : s;
        const idx_t panel = G_.accesses[task.acc_begin].block;
        if (G_.blocks[panel].kind != BlockKind::panel)
          return Status::error(StatusCode::invalid_argument, "solve graph: a unit task without its factor panel");
        add_unit({first, s, panel, M_.block_owner[panel]});
      } else if (G_.mode[s] == FrontMode::tiled && unit_of_[s] < 0) {
        add_unit({s, s, -1, M_.block_owner[G_.tile(s, 0, 0)]});
      }
    }
    for (idx_t s = 0; s < P_.nsuper; ++s)
      if (unit_of_[s] < 0)
        return Status::error(StatusCode::invalid_argument,
                             "solve graph: front " + std::to_string(s) + " belongs to no task of the graph");
    return Status::success();
  }

  void add_unit(const Unit& u) {
    for (idx_t s = u.first; s <= u.root; ++s) unit_of_[s] = static_cast<idx_t>(units_.size());
    units_.push_back(u);
  }

  bool tiled(const Unit& u) const { return u.panel < 0; }
  idx_t parent(idx_t s) const { return Sy_.super_parent[s]; }
  idx_t k(idx_t s) const { return P_.ncols(s); }
  idx_t m(idx_t s) const { return P_.front_order(s); }

  idx_t add_handle(const SolveHandle& h) {
    S_.handles.push_back(h);
    return static_cast<idx_t>(S_.handles.size() - 1);
  }

  idx_t factor_handle(idx_t block) {
    if (factor_of_.empty()) factor_of_.assign(G_.blocks.size(), -1);
    if (factor_of_[block] < 0) {
      SolveHandle h{SolveHandleKind::factor, M_.block_owner[block]};
      h.front = G_.blocks[block].front;
      h.block = block;
      factor_of_[block] = add_handle(h);
    }
    return factor_of_[block];
  }

  /// Rows handles of the units and panel segments, front vectors of the
  /// non-tiled roots that talk to another unit, CB segments.
  void make_vector_handles() {
    rows_of_.assign(units_.size(), -1);
    front_vec_.assign(P_.nsuper, -1);
    seg_ptr_.assign(P_.nsuper + 1, 0);
    for (idx_t s = 0; s < P_.nsuper; ++s) seg_ptr_[s + 1] = seg_ptr_[s] + (G_.mode[s] == FrontMode::tiled ? G_.ntiles(s) : 0);
    seg_.assign(seg_ptr_.back(), -1);
    for (std::size_t u = 0; u < units_.size(); ++u) {
      const Unit& U = units_[u];
      if (tiled(U)) {
        const idx_t s = U.root;
        for (idx_t I = 0; I < G_.ntiles(s); ++I) {
          const idx_t b0 = G_.bound(s, I), b1 = G_.bound(s, I + 1);
          SolveHandle h{I < G_.npanel_tiles[s] ? SolveHandleKind::rows : SolveHandleKind::segment,
                        M_.block_owner[G_.tile(s, I, I)], s, b0, b1 - b0};
          if (h.kind == SolveHandleKind::rows) h.row0 = Sy_.super_start[s] + b0;
          seg_[seg_ptr_[s] + I] = add_handle(h);
        }
        continue;
      }
      SolveHandle r{SolveHandleKind::rows, U.rank, U.root, -1, 0};
      r.row0 = Sy_.super_start[U.first];
      r.rows = Sy_.super_start[U.root + 1] - r.row0;
      rows_of_[u] = add_handle(r);
      if (needs_front_vector(U))
        front_vec_[U.root] = add_handle({SolveHandleKind::front, U.rank, U.root, 0, m(U.root)});
    }
  }

  bool sends_update(const Unit& U) const { return parent(U.root) >= 0 && m(U.root) > k(U.root); }
  bool has_outer_children(const Unit& U) const {
    for (idx_t s = U.first; s <= U.root; ++s)
      for (idx_t q = P_.child_ptr[s]; q < P_.child_ptr[s + 1]; ++q)
        if (P_.child_list[q] < U.first) return true;
    return false;
  }
  bool needs_front_vector(const Unit& U) const { return sends_update(U) || has_outer_children(U); }

  /// The handle holding row `row` (0-based in front s's m rows) of front s's vector.
  idx_t piece(idx_t s, idx_t row) const {
    if (G_.mode[s] != FrontMode::tiled) return front_vec_[s];
    const idx_t* b = &G_.bounds[G_.bounds_ptr[s]];
    const idx_t I = static_cast<idx_t>(std::upper_bound(b, b + G_.ntiles(s) + 1, row) - b) - 1;
    return seg_[seg_ptr_[s] + I];
  }

  /// The pieces of child c's update (its CB rows) that land in rows [lo, hi)
  /// of its parent's front.
  void child_pieces(idx_t c, idx_t lo, idx_t hi, std::set<idx_t>& out) const {
    for (idx_t i = 0; i < m(c) - k(c); ++i) {
      const idx_t pos = P_.rel[P_.rel_ptr[c] + i];
      if (pos >= lo && pos < hi) out.insert(piece(c, k(c) + i));
    }
  }

  /// The pieces of front s's parent that hold s's CB rows [r0, r1) (rows of s).
  void parent_pieces(idx_t s, idx_t r0, idx_t r1, std::set<idx_t>& out) const {
    const idx_t p = parent(s);
    for (idx_t r = std::max(r0, k(s)); r < r1; ++r) out.insert(piece(p, P_.rel[P_.rel_ptr[s] + r - k(s)]));
  }

  SolveTask& task(SolveTaskKind kind, idx_t front, int rank) {
    SolveTask t;
    t.kind = kind;
    t.front = front;
    t.rank = rank;
    t.acc_begin = t.acc_end = static_cast<idx_t>(S_.accesses.size());
    S_.tasks.push_back(t);
    return S_.tasks.back();
  }
  void access(idx_t h, AccessMode mode) {
    S_.accesses.push_back({h, mode});
    S_.tasks.back().acc_end = static_cast<idx_t>(S_.accesses.size());
  }
  void access_all(const std::set<idx_t>& hs) {
    for (idx_t h : hs) access(h, AccessMode::R);
  }
  double unit_flops(const Unit& U) const {
    double f = 0;
    for (idx_t s = U.first; s <= U.root; ++s) f += 2.0 * static_cast<double>(k(s)) * static_cast<double>(m(s));
    return f;
  }
  int owner(idx_t s, idx_t I, idx_t J) const { return M_.block_owner[G_.tile(s, I, J)]; }
  double dim(idx_t s, idx_t I) const { return static_cast<double>(G_.bound(s, I + 1) - G_.bound(s, I)); }

  void forward(const Unit& U) {
    if (!tiled(U)) {
      SolveTask& t = task(SolveTaskKind::fwd_unit, U.root, U.rank);
      t.first_front = U.first;
      t.flops = unit_flops(U);
      access(factor_handle(U.panel), AccessMode::R);
      access(rows_of_[unit_of_[U.root]], AccessMode::RW);
      if (sends_update(U)) access(front_vec_[U.root], AccessMode::W);
      std::set<idx_t> in;
      for (idx_t s = U.first; s <= U.root; ++s)
        for (idx_t q = P_.child_ptr[s]; q < P_.child_ptr[s + 1]; ++q)
          if (P_.child_list[q] < U.first) child_pieces(P_.child_list[q], 0, m(s), in);
      access_all(in);
      return;
    }
    const idx_t s = U.root, nt = G_.ntiles(s), kt = G_.npanel_tiles[s];
    for (idx_t I = 0; I < nt; ++I) {
      const idx_t h = seg_[seg_ptr_[s] + I];
      SolveTask& t = task(SolveTaskKind::fwd_init, s, S_.handles[h].owner);
      t.i = static_cast<int>(I);
      access(h, I < kt ? AccessMode::RW : AccessMode::W);
      std::set<idx_t> in;
      for (idx_t q = P_.child_ptr[s]; q < P_.child_ptr[s + 1]; ++q)
        child_pieces(P_.child_list[q], G_.bound(s, I), G_.bound(s, I + 1), in);
      access_all(in);
    }
    for (idx_t J = 0; J < kt; ++J) {
      SolveTask& t = task(SolveTaskKind::fwd_trsm, s, owner(s, J, J));
      t.i = t.j = static_cast<int>(J);
      t.flops = dim(s, J) * dim(s, J);
      access(factor_handle(G_.tile(s, J, J)), AccessMode::R);
      access(seg_[seg_ptr_[s] + J], AccessMode::RW);
      for (idx_t I = J + 1; I < nt; ++I) {
        SolveTask& g = task(SolveTaskKind::fwd_gemm, s, owner(s, I, J));
        g.i = static_cast<int>(I), g.j = static_cast<int>(J);
        g.flops = 2.0 * dim(s, I) * dim(s, J);
        access(factor_handle(G_.tile(s, I, J)), AccessMode::R);
        access(seg_[seg_ptr_[s] + J], AccessMode::R);
        access(seg_[seg_ptr_[s] + I], AccessMode::RW);
      }
    }
  }

  void backward(const Unit& U) {
    if (!tiled(U)) {
      SolveTask& t = task(SolveTaskKind::bwd_unit, U.root, U.rank);
      t.first_front = U.first;
      t.flops = unit_flops(U);
      access(factor_handle(U.panel), AccessMode::R);
      access(rows_of_[unit_of_[U.root]], AccessMode::RW);
      if (has_outer_children(U)) access(front_vec_[U.root], AccessMode::W);
      std::set<idx_t> in;
      if (parent(U.root) >= 0) parent_pieces(U.root, 0, m(U.root), in);
      access_all(in);
      return;
    }
    const idx_t s = U.root, nt = G_.ntiles(s), kt = G_.npanel_tiles[s];
    for (idx_t I = kt; I < nt; ++I) {
      const idx_t h = seg_[seg_ptr_[s] + I];
      SolveTask& t = task(SolveTaskKind::bwd_init, s, S_.handles[h].owner);
      t.i = static_cast<int>(I);
      access(h, AccessMode::W);
      std::set<idx_t> in;
      parent_pieces(s, G_.bound(s, I), G_.bound(s, I + 1), in);
      access_all(in);
    }
    for (idx_t J = kt; J-- > 0;) {
      for (idx_t I = nt; --I > J;) {
        SolveTask& g = task(SolveTaskKind::bwd_gemm, s, owner(s, I, J));
        g.i = static_cast<int>(I), g.j = static_cast<int>(J);
        g.flops = 2.0 * dim(s, I) * dim(s, J);
        access(factor_handle(G_.tile(s, I, J)), AccessMode::R);
        access(seg_[seg_ptr_[s] + I], AccessMode::R);
        access(seg_[seg_ptr_[s] + J], AccessMode::RW);
      }
      SolveTask& t = task(SolveTaskKind::bwd_trsm, s, owner(s, J, J));
      t.i = t.j = static_cast<int>(J);
      t.flops = dim(s, J) * dim(s, J);
      access(factor_handle(G_.tile(s, J, J)), AccessMode::R);
      access(seg_[seg_ptr_[s] + J], AccessMode::RW);
    }
  }

  /// row_owner, local_count, local_index from the rows handles.
  Status local_layout() {
    S_.row_owner.assign(P_.n, -1);
    for (const SolveHandle& h : S_.handles)
      if (h.kind == SolveHandleKind::rows)
        for (idx_t r = h.row0; r < h.row0 + h.rows; ++r) {
          if (S_.row_owner[r] >= 0)
            return Status::error(StatusCode::invalid_argument, "solve graph: row " + std::to_string(r) + " owned twice");
          S_.row_owner[r] = h.owner;
        }
    S_.local_count.assign(S_.nranks, 0);
    S_.local_index.assign(P_.n, 0);
    for (idx_t r = 0; r < P_.n; ++r) {
      if (S_.row_owner[r] < 0)
        return Status::error(StatusCode::invalid_argument, "solve graph: row " + std::to_string(r) + " owned by no rank");
      S_.local_index[r] = S_.local_count[S_.row_owner[r]]++;
    }
    return Status::success();
  }

  const TaskGraph& G_;
  const RankMapping& M_;
  const FrontPlan& P_;
  const SymbolicFactor& Sy_;
  SolveGraph& S_;
  std::vector<Unit> units_;
  std::vector<idx_t> unit_of_;          // per front
  std::vector<idx_t> rows_of_;          // per unit (non-tiled): its rows handle
  std::vector<idx_t> front_vec_;        // per front: front vector handle or -1
  std::vector<idx_t> seg_ptr_, seg_;    // tiled fronts: segment handles
  std::vector<idx_t> factor_of_;        // per block: factor handle or -1
};

}  // namespace

Status build_solve_graph(const TaskGraph& G, const RankMapping& M, SolveGraph& out) {
  if (!G.plan || M.nranks < 1 || M.block_owner.size() != G.blocks.size() || M.task_rank.size() != G.tasks.size())
    return Status::error(StatusCode::invalid_argument, "solve graph: the mapping is not one of this graph");
  SolveGraph S;
  if (Status st = Builder(G, M, S).build(); !st.ok()) return st;
  out = std::move(S);
  return Status::success();
}

SolveVolume solve_communication(const SolveGraph& S, idx_t nrhs) {
  SolveVolume v;
  v.sent.assign(S.nranks, 0.0);
  v.recv.assign(S.nranks, 0.0);
  const idx_t nh = static_cast<idx_t>(S.handles.size());
  std::vector<double> bytes(nh);
  std::vector<std::set<int>> holders(nh);
  for (idx_t h = 0; h < nh; ++h) {
    const SolveHandle& x = S.handles[h];
    bytes[h] = x.kind == SolveHandleKind::factor ? static_cast<double>(S.graph->blocks[x.block].bytes())
                                                 : static_cast<double>(x.rows * nrhs) * sizeof(double);
    holders[h].insert(x.owner);
  }
  auto move = [&](idx_t h, int from, int to) {
    v.sent[from] += bytes[h];
    v.recv[to] += bytes[h];
    if (S.handles[h].kind == SolveHandleKind::factor) v.factor_bytes += bytes[h];
  };
  for (const SolveTask& t : S.tasks) {
    for (idx_t a = t.acc_begin; a < t.acc_end; ++a) {
      const SolveAccess& x = S.accesses[a];
      if (x.mode != AccessMode::W && holders[x.handle].insert(t.rank).second)
        move(x.handle, S.handles[x.handle].owner, t.rank);
    }
    for (idx_t a = t.acc_begin; a < t.acc_end; ++a) {
      const SolveAccess& x = S.accesses[a];
      if (x.mode == AccessMode::R) continue;
      const int o = S.handles[x.handle].owner;
      holders[x.handle] = {o};
      if (t.rank != o) move(x.handle, t.rank, o);
    }
  }
  for (double s : v.sent) v.total += s;
  return v;
}

}  // namespace starfront
