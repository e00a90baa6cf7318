/* Compiled as C99: starfront.h must be plain C. c_header_solve() analyses,
 * factorises and solves a 3×3 tridiagonal matrix given as an upper CSR,
 * 1-based, int32, without StarPU, and returns 0 when x matches the exact
 * solution (test_cpp_api.cpp calls it). */
#include <math.h>
#include <stddef.h>

#include "starfront/starfront.h"

int c_header_solve(void);

int c_header_solve(void) {
  /* A = [4 1 0; 1 4 1; 0 1 4], x = (1, 2, 3): b = (6, 12, 14) */
  const int32_t ptr[4] = {1, 3, 5, 6};
  const int32_t ind[5] = {1, 2, 2, 3, 3};
  const double val[5] = {4, 1, 4, 1, 4};
  double b[3] = {6, 12, 14};
  starfront_matrix A;
  starfront_factor* F = NULL;
  starfront_stats st;
  int i, bad = 0;
  if (starfront_matrix_init(&A) != STARFRONT_OK) return 1;
  A.n = 3;
  A.format = STARFRONT_CSR;
  A.triangle = STARFRONT_UPPER;
  A.index_type = STARFRONT_INT32;
  A.base = 1;
  A.ptr = ptr;
  A.ind = ind;
  A.values = val;
  {
    /* The critical-path analysis's enum values, from C. */
    starfront_analysis_options ao;
    if (starfront_analysis_options_init(&ao) != STARFRONT_OK) return 7;
    ao.ordering = STARFRONT_ORDERING_SCOTCH_PATH;
    ao.amalgamate = STARFRONT_AMALGAMATE_CRITICAL_PATH;
    if (starfront_analyse(NULL, &A, &ao, &F) != STARFRONT_OK) return 8;
    starfront_factor_free(F);
    F = NULL;
  }
  if (starfront_analyse(NULL, &A, NULL, &F) != STARFRONT_OK) return 2;
  if (starfront_factorize(F, &A, NULL) != STARFRONT_OK) bad = 3;
  if (!bad && starfront_solve(F, 1, b, 3) != STARFRONT_OK) bad = 4;
  for (i = 0; !bad && i < 3; ++i)
    if (fabs(b[i] - (i + 1)) > 1e-14) bad = 5;
  if (!bad && (starfront_get_stats(F, &st) != STARFRONT_OK || st.nnz_l_exact != 5)) bad = 6;
  starfront_factor_free(F);
  return bad;
}
