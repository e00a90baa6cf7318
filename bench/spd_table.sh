#!/usr/bin/env bash
# Table of `starfront solve` figures for every matrix in ../shared/data/spd,
# beside CHOLMOD's nnz(L) and flops (bench/cholmod_stats, same machine, same
# process order). Markdown on stdout. Needs a build in build/ (tools/setup.sh)
# and python3 (to read the JSON reports).
# Usage: bench/spd_table.sh [extra starfront solve options...]
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${STARFRONT_BUILD_DIR:-$root/build}
data=${STARFRONT_DATA_DIR:-$root/../shared/data}
echo "| matrix | n | nnz(A) | nnz(L) exact | nnz(L) CHOLMOD | nnz(L) stored | flops exact | flops CHOLMOD | flops done | max front | supernodes = tasks | analyse s | factor s | GFLOP/s | solve s | backward error |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
for f in "$data"/spd/*.mtx; do
  sf=$("$build/tools/starfront" solve "$f" --json "$@")
  ch=$("$build/bench/cholmod_stats" "$f" --json)
  python3 - "$f" "$sf" "$ch" <<'PY'
import json, os, sys
f, s, c = sys.argv[1], json.loads(sys.argv[2]), json.loads(sys.argv[3])
name = os.path.basename(f)[:-4]
print(f"| {name} | {s['n']} | {s['nnz_a']} | {s['nnz_l_exact']} | {int(c['nnz_l'])} | {s['nnz_l']} "
      f"| {s['flops_exact']:.3g} | {c['flops']:.3g} | {s['flops']:.3g} | {s['max_front']} | {s['supernodes']} = {s['tasks']} "
      f"| {s['t_analyse_s']:.4f} | {s['t_factor_s']:.4f} | {s['gflops']:.2f} | {s['t_solve_s']:.4f} | {s['backward_error']:.1e} |")
PY
done
