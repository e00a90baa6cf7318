#!/usr/bin/env bash
# Installs everything starfront needs on Debian 12 (bookworm), idempotently:
#   1. Debian packages (apt): compilers' helpers, Scotch, hwloc, OpenBLAS/LAPACKE,
#      FxT, GoogleTest, CLI11, nlohmann-json, fmt, SuiteSparse (comparisons),
#      Open MPI (libopenmpi-dev, openmpi-bin: StarPU-MPI and mpirun).
#   2. StarPU 1.4.10 built from Debian's source package starpu 1.4.10+dfsg-2,
#      with StarPU-MPI, into a cached prefix keyed by version, patches and
#      flags (tools/deps/starpu.sh).
# Re-running it is cheap: apt skips installed packages (and is not even called
# when every package is present) and the StarPU prefix is reused.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

pkgs=(build-essential cmake pkg-config dpkg-dev ca-certificates
      libscotch-dev libhwloc-dev libopenblas-dev liblapacke-dev
      libfxt-dev libgtest-dev libgmock-dev libcli11-dev nlohmann-json3-dev
      libfmt-dev libsuitesparse-dev gnuplot-nox
      autoconf automake libtool clang libclang-rt-14-dev
      libopenmpi-dev openmpi-bin)

missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "[deps] apt-get install ${missing[*]}"
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

"$here/starpu.sh"
