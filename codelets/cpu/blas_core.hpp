// Which OpenBLAS kernels run the CPU BLAS calls, and the remedy when a
// dynamic-architecture OpenBLAS does not recognise the CPU.
//
// A DYNAMIC_ARCH OpenBLAS (Debian's libopenblas0-pthread) picks its kernels
// from the CPU model at load time. A model newer than the library (OpenBLAS
// 0.3.21 and Intel model 207, Emerald Rapids, on the GPU machine here) falls
// back to the generic SSE3 "Prescott" kernels: DGEMM about 3x slower on an
// AVX-512 core (measured: lap3d 60^3, 2 CPU workers, 13.0 s against 4.2 s).
// OpenBLAS reads OPENBLAS_CORETYPE when it loads, so the remedy is that
// variable, set before the program starts.
#pragma once

#include <string>

namespace starfront {

/// The BLAS kernels in use and what this CPU could run.
struct BlasCore {
  std::string name;         ///< openblas_get_corename(), e.g. "SkylakeX", "Prescott"
  /// The core OpenBLAS chose by itself: `name`, unless reexec_with_native_blas
  /// set OPENBLAS_CORETYPE for this process (then the core it replaced).
  std::string detected;
  std::string recommended;  ///< OPENBLAS_CORETYPE value to set ("SkylakeX", "Haswell"), or "" when fine
  bool coretype_set = false;  ///< OPENBLAS_CORETYPE was set in the environment
};

/// Reads the OpenBLAS core in use; `recommended` is non-empty when OpenBLAS
/// runs a pre-AVX2 core (Prescott, Core2, Nehalem, Sandybridge, ...) on a CPU
/// with AVX2 and FMA (then "Haswell") or AVX-512 F/DQ/BW/VL (then
/// "SkylakeX"), and OPENBLAS_CORETYPE is not set. Never fails. (Tests make
/// it read a generic core through STARFRONT_TEST_OPENBLAS_CORE.)
BlasCore blas_core();

/// For programs (call first thing in main, before any thread starts): when
/// blas_core().recommended is non-empty and STARFRONT_KEEP_BLAS_CORE is not
/// set, sets OPENBLAS_CORETYPE to it and re-executes the program
/// (/proc/self/exe, same argv and environment otherwise); OpenBLAS then loads
/// its native kernels. Returns only when nothing was to be done or the
/// re-execution failed (the program then runs with the slow kernels).
void reexec_with_native_blas(char** argv);

}  // namespace starfront
