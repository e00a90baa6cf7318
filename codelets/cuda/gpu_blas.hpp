// TRSM on the GPU with its flops in matrix products: the triangular solve of
// a front's (or a tile's) off-diagonal panel, L21 := A21·L11⁻ᵀ, after the
// Cholesky factorisation of its diagonal block.
//
// Why: on the H200, cuBLAS DTRSM ran at 9.7 TFLOP/s on 2048×2048 and
// 1.9 TFLOP/s on 1500×600, against 50 and 18 TFLOP/s for DGEMM of the same
// flops (gpu_blas_bench, bench/README.md), and the 2048-wide tile TRSMs of
// lap3d 100³ took 117 ms of the GPU's 497. cuBLAS already splits the
// triangle recursively into GEMMs (the split below with cuBLAS leaves gave
// bit-identical results in the same time); its cost is in the small
// triangular solves at the bottom. Here the triangle is split recursively,
//   X·Lᵀ = B,  L = [L11 0; L21 L22]:  X1 = B1·L11⁻ᵀ,  B2 −= X1·L21ᵀ (GEMM),
//   X2 = B2·L22⁻ᵀ,
// (the recursive blocked algorithm of Elmroth, Gustavson, Jonsson and
// Kågström, SIAM Review 46(1), 2004) down to leaves of order ≤ 64, and a
// leaf is solved by this file's kernel: one thread per row of B, the row in
// registers, the leaf triangle in shared memory, the column-oriented
// forward substitution with no barrier. The arithmetic of a leaf is the
// textbook substitution's (Golub and Van Loan, "Matrix Computations", 4th
// ed., §3.1) with the division by L(k,k) done as a product with its
// reciprocal, so the method is as stable as a blocked DTRSM; results differ
// from cuBLAS's at rounding level (3e-16 relative in gpu_blas_bench).
// Measured: 1.05× cuBLAS on 2048×2048, 1.2–1.3× on 1500×600 to 5000×2500,
// 0.93–0.97× on 800×300 and 2000×128; tile TRSMs of lap3d 100³ 117 → 92 ms.
// Tried and not kept (slower than cuBLAS): leaves inverted by cuBLAS
// (TRSM on the identity) then multiplied by TRMM or GEMM; a leaf kernel
// with a 64-row panel in shared memory and one barrier per column.
//
// Everything is queued on the cuBLAS handle's stream; nothing synchronises
// and no memory is allocated. Column major, leading dimensions in elements,
// int sizes as cuBLAS takes them.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>

namespace starfront {

/// How a leaf (a diagonal block of order ≤ the leaf order) of
/// gpu_trsm_right_lower_trans is solved.
enum class TrsmLeaf {
  cublas,  ///< cublasDtrsm as is
  kernel,  ///< this file's register leaf kernel (leaf order ≤ kTrsmKernelLeafMax)
};

/// Largest leaf order of TrsmLeaf::kernel (a row of the leaf in a thread's
/// registers, the leaf's triangle in 32 KiB of shared memory).
constexpr int kTrsmKernelLeafMax = 64;

/// The recursion's settings: leaf order (≤ 0: no split) and leaf method;
/// with TrsmLeaf::kernel the leaf order is taken as min(leaf,
/// kTrsmKernelLeafMax), and ≤ 0 as kTrsmKernelLeafMax. Defaults measured on
/// the H200 (gpu_blas_bench, bench/README.md); STARFRONT_GPU_TRSM_LEAF (a
/// decimal integer ≥ 0, as strtol reads it) and STARFRONT_GPU_TRSM_METHOD
/// (cublas or kernel), read once, override them for measurements; anything
/// else keeps the default.
struct GpuTrsmOptions {
  int leaf = 64;
  TrsmLeaf method = TrsmLeaf::kernel;
};

/// The options in force: the defaults above or the environment's, read on
/// the first call (thread-safe).
const GpuTrsmOptions& gpu_trsm_options();

/// B := B·L⁻ᵀ on the GPU: L n×n lower triangular with a non-unit diagonal
/// (only its lower triangle is read), B m×n, overwritten with X (rows ≥ m
/// of its leading dimension are neither read nor written). The triangle is
/// split near its middle (at a multiple of 64 when n ≥ 128, in halves
/// below) until its order is ≤ the leaf order; leaves as o.method says.
/// Returns the first failing status, after which nothing more is queued: a
/// cuBLAS status, or CUBLAS_STATUS_EXECUTION_FAILED when cudaGetLastError
/// reports an error after the leaf kernel's launch (it is read, and so
/// cleared; an error left by earlier work of the thread reads the same).
/// m ≤ 0 or n ≤ 0 queues nothing and returns success; otherwise ldl < n or
/// ldb < m returns CUBLAS_STATUS_INVALID_VALUE with nothing queued.
/// Preconditions, not checked: device pointers, L and B
/// sharing no element (B may lie beside L in one array, as a front's
/// off-diagonal block does), the handle in host pointer mode.
cublasStatus_t gpu_trsm_right_lower_trans(cublasHandle_t h, int m, int n, const double* L, int ldl, double* B,
                                          int ldb, const GpuTrsmOptions& o);

/// Cholesky of a front's fully-summed columns on the GPU: P is the m×k
/// panel (k ≤ m, leading dimension ldp ≥ m), P11 = L11·L11ᵀ (k×k, lower
/// triangle read; the strictly upper triangle is set to zero) and
/// L21 = P21·L11⁻ᵀ, in place: what cusolverDnDpotrf on P11 followed by
/// gpu_trsm_right_lower_trans on P21 compute. Left-looking by blocks of 64
/// columns (Golub and Van Loan §4.2): block column j is updated by one
/// DGEMM with the columns before it, its diagonal block factorised by one
/// thread block of this file (one barrier a column), and the rows below it
/// solved by the TRSM leaf kernel: three launches a block column.
/// Measured on the H200 against cuSOLVER's DPOTRF + this file's TRSM
/// (gpu_blas_bench --panel, calls queued back to back): 2.1–2.2× faster
/// for k ≤ 16 (700×12: 13.5 against 28.1 µs), 0.95× at 1000×50, 0.9–1.1×
/// from k = 89 to 1110 and 0.5× on square blocks of 512 and 2048: a
/// 64-column diagonal block costs ~30 µs on one SM, latency-bound. The
/// front task uses it for k ≤ 32 (task_kernels_cuda.cpp).
/// info (device int): LAPACK's convention, 0 or the first column (1-based)
/// whose pivot is not > 0 (NaN included); later columns then hold garbage.
/// Queued on the handle's stream (host pointer mode); no allocation, no
/// synchronisation. Returns CUBLAS_STATUS_INVALID_VALUE (nothing queued)
/// for k < 0, m < k or ldp < max(m, 1), success with nothing queued (info
/// untouched) for k = 0, otherwise the first failing status
/// (CUBLAS_STATUS_EXECUTION_FAILED when a kernel launch fails).
cublasStatus_t gpu_potrf_panel(cublasHandle_t h, int m, int k, double* P, int ldp, int* info);

/// Largest k of gpu_potrf_panel_rows.
constexpr int kPanelRowsMaxK = 256;
/// Ints of device workspace (`sync`) that gpu_potrf_panel_rows needs: a
/// ticket counter and one flag per block of 32 columns.
constexpr int kPanelRowsSyncInts = 1 + kPanelRowsMaxK / 32;
/// Words a tile of 32 rows takes in gpu_potrf_panel_rows's trace.
constexpr int kPanelRowsTraceWords = 48;

/// True when the current device can run gpu_potrf_panel_rows with k
/// columns: 0 ≤ k ≤ kPanelRowsMaxK and its 32·(⌈k/32⌉·32 + s) + 32² doubles
/// of shared memory a block (s = 128 staged columns, 64 when k ≤ 64) within
/// the device's opt-in limit (104 KiB at k = 256: the H100 and H200 have
/// 227 KiB; a V100 96). False when the device cannot be queried.
/// Thread-safe; the limit is read once per device.
bool gpu_potrf_panel_rows_fits(int k);

/// Thread blocks of gpu_potrf_panel_rows's kernel (one per tile of 32 rows)
/// that one multiprocessor of the current device holds at once with k
/// columns (CUDA's occupancy calculator: shared memory, registers,
/// threads); 0 when k does not fit or CUDA cannot tell. 2 on the H200 at
/// k = 256 (104 KiB and 128 registers a thread), so that a panel of more
/// tiles than the device has multiprocessors (up to 264 tiles, 8,448 rows,
/// on the H200) runs in one wave: a tile's block holds its multiprocessor
/// for the whole chain of diagonal blocks, and a second wave waits for the
/// first (5332 × 256 took 160–200 µs in lap3d 60³ with one block a
/// multiprocessor, 109 µs alone with two; bench/README.md, session 42).
/// Panels of at most one tile a multiprocessor run an unchunked variant of
/// the kernel (a diagonal tile's finished columns staged at once, 136 KiB at
/// k = 256), one tile a multiprocessor (gpu_potrf_panel_rows).
int gpu_potrf_panel_rows_blocks_per_sm(int k);

/// What gpu_potrf_panel computes (P11 = L11·L11ᵀ, L21 = P21·L11⁻ᵀ in place,
/// info as LAPACK's; the strictly upper triangle of each 32×32 diagonal
/// block is set to zero, P11's other entries above the diagonal are
/// neither read nor written), in
/// ONE kernel launch (after a memset of `sync`): one thread block per tile
/// of 32 rows, left-looking by blocks of 32 columns, the tile of each
/// diagonal block factorised by one warp in registers and the others solved
/// against it as soon as a flag in `sync` says it is done (tiles numbered
/// by a ticket taken at their start, so a block only waits for blocks that
/// started before it). A tile takes the update of block j by the earlier
/// blocks while block j's diagonal is being factorised (a second value of
/// the same flag), so the chain from one diagonal block to the next is that
/// block's factorisation, the solve of the next tile's rows (all warps) and
/// the update of its diagonal block. For the medium fronts of lap3d (k =
/// 64–255), where cuSOLVER's DPOTRF and the TRSM cost 115–178 µs a front in
/// many small launches (bench/README.md, session 33), and the blocks of
/// medium fronts by blocks (task_kernels_cuda.cpp, blocked_front_columns).
/// Measured on the H200 (gpu_blas_bench --panel, session 40): 2.0–2.9×
/// faster than cuSOLVER's DPOTRF + gpu_trsm_right_lower_trans from 795×50
/// to 2209×255 (1306×128: 38 against 89 µs; 2209×255: 86 against 197 µs),
/// 1.25× on a square 256 × 256 (77 against 97 µs); the kernel of sessions
/// 34–39 took 58 and 126 µs on the first two. Its chain is one 32-column
/// diagonal block after another, ~17,000 cycles each for the first four or
/// five (8,000 of them the factorisation), more after that, when the
/// update by the earlier columns outgrows the factorisation it overlaps.
/// Results differ from cuSOLVER + DTRSM at rounding level (other summation
/// order; ≤ 2.5e-16 relative there).
/// m ≥ k, 0 ≤ k ≤ kPanelRowsMaxK, ldp ≥ max(m, 1); P, info and sync device
/// pointers, sync holding ≥ kPanelRowsSyncInts ints that no other queued
/// work uses (the call zeroes them). Queued on `stream`; no allocation and
/// no synchronisation (the first call on a device raises the kernel's
/// shared-memory limit). Returns CUBLAS_STATUS_INVALID_VALUE (nothing
/// queued) for bad sizes, success with nothing queued (info untouched) for
/// k = 0, CUBLAS_STATUS_NOT_SUPPORTED (nothing queued) when the current
/// device cannot give a block the shared memory k needs
/// (gpu_potrf_panel_rows_fits), and CUBLAS_STATUS_EXECUTION_FAILED when a
/// CUDA call (device query, the shared-memory setting, the memset or the
/// launch) fails.
/// trace (measurement only; null in the solver): device words,
/// kPanelRowsTraceWords per tile of 32 rows, the kernel's clock64 and
/// globaltimer stamps of each step (gpu_blas.cu: potrf_rows_kernel).
cublasStatus_t gpu_potrf_panel_rows(cudaStream_t stream, int m, int k, double* P, int ldp, int* info, int* sync,
                                    long long* trace = nullptr);

/// LAPACK's info of a factorisation done by blocks of columns: queues on
/// `stream` one single-thread kernel that, when *total is 0 and *part (the
/// info of the block whose first column is `offset`, 0-based) is not,
/// sets *total to *part + offset (a failing pivot, 1-based in the whole
/// matrix) or to *part when negative (an invalid argument). Both pointers
/// in device memory. Returns the launch's error.
cudaError_t gpu_fold_info(cudaStream_t stream, int* total, const int* part, int offset);

}  // namespace starfront
