// starfront over MPI, C++ layer (opt-in; builds with STARFRONT_MPI): a
// Runtime on a communicator. Factor objects bound to it factorise
// collectively over the communicator's ranks and solve on rank 0
// (starfront_mpi.h explains the contract).
#pragma once

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

}  // namespace starfront
