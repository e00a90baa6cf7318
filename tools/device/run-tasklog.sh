#!/usr/bin/env bash
# Where a warm lap3d 60^3 factorisation spends its time on one GPU (issue 5),
# and a check of main on the GPU machine after the merges of issues 5 and 6.
# Build and bundle here first (tools/setup.sh; STARFRONT_DEVICE_DIR=
# /work/main/.device/tl tools/device/bundle.sh, which copies this script
# into that folder), then run(command="bash .device/tl/run-tasklog.sh",
# carry=[".device/tl"]). Every step has its own timeout. Writes under $OUT:
#   env.txt      GPUs, cores, CUDA libraries resolved
#   tests.txt    every GPU test binary with STARFRONT_REQUIRE_GPU=1
#   fused.md     gpu_bench --fused --repeat 20 --ncpu 16 on the two power-grid
#                KKT matrices, with CHOLMOD and cusolverSp csrchol
#   lap60.md     gpu_bench --repeat 3 --ncpu 16 --no-cpu --no-cholmod
#                --no-cusolversp --gpu-graph lap3d:60 as built, then with
#                STARPU_PROFILING=1 and a task log (STARFRONT_TASK_LOG) of the
#                last (warm) factorisation: as built, with every front task on
#                the GPU (STARFRONT_FRONT_TASKS_ON_GPU=1), and with subtrees and
#                fronts on the GPU (--fronts-on-gpu-only)
#   log-*.csv    those task logs (bench/task_log_summary.py reads them)
# With "ab" as first argument (run 2) instead: the same checks on a shorter
# list, then old (OLD, a gpu_bench built from an earlier commit, put beside
# this script as gpu_bench_old) against new (this bundle's gpu_bench) in
# alternating rounds in one call: ab-fused.md (power-grid refactorisation),
# ab-lap60.md (lap3d 60^3 7- and 27-point, 1 GPU, 1 / 2 / 4 CUDA workers per
# GPU, dmda and dmdas), with task logs log-ab-*.csv of the new runs.
set -uo pipefail
# shellcheck source=tools/device/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" starfront-tl
mode=${1:-check}
tests=(test_cuda_front test_cuda_factorize test_cuda_fused test_fused_subtree_index test_cuda_ldlt)
[ "$mode" = ab ] && tests=(test_cuda_front test_cuda_fused test_cuda_ldlt)
gpu_tests "${tests[@]}" 2>&1 | tee "$out/tests.txt"
if [ "$mode" = ab ]; then
  old=$here/gpu_bench_old
  grid=("$b/data/spd/activsg2000_hykkt_10.mtx" "$b/data/spd/opf_case10000_goc_kkt.mtx")
  {
    for round in 1 2; do
      for v in old new; do
        g=$b/bin/gpu_bench
        [ "$v" = old ] && g=$old
        echo "### round $round $v: gpu_bench --fused --repeat 20 --ncpu 16 --no-cholmod --no-cusolversp (power grid)"
        timeout 40 "$g" --fused --repeat 20 --ncpu 16 --no-cholmod --no-cusolversp "${grid[@]}" 2>&1 |
          grep -E "^\| (activsg|opf)|gpu_bench:"
      done
    done
  } 2>&1 | tee "$out/ab-fused.md"
  q=(--repeat 3 --ncpu 16 --no-cpu --no-cholmod --no-cusolversp --gpu-graph)
  {
    for cfg in "dmda 1" "dmda 4" "dmdas 1" "dmda 2"; do
      set -- $cfg
      for v in old new; do
        g=$b/bin/gpu_bench
        e=(STARPU_NWORKER_PER_CUDA=$2)
        [ "$v" = old ] && g=$old
        [ "$v" = new ] && e+=(STARPU_PROFILING=1 "STARFRONT_TASK_LOG=$out/log-ab-$1-$2.csv")
        echo; echo "### $v, --sched $1, STARPU_NWORKER_PER_CUDA=$2: gpu_bench ${q[*]} --sched $1 lap3d:60 lap3d:60:27"
        env "${e[@]}" timeout 50 "$g" "${q[@]}" --sched "$1" lap3d:60 lap3d:60:27 2>&1 |
          grep -E "^\| lap3d|executor phases|gpu_bench: lap3d:60(:27)? GPU"
      done
    done
  } 2>&1 | tee "$out/ab-lap60.md"
  exit 0
fi
timeout 60 "$b/bin/gpu_bench" --fused --repeat 20 --ncpu 16 \
  "$b/data/spd/activsg2000_hykkt_10.mtx" "$b/data/spd/opf_case10000_goc_kkt.mtx" 2>&1 |
  grep -v perf_model_add_dir | tee "$out/fused.md"
q=(--repeat 3 --ncpu 16 --no-cpu --no-cholmod --no-cusolversp --gpu-graph)
{
  echo "### as built: gpu_bench ${q[*]} lap3d:60"
  timeout 40 "$b/bin/gpu_bench" "${q[@]}" lap3d:60 2>&1 | grep -v perf_model_add_dir
  for v in default fronts-env fronts-only; do
    e=(STARPU_PROFILING=1 "STARFRONT_TASK_LOG=$out/log-$v.csv")
    a=()
    [ "$v" = fronts-env ] && e+=(STARFRONT_FRONT_TASKS_ON_GPU=1)
    [ "$v" = fronts-only ] && a=(--fronts-on-gpu-only)
    echo; echo "### $v: env ${e[*]} gpu_bench ${q[*]} ${a[*]} lap3d:60"
    env "${e[@]}" timeout 40 "$b/bin/gpu_bench" "${q[@]}" "${a[@]}" lap3d:60 2>&1 | grep -v perf_model_add_dir
  done
} 2>&1 | tee "$out/lap60.md"
