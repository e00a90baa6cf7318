#!/usr/bin/env bash
# Issue 5: the GPU Cholesky front tasks (gpu_potrf_panel against cuSOLVER's
# DPOTRF followed by the TRSM), on the GPU machine. Build and bundle here
# first (tools/setup.sh;
# STARFRONT_DEVICE_DIR=/work/main/.device/potrf tools/device/bundle.sh), then
# run(command="bash .device/potrf/run-potrf.sh", carry=[".device/potrf"]).
# Every step has its own timeout. Writes under $OUT:
#   env.txt     GPUs, cores, CUDA libraries resolved
#   tests.txt   test_cuda_blas, test_cuda_front, test_cuda_factorize,
#               test_cuda_fused, test_cuda_ldlt (STARFRONT_REQUIRE_GPU=1)
#   blas.md     gpu_blas_bench --potrf (cuSOLVER DPOTRF against the order)
#               and --panel (front panels: cuSOLVER + TRSM against
#               gpu_potrf_panel)
#   front.md    lap3d 60^3 and 100^3, gpu_bench --repeat 3 --ncpu 16 --no-cpu
#               --no-cholmod --no-cusolversp --gpu-graph --tiles-on-gpu-only
#               --watchdog 30, alternating variants HOW:MAX (VARIANTS,
#               default "cusolver:0 panel:0": STARFRONT_GPU_POTRF
#               and STARFRONT_GPU_POTRF_PANEL_MAX; 0 = the default limit,
#               kGpuPanelMaxK; 100000: every block on the panel), ROUNDS
#               rounds (default 2), on MATRICES (default "lap3d:60 lap3d:100");
#               then one run of each matrix with STARFRONT_GPU_FRONT_PROFILE=1
#               (the front tasks' steps timed by CUDA events, per bin of k;
#               PROFILE_MATRICES="..." to choose them, empty for none)
# First argument "tests": tests.txt and blas.md only; "blas": blas.md only;
# "lap": front.md only.
set -uo pipefail
# shellcheck source=tools/device/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" starfront-potrf
[ "${1:-}" = blas ] || [ "${1:-}" = lap ] ||
  gpu_tests test_cuda_blas test_cuda_front test_cuda_factorize test_cuda_fused test_cuda_ldlt 2>&1 | tee "$out/tests.txt"
[ "${1:-}" = lap ] || {
  timeout 60 "$b/bin/gpu_blas_bench" --repeat 10 --potrf 8 64 128 512 1024 2048
  echo "exit $?"
  timeout 120 "$b/bin/gpu_blas_bench" --repeat 10 --panel
  echo "exit $?"
} 2>&1 | tee "$out/blas.md"
[ "${1:-}" = tests ] || [ "${1:-}" = blas ] && exit 0
q=(--ncpu 16 --no-cpu --no-cholmod --no-cusolversp --gpu-graph --tiles-on-gpu-only --watchdog 30)
keep='^\| lap3d:[0-9]+ \| [0-9]|GPU [0-9.-]+ s|executor phases|watchdog|error|fail'
{
  for round in $(seq 1 "${ROUNDS:-2}"); do
    for v in ${VARIANTS:-cusolver:0 panel:0}; do
      IFS=: read -r how max <<<"$v"
      for m in ${MATRICES:-lap3d:60 lap3d:100}; do
        echo "### round $round: STARFRONT_GPU_POTRF=$how STARFRONT_GPU_POTRF_PANEL_MAX=$max gpu_bench --repeat 3 ${q[*]} $m"
        STARFRONT_GPU_POTRF=$how STARFRONT_GPU_POTRF_PANEL_MAX=$max timeout 150 "$b/bin/gpu_bench" --repeat 3 "${q[@]}" "$m" 2>&1 |
          grep -E "$keep"
        echo "exit ${PIPESTATUS[0]}"
      done
    done
  done
  for m in ${PROFILE_MATRICES-lap3d:60 lap3d:100}; do
    echo "### profile: STARFRONT_GPU_FRONT_PROFILE=1 gpu_bench --repeat 1 ${q[*]} $m"
    STARFRONT_GPU_FRONT_PROFILE=1 timeout 150 "$b/bin/gpu_bench" --repeat 1 "${q[@]}" "$m" 2>&1 |
      grep -E "$keep|^gpu front|^\| [0-9a]"
    echo "exit ${PIPESTATUS[0]}"
  done
} 2>&1 | tee "$out/front.md"
