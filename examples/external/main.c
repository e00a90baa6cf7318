/* Out-of-tree consumer (C99): solves the 1D Laplacian tridiag(-1, 2, -1) of
 * order 1000 (upper triangle, CSR, 0-based, int64) for x = 1 with StarPU. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <starfront/starfront.h>

int main(void) {
  enum { N = 1000 };
  static int64_t ptr[N + 1], ind[2 * N];
  static double val[2 * N], b[N];
  int64_t i, nnz = 0;
  starfront_runtime* rt = NULL;
  starfront_factor* F = NULL;
  starfront_matrix A;
  starfront_status st;
  double err = 0;
  for (i = 0; i < N; ++i) { /* row i: (i, i) = 2, (i, i+1) = -1 */
    ptr[i] = nnz;
    ind[nnz] = i;
    val[nnz++] = 2.0;
    if (i + 1 < N) {
      ind[nnz] = i + 1;
      val[nnz++] = -1.0;
    }
    b[i] = (i == 0 || i == N - 1) ? 1.0 : 0.0; /* A·1 */
  }
  ptr[N] = nnz;
  starfront_matrix_init(&A);
  A.n = N;
  A.format = STARFRONT_CSR;
  A.triangle = STARFRONT_UPPER;
  A.ptr = ptr;
  A.ind = ind;
  A.values = val;
  st = starfront_runtime_init(NULL, &rt);
  if (st == STARFRONT_OK) st = starfront_analyse(rt, &A, NULL, &F);
  if (st == STARFRONT_OK) st = starfront_factorize(F, &A, NULL);
  if (st == STARFRONT_OK) st = starfront_solve(F, 1, b, N);
  if (st != STARFRONT_OK) {
    fprintf(stderr, "starfront: %s: %s\n", starfront_status_name(st), starfront_last_error());
    return 1;
  }
  for (i = 0; i < N; ++i) err = fmax(err, fabs(b[i] - 1.0));
  printf("external C: n %d, max |x - 1| = %.2e\n", N, err);
  starfront_factor_free(F);
  starfront_runtime_free(rt);
  return err < 1e-9 ? 0 : 1;
}
