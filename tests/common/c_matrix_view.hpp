// The C API's view of a lower CSC matrix, for tests that call the C API
// (header-only, tests only).
#pragma once

#include <gtest/gtest.h>

#include "sparse/csc.hpp"
#include "starfront/starfront.h"

namespace starfront::testing {

/// A starfront_matrix over A's arrays (0-based, 64-bit indices, lower
/// triangle; not owned: A must outlive it). A failing starfront_matrix_init
/// fails the calling test.
inline starfront_matrix c_view(const CscMatrix& A) {
  starfront_matrix M;
  EXPECT_EQ(starfront_matrix_init(&M), STARFRONT_OK);
  M.n = A.n;
  M.ptr = A.colptr.data();
  M.ind = A.rowind.data();
  M.values = A.values.data();
  return M;
}

}  // namespace starfront::testing
