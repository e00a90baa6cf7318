#!/usr/bin/env bash
# Quick start 2: set everything up, then run the whole test suite (CTest).
# Exits non-zero when any test fails.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
"$root/tools/setup.sh"
cd "$root/${STARFRONT_BUILD_DIR:-build}"
ctest --output-on-failure -j "${STARFRONT_TEST_JOBS:-2}" "$@"
