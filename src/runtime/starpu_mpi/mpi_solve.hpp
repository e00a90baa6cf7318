// The distributed triangular solves on StarPU-MPI (issue 11): the tasks of
// plan/solve_graph.hpp (multifrontal forward and backward substitution,
// each front's part run by the ranks that own its factor blocks) submitted
// with starpu_mpi_task_insert, so that StarPU-MPI moves the vector pieces
// between ranks; the factor never moves.
//
//  - Handles: factor blocks at home in the rank's LocalFactor; the rows of
//    the local vector that a unit or panel segment owns at home in the
//    caller's local array; front vectors and CB segments allocated by
//    StarPU. Each registered with starpu_mpi_data_register_comm (tag = the
//    handle's index in the solve graph, owner = SolveHandle::owner).
//  - Submission pruned per rank as in the factorisation: a rank submits a
//    task when it runs it, owns one of its handles, or writes a handle it
//    used before.
//  - CPU codelets only (codelets/cpu/solve_kernels.hpp): a solve does
//    O(nnz(L)) flops per right-hand side, bandwidth-bound.
#pragma once

#include <mpi.h>

#include <vector>

#include "plan/solve_graph.hpp"
#include "runtime/starpu_mpi/mpi_executor.hpp"

namespace starfront {

/// What one distributed solve did (every rank gets all ranks' figures).
struct MpiSolveInfo {
  std::vector<double> sent_bytes;   ///< bytes each rank sent (starpu_mpi_comm_stats_retrieve)
  std::vector<idx_t> tasks_run;     ///< solve tasks each rank ran
  std::vector<idx_t> tasks_submitted;
  double seconds = 0;               ///< rank 0's wall time of the solve
  idx_t nrhs = 0;
};

/// Solves L Lᵀ X = B with the distributed factor (every rank's `local`,
/// from factorize_starpu_mpi with the mapping S was built from) on the
/// ranks of comm. Collective. x: this rank's rows of B in the local layout
/// of S (S.local_count[rank] rows in increasing final (permuted) index,
/// S.local_index; nrhs columns, leading dimension ldx >= max(1, local
/// count)), overwritten with the same rows of X (final numbering: row k of
/// the layout is the user's row S.graph->plan->symbolic->perm[k]).
/// Errors (the same on every rank; x unchanged on error): invalid_argument
/// (no factor, sizes, nrhs < 0, an entry of B not finite: the message names
/// the user's row, 1-based), runtime_error (StarPU-MPI not started, a
/// submission failed, a solution entry not finite).
Status solve_starpu_mpi(const SolveGraph& S, const LocalFactor& local, double* x, idx_t nrhs, idx_t ldx,
                        MPI_Comm comm, MpiSolveInfo* info);

}  // namespace starfront
