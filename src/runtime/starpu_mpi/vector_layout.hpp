// Distributed vectors of the MPI solve (issue 11): where the rows of an
// n-vector (the user's original numbering, 0-based) live across the ranks
// of a communicator, and the redistribution between two layouts
// (MPI_Alltoallv). Plain MPI, no StarPU.
//
// Layouts:
//  - root: rank 0 holds every row, in order; the other ranks hold none;
//  - owner: the solve's own layout (plan/solve_graph.hpp): rank r holds the
//    pivot rows of the fronts (or tiled-front segments) whose factor it
//    owns, in increasing final (permuted) index; rows() lists them in the
//    user's numbering;
//  - block: contiguous blocks in rank order, rank r holds user rows
//    [start[r], start[r+1]) (given by the user, e.g. by a PETSc-like code).
#pragma once

#include <mpi.h>

#include <utility>
#include <vector>

#include "plan/solve_graph.hpp"

namespace starfront {

struct VectorLayout {
  enum class Kind { root, owner, block };
  Kind kind = Kind::root;
  idx_t n = 0;
  int nranks = 1;
  std::vector<idx_t> start;       ///< block: size nranks + 1
  const SolveGraph* S = nullptr;  ///< owner: not owned
  std::vector<idx_t> iperm;       ///< owner: user row -> final row

  /// Rows rank r holds.
  idx_t count(int r) const;
  /// The user rows (0-based) rank r holds, in its local order.
  std::vector<idx_t> rows(int r) const;
  /// (rank, local position) of user row g.
  std::pair<int, idx_t> locate(idx_t g) const;
};

/// The root layout of n rows on nranks ranks.
VectorLayout root_layout(idx_t n, int nranks);
/// The owner layout of solve graph S (rows of the final numbering mapped back through perm).
VectorLayout owner_layout(const SolveGraph& S);
/// The block layout in which this rank holds user rows [first, first + count):
/// collective (the ranks' blocks are exchanged). Errors (the same on every
/// rank): invalid_argument when the blocks are not contiguous in rank order
/// from row 0 covering exactly [0, n) (the message names the first bad rank),
/// or a count is negative.
Status block_layout(idx_t n, idx_t first, idx_t count, MPI_Comm comm, VectorLayout& out);

/// out (this rank's rows in layout `to`, nrhs columns, leading dimension
/// ldo) = the same rows taken from in (this rank's rows in layout `from`,
/// leading dimension ldi). Collective; the layouts must describe the same n
/// on every rank. Values travel as rows of nrhs doubles (an MPI contiguous
/// type): MPI's int counts limit a rank to 2³¹−1 rows and nrhs to 2³¹−1.
void redistribute(const VectorLayout& from, const double* in, idx_t ldi, const VectorLayout& to, double* out,
                  idx_t ldo, idx_t nrhs, MPI_Comm comm);

}  // namespace starfront
