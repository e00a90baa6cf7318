// Issue 10, leak and stability check: 1000 analyse / factorise / solve / free
// cycles and 1000 refactorise / solve cycles on a 5041-row SPD matrix (the 2D
// 5-point Laplacian of a 71×71 grid) on StarPU, every solution checked, with
// memory flat: the resident set (VmRSS) and its peak (VmHWM) of
// /proc/self/status at the last cycle within 1% of their values at cycle 100.
//
// Under AddressSanitizer (tools/run-tests.sh --sanitize) the loops are cut to
// kSanitizerCycles and the memory figures are not compared (the sanitizer's
// quarantine keeps freed memory resident on purpose); LeakSanitizer then
// checks at the process exit that the shorter loop leaked nothing.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "api/solver.hpp"
#include "runtime/starpu/runtime.hpp"
#include "solve/solve.hpp"
#include "sparse/generators.hpp"

#if defined(__SANITIZE_ADDRESS__)
#define STARFRONT_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define STARFRONT_TEST_ASAN 1
#endif
#endif

namespace starfront {
namespace {

#ifdef STARFRONT_TEST_ASAN
constexpr int kCycles = 20;  // kSanitizerCycles
constexpr int kBaselineCycle = 10;
constexpr bool kCheckMemory = false;
#else
constexpr int kCycles = 1000;
constexpr int kBaselineCycle = 100;
constexpr bool kCheckMemory = true;
#endif

/// VmRSS and VmHWM of this process, in kB (0 when /proc is unreadable).
struct Memory {
  long rss_kb = 0, hwm_kb = 0;
};

Memory memory_now() {
  Memory m;
  std::ifstream f("/proc/self/status");
  std::string key;
  long value = 0;
  while (f >> key) {
    if (key == "VmRSS:" && f >> value) m.rss_kb = value;
    else if (key == "VmHWM:" && f >> value) m.hwm_kb = value;
  }
  return m;
}

/// Baseline and final memory must be within 1%.
void expect_flat(const Memory& base, const Memory& last) {
  std::printf("VmRSS %ld -> %ld kB, VmHWM %ld -> %ld kB (cycle %d -> %d)\n", base.rss_kb,
              last.rss_kb, base.hwm_kb, last.hwm_kb, kBaselineCycle, kCycles);
  if (!kCheckMemory) return;
  ASSERT_GT(base.rss_kb, 0) << "cannot read /proc/self/status";
  EXPECT_LE(last.rss_kb, base.rss_kb * 1.01)
      << "VmRSS grew from " << base.rss_kb << " kB (cycle " << kBaselineCycle << ") to "
      << last.rss_kb << " kB (cycle " << kCycles << ")";
  EXPECT_LE(last.hwm_kb, base.hwm_kb * 1.01)
      << "VmHWM grew from " << base.hwm_kb << " kB (cycle " << kBaselineCycle << ") to "
      << last.hwm_kb << " kB (cycle " << kCycles << ")";
}

class Stability : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(laplace2d(71, A_).ok());
    ASSERT_EQ(A_.n, 5041);
    x_true_.resize(A_.n);
    for (idx_t i = 0; i < A_.n; ++i) x_true_[i] = 1.0 + std::sin(static_cast<double>(i));
    const Status st = StarpuRuntime::start(RuntimeOptions{2, 0, "lws"}, rt_);
    ASSERT_TRUE(st.ok()) << st.message;
  }
  void TearDown() override { rt_.reset(); }

  /// Solves with `solver` (factorised) for b = A·x_true; checks the backward error.
  void solve_and_check(const Solver& solver, const CscMatrix& A, int cycle) {
    std::vector<double> b(A.n);
    symmetric_matvec(A, x_true_.data(), b.data());
    std::vector<double> x = b;
    const Status st = solver.solve(x.data(), 1, A.n);
    ASSERT_TRUE(st.ok()) << "cycle " << cycle << ": " << st.message;
    ASSERT_LE(backward_error(A, x.data(), b.data()), 1e-14) << "cycle " << cycle;
  }

  CscMatrix A_;
  std::vector<double> x_true_;
  std::unique_ptr<StarpuRuntime> rt_;
};

TEST_F(Stability, AnalyseFactoriseSolveFreeCyclesKeepMemoryFlat) {
  Memory base;
  for (int cycle = 1; cycle <= kCycles; ++cycle) {
    {
      auto solver = std::make_unique<Solver>();
      AnalysisOptions ao;
      ao.ordering = OrderingMethod::scotch_nd;  // one Scotch run (scotch runs two)
      Status st = solver->analyse(A_, ao);
      ASSERT_TRUE(st.ok()) << "cycle " << cycle << ": " << st.message;
      st = solver->factorize(A_, FactorOptions{}, Executor::starpu);
      ASSERT_TRUE(st.ok()) << "cycle " << cycle << ": " << st.message;
      solve_and_check(*solver, A_, cycle);
    }  // freed
    if (cycle == kBaselineCycle) base = memory_now();
  }
  expect_flat(base, memory_now());
}

TEST_F(Stability, RefactoriseSolveCyclesKeepMemoryFlat) {
  Solver solver;
  ASSERT_TRUE(solver.analyse(A_, AnalysisOptions{}).ok());
  CscMatrix A = A_;
  Memory base;
  for (int cycle = 1; cycle <= kCycles; ++cycle) {
    // New values on the same pattern: the diagonal shifted by 0..0.6.
    for (idx_t j = 0; j < A.n; ++j)
      A.values[A.colptr[j]] = A_.values[A_.colptr[j]] + 0.1 * (cycle % 7);
    const Status st = solver.factorize(A, FactorOptions{}, Executor::starpu);
    ASSERT_TRUE(st.ok()) << "cycle " << cycle << ": " << st.message;
    solve_and_check(solver, A, cycle);
    if (cycle == kBaselineCycle) base = memory_now();
  }
  expect_flat(base, memory_now());
}

}  // namespace
}  // namespace starfront
