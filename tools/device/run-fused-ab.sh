#!/usr/bin/env bash
# The fused GPU subtree kernel (issue 6) of this bundle against an older
# gpu_bench, on the GPU machine. Build and bundle here first (tools/setup.sh;
# STARFRONT_DEVICE_DIR=/work/main/.device/fab tools/device/bundle.sh; put the
# older gpu_bench beside this script as gpu_bench_old), then
# run(command="bash .device/fab/run-fused-ab.sh", carry=[".device/fab"]).
# Every step has its own timeout. Writes under $OUT:
#   env.txt       GPUs, cores, CUDA libraries resolved
#   tests.txt     test_cuda_fused (as built, then with the 512x2 large
#                 launch and with STARFRONT_FUSED_EARLY=0),
#                 test_fused_subtree_index, test_cuda_factorize
#                 (STARFRONT_REQUIRE_GPU=1)
#   ab.md         old against new in alternating rounds, and the new binary
#                 with the 512x2 large launch set explicitly
#                 (STARFRONT_FUSED_LARGE=TxC; 384x2 and 256x4 are the other
#                 shapes) and with the wait, prologue and extend-add one
#                 after the other (STARFRONT_FUSED_EARLY=0):
#                 gpu_bench --fused --repeat 30 --ncpu 16 --no-cholmod
#                 --no-cusolversp on the two power-grid matrices
#   trace.txt     the kernel's trace summary (STARFRONT_FUSED_TRACE=1), old
#                 and new, each variant
#   bench.md      gpu_bench --fused --repeat 30 --ncpu 16 on every SPD matrix
#                 and lap2d:300 against CHOLMOD and cusolverSp csrchol
#   sanitizer.txt compute-sanitizer racecheck (1138_bus) and memcheck
#                 (1138_bus, bcsstk13) of gpu_bench --fused --repeat 1
#   large.md      issue 5: lap3d 100^3 on one GPU (+15 CPU workers, tile
#                 tasks on the GPU only) and dense DPOTRF at its largest
#                 front's order, one process; twice, the first calibrating
#                 (skipped with --no-large as first argument)
# With --lap100 as first argument: only tests.txt (test_cuda_fused,
# test_cuda_factorize, test_cuda_front) and lap100.md (issue 5: lap3d 60^3
# and 100^3, new twice and old once, task logs log-*.csv summarised).
set -uo pipefail
# shellcheck source=tools/device/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" starfront-fab
old=$here/gpu_bench_old
if [ "${1:-}" = --lap100 ]; then
  # Issue 5: where the subtree tasks of lap3d 100^3 and 60^3 ran, new (fused
  # subtrees with fronts beyond the kernel's shared memory kept on CPU
  # workers) against old, each with a task log summarised by
  # bench/task_log_summary.py: tests.txt, lap100.md, log-*.csv.
  gpu_tests -e "bcsstk13, subtrees" test_cuda_fused test_cuda_factorize test_cuda_front 2>&1 | tee "$out/tests.txt"
  q=(--ncpu 16 --no-cpu --no-cholmod --no-cusolversp --gpu-graph --tiles-on-gpu-only)
  {
    for v in new new old; do
      g=$b/bin/gpu_bench
      [ "$v" = old ] && g=$old
      for m in lap3d:60 lap3d:100; do
        echo "### $v: gpu_bench --repeat 3 ${q[*]} $m (task log of the last factorisation)"
        STARPU_PROFILING=1 STARFRONT_TASK_LOG=$out/log-$v-${m#lap3d:}.csv timeout 100 "$g" --repeat 3 "${q[@]}" "$m" 2>&1 |
          grep -E "^\| lap3d:[0-9]+ \| [0-9]|GPU [0-9.]+ s|^\| lap3d:[0-9]+ \| [0-9]+ / "
        echo "exit ${PIPESTATUS[0]}"
        python3 "$repo/bench/task_log_summary.py" "$out/log-$v-${m#lap3d:}.csv" 2>&1 | sed -n 1,14p
      done
    done
  } 2>&1 | tee "$out/lap100.md"
  exit 0
fi
grid=("$b/data/spd/activsg2000_hykkt_10.mtx" "$b/data/spd/opf_case10000_goc_kkt.mtx")
{
  gpu_tests test_cuda_fused test_fused_subtree_index test_cuda_factorize
  for v in STARFRONT_FUSED_LARGE=512x2 STARFRONT_FUSED_EARLY=0; do
    echo "### with $v:"
    export "${v?}"
    gpu_tests test_cuda_fused
    unset "${v%%=*}"
  done
} 2>&1 | tee "$out/tests.txt"
q=(--fused --repeat 30 --ncpu 16 --no-cholmod --no-cusolversp)
variants="old STARFRONT_FUSED_LARGE=512x2 STARFRONT_FUSED_EARLY=0"
{
  for round in 1 2 3; do
    for v in $variants; do
      g=$b/bin/gpu_bench e=$v
      [ "$v" = old ] && g=$old e=STARFRONT_OLD=1
      echo "### round $round $v: gpu_bench ${q[*]} (power-grid matrices)"
      env "$e" timeout 40 "$g" "${q[@]}" "${grid[@]}" 2>&1 | grep -E "^\| (activsg|opf)|gpu_bench: .*(fused GPU|error|fail)"
    done
  done
} 2>&1 | tee "$out/ab.md"
{
  for v in $variants; do
    g=$b/bin/gpu_bench e=$v
    [ "$v" = old ] && g=$old e=STARFRONT_OLD=1
    echo "### $v: STARFRONT_FUSED_TRACE=1 gpu_bench --fused --repeat 3 --ncpu 16 (power-grid matrices)"
    env "$e" STARFRONT_FUSED_TRACE=1 timeout 40 "$g" --fused --repeat 3 --ncpu 16 --no-cholmod \
      --no-cusolversp "${grid[@]}" 2>&1 | grep -E "fused trace|gpu_bench: .*fused GPU"
  done
} 2>&1 | tee "$out/trace.txt"
timeout 120 "$b/bin/gpu_bench" --fused --repeat 30 --ncpu 16 "$b"/data/spd/*.mtx lap2d:300 2>&1 |
  grep -v perf_model_add_dir | tee "$out/bench.md"
san=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null)
{
  for run in "racecheck 1138_bus" "memcheck 1138_bus" "memcheck bcsstk13"; do
    set -- $run
    echo "### compute-sanitizer --tool $1: gpu_bench --fused --repeat 1 $2"
    timeout 45 "$san" --tool "$1" "$b/bin/gpu_bench" --fused --repeat 1 --ncpu 4 --no-cholmod --no-cusolversp \
      "$b/data/spd/$2.mtx" 2>&1 | grep -E "ERROR SUMMARY|RACECHECK SUMMARY|Error|error|hazard|gpu_bench:" | head -20
    echo "exit ${PIPESTATUS[0]}"
  done
} 2>&1 | tee "$out/sanitizer.txt"
[ "${1:-}" = --no-large ] && exit 0
# Issue 5: the largest problem on one GPU against dense DPOTRF at its
# largest front's order, in the same process, twice in one StarPU home (the
# first run calibrates the performance models at this size): large.md.
{
  for run in calibration measured; do
    echo "### $run: gpu_bench --repeat 3 --ncpu 16 --no-cpu --no-cholmod --no-cusolversp --gpu-graph --tiles-on-gpu-only lap3d:100"
    timeout 200 "$b/bin/gpu_bench" --repeat 3 --ncpu 16 --no-cpu --no-cholmod --no-cusolversp --gpu-graph \
      --tiles-on-gpu-only lap3d:100 2>&1 | grep -v perf_model_add_dir
    echo "exit ${PIPESTATUS[0]}"
  done
} 2>&1 | tee "$out/large.md"
