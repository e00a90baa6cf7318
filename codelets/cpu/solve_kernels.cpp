#include "cpu/solve_kernels.hpp"

#include <algorithm>
#include <limits>

#include "cpu/blas.hpp"

namespace starfront {
namespace {
void copy_front(const std::vector<double>& w, idx_t m, idx_t nrhs, double* out, idx_t ld) {
  for (idx_t c = 0; c < nrhs; ++c) std::copy(w.data() + c * m, w.data() + (c + 1) * m, out + c * ld);
}
}  // namespace

void trsm_vector(const double* L, idx_t ldl, idx_t b, double* x, idx_t ld, idx_t nrhs, bool trans) {
  if (b == 0 || nrhs == 0) return;
  cblas_dtrsm(CblasColMajor, CblasLeft, CblasLower, trans ? CblasTrans : CblasNoTrans, CblasNonUnit,
              static_cast<int>(b), static_cast<int>(nrhs), 1.0, L, static_cast<int>(ldl), x, static_cast<int>(ld));
}

void gemm_vector(const double* L, idx_t ldl, idx_t rows, idx_t cols, const double* x, idx_t ldx, double* y,
                 idx_t ldy, idx_t nrhs, bool trans) {
  if (rows == 0 || cols == 0 || nrhs == 0) return;
  if (!trans)
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(rows), static_cast<int>(nrhs),
                static_cast<int>(cols), -1.0, L, static_cast<int>(ldl), x, static_cast<int>(ldx), 1.0, y,
                static_cast<int>(ldy));
  else
    cblas_dgemm(CblasColMajor, CblasTrans, CblasNoTrans, static_cast<int>(cols), static_cast<int>(nrhs),
                static_cast<int>(rows), -1.0, L, static_cast<int>(ldl), x, static_cast<int>(ldx), 1.0, y,
                static_cast<int>(ldy));
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
                  idx_t nrhs, const std::vector<VectorPiece>& children, double* w_root, idx_t ldw) {
  const SymbolicFactor& S = *P.symbolic;
  const idx_t base = P.l_offset[first], row0 = S.super_start[first];
  std::vector<std::vector<double>> W(static_cast<std::size_t>(root - first + 1));
  std::vector<VectorPiece> inner(1);
  for (idx_t s = first; s <= root; ++s) {
    const idx_t m = P.front_order(s), k = P.ncols(s), f = S.super_start[s] - row0;
    std::vector<double>& w = W[s - first];
    w.assign(static_cast<std::size_t>(m * nrhs), 0.0);
    for (idx_t c = 0; c < nrhs; ++c) std::copy(y + f + c * ldy, y + f + k + c * ldy, w.data() + c * m);
    for (idx_t q = P.child_ptr[s]; q < P.child_ptr[s + 1]; ++q) {
      const idx_t ch = P.child_list[q];
      if (ch < first) continue;  // outside the unit: among `children`
      inner[0] = {ch, 0, P.front_order(ch), W[ch - first].data(), P.front_order(ch)};
      add_child_updates(P, s, 0, m, w.data(), m, nrhs, inner);
      std::vector<double>().swap(W[ch - first]);
    }
    add_child_updates(P, s, 0, m, w.data(), m, nrhs, children);
    const double* Ls = L + (P.l_offset[s] - base);
    trsm_vector(Ls, m, k, w.data(), m, nrhs, false);
    gemm_vector(Ls + k, m, m - k, k, w.data(), m, w.data() + k, m, nrhs, false);
    for (idx_t c = 0; c < nrhs; ++c) std::copy(w.data() + c * m, w.data() + k + c * m, y + f + c * ldy);
  }
  if (w_root) copy_front(W[root - first], P.front_order(root), nrhs, w_root, ldw);
}

void backward_unit(const FrontPlan& P, idx_t first, idx_t root, const double* L, double* y, idx_t ldy,
                   idx_t nrhs, const std::vector<VectorPiece>& parent, double* x_root, idx_t ldw) {
  const SymbolicFactor& S = *P.symbolic;
  const idx_t base = P.l_offset[first], row0 = S.super_start[first];
  std::vector<std::vector<double>> X(static_cast<std::size_t>(root - first + 1));
  std::vector<VectorPiece> inner(1);
  for (idx_t s = root; s >= first; --s) {
    const idx_t m = P.front_order(s), k = P.ncols(s), f = S.super_start[s] - row0, p = S.super_parent[s];
    std::vector<double>& x = X[s - first];
    x.assign(static_cast<std::size_t>(m * nrhs), 0.0);
    for (idx_t c = 0; c < nrhs; ++c) std::copy(y + f + c * ldy, y + f + k + c * ldy, x.data() + c * m);
    if (m > k) {
      if (p >= first && p <= root) {
        inner[0] = {p, 0, P.front_order(p), X[p - first].data(), P.front_order(p)};
        gather_from_parent(P, s, k, m, x.data() + k, m, nrhs, inner);
      } else {
        gather_from_parent(P, s, k, m, x.data() + k, m, nrhs, parent);
      }
    }
    const double* Ls = L + (P.l_offset[s] - base);
    gemm_vector(Ls + k, m, m - k, k, x.data() + k, m, x.data(), m, nrhs, true);
    trsm_vector(Ls, m, k, x.data(), m, nrhs, true);
    for (idx_t c = 0; c < nrhs; ++c) std::copy(x.data() + c * m, x.data() + k + c * m, y + f + c * ldy);
  }
  if (x_root) copy_front(X[root - first], P.front_order(root), nrhs, x_root, ldw);
}

namespace {
/// The vector pieces among accesses [from, to) of task t.
std::vector<VectorPiece> pieces(const SolveGraph& S, const SolveTask& t, idx_t from, idx_t to, double* const* ptr,
                                const idx_t* ld) {
  std::vector<VectorPiece> out;
  for (idx_t a = from; a < to; ++a) {
    const SolveHandle& h = S.handles[S.accesses[t.acc_begin + a].handle];
    out.push_back({h.front, h.frow0, h.rows, ptr[a], ld[a]});
  }
  return out;
}
}  // namespace

void run_solve_task_cpu(const SolveGraph& S, idx_t task, idx_t nrhs, double* const* ptr, const idx_t* ld) {
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
      const std::vector<VectorPiece> in = pieces(S, t, out ? 3 : 2, na, ptr, ld);
      if (t.kind == SolveTaskKind::fwd_unit)
        forward_unit(P, t.first_front, s, ptr[0], ptr[1], ld[1], nrhs, in, out ? ptr[2] : nullptr, out ? ld[2] : 0);
      else
        backward_unit(P, t.first_front, s, ptr[0], ptr[1], ld[1], nrhs, in, out ? ptr[2] : nullptr, out ? ld[2] : 0);
      break;
    }
    case SolveTaskKind::fwd_init: {
      const idx_t r0 = G.bound(s, t.i), r1 = G.bound(s, t.i + 1);
      if (S.accesses[t.acc_begin].mode == AccessMode::W)  // a CB segment starts at 0
        for (idx_t c = 0; c < nrhs; ++c) std::fill(ptr[0] + c * ld[0], ptr[0] + c * ld[0] + (r1 - r0), 0.0);
      add_child_updates(P, s, r0, r1, ptr[0], ld[0], nrhs, pieces(S, t, 1, na, ptr, ld));
      break;
    }
    case SolveTaskKind::bwd_init:
      gather_from_parent(P, s, G.bound(s, t.i), G.bound(s, t.i + 1), ptr[0], ld[0], nrhs,
                         pieces(S, t, 1, na, ptr, ld));
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
