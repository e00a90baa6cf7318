#!/usr/bin/env bash
# Bundles what the benchmarks and GPU tests need to run on the GPU machine
# (Ubuntu 24.04, CUDA 13, driver 580, nothing installable there): the built
# programs (factor_bench, cholmod_stats, starfront; with CUDA also gpu_bench,
# ldlt_bench and the GPU tests test_cuda_factorize, test_cuda_fused,
# test_fused_subtree_index, test_cuda_ldlt, test_cuda_front), the non-system shared libraries
# they load (StarPU, hwloc, FxT, Scotch, OpenBLAS/LAPACK, CHOLMOD and its
# SuiteSparse siblings, libgfortran...; not glibc, libstdc++ or CUDA: cuBLAS,
# cuSOLVER, cuSPARSE and cudart are 50-500 MiB each, over the 64 MiB carry
# limit, and that machine's /usr/local/cuda/lib64 has them), the SPD and
# KKT test matrices and the device scripts, into .device/bundle.tar.xz
# (ignored by git; name `.device` in the run's carry).
# STARFRONT_DEVICE_DIR: another output folder (it must be ignored by git, e.g.
# build-device/, when it is to travel in a device run's carry).
# Run tools/setup.sh first. Usage: tools/device/bundle.sh
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=${STARFRONT_BUILD_DIR:-$root/build}
out=${STARFRONT_DEVICE_DIR:-$root/.device}
rm -rf "$out/bundle" && mkdir -p "$out/bundle/bin" "$out/bundle/lib" "$out/bundle/data"
exclude=$(git -C "$root" rev-parse --git-path info/exclude)  # works in a worktree too
[ -n "${STARFRONT_DEVICE_DIR:-}" ] || { mkdir -p "$(dirname "$exclude")"; grep -qx "/.device/" "$exclude" 2>/dev/null || echo "/.device/" >>"$exclude"; }
progs=("$build/bench/factor_bench" "$build/bench/cholmod_stats" "$build/tools/starfront")
for p in "$build/bench/gpu_bench" "$build/bench/ldlt_bench" "$build/tests/cuda/test_cuda_factorize" \
         "$build/tests/cuda/test_cuda_fused" "$build/tests/cuda/test_fused_subtree_index" \
         "$build/tests/cuda/test_cuda_ldlt" "$build/tests/cuda/test_cuda_front"; do
  [ -x "$p" ] && progs+=("$p")
done
cp "${progs[@]}" "$out/bundle/bin/"
# StarPU's trace converter, for `starfront solve --trace` there (STARFRONT_FXT_TOOL)
fxt_tool=$(pkg-config --variable=prefix starpu-1.4 2>/dev/null || true)/bin/starpu_fxt_tool
[ -x "$fxt_tool" ] || fxt_tool=$root/.deps/starpu/bin/starpu_fxt_tool
[ -x "$fxt_tool" ] && { cp "$fxt_tool" "$out/bundle/bin/"; progs+=("$fxt_tool"); }
for p in "${progs[@]}"; do ldd "$p"; done | awk '$3 ~ /^\// {print $3}' | sort -u |
  grep -vE '/(libc|libm|libpthread|libdl|librt|libstdc\+\+|libgcc_s|ld-linux[^/]*)\.so|cuda|/libcu|/libnv' |
  while read -r lib; do cp -L "$lib" "$out/bundle/lib/"; done
strip --strip-unneeded "$out/bundle/lib/"libstarpu* "$out/bundle/bin/"* 2>/dev/null || true
cp -r "$root/../shared/data/spd" "$root/../shared/data/kkt" "$out/bundle/data/"
cp "$root"/tools/device/run-*.sh "$out/bundle/"
cp "$root"/tools/device/run-*.sh "$out/"  # runnable beside the bundle, whatever checkout travels
tar -C "$out" -cJf "$out/bundle.tar.xz" bundle
rm -rf "$out/bundle"
du -h "$out/bundle.tar.xz"
