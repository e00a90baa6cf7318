#!/usr/bin/env bash
# A short device check after a change to the CUDA codelets: the GPU test
# binaries of the front and tile tasks with STARFRONT_REQUIRE_GPU=1 (a skip
# fails) and one gpu_bench line on lap3d 60^3 (GPU graph, 1 GPU + 15 CPU).
# Build and bundle first (tools/setup.sh && tools/device/bundle.sh), then
# run(command="bash .device/run-quick.sh", carry=[".device/bundle.tar.xz",
# ".device/run-quick.sh"]). Writes tests.txt and bench.md under $OUT.
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
bundle=$here/bundle.tar.xz
[ -f "$bundle" ] || bundle=$here/../../.device/bundle.tar.xz
work=/tmp/starfront-quick
rm -rf "$work" && mkdir -p "$work" && tar -C "$work" -xJf "$bundle" || exit 1
b=$work/bundle
out=${OUT:-/tmp}
export LD_LIBRARY_PATH=$b/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export STARPU_SILENT=1 STARPU_HOME=$work STARFRONT_DATA_DIR=$b/data STARFRONT_TEST_DATA_DIR=$b/data
{
  for t in test_cuda_front test_cuda_ldlt test_cuda_factorize test_cuda_fused; do
    echo "### $t"
    STARFRONT_REQUIRE_GPU=1 timeout 60 "$b/bin/$t" 2>&1 | grep -E "^\[ *(OK|FAILED|PASSED|SKIPPED) |tests ran|FAILED TEST|Failure"
    echo "exit ${PIPESTATUS[0]}"
  done
} 2>&1 | tee "$out/tests.txt"
timeout 40 "$b/bin/gpu_bench" --repeat 3 --ncpu 16 --no-cpu --no-cholmod --no-cusolversp --gpu-graph lap3d:60 2>&1 |
  grep -v perf_model_add_dir | tee "$out/bench.md"
