#!/usr/bin/env bash
# Quick start 1: set everything up, then `starfront solve` with the given
# arguments (no FILE: a built-in 3D Laplacian). Example:
#   tools/run-solve.sh ../shared/data/spd/activsg2000_hykkt_10.mtx --json
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
"$root/tools/setup.sh" >&2
exec "$root/${STARFRONT_BUILD_DIR:-build}/tools/starfront" solve "$@"
