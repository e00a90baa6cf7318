// cholmod_stats: CHOLMOD's figures for a Matrix Market file, for comparison
// with starfront: nnz(L) and flops of its analysis (default ordering: CHOLMOD
// tries AMD and METIS-free alternatives and keeps the best), supernodal
// factorisation time (median of --repeat runs) and the backward error.
// Usage: cholmod_stats FILE.mtx [--repeat K] [--json]
#include <cholmod.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "cpu/blas_core.hpp"
#include "io/matrix_market.hpp"
#include "solve/solve.hpp"

using namespace starfront;

namespace {

/// A view of the lower CSC matrix A as a CHOLMOD sparse matrix (stype -1).
cholmod_sparse* to_cholmod(const CscMatrix& A, cholmod_common* c) {
  cholmod_sparse* S = cholmod_allocate_sparse(A.n, A.n, A.nnz(), 1, 1, -1, CHOLMOD_REAL, c);
  auto* Sp = static_cast<int*>(S->p);
  auto* Si = static_cast<int*>(S->i);
  auto* Sx = static_cast<double*>(S->x);
  for (idx_t j = 0; j <= A.n; ++j) Sp[j] = static_cast<int>(A.colptr[j]);
  for (idx_t k = 0; k < A.nnz(); ++k) {
    Si[k] = static_cast<int>(A.rowind[k]);
    Sx[k] = A.values[k];
  }
  return S;
}

}  // namespace

int main(int argc, char** argv) {
  starfront::reexec_with_native_blas(argv);  // before any thread: OpenBLAS's kernels for this CPU
  if (argc < 2) {
    std::fprintf(stderr, "usage: cholmod_stats FILE.mtx [--repeat K] [--json]\n");
    return 2;
  }
  int repeat = 5;
  bool json = false;
  for (int a = 2; a < argc; ++a) {
    if (!std::strcmp(argv[a], "--repeat") && a + 1 < argc) repeat = std::max(1, std::atoi(argv[++a]));
    if (!std::strcmp(argv[a], "--json")) json = true;
  }
  CscMatrix A;
  Status st = read_matrix_market(argv[1], A);
  if (!st.ok()) {
    std::fprintf(stderr, "cholmod_stats: %s\n", st.message.c_str());
    return 1;
  }
  cholmod_common c;
  cholmod_start(&c);
  c.supernodal = CHOLMOD_SUPERNODAL;
  cholmod_sparse* S = to_cholmod(A, &c);
  cholmod_factor* L = cholmod_analyze(S, &c);
  const double lnz = c.lnz, fl = c.fl;
  std::vector<double> times;
  for (int r = 0; r < repeat; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    cholmod_factorize(S, L, &c);
    times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(times.begin(), times.end());
  std::vector<double> ones(A.n, 1.0), b(A.n);
  symmetric_matvec(A, ones.data(), b.data());
  cholmod_dense* B = cholmod_zeros(A.n, 1, CHOLMOD_REAL, &c);
  std::copy(b.begin(), b.end(), static_cast<double*>(B->x));
  cholmod_dense* X = cholmod_solve(CHOLMOD_A, L, B, &c);
  const double berr = backward_error(A, static_cast<double*>(X->x), b.data());
  if (json)
    std::printf("{\"n\":%lld,\"nnz_l\":%.0f,\"flops\":%.6e,\"t_factor_s\":%.6e,\"backward_error\":%.3e,\"status\":%d}\n",
                static_cast<long long>(A.n), lnz, fl, times[times.size() / 2], berr, c.status);
  else
    std::printf("%s: n %lld, nnz(L) %.0f, flops %.3e, factor %.4f s (median of %d), backward error %.2e\n",
                argv[1], static_cast<long long>(A.n), lnz, fl, times[times.size() / 2], repeat, berr);
  cholmod_free_dense(&X, &c);
  cholmod_free_dense(&B, &c);
  cholmod_free_factor(&L, &c);
  cholmod_free_sparse(&S, &c);
  cholmod_finish(&c);
  return 0;
}
