#include "plan/front_plan.hpp"

#include <algorithm>
#include <numeric>
#include <string>

namespace starfront {
namespace {

/// Children lists from the parent array (children in increasing order).
void build_children(const SymbolicFactor& sym, FrontPlan& P) {
  P.child_ptr.assign(sym.nsuper + 1, 0);
  for (idx_t s = 0; s < sym.nsuper; ++s)
    if (sym.super_parent[s] >= 0) ++P.child_ptr[sym.super_parent[s] + 1];
  std::partial_sum(P.child_ptr.begin(), P.child_ptr.end(), P.child_ptr.begin());
  P.child_list.resize(P.child_ptr.back());
  std::vector<idx_t> next(P.child_ptr.begin(), P.child_ptr.end() - 1);
  for (idx_t s = 0; s < sym.nsuper; ++s)
    if (sym.super_parent[s] >= 0) P.child_list[next[sym.super_parent[s]]++] = s;
}

/// Relative indices of every child's CB rows in its parent's front.
Status build_relative_indices(const SymbolicFactor& sym, FrontPlan& P) {
  P.rel_ptr.assign(sym.nsuper + 1, 0);
  for (idx_t s = 0; s < sym.nsuper; ++s) P.rel_ptr[s + 1] = P.rel_ptr[s] + sym.cb_order(s);
  P.rel.assign(P.rel_ptr.back(), -1);
  std::vector<idx_t> pos(sym.n, -1);
  for (idx_t p = 0; p < sym.nsuper; ++p) {
    const idx_t* rows = &sym.front_rows[sym.front_ptr[p]];
    const idx_t m = sym.front_order(p);
    for (idx_t r = 0; r < m; ++r) pos[rows[r]] = r;
    for (idx_t q = P.child_ptr[p]; q < P.child_ptr[p + 1]; ++q) {
      const idx_t c = P.child_list[q];
      const idx_t* crow = &sym.front_rows[sym.front_ptr[c] + sym.ncols(c)];
      for (idx_t r = 0; r < sym.cb_order(c); ++r) {
        if (pos[crow[r]] < 0)
          return Status::error(StatusCode::invalid_argument,
                               "symbolic structure is inconsistent: CB row " +
                                   std::to_string(crow[r]) + " of front " + std::to_string(c) +
                                   " is not a row of its parent front " + std::to_string(p));
        P.rel[P.rel_ptr[c] + r] = pos[crow[r]];
      }
    }
    for (idx_t r = 0; r < m; ++r) pos[rows[r]] = -1;
  }
  return Status::success();
}

/// Maps every entry of A to its place in the factor block of its front.
Status build_assembly_map(const CscMatrix& A, const SymbolicFactor& sym, FrontPlan& P) {
  const idx_t nnz = A.nnz();
  P.nnz_a = nnz;
  P.a_ptr.assign(sym.nsuper + 1, 0);
  P.diag_src.assign(sym.n, -1);
  for (idx_t j = 0; j < A.n; ++j)
    for (idx_t p = A.colptr[j]; p < A.colptr[j + 1]; ++p) {
      const idx_t pj = std::min(sym.iperm[j], sym.iperm[A.rowind[p]]);
      ++P.a_ptr[sym.col_to_super[pj] + 1];
    }
  std::partial_sum(P.a_ptr.begin(), P.a_ptr.end(), P.a_ptr.begin());
  P.a_src.resize(nnz);
  P.a_dst.resize(nnz);
  std::vector<idx_t> a_col(nnz), a_orig_col(nnz);
  std::vector<idx_t> next(P.a_ptr.begin(), P.a_ptr.end() - 1);
  for (idx_t j = 0; j < A.n; ++j)
    for (idx_t p = A.colptr[j]; p < A.colptr[j + 1]; ++p) {
      const idx_t a = sym.iperm[j], b = sym.iperm[A.rowind[p]];
      const idx_t col = std::min(a, b);
      const idx_t s = sym.col_to_super[col];
      P.a_src[next[s]] = p;
      P.a_dst[next[s]] = std::max(a, b);  // permuted row for now; turned into an offset below
      a_col[next[s]] = col;
      a_orig_col[next[s]] = j;
      ++next[s];
      if (a == b) P.diag_src[col] = p;
    }
  std::vector<idx_t> pos(sym.n, -1);
  for (idx_t s = 0; s < sym.nsuper; ++s) {
    const idx_t* rows = &sym.front_rows[sym.front_ptr[s]];
    const idx_t m = sym.front_order(s);
    for (idx_t r = 0; r < m; ++r) pos[rows[r]] = r;
    for (idx_t q = P.a_ptr[s]; q < P.a_ptr[s + 1]; ++q) {
      const idx_t p = P.a_src[q], j = a_orig_col[q], col = a_col[q];
      const idx_t row = P.a_dst[q];
      if (pos[row] < 0 || pos[row] < col - sym.super_start[s])
        return Status::error(StatusCode::invalid_argument,
                             "entry (" + std::to_string(A.rowind[p] + 1) + ", " +
                                 std::to_string(j + 1) +
                                 ") of A is outside the analysed pattern");
      P.a_dst[q] = pos[row] + m * (col - sym.super_start[s]);
    }
    for (idx_t r = 0; r < m; ++r) pos[rows[r]] = -1;
  }
  return Status::success();
}

}  // namespace

Status build_front_plan(const CscMatrix& A, const SymbolicFactor& sym, FrontPlan& out) {
  if (A.n != sym.n)
    return Status::error(StatusCode::invalid_argument,
                         "matrix order " + std::to_string(A.n) + " differs from the analysed order " +
                             std::to_string(sym.n));
  FrontPlan P;
  P.symbolic = &sym;
  P.n = sym.n;
  P.nsuper = sym.nsuper;
  P.l_offset.assign(sym.nsuper + 1, 0);
  P.front_flops.assign(sym.nsuper, 0.0);
  for (idx_t s = 0; s < sym.nsuper; ++s) {
    const idx_t m = sym.front_order(s), k = sym.ncols(s);
    P.l_offset[s + 1] = P.l_offset[s] + m * k;
    double fl = 0.0;
    for (idx_t j = 0; j < k; ++j) {
      const double c = static_cast<double>(m - j);  // entries of column j of L, diagonal included
      fl += c * c;
    }
    P.front_flops[s] = fl;
  }
  build_children(sym, P);
  Status st = build_relative_indices(sym, P);
  if (!st.ok()) return st;
  st = build_assembly_map(A, sym, P);
  if (!st.ok()) return st;
  P.task_order.resize(sym.nsuper);
  std::iota(P.task_order.begin(), P.task_order.end(), idx_t{0});
  out = std::move(P);
  return Status::success();
}

}  // namespace starfront
