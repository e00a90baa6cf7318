// Example 2 (C++17 layer): the linear-algebra loop of an interior-point
// method. The pattern is analysed once; then 50 iterations each change the
// diagonal (a barrier term μ_k / x_i², as in a primal-dual method whose
// iterates approach their bounds), refactorise with the new values, solve
// and check the residual.
//
//   example_ipm_loop [GRID] [NCPU]
//
// A_k = K + diag(μ_k / x_i(k)²), K the 5-point Laplacian of a GRID×GRID grid
// (default 80: n = 6400), given as a lower CSC, 0-based, 64-bit. Prints the
// first factorisation time and the median refactorisation time; exit status 0
// when every backward error is below 1e-12.
#include <starfront/starfront.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

struct Csc {
  int64_t n = 0;
  std::vector<int64_t> colptr{0}, rowind, diag;  // diag[j]: position of a_jj
  std::vector<double> values;
};

/// Lower CSC of the 5-point Laplacian on an m×m grid (diagonal 4, neighbours -1).
Csc laplacian_2d(int64_t m) {
  Csc A;
  A.n = m * m;
  for (int64_t j = 0; j < A.n; ++j) {
    const int64_t x = j % m, y = j / m;
    A.diag.push_back(static_cast<int64_t>(A.rowind.size()));
    A.rowind.push_back(j);
    A.values.push_back(4.0);
    if (x + 1 < m) A.rowind.push_back(j + 1), A.values.push_back(-1.0);
    if (y + 1 < m) A.rowind.push_back(j + m), A.values.push_back(-1.0);
    A.colptr.push_back(static_cast<int64_t>(A.rowind.size()));
  }
  return A;
}

/// Normwise backward error ‖Ax − b‖∞ / (‖A‖∞‖x‖∞ + ‖b‖∞) of the symmetric A.
double backward_error(const Csc& A, const std::vector<double>& x, const std::vector<double>& b) {
  std::vector<double> r(A.n, 0.0), rowsum(A.n, 0.0);
  for (int64_t j = 0; j < A.n; ++j)
    for (int64_t p = A.colptr[j]; p < A.colptr[j + 1]; ++p) {
      const int64_t i = A.rowind[p];
      const double v = A.values[p];
      r[i] += v * x[j];
      rowsum[i] += std::fabs(v);
      if (i != j) r[j] += v * x[i], rowsum[j] += std::fabs(v);
    }
  double nr = 0, na = 0, nx = 0, nb = 0;
  for (int64_t i = 0; i < A.n; ++i) {
    nr = std::max(nr, std::fabs(r[i] - b[i]));
    na = std::max(na, rowsum[i]);
    nx = std::max(nx, std::fabs(x[i]));
    nb = std::max(nb, std::fabs(b[i]));
  }
  return na * nx + nb > 0 ? nr / (na * nx + nb) : 0.0;
}

}  // namespace

int main(int argc, char** argv) {
  const int64_t grid = argc > 1 ? std::atoll(argv[1]) : 80;
  starfront::RuntimeOptions ro;
  if (argc > 2) ro.ncpu = std::atoi(argv[2]);
  try {
    starfront::Runtime rt(ro);
    Csc A = laplacian_2d(grid);
    const std::vector<double> K = A.values;
    const auto M = starfront::Matrix::csc(A.n, A.colptr.data(), A.rowind.data(), A.values.data());
    starfront::Factor F(rt, M);  // analysis: once

    std::vector<double> b(A.n), x, refactor_s;
    for (int64_t i = 0; i < A.n; ++i) b[i] = 1.0 + static_cast<double>(i % 7);
    double worst = 0.0, first_s = 0.0;
    for (int k = 0; k < 50; ++k) {
      const double mu = 10.0 * std::pow(0.7, k);
      A.values = K;
      for (int64_t i = 0; i < A.n; ++i) {
        const double rate = 0.2 * static_cast<double>(i % 11) / 10.0;  // some x_i approach 0
        const double xi = std::exp(-rate * k);
        A.values[A.diag[i]] += mu / (xi * xi);
      }
      if (k == 0)
        F.factorize(M.with_values(A.values.data()));  // pattern checked once
      else
        F.refactorize(A.values.data());  // values only: nothing of the analysis recomputed
      const starfront_stats st = F.stats();
      if (k == 0)
        first_s = st.t_factor_s;
      else
        refactor_s.push_back(st.t_factor_s);
      x = F.solve(b);
      const double berr = backward_error(A, x, b);
      worst = std::max(worst, berr);
      if (k % 10 == 0 || k == 49)
        std::printf("iteration %2d  mu %.3e  factor %.4f s  backward error %.2e\n", k, mu,
                    st.t_factor_s, berr);
    }
    std::sort(refactor_s.begin(), refactor_s.end());
    const double median = refactor_s[refactor_s.size() / 2];
    const starfront_stats st = F.stats();
    std::printf("n %lld, nnz(L) %lld, %lld factorisations; first %.4f s, median refactorisation "
                "%.4f s (ratio %.2f); worst backward error %.2e\n",
                static_cast<long long>(st.n), static_cast<long long>(st.nnz_l),
                static_cast<long long>(st.factorizations), first_s, median, median / first_s,
                worst);
    return worst < 1e-12 ? 0 : 1;
  } catch (const starfront::Error& e) {
    std::fprintf(stderr, "starfront error (%s): %s\n", e.status_name(), e.what());
    return 1;
  }
}
