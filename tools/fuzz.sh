#!/usr/bin/env bash
# Fuzzing (issue 10): builds the libFuzzer targets of fuzz/ with clang in
# build-fuzz (STARFRONT_FUZZ=ON, StarPU-free core only, ASan + UBSan) and runs
# each for SECONDS (default 30), starting from its seed corpus fuzz/corpus/<t>
# and its regressions fuzz/regressions/<t>; new inputs go to a working corpus
# build-fuzz/corpus/<t> (fuzz/corpus stays small). Exits non-zero when a
# target crashes or breaks a property: the input is then saved under
# build-fuzz/artifacts/<t>/; once fixed, add it to fuzz/regressions/<t>/
# (tests/robustness replays it in every test run).
# Usage: tools/fuzz.sh [SECONDS] [TARGET...]   (targets: matrix_market csc_solve)
# Environment: STARFRONT_FUZZ_BUILD_DIR (default build-fuzz), STARFRONT_JOBS.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
secs=${1:-30}
shift || true
targets=("$@")
((${#targets[@]})) || targets=(matrix_market csc_solve)
build=${STARFRONT_FUZZ_BUILD_DIR:-build-fuzz}
"$root/tools/deps/install-deps.sh"
mkdir -p "$build"
cmake -S . -B "$build" -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSTARFRONT_FUZZ=ON -DSTARFRONT_CORE_ONLY=ON \
  -DSTARFRONT_BUILD_TESTS=OFF -DSTARFRONT_BUILD_BENCH=OFF >"$build/configure.log" 2>&1 \
  || { cat "$build/configure.log"; exit 1; }
cmake --build "$build" -j "${STARFRONT_JOBS:-$(nproc)}" \
  --target "${targets[@]/#/fuzz_}" 2>&1 | { grep -vE '^\[ *[0-9]+%\]|^(Consolidate|Scanning)' || true; }
# shellcheck source=sanitizers/env.sh
. "$root/tools/sanitizers/env.sh"
status=0
for t in "${targets[@]}"; do
  mkdir -p "$build/corpus/$t" "$build/artifacts/$t"
  seeds=(fuzz/corpus/"$t")
  [ -d fuzz/regressions/"$t" ] && seeds+=(fuzz/regressions/"$t")
  echo "[fuzz] $t: ${secs}s"
  if ! "$build/fuzz/fuzz_$t" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
      -print_final_stats=1 -artifact_prefix="$build/artifacts/$t/" \
      "$build/corpus/$t" "${seeds[@]}" >"$build/fuzz_$t.log" 2>&1; then
    echo "[fuzz] $t FAILED: input saved in $build/artifacts/$t/; log $build/fuzz_$t.log:"
    tail -60 "$build/fuzz_$t.log"
    status=1
  else
    grep -E '^stat::number_of_executed_units|^stat::new_units_added' "$build/fuzz_$t.log" \
      | sed "s/^/[fuzz] $t /"
  fi
done
exit $status
