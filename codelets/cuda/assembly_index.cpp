#include "cuda/assembly_index.hpp"

#include <algorithm>
#include <limits>
#include <string>

namespace starfront {
namespace {

const Block& block_of(const TaskGraph& G, const Task& t, idx_t a) {
  return G.blocks[G.accesses[t.acc_begin + a].block];
}

/// Tile index of front position pos in tiled front s (as the CPU kernels).
idx_t tile_of(const TaskGraph& G, idx_t s, idx_t pos) {
  const idx_t* b = &G.bounds[G.bounds_ptr[s]];
  return static_cast<idx_t>(std::upper_bound(b, b + G.ntiles(s) + 1, pos) - b) - 1;
}

bool fits32(idx_t x) { return x >= 0 && x <= std::numeric_limits<std::int32_t>::max(); }

/// FNV-1a-style mixing of 64-bit words (splitmix finaliser per word).
struct Hasher {
  std::uint64_t h = 1469598103934665603ull;
  void add(std::uint64_t x) {
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    x ^= x >> 31;
    h = (h ^ x) * 1099511628211ull;
  }
  void add(idx_t x) { add(static_cast<std::uint64_t>(x)); }
  void add_range(const idx_t* p, idx_t n) {
    add(n);
    for (idx_t i = 0; i < n; ++i) add(p[i]);
  }
};

}  // namespace

std::uint64_t gpu_assembly_fingerprint(const TaskGraph& G) {
  Hasher H;
  const FrontPlan& P = *G.plan;
  H.add(static_cast<idx_t>(G.tasks.size()));
  H.add(static_cast<idx_t>(G.blocks.size()));
  for (const Task& t : G.tasks) {
    if (t.kind != TaskKind::assemble && t.kind != TaskKind::extend_add) continue;
    H.add(static_cast<idx_t>(t.kind));
    H.add(t.front);
    H.add(t.child);
    H.add(static_cast<idx_t>(t.j));
    H.add(t.acc_end - t.acc_begin);
    for (idx_t a = t.acc_begin; a < t.acc_end; ++a) {
      const Block& b = G.blocks[G.accesses[a].block];
      H.add(G.accesses[a].block);
      H.add(static_cast<idx_t>(b.kind));
      H.add(b.row0);
      H.add(b.col0);
      H.add(b.rows);
      H.add(b.cols);
      H.add(b.ld);
      H.add(static_cast<idx_t>(b.lower));
    }
    const idx_t s = t.front;
    if (t.kind == TaskKind::assemble) {
      if (t.j == 0) {  // once per tiled front: its bounds and A's entries
        H.add(P.front_order(s));
        H.add_range(&G.bounds[G.bounds_ptr[s]], G.ntiles(s) + 1);
        H.add_range(P.a_src.data() + P.a_ptr[s], P.a_ptr[s + 1] - P.a_ptr[s]);
        H.add_range(P.a_dst.data() + P.a_ptr[s], P.a_ptr[s + 1] - P.a_ptr[s]);
      }
    } else {
      H.add(P.ncols(t.child));
      H.add_range(P.rel.data() + P.rel_ptr[t.child], P.rel_ptr[t.child + 1] - P.rel_ptr[t.child]);
    }
  }
  return H.h;
}

Status build_gpu_assembly_index(const TaskGraph& G, GpuAssemblyIndex& out) {
  const FrontPlan& P = *G.plan;
  GpuAssemblyIndex X;
  X.task.assign(G.tasks.size(), GpuTaskIndex{});
  std::vector<idx_t> rowmap_off(static_cast<std::size_t>(P.nsuper), -1);
  auto too_large = [](const std::string& what) {
    return Status::error(StatusCode::invalid_argument, "GPU assembly index: " + what + " exceeds 32-bit range");
  };
  for (std::size_t ti = 0; ti < G.tasks.size(); ++ti) {
    const Task& t = G.tasks[ti];
    if (t.kind != TaskKind::assemble && t.kind != TaskKind::extend_add) continue;
    X.empty = false;
    const idx_t s = t.front, J = t.j, nt = G.ntiles(s);
    const idx_t c0 = G.bound(s, J), c1 = G.bound(s, J + 1);
    if (!fits32(nt) || !fits32(P.front_order(s))) return too_large("front order");
    GpuTaskIndex& x = X.task[ti];
    if (t.kind == TaskKind::assemble) {
      const idx_t m = P.front_order(s), n = nt - J;
      std::vector<idx_t> count(static_cast<std::size_t>(n) + 1, 0);
      for (idx_t q = P.a_ptr[s]; q < P.a_ptr[s + 1]; ++q) {
        const idx_t col = P.a_dst[q] / m;
        if (col >= c0 && col < c1) ++count[static_cast<std::size_t>(tile_of(G, s, P.a_dst[q] % m) - J) + 1];
      }
      x.begin = static_cast<idx_t>(X.entries.size());
      x.aux = static_cast<idx_t>(X.aux.size());
      for (idx_t a = 0; a < n; ++a) count[static_cast<std::size_t>(a) + 1] += count[static_cast<std::size_t>(a)];
      for (idx_t a = 0; a <= n; ++a) X.aux.push_back(x.begin + count[static_cast<std::size_t>(a)]);
      x.end = x.begin + count[static_cast<std::size_t>(n)];
      X.entries.resize(static_cast<std::size_t>(x.end));
      for (idx_t q = P.a_ptr[s]; q < P.a_ptr[s + 1]; ++q) {  // stable counting sort by tile
        const idx_t pos = P.a_dst[q] % m, col = P.a_dst[q] / m;
        if (col < c0 || col >= c1) continue;
        const idx_t a = tile_of(G, s, pos) - J;
        const Block& b = block_of(G, t, a);
        GpuAssembleEntry& e = X.entries[static_cast<std::size_t>(x.begin + count[static_cast<std::size_t>(a)]++)];
        e = GpuAssembleEntry{P.a_src[q], static_cast<std::int32_t>(a), static_cast<std::int32_t>(pos - b.row0),
                             static_cast<std::int32_t>(col - c0), 0};
      }
    } else {
      const idx_t c = t.child, kc = P.ncols(c), mc = P.cb_order(c);
      const idx_t* rel = &P.rel[P.rel_ptr[c]];
      if (rowmap_off[static_cast<std::size_t>(c)] < 0) {
        rowmap_off[static_cast<std::size_t>(c)] = static_cast<idx_t>(X.rowmap.size());
        for (idx_t r = 0; r < mc; ++r) {
          const idx_t I = tile_of(G, s, rel[r]);
          X.rowmap.push_back(
              GpuRowTarget{static_cast<std::int32_t>(I), static_cast<std::int32_t>(rel[r] - G.bound(s, I))});
        }
      }
      const idx_t ncb = G.cb_ptr[c + 1] - G.cb_ptr[c];
      x.begin = static_cast<idx_t>(X.columns.size());
      std::vector<idx_t> srcs, col_ptr;
      for (idx_t a = 0; a < ncb; ++a) {
        const Block& b = block_of(G, t, a);
        if (!fits32(b.rows) || !fits32(b.cols)) return too_large("contribution block");
        const idx_t r0 = b.kind == BlockKind::cb ? 0 : b.row0 - kc;
        const idx_t q0 = b.kind == BlockKind::cb ? 0 : b.col0 - kc;
        const idx_t before = static_cast<idx_t>(X.columns.size());
        for (idx_t jj = 0; jj < b.cols; ++jj) {
          const idx_t pj = rel[q0 + jj];
          if (pj < c0 || pj >= c1) continue;
          const idx_t ii0 = b.lower ? jj : 0;
          if (ii0 >= b.rows) continue;
          X.columns.push_back(GpuExtendColumn{rowmap_off[static_cast<std::size_t>(c)] + r0,
                                              static_cast<std::int32_t>(srcs.size()),
                                              static_cast<std::int32_t>(jj), static_cast<std::int32_t>(pj - c0),
                                              static_cast<std::int32_t>(ii0), static_cast<std::int32_t>(b.rows), 0});
        }
        if (static_cast<idx_t>(X.columns.size()) > before) {
          srcs.push_back(a);
          col_ptr.push_back(before);
        }
      }
      x.end = static_cast<idx_t>(X.columns.size());
      col_ptr.push_back(x.end);
      x.nsrc = static_cast<idx_t>(srcs.size());
      x.aux = static_cast<idx_t>(X.aux.size());
      X.aux.insert(X.aux.end(), srcs.begin(), srcs.end());
      X.aux.insert(X.aux.end(), col_ptr.begin(), col_ptr.end());
    }
  }
  if (X.entries.empty()) X.entries.push_back(GpuAssembleEntry{0, 0, 0, 0, 0});
  if (X.columns.empty()) X.columns.push_back(GpuExtendColumn{0, 0, 0, 0, 0, 0, 0});
  if (X.rowmap.empty()) X.rowmap.push_back(GpuRowTarget{0, 0});
  X.fingerprint = gpu_assembly_fingerprint(G);
  out = std::move(X);
  return Status::success();
}

void gpu_assemble_emulated(const TaskGraph& G, const GpuAssemblyIndex& X, idx_t task, double* const* ptrs,
                           const idx_t* ld, const double* values, int window) {
  const Task& t = G.tasks[task];
  for_each_assemble_window(G, X, task, window, [&](idx_t a0, idx_t a1, idx_t e0, idx_t e1) {
    for (idx_t a = a0; a < a1; ++a) {  // the zeroing kernel
      const Block& b = block_of(G, t, a);
      for (idx_t c = 0; c < b.cols; ++c)
        for (idx_t r = 0; r < b.rows; ++r) ptrs[a][r + c * ld[a]] = 0.0;
    }
    for (idx_t e = e0; e < e1; ++e) {  // the scatter kernel (entries of tiles [a0, a1) only)
      const GpuAssembleEntry& x = X.entries[static_cast<std::size_t>(e)];
      ptrs[x.tile][x.row + x.col * ld[x.tile]] += values[x.src];
    }
  });
}

void gpu_extend_add_emulated(const TaskGraph& G, const GpuAssemblyIndex& X, idx_t task, double* const* ptrs,
                             const idx_t* ld, int window) {
  const Task& t = G.tasks[task];
  const GpuTaskIndex& ti = X.task[task];
  const idx_t s = t.front, ncb = G.cb_ptr[t.child + 1] - G.cb_ptr[t.child];
  std::vector<double*> dst(static_cast<std::size_t>(G.ntiles(s)), nullptr);
  std::vector<idx_t> dld(static_cast<std::size_t>(G.ntiles(s)), 0);
  for (idx_t a = ncb; a < t.acc_end - t.acc_begin; ++a) {
    const idx_t I = tile_of(G, s, block_of(G, t, a).row0);
    dst[static_cast<std::size_t>(I)] = ptrs[a];
    dld[static_cast<std::size_t>(I)] = ld[a];
  }
  for_each_extend_add_window(G, X, task, window, [&](idx_t I0, idx_t I1, idx_t k0, idx_t, idx_t c0, idx_t c1) {
    for (idx_t q = c0; q < c1; ++q) {  // one GPU thread block per column
      const GpuExtendColumn& col = X.columns[static_cast<std::size_t>(q)];
      const idx_t a = X.aux[ti.aux + col.src];
      const double* src = ptrs[a] + col.jj * ld[a];
      (void)k0;
      for (idx_t ii = col.ii0; ii < col.rows; ++ii) {
        const GpuRowTarget& rt = X.rowmap[static_cast<std::size_t>(col.rowmap + ii)];
        if (rt.tile < I0 || rt.tile >= I1) continue;
        dst[static_cast<std::size_t>(rt.tile)][rt.row + col.cj * dld[static_cast<std::size_t>(rt.tile)]] += src[ii];
      }
    }
  });
}

}  // namespace starfront
