#!/usr/bin/env bash
# Bundles what the benchmarks and GPU tests need to run on the GPU machine
# (Ubuntu 24.04, CUDA 13, driver 580, nothing installable there): the built
# programs (factor_bench, cholmod_stats, starfront; with CUDA also gpu_bench,
# gpu_blas_bench, gpu_latency_bench, ldlt_bench and the GPU tests test_cuda_factorize, test_cuda_blas, test_cuda_fused,
# test_fused_subtree_index, test_cuda_ldlt, test_cuda_front, test_gpu_assembly_index), the non-system shared libraries
# they load (StarPU, hwloc, FxT, Scotch, OpenBLAS/LAPACK, CHOLMOD and its
# SuiteSparse siblings, libgfortran...; not glibc, libstdc++ or CUDA: cuBLAS,
# cuSOLVER, cuSPARSE and cudart are 50-500 MiB each, over the 64 MiB carry
# limit, and that machine's /usr/local/cuda/lib64 has them), the SPD and
# KKT test matrices and the device scripts, into .device/bundle.tar.xz
# (ignored by git; name `.device` in the run's carry).
# When starfront links MPI (STARFRONT_MPI), Open MPI too, since the GPU
# machine has none: orterun (as mpirun) and orted in bundle/mpi/bin, the MCA
# plugins in bundle/mpi/lib/x86_64-linux-gnu/openmpi/lib/openmpi3 (Debian's
# layout under the prefix; plugins that need network stacks absent there,
# UCX, libfabric, verbs, PSM, are left out: runs use --mca btl self,vader),
# the help files in bundle/mpi/share/openmpi, and the libraries they load in
# bundle/lib, PMIx's library (libpmix.so.2) goes to bundle/lib; its
# plugins (compression, resource manager) are optional and stay behind (its
# plugin path is compiled in). Debian 12's Open MPI 4.1 relocates with OPAL_PREFIX=bundle/mpi
# (run-mpi.sh sets it; sysconfdir /etc/openmpi is absolute and is not
# carried: its defaults are given as --mca options instead). Checked here with
# a scrubbed environment and Debian's Open MPI, PMIx and hwloc plugin and data
# folders hidden (unshare -m, tmpfs over each): mpirun -np 2 starfront solve
# ran, and strace showed every MPI library and plugin opened from the bundle.
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
for p in "$build/bench/gpu_bench" "$build/bench/gpu_blas_bench" "$build/bench/gpu_latency_bench" "$build/bench/ldlt_bench" \
         "$build/bench/blas_scaling" "$build/bench/subtree_bench" \
         "$build/tests/cuda/test_cuda_factorize" "$build/tests/cuda/test_cuda_blas" \
         "$build/tests/cuda/test_cuda_fused" "$build/tests/cuda/test_fused_subtree_index" \
         "$build/tests/cuda/test_cuda_ldlt" "$build/tests/cuda/test_cuda_front" \
         "$build/tests/cuda/test_gpu_assembly_index"; do
  [ -x "$p" ] && progs+=("$p")
done
cp "${progs[@]}" "$out/bundle/bin/"
# hwmem: the memory hwloc reports (StarPU's main-memory cap is 90% of it)
cc -O2 "$root/tools/device/hwmem.c" -o "$out/bundle/bin/hwmem" -lhwloc && progs+=("$out/bundle/bin/hwmem")
# StarPU's trace converter, for `starfront solve --trace` there (STARFRONT_FXT_TOOL)
fxt_tool=$(pkg-config --variable=prefix starpu-1.4 2>/dev/null || true)/bin/starpu_fxt_tool
[ -x "$fxt_tool" ] || fxt_tool=$root/.deps/starpu/bin/starpu_fxt_tool
[ -x "$fxt_tool" ] && { cp "$fxt_tool" "$out/bundle/bin/"; progs+=("$fxt_tool"); }
if ldd "$build/tools/starfront" | grep 'libmpi\.so' >/dev/null; then  # not -q: with pipefail, ldd's SIGPIPE would fail the test
  m=$out/bundle/mpi
  pkglib=/usr/lib/x86_64-linux-gnu/openmpi/lib/openmpi3
  mkdir -p "$m/bin" "$m/lib/x86_64-linux-gnu/openmpi/lib/openmpi3" "$m/share"
  cp -L "$(command -v orterun)" "$m/bin/orterun"
  cp -L "$(command -v orted)" "$m/bin/orted"
  ln -s orterun "$m/bin/mpirun"
  ln -s orterun "$m/bin/mpiexec"
  cp -r /usr/share/openmpi "$m/share/"
  for so in "$pkglib"/*.so; do
    ldd "$so" | grep -qE 'not found|libucp|libuct|libucs|libucm|libfabric|libibverbs|librdmacm|libpsm|libjvm' ||
      cp "$so" "$m/lib/x86_64-linux-gnu/openmpi/lib/openmpi3/"
  done
  progs+=("$m/bin/orterun" "$m/bin/orted" "$m"/lib/x86_64-linux-gnu/openmpi/lib/openmpi3/*.so)
  cp "$root/tools/device/gpu-per-rank.sh" "$out/bundle/bin/"
fi
for p in "${progs[@]}"; do ldd "$p"; done | awk '$3 ~ /^\// {print $3}' | sort -u |
  grep -vE '/(libc|libm|libpthread|libdl|librt|libstdc\+\+|libgcc_s|ld-linux[^/]*)\.so|cuda|/libcu|/libnv' |
  while read -r lib; do cp -L "$lib" "$out/bundle/lib/"; done
strip --strip-unneeded "$out/bundle/lib/"libstarpu* "$out/bundle/bin/"* 2>/dev/null || true
cp -r "$root/../shared/data/spd" "$root/../shared/data/kkt" "$out/bundle/data/"
cp "$root"/tools/device/run-*.sh "$root"/tools/device/common.sh "$out/bundle/"
cp "$root"/tools/device/run-*.sh "$root"/tools/device/common.sh "$out/"  # runnable beside the bundle, whatever checkout travels
tar -C "$out" -cJf "$out/bundle.tar.xz" bundle
rm -rf "$out/bundle"
du -h "$out/bundle.tar.xz"
