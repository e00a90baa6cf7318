// The distributed triangular solves (issue 11): the tasks of the multifrontal
// forward (L y = b) and backward (Lᵀ x = y) substitutions over the assembly
// tree, the pieces of vectors they access, and the rank that runs each task,
// for a task graph mapped onto ranks (rank_mapping.hpp). Pure data, no
// runtime and no MPI (the StarPU-MPI executor in src/runtime/starpu_mpi/
// walks it, as it walks the factorisation's graph).
//
// Multifrontal substitution (I. S. Duff and J. K. Reid, "The multifrontal
// solution of indefinite sparse symmetric linear equations", ACM TOMS 9(3),
// 1983; J. W. H. Liu, "The multifrontal method for sparse matrix solution:
// theory and practice", SIAM Review 34(1), 1992, section 6): front s with
// m rows and k fully-summed columns holds a vector w_s of m rows (times nrhs).
// Forward: w_s = [b rows of s; 0] extend-added with the children's updates
// (rows k..m of their w), then y_s = L11⁻¹ w_s[0:k], w_s[k:m] -= L21 y_s:
// the update that goes to the parent. Backward, from the roots down: the
// front vector x_s = [y_s; x at the CB rows, gathered from the parent's
// front vector], x_s[0:k] = L11⁻ᵀ(y_s − L21ᵀ x_s[k:m]); the children gather
// from x_s in turn.
//
// Who runs what (the factor never moves):
//  - a non-tiled unit (a fused subtree task of the graph, or a single
//    front) runs on the rank that owns its factor panel (its factorisation
//    task's rank): one task per unit and pass (fwd_unit, bwd_unit), a
//    sequential multifrontal pass over its fronts with its own workspace;
//  - a tiled front's tiles stay on their owners (2D block-cyclic): its
//    vector is cut into segments at the tile bounds, segment I owned by the
//    owner of diagonal tile (I, I); forward per panel tile column J: trsm
//    on the owner of (J, J), then gemm S_I -= L_IJ S_J on the owner of each
//    (I, J); backward per J from the last: gemm S_J -= L_IJᵀ S_I on the
//    owner of (I, J), then trsm with L_JJᵀ. init tasks assemble the
//    segments (forward: children's updates; backward: the parent's values).
// So only vector pieces cross ranks: updates and front vectors between
// ranks of a parent and a child, and segments between the owners of one
// tiled front's tiles.
//
// Vector ownership ("local rows"): the pivot rows of every unit (a
// contiguous range of the final numbering) and of every panel segment of a
// tiled front belong to the rank that runs its tasks; rank r's local vector
// holds its rows in increasing final (permuted) index. row_owner says which
// rank owns each row.
#pragma once

#include <cstdint>
#include <vector>

#include "plan/rank_mapping.hpp"

namespace starfront {

enum class SolveTaskKind : std::uint8_t { fwd_unit, fwd_init, fwd_trsm, fwd_gemm, bwd_unit, bwd_init, bwd_gemm, bwd_trsm };
/// "fwd_unit", ...
const char* solve_task_kind_name(SolveTaskKind k);

/// What a solve handle holds.
enum class SolveHandleKind : std::uint8_t {
  factor,   ///< a block of the factor in Lx (the graph's block `block`)
  rows,     ///< pivot rows [row0, row0 + rows) (final numbering) of the local vector
  front,    ///< the vector of a non-tiled unit's root front (rows = its order m)
  segment,  ///< a contribution-block segment of a tiled front (own buffer)
};

/// A piece of data of the solve: `rows` × nrhs (factor: the block's shape).
/// Vector pieces of one front: rows [frow0, frow0 + rows) of `front`'s m
/// rows (rows handles of a unit: frow0 = -1, they are no front's piece).
struct SolveHandle {
  SolveHandleKind kind;
  int owner = 0;
  idx_t front = -1;
  idx_t frow0 = -1;
  idx_t rows = 0;
  idx_t row0 = -1;   ///< rows: first pivot row (final numbering)
  idx_t block = -1;  ///< factor: the graph's block id
};

struct SolveAccess {
  idx_t handle;
  AccessMode mode;
};

/// One task. Units: fronts [first_front, front]. Tiled fronts: (i, j) tile
/// indices (init: segment i).
/// Access lists (in order):
///  fwd_unit: factor panel R, own rows RW, [root's front vector W], children's pieces R...
///  bwd_unit: factor panel R, own rows RW, [root's front vector W], parent's pieces R...
///  fwd_init: segment i (RW for a panel segment, W otherwise), children's pieces R...
///  bwd_init: segment i W, parent's pieces R...
///  fwd_trsm / bwd_trsm: tile (j, j) R, segment j RW
///  fwd_gemm: tile (i, j) R, segment j R, segment i RW
///  bwd_gemm: tile (i, j) R, segment i R, segment j RW
struct SolveTask {
  SolveTaskKind kind;
  idx_t front = -1;
  idx_t first_front = -1;
  int i = 0, j = 0;   ///< tile tasks: block row i and block column j of the tiled front (0-based); else 0
  int rank = 0;       ///< the rank that runs the task (the owner of the factor block it reads)
  double flops = 0;  ///< per right-hand side
  idx_t acc_begin = 0, acc_end = 0;
};

struct SolveGraph {
  const TaskGraph* graph = nullptr;  ///< not owned
  int nranks = 1;
  std::vector<SolveTask> tasks;  ///< submission order: the forward pass, then the backward pass
  std::vector<SolveAccess> accesses;
  std::vector<SolveHandle> handles;
  std::vector<int> row_owner;      ///< per row of the final numbering
  std::vector<idx_t> local_count;  ///< per rank: rows it owns
  std::vector<idx_t> local_index;  ///< per row: its position in its owner's local vector
};

/// Builds the solve graph of graph G mapped by M (G's subtree and front
/// tasks and tiled fronts; M.block_owner). Errors: invalid_argument when M
/// is not a mapping of G.
Status build_solve_graph(const TaskGraph& G, const RankMapping& M, SolveGraph& out);

/// Bytes a solve with nrhs right-hand sides moves between ranks under
/// StarPU-MPI's owner-computes protocol with its cache (the model of
/// communication_volume in rank_mapping.hpp, on fresh handles): per rank
/// sent and received, and the total.
struct SolveVolume {
  std::vector<double> sent, recv;  ///< bytes sent / received, per rank (index = rank)
  double total = 0;                ///< bytes sent by all ranks
  double factor_bytes = 0;  ///< factor blocks moved (0 by construction: checked by the tests)
};
SolveVolume solve_communication(const SolveGraph& S, idx_t nrhs);

}  // namespace starfront
