// CPU kernels of the distributed triangular solves (plan/solve_graph.hpp):
// multifrontal forward and backward substitution over a unit of fronts (a
// fused subtree or one front) and the pieces of a tiled front's vector.
// Column-major vectors, nrhs columns; rows of a front are 0-based positions
// in its m rows (plan/front_plan.hpp). No runtime here.
// The unit passes keep their front vectors on a stack, as a multifrontal
// factorisation keeps its contribution blocks (I. S. Duff and J. K. Reid,
// ACM TOMS 9(3), 1983; J. W. H. Liu, SIAM Review 34(1), 1992, sections 5–6:
// in postorder a front's children's vectors are on top of the stack).
#pragma once

#include <vector>

#include "plan/solve_graph.hpp"

namespace starfront {

/// A piece of front `front`'s vector: rows [r0, r0 + rows) of its m rows,
/// stored at x (column-major, leading dimension ld, nrhs columns).
struct VectorPiece {
  idx_t front;
  idx_t r0, rows;
  double* x;
  idx_t ld;
};

/// Reusable workspace of the unit kernels and run_solve_task_cpu: the
/// stack of front vectors of a unit (forward: the updates still waiting for
/// their parent; backward: the front vectors of the current front's
/// ancestors), their offsets, and the piece lists of a task. It only grows:
/// after the first solve of a given shape, a solve that reuses it allocates
/// nothing. Not shared between threads.
struct SolveScratch {
  std::vector<double> stack;        ///< front vectors, m × nrhs each (leading dimension m)
  std::vector<idx_t> loc;           ///< per front of the unit: offset of its vector in `stack`
  std::vector<idx_t> chain;         ///< backward: fronts whose vectors are on the stack
  std::vector<VectorPiece> pieces;  ///< the vector pieces of the task being run
  std::vector<VectorPiece> one;     ///< a single piece (inner child or parent)
};

/// Forward substitution over fronts [first, root] of plan P (children
/// before parents; every child of these fronts that is not among them has
/// its update in `children`; pieces of other fronts are ignored): on entry y (ldy) holds the right-hand side at
/// the unit's pivot rows (final numbering super_start[first] .. ), on exit
/// y = L⁻¹ b there; w_root (leading dimension ldw >= m(root), may be null) receives the root's
/// front vector (rows k..m: the update for the parent). L points at the
/// panel of `first` (Lx + l_offset[first]). Workspace (`ws`, or a local one
/// when null): a stack of the front vectors of the unit's fronts still
/// waiting for their parent (the classical multifrontal stack: the fronts
/// are a postordered range, so a front's children are on top of it).
/// Arithmetic per front: w = [b rows; 0], the children's updates added in
/// child order (the unit's own children, then `children`), TRSM with L11,
/// w[k:m] -= L21 w[0:k] (trsm_vector, gemm_vector).
void forward_unit(const FrontPlan& P, idx_t first, idx_t root, const double* L, double* y, idx_t ldy,
                  idx_t nrhs, const std::vector<VectorPiece>& children, double* w_root, idx_t ldw,
                  SolveScratch* ws = nullptr);

/// Backward substitution over fronts [first, root] (parents first): on
/// entry y holds L⁻¹ b at the unit's pivot rows, on exit x = L⁻ᵀ y. The
/// root's CB rows are read from its parent's pieces `parent`; x_root
/// (leading dimension ldw >= m(root), may be null) receives the root's whole front vector, for the
/// children outside the unit. Workspace (`ws`, or a local one when null):
/// the front vectors of the current front's ancestors inside the unit.
void backward_unit(const FrontPlan& P, idx_t first, idx_t root, const double* L, double* y, idx_t ldy,
                   idx_t nrhs, const std::vector<VectorPiece>& parent, double* x_root, idx_t ldw,
                   SolveScratch* ws = nullptr);

/// Extend-add into rows [r0, r1) of front s's vector (seg, ld) of the
/// children's updates: the CB rows of each piece (rows >= ncols(child)),
/// through the relative indices. Pieces of fronts that are not children of
/// s are skipped.
void add_child_updates(const FrontPlan& P, idx_t s, idx_t r0, idx_t r1, double* seg, idx_t ld, idx_t nrhs,
                       const std::vector<VectorPiece>& children);

/// seg (rows [r0, r1) of front s, all CB rows: r0 >= ncols(s)) = the values
/// of the parent's front vector at those rows (gathered from its pieces).
void gather_from_parent(const FrontPlan& P, idx_t s, idx_t r0, idx_t r1, double* seg, idx_t ld, idx_t nrhs,
                        const std::vector<VectorPiece>& parent);

/// Up to this many multiply-adds (block entries × nrhs), trsm_vector and
/// gemm_vector run their own loops (column sweeps, in a fixed order) rather
/// than a BLAS call, whose fixed cost dominates the tiny blocks of
/// power-grid fronts; above it, cblas_dtrsm / cblas_dgemm. Both solve
/// executors call these functions, so they round alike either way.
constexpr idx_t kSolveLoopMaxWork = 1024;

/// x (b rows, ld) = L⁻¹ x (trans false) or L⁻ᵀ x, L lower b×b (ldl), non-unit diagonal.
void trsm_vector(const double* L, idx_t ldl, idx_t b, double* x, idx_t ld, idx_t nrhs, bool trans);
/// y -= L x (trans false; L rows×cols, x cols, y rows) or y -= Lᵀ x (x rows, y cols);
/// x and y do not overlap.
void gemm_vector(const double* L, idx_t ldl, idx_t rows, idx_t cols, const double* x, idx_t ldx, double* y,
                 idx_t ldy, idx_t nrhs, bool trans);

/// Runs task t of solve graph S (plan/solve_graph.hpp) on the CPU with nrhs
/// right-hand sides: ptr[a] and ld[a] are the memory and leading dimension
/// of the task's a-th access (a in [0, acc_end - acc_begin): factor blocks
/// as the TaskGraph lays them out, vector pieces rows × nrhs). Both solve
/// executors call it: the StarPU-MPI codelets and the in-process one
/// (solve/graph_solve.hpp), so their arithmetic is the same. ws: reusable
/// workspace (null: a local one, allocated for this task).
void run_solve_task_cpu(const SolveGraph& S, idx_t t, idx_t nrhs, double* const* ptr, const idx_t* ld,
                        SolveScratch* ws = nullptr);

}  // namespace starfront
