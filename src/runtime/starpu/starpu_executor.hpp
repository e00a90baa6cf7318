// The StarPU executor: submits one task per front in the plan's order; the
// only synchronisation is StarPU's data dependencies (a front reads its
// children's CB handles), so a front starts as soon as its children are done.
#pragma once

#include "solve/factor.hpp"

namespace starfront {

/// Factorises A (lower CSC, original numbering, the analysed pattern) with
/// plan P on the running StarPU (see StarpuRuntime). Waits for this
/// factorisation's own tasks only (no global barrier).
/// Errors: invalid_argument (values do not match the plan or are not
/// finite), not_positive_definite (column and pivot in the Status),
/// runtime_error (StarPU not started, a submission failed).
Status factorize_starpu(const FrontPlan& P, const CscMatrix& A, const FactorOptions& opts,
                        NumericFactor& F, FactorStats* stats = nullptr);

}  // namespace starfront
