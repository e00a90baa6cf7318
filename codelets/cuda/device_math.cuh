// Device-side helpers of the fused kernel (fused_subtree.cu) that the
// latency benchmark (bench/gpu_latency_bench.cu) also times: the serial
// column chain's reciprocal square roots and the completion flags' loads
// and stores.
#pragma once

#include <cuda_runtime.h>

namespace starfront {

/// Device-scope acquire load of a global int (a completion flag): the
/// writes its releaser made before the release are visible after it.
__device__ __forceinline__ int load_acquire(const int* p) {
  int v;
  asm volatile("ld.acquire.gpu.global.b32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}

/// Device-scope release store of a global int (a completion flag): the
/// writes made before it (by this thread, and by the block after a barrier)
/// are visible to whoever acquires the value.
__device__ __forceinline__ void store_release(int* p, int v) {
  asm volatile("st.release.gpu.global.b32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}

/// The hardware's approximation of 1/sqrt(d) (rsqrt.approx.ftz.f64: a
/// subnormal d is flushed to zero).
__device__ __forceinline__ double rsqrt_approx(double d) {
  double r0;
  asm("rsqrt.approx.ftz.f64 %0, %1;" : "=d"(r0) : "d"(d));
  return r0;
}

/// One third-order correction of an approximation r0 of 1/sqrt(d):
/// r0 + r0·e·(1/2 + 3/8·e) with e = 1 - d·r0² (the refinement CUDA's
/// rsqrt() applies on its fast path).
__device__ __forceinline__ double rsqrt_refine(double d, double r0) {
  const double e = fma(-d, r0 * r0, 1.0);
  return fma(fma(e, 0.375, 0.5), r0 * e, r0);
}

/// 1/sqrt(d) without a branch, for the diagonal block's serial chain: the
/// hardware's approximation of the leading bits (rsqrt.approx.ftz.f64)
/// and one third-order correction, r = r0 + r0·e·(1/2 + 3/8·e) with
/// e = 1 - d·r0² (the refinement CUDA's rsqrt() applies on its fast path,
/// which then branches to a slow path for subnormal, zero, infinite,
/// negative and NaN arguments). Here, with selects and not branches, a
/// subnormal d is scaled by 2^128 first (then r by 2^64) and +inf gives 0,
/// as rsqrt(); d <= 0 and NaN give NaN or inf (the caller has flagged those
/// pivots already).
__device__ __forceinline__ double rsqrt_chain(double d) {
  const bool sub = d < 2.2250738585072014e-308;  // DBL_MIN
  const double ds = sub ? d * 3.4028236692093846e38 : d;  // 2^128
  const double r = rsqrt_refine(ds, rsqrt_approx(ds));
  return isinf(d) ? 0.0 : sub ? r * 1.8446744073709552e19 : r;  // 2^64
}

/// rsqrt_chain(d), bit for bit, with a shorter dependency chain for a
/// normal finite d: the approximation and the correction are taken on d
/// itself, and rsqrt_chain's pre-scaling and selects (subnormal, +inf,
/// d <= 0, NaN) are taken beside them and chosen by one select at the end.
/// Latencies: bench/gpu_latency_bench.cu (bench/README.md, session 29).
__device__ __forceinline__ double rsqrt_fast(double d) {
  const double r = rsqrt_refine(d, rsqrt_approx(d));
  const bool normal = d >= 2.2250738585072014e-308 && d <= 1.7976931348623157e308;  // DBL_MIN, DBL_MAX
  return normal ? r : rsqrt_chain(d);
}

}  // namespace starfront
