// CUDA kernels of the LDLᵀ front task (see front_ldlt_kernels.hpp). The panel
// kernel is a transcription of ldlt_panel (codelets/cpu/front_ldlt.cpp): keep
// the two in step. Compiled with -fmad=false (codelets/CMakeLists.txt), and
// every floating-point operation of the panel kernel is written with the
// round-to-nearest intrinsics (__dmul_rn, __dadd_rn, __dsub_rn, __ddiv_rn),
// which nvcc never contracts: the results are those of the CPU code compiled
// without FMA contraction (-ffp-contract=off on front_ldlt.cpp).
#include "cuda/front_ldlt_kernels.hpp"

#include <cfloat>

namespace starfront {
namespace {

using ll = long long;
constexpr int kPanelThreads = 512;  ///< threads of the one-block panel kernel
constexpr int kWarps = kPanelThreads / 32;

__device__ __forceinline__ double mul(double a, double b) { return __dmul_rn(a, b); }
__device__ __forceinline__ double add(double a, double b) { return __dadd_rn(a, b); }
__device__ __forceinline__ double sub(double a, double b) { return __dsub_rn(a, b); }
__device__ __forceinline__ double dvd(double a, double b) { return __ddiv_rn(a, b); }
/// std::max(a, b) of the CPU code: (a < b) ? b : a.
__device__ __forceinline__ double cmax(double a, double b) { return a < b ? b : a; }

/// Entry (i, j) of the symmetric active panel (lower triangle stored), i or j < k.
__device__ __forceinline__ double& at(double* L, ll m, ll i, ll j) {
  return i >= j ? L[i + j * m] : L[j + i * m];
}

/// a·c − b² without overflow in b² (det2 of the CPU code).
__device__ __forceinline__ double det2(double a, double b, double c) {
  return b != 0.0 ? mul(b, sub(mul(dvd(a, b), c), b)) : mul(a, c);
}

/// Shared scratch of the block reductions.
struct Scratch {
  double v[kWarps];
  double w[kWarps];
  ll r[kWarps];
  double bv, bw;
  ll br;
};

/// Combines (v, r) pairs: the larger v; on a tie the smaller row (the CPU
/// scans rows upwards and keeps the first strict maximum); r = -1 loses.
__device__ __forceinline__ void better(double& v, ll& r, double v2, ll r2) {
  if (v2 > v || (v2 == v && r2 >= 0 && (r < 0 || r2 < r))) {
    v = v2;
    r = r2;
  }
}

/// Warp-wide step of block_reduce: lane 0 ends with the warp's (max pair,
/// plain max), ties going to the smaller row (better).
__device__ void warp_reduce(double& v, ll& r, double& w) {
  for (int o = 16; o > 0; o >>= 1) {
    const double v2 = __shfl_down_sync(0xffffffffu, v, o);
    const ll r2 = __shfl_down_sync(0xffffffffu, r, o);
    const double w2 = __shfl_down_sync(0xffffffffu, w, o);
    better(v, r, v2, r2);
    w = cmax(w, w2);
  }
}

/// Block-wide reduction of (max-with-argmin-row pair, plain max); every
/// thread gets the result. Called by all threads of the block.
__device__ void block_reduce(Scratch& s, double& v, ll& r, double& w) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  warp_reduce(v, r, w);
  if (lane == 0) {
    s.v[warp] = v;
    s.r[warp] = r;
    s.w[warp] = w;
  }
  __syncthreads();
  if (warp == 0) {
    v = lane < kWarps ? s.v[lane] : 0.0;
    r = lane < kWarps ? s.r[lane] : -1;
    w = lane < kWarps ? s.w[lane] : 0.0;
    warp_reduce(v, r, w);
    if (lane == 0) {
      s.bv = v;
      s.br = r;
      s.bw = w;
    }
  }
  __syncthreads();
  v = s.bv;
  r = s.br;
  w = s.bw;
}

/// Block-wide minimum of x (every thread gets it).
__device__ ll block_min(Scratch& s, ll x) {
  double v = 0.0, w = 0.0;
  // Reuse the pair reduction: equal v everywhere, so the smallest r >= 0 wins.
  ll r = x;
  block_reduce(s, v, r, w);
  return r;
}

struct ColMax {
  double all, fs;
  ll r;
};

/// col_max of the CPU code: largest |entry| of active column j over rows
/// p..k-1 except j and skip (fs, with its first row r), and over every active
/// row including the contribution-block rows (all).
__device__ ColMax col_max(Scratch& s, double* L, ll m, ll k, ll p, ll j, ll skip) {
  double fs = 0.0, cb = 0.0;
  ll r = -1;
  for (ll i = p + threadIdx.x; i < k; i += kPanelThreads) {
    if (i == j || i == skip) continue;
    const double v = fabs(at(L, m, i, j));
    if (v > fs) {
      fs = v;
      r = i;
    }
  }
  const double* cj = L + j * m;
  for (ll i = k + threadIdx.x; i < m; i += kPanelThreads) cb = cmax(cb, fabs(cj[i]));
  block_reduce(s, fs, r, cb);
  return {cmax(fs, cb), fs, r};
}

/// Symmetric interchange of positions i and j (< k), as sym_swap.
__device__ void sym_swap(double* L, ll m, ll i, ll j) {
  if (i > j) {
    const ll t = i;
    i = j;
    j = t;
  }
  auto swp = [](double& a, double& b) {
    const double t = a;
    a = b;
    b = t;
  };
  for (ll c = threadIdx.x; c < i; c += kPanelThreads) swp(L[i + c * m], L[j + c * m]);
  if (threadIdx.x == 0) swp(L[i + i * m], L[j + j * m]);
  for (ll c = i + 1 + threadIdx.x; c < j; c += kPanelThreads) swp(L[c + i * m], L[j + c * m]);
  for (ll r = j + 1 + threadIdx.x; r < m; r += kPanelThreads) swp(L[r + i * m], L[r + j * m]);
  __syncthreads();
}

enum Kind { kZero, kOne, kTwo, kPerturb };
struct Choice {
  int kind;
  ll j, r;
  bool below;
};

/// choose_pivot of the CPU code (Bunch–Kaufman-type search with threshold u).
__device__ Choice choose_pivot(Scratch& s, double* L, ll m, ll k, ll p, const double* sc,
                               const GpuLdltParams& prm) {
  const double u = prm.u;
  Choice best{kOne, -1, -1, false};
  double best_growth = __longlong_as_double(0x7ff0000000000000LL);  // +inf
  auto consider = [&](Choice c, double growth) {
    if (growth < best_growth) {
      best_growth = growth;
      best = c;
      best.below = true;
    }
  };
  for (ll j = p; j < k; ++j) {
    const double ajj = at(L, m, j, j), dj = fabs(ajj);
    const ColMax cj = col_max(s, L, m, k, p, j, -1);
    if (cmax(dj, cj.all) <= mul(prm.zero_rel, sc[j])) return {kZero, j, -1, false};
    if (dj > 0 && dj >= mul(u, cj.all)) return {kOne, j, -1, false};
    if (dj > mul(prm.tau, sc[j])) consider({kOne, j, -1, false}, dvd(cj.all, dj));
    if (cj.r < 0 || cj.fs == 0.0) continue;
    const ll r = cj.r;
    const double arr = at(L, m, r, r), dr = fabs(arr);
    const ColMax cr = col_max(s, L, m, k, p, r, -1);
    if (dr > 0 && dr >= mul(u, cr.all)) return {kOne, r, -1, false};
    const double gj = col_max(s, L, m, k, p, j, r).all, gr = col_max(s, L, m, k, p, r, j).all;
    const double b = at(L, m, r, j), det = fabs(det2(ajj, b, arr));
    if (!(det > 0) || !isfinite(det)) continue;
    const double ab = fabs(b);
    const double growth = dvd(cmax(add(mul(dr, gj), mul(ab, gr)), add(mul(ab, gj), mul(dj, gr))), det);
    if (growth <= dvd(1.0, u)) return {kTwo, j, r, false};
    if (det > mul(mul(mul(prm.tau, sc[j]), prm.tau), sc[r])) consider({kTwo, j, r, false}, growth);
  }
  if (isfinite(best_growth)) return best;
  return {kPerturb, p, -1, false};
}

/// choose_natural of the CPU code (quasi-definite: no pivoting).
__device__ Choice choose_natural(Scratch& s, double* L, ll m, ll k, ll p, const double* sc,
                                 const GpuLdltParams& prm) {
  const double dp = fabs(at(L, m, p, p)), zt = mul(prm.zero_rel, sc[p]);
  const double cm = col_max(s, L, m, k, p, p, -1).all;
  if (cmax(dp, cm) <= zt) return {kZero, p, -1, false};
  if (dp <= zt) return {kPerturb, p, -1, false};
  return {kOne, p, -1, dp < mul(prm.u, cm)};
}

/// First entry (linear index, lower part of the panel) that is not finite, or -1.
__device__ ll first_nonfinite(Scratch& s, const double* L, ll m, ll k) {
  ll found = -1;
  for (ll t = threadIdx.x; t < m * k; t += kPanelThreads) {
    const ll j = t / m, i = t - j * m;
    if (i >= j && !isfinite(L[t])) {
      found = t;
      break;  // t grows: the first one of this thread
    }
  }
  return block_min(s, found);
}

__global__ void __launch_bounds__(kPanelThreads)
    ldlt_panel_kernel(double* L, ll m, ll k, GpuLdltParams prm, double* sc, ll* perm, signed char* pivsize,
                      double* d_off, GpuLdltCounts* out) {
  __shared__ Scratch s;
  const bool lead = threadIdx.x == 0;
  GpuLdltCounts c{0, 0, 0, 0, 0, 0, -1, -1, 0.0};
  for (ll i = threadIdx.x; i < k; i += kPanelThreads) {
    perm[i] = i;
    d_off[i] = 0.0;
    pivsize[i] = 1;
  }
  __syncthreads();
  if (const ll t = first_nonfinite(s, L, m, k); t >= 0) {
    c.first_nonfinite = t / m;
    c.nonfinite_pivot = L[t];
    if (lead) *out = c;
    return;
  }
  auto bring = [&](ll from, ll to) {
    if (from == to) return;
    sym_swap(L, m, from, to);
    if (lead) {
      const double t = sc[from];
      sc[from] = sc[to];
      sc[to] = t;
      const ll q = perm[from];
      perm[from] = perm[to];
      perm[to] = q;
    }
    __syncthreads();
  };
  for (ll p = 0; p < k;) {
    const Choice ch = prm.pivoting == 1 ? choose_natural(s, L, m, k, p, sc, prm)
                                        : choose_pivot(s, L, m, k, p, sc, prm);
    __syncthreads();  // every thread has read what the choice needed
    double* c0 = L + p * m;
    if (ch.kind == kTwo) {
      const ll r = ch.r == p ? ch.j : ch.r;
      bring(ch.j, p);
      bring(r, p + 1);
      double* c1 = c0 + m;
      const double a = c0[p], b = c0[p + 1], cc = c1[p + 1];
      const double det = det2(a, b, cc);
      if (det < 0) {
        ++c.positive;
        ++c.negative;
      } else if (add(a, cc) > 0) {
        c.positive += 2;
      } else {
        c.negative += 2;
      }
      if (!isfinite(det) && c.first_nonfinite < 0) {
        c.first_nonfinite = p;
        c.nonfinite_pivot = det;
      }
      const double ia = dvd(cc, det), ib = dvd(-b, det), ic = dvd(a, det);
      const ll nq = k - p - 2, nr = m - p - 2;
      for (ll t = threadIdx.x; t < nq * nr; t += kPanelThreads) {
        const ll q = p + 2 + t / nr, i = p + 2 + t % nr;
        if (i < q) continue;
        const double w0 = c0[q], w1 = c1[q];
        const double l0 = add(mul(w0, ia), mul(w1, ib)), l1 = add(mul(w0, ib), mul(w1, ic));
        if (l0 == 0.0 && l1 == 0.0) continue;
        double& x = L[i + q * m];
        x = sub(x, add(mul(l0, c0[i]), mul(l1, c1[i])));
      }
      __syncthreads();
      for (ll i = p + 2 + threadIdx.x; i < m; i += kPanelThreads) {
        const double x0 = c0[i], x1 = c1[i];
        c0[i] = add(mul(x0, ia), mul(x1, ib));
        c1[i] = add(mul(x0, ib), mul(x1, ic));
      }
      if (lead) {
        c0[p + 1] = 0.0;
        d_off[p] = b;
        pivsize[p] = 2;
        pivsize[p + 1] = 0;
      }
      ++c.two_by_two;
      if (ch.below) ++c.below_threshold;
      p += 2;
      __syncthreads();
      continue;
    }
    bring(ch.j, p);
    if (ch.kind == kZero) {
      for (ll i = p + threadIdx.x; i < m; i += kPanelThreads) c0[i] = 0.0;
      ++c.zero;
      if (c.first_zero < 0) c.first_zero = p;
      ++p;
      __syncthreads();
      continue;
    }
    double d = c0[p];
    if (ch.kind == kPerturb) {
      const double t = cmax(mul(prm.tau, sc[p]), DBL_MIN);
      d = d < 0 ? -t : t;
      ++c.perturbed;
    } else if (ch.below) {
      ++c.below_threshold;
    }
    if (!isfinite(d)) {
      if (c.first_nonfinite < 0) {
        c.first_nonfinite = p;
        c.nonfinite_pivot = d;
      }
    } else if (d > 0) {
      ++c.positive;
    } else {
      ++c.negative;
    }
    __syncthreads();  // every thread has read c0[p]
    if (lead) c0[p] = d;
    const double inv = dvd(1.0, d);
    const ll nc = k - p - 1, nr = m - p - 1;
    for (ll t = threadIdx.x; t < nc * nr; t += kPanelThreads) {
      const ll cidx = p + 1 + t / nr, i = p + 1 + t % nr;
      if (i < cidx) continue;
      const double lc = mul(c0[cidx], inv);
      if (lc == 0.0) continue;
      double& x = L[i + cidx * m];
      x = sub(x, mul(lc, c0[i]));
    }
    __syncthreads();
    for (ll i = p + 1 + threadIdx.x; i < m; i += kPanelThreads) c0[i] = mul(c0[i], inv);
    ++p;
    __syncthreads();
  }
  if (c.first_nonfinite < 0) {
    const ll t = first_nonfinite(s, L, m, k);
    if (t >= 0) {
      c.first_nonfinite = t / m;
      c.nonfinite_pivot = L[t];
    }
  }
  if (lead) *out = c;
}

__global__ void assemble_kernel(double* L, const double* values, const ll* a_src, const ll* a_dst, ll na) {
  for (ll q = blockIdx.x * static_cast<ll>(blockDim.x) + threadIdx.x; q < na;
       q += static_cast<ll>(gridDim.x) * blockDim.x)
    L[a_dst[q]] += values[a_src[q]];
}

/// Threads of extend_add_kernel's blocks.
constexpr int kExtendAddThreads = 256;

/// One child's extend-add: block b takes the child's CB columns b and
/// mcc − 1 − b (mcc + 1 entries of the lower triangle together; for an odd
/// order the middle column, (mcc + 1)/2 entries, alone),
/// threads over the rows ii ≥ jj of each, with kBatch rows a thread in flight
/// (every read before the writes: rel is strictly increasing, so the rows'
/// targets are distinct). The grid strides over b for mcc > 2·gridDim.x.
__global__ void __launch_bounds__(kExtendAddThreads)
    extend_add_kernel(double* __restrict__ L, ll m, ll k, double* __restrict__ cb, const double* __restrict__ child,
                      ll mcc, const ll* __restrict__ rel) {
  constexpr int kBatch = 4;
  const ll ldcb = m - k;
  for (ll b = blockIdx.x; 2 * b < mcc; b += gridDim.x) {
    for (int side = 0; side < 2; ++side) {
      const ll jj = side == 0 ? b : mcc - 1 - b;
      if (side == 1 && jj == b) break;  // the middle column of an odd order, taken once
      const ll pj = rel[jj];
      // Column pj of the front, indexed by the front row pi >= pj less off
      // (the panel's rows from 0, the CB's from k).
      double* dst = pj < k ? L + pj * m : cb + (pj - k) * ldcb;
      const ll off = pj < k ? 0 : k;
      const double* src = child + jj * mcc;
      for (ll i0 = jj + threadIdx.x; i0 < mcc; i0 += kBatch * kExtendAddThreads) {
        ll pi[kBatch];
        double v[kBatch], d[kBatch];
#pragma unroll
        for (int q = 0; q < kBatch; ++q) {
          const ll ii = i0 + q * kExtendAddThreads;
          pi[q] = ii < mcc ? rel[ii] - off : -1;
          v[q] = ii < mcc ? src[ii] : 0.0;
        }
#pragma unroll
        for (int q = 0; q < kBatch; ++q) d[q] = pi[q] >= 0 ? dst[pi[q]] : 0.0;
#pragma unroll
        for (int q = 0; q < kBatch; ++q)
          if (pi[q] >= 0) dst[pi[q]] = d[q] + v[q];
      }
    }
  }
}

__global__ void w_kernel(const double* L, ll m, ll k, const signed char* pivsize, const double* d_off,
                         double* W) {
  const ll mc = m - k;
  const double* L21 = L + k;
  for (ll t = blockIdx.x * static_cast<ll>(blockDim.x) + threadIdx.x; t < mc * k;
       t += static_cast<ll>(gridDim.x) * blockDim.x) {
    const ll p = t / mc, i = t - p * mc;
    const double* lp = L21 + p * m;
    if (pivsize[p] == 1) {
      W[t] = mul(lp[i], L[p + p * m]);
    } else if (pivsize[p] == 2) {
      const double a = L[p + p * m], b = d_off[p], c = L[(p + 1) + (p + 1) * m];
      const double x0 = lp[i], x1 = lp[i + m];
      W[t] = add(mul(x0, a), mul(x1, b));
      W[t + mc] = add(mul(x0, b), mul(x1, c));
    }
  }
}

unsigned grid_for(ll n) {
  const ll blocks = (n + 255) / 256;
  return static_cast<unsigned>(blocks < 1 ? 1 : (blocks > 65535 ? 65535 : blocks));
}

}  // namespace

cudaError_t launch_ldlt_assemble(double* L, long long m, long long k, double* cb, long long mc,
                                 const double* values, const long long* a_src, const long long* a_dst,
                                 long long na, cudaStream_t stream) {
  cudaError_t e = cudaMemsetAsync(L, 0, sizeof(double) * static_cast<size_t>(m * k), stream);
  if (e == cudaSuccess && mc > 0)
    e = cudaMemsetAsync(cb, 0, sizeof(double) * static_cast<size_t>(mc * mc), stream);
  if (e != cudaSuccess) return e;
  if (na > 0) assemble_kernel<<<grid_for(na), 256, 0, stream>>>(L, values, a_src, a_dst, na);
  return cudaGetLastError();
}

cudaError_t launch_ldlt_extend_add(double* L, long long m, long long k, double* cb, const double* child,
                                   long long mcc, const long long* rel, cudaStream_t stream) {
  if (mcc <= 0) return cudaSuccess;
  const ll pairs = (mcc + 1) / 2;
  extend_add_kernel<<<static_cast<unsigned>(pairs < 65535 ? pairs : 65535), kExtendAddThreads, 0, stream>>>(
      L, m, k, cb, child, mcc, rel);
  return cudaGetLastError();
}

cudaError_t launch_ldlt_panel(double* L, long long m, long long k, const GpuLdltParams& prm, double* sc,
                              long long* perm, signed char* pivsize, double* d_off, GpuLdltCounts* counts,
                              cudaStream_t stream) {
  ldlt_panel_kernel<<<1, kPanelThreads, 0, stream>>>(L, m, k, prm, sc, perm, pivsize, d_off, counts);
  return cudaGetLastError();
}

cudaError_t launch_ldlt_w(const double* L, long long m, long long k, const signed char* pivsize,
                          const double* d_off, double* W, cudaStream_t stream) {
  const ll mc = m - k;
  if (mc <= 0 || k <= 0) return cudaSuccess;
  w_kernel<<<grid_for(mc * k), 256, 0, stream>>>(L, m, k, pivsize, d_off, W);
  return cudaGetLastError();
}

}  // namespace starfront
