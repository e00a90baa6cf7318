// CPU kernels of the distributed triangular solves (plan/solve_graph.hpp):
// multifrontal forward and backward substitution over a unit of fronts (a
// fused subtree or one front) and the pieces of a tiled front's vector.
// Column-major vectors, nrhs columns; rows of a front are 0-based positions
// in its m rows (plan/front_plan.hpp). No runtime here.
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

/// Forward substitution over fronts [first, root] of plan P (children
/// before parents; every child of these fronts that is not among them has
/// its update in `children`; pieces of other fronts are ignored): on entry y (ldy) holds the right-hand side at
/// the unit's pivot rows (final numbering super_start[first] .. ), on exit
/// y = L⁻¹ b there; w_root (leading dimension ldw >= m(root), may be null) receives the root's
/// front vector (rows k..m: the update for the parent). L points at the
/// panel of `first` (Lx + l_offset[first]). Workspace: the front vectors of
/// the unit's fronts still waiting for their parent.
void forward_unit(const FrontPlan& P, idx_t first, idx_t root, const double* L, double* y, idx_t ldy,
                  idx_t nrhs, const std::vector<VectorPiece>& children, double* w_root, idx_t ldw);

/// Backward substitution over fronts [first, root] (parents first): on
/// entry y holds L⁻¹ b at the unit's pivot rows, on exit x = L⁻ᵀ y. The
/// root's CB rows are read from its parent's pieces `parent`; x_root
/// (leading dimension ldw >= m(root), may be null) receives the root's whole front vector, for the
/// children outside the unit.
void backward_unit(const FrontPlan& P, idx_t first, idx_t root, const double* L, double* y, idx_t ldy,
                   idx_t nrhs, const std::vector<VectorPiece>& parent, double* x_root, idx_t ldw);

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

/// x (b rows, ld) = L⁻¹ x (trans false) or L⁻ᵀ x, L lower b×b (ldl).
void trsm_vector(const double* L, idx_t ldl, idx_t b, double* x, idx_t ld, idx_t nrhs, bool trans);
/// y -= L x (trans false; L rows×cols, x cols, y rows) or y -= Lᵀ x (x rows, y cols).
void gemm_vector(const double* L, idx_t ldl, idx_t rows, idx_t cols, const double* x, idx_t ldx, double* y,
                 idx_t ldy, idx_t nrhs, bool trans);

/// Runs task t of solve graph S (plan/solve_graph.hpp) on the CPU with nrhs
/// right-hand sides: ptr[a] and ld[a] are the memory and leading dimension
/// of the task's a-th access (a in [0, acc_end - acc_begin): factor blocks
/// as the TaskGraph lays them out, vector pieces rows × nrhs). Both solve
/// executors call it: the StarPU-MPI codelets and the in-process one
/// (solve/graph_solve.hpp), so their arithmetic is the same.
void run_solve_task_cpu(const SolveGraph& S, idx_t t, idx_t nrhs, double* const* ptr, const idx_t* ld);

}  // namespace starfront
