#!/usr/bin/env bash
# Builds StarPU 1.4.10 from Debian's source package (starpu 1.4.10+dfsg-2) into
# a cached prefix $STARFRONT_DEPS_DIR/starpu-1.4.10-<key> (default
# STARFRONT_DEPS_DIR: ~/.cache/starfront/deps, shared by every clone on the
# machine; <key> hashes the patch and the configure flags), and links
# <repo>/.deps/starpu (ignored by git) to it.
# Configured shared only, with FxT, --enable-maxcpus=64, --enable-maxcudadev=8,
# CUDA when nvcc is found (CUDA_HOME, default /usr/local/cuda), and StarPU-MPI
# (libstarpumpi-1.4) when Open MPI's mpicc is found (MPICC, default mpicc; the
# package libopenmpi-dev, installed by install-deps.sh). A build without MPI
# has its own key, so both can live side by side in the cache.
# Every patches/*.sh is applied (in name order) to a fresh source tree per key:
# starpu-cuda13-computemode.sh (CUDA 13 removed cudaDeviceProp::computeMode:
# StarPU's two uses become cudaDeviceGetAttribute(cudaDevAttrComputeMode));
# starpu-fxt-string-overflow.sh (starpu_fxt_tool's stack overflow on tasks
# with many data handles).
# Prints nothing and exits 0 when the prefix is already complete.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
deps=${STARFRONT_DEPS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/starfront/deps}
version=1.4.10
debver=1.4.10+dfsg-2
patches=("$here"/patches/*.sh)
cuda_home=${CUDA_HOME:-/usr/local/cuda}
with_cuda=no; [ -x "$cuda_home/bin/nvcc" ] && with_cuda=yes
mpicc=${MPICC:-mpicc}
with_mpi=no; mpicc_path=$(command -v "$mpicc" || true); [ -n "$mpicc_path" ] && with_mpi=yes
key=$( (cat "${patches[@]}"; echo "$with_cuda"; [ "$with_mpi" = no ] || echo "mpi"; sed -n '/^conf=/,/^)/p' "$0") | sha1sum | cut -c1-10)
prefix="$deps/starpu-$version-$key"
link() { mkdir -p "$root/.deps" && ln -sfn "$prefix" "$root/.deps/starpu"; }
if [ -f "$prefix/.complete" ]; then
  link
  exit 0
fi
echo "[deps] building StarPU $version (cuda=$with_cuda, mpi=$with_mpi) into $prefix"
mkdir -p "$deps/src"
cd "$deps/src"
src="starpu-$version-$key"  # patched source tree of this key
if [ ! -d "$src" ]; then
  if ! ls starpu_${debver%-*}.orig.tar.* >/dev/null 2>&1; then
    list=/etc/apt/sources.list.d/starfront-deb-src.sources
    if [ ! -f "$list" ]; then
      SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO=sudo
      printf 'Types: deb-src\nURIs: http://deb.debian.org/debian\nSuites: trixie sid\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' | $SUDO tee "$list" >/dev/null
      $SUDO apt-get update -qq
    fi
    apt-get source --download-only -qq "starpu=$debver"
  fi
  rm -rf "$src.tmp" && mkdir "$src.tmp"
  tar -xf starpu_${debver%-*}.orig.tar.* -C "$src.tmp" --strip-components=1
  for p in "${patches[@]}"; do bash "$p" "$src.tmp"; done
  mv "$src.tmp" "$src"
fi
rm -rf "build-$key" && mkdir "build-$key" && cd "build-$key"
conf=(--prefix="$prefix" --enable-shared --disable-static
      --with-fxt --enable-maxcpus=64 --enable-maxcudadev=8
      --disable-opencl --disable-fortran --disable-socl
      --disable-starpupy --disable-starpufft --disable-build-doc --disable-build-examples
      --disable-build-tests --disable-hdf5 --disable-mlr
)
if [ "$with_cuda" = yes ]; then
  conf+=(--enable-cuda --with-cuda-dir="$cuda_home")
else
  conf+=(--disable-cuda)
fi
if [ "$with_mpi" = yes ]; then
  # StarPU-MPI over the MPI library (StarPU 1.4 builds it by default when
  # mpicc works; no NewMadeleine, no MPI master-slave); its own test programs
  # are not built (--disable-build-tests).
  conf+=(--with-mpicc="$mpicc_path")
else
  conf+=(--disable-mpi)
fi
"../$src/configure" "${conf[@]}" >configure.log 2>&1 || { tail -40 configure.log; exit 1; }
if [ "$with_mpi" = yes ] && ! grep -q 'STARPU_USE_MPI 1' src/common/config.h; then
  echo "[deps] StarPU configure did not enable MPI with $mpicc_path:"; grep -i -m10 mpi configure.log; exit 1
fi
make -j"${STARFRONT_JOBS:-$(nproc)}" >make.log 2>&1 || { grep -n -m20 -i error make.log; tail -30 make.log; exit 1; }
make install >install.log 2>&1 || { tail -30 install.log; exit 1; }
touch "$prefix/.complete"
link
echo "[deps] StarPU installed in $prefix"
