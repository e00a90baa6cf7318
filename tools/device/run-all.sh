#!/usr/bin/env bash
# Everything a closing note needs from the GPU machine, in one device run
# (build and bundle here first: tools/setup.sh && tools/device/bundle.sh;
# then run(command="bash .device/run-all.sh", carry=[".device/bundle.tar.xz",
# ".device/run-all.sh"], kind nvidia-h200-x2 or nvidia-h200)). Writes under $OUT:
#   env.txt         GPUs, cores (lscpu), the CUDA libraries resolved
#   tests.txt       every GPU test binary with STARFRONT_REQUIRE_GPU=1 (a skip fails)
#   bench.md        gpu_bench on lap3d 60^3 7- and 27-point, the GPU graph
#                   (gpu_graph_options: fused subtrees, one front task per medium
#                   front, tiles of 2048 above 8192), dmda, 16 cores: 1 GPU + 15 CPU
#                   workers vs 16 CPU workers, dense POTRF ceiling, cusolverSp
#                   csrchol, CHOLMOD on 16 threads (7-point)
#   multigpu.md     the GPU graph on 1 and on every GPU, 16 cores in all, 60^3
#   large.md        the largest 3D problem of the run (lap3d 100^3 7-point, fronts
#                   above 8192 tiled) on 1 and on every GPU, dense POTRF ceiling
#   fused.md        gpu_bench --fused on the power-grid SPD matrices
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
bundle=$here/bundle.tar.xz
[ -f "$bundle" ] || bundle=$here/../../.device/bundle.tar.xz
work=/tmp/starfront-all
rm -rf "$work" && mkdir -p "$work" && tar -C "$work" -xJf "$bundle" || exit 1
b=$work/bundle
out=${OUT:-/tmp}
export LD_LIBRARY_PATH=$b/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export STARPU_SILENT=1 STARPU_HOME=$work STARFRONT_DATA_DIR=$b/data STARFRONT_TEST_DATA_DIR=$b/data
ngpu=$(nvidia-smi -L | wc -l)
{ nvidia-smi -L; lscpu | grep -E "^CPU\(s\)|Thread|Core|Socket|NUMA node"; uname -r
  ldd "$b/bin/gpu_bench" | grep -E "cu|nv|starpu|not found"; } 2>&1 | tee "$out/env.txt"
{
  for t in test_cuda_front test_cuda_factorize test_cuda_fused test_fused_subtree_index test_cuda_ldlt; do
    echo "### $t"
    STARFRONT_REQUIRE_GPU=1 timeout 60 "$b/bin/$t" 2>&1 | grep -E "^\[ *(OK|FAILED|PASSED|SKIPPED) |tests ran|FAILED TEST|Failure|error" 
    echo "exit ${PIPESTATUS[0]}"
  done
} 2>&1 | tee "$out/tests.txt"
g=(--gpu-graph)
q=(--no-cpu --no-cholmod --no-cusolversp)
{
  timeout 120 "$b/bin/gpu_bench" --repeat 3 --ncpu 16 --cholmod-threads 16 "${g[@]}" lap3d:60 2>&1
  timeout 60 "$b/bin/gpu_bench" --repeat 3 --ncpu 16 --no-cholmod "${g[@]}" lap3d:60:27 2>&1
} | grep -v perf_model_add_dir | tee "$out/bench.md"
if [ "$ngpu" -gt 1 ]; then
  for n in 1 "$ngpu"; do
    timeout 40 "$b/bin/gpu_bench" --repeat 3 --ncpu 16 --ncuda "$n" "${q[@]}" "${g[@]}" lap3d:60 lap3d:60:27 2>&1
  done | grep -v perf_model_add_dir | tee "$out/multigpu.md"
fi
gpus=(1)
[ "$ngpu" -gt 1 ] && gpus+=("$ngpu")
for n in "${gpus[@]}"; do
  timeout 75 "$b/bin/gpu_bench" --repeat 2 --ncpu 16 --ncuda "$n" "${q[@]}" "${g[@]}" lap3d:100 2>&1
done | grep -v perf_model_add_dir | tee "$out/large.md"
timeout 60 "$b/bin/gpu_bench" --fused --repeat 20 --ncpu 16 "$b"/data/spd/activsg2000_hykkt_10.mtx \
  "$b"/data/spd/opf_case10000_goc_kkt.mtx 2>&1 | grep -v perf_model_add_dir | tee "$out/fused.md"
