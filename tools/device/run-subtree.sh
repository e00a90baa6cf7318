#!/usr/bin/env bash
# CPU subtree kernel on the GPU machine (issue 5): how fast the fused CPU
# subtrees run per core as the number of CPU workers grows, and the subtree
# kernel of this bundle (CBs placed once, never zeroed or moved) against an
# older gpu_bench on lap3d 60^3 with one GPU.
# Build and bundle here first (tools/setup.sh; STARFRONT_DEVICE_DIR=
# /work/main/.device/st tools/device/bundle.sh; put the older gpu_bench
# beside this script as gpu_bench_old), then
# run(command="bash .device/st/run-subtree.sh", carry=[".device/st"]).
# Every step has its own timeout. Writes under $OUT:
#   env.txt       GPUs, lscpu, OpenBLAS's kernel, CUDA libraries resolved
#   tests.txt     GPU test binaries with STARFRONT_REQUIRE_GPU=1
#   scaling.md    starfront solve lap3d 40^3 --gpu-graph, CPU only, 1..16
#                 workers, warm task log per run summarised by
#                 bench/task_log_summary.py (subtree GFLOP/s per core)
#   ab-lap60.md   old against new, alternating rounds: gpu_bench --repeat 3
#                 --ncpu 16 --no-cpu --no-cholmod --no-cusolversp --gpu-graph
#                 lap3d:60 lap3d:60:27; then new with a task log
#   log-*.csv     task logs
# With "hp" as first argument (run 4): transparent huge pages (an experiment
# not kept), CPU-only scaling with native kernels. With "blas" (run 5):
# bench/blas_scaling on 1..16 threads. With "baselines" (run 6): lap3d 60^3
# against CHOLMOD and csrchol alone in one call. With "sched" (run 8): StarPU
# schedulers on lap3d 60^3.
# With "native" as first argument (run 2): OpenBLAS's generic kernels against
# its native ones (the GPU machine's CPU, Intel model 207, is unknown to
# OpenBLAS 0.3.21, which then runs its "Prescott" kernels; codelets/cpu/
# blas_core.hpp): ab-native.md (old with OPENBLAS_CORETYPE=SkylakeX, new
# with STARFRONT_PERSISTENT_SLOTS=0, new, which sets the variable itself;
# alternating rounds), tasklog.md with log-native-lap60.csv and
# log-nohome-lap60.csv (new, and new without the persistent subtree slots),
# baselines.md (gpu_bench --repeat 3 --ncpu 16 --gpu-graph lap3d:60
# lap3d:60:27 with the CPU run, CHOLMOD and cusolverSp csrchol) and fused.md
# (gpu_bench --fused --repeat 30 --ncpu 16 on the SPD matrices and lap2d:300).
set -uo pipefail
# shellcheck source=tools/device/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" starfront-st
{
  lscpu; free -g
  OPENBLAS_VERBOSE=2 "$b/bin/starfront" solve --ncpu 1 2>&1 | grep -i core | head -3
  ldd "$b/bin/gpu_bench" | grep -E "blas"
} 2>&1 | tee -a "$out/env.txt"
case "${1:-}" in blas | baselines | sched) false ;; *) true ;; esac &&
  gpu_tests test_cuda_fused test_cuda_factorize test_cuda_front 2>&1 | tee "$out/tests.txt"
if [ "${1:-}" = sched ]; then
  # StarPU schedulers on lap3d 60^3 (7- and 27-point), 1 GPU + 15 CPU
  # workers, two rounds: sched.md.
  q=(--repeat 3 --ncpu 16 --no-cpu --no-cholmod --no-cusolversp --gpu-graph)
  {
    for round in 1 2; do
      for s in dmda dmdas dmdar dmdap modular-heft modular-heft-prio modular-dmdar heteroprio; do
        echo "### round $round --sched $s"
        timeout 45 "$b/bin/gpu_bench" "${q[@]}" --sched "$s" lap3d:60 lap3d:60:27 2>&1 |
          grep -E "gpu_bench: lap3d:60(:27)? GPU|gpu_bench: .*(error|unknown|failed)"
      done
    done
  } 2>&1 | tee "$out/sched.md"
  exit 0
fi
if [ "${1:-}" = baselines ]; then
  # lap3d 60^3 7-point against CHOLMOD (1 and 16 threads, native kernels) and
  # cusolverSp csrchol in one process: baselines-lap60.md.
  timeout 480 "$b/bin/gpu_bench" --repeat 2 --ncpu 16 --no-cpu --gpu-graph "${2:-lap3d:60}" 2>&1 |
    grep -v perf_model_add_dir | tee "$out/baselines-$(echo "${2:-lap3d:60}" | tr : _).md"
  exit 0
fi
if [ "${1:-}" = blas ]; then
  # Small-front BLAS calls and a memory sweep on 1..16 threads at once
  # (bench/blas_scaling.cpp), with OpenBLAS's native kernels: blas.md.
  timeout 120 "$b/bin/blas_scaling" --seconds 0.5 --threads 1,2,4,8,15,16 2>&1 | tee "$out/blas.md"
  exit 0
fi
if [ "${1:-}" = hp ]; then
  # Transparent huge pages for Lx and the subtree workspaces (codelets/cpu/
  # huge_pages.hpp): STARFRONT_HUGE_PAGES=0 against the default, alternating;
  # hp.md, log-hp{0,1}-lap60.csv, scaling-native.md.
  cat /sys/kernel/mm/transparent_hugepage/enabled /sys/kernel/mm/transparent_hugepage/defrag | tee -a "$out/env.txt"
  q=(--repeat 3 --ncpu 16 --no-cpu --no-cholmod --no-cusolversp --gpu-graph)
  {
    for round in 1 2 3; do
      for hp in 0 1; do
        echo; echo "### round $round STARFRONT_HUGE_PAGES=$hp: gpu_bench ${q[*]} lap3d:60 lap3d:60:27"
        STARFRONT_HUGE_PAGES=$hp timeout 60 "$b/bin/gpu_bench" "${q[@]}" lap3d:60 lap3d:60:27 2>&1 |
          grep -E "gpu_bench: lap3d:60(:27)? GPU"
      done
    done
    for hp in 0 1; do
      echo "### STARFRONT_HUGE_PAGES=$hp, task log"
      STARFRONT_HUGE_PAGES=$hp STARPU_PROFILING=1 STARFRONT_TASK_LOG=$out/log-hp$hp-lap60.csv timeout 60 \
        "$b/bin/gpu_bench" "${q[@]}" lap3d:60 2>&1 | grep -E "gpu_bench: lap3d:60 GPU"
      python3 "$repo/bench/task_log_summary.py" "$out/log-hp$hp-lap60.csv" 2>&1 | sed -n 1,8p
    done
  } 2>&1 | tee "$out/hp.md"
  "$b/bin/starfront" generate laplace3d 40 -o "$work/lap40.mtx"
  {
    for n in 1 4 15; do
      for hp in 0 1; do
        echo; echo "### CPU only (native kernels), $n workers, STARFRONT_HUGE_PAGES=$hp: starfront solve lap3d 40^3 --gpu-graph --ncpu $n --repeat 3"
        STARFRONT_HUGE_PAGES=$hp STARPU_PROFILING=1 STARFRONT_TASK_LOG=$work/log.csv timeout 60 \
          "$b/bin/starfront" solve "$work/lap40.mtx" --gpu-graph --ncpu "$n" --repeat 3 2>&1 | grep -E "factorisation|BLAS"
        python3 "$repo/bench/task_log_summary.py" "$work/log.csv" 2>&1 | grep -E "^\| (subtree|front) "
      done
    done
  } 2>&1 | tee "$out/scaling-native.md"
  exit 0
fi
if [ "${1:-}" = native ]; then
  old=$here/gpu_bench_old
  q=(--repeat 3 --ncpu 16 --no-cpu --no-cholmod --no-cusolversp --gpu-graph)
  {
    for round in 1 2; do
      for v in old-native new-no-home new; do
        g=$b/bin/gpu_bench
        e=(STARFRONT_NOTHING=1)
        [ "$v" = old-native ] && g=$old && e=(OPENBLAS_CORETYPE=SkylakeX)
        [ "$v" = new-no-home ] && e=(STARFRONT_PERSISTENT_SLOTS=0)
        echo; echo "### round $round $v (${e[*]}): gpu_bench ${q[*]} lap3d:60 lap3d:60:27"
        env "${e[@]}" timeout 60 "$g" "${q[@]}" lap3d:60 lap3d:60:27 2>&1 |
          grep -E "^\| lap3d|executor phases|gpu_bench: lap3d:60(:27)? GPU|CPU BLAS"
      done
    done
  } 2>&1 | tee "$out/ab-native.md"
  {
    echo "### new with a task log of the last factorisation (profiling on)"
    STARPU_PROFILING=1 STARFRONT_TASK_LOG=$out/log-native-lap60.csv timeout 60 "$b/bin/gpu_bench" "${q[@]}" lap3d:60 2>&1 |
      grep -E "^\| lap3d|gpu_bench: lap3d:60 GPU"
    python3 "$repo/bench/task_log_summary.py" "$out/log-native-lap60.csv" 2>&1 | sed -n 1,12p
    echo "### new, STARFRONT_PERSISTENT_SLOTS=0, with a task log"
    STARFRONT_PERSISTENT_SLOTS=0 STARPU_PROFILING=1 STARFRONT_TASK_LOG=$out/log-nohome-lap60.csv timeout 60 \
      "$b/bin/gpu_bench" "${q[@]}" lap3d:60 2>&1 | grep -E "^\| lap3d|gpu_bench: lap3d:60 GPU"
    python3 "$repo/bench/task_log_summary.py" "$out/log-nohome-lap60.csv" 2>&1 | sed -n 1,8p
  } 2>&1 | tee "$out/tasklog.md"
  timeout 150 "$b/bin/gpu_bench" --repeat 3 --ncpu 16 --gpu-graph lap3d:60 lap3d:60:27 2>&1 |
    grep -v perf_model_add_dir | tee "$out/baselines.md"
  timeout 120 "$b/bin/gpu_bench" --fused --repeat 30 --ncpu 16 "$b"/data/spd/*.mtx lap2d:300 2>&1 |
    grep -v perf_model_add_dir | tee "$out/fused.md"
  exit 0
fi
"$b/bin/starfront" generate laplace3d 40 -o "$work/lap40.mtx"
{
  for n in 1 2 4 8 16; do
    echo; echo "### CPU only, $n workers: starfront solve lap3d 40^3 --gpu-graph --ncpu $n --repeat 3 (task log of the last)"
    STARPU_PROFILING=1 STARFRONT_TASK_LOG=$out/log-scaling-$n.csv timeout 60 \
      "$b/bin/starfront" solve "$work/lap40.mtx" --gpu-graph --ncpu "$n" --repeat 3 2>&1 | grep -E "factor|error" | head -4
    python3 "$repo/bench/task_log_summary.py" "$out/log-scaling-$n.csv" 2>&1 | sed -n 1,8p
  done
} 2>&1 | tee "$out/scaling.md"
old=$here/gpu_bench_old
q=(--repeat 3 --ncpu 16 --no-cpu --no-cholmod --no-cusolversp --gpu-graph)
{
  for round in 1 2 3; do
    for v in old new; do
      g=$b/bin/gpu_bench
      [ "$v" = old ] && g=$old
      echo; echo "### round $round $v: gpu_bench ${q[*]} lap3d:60 lap3d:60:27"
      timeout 60 "$g" "${q[@]}" lap3d:60 lap3d:60:27 2>&1 | grep -E "^\| lap3d|executor phases|gpu_bench: lap3d:60(:27)? GPU"
    done
  done
  echo; echo "### new with a task log of the last factorisation (profiling on)"
  STARPU_PROFILING=1 STARFRONT_TASK_LOG=$out/log-new-lap60.csv timeout 60 "$b/bin/gpu_bench" "${q[@]}" lap3d:60 2>&1 |
    grep -E "^\| lap3d|gpu_bench: lap3d:60 GPU"
  python3 "$repo/bench/task_log_summary.py" "$out/log-new-lap60.csv" 2>&1 | sed -n 1,12p
} 2>&1 | tee "$out/ab-lap60.md"
