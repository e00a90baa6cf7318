#include "cpu/solve_kernels.hpp"

#include <algorithm>
#include <limits>

#include "cpu/blas.hpp"

namespace starfront {
namespace {
/// The m × nrhs front vector at w (leading dimension m) into out (ld).
void copy_front(const double* w, idx_t m, idx_t nrhs, double* out, idx_t ld) {
  for (idx_t c = 0; c < nrhs; ++c) std::copy(w + c * m, w + (c + 1) * m, out + c * ld);
}

/// Σ a[i] b[i] over i < len, in four interleaved partial sums (a fixed
/// order, so deterministic; it lets the additions overlap, which one
/// running sum does not).
inline double dot(const double* a, const double* b, idx_t len) {
  double t0 = 0.0, t1 = 0.0, t2 = 0.0, t3 = 0.0;
  idx_t i = 0;
  for (; i + 4 <= len; i += 4) {
    t0 += a[i] * b[i];
    t1 += a[i + 1] * b[i + 1];
    t2 += a[i + 2] * b[i + 2];
    t3 += a[i + 3] * b[i + 3];
  }
  for (; i < len; ++i) t0 += a[i] * b[i];
  return (t0 + t1) + (t2 + t3);
}

/// ws.stack holds at least `need` doubles (existing contents kept).
double* reserve(SolveScratch& ws, idx_t need) {
  if (static_cast<idx_t>(ws.stack.size()) < need) ws.stack.resize(static_cast<std::size_t>(need));
  return ws.stack.data();
}
}  // namespace

/// Right-hand sides the transposed small solve takes at a time.
constexpr idx_t kSolveMaxRhsBlock = 8;

void trsm_vector(const double* L, idx_t ldl, idx_t b, double* x, idx_t ld, idx_t nrhs, bool trans) {
  if (b == 0 || nrhs == 0) return;
  if (b * b * nrhs > 2 * kSolveLoopMaxWork) {
    cblas_dtrsm(CblasColMajor, CblasLeft, CblasLower, trans ? CblasTrans : CblasNoTrans, CblasNonUnit,
                static_cast<int>(b), static_cast<int>(nrhs), 1.0, L, static_cast<int>(ldl), x,
                static_cast<int>(ld));
    return;
  }
  // Loops over the right-hand sides innermost but one, so that a column of
  // L is read once for all of them; while these loops run (b² nrhs within
  // the limit above) every entry of x sees the same operations in the same
  // order whatever nrhs is.
  // x_j is scaled by r_j = 1 / l_jj (as LAPACK's dpotf2 scales a column by
  // the reciprocal of its pivot): the division does not depend on x, so it
  // leaves the serial chain x_j -> x_{j+1}, which keeps a multiply and a
  // multiply-subtract.
  // b <= 45 here (b² nrhs <= 2 kSolveLoopMaxWork): the reciprocals first, in
  // one loop whose divisions pipeline.
  static_assert(2 * kSolveLoopMaxWork < 64 * 64, "the reciprocals' array holds every loop-sized block");
  double r[64];
  for (idx_t j = 0; j < b; ++j) r[j] = 1.0 / L[j * ldl + j];
  if (!trans) {  // column sweep: x_j *= r_j, then x_{j+1:b} -= l_{j+1:b,j} x_j
    for (idx_t j = 0; j < b; ++j) {
      const double* lj = L + j * ldl;
      const double rj = r[j];
      for (idx_t c = 0; c < nrhs; ++c) {
        double* xc = x + c * ld;
        const double xj = xc[j] * rj;
        xc[j] = xj;
        for (idx_t i = j + 1; i < b; ++i) xc[i] -= lj[i] * xj;
      }
    }
  } else {  // row sweep from the last: x_j *= r_j, then x_{0:j} -= l_{j,0:j}ᵀ x_j
    // (row j of L, stride ldl: the block is small and in cache), so that the
    // serial chain is again a multiply and a multiply-subtract, not the sum
    // of a dot product.
    // With several right-hand sides each l_ji is loaded once for all of
    // them (the same operations on every entry, in the same order).
    if (nrhs == 1) {
      for (idx_t j = b; j-- > 0;) {
        const double* lrow = L + j;
        const double xj = x[j] * r[j];
        x[j] = xj;
        for (idx_t i = 0; i < j; ++i) x[i] -= lrow[i * ldl] * xj;
      }
      return;
    }
    double xj[kSolveMaxRhsBlock];
    for (idx_t c0 = 0; c0 < nrhs; c0 += kSolveMaxRhsBlock) {
      const idx_t nc = std::min(kSolveMaxRhsBlock, nrhs - c0);
      double* xb = x + c0 * ld;
      for (idx_t j = b; j-- > 0;) {
        const double* lrow = L + j;
        for (idx_t c = 0; c < nc; ++c) xj[c] = xb[j + c * ld] *= r[j];
        for (idx_t i = 0; i < j; ++i) {
          const double l = lrow[i * ldl];
          for (idx_t c = 0; c < nc; ++c) xb[i + c * ld] -= l * xj[c];
        }
      }
    }
  }
}

void gemm_vector(const double* L, idx_t ldl, idx_t rows, idx_t cols, const double* x, idx_t ldx, double* y,
                 idx_t ldy, idx_t nrhs, bool trans) {
  if (rows == 0 || cols == 0 || nrhs == 0) return;
  if (rows * cols * nrhs > kSolveLoopMaxWork) {
    if (!trans)
      cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(rows), static_cast<int>(nrhs),
                  static_cast<int>(cols), -1.0, L, static_cast<int>(ldl), x, static_cast<int>(ldx), 1.0, y,
                  static_cast<int>(ldy));
    else
      cblas_dgemm(CblasColMajor, CblasTrans, CblasNoTrans, static_cast<int>(cols), static_cast<int>(nrhs),
                  static_cast<int>(rows), -1.0, L, static_cast<int>(ldl), x, static_cast<int>(ldx), 1.0, y,
                  static_cast<int>(ldy));
    return;
  }
  for (idx_t j = 0; j < cols; ++j) {  // a column of L once for every right-hand side
    const double* lj = L + j * ldl;
    for (idx_t c = 0; c < nrhs; ++c) {
      const double* xc = x + c * ldx;
      double* yc = y + c * ldy;
      if (!trans) {  // y -= l_j x_j (an axpy)
        const double xj = xc[j];
        for (idx_t i = 0; i < rows; ++i) yc[i] -= lj[i] * xj;
      } else {  // y_j -= l_jᵀ x (a dot product)
        yc[j] -= dot(lj, xc, rows);
      }
    }
  }
}

void add_child_updates(const FrontPlan& P, idx_t s, idx_t r0, idx_t r1, double* seg, idx_t ld, idx_t nrhs,
                       const std::vector<VectorPiece>& children) {
  const SymbolicFactor& S = *P.symbolic;
  for (const VectorPiece& pc : children) {
    const idx_t c = pc.front;
    if (S.super_parent[c] != s) continue;
    const idx_t kc = P.ncols(c);
    const idx_t* rel = &P.rel[P.rel_ptr[c]];
    for (idx_t i = std::max(pc.r0, kc); i < pc.r0 + pc.rows; ++i) {
      const idx_t pos = rel[i - kc];
      if (pos < r0 || pos >= r1) continue;
      for (idx_t col = 0; col < nrhs; ++col) seg[pos - r0 + col * ld] += pc.x[i - pc.r0 + col * pc.ld];
    }
  }
}

void gather_from_parent(const FrontPlan& P, idx_t s, idx_t r0, idx_t r1, double* seg, idx_t ld, idx_t nrhs,
                        const std::vector<VectorPiece>& parent) {
  const idx_t p = P.symbolic->super_parent[s], ks = P.ncols(s);
  const idx_t* rel = &P.rel[P.rel_ptr[s]];
  for (idx_t r = r0; r < r1; ++r) {
    const idx_t pos = rel[r - ks];
    const VectorPiece* hit = nullptr;
    for (const VectorPiece& pc : parent)
      if (pc.front == p && pos >= pc.r0 && pos < pc.r0 + pc.rows) hit = &pc;
    for (idx_t col = 0; col < nrhs; ++col)  // a missing piece is the caller's error: NaN shows it
      seg[r - r0 + col * ld] =
          hit ? hit->x[pos - hit->r0 + col * hit->ld] : std::numeric_limits<double>::quiet_NaN();
  }
}

void forward_unit(const FrontPlan& P, idx_t first, idx_t root, const double* L, double* y, idx_t ldy,
                  idx_t nrhs, const std::vector<VectorPiece>& children, double* w_root, idx_t ldw,
                  SolveScratch* scratch) {
  SolveScratch local;
  SolveScratch& ws = scratch ? *scratch : local;
  const SymbolicFactor& S = *P.symbolic;
  const idx_t base = P.l_offset[first], row0 = S.super_start[first];
  ws.loc.resize(static_cast<std::size_t>(root - first + 1));
  ws.one.resize(1);
  idx_t top = 0;  // the stack holds the vectors of the fronts whose parent is still to come
  for (idx_t s = first; s <= root; ++s) {
    const idx_t m = P.front_order(s), k = P.ncols(s), f = S.super_start[s] - row0;
    idx_t lo = top;  // the unit's own children of s: the vectors at [lo, top)
    for (idx_t q = P.child_ptr[s]; q < P.child_ptr[s + 1]; ++q)
      if (P.child_list[q] >= first) lo = std::min(lo, ws.loc[P.child_list[q] - first]);
    double* stack = reserve(ws, top + m * nrhs);
    double* w = stack + top;
    for (idx_t c = 0; c < nrhs; ++c) {
      std::copy(y + f + c * ldy, y + f + k + c * ldy, w + c * m);
      std::fill(w + c * m + k, w + (c + 1) * m, 0.0);
    }
    for (idx_t q = P.child_ptr[s]; q < P.child_ptr[s + 1]; ++q) {
      const idx_t ch = P.child_list[q];
      if (ch < first) continue;  // outside the unit: among `children`
      ws.one[0] = {ch, 0, P.front_order(ch), stack + ws.loc[ch - first], P.front_order(ch)};
      add_child_updates(P, s, 0, m, w, m, nrhs, ws.one);
    }
    if (!children.empty()) add_child_updates(P, s, 0, m, w, m, nrhs, children);
    const double* Ls = L + (P.l_offset[s] - base);
    trsm_vector(Ls, m, k, w, m, nrhs, false);
    gemm_vector(Ls + k, m, m - k, k, w, m, w + k, m, nrhs, false);
    for (idx_t c = 0; c < nrhs; ++c) std::copy(w + c * m, w + k + c * m, y + f + c * ldy);
    if (lo < top) std::copy(w, w + m * nrhs, stack + lo);  // down over the consumed updates (std::copy may
                                                           // overlap when it moves towards the front)
    ws.loc[s - first] = lo;
    top = lo + m * nrhs;
  }
  if (w_root) copy_front(ws.stack.data() + ws.loc[root - first], P.front_order(root), nrhs, w_root, ldw);
}

void backward_unit(const FrontPlan& P, idx_t first, idx_t root, const double* L, double* y, idx_t ldy,
                   idx_t nrhs, const std::vector<VectorPiece>& parent, double* x_root, idx_t ldw,
                   SolveScratch* scratch) {
  SolveScratch local;
  SolveScratch& ws = scratch ? *scratch : local;
  const SymbolicFactor& S = *P.symbolic;
  const idx_t base = P.l_offset[first], row0 = S.super_start[first];
  ws.loc.resize(static_cast<std::size_t>(root - first + 1));
  ws.chain.clear();
  ws.one.resize(1);
  idx_t top = 0;  // the stack holds the vectors of the chain: ancestors of the front being solved
  for (idx_t s = root; s >= first; --s) {
    const idx_t m = P.front_order(s), k = P.ncols(s), f = S.super_start[s] - row0, p = S.super_parent[s];
    // Fronts above s in the chain that are not its parent are done (postorder:
    // every child of theirs has a larger index than s). A unit is a subtree
    // (every front but the root has its parent in it), so the root stays.
    while (!ws.chain.empty() && ws.chain.back() != p) {
      top = ws.loc[ws.chain.back() - first];
      ws.chain.pop_back();
    }
    double* stack = reserve(ws, top + m * nrhs);
    double* x = stack + top;
    for (idx_t c = 0; c < nrhs; ++c) std::copy(y + f + c * ldy, y + f + k + c * ldy, x + c * m);
    if (m > k) {
      if (p >= first && p <= root) {
        ws.one[0] = {p, 0, P.front_order(p), stack + ws.loc[p - first], P.front_order(p)};
        gather_from_parent(P, s, k, m, x + k, m, nrhs, ws.one);
      } else {
        gather_from_parent(P, s, k, m, x + k, m, nrhs, parent);
      }
    }
    const double* Ls = L + (P.l_offset[s] - base);
    gemm_vector(Ls + k, m, m - k, k, x + k, m, x, m, nrhs, true);
    trsm_vector(Ls, m, k, x, m, nrhs, true);
    for (idx_t c = 0; c < nrhs; ++c) std::copy(x + c * m, x + k + c * m, y + f + c * ldy);
    ws.loc[s - first] = top;
    ws.chain.push_back(s);
    top += m * nrhs;
  }
  if (x_root) copy_front(ws.stack.data() + ws.loc[root - first], P.front_order(root), nrhs, x_root, ldw);
}

namespace {
/// out = the vector pieces among accesses [from, to) of task t.
const std::vector<VectorPiece>& pieces(const SolveGraph& S, const SolveTask& t, idx_t from, idx_t to,
                                       double* const* ptr, const idx_t* ld, std::vector<VectorPiece>& out) {
  out.clear();
  for (idx_t a = from; a < to; ++a) {
    const SolveHandle& h = S.handles[S.accesses[t.acc_begin + a].handle];
    out.push_back({h.front, h.frow0, h.rows, ptr[a], ld[a]});
  }
  return out;
}
}  // namespace

void run_solve_task_cpu(const SolveGraph& S, idx_t task, idx_t nrhs, double* const* ptr, const idx_t* ld,
                        SolveScratch* scratch) {
  SolveScratch local;
  SolveScratch& ws = scratch ? *scratch : local;
  const SolveTask& t = S.tasks[task];
  const TaskGraph& G = *S.graph;
  const FrontPlan& P = *G.plan;
  const idx_t na = t.acc_end - t.acc_begin, s = t.front;
  auto dim = [&](int I) { return G.bound(s, I + 1) - G.bound(s, I); };
  switch (t.kind) {
    case SolveTaskKind::fwd_unit:
    case SolveTaskKind::bwd_unit: {
      // factor panel, own rows, [the root's front vector (W)], pieces.
      const bool out = na > 2 && S.accesses[t.acc_begin + 2].mode == AccessMode::W;
      const std::vector<VectorPiece>& in = pieces(S, t, out ? 3 : 2, na, ptr, ld, ws.pieces);
      if (t.kind == SolveTaskKind::fwd_unit)
        forward_unit(P, t.first_front, s, ptr[0], ptr[1], ld[1], nrhs, in, out ? ptr[2] : nullptr, out ? ld[2] : 0,
                     &ws);
      else
        backward_unit(P, t.first_front, s, ptr[0], ptr[1], ld[1], nrhs, in, out ? ptr[2] : nullptr,
                      out ? ld[2] : 0, &ws);
      break;
    }
    case SolveTaskKind::fwd_init: {
      const idx_t r0 = G.bound(s, t.i), r1 = G.bound(s, t.i + 1);
      if (S.accesses[t.acc_begin].mode == AccessMode::W)  // a CB segment starts at 0
        for (idx_t c = 0; c < nrhs; ++c) std::fill(ptr[0] + c * ld[0], ptr[0] + c * ld[0] + (r1 - r0), 0.0);
      add_child_updates(P, s, r0, r1, ptr[0], ld[0], nrhs, pieces(S, t, 1, na, ptr, ld, ws.pieces));
      break;
    }
    case SolveTaskKind::bwd_init:
      gather_from_parent(P, s, G.bound(s, t.i), G.bound(s, t.i + 1), ptr[0], ld[0], nrhs,
                         pieces(S, t, 1, na, ptr, ld, ws.pieces));
      break;
    case SolveTaskKind::fwd_trsm:
    case SolveTaskKind::bwd_trsm:
      trsm_vector(ptr[0], ld[0], dim(t.j), ptr[1], ld[1], nrhs, t.kind == SolveTaskKind::bwd_trsm);
      break;
    case SolveTaskKind::fwd_gemm:  // segment i -= L_ij segment j
      gemm_vector(ptr[0], ld[0], dim(t.i), dim(t.j), ptr[1], ld[1], ptr[2], ld[2], nrhs, false);
      break;
    case SolveTaskKind::bwd_gemm:  // segment j -= L_ijᵀ segment i
      gemm_vector(ptr[0], ld[0], dim(t.i), dim(t.j), ptr[1], ld[1], ptr[2], ld[2], nrhs, true);
      break;
  }
}

}  // namespace starfront
