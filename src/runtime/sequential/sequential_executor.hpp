// The sequential executor: runs the plan's front tasks one after the other in
// the process, in submission order or in any other valid order (children
// before parents). It is the test oracle of the StarPU executor, and, run in
// random valid orders, a numerical test that the plan's data flow does not
// depend on the execution order. Never includes StarPU.
#pragma once

#include <cstdint>

#include "solve/factor.hpp"

namespace starfront {

/// Factorises A (lower CSC, original numbering, the analysed pattern) with
/// plan P. When `shuffle_seed` is non-zero the fronts run in a random
/// topological order of the assembly tree drawn from that seed (children
/// always before parents, CB buffers private to each front).
/// Errors: invalid_argument (values do not match the plan or are not finite),
/// not_positive_definite (column and pivot in the Status).
Status factorize_sequential(const FrontPlan& P, const CscMatrix& A, const FactorOptions& opts,
                            NumericFactor& F, FactorStats* stats = nullptr,
                            std::uint64_t shuffle_seed = 0);

}  // namespace starfront
