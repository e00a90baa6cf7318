#include "cpu/small_dense.hpp"

namespace starfront {

// The kernel exists for x86-64-v4 (AVX-512) only, compiled with GCC's
// target attribute and chosen at run time: without AVX-512, GCC lowers the
// 8-double vectors through the stack and the kernel was 2-8x slower than
// OpenBLAS's DTRSM (x86-64-v3 and baseline builds, 40x8 to 400x64), so
// those CPUs (and Clang builds) keep DTRSM.
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
#define STARFRONT_SMALL_TRSM_V4 1
#endif

#ifdef STARFRONT_SMALL_TRSM_V4
namespace {

/// 8 doubles (one AVX-512 register), unaligned, allowed to alias the double
/// arrays it is loaded from (GCC vector extension).
typedef double v8d __attribute__((vector_size(64), aligned(8), may_alias));

// Macros, not functions: a function returning v8d, compiled for the
// baseline, would pass it in memory (GCC's -Wpsabi) wherever not inlined.
#define load8(p) (*reinterpret_cast<const v8d*>(p))
#define store8(p, v) (*reinterpret_cast<v8d*>(p) = (v))

__attribute__((target("arch=x86-64-v4"))) void trsm_v4(idx_t mc, idx_t k, const double* L, idx_t ldl, double* X,
                                                        idx_t ldx) {
  double dinv[kSmallTrsmMaxK];
  for (idx_t j = 0; j < k; ++j) dinv[j] = 1.0 / L[j + j * ldl];
  idx_t r0 = 0;
  // 32 rows at a time: four independent accumulators hide the FMA latency
  // of the chain over i.
  for (; r0 + 32 <= mc; r0 += 32) {
    for (idx_t j = 0; j < k; ++j) {
      double* xj = X + r0 + j * ldx;
      v8d a0 = load8(xj), a1 = load8(xj + 8), a2 = load8(xj + 16), a3 = load8(xj + 24);
      for (idx_t i = 0; i < j; ++i) {
        const double l = L[j + i * ldl];
        const double* xi = X + r0 + i * ldx;
        a0 -= l * load8(xi);
        a1 -= l * load8(xi + 8);
        a2 -= l * load8(xi + 16);
        a3 -= l * load8(xi + 24);
      }
      const double d = dinv[j];
      store8(xj, a0 * d);
      store8(xj + 8, a1 * d);
      store8(xj + 16, a2 * d);
      store8(xj + 24, a3 * d);
    }
  }
  for (; r0 + 8 <= mc; r0 += 8) {
    for (idx_t j = 0; j < k; ++j) {
      double* xj = X + r0 + j * ldx;
      v8d a = load8(xj);
      for (idx_t i = 0; i < j; ++i) a -= L[j + i * ldl] * load8(X + r0 + i * ldx);
      store8(xj, a * dinv[j]);
    }
  }
  if (r0 < mc) {  // the last 1..7 rows, through an 8-row copy padded with zeros
    const idx_t nr = mc - r0;
    double buf[8 * kSmallTrsmMaxK];
    for (idx_t j = 0; j < k; ++j)
      for (idx_t r = 0; r < 8; ++r) buf[r + 8 * j] = r < nr ? X[r0 + r + j * ldx] : 0.0;
    for (idx_t j = 0; j < k; ++j) {
      v8d a = load8(buf + 8 * j);
      for (idx_t i = 0; i < j; ++i) a -= L[j + i * ldl] * load8(buf + 8 * i);
      store8(buf + 8 * j, a * dinv[j]);
    }
    for (idx_t j = 0; j < k; ++j)
      for (idx_t r = 0; r < nr; ++r) X[r0 + r + j * ldx] = buf[r + 8 * j];
  }
}

}  // namespace
#endif

bool small_trsm_supported() {
#ifdef STARFRONT_SMALL_TRSM_V4
  static const bool v4 = __builtin_cpu_supports("x86-64-v4");
  return v4;
#else
  return false;
#endif
}

bool trsm_right_lower_trans_small(idx_t mc, idx_t k, const double* L, idx_t ldl, double* X, idx_t ldx) {
  if (k < 0 || k > kSmallTrsmMaxK || mc < 0 || !small_trsm_supported()) return false;
  if (mc == 0 || k == 0) return true;
#ifdef STARFRONT_SMALL_TRSM_V4
  trsm_v4(mc, k, L, ldl, X, ldx);
#endif
  return true;
}

}  // namespace starfront
