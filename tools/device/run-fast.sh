#!/usr/bin/env bash
# Issue 6, fast refactorisation (branch issue6-fast) on the GPU machine.
# Build and bundle here first (tools/setup.sh; STARFRONT_DEVICE_DIR=<dir>
# tools/device/bundle.sh), then run it there (device run, carry <dir>,
# command `bash <dir>/run-fast.sh`). Unpacks the bundle beside this script,
# runs the fused-kernel tests (test_cuda_fused with STARFRONT_REQUIRE_GPU=1,
# test_fused_subtree_index, test_cuda_factorize: its graphs have fused
# subtrees too) and `gpu_bench --fused --repeat 30 --ncpu 16` on the SPD
# matrices and a 2D Laplacian 300² (1 CUDA worker + 15 CPU workers; phase
# table included), then the fused kernel under compute-sanitizer (racecheck:
# shared-memory hazards inside the blocks; memcheck) on two small matrices and
# activsg2000_hykkt_10, writing under $OUT: env.txt, fused_tests.txt,
# fused_bench.md, sanitizer.txt.
# Usage: bash run-fast.sh [--repeat K]   (default 30)
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repeat=30
[ "${1:-}" = "--repeat" ] && repeat=$2
work=/tmp/starfront-fast
rm -rf "$work" && mkdir -p "$work" && tar -C "$work" -xJf "$here/bundle.tar.xz" || exit 1
b=$work/bundle
out=${OUT:-/tmp}
export LD_LIBRARY_PATH=$b/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
if ldd "$b/bin/gpu_bench" | grep -q "not found"; then
  extra=$(python3 -c 'import glob, nvidia, os; print(":".join(sorted({os.path.dirname(p) for d in nvidia.__path__ for p in glob.glob(d + "/*/lib/lib*.so*")})))' 2>/dev/null)
  export LD_LIBRARY_PATH=$LD_LIBRARY_PATH:$extra
fi
export STARPU_SILENT=1 STARPU_HOME=$work STARFRONT_DATA_DIR=$b/data
{ date -u; nvidia-smi -L; nproc; uname -r; ldd "$b/bin/gpu_bench" | grep -E "cu|nv|starpu|not found"; } 2>&1 | tee "$out/env.txt"
{
  STARFRONT_REQUIRE_GPU=1 timeout 100 "$b/bin/test_cuda_fused"
  timeout 30 "$b/bin/test_fused_subtree_index"
  STARFRONT_REQUIRE_GPU=1 timeout 60 "$b/bin/test_cuda_factorize"
} 2>&1 | grep -v perf_model_add_dir | tee "$out/fused_tests.txt"
timeout 80 "$b/bin/gpu_bench" --fused --repeat "$repeat" --ncpu 16 "$b"/data/spd/*.mtx lap2d:300 2>&1 |
  grep -v perf_model_add_dir | tee "$out/fused_bench.md"
san=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null)
{
  for tool in racecheck memcheck; do
    for m in lund_a 1138_bus activsg2000_hykkt_10; do
      echo "== compute-sanitizer --tool $tool: gpu_bench --fused --repeat 1 $m"
      timeout 40 "$san" --tool "$tool" "$b/bin/gpu_bench" --fused --repeat 1 --ncpu 4 --no-cholmod --no-cusolversp \
        "$b/data/spd/$m.mtx" 2>&1 | grep -E "ERROR SUMMARY|RACECHECK SUMMARY|Error|error|hazard|gpu_bench:" | head -20
      echo "exit ${PIPESTATUS[0]}"
    done
  done
} 2>&1 | tee "$out/sanitizer.txt"
