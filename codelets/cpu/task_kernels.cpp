#include "cpu/task_kernels.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <limits>
#include <memory>
#include <vector>

#include "cpu/blas.hpp"
#include "plan/cb_slots.hpp"

namespace starfront {

void FactorContext::record(const FrontResult& r) {
  std::lock_guard<std::mutex> lock(mutex);
  if (r.state == FrontResult::State::failed) {
    if (fail_column < 0 || r.failed_column < fail_column) {
      fail_column = r.failed_column;
      fail_pivot = r.pivot;
    }
    failed = true;
  } else if (r.state == FrontResult::State::done) {
    min_pivot_ratio = std::min(min_pivot_ratio, r.min_pivot_ratio);
  }
}

void FactorContext::record_device_error(const std::string& message) {
  std::lock_guard<std::mutex> lock(mutex);
  if (device_error.empty()) device_error = message;
  failed = true;
}

FrontResult potrf_tile_cpu(const FrontPlan& P, idx_t first, const double* values, double* D, idx_t ld,
                           idx_t n, double pivot_tol) {
  FrontResult r;
  const lapack_int info = LAPACKE_dpotrf_work(LAPACK_COL_MAJOR, 'L', static_cast<lapack_int>(n), D,
                                              static_cast<lapack_int>(ld));
  idx_t bad = -1;
  if (info > 0) {
    bad = info - 1;
    r.pivot = D[bad * (ld + 1)];
  } else {
    bad = check_pivots(P, first, values, D, ld, n, pivot_tol, r);
  }
  if (bad >= 0) {
    r.state = FrontResult::State::failed;
    r.failed_column = first + bad;
  } else {
    r.state = FrontResult::State::done;
  }
  return r;
}

namespace {

int to_int(idx_t x) { return static_cast<int>(x); }

/// The children's CB pointers of one front (per thread, reused).
std::vector<const double*>& thread_local_child_cb() {
  thread_local std::vector<const double*> v;
  return v;
}

const Block& block_of(const TaskGraph& G, const Task& t, idx_t a) {
  return G.blocks[G.accesses[t.acc_begin + a].block];
}

/// One non-tiled front with the factorisation's method (Cholesky or LDLᵀ).
FrontResult factor_one_front(const FrontPlan& P, idx_t s, FactorContext& ctx, double* Ls, double* cb,
                             const double* const* child_cb) {
  if (ctx.ldlt.active) return factor_front_ldlt_cpu(P, s, ctx.values, Ls, cb, child_cb, ctx.ldlt);
  return factor_front_cpu(P, s, ctx.values, Ls, cb, child_cb, ctx.pivot_tol);
}

/// Per thread (each StarPU CPU worker, the sequential executor's thread): the
/// workspace in which subtree tasks keep their internal contribution blocks,
/// kept from task to task and from one factorisation to the next, so that a
/// CB costs neither an allocation nor first-touch page faults (with many
/// workers, page faults serialise on the process's memory map). Grown to
/// the largest layout seen, never shrunk; freed when the thread ends.
struct SubtreeWorkspace {
  std::unique_ptr<double[]> data;
  std::size_t capacity = 0;         ///< doubles
  std::vector<std::size_t> offset;  ///< per front of the task: where its CB lives
  double* reserve(std::size_t n) {
    if (n > capacity) {
      data.reset(new double[n]);  // uninitialised: every CB's lower triangle is written by its front
      capacity = n;
    }
    return data.get();
  }
};

/// A sequential multifrontal pass over the fronts [first, root] (children
/// before parents; Liu, "The multifrontal method for sparse matrix solution:
/// theory and practice", SIAM Review 1992). The internal CBs live in the
/// thread's workspace at the offsets of subtree_cb_layout (plan/cb_slots.hpp):
/// each is written once by its front and read in place by its parent (unlike
/// a compacted stack, no CB is ever copied). The root's CB goes to the task's
/// output slot.
void subtree(const TaskGraph& G, const Task& t, double* const* ptrs, FactorContext& ctx) {
  const FrontPlan& P = *G.plan;
  const idx_t first = t.first_front, root = t.front;
  double* base = ptrs[0] - P.l_offset[first];  // so that base + l_offset[s] is L_s
  thread_local SubtreeWorkspace ws;
  const std::size_t size = subtree_cb_layout(P, first, root, ws.offset);
  double* work = ws.reserve(std::max<std::size_t>(size, 1));
  std::vector<const double*>& child_cb = thread_local_child_cb();
  // The fronts' outcomes go to the shared context once per task (a mutex),
  // not once per front.
  FrontResult done;
  done.state = FrontResult::State::done;
  done.min_pivot_ratio = std::numeric_limits<double>::infinity();
  for (idx_t s = first; s <= root; ++s) {
    child_cb.clear();
    for (idx_t q = P.child_ptr[s]; q < P.child_ptr[s + 1]; ++q)
      child_cb.push_back(work + ws.offset[P.child_list[q] - first]);
    double* mycb = nullptr;
    if (s == root)
      mycb = P.cb_order(s) > 0 ? ptrs[1] : nullptr;
    else
      mycb = work + ws.offset[s - first];
    const FrontResult r = factor_one_front(P, s, ctx, base + P.l_offset[s], mycb, child_cb.data());
    if (r.state != FrontResult::State::done) {
      if (s > first) ctx.record(done);
      ctx.record(r);
      return;
    }
    done.min_pivot_ratio = std::min(done.min_pivot_ratio, r.min_pivot_ratio);
  }
  ctx.record(done);
}

/// One front: buffers panel, [CB], children's CBs.
void front(const TaskGraph& G, const Task& t, double* const* ptrs, FactorContext& ctx) {
  const FrontPlan& P = *G.plan;
  const idx_t s = t.front;
  idx_t a = 1;
  double* cb = P.cb_order(s) > 0 ? ptrs[a++] : nullptr;
  std::vector<const double*> child_cb(ptrs + a, ptrs + (t.acc_end - t.acc_begin));
  ctx.record(factor_one_front(P, s, ctx, ptrs[0], cb, child_cb.data()));
}

/// Tile index of front position pos in tiled front s.
idx_t tile_of(const TaskGraph& G, idx_t s, idx_t pos) {
  const idx_t* b = &G.bounds[G.bounds_ptr[s]];
  return static_cast<idx_t>(std::upper_bound(b, b + G.ntiles(s) + 1, pos) - b) - 1;
}

/// Zeroes tiles (I, J), I >= J, and adds A's entries of block column J. The
/// tiles are the task's first ntiles - J accesses; further accesses (the
/// children's contribution blocks, read only for ordering) are not touched.
void assemble(const TaskGraph& G, const Task& t, double* const* ptrs, FactorContext& ctx) {
  const FrontPlan& P = *G.plan;
  const idx_t s = t.front, J = t.j, m = P.front_order(s);
  for (idx_t a = 0; a < G.ntiles(s) - J; ++a) {
    const Block& b = block_of(G, t, a);
    for (idx_t c = 0; c < b.cols; ++c) std::fill(ptrs[a] + c * b.ld, ptrs[a] + c * b.ld + b.rows, 0.0);
  }
  const idx_t c0 = G.bound(s, J), c1 = G.bound(s, J + 1);
  for (idx_t q = P.a_ptr[s]; q < P.a_ptr[s + 1]; ++q) {
    const idx_t pos = P.a_dst[q] % m, col = P.a_dst[q] / m;
    if (col < c0 || col >= c1) continue;
    const idx_t I = tile_of(G, s, pos);
    const Block& b = block_of(G, t, I - J);
    ptrs[I - J][(pos - b.row0) + (col - c0) * b.ld] += ctx.values[P.a_src[q]];
  }
}

/// Adds the part of child c's CB that falls in block column J of tiled front s.
void extend_add(const TaskGraph& G, const Task& t, double* const* ptrs) {
  const FrontPlan& P = *G.plan;
  const idx_t s = t.front, c = t.child, J = t.j;
  const idx_t kc = P.ncols(c);
  const idx_t* rel = &P.rel[P.rel_ptr[c]];
  const idx_t ncb = G.cb_ptr[c + 1] - G.cb_ptr[c];
  std::vector<double*> dst(G.ntiles(s), nullptr);
  std::vector<idx_t> ld(G.ntiles(s), 0);
  for (idx_t a = ncb; a < t.acc_end - t.acc_begin; ++a) {
    const Block& b = block_of(G, t, a);
    const idx_t I = tile_of(G, s, b.row0);
    dst[I] = ptrs[a];
    ld[I] = b.ld;
  }
  const idx_t c0 = G.bound(s, J), c1 = G.bound(s, J + 1);
  for (idx_t a = 0; a < ncb; ++a) {
    const Block& b = block_of(G, t, a);
    // A child CB block covers CB indices [row0-kc, ...) x [col0-kc, ...): a
    // whole CB has row0 = col0 = 0 in CB numbering; a tile carries front offsets.
    const idx_t r0 = b.kind == BlockKind::cb ? 0 : b.row0 - kc;
    const idx_t q0 = b.kind == BlockKind::cb ? 0 : b.col0 - kc;
    for (idx_t jj = 0; jj < b.cols; ++jj) {
      const idx_t pj = rel[q0 + jj];
      if (pj < c0 || pj >= c1) continue;
      const double* src = ptrs[a] + jj * b.ld;
      for (idx_t ii = b.lower ? jj : 0; ii < b.rows; ++ii) {
        const idx_t pi = rel[r0 + ii];
        const idx_t I = tile_of(G, s, pi);
        dst[I][(pi - G.bound(s, I)) + (pj - c0) * ld[I]] += src[ii];
      }
    }
  }
}

void potrf(const TaskGraph& G, const Task& t, double* const* ptrs, FactorContext& ctx) {
  const FrontPlan& P = *G.plan;
  const Block& b = block_of(G, t, 0);
  const idx_t first = P.symbolic->super_start[t.front] + b.col0;
  ctx.record(potrf_tile_cpu(P, first, ctx.values, ptrs[0], b.ld, b.rows, ctx.pivot_tol));
}

void trsm(const TaskGraph& G, const Task& t, double* const* ptrs) {
  const Block& d = block_of(G, t, 0);
  const Block& x = block_of(G, t, 1);
  cblas_dtrsm(CblasColMajor, CblasRight, CblasLower, CblasTrans, CblasNonUnit, to_int(x.rows),
              to_int(x.cols), 1.0, ptrs[0], to_int(d.ld), ptrs[1], to_int(x.ld));
}

void syrk(const TaskGraph& G, const Task& t, double* const* ptrs) {
  const Block& a = block_of(G, t, 0);
  const Block& c = block_of(G, t, 1);
  cblas_dsyrk(CblasColMajor, CblasLower, CblasNoTrans, to_int(c.rows), to_int(a.cols), -1.0, ptrs[0],
              to_int(a.ld), 1.0, ptrs[1], to_int(c.ld));
}

void gemm(const TaskGraph& G, const Task& t, double* const* ptrs) {
  const Block& a = block_of(G, t, 0);
  const Block& b = block_of(G, t, 1);
  const Block& c = block_of(G, t, 2);
  cblas_dgemm(CblasColMajor, CblasNoTrans, CblasTrans, to_int(c.rows), to_int(c.cols), to_int(a.cols),
              -1.0, ptrs[0], to_int(a.ld), ptrs[1], to_int(b.ld), 1.0, ptrs[2], to_int(c.ld));
}

void run_kernel(const TaskGraph& G, idx_t ti, double* const* ptrs, FactorContext& ctx);

}  // namespace

void run_task_cpu(const TaskGraph& G, idx_t ti, double* const* ptrs, FactorContext& ctx) {
  if (ctx.failed || ctx.cancelled) return;  // failed or cancelled: nothing left is useful
  const auto t0 = std::chrono::steady_clock::now();
  run_kernel(G, ti, ptrs, ctx);
  const double dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::lock_guard<std::mutex> lock(ctx.mutex);
  ctx.task_seconds += dt;
}

namespace {

void run_kernel(const TaskGraph& G, idx_t ti, double* const* ptrs, FactorContext& ctx) {
  const Task& t = G.tasks[ti];
  if (ctx.ldlt.active && t.kind != TaskKind::subtree && t.kind != TaskKind::front) {
    // Tiled LDLᵀ is not implemented: the graph of an LDLᵀ factorisation must
    // have no tiled front (GraphOptions::tile = false).
    std::lock_guard<std::mutex> lock(ctx.mutex);
    ctx.ldlt.unsupported_task = true;
    ctx.failed = true;
    return;
  }
  switch (t.kind) {
    case TaskKind::subtree: subtree(G, t, ptrs, ctx); break;
    case TaskKind::front: front(G, t, ptrs, ctx); break;
    case TaskKind::assemble: assemble(G, t, ptrs, ctx); break;
    case TaskKind::extend_add: extend_add(G, t, ptrs); break;
    case TaskKind::potrf: potrf(G, t, ptrs, ctx); break;
    case TaskKind::trsm: trsm(G, t, ptrs); break;
    case TaskKind::syrk: syrk(G, t, ptrs); break;
    case TaskKind::gemm: gemm(G, t, ptrs); break;
  }
}

}  // namespace

}  // namespace starfront
