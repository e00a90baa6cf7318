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
//  - The factor stays distributed: each rank keeps the blocks it owns
//    (LocalFactor); the solves run where the blocks are (mpi_solve.hpp).
//  - Failures are agreed on: every rank returns the same Status (the
//    smallest failing pivot column over all ranks, its pivot, or the first
//    runtime error of the lowest failing rank).
// Supported: Cholesky (FactorMethod::llt). LDLᵀ keeps per-front pivot state
// outside the handles and is refused (invalid_argument) on the ranks.
#pragma once

#include <mpi.h>

#include <memory>
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
  /// Seconds each rank spent from the start of submission to the end of
  /// its factorisation.
  std::vector<double> factor_seconds;
};

/// The factor blocks one rank owns after a distributed factorisation, at
/// their offsets (TaskGraph blocks, FrontPlan::l_offset) in a buffer of the
/// whole factor's size: the pages of blocks the rank does not own are never
/// written by it (virtual memory only), and their contents are meaningless.
struct LocalFactor {
  std::unique_ptr<double[]> lx;
  idx_t size = 0;  ///< doubles (FrontPlan::factor_size())
  int rank = -1;   ///< the rank whose blocks lx holds
  bool valid() const { return lx != nullptr; }
};

/// Factorises A (every rank holds A, the same analysis and the same graph
/// G mapped by M, slots planned per rank) on the ranks of `comm`
/// (M.nranks must equal its size) with a StarPU-MPI runtime started on
/// comm. Collective. On success every rank's `local` holds the factor
/// blocks it owns (M.block_owner), bitwise those of the sequential
/// executor's factor; F carries the factor's metadata (plan, method,
/// pivot ratio) with an empty Lx on every rank. Errors (the same on every rank): invalid_argument (sizes, LDLᵀ,
/// values), not_positive_definite (Status::column in the user's numbering),
/// runtime_error (StarPU-MPI not started, a submission failed, watchdog).
Status factorize_starpu_mpi(const TaskGraph& G, const RankMapping& M, const CscMatrix& A,
                            const FactorOptions& opts, MPI_Comm comm, NumericFactor& F,
                            LocalFactor& local, FactorStats* stats, MpiRunInfo* info);

/// Every rank's `local` status reduced to one: success when all succeeded,
/// otherwise the error of the lowest failing rank (code, message prefixed
/// with "rank k: " when comm has several ranks, column, pivot). Collective.
Status agree_status(const Status& local, MPI_Comm comm);

}  // namespace starfront
