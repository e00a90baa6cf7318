#!/usr/bin/env bash
# Issue 5: the GPU TRSM of codelets/cuda/gpu_blas.hpp (recursive split,
# register leaf kernel) against cuBLAS DTRSM, on the GPU machine. Build and
# bundle here first (tools/setup.sh;
# STARFRONT_DEVICE_DIR=/work/main/.device/blas tools/device/bundle.sh), then
# run(command="bash .device/blas/run-blas.sh", carry=[".device/blas"]).
# Every step has its own timeout. Writes under $OUT:
#   env.txt    GPUs, cores, CUDA libraries resolved
#   tests.txt  test_cuda_blas, test_cuda_front, test_cuda_factorize,
#              test_cuda_fused, test_cuda_ldlt (STARFRONT_REQUIRE_GPU=1)
#   blas.md    gpu_blas_bench --repeat 10 (default shapes and leaves)
#   lap.md     lap3d 60^3 and 100^3, gpu_bench --repeat 3 --ncpu 16 --no-cpu
#              --no-cholmod --no-cusolversp --gpu-graph --tiles-on-gpu-only
#              --watchdog 30, TRSM by cuBLAS as is
#              (STARFRONT_GPU_TRSM_METHOD=cublas STARFRONT_GPU_TRSM_LEAF=0)
#              and by the leaf kernel on leaves of 64 (the defaults),
#              alternating: round 1 with a task log of the last
#              factorisation (summarised; the logs stay on the device),
#              further rounds (ROUNDS=N in the environment, default 1)
#              without profiling; then lap3d 100^3 with the defaults and
#              --tile-threshold 4096 and 16384 (gpu_graph_options' is 8192)
# First argument "tests": tests.txt and blas.md only; "lap": lap.md only.
set -uo pipefail
# shellcheck source=tools/device/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" starfront-blas
if [ "${1:-}" != lap ]; then
  gpu_tests test_cuda_blas test_cuda_front test_cuda_factorize test_cuda_fused test_cuda_ldlt 2>&1 | tee "$out/tests.txt"
  timeout 180 "$b/bin/gpu_blas_bench" --repeat 10 2>&1 | tee "$out/blas.md"
  echo "exit ${PIPESTATUS[0]}" | tee -a "$out/blas.md"
fi
[ "${1:-}" = tests ] && exit 0
q=(--repeat 3 --ncpu 16 --no-cpu --no-cholmod --no-cusolversp --gpu-graph --tiles-on-gpu-only --watchdog 30)
{
  for round in $(seq 1 "${ROUNDS:-1}"); do
    for v in cublas:0 kernel:64; do
      IFS=: read -r method leaf <<<"$v"
      for m in lap3d:60 lap3d:100; do
        log=$work/log-$method-$leaf-${m#lap3d:}.csv
        e=(STARFRONT_GPU_TRSM_METHOD="$method" STARFRONT_GPU_TRSM_LEAF="$leaf")
        [ "$round" = 1 ] && e+=(STARPU_PROFILING=1 "STARFRONT_TASK_LOG=$log")
        echo "### round $round, $method $leaf: ${e[*]} gpu_bench ${q[*]} $m"
        env "${e[@]}" timeout 150 "$b/bin/gpu_bench" "${q[@]}" "$m" 2>&1 |
          grep -E "^\| lap3d:[0-9]+ \| [0-9]|GPU [0-9.-]+ s|executor phases|watchdog|error|fail"
        echo "exit ${PIPESTATUS[0]}"
        if [ "$round" = 1 ] && [ -f "$log" ]; then
          python3 "$repo/bench/task_log_summary.py" "$log" 2>&1 | sed -n 1,16p
        fi
      done
    done
  done
  for tt in 4096 16384; do  # the tile threshold with the defaults' TRSM (8192 is gpu_graph_options')
    echo "### defaults, --tile-threshold $tt: gpu_bench ${q[*]} --tile-threshold $tt lap3d:100"
    timeout 150 "$b/bin/gpu_bench" "${q[@]}" --tile-threshold "$tt" lap3d:100 2>&1 |
      grep -E "^\| lap3d:[0-9]+ \| [0-9]|GPU [0-9.-]+ s|executor phases|watchdog|error|fail"
    echo "exit ${PIPESTATUS[0]}"
  done
} 2>&1 | tee "$out/lap.md"
