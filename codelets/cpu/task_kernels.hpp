// CPU kernels of every task kind of the task graph (plan/task_graph.hpp):
// fused subtree, front, tile assembly, extend-add into tiles, and the tile
// POTRF / TRSM / SYRK / GEMM. Both executors (sequential and StarPU) call
// run_task_cpu; it never touches a runtime.
#pragma once

#include <atomic>
#include <limits>
#include <mutex>
#include <string>

#include "cpu/front_cholesky.hpp"
#include "cpu/front_ldlt.hpp"
#include "plan/task_graph.hpp"

namespace starfront {

struct NormRowsIndex;  // sparse/csc.hpp

/// ‖A‖∞ on a GPU during a factorisation (Solver::refactorize, issue 6): when
/// the whole factorisation is one fused subtree kernel run inline
/// (run_subtree_inline), a second kernel computes A's row sums from the
/// values already on the device (codelets/cuda/norm_rows.hpp) instead of
/// the host pass that would run while the fused kernel does.
struct DeviceNormRequest {
  const NormRowsIndex* index = nullptr;  ///< A's row-wise index (not owned; must outlive the factorisation)
  bool launched = false;  ///< set when the kernel was queued: the host pass is then not run
  /// When launched, after the factorisation: symmetric_norm_inf_by_rows of
  /// A's values (NaN or +inf when a value is not finite or a row sum
  /// overflows); -1 when the copy back failed.
  double norm = -1.0;
};

/// Shared state of one factorisation: numerical options in, first failure
/// and pivot statistics out. Thread-safe. Once a failure is recorded, later
/// tasks skip their work (the factor is unusable anyway).
struct FactorContext {
  double pivot_tol = 0.0;
  const double* values = nullptr;  ///< A's values (the caller's lower CSC order)

  std::atomic<bool> failed{false};
  std::atomic<bool> cancelled{false};  ///< set by a watchdog: later tasks skip their work
  std::mutex mutex;
  idx_t fail_column = -1;  ///< smallest failing pivot column seen (final numbering)
  double fail_pivot = 0.0;
  double min_pivot_ratio = std::numeric_limits<double>::infinity();
  double task_seconds = 0.0;  ///< sum of the CPU tasks' run times (kernel only; GPU tasks not counted)
  /// First failure of a device (CUDA, cuBLAS, cuSOLVER) seen by a GPU task,
  /// empty if none; reported as runtime_error by context_status.
  std::string device_error;
  /// LDLᵀ factorisations (ldlt.active): front and subtree tasks run the LDLᵀ
  /// front kernel; tiled tasks are not supported (they record a failure).
  LdltFactorState ldlt;
  /// Not null: the caller wants ‖A‖∞ from the GPU when the factorisation
  /// runs inline (DeviceNormRequest).
  DeviceNormRequest* device_norm = nullptr;

  /// Records a front's or tile's outcome.
  void record(const FrontResult& r);
  /// Records a device failure (keeps the first message) and stops later tasks.
  void record_device_error(const std::string& message);
};

/// Cholesky of one diagonal tile (n×n, leading dimension ld, lower triangle,
/// overwritten) whose first column is pivot `first` (final numbering), with
/// the pivot test of check_pivots. The CPU potrf task, and the GPU potrf's
/// fallback that recomputes a failing tile on the host so that both report
/// the same column and pivot. Returns done or failed (failed_column final).
FrontResult potrf_tile_cpu(const FrontPlan& P, idx_t first, const double* values, double* D, idx_t ld,
                           idx_t n, double pivot_tol);

/// Runs task `t` of graph G (timed into ctx.task_seconds). ptrs[a] is the data of the task's a-th access
/// (G.accesses[G.tasks[t].acc_begin + a]), laid out as its Block says.
void run_task_cpu(const TaskGraph& G, idx_t t, double* const* ptrs, FactorContext& ctx);

}  // namespace starfront
