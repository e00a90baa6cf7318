// Out-of-tree consumer (C++17 layer): 1D Laplacian of order 500 (lower CSC,
// 1-based, int32), factorised twice (second time with a shifted diagonal),
// three right-hand sides at once.
#include <starfront/starfront.hpp>

#include <cmath>
#include <cstdio>
#include <vector>

int main() {
  const int32_t n = 500;
  std::vector<int32_t> ptr{1}, ind;
  std::vector<double> val;
  for (int32_t j = 0; j < n; ++j) {
    ind.push_back(j + 1);
    val.push_back(2.0);
    if (j + 1 < n) ind.push_back(j + 2), val.push_back(-1.0);
    ptr.push_back(static_cast<int32_t>(ind.size()) + 1);
  }
  try {
    starfront::Runtime rt;
    const auto A = starfront::Matrix::csc(n, ptr.data(), ind.data(), val.data(), STARFRONT_LOWER, 1);
    starfront::Factor F(rt, A);
    F.factorize(A);
    for (std::size_t p = 0; p < val.size(); ++p)
      if (val[p] == 2.0) val[p] = 3.0;  // A + I
    F.refactorize(val.data());
    std::vector<double> B(3 * n);
    for (int32_t k = 0; k < 3; ++k)  // B = (A + I)·X with X(:, k) = k + 1
      for (int32_t i = 0; i < n; ++i)
        B[i + k * n] = (k + 1.0) * (1.0 + ((i == 0 || i == n - 1) ? 1.0 : 0.0));
    F.solve(B.data(), 3);
    double err = 0;
    for (int32_t k = 0; k < 3; ++k)
      for (int32_t i = 0; i < n; ++i) err = std::fmax(err, std::fabs(B[i + k * n] - (k + 1.0)));
    std::printf("external C++: n %d, %lld factorisations, max error %.2e\n", n,
                static_cast<long long>(F.stats().factorizations), err);
    return err < 1e-9 ? 0 : 1;
  } catch (const starfront::Error& e) {
    std::fprintf(stderr, "starfront: %s: %s\n", e.status_name(), e.what());
    return 1;
  }
}
