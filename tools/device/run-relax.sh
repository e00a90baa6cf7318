#!/usr/bin/env bash
# Issue 6: the fused GPU subtree kernel by steps, on the GPU machine: GPU
# tests and their knob variants, compute-sanitizer, an amalgamation sweep
# (fewer, larger fronts: a shorter chain of fronts for the kernel), Nsight
# Compute, the cycle profile of factor() (STARFRONT_FUSED_PHASES), the
# machine code, old/new A/B and the baselines (bench/README.md, "Leaner
# dense steps in the fused kernel"). Build and bundle here first
# (tools/setup.sh; STARFRONT_DEVICE_DIR=/work/main/.device/relax
# tools/device/bundle.sh; for `ab`, an older gpu_bench beside this script
# as gpu_bench_old), then
# run(command="bash .device/relax/run-relax.sh [STEP...]", carry=[".device/relax"]).
# Steps (none given: tests sanitize relax ncu phases ab bench); every command has its own timeout; each
# writes under $OUT:
#   tests     tests.txt: test_cuda_blas, test_cuda_front, test_cuda_factorize,
#             test_gpu_assembly_index,
#             test_cuda_fused, test_fused_subtree_index, test_cuda_ldlt
#             (STARFRONT_REQUIRE_GPU=1), then test_cuda_front three times
#             with the blocked front factorisation forced (blocks of 16
#             from k = 40: look-ahead with the panel kernel, with
#             cuSOLVER's DPOTRF, no look-ahead), and once with the medium
#             fronts' blocks forced (blocks of 16 from k = 40)
#   vtests    vtests.txt (also after tests): the suites VTEST_BINS
#             (default test_cuda_fused) with each
#             environment setting of TEST_VARIANTS (e.g.
#             "STARFRONT_FUSED_LARGE=384x2 STARFRONT_FUSED_LOOKAHEAD=0"; a
#             comma joins settings: "A=1,B=2")
#   d2h       d2h.md: gpu_blas_bench --d2h (the copy of a front's L home:
#             whole against the lower trapezoid by blocks) on D2H_SHAPES
#             (default: lap3d 60^3's root and fronts of its bins of k)
#   bintests  bintests.txt: every test_cuda_fused_NAME beside this script (a
#             test binary linked against a variant kernel's library), with
#             STARFRONT_REQUIRE_GPU=1
#   sanitize  sanitizer.txt: compute-sanitizer racecheck and synccheck of the
#             panel factorisation's tests (test_cuda_blas, GpuPotrfPanel*),
#             racecheck and memcheck of gpu_bench --fused --repeat 1 on 1138_bus,
#             memcheck on bcsstk13, activsg2000_hykkt_10 and opf_case10000_goc_kkt, racecheck on
#             activsg2000_hykkt_10 (RACE_S seconds at most, default 150)
#   relax     relax.md: gpu_bench --fused --repeat 30 --ncpu NCPU --no-cholmod
#             --no-cusolversp on the two power-grid matrices for every
#             amalgamation R:M:Z in SWEEP (default "4:16:0.1 4:16:0.2
#             4:16:0.3 4:24:0.2 4:32:0.2 8:32:0.1"; --relax-small R
#             --relax-mid M --relax-zeros Z; 4:16:0.1 is the default), ROUNDS
#             rounds (default 2) alternating, then the kernel trace
#             (STARFRONT_FUSED_TRACE=1) of the first and last settings
#   ncu       ncu.txt: Nsight Compute on the large launch (512 threads) of
#             activsg2000_hykkt_10's fused kernel, default amalgamation
#             and RELAX (if set)
#   ncusrc    ncusrc.txt, ncu-source.csv.xz: Nsight Compute's SASS view with
#             per-instruction stall sampling of that large launch (CSV)
#   phases    phases.txt: the cycles of factor()'s steps in the large launch
#             (STARFRONT_FUSED_PHASES=1) and the kernel trace
#             (STARFRONT_FUSED_TRACE=1), as built and with each setting of
#             PHASE_VARIANTS (default: the 384x2 and 256x4 large launches,
#             no look-ahead; items as in AB_VARIANTS, so `prev` or
#             bin=NAME runs another binary)
#   latency   latency.md: gpu_latency_bench (cycles of each dependent
#             operation of the diagonal block's chain, one warp), alone and
#             beside 15 and 31 warps of independent FMAs
#   sass      fused-sass.txt.xz: cuobjdump -sass of the fused kernels
#   ab        ab.md: this bundle's gpu_bench against gpu_bench_old (put beside
#             this script; AB_OLD=0 leaves it out; with AB_PREV=1 also
#             gpu_bench_prev there, a second older build), and the new one
#             with each AB_VARIANTS setting (default
#             STARFRONT_FUSED_LARGE=384x2; commas join items: NAME=VALUE
#             items are environment settings, the others gpu_bench options,
#             e.g. "STARFRONT_EARLY_RESUME=0,--values-buffer"; the item
#             "bin=NAME" runs gpu_bench_NAME beside this script), ROUNDS (3) alternating
#             rounds of gpu_bench --fused --repeat 30 on the power-grid
#             matrices; AB_ARGS: gpu_bench options for every binary and
#             variant (e.g. --values-buffer)
#   lap       lap.md: gpu_bench --gpu-graph (1 GPU + CPU workers) on
#             LAP_MATRICES (default lap3d:60), the new binary and each
#             AB_VARIANTS setting (gpu_bench options that only --fused
#             knows are ignored there; items as in ab, so `old` runs
#             gpu_bench_old), ROUNDS alternating rounds (every
#             other one in reverse order); LAP_ARGS:
#             gpu_bench options for every run (e.g. "--watchdog 30");
#             LAP_TIMEOUT: seconds a run may take (default 120)
#   laplog    laplog-vI.csv: the task log (STARFRONT_TASK_LOG, with
#             STARPU_PROFILING=1) of the last of 2 factorisations of
#             LAP_MATRICES (default lap3d:60) through the GPU graph
#             (gpu_bench --gpu-graph --no-cpu), I = 0 as built, then one
#             per LAPLOG_VARIANTS setting (items as in AB_VARIANTS); read
#             it here with bench/task_log_summary.py
#   gpuonly   gpuonly.md: gpu_bench --gpu-graph --fronts-on-gpu-only (fused
#             subtrees with fronts above the kernel's shared-memory limit
#             run its global-memory path) on LAP_MATRICES, GPUONLY_RUNS runs
#             (default 3) of each GPUONLY_VARIANTS setting ("" as built;
#             items as in AB_VARIANTS), each with the executor's watchdog
#             (--watchdog 10: the message names the tasks still running)
#             and a 45 s limit; then compute-sanitizer memcheck of one
#             factorisation of lap3d:30 that way
#   tasklog   tasklog-MATRIX.csv: the task log (STARFRONT_TASK_LOG, with
#             STARPU_PROFILING=1) of the last of 5 refactorisations of each
#             power-grid matrix: StarPU's submission, pop, data acquisition,
#             start and end stamps of the fused task, and the run's; then
#             tasklog-MATRIX-vI.csv with the I-th setting of TASKLOG_VARIANTS
#             (items as in AB_VARIANTS)
#   stall     stall.txt: the debuggers present, the CUDA JIT cache and the
#             memory (/proc/meminfo, the NUMA nodes' sysfs meminfo, and
#             hwloc's view: bin/hwmem) before and after, the GPU's persistence
#             mode, then STALL_RUNS (default 2)
#             runs of gpu_bench --repeat 3 --gpu-graph --no-cpu --watchdog 15
#             on STALL_MATRICES (default lap3d:100) with STALL_ARGS, their
#             whole output: when the watchdog abandons a factorisation,
#             gpu_bench prints StarPU's memory per node and every thread's
#             call stack (resolve the "lib(+offset)" frames here with
#             addr2line on the bundled libraries) and waits, and cuda-gdb
#             attaches (info cuda kernels, every thread's backtrace). Put it
#             first: the stall it looks at hit the first lap3d 100^3 process
#             of each freshly started machine (bench/README.md, session 31)
#   (every gpu_bench run: --ncpu NCPU, default 16: StarPU workers on that
#   many cores, the CUDA worker's included)
#   chain     chain.txt: each front of the fused kernel's critical chain
#             (STARFRONT_FUSED_TRACE=2: m, k, children, late start,
#             prologue overrun, lag, extend-add, factor, write-out) in the
#             last of 3 refactorisations of activsg2000_hykkt_10 (CHAIN_GRID
#             "0 1": also opf_case10000_goc_kkt), as built and with each
#             CHAIN_VARIANTS setting (items as in AB_VARIANTS), CHAIN_ROUNDS
#             alternating rounds (default 1)
#   bench     bench.md: gpu_bench --fused --repeat 30 --ncpu NCPU on every SPD
#             matrix and lap2d:300 against CHOLMOD and cusolverSp csrchol,
#             with the amalgamation RELAX="R:M:Z" when it is set and the
#             gpu_bench options BENCH_ARGS (e.g. --values-buffer)
#   panel     panel.md: gpu_blas_bench --repeat 10 --panel on the medium
#             fronts' shapes of lap3d 60^3 (PANEL_SHAPES), cuSOLVER DPOTRF +
#             TRSM against gpu_potrf_panel and gpu_potrf_panel_rows; then
#             gpu_blas_bench --panel-trace (the rows kernel's steps, cycles)
#             on PANEL_TRACE_SHAPES; then (unless PANEL_SAN=0)
#             compute-sanitizer racecheck, synccheck and memcheck of the
#             rows kernel's tests (GpuPotrfPanelRows*, the 40,000-row
#             shapes left out, and GpuPotrfPanelFailure*)
#   syrk      syrk.md: gpu_blas_bench --repeat 10 --syrk (the CB update by
#             cuBLAS DSYRK against gpu_syrk_lower_update's kernel) on
#             SYRK_SHAPES (default: lap3d 60^3's CB updates and larger ones);
#             then compute-sanitizer memcheck, racecheck and synccheck of
#             the GpuSyrk tests
#   syrkncu   syrkncu.txt: Nsight Compute's duration, SM throughput, warps
#             active and grid of every kernel of gpu_blas_bench --repeat 1
#             --syrk N:K for each shape of SYRKNCU_SHAPES (default 800:95
#             300:100 1116:190 1830:380), then the median duration per
#             kernel name
#   profile   profile.txt: the GPU Cholesky front tasks' step profile
#             (STARFRONT_GPU_FRONT_PROFILE=1: per bin of k, GPU ms of assembly,
#             DPOTRF, TRSM, SYRK and the host's queueing, summed over the
#             process) of gpu_bench --gpu-graph --no-cpu on LAP_MATRICES
#             (default lap3d:60) with one stream (STARPU_NWORKER_PER_CUDA=1;
#             the profile serialises it anyway), --repeat R for each R in
#             PROFILE_REPEATS (default "2 12": the difference of the two is
#             10 warm factorisations), as built and with each
#             PROFILE_VARIANTS setting (items as in AB_VARIANTS); LAP_TIMEOUT
#             seconds at most a run (default 120)
#   issue5    issue5.md: issue 5's table, gpu_bench --repeat 3 --ncpu NCPU
#             --gpu-graph ISSUE5_ARGS on ISSUE5_MATRICES (default lap3d:60
#             lap3d:60:27 and every data/spd matrix): starfront on the GPU
#             against starfront on the CPU cores alone (its factor compared
#             with the GPU's: ‖ΔL‖_F/‖L‖_F), CHOLMOD (its best of the
#             OpenBLAS thread counts CHOLMOD_THREADS, default 1,4,16;
#             starfront's permutation), cusolverSp csrchol and dense DPOTRF
#             at the largest front's order (ISSUE5_TIMEOUT seconds at most,
#             default 560; ISSUE5_ARGS=--no-cpu skips the CPU run)
#   root      root.md: the blocked factorisation of large fronts on its own
#             and in lap3d 60^3: gpu_bench --repeat 3 --gpu-graph --no-cpu on
#             ROOT_MATRICES (default dense:5361 lap3d:60: dense:N is one
#             front of order N, the order of lap3d 60^3's root; its
#             analysis timed out before session 42's ordering fix) with
#             STARFRONT_GPU_BLOCK_TRACE=ROOT_TRACE_K (default 1024: each
#             block's side-stream and worker-stream times), as built and
#             with each ROOT_VARIANTS setting (items as in AB_VARIANTS),
#             ROUNDS alternating rounds
#   subtree   subtree.md: the CPU subtree kernel alone on one core of this
#             host (subtree_bench --repeat 9 on SUBTREE_MATRICES, default
#             lap3d:60 lap3d:60:27): the CPU side of the GPU graph's
#             schedule (bench/schedule_model.py's subtree costs)
# AB_EXTRA adds inputs to the power-grid matrices of the steps that use
# them (ab, chain, ...); BENCH_MATRICES replaces bench's lap2d:300.
set -uo pipefail
# shellcheck source=tools/device/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" starfront-relax
steps=${*:-tests sanitize relax ncu phases ab bench}
has() { [[ " $steps " == *" $1 "* ]]; }
grid=("$b/data/spd/activsg2000_hykkt_10.mtx" "$b/data/spd/opf_case10000_goc_kkt.mtx")
# AB_EXTRA: more inputs for the ab step (e.g. "lap2d:100 lap2d:150")
# shellcheck disable=SC2206
[ -n "${AB_EXTRA:-}" ] && grid+=(${AB_EXTRA})
# relax_args R:M:Z -> gpu_bench's amalgamation options (nothing for "")
relax_args() {
  [ -n "${1:-}" ] || return 0
  local r m z
  IFS=: read -r r m z <<<"$1"
  echo "--relax-small $r --relax-mid $m --relax-zeros $z"
}
# split_variant V: a variant's comma-separated items into e (environment
# settings, NAME=VALUE, for env) and x (gpu_bench options: the other items,
# e.g. "--values-buffer" or "--ncpu,4"; a bare word is kept only when the
# variant also has an item with "=" or "-"); e also gets STARFRONT_AB=V (V:
# what the caller passes: in ab and chain, the variant less its binary
# item, pick_binary).
split_variant() {
  e=STARFRONT_AB=${1//,/+} x=()
  local item
  for item in ${1//,/ }; do
    if [[ "$item" == -* || "$item" != *=* ]]; then
      [[ "$1" == *=* || "$1" == -* ]] && x+=("$item")
    else
      e="$e,$item"
    fi
  done
}
# The gpu_bench a variant runs (sets g; the variant's items less the binary
# item are in v2): "old" / "prev": gpu_bench_old / gpu_bench_prev beside
# this script, "bin=NAME": gpu_bench_NAME there, else this bundle's.
pick_binary() {
  g=$b/bin/gpu_bench v2=
  local item
  for item in ${1//,/ }; do
    case "$item" in
      old) g=$here/gpu_bench_old ;;
      prev) g=$here/gpu_bench_prev ;;
      bin=*) g=$here/gpu_bench_${item#bin=} ;;
      *) v2=${v2:+$v2,}$item ;;
    esac
  done
}
keep='^\| (activsg|opf|lap2d|bcsstk|1138|494|A_spd|lund)|gpu_bench: .*(fused GPU|error|fail)|^\| matrix'
if has tests; then
  {
    gpu_tests -e 'refactorisations: GPU free' test_cuda_blas test_cuda_front test_cuda_factorize test_cuda_fused \
      test_fused_subtree_index test_cuda_ldlt \
      test_gpu_assembly_index
    # The blocked front factorisation forced onto the tests' fronts (whose
    # k stays below its default 2048; cuSOLVER's DPOTRF so that the panel
    # kernels do not take the whole front): with the look-ahead and narrow
    # blocks by the panel kernel, by cuSOLVER's DPOTRF, and without the
    # look-ahead.
    for v in STARFRONT_GPU_FRONT_BLOCK_ROWS=1 STARFRONT_GPU_FRONT_BLOCK_ROWS=0 \
      STARFRONT_GPU_FRONT_LOOKAHEAD=0,STARFRONT_GPU_FRONT_BLOCK_ROWS=0; do
      echo "### test_cuda_front, blocked: STARFRONT_GPU_POTRF=cusolver STARFRONT_GPU_FRONT_BLOCK=16 STARFRONT_GPU_FRONT_BLOCK_MIN_K=40 ${v//,/ }"
      # shellcheck disable=SC2046
      env STARFRONT_GPU_POTRF=cusolver STARFRONT_GPU_FRONT_BLOCK=16 STARFRONT_GPU_FRONT_BLOCK_MIN_K=40 $(tr , ' ' <<<"$v") \
        bash -c "$(declare -f gpu_tests); b=$b; gpu_tests test_cuda_front"
    done
    # The medium fronts' blocks (blocked_front_columns below the large
    # fronts' limit; on by default from k = 257) forced onto the tests'
    # smaller fronts the same way.
    echo "### test_cuda_front, medium blocks: STARFRONT_GPU_POTRF=cusolver STARFRONT_GPU_FRONT_MID_BLOCK=16 STARFRONT_GPU_FRONT_MID_MIN_K=40"
    env STARFRONT_GPU_POTRF=cusolver STARFRONT_GPU_FRONT_MID_BLOCK=16 STARFRONT_GPU_FRONT_MID_MIN_K=40 \
      bash -c "$(declare -f gpu_tests); b=$b; gpu_tests test_cuda_front"
  } 2>&1 | tee "$out/tests.txt"
fi
if has tests || has vtests; then
  for v in ${TEST_VARIANTS:-}; do
    echo "### with ${v//,/ }:"
    # shellcheck disable=SC2046
    env $(tr , ' ' <<<"$v") bash -c "$(declare -f gpu_tests); b=$b; gpu_tests ${VTEST_BINS:-test_cuda_fused}"
  done 2>&1 | tee "$out/vtests.txt"
fi
if has bintests; then
  # Test binaries built against variant kernels, put beside this script as
  # test_cuda_fused_NAME (linked here against the variant's library).
  bins=()
  for t in "$here"/test_cuda_fused_*; do [ -x "$t" ] && bins+=("$t"); done
  gpu_tests "${bins[@]}" 2>&1 | tee "$out/bintests.txt"
fi
san=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null)
if has sanitize && [ -z "$san" ]; then
  echo "no compute-sanitizer on this machine" | tee "$out/sanitizer.txt"
elif has sanitize; then
  {
    for tool in racecheck synccheck; do
      echo "### compute-sanitizer --tool $tool test_cuda_blas --gtest_filter='*GpuPotrfPanel*'"
      STARFRONT_REQUIRE_GPU=1 timeout 150 "$san" --tool "$tool" "$b/bin/test_cuda_blas" --gtest_filter='*GpuPotrfPanel*' 2>&1 |
        grep -E "ERROR SUMMARY|RACECHECK SUMMARY|hazard|Barrier|^\[  (PASSED|FAILED) |tests ran|Error" | head -20
      echo "exit ${PIPESTATUS[0]}"
    done
    # 1138_bus: the small launch only; bcsstk13, activsg2000 and
    # opf_case10000 (fronts up to order 220): the large launch (512
    # threads) too.
    for run in "racecheck 1138_bus 60" "memcheck 1138_bus 60" "memcheck bcsstk13 90" "memcheck activsg2000_hykkt_10 90" \
               "memcheck opf_case10000_goc_kkt 90" \
               "racecheck activsg2000_hykkt_10 ${RACE_S:-150}"; do
      read -r tool mat secs <<<"$run"
      echo "### compute-sanitizer --tool $tool gpu_bench --fused --repeat 1 $mat $(relax_args "${RELAX:-}") (${secs} s at most)"
      # shellcheck disable=SC2046
      timeout "$secs" "$san" --tool "$tool" "$b/bin/gpu_bench" --fused --repeat 1 --ncpu 4 --no-cholmod --no-cusolversp \
        $(relax_args "${RELAX:-}") "$b/data/spd/$mat.mtx" 2>&1 |
        grep -E "ERROR SUMMARY|RACECHECK SUMMARY|Error|error|hazard|gpu_bench:" | head -20
      echo "exit ${PIPESTATUS[0]}"
    done
  } 2>&1 | tee "$out/sanitizer.txt"
fi
q=(--fused --repeat 30 --ncpu "${NCPU:-16}" --no-cholmod --no-cusolversp)
sweep=${SWEEP:-4:16:0.1 4:16:0.2 4:16:0.3 4:24:0.2 4:32:0.2 8:32:0.1}
if has relax; then
  {
    for round in $(seq 1 "${ROUNDS:-2}"); do
      for s in $sweep; do
        echo "### round $round, $(relax_args "$s"): gpu_bench ${q[*]} (power-grid matrices)"
        # shellcheck disable=SC2046
        timeout 60 "$b/bin/gpu_bench" "${q[@]}" $(relax_args "$s") "${grid[@]}" 2>&1 | grep -E "$keep|analysis"
        echo "exit ${PIPESTATUS[0]}"
      done
    done
    first=${sweep%% *} last=${sweep##* }
    for s in "$first" "$last"; do
      echo "### trace, $(relax_args "$s"): STARFRONT_FUSED_TRACE=1 gpu_bench --fused --repeat 3"
      # shellcheck disable=SC2046
      STARFRONT_FUSED_TRACE=1 timeout 60 "$b/bin/gpu_bench" --fused --repeat 3 --ncpu "${NCPU:-16}" --no-cholmod --no-cusolversp \
        $(relax_args "$s") "${grid[@]}" 2>&1 | grep -E "fused trace|gpu_bench: .*fused GPU" | tail -6
    done
  } 2>&1 | tee "$out/relax.md"
fi
if has ncu; then
  ncu=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null)
  sel=(--kernel-name-base demangled --kernel-name 'regex:\(int\)512' --launch-skip 3 --launch-count 1)
  {
    for s in "" ${RELAX:-}; do
      echo "### ncu, large launch (512 threads), activsg2000_hykkt_10 $(relax_args "$s")"
      # shellcheck disable=SC2046
      timeout 200 "$ncu" "${sel[@]}" --section SpeedOfLight --section WarpStateStats --section SchedulerStats \
        --section LaunchStats --section Occupancy --section SourceCounters --section MemoryWorkloadAnalysis_Tables \
        --section ComputeWorkloadAnalysis "$b/bin/gpu_bench" --fused --repeat 3 --ncpu 4 --no-cholmod --no-cusolversp \
        $(relax_args "$s") "$b/data/spd/activsg2000_hykkt_10.mtx" 2>&1 | grep -vE "perf_model|^\| |^gpu_bench|^$" | head -150
      echo "exit ${PIPESTATUS[0]}"
      echo "### ncu stall reasons (warps per issue-active cycle), the same kernel"
      # shellcheck disable=SC2046
      timeout 200 "$ncu" "${sel[@]}" --metrics 'regex:^smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio$' \
        "$b/bin/gpu_bench" --fused --repeat 3 --ncpu 4 --no-cholmod --no-cusolversp $(relax_args "$s") \
        "$b/data/spd/activsg2000_hykkt_10.mtx" 2>&1 | grep -E "stalled|==PROF==|==ERROR==" | sort -k3 -g -r | head -40
      echo "exit ${PIPESTATUS[0]}"
    done
  } 2>&1 | tee "$out/ncu.txt"
fi
if has ncusrc; then
  # Nsight Compute's per-instruction view (SASS, with the warp-state
  # sampling's stall reasons) of the large launch of activsg2000_hykkt_10,
  # as CSV: which instructions of the dense steps the warps wait on.
  ncu=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null)
  {
    timeout 300 "$ncu" --kernel-name-base demangled --kernel-name 'regex:\(int\)512' --launch-skip 3 --launch-count 1 \
      --set full -f -o "$out/ncusrc" "$b/bin/gpu_bench" --fused --repeat 3 --ncpu 4 --no-cholmod --no-cusolversp \
      "$b/data/spd/activsg2000_hykkt_10.mtx" 2>&1 | grep -E "==PROF==|==ERROR==|==WARNING==" | head -20
    echo "exit ${PIPESTATUS[0]}"
    timeout 200 "$ncu" -i "$out/ncusrc.ncu-rep" --page source --csv --print-source sass 2>&1 | xz -3 >"$out/ncu-source.csv.xz"
    echo "exit ${PIPESTATUS[0]}"
    rm -f "$out/ncusrc.ncu-rep"
    ls -la "$out/ncu-source.csv.xz"
  } 2>&1 | tee "$out/ncusrc.txt"
fi
if has phases; then
  {
    for v in "" ${PHASE_VARIANTS:-STARFRONT_FUSED_LARGE=384x2 STARFRONT_FUSED_LARGE=256x4 STARFRONT_FUSED_LOOKAHEAD=0}; do
      echo "### ${v:-as built}: STARFRONT_FUSED_PHASES=1 gpu_bench --fused --repeat 5 (power-grid matrices), then the trace"
      pick_binary "$v"
      # shellcheck disable=SC2046
      env $(tr , ' ' <<<"$v2") STARFRONT_FUSED_PHASES=1 timeout 60 "$g" --fused --repeat 5 --ncpu "${NCPU:-16}" --no-cholmod \
        --no-cusolversp "${grid[@]}" 2>&1 | grep -E "fused phases|gpu_bench: .*fused GPU" | tail -4
      # shellcheck disable=SC2046
      env $(tr , ' ' <<<"$v2") STARFRONT_FUSED_TRACE=1 timeout 60 "$g" --fused --repeat 3 --ncpu "${NCPU:-16}" --no-cholmod \
        --no-cusolversp "${grid[@]}" 2>&1 | grep -E "fused trace|gpu_bench: .*fused GPU" | sed -n '4p;5p;9p;10p'
    done
  } 2>&1 | tee "$out/phases.txt"
fi
if has latency; then
  # Latency of the serial column chain's operations (bench/gpu_latency_bench.cu),
  # one warp alone, then beside 15 and 31 warps streaming FMAs.
  {
    for w in 0 15 31; do
      timeout 60 "$b/bin/gpu_latency_bench" --noise "$w"
      echo "exit $?"
    done
  } 2>&1 | tee "$out/latency.md"
fi
if has sass; then
  # The fused kernels' machine code (cuobjdump, when the machine has it).
  cuobjdump=$(command -v cuobjdump || ls /usr/local/cuda/bin/cuobjdump 2>/dev/null)
  [ -n "$cuobjdump" ] && "$cuobjdump" -sass "$b/bin/gpu_bench" 2>&1 |
    awk '/Function : .*fused_subtree_kernel/ {p = 1} /Function : / && !/fused_subtree_kernel/ {p = 0} p' |
    xz -3 >"$out/fused-sass.txt.xz"
  ls -la "$out/fused-sass.txt.xz"
fi
if has ab; then
  # The fused kernel of this bundle against gpu_bench_old beside this
  # script (an older build), alternating, ROUNDS rounds; each variant of
  # AB_VARIANTS (environment settings of the new binary) too.
  {
    for round in $(seq 1 "${ROUNDS:-3}"); do
      for v in $([ "${AB_OLD:-1}" = 0 ] || echo old) ${AB_PREV:+prev} new ${AB_VARIANTS:-STARFRONT_FUSED_LARGE=384x2}; do
        pick_binary "$v"
        [ "$v" = new ] && v2=
        split_variant "$v2"
        # shellcheck disable=SC2206
        x+=(${AB_ARGS:-})
        echo "### round $round, $v: gpu_bench ${q[*]} ${x[*]} (power-grid matrices)"
        # shellcheck disable=SC2046
        env $(tr , ' ' <<<"$e") timeout 60 "$g" "${q[@]}" "${x[@]}" "${grid[@]}" 2>&1 | grep -E "$keep"
        echo "exit ${PIPESTATUS[0]}"
      done
    done
  } 2>&1 | tee "$out/ab.md"
fi
if has stall; then
  # One file (the device run returns at most 8 files): the probe, then each
  # run; a stalled run is also attached to by cuda-gdb (GPU kernels, host
  # threads) while gpu_bench waits after its own dump.
  f=$out/stall.txt
  {
    echo "### tools"; command -v gdb cuda-gdb eu-stack /usr/local/cuda/bin/cuda-gdb
    echo "### id: $(id)"
    echo "### JIT cache before"; ls -la ~/.nv/ComputeCache 2>&1 | head; du -sh ~/.nv 2>&1
    nvidia-smi --query-gpu=persistence_mode,memory.used,memory.total,clocks.sm,clocks.mem --format=csv 2>&1
    echo "### uptime"; cat /proc/uptime; grep -E "MemTotal|MemFree|MemAvailable" /proc/meminfo
    grep MemTotal /sys/devices/system/node/node*/meminfo; "$b/bin/hwmem"
  } >"$f" 2>&1
  for i in $(seq 1 "${STALL_RUNS:-2}"); do
    echo "### stall run $i: gpu_bench --repeat 3 --ncpu ${NCPU:-16} --no-cpu --no-cholmod --no-cusolversp --gpu-graph --watchdog 15 ${STALL_ARGS:-} ${STALL_MATRICES:-lap3d:100}" >>"$f"
    r=$out/stall-run.txt
    # shellcheck disable=SC2086
    STARFRONT_BENCH_STALL_WAIT=90 "$b/bin/gpu_bench" --repeat 3 --ncpu "${NCPU:-16}" --no-cpu --no-cholmod --no-cusolversp \
      --gpu-graph --watchdog 15 ${STALL_ARGS:-} ${STALL_MATRICES:-lap3d:100} >"$r" 2>&1 &
    pid=$!
    for _ in $(seq 1 150); do
      sleep 1
      grep -q "stacks written" "$r" && break
      kill -0 "$pid" 2>/dev/null || break
    done
    if grep -q "stacks written" "$r"; then
      timeout 80 /usr/local/cuda/bin/cuda-gdb -p "$pid" -batch -ex "info cuda kernels" -ex "thread apply all bt 40" \
        >"$out/cuda-gdb.txt" 2>&1
    fi
    kill "$pid" 2>/dev/null
    wait "$pid"
    echo "exit $?" >>"$r"
    cat "$r" >>"$f"
    [ -f "$out/cuda-gdb.txt" ] && { echo "### cuda-gdb"; cat "$out/cuda-gdb.txt"; } >>"$f"
    rm -f "$r" "$out/cuda-gdb.txt"
    tail -n 3 "$f"
  done
  { echo "### JIT cache after"; ls -la ~/.nv/ComputeCache 2>&1 | head; du -sh ~/.nv 2>&1
    echo "### uptime"; cat /proc/uptime; grep -E "MemTotal|MemFree|MemAvailable" /proc/meminfo
    grep MemTotal /sys/devices/system/node/node*/meminfo; "$b/bin/hwmem"; } >>"$f" 2>&1
fi
if has lap; then
  # The GPU graph of large Laplacians (issue 5's regime: hundreds of tasks on
  # the CPU and CUDA workers) with the new binary and each AB_VARIANTS
  # setting, ROUNDS alternating rounds.
  {
    for round in $(seq 1 "${ROUNDS:-3}"); do
      # Every other round runs the settings in reverse order (ABBA), so
      # that a drift of the machine within a round (the first process of a
      # round was the slowest in session 39's first call) favours none
      # over an even number of rounds.
      # shellcheck disable=SC2206
      order=(new ${AB_VARIANTS:-})
      if (( round % 2 == 0 )); then
        for ((i = ${#order[@]} - 1, j = 0; i > j; i--, j++)); do t=${order[i]}; order[i]=${order[j]}; order[j]=$t; done
      fi
      for v in "${order[@]}"; do
        pick_binary "$v"  # (old, prev, bin=NAME: another gpu_bench beside this script)
        [ "$v" = new ] && v2=
        split_variant "$v2"
        echo "### round $round, $v: gpu_bench --repeat 3 --ncpu ${NCPU:-16} --no-cpu --no-cholmod --no-cusolversp --gpu-graph ${LAP_ARGS:-} ${x[*]} ${LAP_MATRICES:-lap3d:60}"
        # shellcheck disable=SC2046,SC2086
        env $(tr , ' ' <<<"$e") timeout "${LAP_TIMEOUT:-120}" "$g" --repeat 3 --ncpu "${NCPU:-16}" --no-cpu --no-cholmod \
          --no-cusolversp --gpu-graph ${LAP_ARGS:-} "${x[@]}" ${LAP_MATRICES:-lap3d:60} 2>&1 | grep -E '^\| (lap|matrix)|rror|stall|watchdog|executor phases'
        echo "exit ${PIPESTATUS[0]}"
      done
    done
  } 2>&1 | tee "$out/lap.md"
fi
if has root; then
  {
    for round in $(seq 1 "${ROUNDS:-2}"); do
      # shellcheck disable=SC2206
      order=("" ${ROOT_VARIANTS:-})
      if (( round % 2 == 0 )); then
        for ((i = ${#order[@]} - 1, j = 0; i > j; i--, j++)); do t=${order[i]}; order[i]=${order[j]}; order[j]=$t; done
      fi
      for v in "${order[@]}"; do
        pick_binary "$v"
        split_variant "$v2"
        for mtx in ${ROOT_MATRICES:-dense:5361 lap3d:60}; do
          echo "### round $round, ${v:-as built}: STARFRONT_GPU_BLOCK_TRACE=${ROOT_TRACE_K:-1024} gpu_bench --repeat 3 --ncpu ${NCPU:-16} --no-cpu --no-cholmod --no-cusolversp --gpu-graph --watchdog 20 ${x[*]} $mtx"
          # shellcheck disable=SC2046
          env $(tr , ' ' <<<"$e") STARFRONT_GPU_BLOCK_TRACE="${ROOT_TRACE_K:-1024}" timeout "${LAP_TIMEOUT:-120}" "$g" \
            --repeat 3 --ncpu "${NCPU:-16}" --no-cpu --no-cholmod --no-cusolversp --gpu-graph --watchdog 20 "${x[@]}" \
            "$mtx" 2>&1 | grep -E '^\| (lap|dense|matrix)|rror|stall|watchdog|executor phases|gpu block trace'
          echo "exit ${PIPESTATUS[0]}"
        done
      done
    done
  } 2>&1 | tee "$out/root.md"
fi
if has tasklog; then
  i=0
  for v in "" ${TASKLOG_VARIANTS:-}; do
    split_variant "$v"
    for m in "${grid[@]}"; do
      n=$(basename "$m" .mtx)$([ -n "$v" ] && echo "-v$i")
      echo "### task log ${v:-as built}: $n"
      # shellcheck disable=SC2046
      env $(tr , ' ' <<<"$e") STARPU_PROFILING=1 STARFRONT_TASK_LOG="$out/tasklog-$n.csv" timeout 60 "$b/bin/gpu_bench" \
        --fused --repeat 5 --ncpu "${NCPU:-16}" --no-cholmod --no-cusolversp "${x[@]}" "$m" 2>&1 | grep -E "$keep"
      cat "$out/tasklog-$n.csv"
    done
    i=$((i + 1))
  done
fi
if has laplog; then
  i=0
  for v in "" ${LAPLOG_VARIANTS:-}; do
    split_variant "$v"
    echo "### lap task log v$i ${v:-as built}: gpu_bench --repeat 2 --gpu-graph ${x[*]} ${LAP_MATRICES:-lap3d:60}"
    # shellcheck disable=SC2046,SC2086
    env $(tr , ' ' <<<"$e") STARPU_PROFILING=1 STARFRONT_TASK_LOG="$out/laplog-v$i.csv" timeout 120 "$b/bin/gpu_bench" \
      --repeat 2 --ncpu "${NCPU:-16}" --no-cpu --no-cholmod --no-cusolversp --gpu-graph "${x[@]}" \
      ${LAP_MATRICES:-lap3d:60} 2>&1 | grep -E '^\| (lap|matrix)|error|fail'
    i=$((i + 1))
  done 2>&1 | tee "$out/laplog.md"
fi
if has gpuonly; then
  {
    for v in "" ${GPUONLY_VARIANTS:-}; do
      split_variant "$v"
      for r in $(seq 1 "${GPUONLY_RUNS:-3}"); do
        echo "### gpu-only run $r, ${v:-as built}: gpu_bench --repeat 3 --watchdog 10 --gpu-graph --fronts-on-gpu-only ${x[*]} ${LAP_MATRICES:-lap3d:60}"
        # shellcheck disable=SC2046,SC2086
        env $(tr , ' ' <<<"$e") timeout 45 "$b/bin/gpu_bench" --repeat 3 --ncpu "${NCPU:-16}" --no-cpu --no-cholmod \
          --no-cusolversp --watchdog 10 --gpu-graph --fronts-on-gpu-only "${x[@]}" ${LAP_MATRICES:-lap3d:60} 2>&1 |
          grep -E '^\| lap|watchdog|no task completed|error|fail' | cut -c1-600
        echo "exit ${PIPESTATUS[0]}"
      done
    done
    echo "### compute-sanitizer memcheck: gpu_bench --repeat 1 --gpu-graph --fronts-on-gpu-only lap3d:30"
    if [ -n "$san" ]; then
      timeout 240 "$san" --tool memcheck --print-limit 20 "$b/bin/gpu_bench" --repeat 1 --ncpu 4 --no-cpu \
        --no-cholmod --no-cusolversp --watchdog 60 --gpu-graph --fronts-on-gpu-only lap3d:30 2>&1 | tail -40
      echo "exit ${PIPESTATUS[0]}"
    else
      echo "no compute-sanitizer on this machine"
    fi
  } 2>&1 | tee "$out/gpuonly.md"
fi
if has chain; then
  # Each front of the fused kernel's critical chain (STARFRONT_FUSED_TRACE=2)
  # in the last of 3 refactorisations of activsg2000_hykkt_10 (CHAIN_GRID:
  # indices into the power-grid matrices, default 0; "0 1" adds
  # opf_case10000_goc_kkt), as built and
  # with each CHAIN_VARIANTS setting (items as in AB_VARIANTS, binaries as
  # pick_binary says), CHAIN_ROUNDS alternating rounds (default 1;
  # after the first, the summary line only). The awk keeps the last fused
  # task's lines only: the whole picture for a matrix that is one fused
  # task, as both power-grid matrices are.
  {
    for round in $(seq 1 "${CHAIN_ROUNDS:-1}"); do
      for gi in ${CHAIN_GRID:-0}; do
        [[ "$gi" =~ ^[01]$ ]] || { echo "CHAIN_GRID: '$gi' is not 0 or 1 (the power-grid matrices)"; continue; }
        for v in "" ${CHAIN_VARIANTS:-}; do
          pick_binary "$v"
          split_variant "$v2"
          echo "### chain round $round, ${v:-as built}: STARFRONT_FUSED_TRACE=2 gpu_bench --fused --repeat 3 ${x[*]} $(basename "${grid[$gi]}" .mtx)"
          # shellcheck disable=SC2046
          env $(tr , ' ' <<<"$e") STARFRONT_FUSED_TRACE=2 timeout 60 "$g" --fused --repeat 3 --ncpu "${NCPU:-16}" \
            --no-cholmod --no-cusolversp "${x[@]}" "${grid[$gi]}" 2>&1 |
            awk -v all=$((round == 1)) '/^fused trace/ {n = 0} /^fused (trace|chain)/ {if (all || /^fused trace/) l[n++] = $0} END {for (i = 0; i < n; ++i) print l[i]}'
        done
      done
    done
  } 2>&1 | tee "$out/chain.txt"
fi
if has d2h; then
  {
    # shellcheck disable=SC2086
    timeout 120 "$b/bin/gpu_blas_bench" --repeat 10 --d2h ${D2H_SHAPES:-}
    echo "exit $?"
  } 2>&1 | tee "$out/d2h.md"
fi
if has panel; then
  {
    # shellcheck disable=SC2086
    timeout 120 "$b/bin/gpu_blas_bench" --repeat 10 --panel ${PANEL_SHAPES:-700:12 795:50 687:70 897:100 1071:114 \
      1462:141 1306:128 1314:171 1876:237 2209:255 256:256 4787:13}
    echo "exit $?"
    # shellcheck disable=SC2086
    timeout 60 "$b/bin/gpu_blas_bench" --panel-trace ${PANEL_TRACE_SHAPES:-256:256 1306:128 2209:255 700:12}
    echo "exit $?"
    if [ -n "$san" ] && [ "${PANEL_SAN:-1}" != 0 ]; then
      for tool in racecheck synccheck memcheck; do
        echo "### compute-sanitizer --tool $tool test_cuda_blas --gtest_filter='*GpuPotrfPanelRows*:*GpuPotrfPanelFailure*:-*Rows*/19:*Rows*/20'"
        STARFRONT_REQUIRE_GPU=1 timeout 150 "$san" --tool "$tool" "$b/bin/test_cuda_blas" \
          --gtest_filter='*GpuPotrfPanelRows*:*GpuPotrfPanelFailure*:-*Rows*/19:*Rows*/20' 2>&1 |
          grep -E "ERROR SUMMARY|RACECHECK SUMMARY|hazard|Barrier|^\[  (PASSED|FAILED) |tests ran|Error" | head -20
        echo "exit ${PIPESTATUS[0]}"
      done
    fi
  } 2>&1 | tee "$out/panel.md"
fi
if has syrk; then
  {
    # shellcheck disable=SC2086
    timeout 120 "$b/bin/gpu_blas_bench" --repeat 10 --syrk ${SYRK_SHAPES:-}
    echo "exit $?"
    if [ -n "$san" ]; then
      for tool in memcheck racecheck synccheck; do
        echo "### compute-sanitizer --tool $tool test_cuda_blas --gtest_filter='*GpuSyrk*'"
        STARFRONT_REQUIRE_GPU=1 timeout 150 "$san" --tool "$tool" "$b/bin/test_cuda_blas" --gtest_filter='*GpuSyrk*' 2>&1 |
          grep -E "ERROR SUMMARY|RACECHECK SUMMARY|hazard|^\[  (PASSED|FAILED) |tests ran|Error" | head -20
        echo "exit ${PIPESTATUS[0]}"
      done
    fi
  } 2>&1 | tee "$out/syrk.md"
fi
if has syrkncu; then
  ncu=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null)
  {
    for sh in ${SYRKNCU_SHAPES:-800:95 300:100 1116:190 1830:380}; do
      echo "### ncu gpu_blas_bench --repeat 1 --syrk $sh"
      timeout 200 "$ncu" --csv --print-units base --kernel-name-base function --metrics \
        gpu__time_duration.sum,sm__throughput.avg.pct_of_peak_sustained_elapsed,sm__warps_active.avg.pct_of_peak_sustained_active,launch__grid_size,launch__block_size \
        "$b/bin/gpu_blas_bench" --repeat 1 --syrk "$sh" >"$out/ncu-$sh.csv" 2>&1
      echo "exit $?"
      # "ID","Process ID","Process Name","Host Name","Kernel Name",...,"Metric Name","Metric Unit","Metric Value"
      python3 - "$out/ncu-$sh.csv" <<'PY'
import csv, sys, statistics, collections
rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) > 10]
if not rows: print(open(sys.argv[1]).read()[-2000:]); sys.exit()
h = rows[0]; ki = h.index("Kernel Name"); mi = h.index("Metric Name"); vi = h.index("Metric Value"); ii = h.index("ID")
per = collections.defaultdict(dict)
for r in rows[1:]:
    per[(r[ii], r[ki])][r[mi]] = r[vi].replace(",", "")
byk = collections.defaultdict(list)
for (i, k), m in per.items(): byk[k].append(m)
print("| kernel | launches | median us | SM throughput % | warps active % | grid | block |")
print("|---|---|---|---|---|---|---|")
for k, ms in byk.items():
    f = lambda key: statistics.median(float(m.get(key, "nan")) for m in ms)
    print(f"| {k[:60]} | {len(ms)} | {f('gpu__time_duration.sum')/1000:.1f} | {f('sm__throughput.avg.pct_of_peak_sustained_elapsed'):.1f} | "
          f"{f('sm__warps_active.avg.pct_of_peak_sustained_active'):.1f} | {ms[0].get('launch__grid_size')} | {ms[0].get('launch__block_size')} |")
PY
      xz -f "$out/ncu-$sh.csv"
    done
  } 2>&1 | tee "$out/syrkncu.txt"
fi
if has profile; then
  i=0
  for v in "" ${PROFILE_VARIANTS:-}; do
    split_variant "$v"
    for r in ${PROFILE_REPEATS:-2 12}; do
      echo "### profile v$i ${v:-as built}, --repeat $r: STARPU_NWORKER_PER_CUDA=1 STARFRONT_GPU_FRONT_PROFILE=1 gpu_bench --repeat $r --ncpu ${NCPU:-16} --no-cpu --no-cholmod --no-cusolversp --gpu-graph ${x[*]} ${LAP_MATRICES:-lap3d:60}"
      # shellcheck disable=SC2046,SC2086
      env $(tr , ' ' <<<"$e") STARPU_NWORKER_PER_CUDA=1 STARFRONT_GPU_FRONT_PROFILE=1 timeout "${LAP_TIMEOUT:-120}" \
        "$b/bin/gpu_bench" --repeat "$r" --ncpu "${NCPU:-16}" --no-cpu --no-cholmod --no-cusolversp --gpu-graph "${x[@]}" \
        ${LAP_MATRICES:-lap3d:60} 2>&1 | grep -Ei '^\| |rror|fail|GPU [0-9.]+ s|profile'
      echo "exit ${PIPESTATUS[0]}"
    done
    i=$((i + 1))
  done 2>&1 | tee "$out/profile.txt"
fi
if has issue5; then
  # shellcheck disable=SC2086
  timeout "${ISSUE5_TIMEOUT:-560}" "$b/bin/gpu_bench" --repeat 3 --ncpu "${NCPU:-16}" --gpu-graph ${ISSUE5_ARGS:-} \
    --cholmod-threads "${CHOLMOD_THREADS:-1,4,16}" ${ISSUE5_MATRICES:-lap3d:60 lap3d:60:27 $b/data/spd/*.mtx} 2>&1 |
    grep -v perf_model_add_dir | tee "$out/issue5.md"
fi
if has subtree; then
  # shellcheck disable=SC2086
  timeout 120 "$b/bin/subtree_bench" --repeat 9 ${SUBTREE_MATRICES:-lap3d:60 lap3d:60:27} 2>&1 | tee "$out/subtree.md"
fi
if has bench; then
  # shellcheck disable=SC2046
  timeout 150 "$b/bin/gpu_bench" --fused --repeat 30 --ncpu "${NCPU:-16}" $(relax_args "${RELAX:-}") ${BENCH_ARGS:-} \
    "$b"/data/spd/*.mtx ${BENCH_MATRICES:-lap2d:300} 2>&1 |
    grep -v perf_model_add_dir | tee "$out/bench.md"
fi
