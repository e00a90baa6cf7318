/* starfront over MPI (StarPU-MPI): opt-in C API, for builds with
 * STARFRONT_MPI (the non-MPI API in starfront.h is unchanged).
 *
 * A runtime started with starfront_runtime_init_mpi carries a communicator:
 * every factorisation of a factor bound to it is distributed over the
 * communicator's ranks and is COLLECTIVE: every rank calls
 * starfront_analyse, starfront_factorize / starfront_refactorize with the
 * same matrix and options (the ranks check that their analyses agree).
 * Errors are agreed on: every rank gets the same status and error info
 * (e.g. NOT_POSITIVE_DEFINITE with the same column).
 * The assembly tree is mapped onto the ranks by proportional mapping, tiles
 * of the fronts near the root block-cyclically; StarPU-MPI moves the data.
 * The factor stays distributed: each rank keeps the factor blocks it owns.
 *
 * Solves are COLLECTIVE too, and distributed: the multifrontal forward and
 * backward substitutions run as StarPU-MPI tasks on the ranks that own each
 * front's factor blocks (only pieces of vectors move, never the factor).
 * Three ways to pass the right-hand sides B (n × nrhs, column-major):
 *   - starfront_solve: B and the solution on rank 0 (B, ldb significant
 *     there only; the other ranks pass any B, e.g. NULL, and the same nrhs);
 *   - starfront_mpi_solve_local: each rank passes the rows it owns in the
 *     solve's own distribution (starfront_mpi_local_rows): no
 *     redistribution at all;
 *   - starfront_mpi_solve_block: each rank passes a contiguous block of
 *     rows, the blocks in rank order (rank 0 the first rows).
 * Iterative refinement (starfront_factor_options.refine_steps > 0, the
 * default) forms the residuals on rank 0, so each refinement step collects
 * the vectors there (O(n) words per step); refine_steps = 0 keeps a
 * distributed-vector solve fully distributed.
 * Errors of every collective call are agreed on (the same status and
 * message on every rank); the vectors are left unchanged on error.
 * Cholesky only (method LLT; AUTO runs LLT only). */
#ifndef STARFRONT_MPI_H
#define STARFRONT_MPI_H

#include <mpi.h>

#include "starfront.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Starts StarPU-MPI on `comm` (MPI must be initialised by the caller with
 *  MPI_Init_thread, at least MPI_THREAD_SERIALIZED; the runtime keeps a
 *  copy of the handle: the communicator must stay valid until
 *  starfront_runtime_free, which shuts StarPU-MPI down but not MPI).
 *  Collective over comm. opts as for starfront_runtime_init (per rank).
 *  Errors: as starfront_runtime_init, plus RUNTIME_ERROR when MPI is not
 *  initialised. */
starfront_status starfront_runtime_init_mpi(const starfront_runtime_options* opts, MPI_Comm comm,
                                            starfront_runtime** rt);

/** The rows of the vectors this rank holds in the solve's own distribution
 *  (valid after a successful factorisation of F; it depends on the analysis
 *  and the number of ranks only, so it does not change on refactorisation):
 *  *count receives their number; rows (NULL: only the count) receives their
 *  indices in the index base of F's matrix (starfront_analyse), in the
 *  order of the local vectors of starfront_mpi_solve_local. Each rank owns
 *  the pivot rows of the fronts (or tile rows of the large fronts) whose
 *  factor blocks it holds; every row has exactly one owner. Local call.
 *  Errors: INVALID_ARGUMENT (F or count NULL, F not bound to an MPI
 *  runtime, no successful factorisation). */
starfront_status starfront_mpi_local_rows(const starfront_factor* F, int64_t* count, int64_t* rows);

/** Collective solve with distributed vectors in the solve's own
 *  distribution: X holds this rank's rows of B (count × nrhs from
 *  starfront_mpi_local_rows, column-major, leading dimension
 *  ldx >= max(1, count); X may be NULL when count is 0) and receives the
 *  same rows of the solution. nrhs >= 0, the same on every rank. Errors
 *  (the same on every rank, X unchanged): INVALID_ARGUMENT (as
 *  starfront_mpi_local_rows, nrhs, ldx, an entry of B not finite: the
 *  message names its row, 1-based), RUNTIME_ERROR (the solution overflows,
 *  or refinement cannot reach a backward error of 1.5e-8). */
starfront_status starfront_mpi_solve_local(starfront_factor* F, int64_t nrhs, double* X, int64_t ldx);

/** Collective solve with vectors distributed in contiguous blocks: this
 *  rank holds rows [first_row, first_row + nlocal) (first_row in the index
 *  base of F's matrix), the blocks of ranks 0, 1, ... following each other
 *  from the first row and covering all n rows (a rank may hold none). X:
 *  nlocal × nrhs, leading dimension ldx >= max(1, nlocal), overwritten with
 *  the solution's rows. Errors (the same on every rank, X unchanged): as
 *  starfront_mpi_solve_local, and INVALID_ARGUMENT when the blocks do not
 *  tile [0, n) in rank order (the message names the first bad rank). */
starfront_status starfront_mpi_solve_block(starfront_factor* F, int64_t first_row, int64_t nlocal, int64_t nrhs,
                                           double* X, int64_t ldx);

#ifdef __cplusplus
}
#endif

#endif /* STARFRONT_MPI_H */
