#!/usr/bin/env bash
# The solve table of bench/README.md ("Triangular solves"): solve_bench on
# every ../shared/data/spd matrix, LLᵀ then LDLᵀ, 1 and 8 right-hand sides,
# median of 30. With BEFORE=path/to/solve_bench_before (the same source
# built with -DSOLVE_BENCH_BEFORE against an older libstarfront), the two
# binaries alternate per matrix and method, so that both see the same load.
# Usage: bench/solve_table.sh [BUILD_DIR] > table.md
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${1:-$root/build}
data=$root/../shared/data/spd
for f in "$data"/*.mtx; do
  for m in "" --ldlt; do  # llt, then ldlt
    echo "## $(basename "$f") ${m:-llt}"
    "$build/bench/solve_bench" --repeat 30 --nrhs 1,8 $m "$f" | tail -n +3 | sed 's/^/after  /'
    if [ -n "${BEFORE:-}" ]; then "$BEFORE" --repeat 30 --nrhs 1,8 $m "$f" | tail -n +3 | sed 's/^/before /'; fi
  done
done
