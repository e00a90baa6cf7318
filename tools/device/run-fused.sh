#!/usr/bin/env bash
# Issue 6 (fused GPU subtree kernels) on the GPU machine. Build and bundle
# here first (tools/setup.sh; STARFRONT_DEVICE_DIR=<dir> tools/device/bundle.sh;
# copy this script into <dir>), then run it there (device run, carry <dir>).
# Unpacks the bundle beside this script, runs the fused-kernel tests
# (test_cuda_fused with STARFRONT_REQUIRE_GPU=1, test_fused_subtree_index),
# the earlier GPU tests (test_cuda_factorize: their graphs have subtree tasks,
# which now run on the GPU too) and `gpu_bench --fused` on the SPD matrices
# and a 2D Laplacian 300², writing under $OUT:
#   env.txt, fused_tests.txt, fused_bench.md (last: activsg2000 with the
#   factor page-locked, STARFRONT_PIN_FACTOR=1)
# Usage: bash run-fused.sh [--repeat K]   (default 30)
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repeat=30
[ "${1:-}" = "--repeat" ] && repeat=$2
work=/tmp/starfront-fused
rm -rf "$work" && mkdir -p "$work" && tar -C "$work" -xJf "$here/bundle.tar.xz" || exit 1
b=$work/bundle
out=${OUT:-/tmp}
export LD_LIBRARY_PATH=$b/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
if ldd "$b/bin/gpu_bench" | grep -q "not found"; then
  extra=$(python3 -c 'import glob, nvidia, os; print(":".join(sorted({os.path.dirname(p) for d in nvidia.__path__ for p in glob.glob(d + "/*/lib/lib*.so*")})))' 2>/dev/null)
  export LD_LIBRARY_PATH=$LD_LIBRARY_PATH:$extra
fi
export STARPU_SILENT=1 STARPU_HOME=$work STARFRONT_DATA_DIR=$b/data
{ nvidia-smi -L; nproc; uname -r; ldd "$b/bin/gpu_bench" | grep -E "cu|nv|starpu|not found"; } 2>&1 | tee "$out/env.txt"
{
  STARFRONT_REQUIRE_GPU=1 timeout 90 "$b/bin/test_cuda_fused"
  timeout 30 "$b/bin/test_fused_subtree_index"
  STARFRONT_REQUIRE_GPU=1 timeout 50 "$b/bin/test_cuda_factorize"
} 2>&1 | grep -v perf_model_add_dir | tee "$out/fused_tests.txt"
timeout 80 "$b/bin/gpu_bench" --fused --repeat "$repeat" --ncpu "$(nproc)" "$b"/data/spd/*.mtx lap2d:300 2>&1 |
  grep -v perf_model_add_dir | tee "$out/fused_bench.md"
# The same on the power-grid matrix with the factor page-locked during each
# factorisation (STARFRONT_PIN_FACTOR=1: faster copy back, pinning cost included).
STARFRONT_PIN_FACTOR=1 timeout 30 "$b/bin/gpu_bench" --fused --repeat "$repeat" --ncpu "$(nproc)" --no-cholmod \
  --no-cusolversp "$b"/data/spd/activsg2000_hykkt_10.mtx 2>&1 | grep -v perf_model_add_dir | tee -a "$out/fused_bench.md"
