// A matrix with its symbolic analysis and front plan, for the tests of the
// plan (header-only, tests only).
#pragma once

#include <gtest/gtest.h>

#include "analysis/symbolic.hpp"
#include "plan/front_plan.hpp"

namespace starfront::testing {

/// A, its symbolic factor (default analysis options) and its front plan.
struct Problem {
  CscMatrix A;
  SymbolicFactor S;
  FrontPlan P;
};

/// Fills pb from A (a copy); fails the calling test on an analysis error.
inline void setup(Problem& pb, const CscMatrix& A) {
  pb.A = A;
  ASSERT_TRUE(analyse(pb.A, AnalysisOptions{}, pb.S).ok());
  ASSERT_TRUE(build_front_plan(pb.A, pb.S, pb.P).ok());
}

}  // namespace starfront::testing
