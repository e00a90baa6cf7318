/* Example 1 (C99, C API only): reads a Matrix Market file (coordinate
 * real/integer, symmetric or general), solves A x = b with b = A·1 and
 * prints the statistics and the backward error.
 *
 *   example_c_solve FILE.mtx [NCPU]
 *
 * The matrix is handed over as CSC, 1-based, 32-bit indices, entries in file
 * order within each column: STARFRONT_LOWER for a `symmetric` file (entries
 * mirrored into the lower triangle), STARFRONT_FULL for a `general` one.
 * Exit status 0 when the backward error is below 1e-10. */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <starfront/starfront.h>

typedef struct {
  int32_t n, nnz; /* nnz: entries as stored (one triangle for symmetric files) */
  int32_t *row, *col;
  double* val;
  int symmetric;
} Triplets;

static void lower(char* s) {
  for (; *s; ++s) *s = (char)tolower((unsigned char)*s);
}

/* Reads FILE into t (0-based). Returns 0 on success, prints why otherwise. */
static int read_matrix_market(const char* path, Triplets* t) {
  char line[1024], obj[64], fmt[64], field[64], sym[64];
  long nr, nc, nz, k;
  FILE* f = fopen(path, "r");
  if (!f) {
    fprintf(stderr, "%s: cannot open\n", path);
    return 1;
  }
  if (!fgets(line, sizeof line, f) ||
      sscanf(line, "%%%%MatrixMarket %63s %63s %63s %63s", obj, fmt, field, sym) != 4) {
    fprintf(stderr, "%s: not a Matrix Market file\n", path);
    fclose(f);
    return 1;
  }
  lower(fmt);
  lower(field);
  lower(sym);
  if (strcmp(fmt, "coordinate") != 0 || (strcmp(field, "real") && strcmp(field, "integer")) ||
      (strcmp(sym, "symmetric") && strcmp(sym, "general"))) {
    fprintf(stderr, "%s: need coordinate real|integer symmetric|general\n", path);
    fclose(f);
    return 1;
  }
  do {
    if (!fgets(line, sizeof line, f)) {
      fclose(f);
      return 1;
    }
  } while (line[0] == '%');
  if (sscanf(line, "%ld %ld %ld", &nr, &nc, &nz) != 3 || nr != nc || nr > 2147483647L ||
      nz > 2147483647L) {
    fprintf(stderr, "%s: bad size line\n", path);
    fclose(f);
    return 1;
  }
  t->n = (int32_t)nr;
  t->nnz = (int32_t)nz;
  t->symmetric = strcmp(sym, "symmetric") == 0;
  t->row = malloc(sizeof(int32_t) * (size_t)(nz > 0 ? nz : 1));
  t->col = malloc(sizeof(int32_t) * (size_t)(nz > 0 ? nz : 1));
  t->val = malloc(sizeof(double) * (size_t)(nz > 0 ? nz : 1));
  for (k = 0; k < nz; ++k) {
    long i, j;
    double v;
    if (fscanf(f, "%ld %ld %lf", &i, &j, &v) != 3 || i < 1 || j < 1 || i > nr || j > nr) {
      fprintf(stderr, "%s: bad entry %ld\n", path, k + 1);
      fclose(f);
      return 1;
    }
    if (t->symmetric && i < j) { /* keep the lower triangle */
      long s = i;
      i = j;
      j = s;
    }
    t->row[k] = (int32_t)(i - 1);
    t->col[k] = (int32_t)(j - 1);
    t->val[k] = v;
  }
  fclose(f);
  return 0;
}

/* y = A x for the matrix of t (symmetric files: mirror the off-diagonal). */
static void matvec(const Triplets* t, const double* x, double* y) {
  int32_t k;
  memset(y, 0, sizeof(double) * (size_t)t->n);
  for (k = 0; k < t->nnz; ++k) {
    y[t->row[k]] += t->val[k] * x[t->col[k]];
    if (t->symmetric && t->row[k] != t->col[k]) y[t->col[k]] += t->val[k] * x[t->row[k]];
  }
}

static int check(starfront_status st, const char* what) {
  if (st == STARFRONT_OK) return 0;
  fprintf(stderr, "%s failed (%s): %s\n", what, starfront_status_name(st), starfront_last_error());
  return 1;
}

int main(int argc, char** argv) {
  Triplets t;
  int32_t *ptr, *ind, *next, j, k;
  double *val, *b, *x, *r, normA = 0, normx = 0, normb = 0, normr = 0, berr;
  double* rowsum;
  starfront_runtime_options ro;
  starfront_runtime* rt = NULL;
  starfront_matrix A;
  starfront_factor* F = NULL;
  starfront_stats st;
  starfront_memory mem;
  int fail = 0;

  if (argc < 2) {
    fprintf(stderr, "usage: %s FILE.mtx [NCPU]\n", argv[0]);
    return 2;
  }
  if (read_matrix_market(argv[1], &t)) return 1;

  /* CSC, 1-based, int32: count per column, then place entries in file order. */
  ptr = calloc((size_t)t.n + 1, sizeof(int32_t));
  next = calloc((size_t)t.n + 1, sizeof(int32_t));
  ind = malloc(sizeof(int32_t) * (size_t)(t.nnz > 0 ? t.nnz : 1));
  val = malloc(sizeof(double) * (size_t)(t.nnz > 0 ? t.nnz : 1));
  for (k = 0; k < t.nnz; ++k) ++ptr[t.col[k] + 1];
  for (j = 0; j < t.n; ++j) ptr[j + 1] += ptr[j];
  memcpy(next, ptr, sizeof(int32_t) * (size_t)t.n);
  for (k = 0; k < t.nnz; ++k) {
    const int32_t p = next[t.col[k]]++;
    ind[p] = t.row[k] + 1;
    val[p] = t.val[k];
  }
  for (j = 0; j <= t.n; ++j) ++ptr[j];

  starfront_matrix_init(&A);
  A.n = t.n;
  A.format = STARFRONT_CSC;
  A.triangle = t.symmetric ? STARFRONT_LOWER : STARFRONT_FULL;
  A.index_type = STARFRONT_INT32;
  A.base = 1;
  A.ptr = ptr;
  A.ind = ind;
  A.values = val;

  b = malloc(sizeof(double) * (size_t)(t.n > 0 ? t.n : 1));
  x = malloc(sizeof(double) * (size_t)(t.n > 0 ? t.n : 1));
  r = malloc(sizeof(double) * (size_t)(t.n > 0 ? t.n : 1));
  rowsum = calloc((size_t)(t.n > 0 ? t.n : 1), sizeof(double));
  for (j = 0; j < t.n; ++j) x[j] = 1.0;
  matvec(&t, x, b);
  memcpy(x, b, sizeof(double) * (size_t)t.n);

  starfront_runtime_options_init(&ro);
  if (argc > 2) ro.ncpu = atoi(argv[2]);
  fail = check(starfront_runtime_init(&ro, &rt), "starfront_runtime_init");
  if (!fail) fail = check(starfront_analyse(rt, &A, NULL, &F), "starfront_analyse");
  if (!fail) fail = check(starfront_factorize(F, &A, NULL), "starfront_factorize");
  if (!fail) fail = check(starfront_solve(F, 1, x, t.n > 0 ? t.n : 1), "starfront_solve");
  if (!fail) {
    starfront_get_stats(F, &st);
    starfront_memory_estimate(F, &mem);
    matvec(&t, x, r);
    for (k = 0; k < t.nnz; ++k) { /* ‖A‖∞ from absolute row sums */
      rowsum[t.row[k]] += fabs(t.val[k]);
      if (t.symmetric && t.row[k] != t.col[k]) rowsum[t.col[k]] += fabs(t.val[k]);
    }
    for (j = 0; j < t.n; ++j) {
      normA = fmax(normA, rowsum[j]);
      normx = fmax(normx, fabs(x[j]));
      normb = fmax(normb, fabs(b[j]));
      normr = fmax(normr, fabs(r[j] - b[j]));
    }
    berr = normA * normx + normb > 0 ? normr / (normA * normx + normb) : 0.0;
    printf("%s: n %lld, nnz(L) %lld, flops %.3e, supernodes %lld, tasks %lld\n", argv[1],
           (long long)st.n, (long long)st.nnz_l, st.flops, (long long)st.supernodes,
           (long long)st.tasks);
    printf("analyse %.4f s, factorise %.4f s, solve %.4f s; factor %.1f MB, CB peak %.1f MB\n",
           st.t_analyse_s, st.t_factor_s, st.t_solve_s, mem.factor_bytes / 1e6,
           mem.cb_peak_bytes / 1e6);
    printf("backward error %.3e\n", berr);
    fail = !(berr < 1e-10);
  }
  starfront_factor_free(F);
  starfront_runtime_free(rt);
  free(ptr);
  free(next);
  free(ind);
  free(val);
  free(b);
  free(x);
  free(r);
  free(rowsum);
  free(t.row);
  free(t.col);
  free(t.val);
  return fail;
}
