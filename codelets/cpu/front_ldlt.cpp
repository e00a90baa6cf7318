#include "cpu/front_ldlt.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "cpu/blas.hpp"

namespace starfront {
namespace {

/// The active part of the panel during the elimination: L is m×k (ld m), the
/// symmetric k×k block stored in its lower triangle, the rows k..m-1 below.
struct Panel {
  double* L;
  idx_t m, k;
  /// Entry (i, j) of the symmetric active matrix, i or j < k.
  double& at(idx_t i, idx_t j) const { return i >= j ? L[i + j * m] : L[j + i * m]; }
  double* col(idx_t j) const { return L + j * m; }
};

/// Largest |entry| of active column j (rows p..m-1 except j and `skip`), and
/// the fully-summed row (p..k-1, not j nor skip) holding the largest one.
struct ColMax {
  double all = 0.0;  ///< over every active row, contribution-block rows included
  double fs = 0.0;   ///< over the fully-summed rows only
  idx_t r = -1;      ///< argmax of fs, or -1
};

ColMax col_max(const Panel& A, idx_t p, idx_t j, idx_t skip = -1) {
  ColMax c;
  for (idx_t i = p; i < A.k; ++i) {
    if (i == j || i == skip) continue;
    const double v = std::fabs(A.at(i, j));
    if (v > c.fs) {
      c.fs = v;
      c.r = i;
    }
  }
  c.all = c.fs;
  const double* cj = A.col(j);
  for (idx_t i = A.k; i < A.m; ++i) c.all = std::max(c.all, std::fabs(cj[i]));
  return c;
}

/// Symmetric interchange of positions i and j (< k) of the panel: rows of the
/// eliminated columns, the active lower triangle, and the rows below k.
void sym_swap(const Panel& A, idx_t i, idx_t j) {
  if (i == j) return;
  if (i > j) std::swap(i, j);
  double* L = A.L;
  const idx_t m = A.m;
  for (idx_t c = 0; c < i; ++c) std::swap(L[i + c * m], L[j + c * m]);
  std::swap(L[i + i * m], L[j + j * m]);
  for (idx_t c = i + 1; c < j; ++c) std::swap(L[c + i * m], L[j + c * m]);
  for (idx_t r = j + 1; r < m; ++r) std::swap(L[r + i * m], L[r + j * m]);
}

/// a·c − b² without overflow in b² when |b| is large.
double det2(double a, double b, double c) {
  return b != 0.0 ? b * ((a / b) * c - b) : a * c;
}

/// Pivot decision at step p.
struct Choice {
  enum Kind { zero, one, two, perturb } kind = one;
  idx_t j = -1, r = -1;  ///< columns to bring to p (and p+1 for a 2×2)
  bool below_threshold = false;
};

/// Bunch–Kaufman-type search with threshold u over the remaining fully-summed
/// columns (Duff & Reid 1983): for each candidate j in turn, a zero column, a
/// 1×1 pivot j, a 1×1 pivot r (r: largest fully-summed entry of column j), a
/// 2×2 pivot (j, r). If none passes, the least unstable pivot seen (smallest
/// bound on |l|) when it is not tiny (|d| > τ·c_j; 2×2: |det| > τ²·c_j·c_r),
/// otherwise a perturbed 1×1 pivot at p.
Choice choose_pivot(const Panel& A, idx_t p, const std::vector<double>& sc, const LdltParams& prm) {
  const double u = prm.u;
  Choice best;
  double best_growth = std::numeric_limits<double>::infinity();
  auto consider = [&](Choice c, double growth) {
    if (growth < best_growth) {
      best_growth = growth;
      best = c;
      best.below_threshold = true;
    }
  };
  for (idx_t j = p; j < A.k; ++j) {
    const double ajj = A.at(j, j), dj = std::fabs(ajj);
    const ColMax cj = col_max(A, p, j);
    if (std::max(dj, cj.all) <= prm.zero_rel * sc[j]) return {Choice::zero, j, -1, false};
    if (dj > 0 && dj >= u * cj.all) return {Choice::one, j, -1, false};
    if (dj > prm.tau * sc[j]) consider({Choice::one, j, -1, false}, cj.all / dj);
    if (cj.r < 0 || cj.fs == 0.0) continue;
    const idx_t r = cj.r;
    const double arr = A.at(r, r), dr = std::fabs(arr);
    const ColMax cr = col_max(A, p, r);
    if (dr > 0 && dr >= u * cr.all) return {Choice::one, r, -1, false};
    const double gj = col_max(A, p, j, r).all, gr = col_max(A, p, r, j).all;
    const double b = A.at(r, j), det = std::fabs(det2(ajj, b, arr));
    if (!(det > 0) || !std::isfinite(det)) continue;
    const double growth = std::max(dr * gj + std::fabs(b) * gr, std::fabs(b) * gj + dj * gr) / det;
    if (growth <= 1.0 / u) return {Choice::two, j, r, false};
    if (det > prm.tau * sc[j] * prm.tau * sc[r]) consider({Choice::two, j, r, false}, growth);
  }
  if (std::isfinite(best_growth)) return best;
  return {Choice::perturb, p, -1, false};
}

/// Quasi-definite rule: 1×1 pivot p, a zero column or a perturbed pivot when tiny.
Choice choose_natural(const Panel& A, idx_t p, const std::vector<double>& sc, const LdltParams& prm) {
  const double dp = std::fabs(A.at(p, p)), zt = prm.zero_rel * sc[p];
  const double cmax = col_max(A, p, p).all;
  if (std::max(dp, cmax) <= zt) return {Choice::zero, p, -1, false};
  if (dp <= zt) return {Choice::perturb, p, -1, false};
  // Not pivoting, but counted when the threshold test fails: the growth of
  // L is then not bounded and the inertia not guaranteed (not quasi-definite?).
  return {Choice::one, p, -1, dp < prm.u * cmax};
}

/// Eliminates the 1×1 pivot d at p: updates the active fully-summed columns,
/// then scales column p into L.
void eliminate_1x1(const Panel& A, idx_t p, double d) {
  double* cp = A.col(p);
  cp[p] = d;
  const double inv = 1.0 / d;
  for (idx_t c = p + 1; c < A.k; ++c) {
    const double lc = cp[c] * inv;
    if (lc == 0.0) continue;
    double* cc = A.col(c);
    for (idx_t i = c; i < A.m; ++i) cc[i] -= lc * cp[i];
  }
  for (idx_t i = p + 1; i < A.m; ++i) cp[i] *= inv;
}

/// Eliminates the 2×2 pivot at (p, p+1).
void eliminate_2x2(const Panel& A, idx_t p) {
  double* c0 = A.col(p);
  double* c1 = A.col(p + 1);
  const double a = c0[p], b = c0[p + 1], c = c1[p + 1];
  const double det = det2(a, b, c);
  const double ia = c / det, ib = -b / det, ic = a / det;  // D⁻¹
  for (idx_t q = p + 2; q < A.k; ++q) {
    const double w0 = c0[q], w1 = c1[q];
    const double l0 = w0 * ia + w1 * ib, l1 = w0 * ib + w1 * ic;
    if (l0 == 0.0 && l1 == 0.0) continue;
    double* cq = A.col(q);
    for (idx_t i = q; i < A.m; ++i) cq[i] -= l0 * c0[i] + l1 * c1[i];
  }
  for (idx_t i = p + 2; i < A.m; ++i) {
    const double x0 = c0[i], x1 = c1[i];
    c0[i] = x0 * ia + x1 * ib;
    c1[i] = x0 * ib + x1 * ic;
  }
}

/// First column (0-based) of the panel whose lower part holds a value that
/// is not finite, or -1; *bad receives that value.
idx_t first_nonfinite_column(const Panel& A, double* bad) {
  for (idx_t j = 0; j < A.k; ++j) {
    const double* cj = A.col(j);
    for (idx_t i = j; i < A.m; ++i)
      if (!std::isfinite(cj[i])) {
        *bad = cj[i];
        return j;
      }
  }
  return -1;
}

void count_1x1(double d, idx_t pos, LdltCounts& out) {
  if (!std::isfinite(d)) {
    if (out.first_nonfinite < 0) {
      out.first_nonfinite = pos;
      out.nonfinite_pivot = d;
    }
  } else if (d > 0) {
    ++out.positive;
  } else {
    ++out.negative;
  }
}

}  // namespace

void inertia_2x2(double a, double b, double c, idx_t& pos, idx_t& neg) {
  const double det = det2(a, b, c);
  if (det < 0) {
    ++pos;
    ++neg;
  } else if (a + c > 0) {
    pos += 2;
  } else {
    neg += 2;
  }
}

LdltCounts ldlt_panel(double* L, idx_t m, idx_t k, const LdltParams& prm, const double* col_scale,
                      idx_t* perm, signed char* pivsize, double* d_off) {
  LdltCounts out;
  const Panel A{L, m, k};
  thread_local std::vector<double> sc;  // workspace reused across fronts
  sc.assign(col_scale, col_scale + k);
  std::iota(perm, perm + k, idx_t{0});
  std::fill(d_off, d_off + k, 0.0);
  std::fill(pivsize, pivsize + k, static_cast<signed char>(1));
  // Overflow upstream (a child's contribution block) must not be hidden by
  // the pivot tests (NaN compares false): refuse a non-finite input panel.
  if (const idx_t j = first_nonfinite_column(A, &out.nonfinite_pivot); j >= 0) {
    out.first_nonfinite = j;
    return out;
  }
  auto bring = [&](idx_t from, idx_t to) {
    if (from == to) return;
    sym_swap(A, from, to);
    std::swap(sc[from], sc[to]);
    std::swap(perm[from], perm[to]);
  };
  for (idx_t p = 0; p < k;) {
    const Choice ch = prm.pivoting == LdltPivoting::none ? choose_natural(A, p, sc, prm)
                                                         : choose_pivot(A, p, sc, prm);
    if (ch.kind == Choice::two) {
      // j to p, then r to p+1 (r may have been moved by the first interchange).
      const idx_t r = ch.r == p ? ch.j : ch.r;
      bring(ch.j, p);
      bring(r, p + 1);
      const double a = A.at(p, p), b = A.at(p + 1, p), c = A.at(p + 1, p + 1);
      inertia_2x2(a, b, c, out.positive, out.negative);
      if (!std::isfinite(det2(a, b, c)) && out.first_nonfinite < 0) {
        out.first_nonfinite = p;
        out.nonfinite_pivot = det2(a, b, c);
      }
      eliminate_2x2(A, p);
      A.col(p)[p + 1] = 0.0;
      d_off[p] = b;
      pivsize[p] = 2;
      pivsize[p + 1] = 0;
      ++out.two_by_two;
      if (ch.below_threshold) ++out.below_threshold;
      p += 2;
      continue;
    }
    bring(ch.j, p);
    pivsize[p] = 1;
    double* cp = A.col(p);
    if (ch.kind == Choice::zero) {
      std::fill(cp + p, cp + m, 0.0);
      ++out.zero;
      if (out.first_zero < 0) out.first_zero = p;
      ++p;
      continue;
    }
    double d = cp[p];
    if (ch.kind == Choice::perturb) {
      const double t = std::max(prm.tau * sc[p], std::numeric_limits<double>::min());
      d = d < 0 ? -t : t;
      ++out.perturbed;
    } else if (ch.below_threshold) {
      ++out.below_threshold;
    }
    count_1x1(d, p, out);
    eliminate_1x1(A, p, d);
    ++p;
  }
  if (out.first_nonfinite < 0) {
    const idx_t j = first_nonfinite_column(A, &out.nonfinite_pivot);
    if (j >= 0) out.first_nonfinite = j;
  }
  return out;
}

void ldlt_update_cb(const double* L, idx_t m, idx_t k, const signed char* pivsize,
                    const double* d_off, double* cb, std::vector<double>& W) {
  const idx_t mc = m - k;
  if (mc <= 0 || k <= 0) return;
  const double* L21 = L + k;
  W.resize(static_cast<std::size_t>(mc * k));
  for (idx_t p = 0; p < k; ++p) {
    const double* lp = L21 + p * m;
    double* wp = W.data() + p * mc;
    if (pivsize[p] == 1) {
      const double d = L[p + p * m];
      for (idx_t i = 0; i < mc; ++i) wp[i] = lp[i] * d;
    } else if (pivsize[p] == 2) {
      const double a = L[p + p * m], b = d_off[p], c = L[(p + 1) + (p + 1) * m];
      const double* lq = lp + m;
      double* wq = wp + mc;
      for (idx_t i = 0; i < mc; ++i) {
        wp[i] = lp[i] * a + lq[i] * b;
        wq[i] = lp[i] * b + lq[i] * c;
      }
    }
  }
  constexpr idx_t nb = 64;
  for (idx_t j0 = 0; j0 < mc; j0 += nb) {
    const idx_t nj = std::min(nb, mc - j0);
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasTrans, static_cast<int>(mc - j0),
                static_cast<int>(nj), static_cast<int>(k), -1.0, W.data() + j0,
                static_cast<int>(mc), L21 + j0, static_cast<int>(m), 1.0, cb + j0 + j0 * mc,
                static_cast<int>(mc));
  }
}

void LdltFactorState::add(const LdltCounts& c, idx_t first, const idx_t* perm) {
  std::lock_guard<std::mutex> lock(mutex);
  totals.positive += c.positive;
  totals.negative += c.negative;
  totals.zero += c.zero;
  totals.perturbed += c.perturbed;
  totals.below_threshold += c.below_threshold;
  totals.two_by_two += c.two_by_two;
  if (c.first_zero >= 0 && (totals.first_zero < 0 || first + c.first_zero < totals.first_zero)) {
    totals.first_zero = first + c.first_zero;
    first_zero_column = first + perm[c.first_zero];
  }
  if (c.first_nonfinite >= 0 &&
      (totals.first_nonfinite < 0 || first + c.first_nonfinite < totals.first_nonfinite)) {
    totals.first_nonfinite = first + c.first_nonfinite;
    totals.nonfinite_pivot = c.nonfinite_pivot;
    first_nonfinite_column = first + perm[c.first_nonfinite];
  }
}

FrontResult factor_front_ldlt_cpu(const FrontPlan& P, idx_t s, const double* values, double* Ls,
                                  double* cb, const double* const* child_cb, LdltFactorState& st) {
  FrontResult r;
  const idx_t m = P.front_order(s), k = P.ncols(s), f = P.symbolic->super_start[s];
  assemble_front_cpu(P, s, values, Ls, cb, child_cb);
  thread_local std::vector<idx_t> perm;  // workspaces reused across fronts
  thread_local std::vector<double> W;
  perm.resize(static_cast<std::size_t>(k));
  const LdltCounts c = ldlt_panel(Ls, m, k, st.params, st.col_scale.data() + f, perm.data(),
                                  st.pivot_size + f, st.d_off + f);
  for (idx_t i = 0; i < k; ++i) st.pivot_order[f + i] = f + perm[i];
  st.add(c, f, perm.data());
  r.min_pivot_ratio = std::numeric_limits<double>::infinity();
  if (c.first_nonfinite >= 0) {
    r.state = FrontResult::State::failed;
    r.failed_column = f + perm[c.first_nonfinite];
    r.pivot = c.nonfinite_pivot;
    return r;
  }
  ldlt_update_cb(Ls, m, k, st.pivot_size + f, st.d_off + f, cb, W);
  r.state = FrontResult::State::done;
  return r;
}

}  // namespace starfront
