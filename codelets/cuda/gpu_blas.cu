#include "cuda/gpu_blas.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>

#include "cuda/device_math.cuh"

namespace starfront {
namespace {

constexpr int kRows = 64;  ///< rows of B per thread block of the leaf kernel: one per thread
constexpr int kPanel = 32;  ///< columns a thread holds in registers at once
constexpr int kPotrfLeaf = 64;  ///< order of the diagonal blocks of gpu_potrf_panel
constexpr int kPotrfThreads = 256;  ///< threads of its kernel: four a row
static_assert(kTrsmKernelLeafMax == 2 * kPanel, "the leaf kernel handles two register panels");

/// x := x·T⁻ᵀ for one row x (kPanel entries in registers) and a kPanel ×
/// kPanel lower triangle T in shared memory (T(c, k) at T[k·ld + c], the
/// reciprocal of T(k, k) on the diagonal): the column-oriented forward
/// substitution, x_k = x_k / T(k, k), then x_c −= x_k·T(c, k) for c > k
/// (independent updates).
__device__ __forceinline__ void solve_row_panel(double (&x)[kPanel], const double* T, int ld) {
#pragma unroll
  for (int k = 0; k < kPanel; ++k) {
    const double xk = x[k] * T[k * ld + k];
    x[k] = xk;
#pragma unroll
    for (int c = k + 1; c < kPanel; ++c) x[c] -= xk * T[k * ld + c];
  }
}

/// X = B·L⁻ᵀ for a leaf of order nb ≤ kTrsmKernelLeafMax: thread r of block
/// b solves row 64b + r of B with no barrier after L is loaded (shared
/// memory; every thread reads the same entry: a broadcast). Columns [0, 32)
/// are solved in registers and stored; columns [32, nb) are updated in
/// registers (x₁·L21ᵀ, sixteen columns at a time), written back, reloaded
/// and solved: the blocked right-looking substitution on one row. Division
/// by L(k, k) is a product with its reciprocal (computed once per block). A
/// leaf with nb < 64 is padded with the identity. The global loads of a
/// step are issued in unrolled batches: a rolled loop waits for each load
/// in turn, tens of µs per leaf. (A single 64-entry register row spilled
/// 752 bytes at 255 registers, and so did staging columns [32, 64) in
/// shared memory: hence two register panels.)
__global__ void __launch_bounds__(kRows) trsm_leaf_kernel(int m, int nb, const double* __restrict__ L, int ldl,
                                                          double* __restrict__ B, int ldb) {
  constexpr int NB = kTrsmKernelLeafMax;
  __shared__ double Ls[NB * NB];  // Ls[k·NB + c] = L(c, k) below the diagonal, 1/L(k, k) on it
  const int r = threadIdx.x;
  // Thread r loads row r of every column of the leaf, 32 columns per batch.
#pragma unroll
  for (int k0 = 0; k0 < NB; k0 += kPanel) {
    double v[kPanel];
#pragma unroll
    for (int i = 0; i < kPanel; ++i) {
      const int k = k0 + i;
      v[i] = r < nb && k < nb && r >= k ? L[r + static_cast<long long>(k) * ldl] : (r == k ? 1.0 : 0.0);
    }
#pragma unroll
    for (int i = 0; i < kPanel; ++i) Ls[(k0 + i) * NB + r] = r == k0 + i && r < nb ? 1.0 / v[i] : v[i];
  }
  __syncthreads();
  const long long row = static_cast<long long>(blockIdx.x) * kRows + r;
  if (row >= m) return;
  double* b = B + row;  // entry (row, c) at b[c·ldb]
  double x[kPanel];
#pragma unroll
  for (int c = 0; c < kPanel; ++c) x[c] = c < nb ? b[static_cast<long long>(c) * ldb] : 0.0;
  solve_row_panel(x, Ls, NB);
#pragma unroll
  for (int c = 0; c < kPanel; ++c)
    if (c < nb) b[static_cast<long long>(c) * ldb] = x[c];
  if (nb <= kPanel) return;
  // Columns [32, nb): B2 −= X1·L21ᵀ, sixteen columns at a time.
  constexpr int kGroup = 16;
#pragma unroll
  for (int c0 = kPanel; c0 < NB; c0 += kGroup) {
    double s[kGroup];
#pragma unroll
    for (int i = 0; i < kGroup; ++i) s[i] = c0 + i < nb ? b[static_cast<long long>(c0 + i) * ldb] : 0.0;
#pragma unroll
    for (int k = 0; k < kPanel; ++k)
#pragma unroll
      for (int i = 0; i < kGroup; ++i) s[i] -= x[k] * Ls[k * NB + c0 + i];
#pragma unroll
    for (int i = 0; i < kGroup; ++i)
      if (c0 + i < nb) b[static_cast<long long>(c0 + i) * ldb] = s[i];
  }
#pragma unroll
  for (int c = 0; c < kPanel; ++c) x[c] = kPanel + c < nb ? b[static_cast<long long>(kPanel + c) * ldb] : 0.0;
  solve_row_panel(x, Ls + kPanel * NB + kPanel, NB);
#pragma unroll
  for (int c = 0; c < kPanel; ++c)
    if (kPanel + c < nb) b[static_cast<long long>(kPanel + c) * ldb] = x[c];
}

/// Cholesky of one diagonal block of order nb ≤ kPotrfLeaf in place (ld),
/// by one block of kPotrfThreads threads: thread t holds the entries
/// (i, 16g + q), q = 0..15, of row i = t mod 64 (g = t / 64, the same in a
/// warp) in registers, and the right-looking column algorithm (Golub and
/// Van Loan §4.2) runs with ONE barrier a column: the owners of column c
/// publish its entries as they stand (double-buffered in shared memory);
/// after the barrier every thread takes r = rsqrt(a(c, c)) itself, the
/// owners keep l(i, c) = a(i, c)·r (l(c, c) = a(c, c)·r, as the fused
/// subtree kernel does), and the rank-1 update is a(i, l) −= s·a(l, c)
/// with s = (a(i, c)·r)·r (one FMA an entry); a warp whose 16 columns are all
/// left of c skips it. The strictly upper triangle is set to zero (the
/// panel's assembly leaves zeros there; the left-looking update may have
/// written it). info: the LAPACK convention, counted from column `col0` of
/// the panel: when `first`, *info is set (0 or the failing column);
/// otherwise it is set only when it is 0 and this block fails. A pivot that
/// is not > 0 (NaN included) fails; the columns after it are then left as
/// computed (not meaningful).
/// Cost on the H200 (gpu_blas_bench --panel, bench/README.md): about 30 µs
/// for a 64-block, the serial chain of a column (barrier, shared-memory
/// load, rsqrt, FMAs, store) on one SM. Two earlier versions were no
/// faster: one thread a row with a serial shared-memory update loop, and
/// two barriers a column with sqrt and a division on the owner (Nsight
/// Compute on the latter: 12.2 cycles between a warp's instructions).
__global__ void __launch_bounds__(kPotrfThreads) potrf_leaf_kernel(double* __restrict__ A, int lda, int nb, int col0,
                                                                   bool first, int* __restrict__ info) {
  constexpr int NB = kPotrfLeaf, G = kPotrfThreads / NB, Q = NB / G;
  static_assert(NB % G == 0 && kPotrfThreads % NB == 0 && NB % 32 == 0, "threads must tile the block");
  __shared__ double col[2][NB];  // column c as it stands before its step, at col[c & 1]
  const int i = threadIdx.x % NB, g = threadIdx.x / NB, l0 = Q * g;
  double a[Q];
#pragma unroll
  for (int q = 0; q < Q; ++q) {
    const int l = l0 + q;
    a[q] = i < nb && l < nb && l <= i ? A[i + static_cast<long long>(l) * lda] : 0.0;
  }
  if (g == 0 && i < nb) col[0][i] = a[0];  // column 0
  int bad = 0;
#pragma unroll
  for (int c = 0; c < NB; ++c) {
    if (c >= nb) break;
    __syncthreads();
    const double* v = col[c & 1];
    const double d = v[c];
    if (!(d > 0.0) && bad == 0) bad = c + 1;
    const double r = rsqrt(d);
    if (g == c / Q && i >= c && i < nb) a[c % Q] = (i == c ? d : v[i]) * r;  // l(i, c)
    if (l0 + Q - 1 > c && i > c && i < nb) {  // this thread has entries right of column c
      const double s = (v[i] * r) * r;  // l(i, c)·r: r·r alone would overflow for a subnormal pivot
#pragma unroll
      for (int q = 0; q < Q; ++q) {
        const int l = l0 + q;
        if (l > c && l <= i) a[q] -= s * v[l];
      }
      // Publish column c + 1 as it now stands (its owners: g == (c + 1) / Q).
      if (c + 1 < nb && g == (c + 1) / Q) col[(c + 1) & 1][i] = a[(c + 1) % Q];
    }
  }
  if (i < nb) {
#pragma unroll
    for (int q = 0; q < Q; ++q) {
      const int l = l0 + q;
      if (l < nb) A[i + static_cast<long long>(l) * lda] = l <= i ? a[q] : 0.0;
    }
  }
  if (threadIdx.x == 0) {
    if (first) *info = bad ? col0 + bad : 0;
    else if (bad && *info == 0) *info = col0 + bad;
  }
}


/// Rows (and columns) of a tile of gpu_potrf_panel_rows: a thread block
/// owns 32 rows of the panel, and the panel's columns go by blocks of 32.
constexpr int kRowsTile = 32;
constexpr int kRowsThreads = 256;  ///< threads of its kernel (8 warps)
static_assert(kRowsTile == kPanel, "a tile's block of columns is one register panel");
static_assert(kPanelRowsTraceWords >= 5 + 5 * (kPanelRowsMaxK / kRowsTile), "room for every step's stamps");
static_assert(kPanelRowsMaxK % kRowsTile == 0 && kPanelRowsSyncInts == 1 + kPanelRowsMaxK / kRowsTile,
              "the sync words are a ticket and one flag per block of columns");

/// Columns of a diagonal tile's rows that potrf_rows_kernel stages at a
/// time (two such buffers: the next chunk's loads are in flight while the
/// current one updates the tile's rows).
constexpr int kRowsStage = 64;

/// Dynamic shared memory of potrf_rows_kernel for k columns (bytes): the
/// block's rows (32 × kp, kp = k rounded up to 32), two staging buffers of a
/// diagonal tile's rows (32 × kRowsStage each; one when kp ≤ kRowsStage), and
/// the 32 × 32 triangle of the TRSM. At k = 256: 104 KB, so that two blocks
/// fit one H200 multiprocessor (228 KB): a panel taller than 132 tiles of
/// 32 rows then runs in one wave.
/// Unchunked (`chunked` false, the launch of panels of at most one tile a
/// multiprocessor): the whole 32 × kp of a diagonal tile's finished columns
/// staged at once, 136 KiB at k = 256.
constexpr std::size_t rows_kernel_smem(int k, bool chunked = true) {
  const std::size_t kp = static_cast<std::size_t>((k + kRowsTile - 1) / kRowsTile) * kRowsTile;
  const std::size_t stage = !chunked ? kp : kp > kRowsStage ? 2 * kRowsStage : kRowsStage;
  return sizeof(double) * ((kp + stage) * kRowsTile + kRowsTile * kRowsTile);
}
static_assert(rows_kernel_smem(256) == 106496 && rows_kernel_smem(32) == 32768 &&
                  rows_kernel_smem(256, false) == 139264 && rows_kernel_smem(64) == 40960,
              "potrf_rows_kernel's shared memory: two chunked tiles of k = 256 fit 228 KiB");

/// dst[e] = load(e) for the thread's e in [0, n) (e ≡ threadIdx.x modulo
/// kRowsThreads), 16 loads in flight per thread: a rolled loop would wait
/// for each global load in turn (measured: ~28 µs a step of
/// potrf_rows_kernel on a 256-column panel that way).
template <class Load>
__device__ __forceinline__ void fill_batched(double* __restrict__ dst, int n, Load load) {
  constexpr int B = 16;
  for (int e0 = threadIdx.x; e0 < n; e0 += B * kRowsThreads) {
    double v[B];
#pragma unroll
    for (int q = 0; q < B; ++q) {
      const int e = e0 + q * kRowsThreads;
      v[q] = e < n ? load(e) : 0.0;
    }
#pragma unroll
    for (int q = 0; q < B; ++q) {
      const int e = e0 + q * kRowsThreads;
      if (e < n) dst[e] = v[q];
    }
  }
}

/// own(:, col + c) −= Σ_{l ∈ [l0, l1)} own(:, l)·src(c, l) for the tile's 32
/// rows (lane) and c < 32 (column-major tiles of 32 rows, as in
/// potrf_rows_kernel; warp W takes c = 4W .. 4W + 3). No barrier: the
/// caller keeps [col, col + 32) apart from what other warps read meanwhile.
__device__ __forceinline__ void update_block(double* __restrict__ own, const double* src, int l0, int l1, int col,
                                             int warp, int lane) {
  constexpr int TR = kRowsTile;
  const int c0 = 4 * warp;
  double acc[4];
#pragma unroll
  for (int q = 0; q < 4; ++q) acc[q] = own[(col + c0 + q) * TR + lane];
#pragma unroll 4
  for (int l = l0; l < l1; ++l) {
    const double a = own[l * TR + lane];
    const double2 s01 = *reinterpret_cast<const double2*>(src + l * TR + c0);
    const double2 s23 = *reinterpret_cast<const double2*>(src + l * TR + c0 + 2);
    acc[0] = fma(-a, s01.x, acc[0]);
    acc[1] = fma(-a, s01.y, acc[1]);
    acc[2] = fma(-a, s23.x, acc[2]);
    acc[3] = fma(-a, s23.y, acc[3]);
  }
#pragma unroll
  for (int q = 0; q < 4; ++q) own[(col + c0 + q) * TR + lane] = acc[q];
}

/// The diagonal block's factorisation in potrf_rows_kernel: one warp, the
/// 32×32 block's row `lane` in a[] (a(lane, c) = a[c]), right-looking by
/// columns, l(c, c) = d·r and l(i, c) = a(i, c)·r with d the pivot and
/// r = rsqrt_fast(d). Column c's entries reach the other lanes for the
/// rank-1 update through shared memory (`col`, 2 × 32 doubles: two
/// buffers, so that a lane still reading column c never sees c + 2), read
/// back as broadcasts of two entries at a time; lane c + 1 computes its
/// next pivot a(c + 1, c + 1) − l(c + 1, c)² from its own entries first and
/// shuffles it before the rest of the update. Entries above the diagonal
/// (lane < c) are garbage on return and never feed those below. Returns the
/// first column c < w whose pivot is not > 0 (NaN included), 1-based, or 0.
/// Measured on the H200 (bench/README.md, session 40): 8,000–8,300 cycles
/// a block, against 11,200–15,400 for session 39's (a shuffle and a select
/// per entry), ~11,000 for one shuffle per entry and 8,500–8,900 with the
/// next pivot shuffled after the update; taking the next pivot's
/// reciprocal square root before the update too was slower (8,700).
__device__ __forceinline__ int factor_diag_block(double (&a)[kRowsTile], int lane, int w, double* col) {
  constexpr int TR = kRowsTile;
  unsigned notpos = 0;  // bit c: pivot c not > 0
  double d = __shfl_sync(0xffffffffu, a[0], 0);
#pragma unroll
  for (int c = 0; c < TR; ++c) {
    notpos |= d > 0.0 ? 0u : 1u << c;
    const double r = rsqrt_fast(d);
    a[c] *= r;  // lane c: d·r, since d is its own a[c]
    const double lc = a[c];
    // Lane c + 1's pivot is a(c + 1, c + 1) − l(c + 1, c)², its own entries
    // (the update below computes the same on that lane).
    if (c + 1 < TR) d = __shfl_sync(0xffffffffu, fma(-lc, lc, a[c + 1]), c + 1);
    double* cc = col + (c & 1) * TR;
    cc[lane] = lc;
    __syncwarp();
#pragma unroll
    for (int l = (c + 1) & ~1; l < TR; l += 2) {
      const double2 v = *reinterpret_cast<const double2*>(cc + l);
      if (l > c) a[l] = fma(-lc, v.x, a[l]);
      a[l + 1] = fma(-lc, v.y, a[l + 1]);
    }
  }
  if (w < TR) notpos &= (1u << w) - 1u;
  return notpos ? __ffs(static_cast<int>(notpos)) : 0;
}

/// x := x·T⁻ᵀ for a tile's 32 rows X (column-major, X[c·32 + r], 32
/// columns) and a 32 × 32 lower triangle T in shared memory (T(c, kk) at
/// T[kk·32 + c], the reciprocal of T(kk, kk) on the diagonal), by all 256
/// threads: row r = tid / 8, the thread's columns c = p + 8q (p = tid % 8,
/// q < 4) in registers. For each kk in turn, every thread of the row scales
/// its copy of x_kk, the owner's (p = kk % 8) goes to the row's 8 threads by
/// one shuffle, and each updates its columns c > kk: the column-oriented
/// forward substitution of solve_row_panel, with a chain of one product,
/// one shuffle and one FMA a column instead of one warp doing all 528 FMAs.
__device__ __forceinline__ void solve_rows_spread(double* X, const double* T, int tid) {
  constexpr int TR = kRowsTile;
  const int r = tid >> 3, p = tid & 7;
  double x[4];
#pragma unroll
  for (int q = 0; q < 4; ++q) x[q] = X[(p + 8 * q) * TR + r];
#pragma unroll
  for (int kk = 0; kk < TR; ++kk) {
    const int qk = kk >> 3, pk = kk & 7;
    const double xk = __shfl_sync(0xffffffffu, x[qk] * T[kk * TR + kk], pk, 8);
    if (p == pk) x[qk] = xk;
#pragma unroll
    for (int q = qk; q < 4; ++q) {
      const double tc = T[kk * TR + p + 8 * q];
      if (p + 8 * q > kk) x[q] = fma(-xk, tc, x[q]);
    }
  }
#pragma unroll
  for (int q = 0; q < 4; ++q) X[(p + 8 * q) * TR + r] = x[q];
}

/// gpu_potrf_panel_rows's kernel: one thread block per tile of 32 rows of
/// the m×k panel, left-looking by blocks of 32 columns (Golub and Van Loan
/// §4.2, applied to a tile's rows as in a row-block Cholesky). Tiles are
/// numbered by arrival (a ticket from sync[0]), so a tile waits only for
/// tiles that started before it: no deadlock whatever the number of
/// resident blocks. Tile t holds its rows in shared memory: all k columns,
/// or for the tile of diagonal block t the columns up to that block. Flag j
/// (sync[1 + j]) of the tile of diagonal block j goes to 1 when that tile's
/// columns 0 .. 32j are final and home (flag 0: never; nobody waits for it),
/// and to 2 when its diagonal block is factorised and home; the 1 is set by
/// an atomic maximum, so the flag never goes back from 2. At step j (column
/// block j, columns cb = 32j .. cb + w):
///  - t > j: wait for flag j ≥ 1, stage tile j's rows (columns 0 .. cb) from
///    global memory (L2, __ldcg) and take X(t) −= L(t, 0:cb)·L(j, 0:cb)ᵀ
///    (the left-looking update; 4 columns a thread, its warp's 32 rows:
///    update_block). This overlaps tile j's factorisation of its diagonal
///    block: the chain of diagonal blocks carries no update. Then wait for
///    flag j = 2, stage L(j, j) (with the reciprocals of its diagonal) and
///    solve the tile's rows against it (solve_rows_spread, all warps); a
///    tile that holds a later diagonal block t < nblk also updates that
///    block by the columns just solved, so that its own step is the
///    factorisation alone; the block of columns goes home;
///  - t == j: release flag j = 1 (thread 32) while warp 0 factorises the
///    tile's 32×32 block in registers (factor_diag_block; rows below
///    the diagonal block, when k is not a multiple of 32, are solved by the
///    same steps), writes it home from its registers, sets *info (tile 0: 0
///    or its failing column; later tiles only while *info is 0, which keeps
///    the first failure, since tile j's step comes after every earlier
///    tile's) and releases flag j = 2.
/// A pivot that is not > 0 (NaN included) fails; later columns are garbage
/// and every flag is still released. The strictly upper triangle of the
/// diagonal blocks is written as zero.
/// With `trace` (measurement only): per tile (its ticket), kPanelRowsTraceWords
/// words: [0] globaltimer at the start, [1] clock64 at the start, [2 + 5j ..
/// 6 + 5j] clock64 after step j's wait for flag j ≥ 1, the staging and
/// update, the wait for flag j = 2 and the staging of L(j, j), the
/// factorisation or solve, and the write-out; [kPanelRowsTraceWords − 3]
/// the SM, [− 2] clock64 and [− 1] globaltimer at the end.
template <bool kChunked>
__global__ void __launch_bounds__(kRowsThreads) potrf_rows_kernel(int m, int k, double* __restrict__ P, int ldp,
                                                                  int* __restrict__ info, int* __restrict__ sync,
                                                                  long long* __restrict__ trace, unsigned spin_ns) {
  constexpr int TR = kRowsTile;
  extern __shared__ __align__(16) double smem[];  // (double2 loads below)
  __shared__ int s_tile;
  __shared__ __align__(16) double s_col[2 * TR];  // factor_diag_block's column buffers
  const int kp = (k + TR - 1) / TR * TR, nblk = kp / TR;
  constexpr int CH = kRowsStage;
  // Columns of S: the chunks' two buffers (one when kp ≤ CH: cb < kp), or kp.
  const int stage = !kChunked ? kp : kp > CH ? 2 * CH : CH;
  double* own = smem;          // own[c·TR + r] = P(row0 + r, c)
  // S: two buffers of CH columns, S[(q & 1)·CH·TR + c·TR + i] = L(cb + i,
  // q·CH + c) for chunk q of the diagonal tile's finished columns (< cb).
  double* S = smem + kp * TR;
  double* T = S + stage * TR;  // T[kk·TR + c] = L(cb + c, cb + kk) below the diagonal, 1 / L(cb + kk, cb + kk) on it
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  if (tid == 0) s_tile = atomicAdd(sync, 1);
  __syncthreads();
  const int t = s_tile, row0 = t * TR, rows = min(TR, m - row0);
  int* flag = sync + 1;
  long long* tr = trace && tid == 0 ? trace + static_cast<long long>(t) * kPanelRowsTraceWords : nullptr;
  auto now_ns = [] {
    long long v;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(v));
    return v;
  };
  auto wait_flag = [&](int j, int v) {
    if (tid == 0)
      while (load_acquire(flag + j) < v)
        if (spin_ns) __nanosleep(spin_ns);
  };
  if (tr) {
    tr[0] = now_ns();
    tr[1] = clock64();
  }
  // A tile of a diagonal block needs the columns up to that block only
  // (the rest is P11's upper triangle): tile 0 starts its factorisation,
  // the head of the chain, after loading one block of columns.
  const int kt = t < nblk ? (t + 1) * TR : kp;
  fill_batched(own, kt * TR, [&](int e) {
    const int c = e / TR, r = e % TR;
    return r < rows && c < k ? P[row0 + r + static_cast<long long>(c) * ldp] : 0.0;
  });
  __syncthreads();
  const int last = min(t, nblk - 1);
  for (int j = 0; j <= last; ++j) {
    const int cb = j * TR, w = min(TR, k - cb);
    if (j < t) {
      if (cb > 0) {
        wait_flag(j, 1);
        if (tr) tr[2 + 5 * j] = clock64();
        __syncthreads();
        if constexpr (!kChunked) {
          fill_batched(S, cb * TR, [&](int e) {
            const int c = e / TR, i = e % TR;
            return i < w ? __ldcg(P + cb + i + static_cast<long long>(c) * ldp) : 0.0;
          });
          __syncthreads();
          update_block(own, S, 0, cb, cb, warp, lane);
        } else {
        // Chunk q (columns q·CH .. of the diagonal tile's rows) in registers
        // (CH·TR / kRowsThreads = 8 a thread), then in buffer q & 1; chunk
        // q + 1's loads are issued before chunk q's update. Buffer q & 1 was
        // last read by chunk q − 2's update, before the previous barrier.
        constexpr int PER = CH * TR / kRowsThreads;
        static_assert(PER * kRowsThreads == CH * TR, "a chunk is whole loads per thread");
        double v[PER];
        auto load = [&](int q) {
#pragma unroll
          for (int u = 0; u < PER; ++u) {
            const int e = tid + u * kRowsThreads, c = q * CH + e / TR, i = e % TR;
            v[u] = i < w && c < cb ? __ldcg(P + cb + i + static_cast<long long>(c) * ldp) : 0.0;
          }
        };
        const int nch = (cb + CH - 1) / CH;
        load(0);
        for (int q = 0; q < nch; ++q) {
          double* buf = S + (q & 1) * CH * TR;
#pragma unroll
          for (int u = 0; u < PER; ++u) buf[tid + u * kRowsThreads] = v[u];
          __syncthreads();
          if (q + 1 < nch) load(q + 1);
          update_block(own, buf - q * CH * TR, q * CH, min(cb, (q + 1) * CH), cb, warp, lane);
        }
        }
      } else if (tr) {
        tr[2 + 5 * j] = clock64();
      }
      if (tr) tr[3 + 5 * j] = clock64();
      wait_flag(j, 2);
      __syncthreads();  // the update done (S free), flag j = 2 seen
      for (int e = tid; e < TR * TR; e += kRowsThreads) {
        const int kk = e / TR, c = e % TR;
        const double v = c >= kk && c < w ? __ldcg(P + cb + c + static_cast<long long>(cb + kk) * ldp) : 0.0;
        T[e] = c == kk ? (kk < w ? 1.0 / v : 1.0) : v;
      }
      __syncthreads();
      if (tr) tr[4 + 5 * j] = clock64();
      solve_rows_spread(own + cb * TR, T, tid);
      __syncthreads();
      if (tr) tr[5 + 5 * j] = clock64();
      // A tile holding a later diagonal block (t < nblk) takes the update of
      // that block by the columns just solved now: at its own step only the
      // factorisation remains. (Columns 32t and on are not read by the
      // write-out below.)
      if (t < nblk) update_block(own, own, cb, cb + TR, t * TR, warp, lane);
      for (int e = tid; e < w * TR; e += kRowsThreads) {
        const int c = e / TR, r = e % TR;
        if (r < rows) P[row0 + r + static_cast<long long>(cb + c) * ldp] = own[(cb + c) * TR + r];
      }
      if (tr) tr[6 + 5 * j] = clock64();
    } else {
      // The diagonal step: the previous steps' write-outs and updates of
      // this block are done by every thread past this barrier.
      __syncthreads();
      if (tr) tr[2 + 5 * j] = tr[3 + 5 * j] = tr[4 + 5 * j] = clock64();
      // Flag j = 1 by an atomic maximum: nothing orders this thread's
      // store with warp 0's release of 2 below (its fence may take longer
      // than the factorisation), and a plain store of 1 landing after the 2
      // would leave the waiters spinning for ever.
      if (tid == 32 && j > 0) {
        __threadfence();
        atomicMax(flag + j, 1);
      }
      if (warp == 0) {
        double a[TR];
#pragma unroll
        for (int c = 0; c < TR; ++c) a[c] = own[(cb + c) * TR + lane];
        // All 32 columns, with no branch on w: columns ≥ w are padding (zero:
        // their pivots are not tested and their garbage never reaches
        // columns < w nor goes home).
        const int bad = factor_diag_block(a, lane, w, s_col);
        if (lane < rows) {
          double* dst = P + row0 + lane + static_cast<long long>(cb) * ldp;
#pragma unroll
          for (int c = 0; c < TR; ++c)
            if (c < w) dst[static_cast<long long>(c) * ldp] = c > lane ? 0.0 : a[c];
        }
        __syncwarp();
        if (lane == 0) {
          if (j == 0) *info = bad;
          else if (bad) atomicCAS(info, 0, cb + bad);
          __threadfence();
          store_release(flag + j, 2);
        }
      }
      if (tr) tr[5 + 5 * j] = tr[6 + 5 * j] = clock64();
    }
  }
  if (tr) {
    unsigned sm;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
    tr[kPanelRowsTraceWords - 3] = sm;
    tr[kPanelRowsTraceWords - 2] = clock64();
    tr[kPanelRowsTraceWords - 1] = now_ns();
  }
}

/// Where to split a triangle of order n > 1: near the middle, at a multiple
/// of 64 when n ≥ 128 (aligned GEMM operands), always in [1, n).
int split(int n) {
  if (n < 128) return n / 2;
  const int h = ((n / 2 + 32) / 64) * 64;
  return std::clamp(h, 64, n - 1);
}

/// One leaf, X = B·Lkk⁻ᵀ with Lkk nb×nb (nb ≤ kTrsmKernelLeafMax for the kernel).
cublasStatus_t leaf(cublasHandle_t h, int m, int nb, const double* L, int ldl, double* B, int ldb, TrsmLeaf how) {
  if (how == TrsmLeaf::cublas) {
    const double one = 1.0;
    return cublasDtrsm(h, CUBLAS_SIDE_RIGHT, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_T, CUBLAS_DIAG_NON_UNIT, m, nb, &one,
                       L, ldl, B, ldb);
  }
  cudaStream_t stream = nullptr;
  if (cublasStatus_t s = cublasGetStream(h, &stream); s != CUBLAS_STATUS_SUCCESS) return s;
  const unsigned blocks = static_cast<unsigned>((static_cast<long long>(m) + kRows - 1) / kRows);
  trsm_leaf_kernel<<<blocks, kRows, 0, stream>>>(m, nb, L, ldl, B, ldb);
  return cudaGetLastError() == cudaSuccess ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_EXECUTION_FAILED;
}

cublasStatus_t trsm(cublasHandle_t h, int m, int n, const double* L, int ldl, double* B, int ldb, int leaf_order,
                    TrsmLeaf how) {
  if (n <= leaf_order) return leaf(h, m, n, L, ldl, B, ldb, how);
  const double one = 1.0, minus_one = -1.0;
  const int n1 = split(n), n2 = n - n1;
  const double* L21 = L + n1;
  const double* L22 = L + n1 + static_cast<long long>(n1) * ldl;
  double* B2 = B + static_cast<long long>(n1) * ldb;
  // X1 = B1·L11⁻ᵀ; B2 −= X1·L21ᵀ; X2 = B2·L22⁻ᵀ.
  cublasStatus_t s = trsm(h, m, n1, L, ldl, B, ldb, leaf_order, how);
  if (s != CUBLAS_STATUS_SUCCESS) return s;
  s = cublasDgemm(h, CUBLAS_OP_N, CUBLAS_OP_T, m, n2, n1, &minus_one, B, ldb, L21, ldl, &one, B2, ldb);
  if (s != CUBLAS_STATUS_SUCCESS) return s;
  return trsm(h, m, n2, L22, ldl, B2, ldb, leaf_order, how);
}

}  // namespace

cublasStatus_t gpu_potrf_panel(cublasHandle_t h, int m, int k, double* P, int ldp, int* info) {
  if (k < 0 || m < k || ldp < std::max(m, 1)) return CUBLAS_STATUS_INVALID_VALUE;
  if (k == 0) return CUBLAS_STATUS_SUCCESS;
  cudaStream_t stream = nullptr;
  if (cublasStatus_t s = cublasGetStream(h, &stream); s != CUBLAS_STATUS_SUCCESS) return s;
  const double one = 1.0, minus_one = -1.0;
  for (int j = 0; j < k; j += kPotrfLeaf) {
    const int b = std::min(kPotrfLeaf, k - j);
    double* Pj = P + j + static_cast<long long>(j) * ldp;  // the diagonal block (j, j)
    if (j > 0) {  // P(j:m, j:j+b) −= P(j:m, 0:j)·P(j:j+b, 0:j)ᵀ
      if (cublasStatus_t s = cublasDgemm(h, CUBLAS_OP_N, CUBLAS_OP_T, m - j, b, j, &minus_one, P + j, ldp, P + j, ldp,
                                         &one, Pj, ldp);
          s != CUBLAS_STATUS_SUCCESS)
        return s;
    }
    potrf_leaf_kernel<<<1, kPotrfThreads, 0, stream>>>(Pj, ldp, b, j, j == 0, info);
    if (cudaGetLastError() != cudaSuccess) return CUBLAS_STATUS_EXECUTION_FAILED;
    if (m - j - b > 0)
      if (cublasStatus_t s = leaf(h, m - j - b, b, Pj, ldp, Pj + b, ldp, TrsmLeaf::kernel); s != CUBLAS_STATUS_SUCCESS)
        return s;
  }
  return CUBLAS_STATUS_SUCCESS;
}

namespace {
__global__ void fold_info_kernel(int* total, const int* part, int offset) {
  const int p = *part;
  if (*total == 0 && p != 0) *total = p > 0 ? p + offset : p;
}
}  // namespace

cudaError_t gpu_fold_info(cudaStream_t stream, int* total, const int* part, int offset) {
  fold_info_kernel<<<1, 1, 0, stream>>>(total, part, offset);
  return cudaGetLastError();
}

namespace {
/// What potrf_rows_kernel's launch needs of a device, read once per device.
struct RowsDevice {
  int optin = 0;   ///< shared memory a block may opt in to (bytes)
  int nsm = 0;     ///< multiprocessors
  int spread = 0;  ///< shared memory (bytes) that leaves room for one block a multiprocessor
};

/// The current device's RowsDevice, or nullptr when CUDA cannot tell (the
/// query is then tried again at the next call). Thread-safe.
const RowsDevice* rows_device() {
  static RowsDevice devices[64];
  static std::atomic<int> ready[64] = {};  // 0: not read, 1: being read, 2: read
  int dev = 0;
  if (cudaGetDevice(&dev) != cudaSuccess || dev < 0) return nullptr;
  RowsDevice& d = devices[dev & 63];
  std::atomic<int>& r = ready[dev & 63];
  if (r.load(std::memory_order_acquire) == 2) return &d;
  int expected = 0;
  if (!r.compare_exchange_strong(expected, 1)) {
    while (r.load(std::memory_order_acquire) == 1) {
    }
    return r.load(std::memory_order_acquire) == 2 ? &d : nullptr;
  }
  int n = 0, per_sm = 0, optin = 0;
  if (cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess ||
      cudaDeviceGetAttribute(&per_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor, dev) != cudaSuccess ||
      cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev) != cudaSuccess) {
    (void)cudaGetLastError();
    r.store(0, std::memory_order_release);
    return nullptr;
  }
  d.optin = optin;
  d.nsm = std::max(n, 1);
  d.spread = std::min(per_sm / 2 + 1024, optin);
  r.store(2, std::memory_order_release);
  return &d;
}
}  // namespace

bool gpu_potrf_panel_rows_fits(int k) {
  if (k < 0 || k > kPanelRowsMaxK) return false;
  if (rows_kernel_smem(k) <= 48 * 1024) return true;  // no opt-in needed
  const RowsDevice* d = rows_device();
  return d && static_cast<long long>(rows_kernel_smem(k)) <= d->optin;
}

namespace {
/// Raises potrf_rows_kernel's shared-memory limit on the current device to
/// `smem` bytes, and at least to what kPanelRowsMaxK needs (a setting of the
/// device's function, the same for every thread; raised only, never
/// lowered), and asks for the largest shared-memory carve-out, so that two
/// blocks of 104 KiB share a multiprocessor. smem ≤ the device's opt-in
/// limit. False when CUDA refuses.
template <bool kChunked>
bool raise_rows_kernel_smem(int smem) {
  static std::atomic<int> raised[64] = {};
  int dev = 0;
  if (cudaGetDevice(&dev) != cudaSuccess) return false;
  std::atomic<int>& done = raised[dev & 63];
  if (done.load() >= std::max(smem, 1)) return true;
  const int want = std::max(
      smem, gpu_potrf_panel_rows_fits(kPanelRowsMaxK) ? static_cast<int>(rows_kernel_smem(kPanelRowsMaxK)) : 0);
  if (cudaFuncSetAttribute(potrf_rows_kernel<kChunked>, cudaFuncAttributeMaxDynamicSharedMemorySize, want) !=
          cudaSuccess ||
      cudaFuncSetAttribute(potrf_rows_kernel<kChunked>, cudaFuncAttributePreferredSharedMemoryCarveout,
                           cudaSharedmemCarveoutMaxShared) != cudaSuccess)
    return false;
  int seen = done.load();
  while (seen < want && !done.compare_exchange_weak(seen, want)) {
  }
  return true;
}
}  // namespace

int gpu_potrf_panel_rows_blocks_per_sm(int k) {
  if (!gpu_potrf_panel_rows_fits(k)) return 0;
  if (!raise_rows_kernel_smem<true>(static_cast<int>(rows_kernel_smem(k)))) {
    (void)cudaGetLastError();
    return 0;
  }
  int n = 0;
  if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, potrf_rows_kernel<true>, kRowsThreads, rows_kernel_smem(k)) !=
      cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return n;
}

cublasStatus_t gpu_potrf_panel_rows(cudaStream_t stream, int m, int k, double* P, int ldp, int* info, int* sync,
                                    long long* trace) {
  if (k < 0 || k > kPanelRowsMaxK || m < k || ldp < std::max(m, 1)) return CUBLAS_STATUS_INVALID_VALUE;
  if (k == 0) return CUBLAS_STATUS_SUCCESS;
  if (!gpu_potrf_panel_rows_fits(k)) return CUBLAS_STATUS_NOT_SUPPORTED;
  const int nblk = (k + kRowsTile - 1) / kRowsTile;
  const unsigned tiles = static_cast<unsigned>((static_cast<long long>(m) + kRowsTile - 1) / kRowsTile);
  // A panel of no more tiles than the device has multiprocessors runs the
  // unchunked kernel (session 40's: a diagonal tile's finished columns
  // staged at once) with more than half a multiprocessor's shared memory,
  // one tile a multiprocessor. A taller panel runs the chunked kernel, two
  // tiles a multiprocessor, so that it runs in one wave. (On the H200 the
  // chunked kernel's 32-column diagonal block took ~10,600 cycles against
  // ~8,000 for the unchunked one, even one tile a multiprocessor: 897 × 100
  // in 42.5 against 37.8 µs; session 42. Why was not found: no SASS was
  // compared.)
  int smem = static_cast<int>(rows_kernel_smem(k));
  bool chunked = true;
  const RowsDevice* d = rows_device();
  if (!d) return CUBLAS_STATUS_EXECUTION_FAILED;
  const int whole = static_cast<int>(rows_kernel_smem(k, false));
  if (tiles <= static_cast<unsigned>(d->nsm) && whole <= d->optin) {
    chunked = false;
    smem = std::max(whole, d->spread);
  }
  if (!(chunked ? raise_rows_kernel_smem<true>(smem) : raise_rows_kernel_smem<false>(smem)))
    return CUBLAS_STATUS_EXECUTION_FAILED;
  if (cudaMemsetAsync(sync, 0, sizeof(int) * static_cast<std::size_t>(1 + nblk), stream) != cudaSuccess)
    return CUBLAS_STATUS_EXECUTION_FAILED;
  // Measurement knob, read once: STARFRONT_GPU_ROWS_SPIN_NS=N (0 to 10000)
  // makes a waiting block sleep N ns between polls of a flag (default 0:
  // polls back to back).
  static const unsigned spin_ns = [] {
    const char* e = std::getenv("STARFRONT_GPU_ROWS_SPIN_NS");
    const long v = e ? std::strtol(e, nullptr, 10) : 0;
    return static_cast<unsigned>(std::clamp<long>(v, 0, 10000));
  }();
  const std::size_t bytes = static_cast<std::size_t>(smem);
  if (chunked)
    potrf_rows_kernel<true><<<tiles, kRowsThreads, bytes, stream>>>(m, k, P, ldp, info, sync, trace, spin_ns);
  else
    potrf_rows_kernel<false><<<tiles, kRowsThreads, bytes, stream>>>(m, k, P, ldp, info, sync, trace, spin_ns);
  return cudaGetLastError() == cudaSuccess ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_EXECUTION_FAILED;
}

const GpuTrsmOptions& gpu_trsm_options() {
  static const GpuTrsmOptions opts = [] {
    GpuTrsmOptions o;
    if (const char* s = std::getenv("STARFRONT_GPU_TRSM_LEAF"); s && *s) {
      char* end = nullptr;
      errno = 0;
      const long v = std::strtol(s, &end, 10);
      if (errno == 0 && *end == '\0' && v >= 0 && v <= INT_MAX) o.leaf = static_cast<int>(v);
    }
    if (const char* s = std::getenv("STARFRONT_GPU_TRSM_METHOD")) {
      if (!std::strcmp(s, "cublas")) o.method = TrsmLeaf::cublas;
      else if (!std::strcmp(s, "kernel")) o.method = TrsmLeaf::kernel;
    }
    return o;
  }();
  return opts;
}

cublasStatus_t gpu_trsm_right_lower_trans(cublasHandle_t h, int m, int n, const double* L, int ldl, double* B,
                                          int ldb, const GpuTrsmOptions& o) {
  if (m <= 0 || n <= 0) return CUBLAS_STATUS_SUCCESS;
  if (ldl < n || ldb < m) return CUBLAS_STATUS_INVALID_VALUE;
  int leaf_order = o.leaf <= 0 ? n : o.leaf;
  if (o.method == TrsmLeaf::kernel)
    leaf_order = o.leaf <= 0 ? kTrsmKernelLeafMax : std::min(o.leaf, kTrsmKernelLeafMax);
  return trsm(h, m, n, L, ldl, B, ldb, leaf_order, o.method);
}

}  // namespace starfront
