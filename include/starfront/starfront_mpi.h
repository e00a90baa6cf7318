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
 * The factor is then gathered on rank 0: starfront_solve works on rank 0
 * only (the right-hand side and the solution live there; other ranks get
 * INVALID_ARGUMENT). Cholesky only (method LLT; AUTO runs LLT only). */
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

#ifdef __cplusplus
}
#endif

#endif /* STARFRONT_MPI_H */
