#!/usr/bin/env bash
# On the GPU machine: unpacks .device/bundle.tar.xz and runs factor_bench on
# two cores (taskset -c 0,1: the 2-core comparison of bench/README.md, on an
# otherwise idle machine), writing the table under $OUT.
# Usage (device run, carry .device): bash tools/device/run-bench.sh [INPUT...]
#    or: bash tools/device/run-bench.sh --sweep [MATRIX...]   (bench/sweep.sh)
#    or: bash tools/device/run-bench.sh --slots [MATRIX...]   (bench/slots_bench.sh)
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
work=/tmp/starfront-bundle
rm -rf "$work" && mkdir -p "$work" && tar -C "$work" -xJf "$root/.device/bundle.tar.xz"
b=$work/bundle
export LD_LIBRARY_PATH=$b/lib:${LD_LIBRARY_PATH:-}
export STARPU_SILENT=1 STARPU_HOME=$work STARPU_WORKERS_CPUID="0 1"
out=${OUT:-/tmp}
if [ "${1:-}" = "--slots" ]; then  # contribution-block slot policies (bench/slots_bench.sh), two cores
  shift
  STARFRONT_BIN=$b/bin/starfront STARFRONT_DATA=$b/data taskset -c 0,1 bash "$root/bench/slots_bench.sh" "$@" 2>&1 |
    grep -v perf_model_add_dir | tee "$out/slots.md"
  exit 0
fi
if [ "${1:-}" = "--sweep" ]; then  # the parameter sweep of bench/sweep.sh, on two cores
  shift
  for m in "" "$@"; do STARFRONT_BIN=$b/bin/starfront taskset -c 0,1 bash "$root/bench/sweep.sh" $m; done 2>&1 |
    grep -v perf_model_add_dir | tee "$out/sweep.txt"
  exit 0
fi
inputs=("$@")
[ ${#inputs[@]} -gt 0 ] || inputs=("$b"/data/spd/*.mtx lap3d:30 lap3d:50 lap3d:40:27 lap2d:1000)
nproc; uname -r
taskset -c 0,1 "$b/bin/factor_bench" --repeat 5 --ncpu 2 "${inputs[@]}" 2>&1 | tee "$out/factor_bench.md"
