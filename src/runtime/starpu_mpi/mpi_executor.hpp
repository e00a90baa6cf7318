// The StarPU-MPI executor (issue 11): the same task graph and the same
// codelets as the shared-memory executor (runtime/starpu), run on the ranks
// of an MPI communicator. StarPU-MPI moves every contribution block and tile
// that crosses ranks; there is no message layer of our own.
//
//  - Mapping: plan/rank_mapping.hpp (proportional mapping of the assembly
//    tree, tiles of shared fronts 2D block-cyclic, owner computes). The
//    graph's slots must have been planned per rank (distribute_graph).
//  - Every handle a rank uses is registered with
//    starpu_mpi_data_register_comm(handle, tag, owner, comm); the tag is the
//    handle's index (blocks in Lx, then slots), the same on every rank.
//  - Every task is submitted with starpu_mpi_task_insert and
//    STARPU_EXECUTE_ON_NODE = its mapped rank. Submission is pruned per rank:
//    a rank submits a task when it runs it, owns one of its handles (it must
//    send or receive it), or writes a handle that it has used before (so
//    that StarPU-MPI invalidates its cached copy); it registers only the
//    handles of the tasks it submits (plus, on rank 0, every factor block).
//  - RW|COMMUTE accesses (extend-adds into a tile) are submitted as RW:
//    contributions are added in submission order, so the factor is bitwise
//    the sequential executor's whatever the number of ranks (the
//    shared-memory executor adds them in any order: equal to rounding).
//  - After the factorisation the factor blocks are gathered on rank 0
//    (starpu_mpi_get_data_on_node_detached), so that the existing
//    sequential solve runs there: the solve is NOT distributed yet.
//  - Failures are agreed on: every rank returns the same Status (the
//    smallest failing pivot column over all ranks, its pivot, or the first
//    runtime error of the lowest failing rank).
// Supported: Cholesky (FactorMethod::llt). LDLᵀ keeps per-front pivot state
// outside the handles and is refused (invalid_argument) on the ranks.
#pragma once

#include <mpi.h>

#include <vector>

#include "plan/rank_mapping.hpp"
#include "solve/factor.hpp"

namespace starfront {

/// What one distributed factorisation did, per rank (every rank gets all
/// ranks' figures).
struct MpiRunInfo {
  int nranks = 0;
  int rank = 0;
  std::vector<idx_t> tasks_run;        ///< tasks each rank ran
  std::vector<idx_t> tasks_submitted;  ///< tasks each rank submitted (after pruning)
  std::vector<idx_t> handles;          ///< StarPU handles each rank registered
  /// Bytes each rank sent during the factorisation, measured by StarPU-MPI
  /// (starpu_mpi_comm_stats_retrieve; every message of the data it moved).
  std::vector<double> sent_bytes;
  /// Bytes each rank sent to gather the factor on rank 0 (measured).
  std::vector<double> gather_sent_bytes;
  /// Seconds each rank spent from the start of submission to the end of
  /// its factorisation (before the gather) and in the gather.
  std::vector<double> factor_seconds, gather_seconds;
};

/// Factorises A (every rank holds A, the same analysis and the same graph
/// G mapped by M, slots planned per rank) on the ranks of `comm`
/// (M.nranks must equal its size) with a StarPU-MPI runtime started on
/// comm. Collective. On success rank 0's F holds the whole factor (as the
/// shared-memory executor would produce it); other ranks' F has an empty
/// Lx. Errors (the same on every rank): invalid_argument (sizes, LDLᵀ,
/// values), not_positive_definite (Status::column in the user's numbering),
/// runtime_error (StarPU-MPI not started, a submission failed, watchdog).
Status factorize_starpu_mpi(const TaskGraph& G, const RankMapping& M, const CscMatrix& A,
                            const FactorOptions& opts, MPI_Comm comm, NumericFactor& F,
                            FactorStats* stats, MpiRunInfo* info);

/// Every rank's `local` status reduced to one: success when all succeeded,
/// otherwise the error of the lowest failing rank (code, message prefixed
/// with "rank k: " when comm has several ranks, column, pivot). Collective.
Status agree_status(const Status& local, MPI_Comm comm);

}  // namespace starfront
