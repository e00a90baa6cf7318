// libFuzzer target: the Matrix Market reader (sparse and dense) on arbitrary
// bytes; properties in fuzz_checks.hpp. Run with tools/fuzz.sh.
#include <cstdio>
#include <cstdlib>

#include "fuzz_checks.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string failure = starfront::fuzz::check_matrix_market(data, size);
  if (!failure.empty()) {
    std::fprintf(stderr, "fuzz_matrix_market: property violated: %s\n", failure.c_str());
    std::abort();
  }
  return 0;
}
