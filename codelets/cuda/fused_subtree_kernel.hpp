// The fused GPU subtree kernel (issue 6; fused_subtree.cu): ONE launch
// assembles and factorises (dense Cholesky, LLᵀ) every front of a `subtree`
// task of the task graph, children before parents, and writes L straight
// into the task's panel block and the root's contribution block (CB) into
// its planned slot.
//
// Launch shape and why it cannot deadlock: two launches on one stream, the
// small fronts (tickets [0, nsmall): fused_subtree_index.hpp) with blocks of
// kFusedThreads threads and at most 16.3 KiB of shared memory (many per SM), then
// the large fronts near the root (tickets [nsmall, nfronts)) with blocks of
// kFusedLargeThreads threads and up to 227 KiB. In each launch, a grid of B
// blocks (any B >= 1) takes the next front by an atomic ticket counter over
// the index's ticket order (a topological order, children first), waits (one
// thread per child spins with __nanosleep on its completion flag,
// device-scope acquire, then a block-wide AND) until the front's children
// are complete, then processes it and publishes
// its flag (device-scope release after a block barrier; the release and the
// acquires need no extra fence: FusedLaunch::fences), and takes the next
// ticket. A front only waits on fronts with smaller tickets; a ticket is
// taken only by a block that is already running and never yields it. By
// induction on tickets, the unfinished front with the smallest ticket has
// all its children complete and its block running, so it completes: the
// kernel terminates whatever the residency of blocks and the scheduling of
// the hardware. The small part is closed under taking descendants, so the
// first launch's fronts wait only on fronts of their own launch, and it
// terminates on its own. The second launch is a programmatic dependent
// launch (sm_90; FusedLaunch::overlap_launches): every block of the first
// executes griddepcontrol.launch_dependents as it starts, and the hardware
// starts blocks of the second only once every block of the first has done
// so (or exited): every first-launch front a second-launch block waits on
// is then held by a resident block or finished, and the induction above
// applies to the union of the two launches. Without the overlap (or where
// the attribute is not honoured) the second starts after the first has
// completed (stream order). The overlap lets a large front start as soon as
// its own small children are done, not when the last small front is.
//
// Each front's prologue (FusedLaunch::early: zeroing, A's entries, |a_jj|
// and the children's descriptors into shared memory) runs before its block
// waits for the children: it touches only the front's own memory. Then the
// wait and the extend-add are one loop: the block adds, in the plan's child
// order, every child that is complete before the first one that is not, and
// waits for that one (so the CBs of the children that finished early are
// added while the last still runs, in the same order at every run). A front
// writes its CB, publishes its flag, and only then writes L (which nothing
// in the launch reads).
//
// Extend-add is owner-computes: the block of the parent pulls each child's CB
// in turn (a barrier between children) and is the only writer of its front,
// so no atomics are needed and the result is race-free; within one child,
// distinct CB entries have distinct targets (relative indices are
// injective). Child CBs are read with ld.global.cg (L2, not the possibly
// stale L1 of this SM), several rows per lane loaded before they are added
// (the loads' latencies overlap); in the small launch the entries of a CB's
// lower triangle are dealt evenly to all the block's threads, in the large
// launch one warp takes a CB column. An internal CB is written (and read)
// lower triangle only; the root's CB, which other tasks read, whole. A's
// entries are scattered with shared (or global) atomic adds, which only
// matter for duplicate entries.
//
// A front of order m is factorised in shared memory (its lower triangle
// packed by columns) when m(m+1)/2·8 bytes fit in the launch's dynamic
// shared memory (up to 227 KiB on sm_90: m <= 239), otherwise in place in
// global memory (L in the panel, the CB in its workspace region; slow, for
// graphs not built with gpu_graph_options). Dense Cholesky: blocked
// right-looking, kFusedBlock columns at a time (4 in the small launch),
// with a look-ahead of one block (FusedLaunch::lookahead): the diagonal
// block by one warp, every lane factorising its own register copy of the
// block (no shuffle on the serial column chain; |a_jj| from the prologue's
// shared cache, columns scaled by rsqrt of the pivot as LAPACK's dpotf2
// scales by the reciprocal, the relative pivot test afterwards one lane per
// column); rows below by row-wise triangular solves reusing those
// reciprocals; then a rank-8 update of the trailing lower triangle (sums
// first, kTrailCols or kTrailColsLarge columns per warp at a time so that
// each row's L entries are loaded once for them) by
// warps 1.., while warp 0 updates the next diagonal block and factorises it
// (the serial diagonal block overlaps the update; look-ahead as in J.
// Kurzak and J. Dongarra, "Implementing linear algebra routines on
// multi-core processors with pipelining and a look ahead", PARA 2006, LNCS
// 4699). Two block barriers per block of columns; every entry gets the same
// sums in the same order as without the look-ahead. Full blocks (all but a
// front's last) run code specialised for their width: no per-column test
// in the diagonal block's chain or in the sums, the trailing update's sums
// of a row side by side; the trailing update deals its column groups to
// the warps in alternating order (FusedLaunch::snake).
//
// Pivot test (the CPU's: codelets/cpu/front_cholesky.hpp): a pivot d <= 0 or
// NaN stops the front (LAPACK's info); otherwise the first column with l²
// not finite or <= pivot_tol·|a_jj| fails. A failed front is not written;
// its ancestors in the task are skipped. The smallest failing column of the
// launch is reported (as the CPU's sequential pass reports its first failure:
// see fused_subtree_index.hpp's emulation).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "cuda/fused_subtree_index.hpp"

namespace starfront {

/// Threads per block of the fused kernel: small fronts, large fronts (the
/// default of FusedLaunch::large_threads).
constexpr int kFusedThreads = 128;
constexpr int kFusedLargeThreads = 512;
/// Columns per block of the dense Cholesky of a front (fused_subtree.cu's factor()).
constexpr int kFusedBlock = 8;
/// Trailing-update columns per warp at a time (register tiling) in factor():
/// small launch, large launch (each row's L entries are loaded once for that
/// many columns: fewer shared-memory loads per flop).
constexpr int kTrailCols = 2;
constexpr int kTrailColsLarge = 4;  ///< the default of FusedLaunch::large_cols

/// Words of FusedLaunch::phases (SM cycles, clock64(), summed over the large
/// launch's fronts): fronts and blocks of columns counted; cycles of
/// factor() as thread 0 sees it, of its part before the block loop (the
/// first diagonal block and a barrier); of the look-ahead's update of the
/// next diagonal block (thread 0, inside its step); then per block of columns, for
/// thread 0 (warp 0, which factorises the next diagonal block) and for
/// thread 32 (warp 1, a trailing-update warp): the row solve, the wait at
/// the barrier after it, the step after that (look-ahead or trailing
/// update), and the wait at the barrier that closes the block.
enum FusedPhase : int {
  kPhaseFronts = 0,
  kPhaseBlocks,
  kPhaseFactor,
  kPhaseFirstDiag,
  kPhaseUpdateNext,  ///< thread 0: the look-ahead's update of the next diagonal block (part of its step)
  kPhaseRole0,  ///< 4 words for thread 0, then 4 for thread 32: row solve, wait, step, wait
  kFusedPhaseWords = kPhaseRole0 + 8
};

/// Results and synchronisation words of one launch (device memory, zeroed
/// before the launch by launch_fused_subtree).
struct FusedStatus {
  unsigned int ticket[2];         ///< next ticket of each launch (small part, large part)
  unsigned long long fail_key;    ///< 0: no failure; else 2^62 - (smallest failing column)
  unsigned long long ratio_key;   ///< 0: none; else ~bits(min over done fronts of l²/|a_jj|)
  unsigned long long pad2;
};

/// Arguments of one launch. Device pointers; fronts/children/rel/entries/diag
/// point into the uploaded index blob (fronts at the task's first front).
struct FusedLaunch {
  const FusedFront* fronts = nullptr;
  const FusedChild* children = nullptr;
  const std::int32_t* rel = nullptr;
  const FusedEntry* entries = nullptr;
  const std::int64_t* diag = nullptr;
  const double* values = nullptr;  ///< A's values
  double* panel = nullptr;         ///< the task's panel block (L of its fronts)
  double* root_cb = nullptr;       ///< the root's CB (slot), null when it has none
  double* workspace = nullptr;     ///< FusedTaskIndex::workspace doubles (internal CBs)
  FusedStatus* status = nullptr;   ///< followed by int done[nfronts], then double pivot[nfronts] (8-aligned)
  int nfronts = 0;
  int nsmall = 0;           ///< tickets [0, nsmall) in the first launch
  int max_order_small = 0;  ///< largest order among them
  int max_order = 0;        ///< largest order of all
  double pivot_tol = 0.0;
  /// Run each front's prologue (zeroing, A's entries, |a_jj| and the
  /// children's descriptors into shared memory) before waiting for its
  /// children, and add each child's CB as soon as it and the children
  /// before it are complete, overlapping their work (default); or wait for
  /// all, then the prologue, then the extend-add (measurement knob).
  bool early = true;
  /// Null (default), or kFusedTracePoints × nfronts words of device memory
  /// that receive each front's %globaltimer stamps in ns (zeroed by
  /// launch_fused_subtree; fused_trace_summary reads them).
  unsigned long long* trace = nullptr;
  /// Null (default), or kFusedPhaseWords words of device memory, zeroed
  /// by the caller before the launch, that receive clock64() cycle sums of
  /// factor()'s steps in the large launch (FusedPhase; measurement knob
  /// STARFRONT_FUSED_PHASES=1).
  unsigned long long* phases = nullptr;
  /// Back-off of a thread polling a child's flag between two loads, ns
  /// (__nanosleep; 0: spin).
  unsigned int poll_sleep_ns = 64;
  /// factor()'s look-ahead: warp 0 factorises the next diagonal block
  /// while the other warps update the trailing matrix (default), or the
  /// three separate phases (measurement knob; same arithmetic).
  bool lookahead = true;
  /// The second launch (large fronts) as a programmatic dependent launch
  /// that may start while the first still runs (default; the header says
  /// why this cannot deadlock), or after it (measurement knob). With the
  /// overlap, launch_fused_subtree records no event between the launches.
  bool overlap_launches = true;
  /// factor()'s trailing update deals its groups of columns to the warps
  /// in rounds, every other round in reverse order, so that every warp
  /// gets long and short columns alike (default); or in order (measurement
  /// knob STARFRONT_FUSED_SNAKE=0).
  bool snake = true;
  /// Shape of the large launch: threads per block and trailing-update
  /// columns per warp at a time. Supported: 512×4 (default), 512×2, 384×2, 256×4;
  /// another pair makes launch_fused_subtree return cudaErrorInvalidValue
  /// (measurement knob: STARFRONT_FUSED_LARGE).
  int large_threads = kFusedLargeThreads;
  int large_cols = kTrailColsLarge;
  /// The small launch's blocks per multiprocessor the compiler is asked to
  /// fit (__launch_bounds__' minimum): 6 (default: 80 registers a thread,
  /// six blocks resident) or 8 (at most 64 registers, more spilled; eight
  /// blocks resident, so fewer fronts wait for a block, as session 44's
  /// schedule model predicted; on the H200 the GPU time did not move:
  /// bench/README.md); another value makes
  /// launch_fused_subtree return cudaErrorInvalidValue (measurement knob:
  /// STARFRONT_FUSED_SMALL_BLOCKS=8; any other setting of it means 6).
  int small_min_blocks = 6;
  /// A __threadfence() (fence.sc.gpu) also before a completion flag's
  /// release store and after the acquire loads of the children's flags
  /// (measurement knob STARFRONT_FUSED_FENCES=1), or not (default): the
  /// release store (st.release.gpu) after the block barrier and the
  /// acquire loads (ld.acquire.gpu) before one already order the CB's
  /// writes by every thread of the child's block before the reads by
  /// every thread of the parent's (PTX memory model: a release is
  /// cumulative over what precedes it in causality order, which the
  /// barrier extends to the whole block; the same pattern as CUTLASS's
  /// semaphore). The fences cost about 0.7 µs per front on the chain.
  bool fences = false;
  /// The small launch's extend-add of a child's CB with its lower triangle
  /// dealt to all the block's threads, several entries in flight per
  /// thread (default), or one warp per CB column, as the large launch does
  /// (measurement knob STARFRONT_FUSED_FLAT_ADD=0); the same sums either
  /// way.
  bool flat_add = true;
};

/// Largest front order m whose packed lower triangle (m(m+1)/2 doubles)
/// fits in the large launch's shared memory on every CUDA device of the
/// process (239 on sm_90's 227 KiB): a fused subtree with a larger front runs
/// that front through the kernel's slow global-memory path. Queried
/// once per process (thread-safe); 0 when no device can be queried.
int fused_shared_max_order();

/// Device bytes of the status area of a launch of nfronts fronts (FusedStatus,
/// completion flags, failed pivots).
std::size_t fused_status_bytes(int nfronts);

/// Co-resident blocks a multiprocessor (the occupancy the grid was sized
/// by) of the most recent small (`small` true) or large launch of the
/// process, and its grid; 0 before any (a measurement: gpu_bench prints it).
struct FusedLaunchShape {
  int blocks_per_sm = 0, grid = 0;
};
FusedLaunchShape fused_last_launch_shape(bool small);

/// Queues the zeroing of the status area and the kernel's (at most) two
/// launches on `stream`; grids: as many blocks as are co-resident
/// (occupancy × SMs), at most the launch's fronts. launches (out, may be
/// null): kernel launches queued. Returns the first error.
/// events (may be null): three events recorded before the first launch,
/// between the two (not with p.overlap_launches and both parts non-empty)
/// and after the second (GPU time of each part).
cudaError_t launch_fused_subtree(const FusedLaunch& p, cudaStream_t stream, int* launches, cudaEvent_t* events);

#ifdef __CUDACC__
#define STARFRONT_HOST_DEVICE __host__ __device__
#else
#define STARFRONT_HOST_DEVICE
#endif

/// Pointer to the done flags and to the failed pivots inside a status area.
STARFRONT_HOST_DEVICE inline int* fused_done_flags(FusedStatus* s) { return reinterpret_cast<int*>(s + 1); }
STARFRONT_HOST_DEVICE inline double* fused_pivots(FusedStatus* s, int nfronts) {
  const std::size_t off = (sizeof(FusedStatus) + sizeof(int) * static_cast<std::size_t>(nfronts) + 7) / 8 * 8;
  return reinterpret_cast<double*>(reinterpret_cast<char*>(s) + off);
}

}  // namespace starfront
