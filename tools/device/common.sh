# shellcheck shell=bash
# Sourced by the device scripts (tools/device/run-*.sh): unpacks the bundle
# that lies beside the calling script into a fresh work folder and sets the
# environment the bundled programs need there.
# In: $1 the work folder's name under /tmp. Out: here (the calling script's
# folder), work, b (the unpacked bundle), out ($OUT, or /tmp), repo (the
# checkout's root, the current folder of a device run), and
# LD_LIBRARY_PATH, STARPU_SILENT, STARPU_HOME, STARFRONT_DATA_DIR,
# STARFRONT_TEST_DATA_DIR exported. Writes env.txt under $out (GPUs, cores,
# the CUDA and StarPU libraries resolved). Exits 1 if the bundle is missing.
here=$(cd "$(dirname "${BASH_SOURCE[1]}")" && pwd)
# shellcheck disable=SC2034  # repo: used by the scripts that source this file
repo=$(pwd)
work=/tmp/$1
rm -rf "$work" && mkdir -p "$work" && tar -C "$work" -xJf "$here/bundle.tar.xz" || exit 1
b=$work/bundle
out=${OUT:-/tmp}
export LD_LIBRARY_PATH=$b/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export STARPU_SILENT=1 STARPU_HOME=$work STARFRONT_DATA_DIR=$b/data STARFRONT_TEST_DATA_DIR=$b/data
{ date -u; nvidia-smi -L; nproc; uname -r; grep MemTotal /proc/meminfo; ldd "$b/bin/gpu_bench" | grep -E "cu|nv|starpu|not found"; } 2>&1 |
  tee "$out/env.txt"

# gpu_tests [-e REGEX] TEST...: runs each GPU test binary (a bundled one by
# name, or a path) with STARFRONT_REQUIRE_GPU=1 (100 s at most each),
# printing its result and failure lines (and those matching REGEX) and its
# exit status.
gpu_tests() {
  local extra='^$' t
  [ "${1:-}" = -e ] && extra=$2 && shift 2
  for t in "$@"; do
    echo "### ${t##*/}"
    [[ $t == */* ]] || t=$b/bin/$t
    STARFRONT_REQUIRE_GPU=1 timeout 100 "$t" 2>&1 |
      grep -E "^\[ *(OK|FAILED|PASSED|SKIPPED) |tests ran|FAILED TEST|Failure|Expected|Which is|actual|$extra"
    echo "exit ${PIPESTATUS[0]}"
  done
}
