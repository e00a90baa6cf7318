#!/usr/bin/env bash
# Bundles what the benchmarks need to run on the GPU machine (Ubuntu 24.04,
# CUDA 13, nothing installable there): the built programs, the non-system
# shared libraries they load (StarPU, hwloc, FxT, Scotch, OpenBLAS/LAPACK,
# CHOLMOD and its SuiteSparse siblings, libgfortran...; not glibc, libstdc++
# or CUDA, which that machine has), and the SPD test matrices, into
# .device/bundle.tar.xz (ignored by git; name `.device` in the run's carry).
# Run tools/setup.sh first. Usage: tools/device/bundle.sh
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=${STARFRONT_BUILD_DIR:-$root/build}
out=$root/.device
rm -rf "$out/bundle" && mkdir -p "$out/bundle/bin" "$out/bundle/lib" "$out/bundle/data"
mkdir -p "$root/.git/info"; grep -qx "/.device/" "$root/.git/info/exclude" 2>/dev/null || echo "/.device/" >>"$root/.git/info/exclude"
progs=("$build/bench/factor_bench" "$build/bench/cholmod_stats" "$build/tools/starfront")
cp "${progs[@]}" "$out/bundle/bin/"
for p in "${progs[@]}"; do ldd "$p"; done | awk '$3 ~ /^\// {print $3}' | sort -u |
  grep -vE '/(libc|libm|libpthread|libdl|librt|libstdc\+\+|libgcc_s|ld-linux[^/]*)\.so|cuda|/libcu|/libnv' |
  while read -r lib; do cp -L "$lib" "$out/bundle/lib/"; done
strip --strip-unneeded "$out/bundle/lib/"libstarpu* 2>/dev/null || true
cp -r "$root/../shared/data/spd" "$out/bundle/data/"
cp "$root/tools/device/run-bench.sh" "$out/bundle/"
tar -C "$out" -cJf "$out/bundle.tar.xz" bundle
rm -rf "$out/bundle"
du -h "$out/bundle.tar.xz"
