#!/usr/bin/env bash
# Issue 5, second look at the GPU graph (after run-all.sh): the largest 3D
# problem (lap3d 100^3 7-point, fronts above 8192 tiled in tiles of 2048) on
# 1 GPU with dmda placing the tile tasks, on 1 GPU with the tile tasks on the
# GPU only, and on every GPU with the tiles on the GPUs only; then lap3d 60^3
# with the CPU-only run on the default graph. Build and bundle first
# (tools/setup.sh && tools/device/bundle.sh), then run(command="bash
# .device/run-large.sh", carry=[".device/bundle.tar.xz", ".device/run-large.sh"],
# kind nvidia-h200-x2). Writes large.md, cpu.md and env.txt under $OUT.
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
bundle=$here/bundle.tar.xz
[ -f "$bundle" ] || bundle=$here/../../.device/bundle.tar.xz
work=/tmp/starfront-large
rm -rf "$work" && mkdir -p "$work" && tar -C "$work" -xJf "$bundle" || exit 1
b=$work/bundle
out=${OUT:-/tmp}
export LD_LIBRARY_PATH=$b/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export STARPU_SILENT=1 STARPU_HOME=$work
ngpu=$(nvidia-smi -L | wc -l)
{ nvidia-smi -L; nproc; } 2>&1 | tee "$out/env.txt"
q=(--no-cpu --no-cholmod --no-cusolversp --gpu-graph --ncpu 16)
bench() {  # label, timeout, gpu_bench arguments...
  local label=$1 t=$2
  shift 2
  echo "### $label: gpu_bench $*"
  timeout "$t" "$b/bin/gpu_bench" "$@" 2>&1 | grep -v perf_model_add_dir
  echo "exit ${PIPESTATUS[0]}"
}
{
  bench "1 GPU + 15 CPU, dmda places the tiles" 70 --repeat 2 "${q[@]}" --ncuda 1 lap3d:100
  bench "1 GPU + 15 CPU, tiles on the GPU only" 70 --repeat 2 "${q[@]}" --ncuda 1 --tiles-on-gpu-only lap3d:100
  bench "$ngpu GPUs + $((16 - ngpu)) CPU, tiles on the GPUs only" 60 --repeat 2 "${q[@]}" --ncuda "$ngpu" --tiles-on-gpu-only lap3d:100
} 2>&1 | tee "$out/large.md"
bench "1 GPU + 15 CPU vs 16 CPU workers on the default graph" 60 --repeat 3 --ncpu 16 --no-cholmod --no-cusolversp \
  --gpu-graph lap3d:60 lap3d:60:27 2>&1 | tee "$out/cpu.md"
