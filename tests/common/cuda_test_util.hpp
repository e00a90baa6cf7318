// Helpers shared by the GPU tests (tests/cuda): whether a missing GPU is a
// failure (STARFRONT_REQUIRE_GPU=1, set by the device scripts) or a skip, and
// a StarPU runtime whose GPU-capable tasks run on the GPU only.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "runtime/starpu/runtime.hpp"
#include "runtime/starpu/task_codelets.hpp"

namespace starfront::testing {

/// True when STARFRONT_REQUIRE_GPU=1: a GPU test then fails instead of
/// skipping when no GPU (or no CUDA codelet) is there.
inline bool gpu_required() {
  const char* e = std::getenv("STARFRONT_REQUIRE_GPU");
  return e && std::string(e) == "1";
}

}  // namespace starfront::testing

/// Starts StarPU into `rt` (a std::unique_ptr<StarpuRuntime>) with 2 CPU
/// workers and one CUDA worker under dmda, every task kind with a CUDA
/// implementation (tiles, fronts, subtrees) on the GPU only; skips the
/// calling test when that is impossible here (fails it under
/// STARFRONT_REQUIRE_GPU=1). A macro because GTEST_SKIP / FAIL return from
/// the test body.
#define START_GPU_ONLY_RUNTIME(rt)                                                        \
  do {                                                                                    \
    if (!::starfront::cuda_codelets_built()) {                                            \
      if (::starfront::testing::gpu_required()) FAIL() << "CUDA codelets not built";      \
      GTEST_SKIP() << "no CUDA device (CUDA codelets not built)";                         \
    }                                                                                     \
    ::starfront::RuntimeOptions ro_{2, 1, "dmda"};                                        \
    ro_.tiles_on_cuda_only = ro_.fronts_on_cuda_only = true;                              \
    const ::starfront::Status st_ = ::starfront::StarpuRuntime::start(ro_, rt);           \
    if (!st_.ok()) {                                                                      \
      if (::starfront::testing::gpu_required()) FAIL() << st_.message;                    \
      GTEST_SKIP() << "no CUDA device (" << st_.message << ")";                           \
    }                                                                                     \
  } while (0)
