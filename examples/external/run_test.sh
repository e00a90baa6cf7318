#!/bin/sh
# CTest test example_external: installs the starfront build tree into a
# temporary prefix, then configures, builds and runs this folder's project
# against it (find_package), compiles main.c once more through pkg-config,
# and runs the installed starfront tool.
#
#   run_test.sh BUILD_DIR WORK_DIR [CMAKE] [CC]
set -eu
build=$1
work=$2
cmake=${3:-cmake}
cc=${4:-cc}
here=$(cd "$(dirname "$0")" && pwd)

rm -rf "$work"
mkdir -p "$work"
prefix=$work/prefix
"$cmake" --install "$build" --prefix "$prefix" > "$work/install.log"
for f in include/starfront/starfront.h include/starfront/starfront.hpp bin/starfront; do
  test -e "$prefix/$f" || { echo "not installed: $f"; exit 1; }
done
if find "$prefix/include" -name '*.hpp' ! -name starfront.hpp ! -name starfront_mpi.hpp | grep -q .; then
  echo "internal headers were installed"; exit 1
fi

"$cmake" -S "$here" -B "$work/build" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release \
  > "$work/configure.log"
"$cmake" --build "$work/build" -j 2 > "$work/build.log"
"$work/build/external_c"
"$work/build/external_cpp"

pc=$(dirname "$(find "$prefix" -name starfront.pc | head -n 1)")
# shellcheck disable=SC2046
"$cc" -std=c99 "$here/main.c" -o "$work/external_pc" \
  $(PKG_CONFIG_PATH="$pc" pkg-config --cflags --libs starfront)
"$work/external_pc"

"$prefix/bin/starfront" generate laplace2d 30 -o "$work/lap.mtx" > /dev/null
"$prefix/bin/starfront" solve "$work/lap.mtx" --ncpu 2 > "$work/tool.log"
echo "installed tool: ok"
