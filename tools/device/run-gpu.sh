#!/usr/bin/env bash
# On the GPU machine (device run, carry .device; build and bundle here first:
# tools/setup.sh && tools/device/bundle.sh; run either tools/device/run-gpu.sh
# or the copy that bundle.sh puts beside the bundle): unpacks the bundle,
# runs the GPU tests (test_cuda_factorize with STARFRONT_REQUIRE_GPU=1: a
# skip is a failure there) and gpu_bench, and writes under $OUT:
#   env.txt        GPU, cores, the CUDA libraries the programs resolved
#   gpu_tests.txt  GoogleTest output
#   gpu_bench.md   the benchmark table (bench/README.md explains the columns)
# CUDA's own libraries come from the machine (/usr/local/cuda/lib64, else
# the pip nvidia-* packages of its python3). Usage:
#   bash tools/device/run-gpu.sh [INPUT...]   (default: the SPD matrices, lap3d:40:27, lap3d:50:27;
#                                              then lap3d:60:27 alone, one timed run, no CHOLMOD)
#   bash tools/device/run-gpu.sh --ldlt       (GPU LDLᵀ: test_cuda_ldlt, test_cuda_factorize,
#                                              ldlt_bench --gpu on kkt/*.mtx, indef3d:20, indef3d:30;
#                                              starfront solve --method ldlt --ncuda 1 on sqd_stcqp2;
#                                              ldlt_gpu_tests.txt, gpu_tests.txt, ldlt_gpu_bench.md/.log,
#                                              ldlt_cli.json)
#   bash tools/device/run-gpu.sh --variants   (GPU-run variants on lap3d 50^3 and 60^3:
#                                              tiles on the GPU only, pinned factor, dmdas,
#                                              tiles of 512; gpu_variants.md)
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
bundle=$here/bundle.tar.xz  # bundle.sh copies this script beside the bundle
[ -f "$bundle" ] || bundle=$here/../../.device/bundle.tar.xz
work=/tmp/starfront-bundle
rm -rf "$work" && mkdir -p "$work" && tar -C "$work" -xJf "$bundle" || exit 1
b=$work/bundle
out=${OUT:-/tmp}
export LD_LIBRARY_PATH=$b/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
if ldd "$b/bin/gpu_bench" | grep -q "not found"; then
  extra=$(python3 -c 'import glob, nvidia, os; print(":".join(sorted({os.path.dirname(p) for d in nvidia.__path__ for p in glob.glob(d + "/*/lib/lib*.so*")})))' 2>/dev/null)
  export LD_LIBRARY_PATH=$LD_LIBRARY_PATH:$extra
fi
export STARPU_SILENT=1 STARPU_HOME=$work
{
  nvidia-smi -L; nproc; uname -r
  ldd "$b/bin/gpu_bench" | grep -E "cu|nv|starpu|not found"
} 2>&1 | tee "$out/env.txt"
cores=$(nproc)
if [ "${1:-}" = "--ldlt" ]; then  # GPU LDLᵀ (issue 7): its tests, the GPU tests, ldlt_bench --gpu
  t=$b/bin/test_cuda_ldlt
  export STARFRONT_REQUIRE_GPU=1 STARFRONT_TEST_DATA_DIR=$b/data
  { timeout 15 "$t" --gtest_filter='CudaLdltPanel.*'; timeout 80 "$t" --gtest_filter='CudaLdlt.*'; } 2>&1 |
    grep -v perf_model_add_dir | tee "$out/ldlt_gpu_tests.txt"
  timeout 40 "$b/bin/test_cuda_factorize" 2>&1 | grep -v perf_model_add_dir | tee "$out/gpu_tests.txt"
  timeout 70 "$b/bin/ldlt_bench" --gpu --repeat 3 --ncpu "$cores" "$b"/data/kkt/*.mtx indef3d:20 indef3d:30 \
    2>"$out/ldlt_gpu_bench.log" | tee "$out/ldlt_gpu_bench.md"
  tail -n 30 "$out/ldlt_gpu_bench.log"
  timeout 20 "$b/bin/starfront" solve "$b/data/kkt/sqd_stcqp2.mtx" --method ldlt --ncuda 1 --sched dmda \
    --json >"$out/ldlt_cli.json" 2>&1
  cat "$out/ldlt_cli.json"
  exit 0
fi
STARFRONT_REQUIRE_GPU=1 timeout 150 "$b/bin/test_cuda_factorize" 2>&1 | grep -v perf_model_add_dir |
  tee "$out/gpu_tests.txt"
if [ "${1:-}" = "--variants" ]; then  # GPU-run variants on lap3d 50^3 and 60^3 (bench/README.md)
  m=(lap3d:50:27 lap3d:60:27)
  q=(--repeat 2 --ncpu "$cores" --no-cholmod --no-cusolversp)
  {
    timeout 60 "$b/bin/gpu_bench" "${q[@]}" --no-cpu --tiles-on-gpu-only "${m[@]}"
    STARFRONT_PIN_FACTOR=1 timeout 60 "$b/bin/gpu_bench" "${q[@]}" --no-cpu "${m[@]}"
    timeout 60 "$b/bin/gpu_bench" "${q[@]}" --no-cpu --sched dmdas "${m[@]}"
    timeout 80 "$b/bin/gpu_bench" "${q[@]}" --tile-size 512 --tile-threshold 1024 "${m[@]}"
    STARFRONT_PIN_FACTOR=1 timeout 60 "$b/bin/gpu_bench" "${q[@]}" --no-cpu --tiles-on-gpu-only --tile-size 512 --tile-threshold 1024 "${m[@]}"
  } 2>&1 | grep -v perf_model_add_dir | tee "$out/gpu_variants.md"
elif [ $# -gt 0 ]; then
  timeout 330 "$b/bin/gpu_bench" --repeat 3 --ncpu "$cores" "$@" 2>&1 | tee "$out/gpu_bench.md"
else
  timeout 240 "$b/bin/gpu_bench" --repeat 3 --ncpu "$cores" "$b"/data/spd/*.mtx lap3d:40:27 lap3d:50:27 2>&1 |
    grep -v perf_model_add_dir | tee "$out/gpu_bench.md"
  timeout 140 "$b/bin/gpu_bench" --repeat 1 --ncpu "$cores" --no-cholmod lap3d:60:27 2>&1 |
    grep -v perf_model_add_dir | tee -a "$out/gpu_bench.md"
fi
