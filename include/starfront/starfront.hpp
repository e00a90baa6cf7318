// starfront C++17 layer: header-only RAII wrappers over the C API
// (starfront.h). Every failing C call becomes a starfront::Error carrying the
// status, the failing column (caller's numbering and base, or -1) and the
// message; exceptions exist only in this header, never across the C API.
//
//   starfront::Runtime rt;                                  // starts StarPU
//   auto A = starfront::Matrix::csc(n, colptr, rowind, values);  // lower, 0-based
//   starfront::Factor F(rt, A);                             // analyse
//   F.factorize(A);                                         // or F.refactorize(values)
//   F.solve(b.data());                                      // b := A⁻¹ b
//
// Thread safety is the C API's: one Runtime per process; distinct Factor
// objects may be used from different threads at once.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "starfront/starfront.h"

namespace starfront {

/// A failed starfront call.
class Error : public std::runtime_error {
 public:
  Error(starfront_status status, int64_t column, double pivot, const std::string& message)
      : std::runtime_error(message), status_(status), column_(column), pivot_(pivot) {}
  starfront_status status() const noexcept { return status_; }
  const char* status_name() const noexcept { return starfront_status_name(status_); }
  /// Failing column of a not-positive-definite matrix (caller's base), or -1.
  int64_t column() const noexcept { return column_; }
  double pivot() const noexcept { return pivot_; }

 private:
  starfront_status status_;
  int64_t column_;
  double pivot_;
};

namespace detail {
/// Throws Error with the thread's last-error details when st is not OK.
inline void check(starfront_status st) {
  if (st == STARFRONT_OK) return;
  starfront_error_info info;
  starfront_last_error_info(&info);
  throw Error(st, info.column, info.pivot, info.message ? info.message : "");
}

template <class I>
constexpr starfront_index_type index_type_of() {
  static_assert(std::is_same_v<I, int32_t> || std::is_same_v<I, int64_t>,
                "starfront indices are int32_t or int64_t");
  return std::is_same_v<I, int32_t> ? STARFRONT_INT32 : STARFRONT_INT64;
}
}  // namespace detail

/// A view of the caller's sparse arrays (nothing is copied or owned).
struct Matrix {
  starfront_matrix desc;

  /// CSC arrays: ptr (n+1), ind (row indices), values (may be nullptr for analysis).
  template <class I>
  static Matrix csc(int64_t n, const I* ptr, const I* ind, const double* values,
                    starfront_triangle triangle = STARFRONT_LOWER, int base = 0) {
    return make<I>(STARFRONT_CSC, n, ptr, ind, values, triangle, base);
  }
  /// CSR arrays: ptr (n+1), ind (column indices), values.
  template <class I>
  static Matrix csr(int64_t n, const I* ptr, const I* ind, const double* values,
                    starfront_triangle triangle = STARFRONT_LOWER, int base = 0) {
    return make<I>(STARFRONT_CSR, n, ptr, ind, values, triangle, base);
  }
  /// The same arrays with other values.
  Matrix with_values(const double* values) const {
    Matrix m = *this;
    m.desc.values = values;
    return m;
  }

 private:
  template <class I>
  static Matrix make(starfront_format format, int64_t n, const I* ptr, const I* ind,
                     const double* values, starfront_triangle triangle, int base) {
    Matrix m;
    starfront_matrix_init(&m.desc);
    m.desc.n = n;
    m.desc.format = format;
    m.desc.triangle = triangle;
    m.desc.index_type = detail::index_type_of<I>();
    m.desc.base = base;
    m.desc.ptr = ptr;
    m.desc.ind = ind;
    m.desc.values = values;
    return m;
  }
};

struct RuntimeOptions {
  int ncpu = -1;                 ///< CPU workers (-1: StarPU's default)
  int ncuda = 0;                 ///< GPUs (each driven through 4 CUDA workers, i.e. streams, by default)
  /// StarPU scheduling policy, or "auto": lws without GPUs, prio with one,
  /// dmda with several (starfront_runtime_options::scheduler)
  std::string scheduler = "auto";
};

/// The process's StarPU, started (or attached) by the constructor and shut
/// down (unless attached) by the destructor. Move-only. Destroy every Factor
/// bound to it first.
class Runtime {
 public:
  explicit Runtime(const RuntimeOptions& o = RuntimeOptions{}) {
    starfront_runtime_options c;
    starfront_runtime_options_init(&c);
    c.ncpu = o.ncpu;
    c.ncuda = o.ncuda;
    c.scheduler = o.scheduler.c_str();
    detail::check(starfront_runtime_init(&c, &rt_));
  }
  /// Takes ownership of a runtime made by a C function (e.g.
  /// starfront_runtime_init_mpi: starfront_mpi.hpp); freed by the destructor.
  static Runtime adopt(starfront_runtime* rt) { return Runtime(rt); }
  /// Attaches to a StarPU the application started (starpu_init); never shuts it down.
  static Runtime attach() {
    starfront_runtime* rt = nullptr;
    detail::check(starfront_runtime_attach(&rt));
    return Runtime(rt);
  }
  ~Runtime() { starfront_runtime_free(rt_); }
  Runtime(Runtime&& o) noexcept : rt_(std::exchange(o.rt_, nullptr)) {}
  Runtime& operator=(Runtime&& o) noexcept {
    if (this != &o) {
      starfront_runtime_free(rt_);
      rt_ = std::exchange(o.rt_, nullptr);
    }
    return *this;
  }
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  int cpu_workers() const {
    int n = 0;
    detail::check(starfront_runtime_workers(rt_, &n, nullptr));
    return n;
  }
  /// GPUs with CUDA workers (starfront_runtime_workers' ncuda; each GPU may
  /// have several CUDA workers, one per stream).
  int gpus() const {
    int n = 0;
    detail::check(starfront_runtime_workers(rt_, nullptr, &n));
    return n;
  }
  /// The same as gpus(): the name predates several streams per GPU.
  int cuda_workers() const { return gpus(); }
  starfront_runtime* get() const noexcept { return rt_; }

 private:
  explicit Runtime(starfront_runtime* rt) : rt_(rt) {}
  starfront_runtime* rt_ = nullptr;
};

struct AnalysisOptions {
  starfront_ordering ordering = STARFRONT_ORDERING_AUTO;
  const void* user_perm = nullptr;  ///< with STARFRONT_ORDERING_USER (matrix index type and base)
  bool amalgamate = true;
  starfront_slot_policy slot_policy = STARFRONT_SLOTS_DAG;  ///< contribution-block slots
  double cb_budget_bytes = 0.0;  ///< with STARFRONT_SLOTS_BUDGET: bytes all slots may hold
  /// With amalgamate: STARFRONT_AMALGAMATE_CRITICAL_PATH instead of the
  /// relaxed rule (merges for the modelled critical path, none making a front
  /// above order 232). Last, so that positional initialisers written before
  /// it keep their meaning.
  bool critical_path_amalgamation = false;
  /// With amalgamate and not critical_path_amalgamation: STARFRONT_AMALGAMATE_AUTO
  /// (the default: on the GPU graph the latency rule may choose the
  /// critical-path analysis); false: STARFRONT_AMALGAMATE_RELAXED always.
  bool latency_rule = true;
};

/// The analysis a Factor was built with (starfront_analysis_used).
struct AnalysisUsed {
  starfront_ordering ordering = STARFRONT_ORDERING_SCOTCH_ND;  ///< SCOTCH_ND, SCOTCH_AMD, NATURAL or USER
  starfront_amalgamation amalgamation = STARFRONT_AMALGAMATE_RELAXED;  ///< NONE, RELAXED or CRITICAL_PATH
};

/// Positive, negative and zero eigenvalue counts (starfront_inertia).
struct Inertia {
  int64_t positive = 0, negative = 0, zero = 0;
};

/// Factorisation method (starfront_method).
enum class Method { llt = STARFRONT_METHOD_LLT, ldlt = STARFRONT_METHOD_LDLT,
                    quasi_definite = STARFRONT_METHOD_QUASI_DEFINITE, automatic = STARFRONT_METHOD_AUTO };

/// Numerical options of a factorisation (starfront_factor_options; the
/// defaults are the C defaults).
struct FactorOptions {
  Method method = Method::llt;
  double pivot_tol = -1.0;                  ///< LLᵀ relative pivot tolerance (< 0: n·ε)
  double ldlt_threshold = 0.01;             ///< LDLᵀ threshold u in (0, 0.5]
  double perturbation = 1.4901161193847656e-08;  ///< LDLᵀ static perturbation τ in (0, 1)
  int refine_steps = 3;                     ///< iterative refinement steps of each solve (0..100)
  double watchdog_seconds = 0.0;            ///< StarPU runs: seconds without progress before an error (0: none)
  starfront_factor_options c() const {
    starfront_factor_options o;
    starfront_factor_options_init(&o);
    o.pivot_tol = pivot_tol;
    o.method = static_cast<starfront_method>(method);
    o.ldlt_threshold = ldlt_threshold;
    o.perturbation = perturbation;
    o.refine_steps = refine_steps;
    o.watchdog_seconds = watchdog_seconds;
    return o;
  }
};

/// One analysed matrix and its numeric factor. Move-only.
class Factor {
 public:
  /// Analyses A's pattern; rt == nullptr runs factorisations without StarPU.
  Factor(const Runtime* rt, const Matrix& A, const AnalysisOptions& o = AnalysisOptions{}) {
    starfront_analysis_options c;
    starfront_analysis_options_init(&c);
    c.ordering = o.ordering;
    c.user_perm = o.user_perm;
    c.amalgamate = !o.amalgamate                   ? STARFRONT_AMALGAMATE_NONE
                   : o.critical_path_amalgamation ? STARFRONT_AMALGAMATE_CRITICAL_PATH
                   : o.latency_rule               ? STARFRONT_AMALGAMATE_AUTO
                                                  : STARFRONT_AMALGAMATE_RELAXED;
    c.slot_policy = o.slot_policy;
    c.cb_budget_bytes = o.cb_budget_bytes;
    detail::check(starfront_analyse(rt ? rt->get() : nullptr, &A.desc, &c, &f_));
    n_ = A.desc.n;
  }
  Factor(const Runtime& rt, const Matrix& A, const AnalysisOptions& o = AnalysisOptions{})
      : Factor(&rt, A, o) {}
  ~Factor() { starfront_factor_free(f_); }
  Factor(Factor&& o) noexcept : f_(std::exchange(o.f_, nullptr)), n_(o.n_) {}
  Factor& operator=(Factor&& o) noexcept {
    if (this != &o) {
      starfront_factor_free(f_);
      f_ = std::exchange(o.f_, nullptr);
      n_ = o.n_;
    }
    return *this;
  }
  Factor(const Factor&) = delete;
  Factor& operator=(const Factor&) = delete;

  /// Factorises A (same description and pattern as analysed) by Cholesky.
  /// pivot_tol < 0: the default n·ε (see starfront_factor_options).
  void factorize(const Matrix& A, double pivot_tol = -1.0) {
    FactorOptions o;
    o.pivot_tol = pivot_tol;
    factorize(A, o);
  }
  /// Factorises A with the given method and options. Throws Error (status
  /// STARFRONT_SINGULAR for an LDLᵀ zero pivot: inertia() is still valid).
  void factorize(const Matrix& A, const FactorOptions& opts) {
    const starfront_factor_options o = opts.c();
    detail::check(starfront_factorize(f_, &A.desc, &o));
  }
  /// New values in the analysed entry order (nnz of the caller's arrays).
  void refactorize(const double* values, double pivot_tol = -1.0) {
    FactorOptions o;
    o.pivot_tol = pivot_tol;
    refactorize(values, o);
  }
  void refactorize(const double* values, const FactorOptions& opts) {
    const starfront_factor_options o = opts.c();
    detail::check(starfront_refactorize(f_, values, &o));
  }
  /// B := A⁻¹B, B n×nrhs column-major; ldb <= 0 means n.
  void solve(double* B, int64_t nrhs = 1, int64_t ldb = 0) {
    detail::check(starfront_solve(f_, nrhs, B, ldb > 0 ? ldb : (n_ > 0 ? n_ : 1)));
  }
  /// Returns A⁻¹b.
  std::vector<double> solve(std::vector<double> b) {
    solve(b.data(), 1, 0);
    return b;
  }

  starfront_stats stats() const {
    starfront_stats s;
    detail::check(starfront_get_stats(f_, &s));
    return s;
  }
  /// The ordering and amalgamation that ran (starfront_analysis_used).
  AnalysisUsed analysis_used() const {
    AnalysisUsed u;
    detail::check(starfront_analysis_used(f_, &u.ordering, &u.amalgamation));
    return u;
  }
  starfront_memory memory() const {
    starfront_memory m;
    detail::check(starfront_memory_estimate(f_, &m));
    return m;
  }
  /// Inertia of the last factorisation (also after STARFRONT_SINGULAR);
  /// not guaranteed when stats().perturbed_pivots > 0.
  Inertia inertia() const {
    Inertia in;
    detail::check(starfront_inertia(f_, &in.positive, &in.negative, &in.zero));
    return in;
  }
  int64_t n() const noexcept { return n_; }
  starfront_factor* get() const noexcept { return f_; }

 private:
  starfront_factor* f_ = nullptr;
  int64_t n_ = 0;
};

}  // namespace starfront
