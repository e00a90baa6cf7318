// The symmetric rank-k update of a front's contribution block on the GPU,
// C := C − A·Bᵀ on C's lower triangle (DSYRK when B = A, DSYRKX otherwise).
//
// Why: on the H200 cuBLAS's DSYRK runs a generic kernel for ranks below
// 128, and below 250 up to order 1400 (gpu_blas_bench --syrk,
// bench/README.md session 41: 0.9–3.9 TFLOP/s), and its tensor-core kernel
// above (12–36 TFLOP/s). Most CB updates of lap3d 60³'s fronts fall below:
// 21 µs for order 800, rank 95; 64 µs for 1116, 190; 81 µs for 2947, 20.
// This file's kernel is the textbook tiled product (Volkov and Demmel, SC
// 2008: register blocking, operands staged through shared memory), one
// thread block per 32×32 or 64×64 tile of C's lower triangle, 4×4 entries
// a thread, the rank by chunks of 16 columns through a multistage pipeline
// of asynchronous copies (cp.async, as CUTLASS's GEMMs stage theirs); only
// the tiles on and below the diagonal are launched, and in a diagonal tile
// only the entries on and below it are written. It takes those updates in
// 12, 28 and 34 µs (1.1–2.8× cuBLAS's generic kernel), and is 0.24–0.88×
// cuBLAS where the tensor cores take over: SyrkMethod::automatic chooses
// by rank and order (gpu_syrk_kernel_pays). Each entry is C(i,j) − Σ_p A(i,p)·B(j,p),
// the sum by fused multiply-adds in p order (cuBLAS's order differs:
// results agree to rounding).
//
// Queued on the cuBLAS handle's stream (host pointer mode for the cuBLAS
// path); no allocation, no synchronisation. Column major, leading
// dimensions in elements, int sizes as cuBLAS takes them.
#pragma once

#include <cublas_v2.h>

namespace starfront {

/// Who computes gpu_syrk_lower_update.
enum class SyrkMethod {
  automatic,  ///< the kernel where gpu_syrk_kernel_pays says so, cuBLAS elsewhere
  cublas,     ///< cublasDsyrk (B == A) or cublasDsyrkx
  kernel,     ///< this file's kernel, always
};

/// The method in force: automatic, or what STARFRONT_GPU_SYRK (cublas,
/// kernel or auto), read once (thread-safe), says; anything else keeps
/// automatic.
SyrkMethod gpu_syrk_method();

/// True when SyrkMethod::automatic takes the kernel for an update of order n
/// and rank k: k < 128, or k < 250 and n < 1500, where cuBLAS's DSYRK ran
/// its generic kernel on the H200 (bench/README.md session 41); above,
/// cuBLAS's tensor-core kernel was faster.
bool gpu_syrk_kernel_pays(int n, int k);

/// The kernel's tile order for an update of order n: 32 or 64 (rows and
/// columns of C a thread block computes), as measured on the H200, or what
/// STARFRONT_GPU_SYRK_TILE (32 or 64), read once, forces.
int gpu_syrk_tile(int n);

/// C := C − A·Bᵀ on the lower triangle, diagonal included, of the n×n C
/// (entries above the diagonal are neither read nor written); A and B are
/// n×k (B may be A: a DSYRK). `method` as SyrkMethod says; `tile` the
/// kernel's tile order (32 or 64; 0: gpu_syrk_tile(n)). Returns
/// CUBLAS_STATUS_SUCCESS with nothing queued for n ≤ 0 or k ≤ 0,
/// CUBLAS_STATUS_INVALID_VALUE with nothing queued when lda, ldb or ldc <
/// n or tile is not 0, 32 or 64, cuBLAS's status on the cuBLAS path,
/// CUBLAS_STATUS_NOT_SUPPORTED with nothing queued when the kernel would
/// need more than 2³¹ − 1 tiles (n above ~2.1·10⁶ with tiles of 32; the
/// automatic choice never takes the kernel there), and
/// CUBLAS_STATUS_EXECUTION_FAILED when the kernel's launch fails (read by
/// cudaGetLastError, which also clears an error left by earlier work of the
/// thread). Preconditions, not checked: device pointers, C sharing no
/// element with A or B, the handle in host pointer mode.
cublasStatus_t gpu_syrk_lower_update(cublasHandle_t h, int n, int k, const double* A, int lda, const double* B,
                                     int ldb, double* C, int ldc, SyrkMethod method, int tile = 0);

}  // namespace starfront
