// starfront over MPI, C++ layer (opt-in; builds with STARFRONT_MPI): a
// Runtime on a communicator. Factor objects bound to it factorise and solve
// collectively over the communicator's ranks; Factor::solve takes the
// right-hand sides on rank 0, solve_local and solve_block distributed
// vectors (starfront_mpi.h explains the contract).
#pragma once

#include <vector>

#include "starfront.hpp"
#include "starfront_mpi.h"

namespace starfront {

/// Starts StarPU-MPI on comm (MPI initialised by the caller, at least
/// MPI_THREAD_SERIALIZED); collective. Throws starfront::Error on failure.
inline Runtime mpi_runtime(MPI_Comm comm, const RuntimeOptions& o = RuntimeOptions{}) {
  starfront_runtime_options c;
  starfront_runtime_options_init(&c);
  c.ncpu = o.ncpu;
  c.ncuda = o.ncuda;
  c.scheduler = o.scheduler.c_str();
  starfront_runtime* rt = nullptr;
  detail::check(starfront_runtime_init_mpi(&c, comm, &rt));
  return Runtime::adopt(rt);
}

/// The rows this rank holds in the solve's own distribution, in the index
/// base of f's matrix (starfront_mpi_local_rows). Throws starfront::Error.
inline std::vector<int64_t> local_rows(const Factor& f) {
  int64_t count = 0;
  detail::check(starfront_mpi_local_rows(f.get(), &count, nullptr));
  std::vector<int64_t> rows(static_cast<std::size_t>(count));
  detail::check(starfront_mpi_local_rows(f.get(), &count, rows.data()));
  return rows;
}

/// Collective: X (this rank's local_rows(f) × nrhs, leading dimension ldx,
/// 0: the row count) := the same rows of A⁻¹B (starfront_mpi_solve_local).
inline void solve_local(Factor& f, double* X, int64_t nrhs = 1, int64_t ldx = 0) {
  const int64_t count = static_cast<int64_t>(local_rows(f).size());
  detail::check(starfront_mpi_solve_local(f.get(), nrhs, X, ldx > 0 ? ldx : (count > 0 ? count : 1)));
}

/// Collective: X (rows [first_row, first_row + nlocal) of B, nrhs columns,
/// leading dimension ldx, 0: nlocal) := the same rows of A⁻¹B
/// (starfront_mpi_solve_block).
inline void solve_block(Factor& f, int64_t first_row, int64_t nlocal, double* X, int64_t nrhs = 1,
                        int64_t ldx = 0) {
  detail::check(starfront_mpi_solve_block(f.get(), first_row, nlocal, nrhs, X,
                                          ldx > 0 ? ldx : (nlocal > 0 ? nlocal : 1)));
}

}  // namespace starfront
