#include "cpu/front_cholesky.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <string>
#include <vector>

#include "cpu/blas.hpp"
#include "cpu/small_dense.hpp"

namespace starfront {
namespace {

/// Adds A's entries of front s into its factor panel.
void assemble_original(const FrontPlan& P, idx_t s, const double* values, double* Ls) {
  for (idx_t q = P.a_ptr[s]; q < P.a_ptr[s + 1]; ++q) Ls[P.a_dst[q]] += values[P.a_src[q]];
}

/// Extend-add of the CB of child c (order mc, lower part) into front s, in
/// two halves: rows and columns go through the relative indices; the columns
/// whose target is below k go to the panel Ls (extend_add_panel), the others
/// to the CB of s (extend_add_cb; cb_by_column_blocks adds them block by
/// block). The Cholesky kernel adds the second half after its SYRK or DGEMM
/// has overwritten the CB's lower triangle with -L21·L21ᵀ, so that the CB
/// buffer is never zeroed.
void extend_add_panel(const FrontPlan& P, idx_t c, const double* cbc, idx_t m, idx_t k, double* Ls) {
  const idx_t mc = P.cb_order(c);
  const idx_t* rel = &P.rel[P.rel_ptr[c]];
  for (idx_t jj = 0; jj < mc; ++jj) {
    const idx_t pj = rel[jj];
    if (pj >= k) continue;
    const double* src = cbc + jj * mc;
    double* dst = Ls + pj * m;
    for (idx_t ii = jj; ii < mc; ++ii) dst[rel[ii]] += src[ii];
  }
}

/// Adds columns [jj0, jj1) of child c's CB (order mcc = cb_order(c), lower
/// part; columns whose parent column rel[jj] is >= k) into the CB of its
/// parent (order m-k, leading dimension m-k).
void add_cb_columns(const FrontPlan& P, idx_t c, const double* cbc, idx_t m, idx_t k, double* cb, idx_t jj0,
                    idx_t jj1) {
  const idx_t mcc = P.cb_order(c);
  const idx_t* rel = &P.rel[P.rel_ptr[c]];
  const idx_t ldcb = m - k;
  for (idx_t jj = jj0; jj < jj1; ++jj) {
    const double* src = cbc + jj * mcc;
    double* dst = cb + (rel[jj] - k) * ldcb - k;
    for (idx_t ii = jj; ii < mcc; ++ii) dst[rel[ii]] += src[ii];
  }
}

/// First column of child c's CB whose parent column is in the parent's CB
/// (rel >= k; rel is increasing).
idx_t first_cb_column(const FrontPlan& P, idx_t c, idx_t k) {
  const idx_t* rel = &P.rel[P.rel_ptr[c]];
  return static_cast<idx_t>(std::lower_bound(rel, rel + P.cb_order(c), k) - rel);
}

void extend_add_cb(const FrontPlan& P, idx_t c, const double* cbc, idx_t m, idx_t k, double* cb) {
  add_cb_columns(P, c, cbc, m, k, cb, first_cb_column(P, c, k), P.cb_order(c));
}

/// The CB of a Cholesky front by column blocks of width w (cb_block_columns):
/// for each block [j0, j1) of CB columns, one DGEMM writes
/// C[j0:, j0:j1] = -L21[j0:, :]·L21[j0:j1, :]ᵀ (the trapezoid below the
/// block's top, β = 0: also the strict upper triangle of the diagonal
/// block), then the children's CB columns that land in [j0, j1) are added
/// while the block is still in cache. Each CB entry is then written from
/// memory once, instead of DSYRK's zeroing pass, its update pass and the
/// extend-add pass over a CB that outgrows the cache (bench/README.md,
/// session 32). L21: rows k.. of the panel Ls (leading dimension m).
void cb_by_column_blocks(const FrontPlan& P, idx_t s, const double* Ls, idx_t m, idx_t k, double* cb,
                         const double* const* child_cb, idx_t w) {
  const idx_t mc = m - k;
  const double* L21 = Ls + k;
  // Per child: the next of its CB columns (local index) to add; columns
  // whose parent column is in the panel (rel < k) were added before the POTRF.
  thread_local std::vector<idx_t> next;
  const idx_t c0 = P.child_ptr[s], nchild = P.child_ptr[s + 1] - c0;
  next.resize(static_cast<std::size_t>(nchild));
  for (idx_t q = 0; q < nchild; ++q) next[q] = first_cb_column(P, P.child_list[c0 + q], k);
  for (idx_t j0 = 0; j0 < mc; j0 += w) {
    const idx_t j1 = std::min(mc, j0 + w);
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasTrans, static_cast<int>(mc - j0), static_cast<int>(j1 - j0),
                static_cast<int>(k), -1.0, L21 + j0, static_cast<int>(m), L21 + j0, static_cast<int>(m), 0.0,
                cb + j0 * mc + j0, static_cast<int>(mc));
    for (idx_t q = 0; q < nchild; ++q) {
      const idx_t c = P.child_list[c0 + q], mcc = P.cb_order(c);
      const idx_t* rel = &P.rel[P.rel_ptr[c]];
      idx_t jj = next[q];
      while (jj < mcc && rel[jj] - k < j1) ++jj;  // the child's columns landing in [j0, j1)
      add_cb_columns(P, c, child_cb[q], m, k, cb, next[q], jj);
      next[q] = jj;
    }
  }
}

/// STARFRONT_SMALL_TRSM=0 (measurement knob, read once): every front's TRSM
/// by OpenBLAS's DTRSM, as before session 33.
bool small_trsm_enabled() {
  static const bool on = [] {
    const char* e = std::getenv("STARFRONT_SMALL_TRSM");
    return !(e && std::string(e) == "0");
  }();
  return on;
}

}  // namespace

idx_t cb_block_columns() {
  static const idx_t width = [] {
    const char* e = std::getenv("STARFRONT_CB_BLOCK");
    if (!e || !*e) return kCbBlockColumns;
    char* end = nullptr;
    const long v = std::strtol(e, &end, 10);
    return *end == '\0' && v >= 0 ? static_cast<idx_t>(v) : kCbBlockColumns;
  }();
  return width;
}

void assemble_front_cpu(const FrontPlan& P, idx_t s, const double* values, double* Ls, double* cb,
                        const double* const* child_cb) {
  const idx_t m = P.front_order(s), k = P.ncols(s), mc = m - k;
  std::fill(Ls, Ls + m * k, 0.0);
  if (mc > 0) std::fill(cb, cb + mc * mc, 0.0);
  assemble_original(P, s, values, Ls);
  for (idx_t q = P.child_ptr[s]; q < P.child_ptr[s + 1]; ++q) {
    extend_add_panel(P, P.child_list[q], child_cb[q - P.child_ptr[s]], m, k, Ls);
    if (mc > 0) extend_add_cb(P, P.child_list[q], child_cb[q - P.child_ptr[s]], m, k, cb);
  }
}

idx_t check_pivots(const FrontPlan& P, idx_t first, const double* values, const double* Ls, idx_t m,
                   idx_t k, double pivot_tol, FrontResult& r) {
  double min_ratio = std::numeric_limits<double>::infinity();
  for (idx_t j = 0; j < k; ++j) {
    const double l = Ls[j * (m + 1)];
    const double d = l * l;
    const idx_t src = P.diag_src[first + j];
    const double ajj = src >= 0 ? std::fabs(values[src]) : 0.0;
    if (!std::isfinite(d) || d <= pivot_tol * ajj) {
      r.pivot = std::isfinite(l) ? d : l;
      return j;
    }
    if (ajj > 0) min_ratio = std::min(min_ratio, d / ajj);
  }
  r.min_pivot_ratio = min_ratio;
  return -1;
}

FrontResult factor_front_cpu(const FrontPlan& P, idx_t s, const double* values, double* Ls,
                             double* cb, const double* const* child_cb, double pivot_tol, idx_t cb_block) {
  FrontResult r;
  const idx_t m = P.front_order(s), k = P.ncols(s), mc = m - k;
  // The panel first (zeroed, A's entries, the children's panel columns); the
  // CB is written with beta = 0 (by column blocks of DGEMM, or one SYRK) and
  // then receives the children's CB columns, so it is never zeroed
  // (assemble_front_cpu, used by LDLᵀ, zeroes the CB and assembles it before
  // the factorisation). Of the CB's strict upper triangle only the diagonal
  // blocks' part may be written (−L21·L21ᵀ without the children's entries:
  // never read).
  std::fill(Ls, Ls + m * k, 0.0);
  assemble_original(P, s, values, Ls);
  for (idx_t q = P.child_ptr[s]; q < P.child_ptr[s + 1]; ++q)
    extend_add_panel(P, P.child_list[q], child_cb[q - P.child_ptr[s]], m, k, Ls);

  const lapack_int info = LAPACKE_dpotrf_work(LAPACK_COL_MAJOR, 'L', static_cast<lapack_int>(k), Ls,
                                              static_cast<lapack_int>(m));
  idx_t bad = -1;
  if (info > 0) {
    bad = info - 1;
    r.pivot = Ls[bad * (m + 1)];  // LAPACK leaves the failing Schur-complement diagonal here
  } else {
    bad = check_pivots(P, P.symbolic->super_start[s], values, Ls, m, k, pivot_tol, r);
  }
  if (bad >= 0) {
    r.state = FrontResult::State::failed;
    r.failed_column = P.symbolic->super_start[s] + bad;
    return r;
  }
  if (mc > 0) {
    const int im = static_cast<int>(m), ik = static_cast<int>(k), imc = static_cast<int>(mc);
    // Thin panels (k <= kSmallTrsmMaxK) by a register-tiled kernel on
    // AVX-512 CPUs: OpenBLAS's DTRSM ran lap3d 60^3's subtree fronts
    // (k < 32) at 0.9-1.4 flops a cycle, the kernel at 5-7 (small_dense.hpp).
    if (!small_trsm_enabled() || !trsm_right_lower_trans_small(mc, k, Ls, m, Ls + k, m))
      cblas_dtrsm(CblasColMajor, CblasRight, CblasLower, CblasTrans, CblasNonUnit, imc, ik, 1.0, Ls, im, Ls + k,
                  im);
    // By column blocks when the update is memory-bound (fewer than
    // kCbBlockMaxColumns fully-summed columns: < 256 flops per CB entry);
    // wider panels keep one DSYRK, whose large compute-bound update DGEMMs
    // of a few columns would slow (lap3d 60³'s fronts on one core).
    if (const idx_t w = cb_block < 0 ? cb_block_columns() : cb_block; w > 0 && k < kCbBlockMaxColumns) {
      cb_by_column_blocks(P, s, Ls, m, k, cb, child_cb, w);
    } else {
      cblas_dsyrk(CblasColMajor, CblasLower, CblasNoTrans, imc, ik, -1.0, Ls + k, im, 0.0, cb, imc);
      for (idx_t q = P.child_ptr[s]; q < P.child_ptr[s + 1]; ++q)
        extend_add_cb(P, P.child_list[q], child_cb[q - P.child_ptr[s]], m, k, cb);
    }
  }
  r.state = FrontResult::State::done;
  return r;
}

}  // namespace starfront
