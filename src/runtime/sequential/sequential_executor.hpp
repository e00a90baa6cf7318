// The sequential executor: runs the task graph's tasks one after the other in
// the process, in submission order or in a random order that respects the
// graph's dependencies. It is the test oracle of the StarPU executor, and,
// run in random valid orders, a numerical test that the graph's data flow does
// not depend on the execution order. Never includes StarPU.
#pragma once

#include <cstdint>

#include "solve/factor.hpp"

namespace starfront {

/// Factorises A (lower CSC, original numbering, the analysed pattern) by
/// running graph G. When `shuffle_seed` is non-zero the tasks run in a random
/// topological order of the dependencies (task_dependencies) drawn from that
/// seed; commuting extend-adds then also run in random relative orders.
/// Blocks of their own are allocated at their first access and freed after
/// their last. Errors: invalid_argument (values do not match the plan or are
/// not finite), not_positive_definite (column and pivot in the Status).
Status factorize_sequential(const TaskGraph& G, const CscMatrix& A, const FactorOptions& opts,
                            NumericFactor& F, FactorStats* stats = nullptr,
                            std::uint64_t shuffle_seed = 0);

}  // namespace starfront
