#!/usr/bin/env bash
# Issue 5, "fewer, bigger GPU tasks" (GPU Cholesky front tasks and the GPU
# graph), in one device run (build and bundle here first: tools/setup.sh &&
# tools/device/bundle.sh; then run(command="bash .device/run-front.sh",
# carry=[".device/bundle.tar.xz", ".device/run-front.sh"], kind nvidia-h200-x2)).
# Writes under $OUT:
#   env.txt     GPUs, cores, the CUDA libraries resolved
#   tests.txt   every GPU test binary with STARFRONT_REQUIRE_GPU=1 (a skip fails)
#   bench.md    gpu_bench on lap3d 60^3 7- and 27-point (--repeat 3, no CPU
#               run, no CHOLMOD, no csrchol): the old configuration (default
#               graph, tiles of 512 above 1024 on the GPU only) against the
#               GPU graph (gpu_graph_options) with its default tiles, with
#               everything on the GPU, with other tiles, on 1 and 2 GPUs and
#               with 7, 15 or 30-31 CPU workers (the same graph each time:
#               the GPU graph does not depend on the worker count)
# `bash run-front.sh --subtree-limits`: instead, the GPU graph with fused
# subtrees up to front order 300, 400, 600 (tiles 1024 > 4096 or none), one
# run on 2 GPUs, and test_cuda_front only.
# Each step has its own timeout so that the whole stays within about 220 s.
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
bundle=$here/bundle.tar.xz
[ -f "$bundle" ] || bundle=$here/../../.device/bundle.tar.xz
work=/tmp/starfront-front
rm -rf "$work" && mkdir -p "$work" && tar -C "$work" -xJf "$bundle" || exit 1
b=$work/bundle
out=${OUT:-/tmp}
export LD_LIBRARY_PATH=$b/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export STARPU_SILENT=1 STARPU_HOME=$work STARFRONT_DATA_DIR=$b/data STARFRONT_TEST_DATA_DIR=$b/data
{ nvidia-smi -L; lscpu | grep -E "^CPU\(s\)|Thread|Core|Socket|NUMA node"; uname -r
  ldd "$b/bin/gpu_bench" | grep -E "cu|nv|starpu|not found"; } 2>&1 | tee "$out/env.txt"
m=(lap3d:60 lap3d:60:27)
q=(--repeat 3 --no-cpu --no-cholmod --no-cusolversp)
bench() {  # label, timeout, gpu_bench arguments...
  local label=$1 t=$2
  shift 2
  echo "### $label: gpu_bench ${q[*]} $* ${m[*]}"
  timeout "$t" "$b/bin/gpu_bench" "${q[@]}" "$@" "${m[@]}" 2>&1 | grep -v perf_model_add_dir
  echo "exit ${PIPESTATUS[0]}"
}
if [ "${1:-}" = "--subtree-limits" ]; then  # second run: the fused-subtree limit of the GPU graph
  m=(lap3d:60 lap3d:60:27)
  {
    for f in 300 400 600; do
      bench "GPU graph, subtrees up to front order $f, tiles 1024 > 4096, dmda, 1 GPU + 15 CPU" 25 --ncpu 16 --gpu-graph --max-subtree-front $f
      bench "GPU graph, subtrees up to front order $f, no tiles (2048 > 8192), dmda, 1 GPU + 15 CPU" 25 --ncpu 16 --gpu-graph --max-subtree-front $f --tile-size 2048 --tile-threshold 8192
    done
    bench "GPU graph, subtrees up to front order 400, tiles 1024 > 4096, dmda, 2 GPUs + 14 CPU" 25 --ncpu 16 --ncuda 2 --gpu-graph --max-subtree-front 400
  } 2>&1 | tee "$out/bench.md"
  tests=(test_cuda_front)
else
{
  bench "old: default graph, tiles 512 > 1024 on the GPU only, 1 GPU + 15 CPU" 40 --ncpu 16 --tile-size 512 --tile-threshold 1024 --tiles-on-gpu-only
  bench "GPU graph (1024 > 4096), dmda, 1 GPU + 15 CPU" 25 --ncpu 16 --gpu-graph
  bench "GPU graph (1024 > 4096), everything on the GPU, 1 GPU + 15 CPU" 25 --ncpu 16 --gpu-graph --tiles-on-gpu-only --fronts-on-gpu-only
  bench "GPU graph, tiles 2048 > 8192 (none on 60^3), dmda, 1 GPU + 15 CPU" 25 --ncpu 16 --gpu-graph --tile-size 2048 --tile-threshold 8192
  bench "GPU graph, subtrees up to front order 400, dmda, 1 GPU + 15 CPU" 25 --ncpu 16 --gpu-graph --max-subtree-front 400
  bench "GPU graph, subtrees up to 1000 (on CPUs), tiles 2048 > 8192, dmda, 1 GPU + 15 CPU" 25 --ncpu 16 --gpu-graph --max-subtree-front 1000 --tile-size 2048 --tile-threshold 8192
  bench "GPU graph (1024 > 4096), dmda, 1 GPU + 31 CPU" 25 --ncpu 32 --gpu-graph
  bench "GPU graph (1024 > 4096), dmda, 2 GPUs + 14 CPU" 25 --ncpu 16 --ncuda 2 --gpu-graph
  bench "GPU graph (1024 > 4096), dmda, 2 GPUs + 30 CPU" 25 --ncpu 32 --ncuda 2 --gpu-graph
} 2>&1 | tee "$out/bench.md"
  tests=(test_cuda_front test_cuda_factorize test_cuda_fused test_fused_subtree_index test_cuda_ldlt)
fi
declare -A tmo=([test_cuda_front]=35 [test_cuda_factorize]=45 [test_cuda_fused]=20 [test_fused_subtree_index]=15
                [test_cuda_ldlt]=25)
{
  for t in "${tests[@]}"; do
    echo "### $t"
    STARFRONT_REQUIRE_GPU=1 timeout "${tmo[$t]}" "$b/bin/$t" 2>&1 | grep -E "^\[ *(OK|FAILED|PASSED|SKIPPED) |^\[ .*\]$|tests ran|FAILED TEST|Failure|rror|Expected|Which is|actual|[0-9]e[-+][0-9]"
    echo "exit ${PIPESTATUS[0]}"
  done
} 2>&1 | tee "$out/tests.txt"
