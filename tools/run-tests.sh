#!/usr/bin/env bash
# Quick start 2: set everything up, then run the whole test suite (CTest).
# Exits non-zero when any test fails.
#   tools/run-tests.sh [CTEST ARGS...]             the suite, Release build in build/
#   tools/run-tests.sh --sanitize [CTEST ARGS...]  the same suite built with
#     AddressSanitizer + UndefinedBehaviorSanitizer (STARFRONT_SANITIZE=ON,
#     RelWithDebInfo) in build-sanitize, run under tools/sanitizers/env.sh
#     (LeakSanitizer on, any report fatal); every test but example_external,
#     built without MPI (STARFRONT_MPI=OFF)
# STARFRONT_BUILD_DIR, STARFRONT_BUILD_TYPE and STARFRONT_CMAKE_ARGS override
# those choices (see tools/setup.sh).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
ctest_args=()
sanitize=0
for a in "$@"; do
  if [ "$a" = --sanitize ]; then sanitize=1; else ctest_args+=("$a"); fi
done
if ((sanitize)); then
  export STARFRONT_BUILD_DIR=${STARFRONT_BUILD_DIR:-build-sanitize}
  export STARFRONT_BUILD_TYPE=${STARFRONT_BUILD_TYPE:-RelWithDebInfo}
  # Without MPI: Open MPI's own allocations at MPI_Init (never freed before
  # exit) would be LeakSanitizer reports in every rank; the StarPU-MPI
  # executor is tested by the normal suite only.
  export STARFRONT_CMAKE_ARGS="-DSTARFRONT_SANITIZE=ON -DSTARFRONT_BUILD_BENCH=OFF -DSTARFRONT_MPI=OFF ${STARFRONT_CMAKE_ARGS:-}"
  # shellcheck source=sanitizers/env.sh
  . "$root/tools/sanitizers/env.sh"
  # example_external installs the build and compiles an out-of-tree consumer
  # against it (CMake package, pkg-config) without the sanitizer flags that an
  # instrumented library needs: the packaging is the normal suite's to check.
  ctest_args=(-E '^example_external$' "${ctest_args[@]}")
fi
"$root/tools/setup.sh"
cd "$root/${STARFRONT_BUILD_DIR:-build}"
ctest --output-on-failure -j "${STARFRONT_TEST_JOBS:-2}" "${ctest_args[@]}"
