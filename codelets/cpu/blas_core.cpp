#include "cpu/blas_core.hpp"

#include <strings.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

#include "cpu/blas.hpp"

namespace starfront {

namespace {

/// OpenBLAS x86-64 cores with AVX2+FMA kernels (DGEMM at the core's rate).
bool is_native_avx2_core(const std::string& core) {
  for (const char* c : {"Haswell", "Zen", "SkylakeX", "Cooperlake", "SapphireRapids", "Excavator"})
    if (strcasecmp(core.c_str(), c) == 0) return true;
  return false;
}

}  // namespace

BlasCore blas_core() {
  BlasCore b;
  const char* name = openblas_get_corename();
  b.name = name ? name : "";
  b.coretype_set = std::getenv("OPENBLAS_CORETYPE") != nullptr;
  // Test hook (tests/tools/test_cli.cpp): pretend OpenBLAS chose this core,
  // as it does on a CPU it does not know; ignored once OPENBLAS_CORETYPE is set.
  if (const char* pretend = std::getenv("STARFRONT_TEST_OPENBLAS_CORE"); pretend && !b.coretype_set) b.name = pretend;
  const char* replaced = std::getenv("STARFRONT_BLAS_CORE_FROM");  // set by reexec_with_native_blas
  b.detected = replaced ? replaced : b.name;
#if defined(__x86_64__) && defined(__GNUC__)
  if (b.coretype_set || b.name.empty() || is_native_avx2_core(b.name)) return b;
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
      __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl"))
    b.recommended = "SkylakeX";
  else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    b.recommended = "Haswell";
#endif
  return b;
}

void reexec_with_native_blas(char** argv) {
  if (std::getenv("STARFRONT_KEEP_BLAS_CORE")) return;
  const BlasCore b = blas_core();
  if (b.recommended.empty()) return;
  if (setenv("OPENBLAS_CORETYPE", b.recommended.c_str(), 1) != 0) return;
  // Marks the re-executed process (BlasCore::detected).
  setenv("STARFRONT_BLAS_CORE_FROM", b.name.c_str(), 1);
  execv("/proc/self/exe", argv);
  unsetenv("OPENBLAS_CORETYPE");  // execv failed: carry on with the generic kernels
  unsetenv("STARFRONT_BLAS_CORE_FROM");
}

}  // namespace starfront
