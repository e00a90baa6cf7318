#!/usr/bin/env bash
# What tracing costs (issue 9): factorisation time with tracing off and with
# `--trace DIR`, in one process each, interleaved, REPS times; prints the
# median of each mode and the ratios. Optionally a BASELINE binary (starfront
# built without the trace support) is run as a third mode, to check that the
# trace support costs nothing when off.
#
#   bench/trace_overhead.sh [MATRIX.mtx] [REPS]          (defaults: bcsstk13, 9)
#   Environment: STARFRONT (default build/tools/starfront), BASELINE (binary,
#   optional), NCPU (default 2), GRAPH_ARGS (extra solve options, e.g.
#   "--tile-threshold 64 --tile-size 32" for a graph of thousands of tasks),
#   REPEAT (factorisations per process, default 5; the last is timed).
#
# The time is `t_factor_s` of `solve --json` (wall clock of the last
# factorisation: submission + execution), so StarPU's start, the FxT file
# written at shutdown and the conversion are not in it; "process s" is the
# wall clock of the whole command (with tracing: shutdown and starpu_fxt_tool too).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
matrix=${1:-$root/../shared/data/spd/bcsstk13.mtx}
reps=${2:-9}
bin=${STARFRONT:-$root/build/tools/starfront}
baseline=${BASELINE:-}
ncpu=${NCPU:-2}
repeat=${REPEAT:-5}
graph=${GRAPH_ARGS:-}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

modes=(off on)
[[ -n $baseline ]] && modes+=(baseline)
for ((r = 0; r < reps; ++r)); do
  for mode in "${modes[@]}"; do
    exe=$bin
    extra=()
    case $mode in
      on) extra=(--trace "$work/trace") ;;
      baseline) exe=$baseline ;;
    esac
    t0=$(date +%s.%N)
    # shellcheck disable=SC2086
    "$exe" solve "$matrix" --ncpu "$ncpu" --repeat "$repeat" --json $graph "${extra[@]}" >"$work/out.json"
    t1=$(date +%s.%N)
    python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print(sys.argv[2], j["t_factor_s"], float(sys.argv[4])-float(sys.argv[3]), j["tasks"])' \
      "$work/out.json" "$mode" "$t0" "$t1" >>"$work/times.txt"
  done
done
python3 - "$work/times.txt" "$matrix" "$reps" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
modes = []
for r in rows:
    if r[0] not in modes: modes.append(r[0])
med = {m: statistics.median(float(r[1]) for r in rows if r[0] == m) for m in modes}
proc = {m: statistics.median(float(r[2]) for r in rows if r[0] == m) for m in modes}
spread = {m: (min(float(r[1]) for r in rows if r[0] == m), max(float(r[1]) for r in rows if r[0] == m)) for m in modes}
tasks = rows[0][3]
print(f"{sys.argv[2]}: {tasks} tasks, median of {sys.argv[3]} processes")
print("| mode | factorisation ms (median) | min - max ms | / off | process s (median) |")
print("|---|---|---|---|---|")
for m in modes:
    print(f"| {m} | {med[m]*1e3:.2f} | {spread[m][0]*1e3:.2f} - {spread[m][1]*1e3:.2f} | {med[m]/med['off']:.3f} | {proc[m]:.2f} |")
PY
