#include "solve/factor.hpp"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <algorithm>
#include <limits>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace starfront {

const char* factor_method_name(FactorMethod m) {
  switch (m) {
    case FactorMethod::llt: return "llt";
    case FactorMethod::ldlt: return "ldlt";
    case FactorMethod::quasi_definite: return "quasi-definite";
    case FactorMethod::automatic: return "auto";
  }
  return "unknown";
}

Status check_factor_options(const FactorOptions& o) {
  if (!(o.ldlt_threshold > 0.0 && o.ldlt_threshold <= 0.5))
    return Status::error(StatusCode::invalid_argument,
                         "LDLᵀ threshold u = " + std::to_string(o.ldlt_threshold) +
                             " must be in (0, 0.5]");
  if (!(o.perturbation > 0.0 && o.perturbation < 1.0))
    return Status::error(StatusCode::invalid_argument,
                         "perturbation tau = " + std::to_string(o.perturbation) +
                             " must be in (0, 1)");
  if (o.refine_steps < 0 || o.refine_steps > 100)
    return Status::error(StatusCode::invalid_argument,
                         "refinement steps = " + std::to_string(o.refine_steps) +
                             " must be in [0, 100]");
  if (static_cast<int>(o.method) > static_cast<int>(FactorMethod::automatic))
    return Status::error(StatusCode::invalid_argument, "unknown factorisation method");
  return Status::success();
}

void prepare_factor_context(const FrontPlan& P, const CscMatrix& A, const FactorOptions& opts,
                            NumericFactor& F, FactorContext& ctx) {
  ctx.pivot_tol = opts.effective_pivot_tol(P.n);
  ctx.values = A.values.data();
  F.method = opts.method == FactorMethod::automatic ? FactorMethod::llt : opts.method;
  F.inertia = InertiaCounts{};
  F.perturbed_pivots = F.delayed_pivots = F.below_threshold_pivots = F.two_by_two_pivots = 0;
  if (!F.is_ldlt()) {
    F.pivot_order.clear();
    F.pivot_size.clear();
    F.d_off.clear();
    return;
  }
  // Largest |a_ij| of every row/column of A (both triangles), original numbering.
  std::vector<double> colmax(static_cast<std::size_t>(P.n), 0.0);
  for (idx_t j = 0; j < A.n; ++j)
    for (idx_t p = A.colptr[j]; p < A.colptr[j + 1]; ++p) {
      const double v = std::fabs(A.values[p]);
      colmax[A.rowind[p]] = std::max(colmax[A.rowind[p]], v);
      colmax[j] = std::max(colmax[j], v);
    }
  LdltFactorState& st = ctx.ldlt;
  st.active = true;
  st.params.pivoting =
      opts.method == FactorMethod::quasi_definite ? LdltPivoting::none : LdltPivoting::threshold_bk;
  st.params.u = opts.ldlt_threshold;
  st.params.tau = opts.perturbation;
  st.params.zero_rel = static_cast<double>(P.n) * std::numeric_limits<double>::epsilon();
  const std::vector<idx_t>& perm = P.symbolic->perm;  // final position -> original column
  st.col_scale.assign(static_cast<std::size_t>(P.n), 0.0);
  for (idx_t k = 0; k < P.n; ++k) st.col_scale[k] = colmax[perm[k]];
  F.pivot_order.assign(static_cast<std::size_t>(P.n), 0);
  F.pivot_size.assign(static_cast<std::size_t>(P.n), 1);
  F.d_off.assign(static_cast<std::size_t>(P.n), 0.0);
  st.pivot_order = F.pivot_order.data();
  st.pivot_size = F.pivot_size.data();
  st.d_off = F.d_off.data();
}

namespace {

Status ldlt_status(const FrontPlan& P, const FactorContext& ctx, NumericFactor& F) {
  const LdltFactorState& st = ctx.ldlt;
  F.min_pivot_ratio = 0.0;
  F.inertia = InertiaCounts{st.totals.positive, st.totals.negative, st.totals.zero};
  F.perturbed_pivots = st.totals.perturbed;
  F.below_threshold_pivots = st.totals.below_threshold;
  F.two_by_two_pivots = st.totals.two_by_two;
  F.delayed_pivots = 0;
  // Guaranteed: no pivot perturbed, and every pivot passed a threshold test
  // with u >= 0.01 (growth of L bounded by 100), so that the computed
  // factorisation is that of a nearby matrix (docs/LDLT.md).
  F.inertia_guaranteed = F.perturbed_pivots == 0 && F.below_threshold_pivots == 0 && st.params.u >= 0.01;
  // A failed GPU task (CUDA, cuBLAS, or unexpected buffers) leaves its
  // front unfactorised and stops the later tasks: never a success.
  if (!ctx.device_error.empty())
    return Status::error(StatusCode::runtime_error, "GPU task failed: " + ctx.device_error);
  const std::vector<idx_t>& perm = P.symbolic->perm;
  char buf[400];
  if (st.unsupported_task)
    return Status::error(StatusCode::runtime_error,
                         "LDLᵀ needs a task graph without tiled fronts (tiled LDLᵀ is not "
                         "implemented): build it with GraphOptions::tile = false");
  const idx_t bad = st.first_nonfinite_column >= 0 ? st.first_nonfinite_column : ctx.fail_column;
  if (bad >= 0) {
    const double piv = st.first_nonfinite_column >= 0 ? st.totals.nonfinite_pivot : ctx.fail_pivot;
    std::snprintf(buf, sizeof buf,
                  "LDLᵀ: pivot %.6g at column %lld (1-based, original numbering) is not finite: "
                  "the matrix is too badly scaled for double precision",
                  piv, static_cast<long long>(perm[bad] + 1));
    Status s = Status::error(StatusCode::runtime_error, buf);
    s.column = perm[bad];
    s.pivot = piv;
    return s;
  }
  if (st.first_zero_column >= 0) {
    const idx_t col = perm[st.first_zero_column];
    std::snprintf(buf, sizeof buf,
                  "matrix is singular: %lld zero pivot(s), the first at column %lld (1-based, "
                  "original numbering; elimination step %lld of %lld); inertia (%lld, %lld, %lld)",
                  static_cast<long long>(st.totals.zero), static_cast<long long>(col + 1),
                  static_cast<long long>(st.totals.first_zero + 1), static_cast<long long>(P.n),
                  static_cast<long long>(F.inertia.positive),
                  static_cast<long long>(F.inertia.negative), static_cast<long long>(F.inertia.zero));
    Status s = Status::error(StatusCode::singular, buf);
    s.column = col;
    s.pivot = 0.0;
    return s;
  }
  return Status::success();
}

}  // namespace

Status context_status(const FrontPlan& P, const FactorContext& ctx, NumericFactor& F) {
  if (ctx.ldlt.active) return ldlt_status(P, ctx, F);
  F.min_pivot_ratio = ctx.min_pivot_ratio;
  if (!ctx.device_error.empty())
    return Status::error(StatusCode::runtime_error, "GPU task failed: " + ctx.device_error);
  F.inertia = InertiaCounts{};
  if (ctx.fail_column < 0) F.inertia.positive = P.n;
  if (ctx.fail_column < 0) return Status::success();
  const idx_t col = P.symbolic->perm[ctx.fail_column];
  char buf[320];
  std::snprintf(buf, sizeof buf,
                "matrix is not positive definite: pivot %.6g at column %lld (1-based, original "
                "numbering; elimination step %lld of %lld); a pivot must be finite and > %.3g "
                "times |a_jj|",
                ctx.fail_pivot, static_cast<long long>(col + 1),
                static_cast<long long>(ctx.fail_column + 1), static_cast<long long>(P.n),
                ctx.pivot_tol);
  Status st = Status::error(StatusCode::not_positive_definite, buf);
  st.column = col;
  st.pivot = ctx.fail_pivot;
  return st;
}

namespace {

// A double is not finite iff its 11 exponent bits are all ones. The tests
// below use integer operations only (no floating-point exception on a NaN
// or an infinity) and OR their flags without a branch.

/// 1 when the double with these bits is not finite, else 0.
inline std::uint64_t nonfinite_bit(std::uint64_t bits) {
  return static_cast<std::uint64_t>((bits & 0x7ff0000000000000ULL) == 0x7ff0000000000000ULL);
}

#if defined(__SSE2__)
/// The exponent bits of two doubles, in the high 32-bit half of each lane.
inline __m128i exponent_mask() { return _mm_set_epi32(0x7ff00000, 0, 0x7ff00000, 0); }

/// The exponents of two doubles compared with all ones, on 32-bit halves:
/// the high half of a lane is all ones where its double is not finite (the
/// low halves compare 0 == 0: any_nonfinite masks them away, once for a
/// whole OR of these).
inline __m128i exponent_hits(__m128d x, __m128i m) {
  return _mm_cmpeq_epi32(_mm_and_si128(_mm_castpd_si128(x), m), m);
}

/// Whether an OR of exponent_hits flags a double that is not finite.
inline bool any_nonfinite(__m128i hits, __m128i m) { return _mm_movemask_epi8(_mm_and_si128(hits, m)) != 0; }
#endif

}  // namespace

bool copy_values_finite(const double* src, std::size_t n, double* dst, bool streaming) {
  std::uint64_t nonfinite = 0;
  std::size_t p = 0;
  auto one = [&](std::size_t q) {  // the scalar step: the head and tail of the streamed path, or everything
    std::uint64_t bits;
    std::memcpy(&bits, src + q, sizeof bits);
    std::memcpy(dst + q, &bits, sizeof bits);
    nonfinite |= nonfinite_bit(bits);
  };
#if defined(__SSE2__)
  // streaming: the bulk with non-temporal stores, which skip the read for
  // ownership of every destination line (about a third less memory
  // traffic than a cached copy) but leave dst out of the caches.
  if (streaming && n >= 4096) {
    for (; p < n && (reinterpret_cast<std::uintptr_t>(dst + p) & 15u) != 0; ++p) one(p);
    const __m128i m = exponent_mask();
    __m128i acc = _mm_setzero_si128();
    for (; p + 4 <= n; p += 4) {
      const __m128d a = _mm_loadu_pd(src + p), b = _mm_loadu_pd(src + p + 2);
      _mm_stream_pd(dst + p, a);
      _mm_stream_pd(dst + p + 2, b);
      acc = _mm_or_si128(acc, _mm_or_si128(exponent_hits(a, m), exponent_hits(b, m)));
    }
    _mm_sfence();  // the streamed stores are globally visible before anyone reads dst
    nonfinite |= static_cast<std::uint64_t>(any_nonfinite(acc, m));
  }
#endif
  for (; p < n; ++p) one(p);
  return nonfinite == 0;
}

bool values_finite(const double* v, std::size_t n) {
  std::uint64_t nonfinite = 0;
  std::size_t p = 0;
#if defined(__SSE2__)
  // Eight doubles a step, two accumulators (independent dependency
  // chains). check_values' former scalar loop, which the compiler did not
  // vectorise, took 210 us for activsg2000_hykkt_10's 154k values on the
  // build machine; this loop 22-38 us.
  const __m128i m = exponent_mask();
  __m128i acc0 = _mm_setzero_si128(), acc1 = _mm_setzero_si128();
  for (; p + 8 <= n; p += 8) {
    acc0 = _mm_or_si128(acc0, _mm_or_si128(exponent_hits(_mm_loadu_pd(v + p), m), exponent_hits(_mm_loadu_pd(v + p + 2), m)));
    acc1 = _mm_or_si128(acc1,
                        _mm_or_si128(exponent_hits(_mm_loadu_pd(v + p + 4), m), exponent_hits(_mm_loadu_pd(v + p + 6), m)));
  }
  nonfinite |= static_cast<std::uint64_t>(any_nonfinite(_mm_or_si128(acc0, acc1), m));
#endif
  for (; p < n; ++p) {
    std::uint64_t bits;
    std::memcpy(&bits, v + p, sizeof bits);
    nonfinite |= nonfinite_bit(bits);
  }
  return nonfinite == 0;
}

Status check_values(const FrontPlan& P, const CscMatrix& A) {
  if (A.n != P.n || A.nnz() != P.nnz_a)
    return Status::error(StatusCode::invalid_argument,
                         "matrix (n=" + std::to_string(A.n) + ", nnz=" + std::to_string(A.nnz()) +
                             ") does not match the analysed pattern (n=" + std::to_string(P.n) +
                             ", nnz=" + std::to_string(P.nnz_a) + ")");
  // The usual case (every value finite) in one branch-free pass over the
  // flat array (values_finite); the column loop below only names the first
  // bad entry.
  if (values_finite(A.values.data(), A.values.size())) return Status::success();
  for (idx_t j = 0; j < A.n; ++j)
    for (idx_t p = A.colptr[j]; p < A.colptr[j + 1]; ++p)
      if (!std::isfinite(A.values[p]))
        return Status::error(StatusCode::invalid_argument,
                             "entry (" + std::to_string(A.rowind[p] + 1) + ", " +
                                 std::to_string(j + 1) + ") of A is not finite");
  return Status::success();
}

}  // namespace starfront
