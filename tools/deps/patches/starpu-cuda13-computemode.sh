#!/usr/bin/env bash
# CUDA 13 removed cudaDeviceProp::computeMode. StarPU 1.4.10 reads it in its CUDA
# drivers; replace each read `props[devid].computeMode` (any lvalue before
# .computeMode) by a query of cudaDevAttrComputeMode through cudaDeviceGetAttribute.
# Usage: starpu-cuda13-computemode.sh STARPU_SOURCE_DIR
set -euo pipefail
src=$1
for f in "$src"/src/drivers/cuda/driver_cuda.c "$src"/src/drivers/cuda/driver_cuda1.c; do
  [ -f "$f" ] || continue
  grep -q computeMode "$f" || continue
  python3 - "$f" <<'PY'
import re, sys
p = sys.argv[1]
s = open(p).read()
# X.computeMode  ->  starfront_compute_mode(devid)  where devid is the index used in X[...]
def repl(m):
    return "starfront_cuda13_compute_mode(%s)" % m.group(2)
s2 = re.sub(r'([A-Za-z_][A-Za-z_0-9]*)\[([^\]]+)\]\.computeMode', repl, s)
if s2 == s:
    sys.exit("no computeMode pattern matched in " + p)
helper = ('\n/* starfront patch: CUDA 13 removed cudaDeviceProp::computeMode */\n'
          'static int starfront_cuda13_compute_mode(int dev)\n{\n\tint mode = 0;\n'
          '\tif (cudaDeviceGetAttribute(&mode, cudaDevAttrComputeMode, dev) != cudaSuccess)\n'
          '\t\treturn 0;\n\treturn mode;\n}\n')
# insert after the last #include line
idx = [m.end() for m in re.finditer(r'^#include[^\n]*\n', s2, re.M)][-1]
s2 = s2[:idx] + helper + s2[idx:]
open(p, 'w').write(s2)
PY
done
