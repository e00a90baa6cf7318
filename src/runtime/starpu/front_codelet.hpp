// The StarPU codelet of one front task (assemble, extend-add, POTRF/TRSM/SYRK).
// Buffers, in order: A's values (vector, R), the front's factor panel L_s
// (matrix m×k, W), the front's CB (matrix (m-k)×(m-k), W; absent when m == k),
// then the CB of each child in FrontPlan::child_list order (R).
#pragma once

#include <starpu.h>

#include <vector>

#include "solve/factor.hpp"

namespace starfront {

/// Arguments of a front task (passed by pointer, owned by the executor).
struct FrontTaskArgs {
  const FrontPlan* plan;
  idx_t front;
  double pivot_tol;
  std::vector<FrontResult>* results;  ///< results[front] is written by this task only
};

/// The front codelet (CPU implementation; variable number of buffers).
extern struct starpu_codelet front_codelet;

}  // namespace starfront
