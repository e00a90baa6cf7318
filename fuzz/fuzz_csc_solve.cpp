// libFuzzer target: the CSC entry point (triplets or raw CSC arrays →
// check_lower_csc → analyse → sequential factorisation → solve) on small
// matrices decoded from the bytes; layout and properties in fuzz_checks.*.
// Run with tools/fuzz.sh.
#include <cstdio>
#include <cstdlib>

#include "fuzz_checks.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string failure = starfront::fuzz::check_csc_solve(data, size);
  if (!failure.empty()) {
    std::fprintf(stderr, "fuzz_csc_solve: property violated: %s\n", failure.c_str());
    std::abort();
  }
  return 0;
}
