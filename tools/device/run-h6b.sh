#!/usr/bin/env bash
# Issue 6, faster refactorisation (branch issue6-faster) on the GPU machine.
# Build and bundle here first (tools/setup.sh; STARFRONT_DEVICE_DIR=<dir>
# tools/device/bundle.sh, which copies this script into <dir>), then run it
# there (device run, carry <dir>, command `bash <dir>/run-h6b.sh`). Writes
# under $OUT: env.txt; trace.txt (the fused kernel's %globaltimer trace
# summary, STARFRONT_FUSED_TRACE=1, on the two power-grid matrices, as built
# and without factor()'s look-ahead or the overlapping launches); tests.txt
# (test_cuda_fused and test_cuda_factorize with STARFRONT_REQUIRE_GPU=1,
# test_fused_subtree_index, and test_cuda_fused again without the look-ahead
# and the overlap); bench.md (gpu_bench
# --fused --repeat 30 --ncpu 16 on every SPD matrix and lap2d:300, against
# CHOLMOD and cusolverSp csrchol in the same process); variants.md (the
# power-grid matrices with each measurement knob turned off:
# STARFRONT_FUSED_LOOKAHEAD=0, STARFRONT_FUSED_OVERLAP=0, STARFRONT_PIN_VALUES=0,
# STARFRONT_FUSED_EARLY=0);
# sanitizer.txt (compute-sanitizer racecheck and memcheck of the fused kernel
# on small matrices and on bcsstk13, whose fused subtrees have fronts of
# order > 64 for the 512-thread launch).
# Usage: bash run-h6b.sh [--repeat K]   (default 30)
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repeat=30
[ "${1:-}" = "--repeat" ] && repeat=$2
work=/tmp/starfront-h6b
rm -rf "$work" && mkdir -p "$work" && tar -C "$work" -xJf "$here/bundle.tar.xz" || exit 1
b=$work/bundle
out=${OUT:-/tmp}
export LD_LIBRARY_PATH=$b/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export STARPU_SILENT=1 STARPU_HOME=$work STARFRONT_DATA_DIR=$b/data
{ date -u; nvidia-smi -L; nproc; uname -r; ldd "$b/bin/gpu_bench" | grep -E "cu|nv|starpu|not found"; } 2>&1 | tee "$out/env.txt"
grid="$b/data/spd/activsg2000_hykkt_10.mtx $b/data/spd/opf_case10000_goc_kkt.mtx"
{
  STARFRONT_REQUIRE_GPU=1 timeout 100 "$b/bin/test_cuda_fused"
  timeout 40 "$b/bin/test_fused_subtree_index"
  STARFRONT_REQUIRE_GPU=1 timeout 60 "$b/bin/test_cuda_factorize"
  echo "== STARFRONT_FUSED_LOOKAHEAD=0 STARFRONT_FUSED_OVERLAP=0 test_cuda_fused"
  STARFRONT_FUSED_LOOKAHEAD=0 STARFRONT_FUSED_OVERLAP=0 STARFRONT_REQUIRE_GPU=1 timeout 100 "$b/bin/test_cuda_fused"
} 2>&1 | grep -v perf_model_add_dir | tee "$out/tests.txt"
timeout 90 "$b/bin/gpu_bench" --fused --repeat "$repeat" --ncpu 16 "$b"/data/spd/*.mtx lap2d:300 2>&1 |
  grep -v perf_model_add_dir | tee "$out/bench.md"
{
  for v in "STARFRONT_FUSED_TRACE=1" "STARFRONT_FUSED_LOOKAHEAD=0" "STARFRONT_FUSED_OVERLAP=0"; do
    echo "== STARFRONT_FUSED_TRACE=1 $v gpu_bench --fused --repeat 3 --ncpu 16 (power-grid matrices)"
    env STARFRONT_FUSED_TRACE=1 "$v" timeout 40 "$b/bin/gpu_bench" --fused --repeat 3 --ncpu 16 \
      --no-cholmod --no-cusolversp $grid 2>&1 | grep -E "fused trace|gpu_bench:"
  done
} 2>&1 | tee "$out/trace.txt"
{
  for v in "STARFRONT_FUSED_LOOKAHEAD=0" "STARFRONT_FUSED_OVERLAP=0" "STARFRONT_PIN_VALUES=0" "STARFRONT_FUSED_EARLY=0"; do
    echo "== $v gpu_bench --fused --repeat $repeat --ncpu 16 (power-grid matrices)"
    env "$v" timeout 30 "$b/bin/gpu_bench" --fused --repeat "$repeat" --ncpu 16 --no-cholmod --no-cusolversp $grid 2>&1 |
      grep -E "^\| (activsg|opf)|gpu_bench:"
  done
} 2>&1 | tee "$out/variants.md"
san=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null)
{
  for tool in racecheck memcheck; do
    for m in lund_a 1138_bus bcsstk13; do
      echo "== compute-sanitizer --tool $tool: gpu_bench --fused --repeat 1 $m"
      timeout 40 "$san" --tool "$tool" "$b/bin/gpu_bench" --fused --repeat 1 --ncpu 4 --no-cholmod --no-cusolversp \
        "$b/data/spd/$m.mtx" 2>&1 | grep -E "ERROR SUMMARY|RACECHECK SUMMARY|Error|error|hazard|gpu_bench:" | head -20
      echo "exit ${PIPESTATUS[0]}"
    done
  done
} 2>&1 | tee "$out/sanitizer.txt"
