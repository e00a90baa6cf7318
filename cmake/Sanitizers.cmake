# Instrumented builds (issue 10, robustness). Applies to every target of the
# project defined after this file is included (libraries, tests, tools);
# prebuilt dependencies (StarPU, Scotch, OpenBLAS, GoogleTest) stay as they are.
#
# STARFRONT_SANITIZE: AddressSanitizer + UndefinedBehaviorSanitizer, any
#   undefined behaviour fatal (-fno-sanitize-recover). GCC or clang. Used by
#   `tools/run-tests.sh --sanitize` (build folder build-sanitize); the
#   environment it runs the tests with is in tools/sanitizers/.
# STARFRONT_FUZZ: libFuzzer targets in fuzz/ (clang only); the project is
#   compiled with -fsanitize=fuzzer-no-link,address,undefined and the targets
#   linked with -fsanitize=fuzzer. Used by tools/fuzz.sh (build folder
#   build-fuzz), normally together with STARFRONT_CORE_ONLY.
option(STARFRONT_SANITIZE "Build with AddressSanitizer and UndefinedBehaviorSanitizer" OFF)
option(STARFRONT_FUZZ "Build the libFuzzer targets of fuzz/ (clang; implies ASan + UBSan)" OFF)

set(_starfront_san_flags -fsanitize=address,undefined -fno-omit-frame-pointer
    -fno-sanitize-recover=undefined)
if(STARFRONT_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "STARFRONT_FUZZ needs clang (libFuzzer): configure with "
                        "CC=clang CXX=clang++ (Debian packages clang, libclang-rt-14-dev)")
  endif()
  add_compile_options("$<$<COMPILE_LANGUAGE:CXX,C>:-fsanitize=fuzzer-no-link;${_starfront_san_flags}>")
  add_link_options(-fsanitize=address,undefined)
elseif(STARFRONT_SANITIZE)
  add_compile_options("$<$<COMPILE_LANGUAGE:CXX,C>:${_starfront_san_flags}>")
  add_link_options(-fsanitize=address,undefined)
endif()
