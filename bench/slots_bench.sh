#!/usr/bin/env bash
# Contribution-block slot policies (plan/cb_slots.hpp): factor seconds of
# `starfront solve --slots P` (median of REPS separate processes, policies
# interleaved so that machine noise hits all alike), ratio to `private`, and
# the memory report (MiB): planned CB slots, the lower bound, private, the
# level-synchronous estimate, added dependencies, and the measured peak
# (resident-set high-water mark during the factorisation, above the resident
# set before it) against factors + planned.
# Usage: bench/slots_bench.sh [MATRIX...]   (default: activsg2000_hykkt_10,
# bcsstk13 and a generated 3D 7-point Laplacian 50^3)
# Environment: REPS (default 5), NCPU (default 2), STARFRONT_BIN, STARFRONT_DATA
# (the shared matrices, default ../shared/data).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
sf=${STARFRONT_BIN:-${STARFRONT_BUILD_DIR:-$root/build}/tools/starfront}
reps=${REPS:-5}
ncpu=${NCPU:-2}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if [ $# -eq 0 ]; then
  "$sf" generate laplace3d 50 >"$tmp/laplace3d_50.mtx"
  data=${STARFRONT_DATA:-$root/../shared/data}
  set -- "$data/spd/activsg2000_hykkt_10.mtx" "$data/spd/bcsstk13.mtx" "$tmp/laplace3d_50.mtx"
fi
policies=(private dag budget-min)
echo "| matrix | policy | factor s (median of $reps) | ratio to private | CB planned MiB | slots | added deps | CB lower bound | CB private | CB level stack | factors MiB | measured peak MiB | peak / (factors + planned) |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|"
for m in "$@"; do
  for r in $(seq "$reps"); do
    for p in "${policies[@]}"; do
      "$sf" solve "$m" --json --ncpu "$ncpu" --slots "$p" >"$tmp/$p.$r.json"
    done
  done
  python3 - "$tmp" "$reps" "$(basename "$m" .mtx)" "${policies[@]}" <<'PY'
import json, statistics, sys
tmp, reps, name, pols = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4:]
mib = lambda b: b / 2**20
runs = {p: [json.load(open(f"{tmp}/{p}.{r}.json")) for r in range(1, reps + 1)] for p in pols}
med = {p: statistics.median(j["t_factor_s"] for j in runs[p]) for p in pols}
for p in pols:
    j = runs[p][0]; m = j["memory"]
    assert j["status"] == "ok", j
    peak = statistics.median(r["memory"]["measured_peak"] for r in runs[p]) if m["measured_peak"] is not None else float("nan")
    print(f"| {name} | {p} | {med[p]:.4f} | {med[p]/med[pols[0]]:.2f} | {mib(m['cb_planned']):.2f} | {m['slots']} | {m['added_deps']} "
          f"| {mib(m['cb_lower_bound']):.2f} | {mib(m['cb_private']):.2f} | {mib(m['cb_level_stack']):.2f} | {mib(m['factors']):.2f} "
          f"| {mib(peak):.2f} | {peak/(m['factors']+m['cb_planned']):.2f} |")
PY
done
