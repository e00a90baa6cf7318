#!/usr/bin/env bash
# Parameter sweep behind the task-graph defaults (bench/README.md): factor
# seconds (the last of --repeat factorisations in one process) of
# `starfront solve` (SWEEP_NCPU workers, default 2) for tile sizes, tile thresholds, subtree ratios and
# schedulers. Usage: bench/sweep.sh [MATRIX_OR_EMPTY_FOR_LAPLACE3D30]
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
sf=${STARFRONT_BIN:-${STARFRONT_BUILD_DIR:-$root/build}/tools/starfront}
m=${1:-}
t() {
  "$sf" solve $m --json --repeat 5 --ncpu "${SWEEP_NCPU:-2}" "$@" |
    python3 -c "import json,sys; d=json.load(sys.stdin); print('%.4f s, %d tasks' % (d['t_factor_s'], d['tasks']))"
}
echo "matrix: ${m:-built-in 3D 7-point 30^3}"
for ts in 128 192 256 384; do for th in 256 512 1024; do echo "tile-size $ts tile-threshold $th: $(t --tile-size $ts --tile-threshold $th)"; done; done
for r in 1 2 4 8 16; do echo "subtree-ratio $r: $(t --subtree-ratio $r)"; done
for s in lws dmda dmdas eager; do echo "sched $s: $(t --sched $s)"; done
echo "no-fuse no-tile (one task per front): $(t --no-fuse --no-tile)"
