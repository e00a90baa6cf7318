// The GPU TRSM of codelets/cuda/gpu_blas.hpp (recursive split, leaves by
// cuBLAS or by the register leaf kernel) against OpenBLAS's DTRSM on
// the host: seeded random operands (a well-conditioned lower triangle),
// shapes with and without splits, partial 64-row panels, leaf orders from 1
// to the kernel's largest and beyond it (clamped), leading dimensions larger
// than the rows: the padding rows of B and a column after its last hold a
// sentinel that must stay, L must stay as it was (its strictly upper
// triangle and padding hold NaN, which would spread into X if they entered
// the arithmetic).
// gpu_potrf_panel (DPOTRF and TRSM of a front's panel) against LAPACK's
// DPOTRF and OpenBLAS's DTRSM: panels of 1 to 2100 rows and 1 to 700
// columns (one and several 64-column blocks, partial last blocks, no rows
// below, 12 to 33 columns around the front task's limit of 32, the diagonal kernel's
// 16-column group edges), the strictly upper triangle zero afterwards, the
// padding rows untouched, and the failing column (LAPACK's info) for a
// negative and a NaN pivot in the first, a middle and a later block and in
// panels of at most 32 columns.
// gpu_potrf_panel_rows (the same in one launch) against the same
// references, for k up to its limit of 256 and up to 40,000 rows (more
// thread blocks than fit on the GPU at once); the same failing columns;
// calls queued back to back and on four streams at once equal a lone call
// bit for bit; sizes beyond its limits are refused.
// gpu_syrk_lower_update (the CB update C −= A·Bᵀ, lower triangle) against
// OpenBLAS's DGEMM, by its kernel, by cuBLAS and as chosen, its upper
// triangle and padding untouched; bad leading dimensions refused.
// Relative Frobenius error ≤ 1e-13 (the update: each entry within the
// rounding bound of its dot product). Skipped without a CUDA device (a
// failure under STARFRONT_REQUIRE_GPU=1).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <ostream>
#include <random>
#include <vector>

#include "common/cuda_test_util.hpp"

#ifdef STARFRONT_HAVE_CUDA
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include "cpu/blas.hpp"
#include "cuda/device_math.hpp"
#include "cuda/gpu_blas.hpp"
#include "cuda/gpu_syrk.hpp"
#endif

namespace starfront {
namespace {

#ifdef STARFRONT_HAVE_CUDA

/// Skips (or fails under STARFRONT_REQUIRE_GPU=1) without a CUDA device.
#define REQUIRE_CUDA_DEVICE()                                                         \
  do {                                                                                \
    int n_ = 0;                                                                       \
    if (cudaGetDeviceCount(&n_) != cudaSuccess || n_ == 0) {                          \
      if (::starfront::testing::gpu_required()) FAIL() << "no CUDA device";           \
      GTEST_SKIP() << "no CUDA device";                                               \
    }                                                                                 \
  } while (0)

/// A device copy of a host array; freed with the object.
struct DeviceArray {
  double* p = nullptr;
  std::size_t n = 0;
  explicit DeviceArray(const std::vector<double>& h) : n(h.size()) {
    EXPECT_EQ(cudaMalloc(&p, sizeof(double) * (n ? n : 1)), cudaSuccess);
    EXPECT_EQ(cudaMemcpy(p, h.data(), sizeof(double) * n, cudaMemcpyHostToDevice), cudaSuccess);
  }
  std::vector<double> get() const {
    std::vector<double> h(n);
    EXPECT_EQ(cudaMemcpy(h.data(), p, sizeof(double) * n, cudaMemcpyDeviceToHost), cudaSuccess);
    return h;
  }
  ~DeviceArray() { cudaFree(p); }
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;
};

struct Cublas {
  cublasHandle_t h = nullptr;
  Cublas() { EXPECT_EQ(cublasCreate(&h), CUBLAS_STATUS_SUCCESS); }
  ~Cublas() { cublasDestroy(h); }
};

constexpr double kSentinel = 12345.0;
const double kNaN = std::numeric_limits<double>::quiet_NaN();

/// Lower triangle of order n (leading dimension ld ≥ n): unit-scale random
/// entries below the diagonal divided by √n, diagonal in [1, 2]; NaN above
/// the diagonal and in the padding rows (must never be read).
std::vector<double> random_lower(int n, int ld, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(-1.0, 1.0), d(1.0, 2.0);
  std::vector<double> L(static_cast<std::size_t>(ld) * n, kNaN);
  for (int j = 0; j < n; ++j)
    for (int i = j; i < n; ++i) L[i + static_cast<std::size_t>(j) * ld] = i == j ? d(rng) : u(rng) / std::sqrt(n);
  return L;
}

/// m×n random values in (-1, 1), leading dimension ld ≥ m, padding rows = sentinel.
std::vector<double> random_dense(int m, int n, int ld, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<double> B(static_cast<std::size_t>(ld) * n, kSentinel);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i) B[i + static_cast<std::size_t>(j) * ld] = u(rng);
  return B;
}

/// ‖X − R‖_F / ‖R‖_F over the rows [0, m) and the columns [0, n) of arrays
/// with leading dimension ld; +inf when X holds a NaN there.
double rel_error(const std::vector<double>& X, const std::vector<double>& R, int m, int n, int ld) {
  double num = 0.0, den = 0.0;
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i) {
      const double x = X[i + static_cast<std::size_t>(j) * ld], r = R[i + static_cast<std::size_t>(j) * ld];
      if (std::isnan(x)) return std::numeric_limits<double>::infinity();
      num += (x - r) * (x - r);
      den += r * r;
    }
  return den > 0 ? std::sqrt(num / den) : std::sqrt(num);
}

struct Shape {
  int m, n, leaf;
  TrsmLeaf method;
};

/// GoogleTest's name for a shape (instead of the struct's bytes).
void PrintTo(const Shape& s, std::ostream* os) {
  *os << s.m << "x" << s.n << " leaf " << s.leaf << (s.method == TrsmLeaf::cublas ? " cublas" : " kernel");
}

class GpuTrsm : public ::testing::TestWithParam<Shape> {};

TEST_P(GpuTrsm, MatchesHostDtrsm) {
  REQUIRE_CUDA_DEVICE();
  const Shape sh = GetParam();
  std::mt19937_64 rng(1000 + 7 * sh.m + 13 * sh.n + sh.leaf + 101 * static_cast<int>(sh.method));
  const int ldl = sh.n + 3, ldb = sh.m + 5;
  const std::vector<double> L = random_lower(sh.n, ldl, rng);
  std::vector<double> B = random_dense(sh.m, sh.n, ldb, rng);
  B.resize(B.size() + static_cast<std::size_t>(ldb), kSentinel);  // a column after the n of B: never touched
  const GpuTrsmOptions o{sh.leaf, sh.method};
  DeviceArray dL(L), dB(B);
  Cublas c;
  ASSERT_EQ(gpu_trsm_right_lower_trans(c.h, sh.m, sh.n, dL.p, ldl, dB.p, ldb, o), CUBLAS_STATUS_SUCCESS);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  const std::vector<double> X = dB.get();
  const std::vector<double> L_after = dL.get();
  EXPECT_EQ(std::memcmp(L_after.data(), L.data(), sizeof(double) * L.size()), 0) << "L was written";
  for (int i = 0; i < ldb; ++i)
    ASSERT_EQ(X[i + static_cast<std::size_t>(sh.n) * ldb], kSentinel) << "column " << sh.n << " row " << i;
  if (sh.m > 0 && sh.n > 0)
    cblas_dtrsm(CblasColMajor, CblasRight, CblasLower, CblasTrans, CblasNonUnit, sh.m, sh.n, 1.0, L.data(), ldl,
                B.data(), ldb);
  EXPECT_LE(rel_error(X, B, sh.m, sh.n, ldb), 1e-13)
      << "m " << sh.m << " n " << sh.n << " leaf " << sh.leaf << " method " << static_cast<int>(sh.method);
  for (int j = 0; j < sh.n; ++j)
    for (int i = sh.m; i < ldb; ++i)
      ASSERT_EQ(X[i + static_cast<std::size_t>(j) * ldb], kSentinel) << "padding row " << i << " column " << j;
}

constexpr TrsmLeaf kCublas = TrsmLeaf::cublas, kKernel = TrsmLeaf::kernel;

INSTANTIATE_TEST_SUITE_P(
    Shapes, GpuTrsm,
    ::testing::Values(Shape{300, 257, 64, kCublas}, Shape{300, 257, 64, kKernel}, Shape{300, 257, 0, kCublas},
                      Shape{300, 257, 0, kKernel}, Shape{1, 200, 16, kKernel}, Shape{0, 50, 8, kKernel},
                      Shape{64, 1, 8, kKernel}, Shape{65, 100, 128, kKernel}, Shape{70, 9, 1, kKernel},
                      Shape{129, 128, 128, kKernel}, Shape{200, 127, 1000, kKernel}, Shape{700, 700, 100, kKernel},
                      Shape{1000, 1500, 128, kKernel}, Shape{2100, 1100, 64, kKernel},
                      Shape{2100, 1100, 128, kCublas}, Shape{5000, 300, 128, kKernel}));

/// A front's panel, m×k with leading dimension ld > m: P11 = L0·L0ᵀ for a
/// random well-conditioned lower L0 (random_lower), stored in the lower
/// triangle with zeros above it (as the assembly leaves it), P21 random in
/// (−1, 1), sentinel padding rows.
std::vector<double> random_panel(int m, int k, int ld, std::mt19937_64& rng) {
  const std::vector<double> L0 = random_lower(k, k, rng);
  std::vector<double> P = random_dense(m, k, ld, rng);
  for (int j = 0; j < k; ++j)
    for (int i = 0; i < k; ++i) {
      double a = 0.0;
      if (i >= j)
        for (int q = 0; q <= j; ++q)
          a += L0[i + static_cast<std::size_t>(q) * k] * L0[j + static_cast<std::size_t>(q) * k];
      P[i + static_cast<std::size_t>(j) * ld] = a;
    }
  return P;
}

struct PanelShape {
  int m, k;
};

void PrintTo(const PanelShape& s, std::ostream* os) { *os << s.m << "x" << s.k; }

/// The two panel factorisations: gpu_potrf_panel (blocks of 64 columns,
/// three launches a block) or gpu_potrf_panel_rows (one launch).
enum class PanelMethod { launches, rows };

/// Device words for gpu_potrf_panel_rows (kPanelRowsSyncInts), filled with
/// garbage: the call must zero what it uses.
struct SyncWords {
  int* p = nullptr;
  SyncWords() {
    EXPECT_EQ(cudaMalloc(&p, sizeof(int) * kPanelRowsSyncInts), cudaSuccess);
    EXPECT_EQ(cudaMemset(p, 0x5a, sizeof(int) * kPanelRowsSyncInts), cudaSuccess);
  }
  ~SyncWords() { cudaFree(p); }
  SyncWords(const SyncWords&) = delete;
  SyncWords& operator=(const SyncWords&) = delete;
};

/// Queues the panel factorisation of `how` on the handle's stream.
cublasStatus_t factor_panel(PanelMethod how, cublasHandle_t h, int m, int k, double* P, int ld, int* info,
                            int* sync) {
  if (how == PanelMethod::launches) return gpu_potrf_panel(h, m, k, P, ld, info);
  cudaStream_t stream = nullptr;
  if (cublasGetStream(h, &stream) != CUBLAS_STATUS_SUCCESS) return CUBLAS_STATUS_INTERNAL_ERROR;
  return gpu_potrf_panel_rows(stream, m, k, P, ld, info, sync);
}

/// The panel of shape sh, factorised on the GPU by `how`, against LAPACK's
/// DPOTRF and OpenBLAS's DTRSM (1e-13 relative), with the strictly upper
/// triangle zero and the padding rows untouched.
void check_panel(const PanelShape sh, PanelMethod how) {
  std::mt19937_64 rng(5000 + 7 * sh.m + 13 * sh.k + 3 * static_cast<int>(how));
  const int ld = sh.m + 3;
  std::vector<double> P = random_panel(sh.m, sh.k, ld, rng);
  DeviceArray dP(P);
  int* info = nullptr;
  ASSERT_EQ(cudaMalloc(&info, sizeof(int)), cudaSuccess);
  ASSERT_EQ(cudaMemset(info, 0x7f, sizeof(int)), cudaSuccess);  // must be overwritten with 0
  Cublas c;
  SyncWords sync;
  ASSERT_EQ(factor_panel(how, c.h, sh.m, sh.k, dP.p, ld, info, sync.p), CUBLAS_STATUS_SUCCESS);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  int h_info = -1;
  ASSERT_EQ(cudaMemcpy(&h_info, info, sizeof(int), cudaMemcpyDeviceToHost), cudaSuccess);
  cudaFree(info);
  EXPECT_EQ(h_info, 0);
  const std::vector<double> X = dP.get();
  ASSERT_EQ(LAPACKE_dpotrf(LAPACK_COL_MAJOR, 'L', sh.k, P.data(), ld), 0);
  if (sh.m > sh.k)
    cblas_dtrsm(CblasColMajor, CblasRight, CblasLower, CblasTrans, CblasNonUnit, sh.m - sh.k, sh.k, 1.0, P.data(),
                ld, P.data() + sh.k, ld);
  for (int j = 0; j < sh.k; ++j)
    for (int i = 0; i < j; ++i) P[i + static_cast<std::size_t>(j) * ld] = 0.0;  // the reference's upper triangle
  EXPECT_LE(rel_error(X, P, sh.m, sh.k, ld), 1e-13) << "m " << sh.m << " k " << sh.k;
  for (int j = 0; j < sh.k; ++j) {
    for (int i = 0; i < j; ++i)
      ASSERT_EQ(X[i + static_cast<std::size_t>(j) * ld], 0.0) << "upper (" << i << ", " << j << ")";
    for (int i = sh.m; i < ld; ++i)
      ASSERT_EQ(X[i + static_cast<std::size_t>(j) * ld], kSentinel) << "padding row " << i << " column " << j;
  }
}

class GpuPotrfPanel : public ::testing::TestWithParam<PanelShape> {};

TEST_P(GpuPotrfPanel, MatchesLapackDpotrfAndDtrsm) {
  REQUIRE_CUDA_DEVICE();
  check_panel(GetParam(), PanelMethod::launches);
}

class GpuPotrfPanelRows : public ::testing::TestWithParam<PanelShape> {};

TEST_P(GpuPotrfPanelRows, MatchesLapackDpotrfAndDtrsm) {
  REQUIRE_CUDA_DEVICE();
  check_panel(GetParam(), PanelMethod::rows);
}

// k from 1 to the kernel's limit of 256: one and several 32-column blocks,
// partial last blocks (rows below the diagonal block in the same tile),
// square panels, a partial last tile of rows, and 40,000 rows (1,250
// thread blocks of 104 KiB shared memory each: more than the GPU holds at
// once, so later tiles wait for earlier ones that must finish first).
// Panels of more tiles than the device has multiprocessors run the
// chunked kernel, the others the unchunked one (gpu_potrf_panel_rows).
INSTANTIATE_TEST_SUITE_P(Shapes, GpuPotrfPanelRows,
                         ::testing::Values(PanelShape{1, 1}, PanelShape{8, 8}, PanelShape{40, 3}, PanelShape{31, 31},
                                           PanelShape{32, 32}, PanelShape{33, 32}, PanelShape{64, 33},
                                           PanelShape{65, 64}, PanelShape{130, 65}, PanelShape{129, 129},
                                           PanelShape{1000, 89}, PanelShape{897, 100}, PanelShape{1306, 128},
                                           PanelShape{300, 200}, PanelShape{2209, 255}, PanelShape{256, 256},
                                           PanelShape{257, 256}, PanelShape{5000, 256}, PanelShape{700, 12},
                                           PanelShape{40000, 256}, PanelShape{40000, 70},
                                           // more tiles than an H100/H200 has multiprocessors
                                           // (the chunked kernel): k off 32 and 64, several chunks
                                           PanelShape{6000, 100}, PanelShape{6000, 255},
                                           PanelShape{9000, 129}));

INSTANTIATE_TEST_SUITE_P(Shapes, GpuPotrfPanel,
                         ::testing::Values(PanelShape{1, 1}, PanelShape{8, 8}, PanelShape{40, 3}, PanelShape{64, 64},
                                           PanelShape{65, 64}, PanelShape{130, 65}, PanelShape{129, 129},
                                           PanelShape{1000, 89}, PanelShape{700, 700}, PanelShape{2100, 300},
                                           PanelShape{1500, 128}, PanelShape{300, 200},
                                           // the front task's range (k ≤ 32) and the kernel's
                                           // 16-column groups' edges
                                           PanelShape{700, 12}, PanelShape{300, 16}, PanelShape{300, 17},
                                           PanelShape{200, 31}, PanelShape{200, 32}, PanelShape{200, 33},
                                           PanelShape{100, 48}, PanelShape{100, 49}, PanelShape{500, 112},
                                           PanelShape{500, 113}));

/// A pivot that is not > 0 in column `bad` (a negative Schur complement, or
/// NaN) gives LAPACK's info convention's bad + 1.
TEST(GpuPotrfPanelFailure, FailingPivotGivesLapackInfo) {
  REQUIRE_CUDA_DEVICE();
  struct Case {
    int m, k, bad;
  };
  const Case cases[] = {{400, 150, 0}, {400, 150, 5}, {400, 150, 63},  {400, 150, 64}, {400, 150, 100},
                        {400, 150, 149}, {100, 20, 0}, {100, 20, 15}, {100, 20, 16}, {100, 20, 19},
                        {32, 32, 31},   {50, 9, 8}, {1000, 256, 31}, {1000, 256, 32}, {1000, 256, 255},
                        {3000, 200, 199}, {300, 96, 95}, {6000, 256, 100}, {6000, 200, 199}};
  for (const PanelMethod how : {PanelMethod::launches, PanelMethod::rows})
  for (const bool nan : {false, true})
    for (const Case& cs : cases) {
      const int m = cs.m, k = cs.k, bad = cs.bad, ld = m;
      std::mt19937_64 rng(77 + bad + 1000 * k);
      std::vector<double> P = random_panel(m, k, ld, rng);
      double& d = P[bad + static_cast<std::size_t>(bad) * ld];
      d = nan ? kNaN : d - 10.0;
      DeviceArray dP(P);
      int* info = nullptr;
      ASSERT_EQ(cudaMalloc(&info, sizeof(int)), cudaSuccess);
      ASSERT_EQ(cudaMemset(info, 0x7f, sizeof(int)), cudaSuccess);  // must be overwritten
      Cublas c;
      SyncWords sync;
      ASSERT_EQ(factor_panel(how, c.h, m, k, dP.p, ld, info, sync.p), CUBLAS_STATUS_SUCCESS);
      ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
      int h_info = -1;
      ASSERT_EQ(cudaMemcpy(&h_info, info, sizeof(int), cudaMemcpyDeviceToHost), cudaSuccess);
      cudaFree(info);
      // LAPACK's info for the negative pivot (LAPACKE refuses a matrix
      // holding a NaN with info −4, so the NaN case expects bad + 1 directly).
      if (!nan) {
        EXPECT_EQ(LAPACKE_dpotrf(LAPACK_COL_MAJOR, 'L', k, P.data(), ld), bad + 1) << "the test's matrix";
      }
      EXPECT_EQ(h_info, bad + 1) << (nan ? "NaN" : "negative") << " pivot in column " << bad << " of " << m << "x"
                                 << k << (how == PanelMethod::rows ? " (rows kernel)" : "");
    }
}

/// Many panels queued back to back on one stream with the same sync words
/// (each call must reset them), and on four streams at once with their own:
/// every result equals a lone call's bit for bit (the kernel's arithmetic
/// does not depend on which thread block takes which tile).
TEST(GpuPotrfPanelRows, QueuedCallsAndConcurrentStreamsEqualALoneCall) {
  REQUIRE_CUDA_DEVICE();
  const PanelShape shapes[] = {{1306, 128}, {897, 100}, {2209, 255}, {700, 33}, {5000, 200}};
  std::mt19937_64 rng(911);
  std::vector<std::vector<double>> host, expect;
  for (const PanelShape& sh : shapes) host.push_back(random_panel(sh.m, sh.k, sh.m, rng));
  int* info = nullptr;
  ASSERT_EQ(cudaMalloc(&info, sizeof(int) * 64), cudaSuccess);
  {
    SyncWords sync;
    for (std::size_t i = 0; i < host.size(); ++i) {
      DeviceArray d(host[i]);
      ASSERT_EQ(gpu_potrf_panel_rows(nullptr, shapes[i].m, shapes[i].k, d.p, shapes[i].m, info, sync.p),
                CUBLAS_STATUS_SUCCESS);
      ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
      expect.push_back(d.get());
    }
  }
  constexpr int kStreams = 4, kRounds = 6, kShapes = static_cast<int>(sizeof shapes / sizeof shapes[0]);
  cudaStream_t st[kStreams];
  for (cudaStream_t& x : st) ASSERT_EQ(cudaStreamCreateWithFlags(&x, cudaStreamNonBlocking), cudaSuccess);
  std::vector<std::unique_ptr<SyncWords>> sync;
  std::vector<std::unique_ptr<DeviceArray>> arrays;
  for (int s = 0; s < kStreams; ++s) sync.push_back(std::make_unique<SyncWords>());
  // Every operand is on the device before the first launch (the copies
  // run on the legacy stream, which the non-blocking streams ignore).
  for (int r = 0; r < kRounds; ++r)
    for (int s = 0; s < kStreams; ++s)
      arrays.push_back(std::make_unique<DeviceArray>(host[static_cast<std::size_t>((r + s) % kShapes)]));
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  for (int r = 0; r < kRounds; ++r)
    for (int s = 0; s < kStreams; ++s) {
      const std::size_t i = static_cast<std::size_t>((r + s) % kShapes);
      ASSERT_EQ(gpu_potrf_panel_rows(st[s], shapes[i].m, shapes[i].k, arrays[static_cast<std::size_t>(r * kStreams + s)]->p, shapes[i].m,
                                     info + 1 + r * kStreams + s, sync[static_cast<std::size_t>(s)]->p),
                CUBLAS_STATUS_SUCCESS);
    }
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  std::vector<int> h_info(64, -1);
  ASSERT_EQ(cudaMemcpy(h_info.data(), info, sizeof(int) * 64, cudaMemcpyDeviceToHost), cudaSuccess);
  for (int r = 0; r < kRounds; ++r)
    for (int s = 0; s < kStreams; ++s) {
      const std::size_t i = static_cast<std::size_t>((r + s) % kShapes);
      EXPECT_EQ(h_info[static_cast<std::size_t>(1 + r * kStreams + s)], 0);
      const std::vector<double> X = arrays[static_cast<std::size_t>(r * kStreams + s)]->get();
      EXPECT_EQ(std::memcmp(X.data(), expect[i].data(), sizeof(double) * X.size()), 0)
          << "round " << r << " stream " << s << " panel " << shapes[i].m << "x" << shapes[i].k;
    }
  for (cudaStream_t x : st) cudaStreamDestroy(x);
  cudaFree(info);
}

TEST(GpuPotrfPanelFailure, RejectsBadSizes) {
  REQUIRE_CUDA_DEVICE();
  Cublas c;
  EXPECT_EQ(gpu_potrf_panel_rows(nullptr, 5, 6, nullptr, 5, nullptr, nullptr), CUBLAS_STATUS_INVALID_VALUE);
  EXPECT_EQ(gpu_potrf_panel_rows(nullptr, 5, -1, nullptr, 5, nullptr, nullptr), CUBLAS_STATUS_INVALID_VALUE);
  EXPECT_EQ(gpu_potrf_panel_rows(nullptr, 6, 5, nullptr, 5, nullptr, nullptr), CUBLAS_STATUS_INVALID_VALUE);
  EXPECT_EQ(gpu_potrf_panel_rows(nullptr, 300, kPanelRowsMaxK + 1, nullptr, 300, nullptr, nullptr),
            CUBLAS_STATUS_INVALID_VALUE);
  EXPECT_EQ(gpu_potrf_panel_rows(nullptr, 5, 0, nullptr, 5, nullptr, nullptr), CUBLAS_STATUS_SUCCESS);
  // The shared-memory check: sizes outside the kernel's range never fit;
  // k = 32 needs 32 KiB (no opt-in); k = 256 fits exactly when the device's
  // opt-in limit holds 32·(256 + 128) + 32² doubles.
  EXPECT_FALSE(gpu_potrf_panel_rows_fits(-1));
  EXPECT_FALSE(gpu_potrf_panel_rows_fits(kPanelRowsMaxK + 1));
  EXPECT_TRUE(gpu_potrf_panel_rows_fits(32));
  int dev = 0, optin = 0;
  ASSERT_EQ(cudaGetDevice(&dev), cudaSuccess);
  ASSERT_EQ(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev), cudaSuccess);
  EXPECT_EQ(gpu_potrf_panel_rows_fits(kPanelRowsMaxK),
            static_cast<long long>(sizeof(double)) * (32 * (kPanelRowsMaxK + 128) + 32 * 32) <= optin);
  EXPECT_EQ(gpu_potrf_panel_rows_blocks_per_sm(-1), 0);
  EXPECT_EQ(gpu_potrf_panel_rows_blocks_per_sm(kPanelRowsMaxK + 1), 0);
  // Two tiles a multiprocessor at k = 256 where the device has room for
  // them (shared memory and registers), as on the H100 and H200.
  int per_sm = 0;
  ASSERT_EQ(cudaDeviceGetAttribute(&per_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor, dev), cudaSuccess);
  if (per_sm >= 2 * (static_cast<int>(sizeof(double)) * (32 * (kPanelRowsMaxK + 128) + 32 * 32) + 2048)) {
    EXPECT_GE(gpu_potrf_panel_rows_blocks_per_sm(kPanelRowsMaxK), 2)
        << "potrf_rows_kernel uses more than 128 registers a thread, or the carve-out was refused";
  }
  EXPECT_GE(gpu_potrf_panel_rows_blocks_per_sm(32), 2);
  EXPECT_EQ(gpu_potrf_panel(c.h, 5, 6, nullptr, 5, nullptr), CUBLAS_STATUS_INVALID_VALUE);
  EXPECT_EQ(gpu_potrf_panel(c.h, 5, -1, nullptr, 5, nullptr), CUBLAS_STATUS_INVALID_VALUE);
  EXPECT_EQ(gpu_potrf_panel(c.h, 6, 5, nullptr, 5, nullptr), CUBLAS_STATUS_INVALID_VALUE);  // ld < m
  EXPECT_EQ(gpu_potrf_panel(c.h, 5, 0, nullptr, 5, nullptr), CUBLAS_STATUS_SUCCESS);
  const GpuTrsmOptions o;
  EXPECT_EQ(gpu_trsm_right_lower_trans(c.h, 10, 4, nullptr, 3, nullptr, 10, o), CUBLAS_STATUS_INVALID_VALUE);  // ldl < n
  EXPECT_EQ(gpu_trsm_right_lower_trans(c.h, 10, 4, nullptr, 4, nullptr, 9, o), CUBLAS_STATUS_INVALID_VALUE);  // ldb < m
  EXPECT_EQ(gpu_trsm_right_lower_trans(c.h, 0, 4, nullptr, 0, nullptr, 0, o), CUBLAS_STATUS_SUCCESS);
}

/// The fused kernel's reciprocal square root with the short chain
/// (rsqrt_fast, device_math.cuh) equals rsqrt_chain bit for bit, on the
/// special values (zeros, negatives, subnormals, the normal range's ends,
/// infinities, NaN) and on seeded random values over the whole exponent
/// range; on normal values rsqrt_fast is within a relative 2.3e-16 (about 1
/// ulp) of 1/sqrt in long double.
TEST(GpuDeviceMath, RsqrtFastEqualsRsqrtChainBitForBit) {
  REQUIRE_CUDA_DEVICE();
  const double dmin = std::numeric_limits<double>::min(), dmax = std::numeric_limits<double>::max();
  const double tiny = std::numeric_limits<double>::denorm_min(), inf = std::numeric_limits<double>::infinity();
  std::vector<double> d = {0.0,  -0.0,          -1.0,        1.0,          4.0,        0.25,       tiny,
                           2 * tiny, dmin / 2,  std::nextafter(dmin, 0.0), dmin,  std::nextafter(dmin, 1.0),
                           dmax, std::nextafter(dmax, 0.0), inf,          -inf,       std::nan(""), -dmin};
  const unsigned seed = std::random_device{}();
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> mant(1.0, 2.0);
  std::uniform_int_distribution<int> expo(-1074, 1023);
  for (int i = 0; i < 20000; ++i) d.push_back(std::ldexp(mant(rng), expo(rng)));
  const int n = static_cast<int>(d.size());
  DeviceArray dd(d), fast(std::vector<double>(d.size(), 0.0)), chain(std::vector<double>(d.size(), 0.0));
  ASSERT_EQ(launch_rsqrt_compare(dd.p, fast.p, chain.p, n, nullptr), cudaSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  std::vector<double> hf(d.size()), hc(d.size());
  ASSERT_EQ(cudaMemcpy(hf.data(), fast.p, sizeof(double) * d.size(), cudaMemcpyDeviceToHost), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(hc.data(), chain.p, sizeof(double) * d.size(), cudaMemcpyDeviceToHost), cudaSuccess);
  int checked_normal = 0;
  for (int i = 0; i < n; ++i) {
    std::uint64_t bf = 0, bc = 0;
    std::memcpy(&bf, &hf[i], 8);
    std::memcpy(&bc, &hc[i], 8);
    ASSERT_EQ(bf, bc) << "d = " << d[i] << " (index " << i << ", seed " << seed << "): rsqrt_fast " << hf[i]
                      << ", rsqrt_chain " << hc[i];
    if (d[i] >= dmin && d[i] <= dmax) {
      const long double ref = 1.0L / std::sqrt(static_cast<long double>(d[i]));
      EXPECT_LE(std::fabs(static_cast<long double>(hf[i]) - ref) / ref, 2.3e-16L)
          << "d = " << d[i] << " (seed " << seed << ")";
      ++checked_normal;
    }
  }
  EXPECT_GT(checked_normal, 19000);
  EXPECT_EQ(launch_rsqrt_compare(dd.p, fast.p, chain.p, -1, nullptr), cudaErrorInvalidValue);
  EXPECT_EQ(launch_rsqrt_compare(nullptr, fast.p, chain.p, 1, nullptr), cudaErrorInvalidValue);
  EXPECT_EQ(launch_rsqrt_compare(nullptr, nullptr, nullptr, 0, nullptr), cudaSuccess);
}

/// gpu_syrk_lower_update (C −= A·Bᵀ on C's lower triangle) against
/// OpenBLAS's DGEMM on the host, for every method: orders and ranks around
/// the kernel's 64×64 tiles and 16-column chunks (1, 63, 64, 65, ...),
/// leading dimensions larger than n, B = A (DSYRK) and B ≠ A (DSYRKX), the
/// kernel by both tile orders. A's and B's padding rows and C's strictly
/// upper triangle hold NaN (never read), C's padding rows a sentinel (never
/// written); each entry on and below the diagonal within (k + 2)·2u·(|C| +
/// |A|·|B|ᵀ) of the reference.
struct SyrkShape {
  int n, k;
  SyrkMethod method;
  bool same;  ///< B = A
};

void PrintTo(const SyrkShape& s, std::ostream* os) {
  *os << "n " << s.n << " k " << s.k
      << (s.method == SyrkMethod::kernel ? " kernel" : s.method == SyrkMethod::cublas ? " cublas" : " automatic")
      << (s.same ? " B=A" : " B!=A");
}

class GpuSyrk : public ::testing::TestWithParam<SyrkShape> {};

TEST_P(GpuSyrk, MatchesHostDgemmOnTheLowerTriangle) {
  REQUIRE_CUDA_DEVICE();
  const SyrkShape sh = GetParam();
  const unsigned seed = std::random_device{}();
  std::mt19937_64 rng(seed);
  const int lda = sh.n + 3, ldb = sh.n + 1, ldc = sh.n + 2;
  std::vector<double> A = random_dense(sh.n, sh.k, lda, rng), B = random_dense(sh.n, sh.k, ldb, rng);
  for (std::vector<double>* X : {&A, &B}) {
    const int ld = X == &A ? lda : ldb;
    for (int j = 0; j < sh.k; ++j)
      for (int i = sh.n; i < ld; ++i) (*X)[i + static_cast<std::size_t>(j) * ld] = kNaN;
  }
  // C's strictly upper triangle holds NaN (never read: it would spread into
  // the result), its padding rows the sentinel (never written).
  std::vector<double> C = random_dense(sh.n, sh.n, ldc, rng);
  for (int j = 1; j < sh.n; ++j)
    for (int i = 0; i < j; ++i) C[i + static_cast<std::size_t>(j) * ldc] = kNaN;
  // Reference: the whole product by DGEMM, and |A|·|B|ᵀ for the entrywise
  // bound (k + 2)·2u·(|C| + |A|·|B|ᵀ) of a dot product's rounding (Higham,
  // "Accuracy and Stability of Numerical Algorithms", §3.1), on both sides.
  const std::vector<double>& Bh = sh.same ? A : B;
  const int ldbh = sh.same ? lda : ldb;
  std::vector<double> full(static_cast<std::size_t>(sh.n) * sh.n, 0.0), absA(A.size()), absB(Bh.size()),
      scale(static_cast<std::size_t>(sh.n) * sh.n, 0.0);
  for (std::size_t e = 0; e < A.size(); ++e) absA[e] = std::isnan(A[e]) ? 0.0 : std::fabs(A[e]);
  for (std::size_t e = 0; e < Bh.size(); ++e) absB[e] = std::isnan(Bh[e]) ? 0.0 : std::fabs(Bh[e]);
  std::vector<double> Ah = A, Bz = Bh;  // DGEMM on the host with the NaN padding zeroed
  for (std::size_t e = 0; e < Ah.size(); ++e) Ah[e] = std::isnan(Ah[e]) ? 0.0 : Ah[e];
  for (std::size_t e = 0; e < Bz.size(); ++e) Bz[e] = std::isnan(Bz[e]) ? 0.0 : Bz[e];
  cblas_dgemm(CblasColMajor, CblasNoTrans, CblasTrans, sh.n, sh.n, sh.k, 1.0, Ah.data(), lda, Bz.data(), ldbh, 0.0,
              full.data(), sh.n);
  cblas_dgemm(CblasColMajor, CblasNoTrans, CblasTrans, sh.n, sh.n, sh.k, 1.0, absA.data(), lda, absB.data(), ldbh,
              0.0, scale.data(), sh.n);
  const double tol = (sh.k + 2) * 2.3e-16;
  // The kernel by both tile orders; cuBLAS and the automatic choice once.
  const std::vector<int> tiles = sh.method == SyrkMethod::kernel ? std::vector<int>{32, 64} : std::vector<int>{0};
  for (int tile : tiles) {
    DeviceArray dA(A), dB(B), dC(C);
    Cublas c;
    const double* b = sh.same ? dA.p : dB.p;
    ASSERT_EQ(gpu_syrk_lower_update(c.h, sh.n, sh.k, dA.p, lda, b, ldbh, dC.p, ldc, sh.method, tile),
              CUBLAS_STATUS_SUCCESS);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    const std::vector<double> got = dC.get();
    double worst = 0.0;
    for (int j = 0; j < sh.n; ++j)
      for (int i = 0; i < ldc; ++i) {
        const std::size_t e = i + static_cast<std::size_t>(j) * ldc, f = i + static_cast<std::size_t>(j) * sh.n;
        if (i >= sh.n) {
          ASSERT_EQ(got[e], kSentinel) << "padding row " << i << " of column " << j << " written, tile " << tile;
        } else if (i < j) {
          ASSERT_TRUE(std::isnan(got[e])) << "entry (" << i << ", " << j << ") above the diagonal written, tile "
                                          << tile;
        } else {
          ASSERT_FALSE(std::isnan(got[e])) << "(" << i << ", " << j << "), tile " << tile;
          const double r = C[e] - full[f], bound = tol * (std::fabs(C[e]) + scale[f]);
          worst = std::max(worst, std::fabs(got[e] - r) / bound);
        }
      }
    EXPECT_LE(worst, 1.0) << "n " << sh.n << " k " << sh.k << " method " << static_cast<int>(sh.method) << " tile "
                          << tile << " seed " << seed << ": the largest error over its entrywise bound";
  }
}

constexpr SyrkMethod kSyrkKernel = SyrkMethod::kernel, kSyrkCublas = SyrkMethod::cublas,
                     kSyrkAuto = SyrkMethod::automatic;

INSTANTIATE_TEST_SUITE_P(
    Shapes, GpuSyrk,
    ::testing::Values(SyrkShape{1, 1, kSyrkKernel, true}, SyrkShape{1, 17, kSyrkKernel, false},
                      SyrkShape{63, 1, kSyrkKernel, true}, SyrkShape{64, 16, kSyrkKernel, true},
                      SyrkShape{65, 17, kSyrkKernel, false}, SyrkShape{130, 33, kSyrkKernel, true},
                      SyrkShape{129, 15, kSyrkKernel, false}, SyrkShape{640, 45, kSyrkKernel, true},
                      SyrkShape{801, 95, kSyrkKernel, false}, SyrkShape{300, 1000, kSyrkKernel, true},
                      SyrkShape{640, 45, kSyrkCublas, true}, SyrkShape{640, 45, kSyrkCublas, false},
                      SyrkShape{1117, 190, kSyrkAuto, true}, SyrkShape{2100, 700, kSyrkAuto, true}));

/// Bad sizes are refused with nothing queued; empty updates succeed.
TEST(GpuSyrk, RejectsBadSizes) {
  REQUIRE_CUDA_DEVICE();
  Cublas c;
  for (SyrkMethod how : {kSyrkKernel, kSyrkCublas, kSyrkAuto}) {
    EXPECT_EQ(gpu_syrk_lower_update(c.h, 10, 2, nullptr, 9, nullptr, 10, nullptr, 10, how),
              CUBLAS_STATUS_INVALID_VALUE);
    EXPECT_EQ(gpu_syrk_lower_update(c.h, 10, 2, nullptr, 10, nullptr, 9, nullptr, 10, how),
              CUBLAS_STATUS_INVALID_VALUE);
    EXPECT_EQ(gpu_syrk_lower_update(c.h, 10, 2, nullptr, 10, nullptr, 10, nullptr, 9, how),
              CUBLAS_STATUS_INVALID_VALUE);
    EXPECT_EQ(gpu_syrk_lower_update(c.h, 10, 2, nullptr, 10, nullptr, 10, nullptr, 10, how, 48),
              CUBLAS_STATUS_INVALID_VALUE);
    EXPECT_EQ(gpu_syrk_lower_update(c.h, 0, 5, nullptr, 0, nullptr, 0, nullptr, 0, how), CUBLAS_STATUS_SUCCESS);
    EXPECT_EQ(gpu_syrk_lower_update(c.h, 5, 0, nullptr, 5, nullptr, 5, nullptr, 5, how), CUBLAS_STATUS_SUCCESS);
  }
}

#else

TEST(GpuTrsm, NeedsCudaCodelets) {
  if (testing::gpu_required()) FAIL() << "CUDA codelets not built";
  GTEST_SKIP() << "CUDA codelets not built";
}

#endif

}  // namespace
}  // namespace starfront
