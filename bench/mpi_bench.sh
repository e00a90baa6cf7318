#!/usr/bin/env bash
# StarPU-MPI executor (issue 11) against the shared-memory executor, one
# script: `starfront solve` with NCPU CPU workers in one process, then
# `mpirun -np P starfront solve` with one CPU worker per rank for each P;
# factor seconds (median of REPS processes), ratio to the shared-memory run,
# bytes sent (measured by StarPU-MPI) against the mapping's prediction and
# lower bound, and per-rank memory (factors owned, planned slots: max over
# ranks; the process's peak RSS on rank 0 and the largest on the other
# ranks; every rank holds A and the whole analysis); the distributed solve:
# seconds (median; with refinement; b and x on rank 0) and bytes it sent
# (measured = the solve graph's model) against the factor's size and what a
# gather of the factor on rank 0 would have moved.
# Usage: bench/mpi_bench.sh [MATRIX...]   (default: a 3D 7-point Laplacian 40^3)
# Environment: REPS (default 3), NCPU (default 2), RANKS (default "1 2 4"),
# STARFRONT_BIN. Ranks may outnumber cores (mpirun --oversubscribe).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
sf=${STARFRONT_BIN:-${STARFRONT_BUILD_DIR:-$root/build}/tools/starfront}
reps=${REPS:-3}
ncpu=${NCPU:-2}
ranks=${RANKS:-1 2 4}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if [ $# -eq 0 ]; then
  "$sf" generate laplace3d 40 >"$tmp/laplace3d_40.mtx"
  set -- "$tmp/laplace3d_40.mtx"
fi
echo "| matrix | run | factor s (median of $reps) | ratio to shared | sent MB (measured) | predicted MB | lower bound MB | max factors MiB per rank | max slots MiB per rank | peak RSS MiB rank 0 / max other ranks | solve s (median) | solve sent MB (model) | factor MB / gather would move MB | backward error |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
for m in "$@"; do
  for r in $(seq "$reps"); do
    "$sf" solve "$m" --json --ncpu "$ncpu" >"$tmp/shared.$r.json"
    for p in $ranks; do
      mpirun --oversubscribe -np "$p" "$sf" solve "$m" --json --ncpu 1 >"$tmp/mpi$p.$r.json"
    done
  done
  python3 - "$tmp" "$reps" "$(basename "$m" .mtx)" "$ncpu" $ranks <<'PY'
import json, statistics, sys
tmp, reps, name, ncpu, ranks = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5:]
load = lambda k: [json.load(open(f"{tmp}/{k}.{r}.json")) for r in range(1, reps + 1)]
shared = load("shared")
base = statistics.median(j["t_factor_s"] for j in shared)
MB, MiB = 1e-6, 2**-20
print(f"| {name} | shared memory, {ncpu} CPU workers | {base:.3f} | 1.00 | - | - | - | "
      f"{shared[0]['memory']['factors'] * MiB:.1f} | {shared[0]['memory']['cb_planned'] * MiB:.1f} | "
      f"{(shared[0]['memory']['measured_peak'] + shared[0]['memory']['measured_rss_before']) * MiB:.0f} | "
      f"{statistics.median(j['t_solve_s'] for j in shared):.3f} | - | - | {shared[0]['backward_error']:.1e} |")
for p in ranks:
    runs = load(f"mpi{p}")
    t = statistics.median(j["t_factor_s"] for j in runs)
    m = runs[0]["mpi"]
    per = m["per_rank"]
    print(f"| {name} | mpirun -np {p}, 1 CPU worker per rank | {t:.3f} | {t / base:.2f} | "
          f"{m['sent_bytes'] * MB:.1f} | {m['predicted_sent_bytes'] * MB:.1f} | {m['lower_bound_bytes'] * MB:.1f} | "
          f"{max(x['memory']['factors'] for x in per) * MiB:.1f} | "
          f"{max(x['memory']['cb_planned'] for x in per) * MiB:.1f} | "
          f"{per[0]['memory']['measured_peak_rss'] * MiB:.0f} / "
          f"{max([x['memory']['measured_peak_rss'] for x in per[1:]] or [0]) * MiB:.0f} | "
          f"{statistics.median(j['t_solve_s'] for j in runs):.3f} | "
          f"{m['solve_phase']['sent_bytes'] * MB:.3f} ({m['solve_phase']['predicted_sent_bytes'] * MB:.3f}) | "
          f"{m['factor_bytes'] * MB:.1f} / {m['gather_avoided_bytes'] * MB:.1f} | {runs[0]['backward_error']:.1e} |")
PY
done
