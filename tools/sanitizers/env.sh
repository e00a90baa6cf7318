# Environment of the sanitizer runs (AddressSanitizer, UndefinedBehaviorSanitizer,
# LeakSanitizer), sourced by tools/run-tests.sh --sanitize and tools/fuzz.sh;
# source it yourself to run a program of build-sanitize or build-fuzz by hand.
# Any report is fatal (exit status non-zero). The LeakSanitizer suppressions
# (lsan.supp) name only frames of StarPU and the libraries below it, never
# starfront's. Keep in step with the `sanitize` test preset of CMakePresets.json.
_starfront_san=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export ASAN_OPTIONS="detect_leaks=1:check_initialization_order=1:strict_init_order=1:detect_stack_use_after_return=0:abort_on_error=0:halt_on_error=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
export LSAN_OPTIONS="suppressions=$_starfront_san/lsan.supp:print_suppressions=0"
# hwloc's PCI plugin (through libpciaccess) leaks about 1 KB when StarPU
# discovers the topology, and is unloaded before the exit-time leak check, so
# the report's frames are '<unknown module>' and no suppression can name them:
# leave PCI discovery out (of no use to the CPU-only sanitizer runs).
export HWLOC_COMPONENTS=-pci
if [ -z "${ASAN_SYMBOLIZER_PATH:-}" ] && command -v llvm-symbolizer-14 >/dev/null; then
  export ASAN_SYMBOLIZER_PATH=$(command -v llvm-symbolizer-14)
fi
unset _starfront_san
