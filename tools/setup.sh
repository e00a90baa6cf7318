#!/usr/bin/env bash
# Sets everything up, idempotently: dependencies (apt packages, StarPU built
# from Debian's source package into a cached prefix), then configures and
# builds starfront in build/ (incremental after the first run).
# Environment: STARFRONT_BUILD_DIR (default build), STARFRONT_BUILD_TYPE
# (default Release), STARFRONT_CMAKE_ARGS (extra cmake arguments),
# STARFRONT_JOBS (default: number of cores).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
"$root/tools/deps/install-deps.sh"
build=${STARFRONT_BUILD_DIR:-build}
jobs=${STARFRONT_JOBS:-$(nproc)}
mkdir -p "$build"
# CMake caches the libraries pkg-config resolved through .deps/starpu's
# target: when the dependency script switched to another StarPU build (new
# cache key), configure afresh so that nothing links the old one.
starpu_now=$(readlink -f "$root/.deps/starpu" 2>/dev/null || true)
if [ -f "$build/CMakeCache.txt" ] && [ "$(cat "$build/.starpu-prefix" 2>/dev/null)" != "$starpu_now" ]; then
  echo "setup: StarPU is now $starpu_now: configuring $build afresh"
  rm -f "$build/CMakeCache.txt"
fi
echo "$starpu_now" >"$build/.starpu-prefix"
# shellcheck disable=SC2086
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE="${STARFRONT_BUILD_TYPE:-Release}" \
  ${STARFRONT_CMAKE_ARGS:-} >"$build/configure.log" 2>&1 \
  || { cat "$build/configure.log"; exit 1; }
cmake --build "$build" -j "$jobs" 2>&1 | { grep -vE '^\[ *[0-9]+%\]|^(Consolidate|Scanning)' || true; }
