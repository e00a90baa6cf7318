// The fused GPU subtree kernel: see fused_subtree_kernel.hpp for the launch
// shape, the deadlock-freedom argument, the extend-add ownership and the
// pivot test. Device functions are templates on the warps per block.
#include "cuda/fused_subtree_kernel.hpp"
#include "cuda/device_math.cuh"

#include <atomic>
#include <mutex>

namespace starfront {
namespace {


/// A front of order m with k pivots. In shared memory: its lower triangle,
/// packed by columns (column c holds rows c..m-1 and starts at
/// c·m - c(c-1)/2). In global memory: columns j < k in P (leading dimension
/// ldp = m: the factor panel), columns j >= k (the CB) in C (leading
/// dimension ldc = m - k, C(0,0) is the front's (k,k)).
template <bool kPacked>
struct FrontView {
  double* P;
  double* C;
  long long ldp, ldc;
  int m, k;
  /// Column c of the front, indexed by the front row i >= c.
  __device__ __forceinline__ double* col(int c) const {
    if (kPacked) return P + (c * (2 * m - c - 1)) / 2;  // c·m - c(c+1)/2 (m <= 239: fits in int)
    return c < k ? P + c * ldp : C + (c - k) * ldc - k;
  }
};

/// The GPU's nanosecond clock (%globaltimer).
__device__ __forceinline__ unsigned long long global_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

/// Trace stamp i of front q (FusedLaunch::trace; nothing when it is null).
__device__ __forceinline__ void stamp(const FusedLaunch& p, int q, int i) {
  if (p.trace && threadIdx.x == 0) p.trace[static_cast<long long>(q) * kFusedTracePoints + i] = global_ns();
}

/// Marks front q complete (1) or failed/skipped (2): barrier, then a
/// device-scope release by thread 0, so every thread's writes are visible to
/// whoever acquires the flag.
__device__ void publish(const FusedLaunch& p, int q, int v) {
  __syncthreads();
  if (threadIdx.x == 0) {
    if (p.fences) __threadfence();
    store_release(fused_done_flags(p.status) + q, v);
  }
}

/// Waits for the children of front f (every child has a smaller ticket: see
/// the header), thread c polling child c (the flags' memory latencies
/// overlap), with device-scope acquire loads before the barrier (and a
/// fence with FusedLaunch::fences). Returns, to every thread, whether all
/// completed (a block-wide AND in the barrier).
__device__ bool wait_children(const FusedLaunch& p, const FusedFront& f) {
  int ok = 1;
  const int* done = fused_done_flags(p.status);
  for (long long c = f.child_begin + threadIdx.x; c < f.child_end; c += blockDim.x) {
    const int t = __ldg(&p.children[c].ticket);
    int v;
    while ((v = load_acquire(done + t)) == 0)
      if (p.poll_sleep_ns > 0) __nanosleep(p.poll_sleep_ns);
    if (v != 1) ok = 0;
  }
  if (p.fences) __threadfence();
  return __syncthreads_and(ok) != 0;
}

/// Children whose descriptors a block keeps in shared memory (cached in the
/// prologue, before the wait; further children are read from global memory).
constexpr int kChildCache = 32;

/// State of the FusedLaunch::phases measurement in factor() (shared memory,
/// one per block, in FrontShared: one copy per kernel, so that the knob
/// costs neither registers nor the shared memory of a front; rows: thread
/// 0, thread 32): lap(r, acc) adds the cycles
/// since thread r's last stamp to *acc (when acc is not null) and stamps.
/// Thread 0's step is split in two: the look-ahead's update of the next
/// diagonal block (update_next), then the rest (ph[0][2]).
struct FactorClock {
  unsigned long long last[2], ph[2][4], first_diag, update_next, t0;
  __device__ void start(int r) {
    for (int i = 0; i < 4; ++i) ph[r][i] = 0;
    if (r == 0) first_diag = update_next = 0;
    last[r] = clock64();
    if (r == 0) t0 = last[0];
  }
  __device__ void lap(int r, unsigned long long* acc) {
    const unsigned long long t = clock64();
    if (acc) *acc += t - last[r];
    last[r] = t;
  }
  __device__ void flush(unsigned long long* q, int r, int blocks) {
    if (r == 0) {
      atomicAdd(q + kPhaseFronts, 1ULL);
      atomicAdd(q + kPhaseBlocks, static_cast<unsigned long long>(blocks));
      atomicAdd(q + kPhaseFactor, clock64() - t0);
      atomicAdd(q + kPhaseFirstDiag, first_diag);
      atomicAdd(q + kPhaseUpdateNext, update_next);
    }
    for (int i = 0; i < 4; ++i) atomicAdd(q + kPhaseRole0 + 4 * r + i, ph[r][i]);
  }
};

/// What the prologue of a front leaves in shared memory for the rest of it:
/// |a_jj| of its first kAjjCache pivots (the pivot test's reference) and the
/// descriptors of its first kChildCache children.
template <int kWarps>
struct FrontShared {
  static constexpr int kAjjCache = kWarps <= 4 ? static_cast<int>(kFusedSmallOrder) : 256;
  double ajj[kAjjCache];
  long long child_cb[kChildCache];
  long long child_rel[kChildCache];
  int child_mc[kChildCache];
  mutable FactorClock clk;  ///< FusedLaunch::phases only (factor() gets the rest read-only)
};

/// |a_jj| of pivot j (local column) of front f: from the prologue's cache
/// when it holds it, else from global memory.
template <int kWarps>
__device__ __forceinline__ double ajj_of(const FusedLaunch& p, const FusedFront& f, const FrontShared<kWarps>& fs,
                                         int j) {
  if (j < FrontShared<kWarps>::kAjjCache) return fs.ajj[j];
  const long long src = __ldg(p.diag + f.diag_begin + j);
  return src >= 0 ? fabs(__ldg(p.values + src)) : 0.0;
}

/// The part of a front's assembly that does not depend on its children (the
/// prologue, run before the wait for them, so that it overlaps their work):
/// zero the front, scatter A's entries, load |a_jj| of its pivots and its
/// children's descriptors into shared memory. Every location written is the
/// front's own (its shared memory, or its panel and private CB region:
/// fused_subtree_index.hpp), so this is safe while the children still run.
/// Ends with a block barrier.
template <int kWarps, bool kPacked>
__device__ void assemble_own(const FusedLaunch& p, const FusedFront& f, const FrontView<kPacked>& v,
                             FrontShared<kWarps>& fs) {
  constexpr bool in_shared = kPacked;
  const int m = f.m, k = f.k, mc = m - k;
  if (in_shared) {
    for (long long i = threadIdx.x; i < static_cast<long long>(m) * (m + 1) / 2; i += blockDim.x) v.P[i] = 0.0;
  } else {
    for (long long i = threadIdx.x; i < static_cast<long long>(m) * k; i += blockDim.x) v.P[i] = 0.0;
    for (long long i = threadIdx.x; i < static_cast<long long>(mc) * mc; i += blockDim.x) v.C[i] = 0.0;
  }
  // Loads that need no barrier first, so that their latencies overlap the
  // zeroing's barrier: |a_jj| and the children's descriptors.
  const int kc = k < FrontShared<kWarps>::kAjjCache ? k : FrontShared<kWarps>::kAjjCache;
  for (int j = threadIdx.x; j < kc; j += blockDim.x) {
    const long long src = __ldg(p.diag + f.diag_begin + j);
    fs.ajj[j] = src >= 0 ? fabs(__ldg(p.values + src)) : 0.0;
  }
  const long long nch = f.child_end - f.child_begin;
  for (int c = threadIdx.x; c < nch && c < kChildCache; c += blockDim.x) {
    const FusedChild ch = p.children[f.child_begin + c];
    fs.child_cb[c] = ch.cb_off;
    fs.child_rel[c] = ch.rel_begin;
    fs.child_mc[c] = ch.mc;
  }
  __syncthreads();
  for (long long e = f.a_begin + threadIdx.x; e < f.a_end; e += blockDim.x) {
    const FusedEntry x = p.entries[e];
    // dst = row + col·m in the m×k panel; 32-bit division when it fits (a
    // 64-bit one is a long instruction sequence on the GPU).
    long long c, r;
    if (x.dst <= 0x7fffffffLL) {
      const int d = static_cast<int>(x.dst);
      c = d / m;
      r = d - static_cast<int>(c) * m;
    } else {
      c = x.dst / m;
      r = x.dst - c * m;
    }
    atomicAdd(v.col(static_cast<int>(c)) + r, __ldg(p.values + x.src));
  }
  __syncthreads();
}

/// Entry `o` of pair `pr` of the folded lower triangle of order N (even):
/// column pr (rows pr..N-1, offsets [0, N - pr)) followed by column
/// N-1-pr (rows N-1-pr..N-1, offsets [N - pr, N + 1)), so that the N/2
/// pairs of N+1 entries cover the triangle exactly once and consecutive
/// offsets are consecutive rows of one column (coalesced).
__device__ __forceinline__ void folded_entry(int N, int pr, int o, int& c, int& r) {
  if (o < N - pr) {
    c = pr;
    r = pr + o;
  } else {
    c = N - 1 - pr;
    r = c + (o - (N - pr));
  }
}

/// Walks the lower triangle (diagonal included) of order n, its entries
/// dealt to the block's threads round-robin over the folded enumeration
/// above (N = n rounded up to even; the entries of the extra row are
/// skipped): each thread's entries are spread evenly over all columns,
/// consecutive threads take consecutive rows, and a thread steps through
/// its own entries without a division. Loop: while (w.more()) { for each
/// of a batch of entries: w.next(c, r) (false: no entry, or past the end) }.
struct FoldedWalk {
  int n, W, pr, o, dp, dq;  // W = N + 1; pairs P = N / 2 = W / 2
  __device__ __forceinline__ explicit FoldedWalk(int order) : n(order) {
    W = n + (n & 1) + 1;
    const int T = static_cast<int>(blockDim.x);
    pr = static_cast<int>(threadIdx.x) / W;
    o = static_cast<int>(threadIdx.x) - pr * W;
    dp = T / W;
    dq = T - dp * W;
  }
  __device__ __forceinline__ bool more() const { return pr < W / 2; }
  __device__ __forceinline__ bool next(int& c, int& r) {
    if (pr >= W / 2) return false;
    folded_entry(W - 1, pr, o, c, r);
    o += dq;
    pr += dp;
    if (o >= W) {
      o -= W;
      ++pr;
    }
    return r < n;
  }
};

/// Extend-adds the CBs of children [from, to) (offsets from f.child_begin,
/// in the plan's child order; every one complete) one by one, a barrier
/// after each.
/// In the small launch (kWarps <= 4) with p.flat_add (default), each
/// child's lower triangle is dealt to all the block's threads
/// (FoldedWalk), 4 entries in flight per thread; otherwise one warp per CB
/// column, lanes over its rows (the large launch, and the measurement knob
/// STARFRONT_FUSED_FLAT_ADD=0). Either way every entry of the front gets
/// the children's values added in child order: the same sums, whatever the
/// ticket order (FusedTicketOrder). (The flat
/// walk in the large launch too cut the chain's extend-add by a fifth but
/// slowed its factorisations as much, through the 128-register kernel's
/// allocation: bench/README.md, session 27.)
template <int kWarps, bool kPacked>
__device__ void extend_add(const FusedLaunch& p, const FusedFront& f, const FrontView<kPacked>& v,
                           const FrontShared<kWarps>& fs, long long from, long long to) {
  const int warp = static_cast<int>(threadIdx.x) / 32, lane = static_cast<int>(threadIdx.x) % 32;
  // CB rows per lane whose loads are in flight at once: a small front's CB
  // column has at most two chunks of 32 rows; the large fronts' CBs are long
  // (and their large blocks have the registers to spare).
  constexpr int kB = kWarps <= 4 ? 2 : 4;
  for (long long c = f.child_begin + from; c < f.child_begin + to; ++c) {
    const long long ci = c - f.child_begin;
    long long cb_off, rel_begin;
    int mcc;
    if (ci < kChildCache) {
      cb_off = fs.child_cb[ci];
      rel_begin = fs.child_rel[ci];
      mcc = fs.child_mc[ci];
    } else {
      const FusedChild ch = p.children[c];
      cb_off = ch.cb_off;
      rel_begin = ch.rel_begin;
      mcc = ch.mc;
    }
    const double* cb = p.workspace + cb_off;
    const std::int32_t* rel = p.rel + rel_begin;
    if (kWarps <= 4 && p.flat_add) {
      constexpr int kF = 4;  // entries in flight per thread (faster than 8: bench/README.md, session 27)
      FoldedWalk wk(mcc);
      while (wk.more()) {
        double x[kF];
        int rr[kF], rc[kF];
#pragma unroll
        for (int b = 0; b < kF; ++b) {
          int cc, r;
          rc[b] = -1;
          if (wk.next(cc, r)) {
            x[b] = __ldcg(cb + static_cast<long long>(cc) * mcc + r);
            rr[b] = __ldg(rel + r);
            rc[b] = __ldg(rel + cc);
          }
        }
#pragma unroll
        for (int b = 0; b < kF; ++b)
          if (rc[b] >= 0) v.col(rc[b])[rr[b]] += x[b];
      }
      __syncthreads();  // the next child may hit the same entries
      continue;
    }
    for (int jj = warp; jj < mcc; jj += kWarps) {
      double* dst = v.col(__ldg(rel + jj));
      const double* src = cb + static_cast<long long>(jj) * mcc;
      // Loads first (kB rows per lane), then the adds: the memory latencies
      // overlap instead of following each other (the compiler would not
      // move a load above the previous row's store on its own).
      for (int i0 = jj + lane; i0 < mcc; i0 += 32 * kB) {
        double x[kB];
        int r[kB];
#pragma unroll
        for (int b = 0; b < kB; ++b) {
          const int ii = i0 + 32 * b;
          if (ii < mcc) {
            x[b] = __ldcg(src + ii);
            r[b] = __ldg(rel + ii);
          }
        }
#pragma unroll
        for (int b = 0; b < kB; ++b)
          if (i0 + 32 * b < mcc) dst[r[b]] += x[b];
      }
    }
    __syncthreads();  // the next child may hit the same entries
  }
}

/// The wait for the children fused with their extend-add (FusedLaunch::
/// early): rounds in which every thread polls one child not yet added
/// (device-scope acquire loads, no spinning), the block finds the first
/// child in child order that is not complete, extend-adds every child
/// before it, then thread 0 spins on that child's flag alone until it is
/// set, and a new round follows (none when that child is the last: its
/// flag as thread 0 read it decides); so the CBs of
/// the children that finished early are added while the later ones still
/// run, and the sums keep the child order of extend_add() (the same result
/// at every run). Stamp 2 of front q when all are complete, before the
/// remaining adds. Returns, to every thread, whether no child failed (on a
/// failure it returns at once: the front is skipped, and its memory is its
/// own).
template <int kWarps, bool kPacked>
__device__ bool wait_and_extend_add(const FusedLaunch& p, const FusedFront& f, int q, const FrontView<kPacked>& v,
                                    const FrontShared<kWarps>& fs) {
  __shared__ int s_first;  // the first child (offset) not complete in this round
  __shared__ int s_failed;  // a child of the round failed
  __shared__ int s_last_failed;  // the last child, waited for alone, failed
  const int* done = fused_done_flags(p.status);
  const int nch = static_cast<int>(f.child_end - f.child_begin);
  int next = 0;  // children [0, next) are added
  for (;;) {
    if (threadIdx.x == 0) s_first = nch, s_failed = 0;
    __syncthreads();
    for (int c = next + static_cast<int>(threadIdx.x); c < nch; c += blockDim.x) {
      const int fl = load_acquire(done + __ldg(&p.children[f.child_begin + c].ticket));
      if (fl == 0) atomicMin(&s_first, c);
      else if (fl != 1) s_failed = 1;  // every writer writes 1
    }
    if (p.fences) __threadfence();
    __syncthreads();
    const int first = s_first;
    if (s_failed) return false;
    if (first == nch) stamp(p, q, 2);
    if (first > next) {
      extend_add<kWarps>(p, f, v, fs, next, first);  // ends with a barrier: s_first is read by all
      next = first;
    }
    if (next == nch) return true;
    // Child `next` is the one the adds wait for: thread 0 spins on its flag
    // alone (the next round reads it again, with the others), unless it is
    // the last child: then what thread 0's acquire load read decides, and
    // the barrier passes it on (with what the child wrote: its release,
    // thread 0's acquire, then the barrier), without another round.
    const bool last = next == nch - 1;
    if (threadIdx.x == 0) {
      const int* flag = done + __ldg(&p.children[f.child_begin + next].ticket);
      int fl;
      while ((fl = load_acquire(flag)) == 0)
        if (p.poll_sleep_ns > 0) __nanosleep(p.poll_sleep_ns);
      if (last) {
        s_last_failed = fl != 1;  // every writer writes 1
        if (p.fences) __threadfence();
      }
    }
    __syncthreads();  // also: every thread has read s_first before it is reset
    if (last) {
      if (s_last_failed) return false;
      stamp(p, q, 2);
      extend_add<kWarps>(p, f, v, fs, next, nch);
      return true;
    }
  }
}

/// Shared state of factor() (one per block).
template <int NB>
struct FactorShared {
  int info, col;
  double piv, rpiv;
  double rdiag[NB];  ///< 1 / l_tt of the current block of columns
};

/// Index of entry (c, t), t <= c, of an NB×NB lower triangle held row by
/// row in a flat register array.
__host__ __device__ constexpr int tri(int c, int t) { return c * (c + 1) / 2 + t; }

/// Step (1) of factor(), by warp 0 only: factorises the diagonal block of
/// columns [j0, j0 + w) and writes it back, and sets fsh.info / fsh.piv
/// (LAPACK's info: the first pivot d <= 0 or NaN, -1 if none) and
/// fsh.rdiag; then the relative pivot test and the pivot ratio of its
/// columns, one lane per column (rel_col / rel_piv: the first failing column
/// of the front, uniform in the warp; r: this lane's smallest ratio).
/// Every lane factorises its own copy of the block's lower triangle in
/// registers (broadcast loads; the same instructions on the same values, so
/// the copies are identical and every branch is uniform): no shuffle on the
/// serial column chain, whose step is rsqrt -> scale -> update of the next
/// pivot. l_tt = d·r and the column is scaled by r = rsqrt_fast(d) (as
/// LAPACK's dpotf2 scales by 1/l_tt; the row solves reuse it). The chain
/// has no branch: after a failed pivot the columns are computed on (NaN),
/// and nothing reads them (the front is abandoned); each final column is
/// written back by every lane (the same values to the same addresses).
/// kFull: w == NB
/// (every block but a front's last), so no column test is left in the code.
template <int kWarps, int NB, bool kFull, bool kPacked>
__device__ void diag_block(const FusedLaunch& p, const FusedFront& f, const FrontView<kPacked>& v,
                           const FrontShared<kWarps>& fs, FactorShared<NB>& fsh, int j0, int w_in, int& rel_col,
                           double& rel_piv, double& r) {
  const int w = kFull ? NB : w_in;
  const int lane = static_cast<int>(threadIdx.x) % 32;
  // |a_jj| of the block's pivots, lane t holding column j0 + t: from the
  // prologue's shared cache (loaded before the wait for the children).
  const double ajj_lane = lane < w ? ajj_of<kWarps>(p, f, fs, j0 + lane) : 0.0;
  double a[tri(NB, 0)];  // rows c < w, columns t <= c; zero beyond w
#pragma unroll
  for (int c = 0; c < NB; ++c)
#pragma unroll
    for (int t = 0; t <= c; ++t) a[tri(c, t)] = c < w ? v.col(j0 + t)[j0 + c] : 0.0;
  __syncwarp();  // every lane has read the block before any lane writes it back
  int info = -1;
  double dinfo = 0.0, lt = 0.0;  // lt: l of column j0 + lane
#pragma unroll
  for (int t = 0; t < NB; ++t) {
    if (t < w) {
      const double d = a[tri(t, t)];
      if (!(d > 0.0) && info < 0) {  // LAPACK's info: d <= 0 or NaN (predicated, off the chain)
        info = j0 + t;
        dinfo = d;
      }
      const double rl = rsqrt_fast(d);
      a[tri(t, t)] = isinf(d) ? d : d * rl;  // rsqrt_chain(inf) = 0: keep l = inf, as sqrt gives
      fsh.rdiag[t] = rl;  // every lane, the same value
#pragma unroll
      for (int c = t + 1; c < NB; ++c) a[tri(c, t)] *= rl;
#pragma unroll
      for (int c = t + 1; c < NB; ++c)
#pragma unroll
        for (int c2 = t + 1; c2 <= c; ++c2) a[tri(c, c2)] -= a[tri(c, t)] * a[tri(c2, t)];
      // Column t is final: written back (every lane stores its identical
      // copy to the same addresses: no branch), and its registers are free
      // for the rest.
#pragma unroll
      for (int c = t; c < NB; ++c)
        if (c < w) v.col(j0 + t)[j0 + c] = a[tri(c, t)];
      if (lane == t) lt = a[tri(t, t)];
    }
  }
  if (info < 0) {
    // The relative pivot test (the CPU's: d = l² not finite or <= tol·|a_jj|
    // fails) and the pivot ratio, lane t for column j0 + t (it holds l and
    // |a_jj|), the first failing column by a ballot.
    // After a failed pivot (info) they do not matter: info is reported.
    bool fails = false;
    double piv = 0.0;
    if (lane < w) {
      const double d2 = lt * lt;
      fails = !isfinite(d2) || d2 <= p.pivot_tol * ajj_lane;
      piv = isfinite(lt) ? d2 : lt;
      if (ajj_lane > 0) r = fmin(r, d2 / ajj_lane);
    }
    const unsigned bad_lanes = __ballot_sync(0xffffffffu, fails);
    const double first_piv = __shfl_sync(0xffffffffu, piv, bad_lanes ? __ffs(bad_lanes) - 1 : 0);
    if (bad_lanes && rel_col < 0) {
      rel_col = j0 + __ffs(bad_lanes) - 1;
      rel_piv = first_piv;
    }
  }
  if (lane == 0) {
    fsh.info = info;
    fsh.piv = dinfo;
  }
}

/// Step (2) of factor(), all threads: rows i >= j1 = j0 + w of the block
/// column [j0, j1) solved against its factorised diagonal block, one row per
/// thread, x_t = (a_it - Σ_{s<t} x_s l_ts) · (1 / l_tt). kFull: w == NB.
template <int NB, bool kFull, bool kPacked>
__device__ void row_solve(const FrontView<kPacked>& v, const double* rdiag, int j0, int w_in, int m) {
  const int w = kFull ? NB : w_in, j1 = j0 + w;
  for (int i = j1 + static_cast<int>(threadIdx.x); i < m; i += blockDim.x) {
    double x[NB];
#pragma unroll
    for (int t = 0; t < NB; ++t) {
      if (t < w) {
        double acc = v.col(j0 + t)[i];
#pragma unroll
        for (int s2 = 0; s2 < t; ++s2) acc -= x[s2] * v.col(j0 + s2)[j0 + t];
        x[t] = acc * rdiag[t];
      }
    }
#pragma unroll
    for (int t = 0; t < NB; ++t)
      if (t < w) v.col(j0 + t)[i] = x[t];
  }
}

/// Step (3) of factor(): the trailing lower triangle gets A(i,c) -= Σ_t
/// L(i,t) L(c,t) over the block column t in [j0, j0 + w) (sum first, t
/// ascending), for j1 = j0 + w <= c <= i < m, except the entries with
/// i < skip (then c < skip too), which warp 0 updates itself (look-ahead:
/// factor()). By warps [w_first, kWarps), CG columns per warp at a time
/// (groups dealt as `snake` says, below)
/// (register tiling: each row's L(i, j0:j1) is loaded once for CG
/// columns), lanes over rows; the CG sums of a row are computed side by
/// side (independent chains) and only the entries on or below the diagonal
/// are stored. kFull: w == NB.
template <int kWarps, int CG, int NB, bool kFull, bool kPacked>
__device__ void trailing_update(const FrontView<kPacked>& v, int j0, int w_in, int m, int skip, int w_first,
                                bool snake) {
  const int warp = static_cast<int>(threadIdx.x) / 32, lane = static_cast<int>(threadIdx.x) % 32;
  const int w = kFull ? NB : w_in, j1 = j0 + w;
  const int nw = kWarps - w_first, rank = warp - w_first;  // rank among the nw warps that update
  // Groups of CG columns dealt in rounds of nw, with `snake` every other
  // round in reverse order (round r: group r·nw + rank, or r·nw + nw - 1 -
  // rank), so that each warp gets long and short columns alike.
  for (int round = 0;; ++round) {
    const int slot = snake && (round & 1) ? nw - 1 - rank : rank;
    const int c0 = j1 + (round * nw + slot) * CG;
    if (c0 >= m) break;  // every later round's group lies further right
    double lc[CG][NB];
#pragma unroll
    for (int u = 0; u < CG; ++u)
#pragma unroll
      for (int t = 0; t < NB; ++t) lc[u][t] = (t < w && c0 + u < m) ? v.col(j0 + t)[c0 + u] : 0.0;
    const int i0 = c0 < skip ? skip : c0;
    for (int i = i0 + lane; i < m; i += 32) {
      double li[NB], acc[CG];
#pragma unroll
      for (int t = 0; t < NB; ++t) li[t] = t < w ? v.col(j0 + t)[i] : 0.0;
#pragma unroll
      for (int u = 0; u < CG; ++u) acc[u] = 0.0;
      // Every column of the block, also t >= w in a partial block (the
      // front's last): there li[t] and lc[u][t] are zeros and each is
      // fma(0, 0, acc) = acc exactly (acc starts at +0, so it is never -0),
      // so the sums keep their values bit for bit, and the loop is the same
      // straight FMA sequence as a full block's, with no test per FMA.
#pragma unroll
      for (int t = 0; t < NB; ++t)
#pragma unroll
        for (int u = 0; u < CG; ++u) acc[u] += li[t] * lc[u][t];
#pragma unroll
      for (int u = 0; u < CG; ++u)
        if (i >= c0 + u) v.col(c0 + u)[i] -= acc[u];  // also implies c0 + u < m
    }
  }
}

/// Look-ahead part of step (3), by warp 0: the same update for the next
/// diagonal block's lower triangle, j1 <= c <= i < j2 (at most NB(NB+1)/2
/// entries, one lane each), with the same sums in the same order. kFull:
/// w == NB (the current block's width).
template <int NB, bool kFull, bool kPacked>
__device__ void update_next_diag(const FrontView<kPacked>& v, int j0, int w_in, int j2) {
  const int lane = static_cast<int>(threadIdx.x) % 32, w = kFull ? NB : w_in, j1 = j0 + w, n2 = j2 - j1;
  for (int e = lane; e < n2 * (n2 + 1) / 2; e += 32) {
    // entry e of the triangle, row by row: row i starts at i(i+1)/2
    int i = 0;
#pragma unroll
    for (int q = 1; q < NB; ++q) i += e >= q * (q + 1) / 2 ? 1 : 0;
    const int c = e - i * (i + 1) / 2;
    double acc = 0.0;
#pragma unroll
    for (int t = 0; t < NB; ++t)
      if (t < w) acc += v.col(j0 + t)[j1 + i] * v.col(j0 + t)[j1 + c];
    v.col(j1 + c)[j1 + i] -= acc;
  }
}

/// Blocked right-looking Cholesky of the k pivots of the front with a
/// look-ahead of one block, blocks of NB columns [j0, j1) (NB = 4 for the
/// small-front blocks, kFusedBlock for the large ones): (1) warp 0
/// factorises the diagonal block (diag_block, with the pivot tests); (2)
/// every thread solves the rows below it (row_solve); (3) the trailing
/// lower triangle is updated (trailing_update) by warps 1.. while warp 0
/// updates the NEXT diagonal block first (update_next_diag) and factorises
/// it (step (1) of the next block), so that the serial diagonal block
/// overlaps the update instead of following it. Two block barriers per
/// block of columns. Every entry gets the same sums in the same order as
/// without the look-ahead (fused_subtree_index.cpp's emulation does the same
/// sums, with 1/sqrt where the kernel has rsqrt: equal to rounding, not to
/// the bit). Returns the failing local column (or -1) and its pivot, to
/// every thread; *ratio: thread 0's min l²/|a_jj| over columns with a_jj !=
/// 0. Without p.lookahead (measurement knob) step (1) follows step (3) as
/// a separate phase (three barriers per block).
template <int kWarps, int kCG, bool kPacked>
__device__ int factor(const FusedLaunch& p, const FusedFront& f, const FrontView<kPacked>& v,
                      const FrontShared<kWarps>& fs, double* pivot, double* ratio) {
  constexpr int NB = kWarps <= 4 ? 4 : kFusedBlock;
  const int m = f.m, k = f.k;
  const int warp = static_cast<int>(threadIdx.x) / 32;
  __shared__ FactorShared<NB> fsh;
  int rel_col = -1;  // warp 0 (uniform in the warp)
  double rel_piv = 0.0, r = __longlong_as_double(0x7ff0000000000000LL);  // r: per lane of warp 0
  const bool ahead = p.lookahead && kWarps > 1;
  // Measurement knob (FusedLaunch::phases): threads 0 and 32 time the steps.
  // Its state is in shared memory (fs.clk), so that the knob costs the
  // kernel no registers when it is off.
  const bool timed = kWarps > 4 && p.phases && (threadIdx.x == 0 || threadIdx.x == 32);
  FactorClock& clk = fs.clk;
  if (timed) clk.start(threadIdx.x / 32);
  if (k > 0 && warp == 0) {
    if (k >= NB) diag_block<kWarps, NB, true>(p, f, v, fs, fsh, 0, NB, rel_col, rel_piv, r);
    else diag_block<kWarps, NB, false>(p, f, v, fs, fsh, 0, k, rel_col, rel_piv, r);
  }
  __syncthreads();
  if (timed && threadIdx.x == 0) clk.lap(0, &clk.first_diag);
  for (int j0 = 0; j0 < k; j0 += NB) {
    const int w = k - j0 < NB ? k - j0 : NB, j1 = j0 + w;
    if (fsh.info >= 0) {
      *pivot = fsh.piv;
      const int bad = fsh.info;
      __syncthreads();
      return bad;
    }
    if (timed) clk.lap(threadIdx.x / 32, nullptr);
    if (w == NB) row_solve<NB, true>(v, fsh.rdiag, j0, w, m);
    else row_solve<NB, false>(v, fsh.rdiag, j0, w, m);
    if (timed) clk.lap(threadIdx.x / 32, &clk.ph[threadIdx.x / 32][0]);
    __syncthreads();
    if (timed) clk.lap(threadIdx.x / 32, &clk.ph[threadIdx.x / 32][1]);
    const int w2 = k - j1 < NB ? k - j1 : NB;  // the next block's width (0: none)
    if (ahead && w2 > 0) {
      if (warp == 0) {
        // (w < NB only for a front's last block, which has no next one)
        update_next_diag<NB, true>(v, j0, NB, j1 + w2);
        __syncwarp();
        if (timed) clk.lap(0, &clk.update_next);
        if (w2 == NB) diag_block<kWarps, NB, true>(p, f, v, fs, fsh, j1, NB, rel_col, rel_piv, r);
        else diag_block<kWarps, NB, false>(p, f, v, fs, fsh, j1, w2, rel_col, rel_piv, r);
      } else {
        trailing_update<kWarps, kCG, NB, true>(v, j0, NB, m, j1 + w2, 1, p.snake);
      }
      if (timed) clk.lap(threadIdx.x / 32, &clk.ph[threadIdx.x / 32][2]);
      __syncthreads();
      if (timed) clk.lap(threadIdx.x / 32, &clk.ph[threadIdx.x / 32][3]);
    } else {
      if (w == NB) trailing_update<kWarps, kCG, NB, true>(v, j0, w, m, j1, 0, p.snake);
      // A partial block (the front's last) of at most NB/2 columns: the
      // sums of the code for blocks of NB/2 (zero-padded as below).
      else if (w <= NB / 2) trailing_update<kWarps, kCG, NB / 2, false>(v, j0, w, m, j1, 0, p.snake);
      else trailing_update<kWarps, kCG, NB, false>(v, j0, w, m, j1, 0, p.snake);
      __syncthreads();
      if (w2 > 0) {
        if (warp == 0) {
          if (w2 == NB) diag_block<kWarps, NB, true>(p, f, v, fs, fsh, j1, NB, rel_col, rel_piv, r);
          else diag_block<kWarps, NB, false>(p, f, v, fs, fsh, j1, w2, rel_col, rel_piv, r);
        }
        __syncthreads();
      }
      if (timed) clk.lap(threadIdx.x / 32, &clk.ph[threadIdx.x / 32][2]);  // both steps and their barriers
    }
  }
  if (timed) clk.flush(p.phases, threadIdx.x / 32, (k + NB - 1) / NB);
  // The smallest ratio over warp 0's lanes (a minimum: any order gives it).
  if (warp == 0)
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) r = fmin(r, __shfl_xor_sync(0xffffffffu, r, o));
  *ratio = r;
  if (threadIdx.x == 0) {
    fsh.col = rel_col;
    fsh.rpiv = rel_piv;
  }
  __syncthreads();
  const int bad = fsh.col;
  *pivot = fsh.rpiv;
  __syncthreads();
  return bad;
}

/// Factorises front f (ticket q, assembled through view v), writes out its
/// CB, publishes its flag, then writes out L.
template <int kWarps, int kCG, bool kPacked>
__device__ void finish_front(const FusedLaunch& p, const FusedFront& f, int q, const FrontView<kPacked>& v,
                             const FrontShared<kWarps>& fs, double* L, double* cb) {
  const int m = f.m, k = f.k, mc = m - k;
  double pivot = 0.0, ratio = 0.0;
  const int bad = factor<kWarps, kCG>(p, f, v, fs, &pivot, &ratio);
  stamp(p, q, 4);
  if (bad >= 0) {
    if (threadIdx.x == 0) {
      fused_pivots(p.status, p.nfronts)[q] = pivot;
      atomicMax(&p.status->fail_key, (1ULL << 62) - static_cast<unsigned long long>(f.col0 + bad));
    }
    stamp(p, q, 5);
    publish(p, q, 2);
    return;
  }
  if (threadIdx.x == 0 && ratio < __longlong_as_double(0x7ff0000000000000LL))
    atomicMax(&p.status->ratio_key, ~static_cast<unsigned long long>(__double_as_longlong(ratio)));
  // Unpack (packed fronts), one warp per column, lanes over rows (no
  // division): the CB first, then the flag (the parent waits for the CB
  // only), then L, which nothing in the launch reads (off the chain).
  const int warp = static_cast<int>(threadIdx.x) / 32, lane = static_cast<int>(threadIdx.x) % 32;
  if (kPacked && mc > 0 && cb) {
    // An internal CB (workspace) is read by its parent's extend-add only,
    // lower triangle only (extend_add()): its upper triangle is not
    // written. The root's CB (a slot other tasks read) is written whole.
    const bool internal = f.cb_off >= 0;
    for (int c = warp; c < mc; c += kWarps) {
      const double* src = v.col(k + c) + k;
      double* dst = cb + static_cast<long long>(c) * mc;
      for (int r = (internal ? c : 0) + lane; r < mc; r += 32) dst[r] = r >= c ? src[r] : 0.0;
    }
  }
  stamp(p, q, 5);
  publish(p, q, 1);
  if (kPacked) {
    // L: zeros above the diagonal, as the CPU leaves them. The shared
    // memory it is read from is not reused before the kernel's loop
    // passes a block barrier. These writes are after the flag, so no
    // front's completion orders them: the task's cudaStreamSynchronize
    // (task_kernels_cuda.cpp), which waits for both launches whatever the
    // programmatic overlap, is what makes L complete before anyone reads it.
    for (int c = warp; c < k; c += kWarps) {
      const double* src = v.col(c);
      double* dst = L + static_cast<long long>(c) * m;
      for (int r = lane; r < m; r += 32) dst[r] = r >= c ? src[r] : 0.0;
    }
  }
}

/// One front, ticket q, through view v: with p.early, the prologue
/// (assemble_own), then the wait for the children fused with their
/// extend-add (wait_and_extend_add); else the wait, the prologue and the
/// extend-add one after the other. Then the factorisation and the
/// write-out (finish_front). Trace stamps (kFusedTracePoints): 0 start, 1
/// and 2 after the prologue and the wait (in the order they ran; with
/// p.early, 2 is when the last child is seen complete, some CBs already
/// added), 3 after the extend-add, 4 after the factorisation, 5 after the
/// CB is written, before the flag is published (L is written after).
template <int kWarps, int kCG, bool kPacked>
__device__ void front_steps(const FusedLaunch& p, const FusedFront& f, int q, const FrontView<kPacked>& v,
                            FrontShared<kWarps>& fs, double* L, double* cb) {
  stamp(p, q, 0);
  if (p.early) {
    assemble_own<kWarps>(p, f, v, fs);
    stamp(p, q, 1);
    if (!wait_and_extend_add<kWarps>(p, f, q, v, fs)) {
      publish(p, q, 2);  // a child failed: skipped
      return;
    }
  } else {
    if (!wait_children(p, f)) {
      publish(p, q, 2);
      return;
    }
    stamp(p, q, 1);
    assemble_own<kWarps>(p, f, v, fs);
    stamp(p, q, 2);
    extend_add<kWarps>(p, f, v, fs, 0, f.child_end - f.child_begin);
  }
  stamp(p, q, 3);
  finish_front<kWarps, kCG>(p, f, q, v, fs, L, cb);
}

/// One front, ticket q: in shared memory when its packed lower triangle fits.
template <int kWarps, int kCG>
__device__ void run_front(const FusedLaunch& p, int q, double* sm, long long smem_doubles) {
  const FusedFront f = p.fronts[q];
  const int m = f.m, k = f.k, mc = m - k;
  const bool in_shared = static_cast<long long>(m) * (m + 1) / 2 <= smem_doubles;
  double* L = p.panel + f.l_off;
  double* cb = f.cb_off >= 0 ? p.workspace + f.cb_off : p.root_cb;
  __shared__ FrontShared<kWarps> fs;
  if (in_shared) {
    FrontView<true> v{sm, nullptr, 0, 0, m, k};
    front_steps<kWarps, kCG>(p, f, q, v, fs, L, cb);
  } else {
    FrontView<false> v{L, cb, m, mc, m, k};
    front_steps<kWarps, kCG>(p, f, q, v, fs, L, cb);
  }
}

/// Tickets [t0, t1) of the task; counter: this launch's ticket counter;
/// kCG: the trailing update's columns per warp at a time; kMinBlocks: the
/// blocks per multiprocessor the compiler must leave registers for
/// (FusedLaunch::small_min_blocks; 1 for the large launch).
template <int kThreads, int kCG, int kMinBlocks = (kThreads <= 128 ? 6 : 1)>
__global__ void __launch_bounds__(kThreads, kMinBlocks)
    fused_subtree_kernel(const FusedLaunch p, int t0, int t1, unsigned int* counter, long long smem_doubles) {
  extern __shared__ double sm[];
  __shared__ int s_ticket;
  // The second launch (the large fronts) is a programmatic dependent launch
  // (launch_fused_subtree): it may start once every block of this one has
  // passed this point, i.e. is resident (fused_subtree_kernel.hpp).
  if (kThreads <= kFusedThreads) asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  for (;;) {
    if (threadIdx.x == 0) s_ticket = t0 + static_cast<int>(atomicAdd(counter, 1u));
    __syncthreads();
    const int q = s_ticket;
    __syncthreads();
    if (q >= t1) return;
    run_front<kThreads / 32, kCG>(p, q, sm, smem_doubles);
  }
}

/// fused_last_launch_shape's record: [small, large][blocks a multiprocessor, grid].
std::atomic<int> g_last_shape[2][2];

/// Dynamic shared memory (bytes) a block of `kernel` may have on device
/// `dev`: the opt-in maximum less the kernel's static shared memory. The
/// launch (launch_part) and fused_shared_max_order() both size by it.
cudaError_t dynamic_smem_cap(const void* kernel, int dev, long long* cap) {
  int optin = 0;
  cudaFuncAttributes attr{};
  cudaError_t e = cudaSuccess;
  if ((e = cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev)) != cudaSuccess ||
      (e = cudaFuncGetAttributes(&attr, kernel)) != cudaSuccess)
    return e;
  *cap = static_cast<long long>(optin) - static_cast<long long>(attr.sharedSizeBytes);
  return cudaSuccess;
}

/// One launch of tickets [t0, t1) with blocks of kThreads threads and room
/// for a front of order `order` in shared memory when it fits. The device's
/// attributes, the kernel's shared-memory limit and the occupancy are
/// queried once per device and shared-memory size (each query costs
/// microseconds, a refactorisation pays none). The kernel's dynamic
/// shared-memory limit is one setting per device that every thread
/// launching it shares (a StarPU worker, a caller running a task inline:
/// run_subtree_inline), so the setting and the launch that relies on it
/// are made under one lock.
template <int kThreads, int kCG, int kMinBlocks = (kThreads <= 128 ? 6 : 1)>
cudaError_t launch_part(const FusedLaunch& p, int t0, int t1, int order, unsigned int* counter, cudaStream_t stream,
                        bool programmatic) {
  if (t1 <= t0) return cudaSuccess;
  auto kernel = fused_subtree_kernel<kThreads, kCG, kMinBlocks>;
  struct Shape {
    bool known = false;
    int sms = 0;
    long long cap = 0;  ///< dynamic shared memory a block may have, bytes
    int smem = -1;      ///< the size set last (cudaFuncAttributeMaxDynamicSharedMemorySize)
    int per_sm = 0;     ///< co-resident blocks per SM at that size
  };
  constexpr int kMaxDevices = 64;
  static Shape cache[kMaxDevices];
  static std::mutex mutex;
  std::lock_guard<std::mutex> lock(mutex);
  cudaError_t e = cudaSuccess;
  int dev = 0;
  if ((e = cudaGetDevice(&dev)) != cudaSuccess) return e;
  Shape local;
  Shape& sh = dev >= 0 && dev < kMaxDevices ? cache[dev] : local;
  if (!sh.known) {
    if ((e = cudaDeviceGetAttribute(&sh.sms, cudaDevAttrMultiProcessorCount, dev)) != cudaSuccess ||
        (e = dynamic_smem_cap(reinterpret_cast<const void*>(kernel), dev, &sh.cap)) != cudaSuccess)
      return e;
    sh.known = true;
  }
  const long long want = static_cast<long long>(order) * (order + 1) / 2 * 8;
  const int smem = static_cast<int>(want < sh.cap ? want : sh.cap);
  if (smem != sh.smem) {
    sh.smem = -1;
    if ((e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem)) != cudaSuccess ||
        (e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&sh.per_sm, kernel, kThreads, smem)) != cudaSuccess)
      return e;
    sh.smem = smem;
  }
  long long grid = static_cast<long long>(sh.per_sm > 0 ? sh.per_sm : 1) * (sh.sms > 0 ? sh.sms : 1);
  if (grid > t1 - t0) grid = t1 - t0;
  const int part = kThreads <= kFusedThreads ? 0 : 1;
  g_last_shape[part][0].store(sh.per_sm, std::memory_order_relaxed);
  g_last_shape[part][1].store(static_cast<int>(grid), std::memory_order_relaxed);
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = dim3(static_cast<unsigned>(grid));
  cfg.blockDim = dim3(kThreads);
  cfg.dynamicSmemBytes = static_cast<std::size_t>(smem);
  cfg.stream = stream;
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr[0].val.programmaticStreamSerializationAllowed = 1;
  cfg.attrs = attr;
  cfg.numAttrs = programmatic ? 1 : 0;
  return cudaLaunchKernelEx(&cfg, kernel, p, t0, t1, counter, static_cast<long long>(smem / 8));
}

}  // namespace

FusedLaunchShape fused_last_launch_shape(bool small) {
  const int part = small ? 0 : 1;
  return {g_last_shape[part][0].load(std::memory_order_relaxed), g_last_shape[part][1].load(std::memory_order_relaxed)};
}

int fused_shared_max_order() {
  static const int order = [] {
    int ndev = 0;
    if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev <= 0) return 0;
    const auto* kernel = reinterpret_cast<const void*>(fused_subtree_kernel<kFusedLargeThreads, kTrailColsLarge>);
    long long cap = -1;  // bytes of dynamic shared memory, the smallest over the devices
    for (int d = 0; d < ndev; ++d) {
      long long c = 0;
      if (dynamic_smem_cap(kernel, d, &c) != cudaSuccess) return 0;
      if (cap < 0 || c < cap) cap = c;
    }
    int m = 0;
    while (static_cast<long long>(m + 1) * (m + 2) / 2 * 8 <= cap) ++m;
    return m;
  }();
  return order;
}

std::size_t fused_status_bytes(int nfronts) {
  return (sizeof(FusedStatus) + sizeof(int) * static_cast<std::size_t>(nfronts) + 7) / 8 * 8 +
         sizeof(double) * static_cast<std::size_t>(nfronts);
}

cudaError_t launch_fused_subtree(const FusedLaunch& p, cudaStream_t stream, int* launches, cudaEvent_t* events) {
  if (launches) *launches = 0;
  if (p.nfronts <= 0) return cudaSuccess;
  if (p.small_min_blocks != 6 && p.small_min_blocks != 8) return cudaErrorInvalidValue;
  cudaError_t e = cudaMemsetAsync(p.status, 0, fused_status_bytes(p.nfronts), stream);
  if (e != cudaSuccess) return e;
  if (p.trace && (e = cudaMemsetAsync(p.trace, 0, sizeof(unsigned long long) * kFusedTracePoints *
                                                      static_cast<std::size_t>(p.nfronts),
                                      stream)) != cudaSuccess)
    return e;
  if (events && (e = cudaEventRecord(events[0], stream)) != cudaSuccess) return e;
  const int small_order = p.max_order_small < static_cast<int>(kFusedSmallOrder) ? p.max_order_small
                                                                                  : static_cast<int>(kFusedSmallOrder);
  e = p.small_min_blocks == 8
          ? launch_part<kFusedThreads, kTrailCols, 8>(p, 0, p.nsmall, small_order, &p.status->ticket[0], stream, false)
          : launch_part<kFusedThreads, kTrailCols>(p, 0, p.nsmall, small_order, &p.status->ticket[0], stream, false);
  if (e != cudaSuccess) return e;
  if (launches && p.nsmall > 0) ++*launches;
  // With the overlap, no event between the launches: it would serialise them.
  const bool overlap = p.overlap_launches && p.nsmall > 0 && p.nfronts > p.nsmall;
  if (events && !overlap && (e = cudaEventRecord(events[1], stream)) != cudaSuccess) return e;
  const int lt = p.large_threads, lc = p.large_cols;
  e = lt == 512 && lc == 2   ? launch_part<512, 2>(p, p.nsmall, p.nfronts, p.max_order, &p.status->ticket[1], stream, overlap)
      : lt == 384 && lc == 2 ? launch_part<384, 2>(p, p.nsmall, p.nfronts, p.max_order, &p.status->ticket[1], stream, overlap)
      : lt == 256 && lc == 4 ? launch_part<256, 4>(p, p.nsmall, p.nfronts, p.max_order, &p.status->ticket[1], stream, overlap)
      : lt == 512 && lc == 4 ? launch_part<512, 4>(p, p.nsmall, p.nfronts, p.max_order, &p.status->ticket[1], stream, overlap)
                             : cudaErrorInvalidValue;
  if (e != cudaSuccess) return e;
  if (launches && p.nfronts > p.nsmall) ++*launches;
  if (events && (e = cudaEventRecord(events[2], stream)) != cudaSuccess) return e;
  return cudaSuccess;
}

}  // namespace starfront
