#!/usr/bin/env bash
# Issue 5 (branch issue5-async): GPU Cholesky fronts without a host
# synchronisation (pivot test on the device, checked after the graph),
# measured against the synchronous fronts in the same call
# (STARFRONT_DEFER_PIVOTS=0), with StarPU's worker/bus statistics and an FxT
# trace of lap3d 60^3 on 1 GPU. Build and bundle first
# (tools/setup.sh; STARFRONT_DEVICE_DIR=/work/main/.device/h5b tools/device/bundle.sh;
# cp tools/device/run-h5b.sh /work/main/.device/h5b/), then
# run(command="bash .device/h5b/run-h5b.sh [profile|final]", carry=[".device/h5b"]).
# Writes under $OUT:
#   env.txt        GPUs, cores, CUDA libraries resolved
#   tests.txt      GPU tests with STARFRONT_REQUIRE_GPU=1 (profile: test_cuda_front and
#                  test_cuda_factorize; final: every GPU test binary)
#   profile: stats.txt (solve --json with STARPU_WORKER_STATS / STARPU_BUS_STATS, sync
#            then deferred), trace.txt (trace summary, deferred), ab.md (gpu_bench old vs
#            new vs new without early write-back), sweep.md (subtree limit, CPU workers)
#   final:   bench.md (lap3d 60^3: old vs new, streams per GPU, private CB slots, 1 vs 2 GPUs),
#            large.md (lap3d 100^3, 1 and 2 GPUs, old vs new), baselines.md (CPU, CHOLMOD, csrchol)
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
mode=${1:-profile}
work=/tmp/starfront-h5b
rm -rf "$work" && mkdir -p "$work" && tar -C "$work" -xJf "$here/bundle.tar.xz" || exit 1
b=$work/bundle
out=${OUT:-/tmp}
export LD_LIBRARY_PATH=$b/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export STARPU_SILENT=1 STARPU_HOME=$work STARFRONT_FXT_TOOL=$b/bin/starpu_fxt_tool
export STARFRONT_DATA_DIR=$b/data STARFRONT_TEST_DATA_DIR=$b/data
ngpu=$(nvidia-smi -L | wc -l)
{ nvidia-smi -L; nproc; ldd "$b/bin/gpu_bench" | grep -E "cu|nv|starpu|not found"; } 2>&1 | tee "$out/env.txt"
gb() {  # label, timeout, env (or -), gpu_bench arguments...
  local label=$1 t=$2 e=$3
  shift 3
  echo; echo "### $label: env $e; gpu_bench $*"
  if [ "$e" = "-" ]; then timeout "$t" "$b/bin/gpu_bench" "$@" 2>&1 | grep -v perf_model_add_dir
  else env $e timeout "$t" "$b/bin/gpu_bench" "$@" 2>&1 | grep -v perf_model_add_dir; fi
  echo "exit ${PIPESTATUS[0]}"
}
q=(--no-cpu --no-cholmod --no-cusolversp --gpu-graph)
if [ "$mode" = profile ]; then
  tests=(test_cuda_front test_cuda_factorize)
else
  tests=(test_cuda_front test_cuda_factorize test_cuda_fused test_fused_subtree_index test_cuda_ldlt)
fi
{
  for t in "${tests[@]}"; do
    echo "### $t"
    STARFRONT_REQUIRE_GPU=1 timeout 90 "$b/bin/$t" 2>&1 | grep -E "^\[ *(OK|FAILED|PASSED|SKIPPED|RUN) |^\[ .*(pair|tiny|pivot)|tests ran|FAILED TEST|Failure|error|Expected|Which is|actual"
    echo "exit ${PIPESTATUS[0]}"
  done
} 2>&1 | tee "$out/tests.txt"
if [ "$mode" = profile ]; then
  "$b/bin/starfront" generate laplace3d 60 --stencil 7 -o "$work/lap7.mtx" || exit 1
  {
    for d in 0 1; do
      echo "### STARFRONT_DEFER_PIVOTS=$d: starfront solve lap3d 60^3 7-pt --ncuda 1 --ncpu 15 --sched dmda --gpu-graph --repeat 3 --json"
      STARFRONT_DEFER_PIVOTS=$d STARPU_WORKER_STATS=1 STARPU_BUS_STATS=1 STARPU_PROFILING=1 timeout 60 \
        "$b/bin/starfront" solve "$work/lap7.mtx" --ncuda 1 --ncpu 15 --sched dmda --gpu-graph --repeat 3 --json 2>&1
      echo "exit $?"
    done
  } >"$out/stats.txt" 2>&1
  {
    echo "### deferred: starfront solve lap3d 60^3 7-pt --ncuda 1 --ncpu 15 --sched dmda --gpu-graph --trace"
    timeout 60 "$b/bin/starfront" solve "$work/lap7.mtx" --ncuda 1 --ncpu 15 --sched dmda --gpu-graph --trace "$work/tr7" 2>&1 | tail -5
    timeout 60 "$b/bin/starfront" trace summary "$work/tr7" 2>&1
  } >"$out/trace.txt" 2>&1
  {
    gb "old: synchronous GPU fronts" 60 STARFRONT_DEFER_PIVOTS=0 --repeat 3 --ncpu 16 "${q[@]}" lap3d:60 lap3d:60:27
    gb "new: deferred pivot tests" 60 - --repeat 3 --ncpu 16 "${q[@]}" lap3d:60 lap3d:60:27
    gb "new, no early write-back" 60 STARFRONT_EARLY_WRITEBACK=0 --repeat 3 --ncpu 16 "${q[@]}" lap3d:60 lap3d:60:27
  } 2>&1 | tee "$out/ab.md"
  {
    for f in 400 800; do
      gb "new, subtrees <= $f" 50 - --repeat 3 --ncpu 16 "${q[@]}" --max-subtree-front "$f" lap3d:60 lap3d:60:27
    done
    for c in 8 24; do
      gb "new, $c cores (1 GPU + $((c - 1)) CPU workers)" 50 - --repeat 3 --ncpu "$c" "${q[@]}" lap3d:60 lap3d:60:27
    done
  } 2>&1 | tee "$out/sweep.md"
else
  # Priority order: every step has its own timeout, so the call ends within 300 s.
  {
    gb "old: sync fronts, 1 GPU, 1 stream" 40 STARFRONT_DEFER_PIVOTS=0 --repeat 3 --ncpu 16 --ncuda 1 "${q[@]}" lap3d:60 lap3d:60:27
    gb "new: deferred, 1 GPU, 1 stream" 40 - --repeat 3 --ncpu 16 --ncuda 1 "${q[@]}" lap3d:60 lap3d:60:27
    gb "old: sync fronts, 1 GPU, 2 streams" 40 "STARFRONT_DEFER_PIVOTS=0 STARPU_NWORKER_PER_CUDA=2" --repeat 3 --ncpu 16 --ncuda 1 "${q[@]}" lap3d:60 lap3d:60:27
    gb "new: deferred, 1 GPU, 2 streams" 40 STARPU_NWORKER_PER_CUDA=2 --repeat 3 --ncpu 16 --ncuda 1 "${q[@]}" lap3d:60 lap3d:60:27
    gb "new: deferred, 1 GPU, 4 streams" 40 STARPU_NWORKER_PER_CUDA=4 --repeat 3 --ncpu 16 --ncuda 1 "${q[@]}" lap3d:60 lap3d:60:27
    gb "new: deferred, 1 GPU, 1 stream, private CB slots" 40 - --repeat 3 --ncpu 16 --ncuda 1 "${q[@]}" --private-slots lap3d:60 lap3d:60:27
    gb "old: sync fronts, $ngpu GPUs" 40 STARFRONT_DEFER_PIVOTS=0 --repeat 3 --ncpu 16 --ncuda "$ngpu" "${q[@]}" lap3d:60 lap3d:60:27
    gb "new: deferred, $ngpu GPUs, 1 stream each" 40 - --repeat 3 --ncpu 16 --ncuda "$ngpu" "${q[@]}" lap3d:60 lap3d:60:27
    gb "new: deferred, $ngpu GPUs, 4 streams each" 40 STARPU_NWORKER_PER_CUDA=4 --repeat 3 --ncpu 16 --ncuda "$ngpu" "${q[@]}" lap3d:60 lap3d:60:27
  } 2>&1 | tee "$out/bench.md"
  {
    gb "new: deferred, lap3d 100^3, 1 GPU, tiles on the GPU, 4 streams" 45 STARPU_NWORKER_PER_CUDA=4 --repeat 2 --ncpu 16 --ncuda 1 "${q[@]}" --tiles-on-gpu-only lap3d:100
    gb "old: sync, lap3d 100^3, $ngpu GPUs, tiles on the GPUs" 45 STARFRONT_DEFER_PIVOTS=0 --repeat 2 --ncpu 16 --ncuda "$ngpu" "${q[@]}" --tiles-on-gpu-only lap3d:100
    gb "new: deferred, lap3d 100^3, $ngpu GPUs, tiles on the GPUs, 4 streams each" 45 STARPU_NWORKER_PER_CUDA=4 --repeat 2 --ncpu 16 --ncuda "$ngpu" "${q[@]}" --tiles-on-gpu-only lap3d:100
  } 2>&1 | tee "$out/large.md"
  gb "new, 1 GPU, with baselines (7-point)" 60 - --repeat 3 --ncpu 16 --ncuda 1 --cholmod-threads 16 --gpu-graph lap3d:60 2>&1 | tee "$out/baselines.md"
fi
