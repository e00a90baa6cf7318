#!/usr/bin/env bash
# On the GPU machine (device run, carry .device; build and bundle here first:
# tools/setup.sh && tools/device/bundle.sh): where the time of a GPU
# factorisation goes, and how it scales to several GPUs. Writes under $OUT:
#   env.txt           GPUs, cores, CUDA libraries resolved
#   stats-<m>.txt     `starfront solve --ncuda G --json` of 3D Laplacians with
#                     StarPU's worker and bus statistics (STARPU_WORKER_STATS,
#                     STARPU_BUS_STATS: time executing/sleeping/overhead per
#                     worker, bytes moved between memory nodes)
#   trace-<m>/        summary.txt of an FxT trace (`starfront trace summary`)
#   sweep.md          gpu_bench over tile sizes, then 1 GPU against all GPUs
# Usage: bash tools/device/run-profile.sh [N] (Laplacian order, default 60)
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
bundle=$here/bundle.tar.xz
[ -f "$bundle" ] || bundle=$here/../../.device/bundle.tar.xz
work=/tmp/starfront-bundle
rm -rf "$work" && mkdir -p "$work" && tar -C "$work" -xJf "$bundle" || exit 1
b=$work/bundle
out=${OUT:-/tmp}
N=${1:-60}
export LD_LIBRARY_PATH=$b/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export STARPU_SILENT=1 STARPU_HOME=$work STARFRONT_FXT_TOOL=$b/bin/starpu_fxt_tool
ngpu=$(nvidia-smi -L | wc -l)
cores=$(nproc)
per=$((cores / ngpu))  # the cores of one GPU's share of the host (16 on both kinds)
{ nvidia-smi -L; echo "cores $cores"; uname -r; ldd "$b/bin/starfront" | grep -E "cu|nv|starpu|not found"; } 2>&1 | tee "$out/env.txt"
sf=$b/bin/starfront
for st in 7 27; do
  "$sf" generate laplace3d "$N" --stencil "$st" -o "$work/lap$st.mtx" || exit 1
done
# Configurations of the GPU run: "ENV-ASSIGNMENTS|gpu_bench arguments" (env "-" for none)
# (default list below; PROFILE_CONFIGS overrides it, one configuration per line).
default_configs="-|--tile-size 512 --tile-threshold 1024 --tiles-on-gpu-only
-|--tile-size 512 --tile-threshold 256 --tiles-on-gpu-only
STARFRONT_PIN_FACTOR=0|--tile-size 512 --tile-threshold 256 --tiles-on-gpu-only
STARPU_NWORKER_PER_CUDA=2|--tile-size 512 --tile-threshold 256 --tiles-on-gpu-only
STARPU_NWORKER_PER_CUDA=4|--tile-size 512 --tile-threshold 256 --tiles-on-gpu-only
-|--tile-size 1024 --tile-threshold 256 --tiles-on-gpu-only
-|--tile-size 256 --tile-threshold 256 --tiles-on-gpu-only
-|--tile-size 512 --tile-threshold 256"
configs=${PROFILE_CONFIGS:-$default_configs}
# 1. StarPU's own statistics of one factorisation per stencil, 1 GPU (+ per-1 CPU workers),
#    the second configuration's graph
for st in 7 27; do
  STARPU_WORKER_STATS=1 STARPU_BUS_STATS=1 STARPU_PROFILING=1 timeout 120 "$sf" solve "$work/lap$st.mtx" \
    --ncuda 1 --ncpu $((per - 1)) --sched dmda --tiles-on-gpu-only --repeat 2 --tile-size 512 --tile-threshold 256 --json \
    >"$out/stats-lap$st.txt" 2>&1
done
# 2. an FxT trace of the 7-point factorisation (1 GPU), summarised
mkdir -p "$out/trace-lap7"
timeout 150 "$sf" solve "$work/lap7.mtx" --ncuda 1 --ncpu $((per - 1)) --sched dmda --tiles-on-gpu-only --tile-size 512 \
  --tile-threshold 256 --trace "$work/tr7" >"$out/trace-lap7/solve.txt" 2>&1
timeout 60 "$sf" trace summary "$work/tr7" >"$out/trace-lap7/summary.txt" 2>&1
cp "$work/tr7/plan.json" "$out/trace-lap7/" 2>/dev/null
# 3. the configurations on one GPU (gpu_bench: 1 analysis, median of 2 after a warm-up),
#    then the first line's arguments on every GPU of the host
m=(lap3d:"$N" lap3d:"$N":27)
run_config() {  # ENV ARGS...
  local e=$1; shift
  echo; echo "### env: $e; args: $*"
  if [ "$e" = "-" ]; then timeout 100 "$b/bin/gpu_bench" "$@" "${m[@]}"
  else env $e timeout 100 "$b/bin/gpu_bench" "$@" "${m[@]}"; fi
}
{
  while IFS='|' read -r e a; do
    [ -n "$a" ] || continue
    # shellcheck disable=SC2086
    run_config "$e" --repeat 2 --ncpu "$per" --no-cpu --no-cholmod --no-cusolversp $a
  done <<<"$configs"
  if [ "$ngpu" -gt 1 ]; then  # the whole host: 1 GPU, then all of them
    IFS='|' read -r e a <<<"$(printf '%s\n' "$configs" | sed -n 2p)"
    for g in 1 "$ngpu"; do
      # shellcheck disable=SC2086
      run_config "$e" --repeat 2 --ncpu "$cores" --ncuda "$g" --no-cpu --no-cholmod --no-cusolversp $a
    done
  fi
} 2>&1 | grep -v perf_model_add_dir | tee "$out/sweep.md"
