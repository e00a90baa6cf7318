// Helpers shared by the GPU-kernel tests (tests/cuda): host buffers for every
// block of a task graph, and the matrices and factor comparisons of the
// fused-subtree tests.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <set>
#include <vector>

#include "api/solver.hpp"

namespace starfront::testing {

/// Host storage for every block of task graph G, as a sequential run uses
/// it: blocks of the factor (offset >= 0) point into Lx (P.factor_size()
/// doubles, zero), every other block (contribution blocks) gets its own zeroed
/// buffer of ld·cols doubles (at least one). base[b] is block b's first entry.
struct HostBlocks {
  explicit HostBlocks(const TaskGraph& G)
      : Lx(static_cast<std::size_t>(G.plan->factor_size()), 0.0), own(G.blocks.size()), base(G.blocks.size()) {
    for (std::size_t b = 0; b < G.blocks.size(); ++b) {
      const Block& k = G.blocks[b];
      if (k.offset >= 0) {
        base[b] = Lx.data() + k.offset;
      } else {
        own[b].assign(static_cast<std::size_t>(std::max<idx_t>(k.ld * k.cols, 1)), 0.0);
        base[b] = own[b].data();
      }
    }
  }
  std::vector<double> Lx;
  std::vector<std::vector<double>> own;
  std::vector<double*> base;
};

/// ‖a − b‖_F / ‖b‖_F (‖a − b‖_F when b is zero).
inline double frobenius_rel(const std::vector<double>& a, const std::vector<double>& b) {
  double num = 0, den = 0;
  for (std::size_t i = 0; i < a.size(); ++i) num += (a[i] - b[i]) * (a[i] - b[i]), den += b[i] * b[i];
  return den > 0 ? std::sqrt(num / den) : std::sqrt(num);
}

/// Sensitivity of the CPU factor of A (sequential executor, graph options
/// go, analysis options ao): ‖L(A') − L(A)‖_F/‖L(A)‖_F for A' = A with every entry multiplied by
/// (1 + 1e-15·u), u uniform in (-1, 1), seeded. Two backward-stable
/// factorisations that sum in different orders differ by about this much;
/// on ill-conditioned matrices (the condensed power-grid KKT systems, pivot
/// ratios near 1e-8) it is far above 1e-13, so the tests allow
/// max(1e-13, 10 × this) and print it.
inline double cpu_spread(const CscMatrix& A, const GraphOptions& go,
                         const AnalysisOptions& ao = AnalysisOptions{}) {
  Solver s1;
  EXPECT_TRUE(s1.analyse(A, ao, go).ok());
  EXPECT_TRUE(s1.factorize(A, FactorOptions{}, Executor::sequential).ok());
  const std::vector<double> ref = s1.factor().Lx;
  CscMatrix B = A;
  std::mt19937_64 rng(77);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (double& x : B.values) x *= 1.0 + 1e-15 * u(rng);
  EXPECT_TRUE(s1.factorize(B, FactorOptions{}, Executor::sequential).ok());
  return frobenius_rel(s1.factor().Lx, ref);
}

/// Random SPD matrix whose column j couples to up to `band` random earlier
/// columns within distance `band` (a random banded pattern): nested
/// dissection gives thousands of fronts of order < 2·band, the regime of the
/// fused kernel. Diagonally dominant, values uniform in (-1, 1).
inline CscMatrix random_banded_spd(idx_t n, idx_t band, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<idx_t> rows, cols;
  std::vector<double> vals, rowsum(n, 0.0);
  for (idx_t i = 1; i < n; ++i) {
    std::set<idx_t> js;
    const idx_t links = 1 + static_cast<idx_t>(rng() % 2);
    for (idx_t l = 0; l < links; ++l) js.insert(std::max<idx_t>(0, i - 1 - static_cast<idx_t>(rng() % band)));
    for (idx_t j : js) {
      const double v = u(rng);
      rows.push_back(i), cols.push_back(j), vals.push_back(v);
      rowsum[i] += std::fabs(v), rowsum[j] += std::fabs(v);
    }
  }
  for (idx_t i = 0; i < n; ++i) rows.push_back(i), cols.push_back(i), vals.push_back(rowsum[i] + 0.5 + 0.5 * (u(rng) + 1));
  CscMatrix A;
  lower_csc_from_triplets(n, rows, cols, vals, A);
  return A;
}

}  // namespace starfront::testing
