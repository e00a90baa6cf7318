// The C API (include/starfront/starfront.h) over Solver and StarpuRuntime.
//
// A starfront_factor owns a private copy of the caller's matrix as a lower
// CSC, 0-based, 64-bit (CscMatrix), built once by starfront_analyse from any
// accepted input (lower/upper/full triangle, CSC/CSR, base 0/1, int32/int64,
// unsorted, duplicates), together with map[p] = the private entry that the
// caller's entry p adds into. A refactorisation scatters the new values
// through map in O(nnz) into storage that already exists; the Solver then
// reuses its analysis and plan.
//
// CSR of a symmetric matrix is the CSC of its transpose, so an entry in
// outer position o with inner index x is (row x, column o) in CSC and
// (row o, column x) in CSR; either way it lands in the lower triangle at
// (max, min). With STARFRONT_FULL the entries above the diagonal are not
// copied but compared with their mirrors (exact equality, as the Matrix
// Market reader requires of a `general` file).
//
// Errors never cross the API as exceptions: every entry point runs its body
// in guarded(), which turns bad_alloc and any other exception into a status.
// The last error is thread-local.
//
// StarPU is included only for starfront_runtime_attach (starpu_is_initialized,
// worker counts of a StarPU the application started); everything else goes
// through runtime/starpu.
#include "starfront/starfront.h"
#ifdef STARFRONT_HAVE_MPI
#include "starfront/starfront_mpi.h"
#endif

#include <starpu.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <cstdio>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <new>
#include <string>
#include <vector>

#include "analysis/symbolic.hpp"
#include "api/solver.hpp"
#include "runtime/starpu/runtime.hpp"
#include "runtime/starpu/task_codelets.hpp"

using starfront::CscMatrix;
using starfront::idx_t;
using starfront::Status;
using starfront::StatusCode;

struct starfront_runtime {
  std::unique_ptr<starfront::StarpuRuntime> owned;       // null when attached
  std::unique_ptr<starfront::WorkersActive> keep_awake;  // attached: never pause the app's StarPU
  bool app_paused = false;  // attached: was the application's StarPU paused at attach time
  std::atomic<int64_t> factors{0};                       // live factors bound to this runtime
  int ncpu = 0, ncuda = 0;
#ifdef STARFRONT_HAVE_MPI
  bool mpi = false;            // started by starfront_runtime_init_mpi: factorisations are distributed
  MPI_Comm comm = MPI_COMM_NULL;
#endif
};

namespace {

/// True when rt was started by starfront_runtime_init_mpi.
bool runtime_is_mpi(const starfront_runtime& rt) {
#ifdef STARFRONT_HAVE_MPI
  return rt.mpi;
#else
  (void)rt;
  return false;
#endif
}

/// The caller's matrix description (no values), validated by read_description.
struct Description {
  int64_t n = 0, nnz = 0;
  starfront_format format = STARFRONT_CSC;
  starfront_triangle triangle = STARFRONT_LOWER;
  starfront_index_type itype = STARFRONT_INT64;
  int base = 0;
  const void* ptr = nullptr;
  const void* ind = nullptr;
};

}  // namespace

struct starfront_factor {
  mutable std::mutex mutex;  // serialises calls on this factor
  starfront_runtime* rt = nullptr;
  Description desc;  // pointers cleared after the analysis

  CscMatrix A;                  // private lower CSC, 0-based, original numbering
  std::vector<idx_t> map;       // caller entry p -> index in A.values
  std::vector<uint8_t> upper;   // FULL only: 1 when caller entry p is above the diagonal
  std::vector<double> mirror;   // FULL only: sums of the upper entries, per entry of A

  starfront::Solver solver;
  starfront_memory memory{};
  bool factorized = false;  // the last factorisation call succeeded
  bool inertia_valid = false;  // the last factorisation succeeded or stopped as SINGULAR
  int64_t factorizations = 0, solves = 0;
  double t_analyse = 0, t_factor = 0, t_factor_first = 0, t_solve = 0;
};

namespace {

// ------------------------------------------------------------ errors

struct LastError {
  starfront_status status = STARFRONT_OK;
  int64_t column = -1;
  double pivot = 0.0;
  std::string message;
};
thread_local LastError t_error;

starfront_status fail(starfront_status code, std::string message) {
  t_error.status = code;
  t_error.column = -1;
  t_error.pivot = 0.0;
  t_error.message = std::move(message);
  return code;
}

/// Reports a core Status: same code values; the column moves to the caller's base.
starfront_status fail(const char* fn, const Status& st, int base) {
  fail(static_cast<starfront_status>(st.code), std::string(fn) + ": " + st.message);
  if (st.column >= 0) {
    t_error.column = st.column + base;
    t_error.pivot = st.pivot;
  }
  return t_error.status;
}

/// Clears the thread's last error, runs body, and turns exceptions into a status.
template <class Body>
starfront_status guarded(const char* fn, Body&& body) {
  t_error = LastError{};
  try {
    return body();
  } catch (const std::bad_alloc&) {
    return fail(STARFRONT_OUT_OF_MEMORY, std::string(fn) + ": out of memory");
  } catch (const std::exception& e) {
    return fail(STARFRONT_RUNTIME_ERROR, std::string(fn) + ": " + e.what());
  } catch (...) {
    return fail(STARFRONT_RUNTIME_ERROR, std::string(fn) + ": unknown exception");
  }
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

std::string str(int64_t v) { return std::to_string(v); }

/// "(row i, column j)" in the caller's base.
std::string entry_name(int64_t r, int64_t c, int base) {
  return "(row " + str(r + base) + ", column " + str(c + base) + ")";
}

// ------------------------------------------------------- description

std::mutex g_runtime_mutex;
starfront_runtime* g_runtime = nullptr;  // the live runtime (one per process)

template <class I>
starfront_status read_ptr(const char* fn, Description& d) {
  const I* ptr = static_cast<const I*>(d.ptr);
  if (static_cast<int64_t>(ptr[0]) != d.base)
    return fail(STARFRONT_INVALID_ARGUMENT,
                std::string(fn) + ": ptr[0] = " + str(ptr[0]) + " must equal the base " + str(d.base));
  for (int64_t o = 0; o < d.n; ++o)
    if (ptr[o + 1] < ptr[o])
      return fail(STARFRONT_INVALID_ARGUMENT, std::string(fn) + ": ptr decreases at position " +
                                                  str(o + 1) + " (" + str(ptr[o]) + " then " +
                                                  str(ptr[o + 1]) + ")");
  d.nnz = static_cast<int64_t>(ptr[d.n]) - d.base;
  return STARFRONT_OK;
}

/// The integer stored in a C enum field, read without loading it as the C++
/// enum type: a caller's out-of-range value (any int is legal in C) must be
/// refused, not be undefined behaviour here.
template <class E>
int enum_int(const E& field) {
  static_assert(sizeof(E) == sizeof(int), "C enums are int-sized here");
  int v;
  std::memcpy(&v, &field, sizeof v);
  return v;
}

/// Validates A's description and its pointer array; sets d.nnz.
starfront_status read_description(const char* fn, const starfront_matrix* A, Description& d) {
  const std::string f(fn);
  if (!A) return fail(STARFRONT_INVALID_ARGUMENT, f + ": the matrix A is NULL");
  d.n = A->n;
  d.base = A->base;
  d.ptr = A->ptr;
  d.ind = A->ind;
  const int format = enum_int(A->format), triangle = enum_int(A->triangle);
  const int itype = enum_int(A->index_type);
  if (d.n < 0) return fail(STARFRONT_INVALID_ARGUMENT, f + ": n = " + str(d.n) + " is negative");
  if (format != STARFRONT_CSC && format != STARFRONT_CSR)
    return fail(STARFRONT_INVALID_ARGUMENT, f + ": format must be STARFRONT_CSC or STARFRONT_CSR");
  if (triangle != STARFRONT_LOWER && triangle != STARFRONT_UPPER && triangle != STARFRONT_FULL)
    return fail(STARFRONT_INVALID_ARGUMENT,
                f + ": triangle must be STARFRONT_LOWER, STARFRONT_UPPER or STARFRONT_FULL");
  if (itype != STARFRONT_INT32 && itype != STARFRONT_INT64)
    return fail(STARFRONT_INVALID_ARGUMENT, f + ": index_type must be STARFRONT_INT32 or STARFRONT_INT64");
  d.format = static_cast<starfront_format>(format);
  d.triangle = static_cast<starfront_triangle>(triangle);
  d.itype = static_cast<starfront_index_type>(itype);
  if (d.base != 0 && d.base != 1)
    return fail(STARFRONT_INVALID_ARGUMENT, f + ": base = " + str(d.base) + " must be 0 or 1");
  if (d.itype == STARFRONT_INT32 && d.n > std::numeric_limits<int32_t>::max())
    return fail(STARFRONT_INDEX_OVERFLOW,
                f + ": n = " + str(d.n) + " does not fit 32-bit indices: use STARFRONT_INT64");
  if (!d.ptr) return fail(STARFRONT_INVALID_ARGUMENT, f + ": A->ptr is NULL");
  const starfront_status s =
      d.itype == STARFRONT_INT32 ? read_ptr<int32_t>(fn, d) : read_ptr<int64_t>(fn, d);
  if (s != STARFRONT_OK) return s;
  if (d.nnz > 0 && !d.ind) return fail(STARFRONT_INVALID_ARGUMENT, f + ": A->ind is NULL");
  return STARFRONT_OK;
}

/// Calls visit(p, r, c) for every caller entry p with its 0-based row r and
/// column c, after checking its index range and triangle. visit returns
/// STARFRONT_OK to go on.
template <class I, class Visit>
starfront_status for_each_entry(const char* fn, const Description& d, Visit&& visit) {
  const I* ptr = static_cast<const I*>(d.ptr);
  const I* ind = static_cast<const I*>(d.ind);
  const char* outer = d.format == STARFRONT_CSC ? "column" : "row";
  for (int64_t o = 0; o < d.n; ++o)
    for (int64_t p = static_cast<int64_t>(ptr[o]) - d.base; p < static_cast<int64_t>(ptr[o + 1]) - d.base; ++p) {
      const int64_t x = static_cast<int64_t>(ind[p]) - d.base;
      if (x < 0 || x >= d.n)
        return fail(STARFRONT_INVALID_ARGUMENT,
                    std::string(fn) + ": ind[" + str(p) + "] = " + str(ind[p]) + " (in " + outer + " " +
                        str(o + d.base) + ") is out of range [" + str(d.base) + ", " +
                        str(d.n - 1 + d.base) + "]");
      const int64_t r = d.format == STARFRONT_CSC ? x : o, c = d.format == STARFRONT_CSC ? o : x;
      if ((d.triangle == STARFRONT_LOWER && r < c) || (d.triangle == STARFRONT_UPPER && r > c))
        return fail(STARFRONT_INVALID_ARGUMENT,
                    std::string(fn) + ": entry " + str(p) + " " + entry_name(r, c, d.base) +
                        " lies in the " + (r < c ? "upper" : "lower") +
                        " triangle but the matrix is declared " +
                        (d.triangle == STARFRONT_LOWER ? "STARFRONT_LOWER" : "STARFRONT_UPPER"));
      if (const starfront_status s = visit(p, r, c); s != STARFRONT_OK) return s;
    }
  return STARFRONT_OK;
}

template <class Visit>
starfront_status for_each_entry_any(const char* fn, const Description& d, Visit&& visit) {
  return d.itype == STARFRONT_INT32 ? for_each_entry<int32_t>(fn, d, visit)
                                    : for_each_entry<int64_t>(fn, d, visit);
}

// --------------------------------------------------- private matrix

/// Builds F.A (pattern, zero values), F.map and, for FULL, F.upper/F.mirror.
/// Entries are bucketed by row, then stably by column (two counting sorts),
/// so each column's rows come out sorted; equal (row, column) pairs merge.
starfront_status build_private(const char* fn, starfront_factor& F) {
  const Description& d = F.desc;
  const bool full = d.triangle == STARFRONT_FULL;
  std::vector<idx_t> li(d.nnz), lj(d.nnz);
  if (full) F.upper.assign(d.nnz, 0);
  starfront_status s = for_each_entry_any(fn, d, [&](int64_t p, int64_t r, int64_t c) {
    li[p] = std::max(r, c);
    lj[p] = std::min(r, c);
    if (full) F.upper[p] = r < c;
    return STARFRONT_OK;
  });
  if (s != STARFRONT_OK) return s;
  std::vector<idx_t> count(d.n + 1), by_row(d.nnz), order(d.nnz);
  for (int64_t p = 0; p < d.nnz; ++p) ++count[li[p] + 1];
  for (int64_t k = 0; k < d.n; ++k) count[k + 1] += count[k];
  for (int64_t p = 0; p < d.nnz; ++p) by_row[count[li[p]]++] = p;
  std::fill(count.begin(), count.end(), 0);
  for (int64_t p = 0; p < d.nnz; ++p) ++count[lj[p] + 1];
  for (int64_t k = 0; k < d.n; ++k) count[k + 1] += count[k];
  for (int64_t p : by_row) order[count[lj[p]]++] = p;

  F.A.n = d.n;
  F.A.colptr.assign(d.n + 1, 0);
  F.A.rowind.clear();
  F.map.assign(d.nnz, 0);
  for (int64_t k = 0; k < d.nnz; ++k) {
    const int64_t p = order[k];
    const bool fresh = k == 0 || li[p] != li[order[k - 1]] || lj[p] != lj[order[k - 1]];
    if (fresh) {
      F.A.rowind.push_back(li[p]);
      ++F.A.colptr[lj[p] + 1];
    }
    F.map[p] = static_cast<idx_t>(F.A.rowind.size()) - 1;
  }
  for (int64_t j = 0; j < d.n; ++j) F.A.colptr[j + 1] += F.A.colptr[j];
  F.A.rowind.shrink_to_fit();
  F.A.values.assign(F.A.rowind.size(), 0.0);
  if (!full) return STARFRONT_OK;

  // FULL: every off-diagonal entry needs its mirror (bit 1: below, bit 2: above).
  std::vector<uint8_t> sides(F.A.rowind.size(), 0);
  for (int64_t p = 0; p < d.nnz; ++p) sides[F.map[p]] |= F.upper[p] ? 2 : 1;
  for (int64_t j = 0; j < d.n; ++j)
    for (idx_t q = F.A.colptr[j]; q < F.A.colptr[j + 1]; ++q) {
      const int64_t i = F.A.rowind[q];
      if (i != j && sides[q] != 3) {
        const bool below = sides[q] == 1;
        return fail(STARFRONT_NOT_SYMMETRIC,
                    std::string(fn) + ": STARFRONT_FULL matrix is not symmetric: entry " +
                        entry_name(below ? i : j, below ? j : i, d.base) + " is present but " +
                        entry_name(below ? j : i, below ? i : j, d.base) + " is missing");
      }
    }
  F.mirror.assign(F.A.rowind.size(), 0.0);
  return STARFRONT_OK;
}

/// Checks that A has the analysed description and, entry by entry, pattern.
starfront_status check_same_pattern(const char* fn, const starfront_factor& F, const starfront_matrix* A,
                                    Description& d) {
  if (const starfront_status s = read_description(fn, A, d); s != STARFRONT_OK) return s;
  const Description& a = F.desc;
  const std::string f(fn);
  if (d.n != a.n || d.nnz != a.nnz)
    return fail(STARFRONT_INVALID_ARGUMENT, f + ": A has n = " + str(d.n) + ", nnz = " + str(d.nnz) +
                                                 " but the analysed matrix has n = " + str(a.n) +
                                                 ", nnz = " + str(a.nnz) + ": analyse it again");
  if (d.format != a.format || d.triangle != a.triangle || d.itype != a.itype || d.base != a.base)
    return fail(STARFRONT_INVALID_ARGUMENT,
                f + ": A's format, triangle, index type or base differs from the analysed matrix");
  const bool full = a.triangle == STARFRONT_FULL;
  return for_each_entry_any(fn, d, [&](int64_t p, int64_t r, int64_t c) {
    const idx_t q = F.map[p], i = std::max(r, c), j = std::min(r, c);
    if (F.A.rowind[q] != i || q < F.A.colptr[j] || q >= F.A.colptr[j + 1] ||
        (full && F.upper[p] != (r < c)))
      return fail(STARFRONT_INVALID_ARGUMENT, f + ": the pattern differs from the analysed one at entry " +
                                                  str(p) + " " + entry_name(r, c, d.base) +
                                                  ": analyse it again");
    return STARFRONT_OK;
  });
}

/// Where scatter_values puts the private matrix's values and
/// run_factorization factorises them from: the solver's values buffer
/// (Solver::values_buffer: no second copy, page-locked with CUDA workers),
/// or F.A.values for a distributed factorisation (factorize_mpi takes the
/// whole matrix; only such a factor keeps F.A.values after its analysis)
/// and when the pattern has no entry (then empty).
double* value_target(starfront_factor& F) {
  if (F.rt && runtime_is_mpi(*F.rt)) return F.A.values.data();
  double* b = F.solver.values_buffer();
  return b ? b : F.A.values.data();
}

/// value_target(F) (and mirror) = the caller's values summed through map;
/// O(nnz). On an error the target holds partial sums (the factor is
/// invalid then anyway).
starfront_status scatter_values(const char* fn, starfront_factor& F, const double* values) {
  if (F.desc.nnz > 0 && !values)
    return fail(STARFRONT_INVALID_ARGUMENT, std::string(fn) + ": values is NULL");
  double* const a = value_target(F);
  std::fill(a, a + F.A.rowind.size(), 0.0);
  std::fill(F.mirror.begin(), F.mirror.end(), 0.0);
  const bool full = !F.upper.empty();
  for (int64_t p = 0; p < F.desc.nnz; ++p) {
    if (!std::isfinite(values[p]))
      return fail(STARFRONT_INVALID_ARGUMENT,
                  std::string(fn) + ": values[" + str(p) + "] = " + std::to_string(values[p]) +
                      " is not finite");
    (full && F.upper[p] ? F.mirror.data() : a)[F.map[p]] += values[p];
  }
  if (!full) return STARFRONT_OK;
  for (int64_t j = 0; j < F.A.n; ++j)
    for (idx_t q = F.A.colptr[j]; q < F.A.colptr[j + 1]; ++q)
      if (F.A.rowind[q] != j && a[q] != F.mirror[q]) {
        char buf[160];
        std::snprintf(buf, sizeof buf, "a(%lld,%lld) = %.17g but a(%lld,%lld) = %.17g",
                      static_cast<long long>(F.A.rowind[q] + F.desc.base),
                      static_cast<long long>(j + F.desc.base), a[q],
                      static_cast<long long>(j + F.desc.base),
                      static_cast<long long>(F.A.rowind[q] + F.desc.base), F.mirror[q]);
        return fail(STARFRONT_NOT_SYMMETRIC, std::string(fn) +
                                                 ": STARFRONT_FULL matrix is not symmetric: " + buf +
                                                 " (indices in the caller's base, duplicates summed)");
      }
  return STARFRONT_OK;
}

// --------------------------------------------------------- analysis

/// Converts user_perm (caller type and base) to 0-based int64, range-checked.
template <class I>
starfront_status read_perm(const char* fn, const void* src, const Description& d,
                           std::vector<idx_t>& perm) {
  const I* u = static_cast<const I*>(src);
  perm.resize(d.n);
  for (int64_t k = 0; k < d.n; ++k) {
    perm[k] = static_cast<idx_t>(u[k]) - d.base;
    if (perm[k] < 0 || perm[k] >= d.n)
      return fail(STARFRONT_INVALID_ARGUMENT, std::string(fn) + ": user_perm[" + str(k) + "] = " +
                                                  str(u[k]) + " is out of range [" + str(d.base) +
                                                  ", " + str(d.n - 1 + d.base) + "]");
  }
  return STARFRONT_OK;
}

starfront_status read_analysis_options(const char* fn, const starfront_analysis_options* opts,
                                       const Description& d, bool gpu_graph, starfront::AnalysisOptions& ao,
                                       starfront::GraphOptions& go) {
  using starfront::OrderingMethod;
  starfront_analysis_options o;
  starfront_analysis_options_init(&o);
  if (opts) o = *opts;
  const std::string f(fn);
  switch (enum_int(o.ordering)) {
    case STARFRONT_ORDERING_AUTO: ao.ordering = OrderingMethod::scotch; break;
    case STARFRONT_ORDERING_SCOTCH_ND: ao.ordering = OrderingMethod::scotch_nd; break;
    case STARFRONT_ORDERING_SCOTCH_AMD: ao.ordering = OrderingMethod::scotch_amd; break;
    case STARFRONT_ORDERING_NATURAL: ao.ordering = OrderingMethod::natural; break;
    case STARFRONT_ORDERING_USER: ao.ordering = OrderingMethod::user; break;
    case STARFRONT_ORDERING_SCOTCH_PATH:
      ao.ordering = OrderingMethod::scotch;
      ao.ordering_choice = starfront::OrderingChoice::critical_path;
      break;
    default:
      return fail(STARFRONT_INVALID_ARGUMENT, f + ": unknown ordering " + str(enum_int(o.ordering)));
  }
  switch (o.amalgamate) {
    case STARFRONT_AMALGAMATE_NONE: ao.amalgamate = false; break;
    case STARFRONT_AMALGAMATE_RELAXED: break;
    case STARFRONT_AMALGAMATE_CRITICAL_PATH:
      ao.relax_critical_path = true;
      ao.relax_max_front = starfront::kGpuFusedFront;
      break;
    case STARFRONT_AMALGAMATE_AUTO:
      if (gpu_graph) ao.latency_rule_front = starfront::kGpuFusedFront;
      break;
    default:
      return fail(STARFRONT_INVALID_ARGUMENT, f + ": amalgamate must be 0 (none), 1 (relaxed), 2 (critical path) "
                                                  "or 3 (auto), not " + str(o.amalgamate));
  }
  switch (enum_int(o.slot_policy)) {
    case STARFRONT_SLOTS_DAG: go.slots.policy = starfront::SlotPolicy::dag; break;
    case STARFRONT_SLOTS_PRIVATE: go.slots.policy = starfront::SlotPolicy::private_slots; break;
    case STARFRONT_SLOTS_BUDGET: go.slots.policy = starfront::SlotPolicy::budget; break;
    case STARFRONT_SLOTS_BUDGET_MIN: go.slots.policy = starfront::SlotPolicy::budget_min; break;
    default:
      return fail(STARFRONT_INVALID_ARGUMENT, f + ": unknown slot_policy " + str(enum_int(o.slot_policy)));
  }
  if (!(o.cb_budget_bytes >= 0) || !std::isfinite(o.cb_budget_bytes))
    return fail(STARFRONT_INVALID_ARGUMENT, f + ": cb_budget_bytes must be a finite number >= 0");
  go.slots.budget_bytes = o.cb_budget_bytes;
  if (o.ordering != STARFRONT_ORDERING_USER) return STARFRONT_OK;
  if (!o.user_perm && d.n > 0)
    return fail(STARFRONT_INVALID_ARGUMENT, f + ": STARFRONT_ORDERING_USER with user_perm NULL");
  return d.itype == STARFRONT_INT32 ? read_perm<int32_t>(fn, o.user_perm, d, ao.user_perm)
                                    : read_perm<int64_t>(fn, o.user_perm, d, ao.user_perm);
}

template <class T>
int64_t bytes(const std::vector<T>& v) {
  return static_cast<int64_t>(v.size() * sizeof(T));
}

/// Memory estimates of an analysed factor; `workers`: CPU workers that may
/// each hold one fused-subtree workspace at a time.
starfront_memory memory_estimate(const starfront_factor& F, int workers) {
  const starfront::SymbolicFactor& S = F.solver.symbolic();
  const starfront::FrontPlan& P = F.solver.plan();
  starfront_memory m{};
  m.factor_bytes = 8 * static_cast<int64_t>(P.factor_size());
  const starfront::MemoryEstimates e = F.solver.memory();
  m.cb_planned_bytes = static_cast<int64_t>(e.cb_planned);
  m.cb_lower_bound_bytes = static_cast<int64_t>(e.cb_lower_bound);
  m.cb_private_bytes = static_cast<int64_t>(e.cb_private);
  m.cb_level_stack_bytes = static_cast<int64_t>(e.cb_level_stack);
  m.subtree_workspace_bytes = static_cast<int64_t>(e.subtree_workspace);
  m.slots = e.slots;
  m.added_deps = e.added_deps;
  m.cb_peak_bytes = m.cb_planned_bytes + m.subtree_workspace_bytes * std::max(1, workers);
  // private matrix (rows, pointers), the Solver's copy (pattern, and the
  // values for iterative refinement), the values the caller's are scattered
  // into (the Solver's values buffer, or F.A.values for a distributed
  // factorisation: value_target), the caller map
  const int64_t values_bytes = static_cast<int64_t>(sizeof(double) * F.A.rowind.size());
  m.matrix_bytes = 2 * (values_bytes + bytes(F.A.rowind) + bytes(F.A.colptr)) + bytes(F.map) + bytes(F.upper) +
                   bytes(F.mirror);
  m.analysis_bytes = bytes(S.perm) + bytes(S.iperm) + bytes(S.super_start) + bytes(S.super_parent) +
                     bytes(S.front_ptr) + bytes(S.front_rows) + bytes(S.col_to_super) +
                     bytes(P.l_offset) + bytes(P.child_ptr) + bytes(P.child_list) + bytes(P.rel_ptr) +
                     bytes(P.rel) + bytes(P.a_ptr) + bytes(P.a_src) + bytes(P.a_dst) +
                     bytes(P.diag_src) + bytes(P.front_flops) + bytes(P.task_order);
  const starfront::TaskGraph& G = F.solver.graph();
  m.analysis_bytes += bytes(G.tasks) + bytes(G.accesses) + bytes(G.blocks) + bytes(G.slot_of) +
                      bytes(G.slot_capacity) + bytes(G.added_deps) + bytes(G.cb_blocks) + bytes(G.bounds);
  m.total_bytes = m.factor_bytes + m.cb_peak_bytes + m.matrix_bytes + m.analysis_bytes;
  return m;
}

/// 32-bit indices: refuse a factor whose entry count does not fit them.
starfront_status check_int32_sizes(const char* fn, const starfront_factor& F,
                                   const starfront::SymbolicFactor& S, double factor_doubles) {
  if (F.desc.itype != STARFRONT_INT32 || S.nnz_l <= std::numeric_limits<int32_t>::max())
    return STARFRONT_OK;
  char buf[400];
  std::snprintf(buf, sizeof buf,
                "%s: 32-bit indices are too small for this factor: predicted nnz(L) = %lld "
                "(> 2^31-1 = %d), %.4g flops, factor %.4g GB; analyse with STARFRONT_INT64 indices",
                fn, static_cast<long long>(S.nnz_l), std::numeric_limits<int32_t>::max(), S.flops,
                8.0 * factor_doubles / 1e9);
  return fail(STARFRONT_INDEX_OVERFLOW, buf);
}

/// Bytes of the dense front panels of S (what FrontPlan::factor_size counts).
double panel_doubles(const starfront::SymbolicFactor& S) {
  double total = 0;
  for (idx_t s = 0; s < S.nsuper; ++s)
    total += static_cast<double>(S.front_order(s)) * static_cast<double>(S.ncols(s));
  return total;
}

/// With 32-bit indices and n(n+1)/2 > INT32_MAX the factor may not fit: the
/// symbolic analysis runs first (without the plan and task graph, which would
/// be as large as the factor) and, when its sizes fit, is handed to the
/// Solver in `pre` (Solver::analyse with a SymbolicFactor), so that the
/// ordering and amalgamation are computed once and the factor is that of
/// the analysis checked (its ordering and the latency rule's choice kept).
starfront_status precheck_int32(const char* fn, const starfront_factor& F,
                                const starfront::AnalysisOptions& ao, std::optional<starfront::SymbolicFactor>& pre) {
  const double n = static_cast<double>(F.desc.n);
  if (F.desc.itype != STARFRONT_INT32 || n * (n + 1) / 2 <= std::numeric_limits<int32_t>::max())
    return STARFRONT_OK;
  starfront::SymbolicFactor S;
  if (const Status st = starfront::analyse(F.A, ao, S); !st.ok()) return fail(fn, st, F.desc.base);
  if (const starfront_status s = check_int32_sizes(fn, F, S, panel_doubles(S)); s != STARFRONT_OK)
    return s;
  pre = std::move(S);  // the analysis itself goes on (not made again)
  return STARFRONT_OK;
}

// ---------------------------------------------------- factorisation

starfront_status read_factor_options(const char* fn, const starfront_factor_options* opts,
                                     starfront::FactorOptions& fo) {
  starfront_factor_options o;
  starfront_factor_options_init(&o);
  if (opts) o = *opts;
  const std::string f(fn);
  if (!std::isfinite(o.pivot_tol))
    return fail(STARFRONT_INVALID_ARGUMENT, f + ": pivot_tol = " + std::to_string(o.pivot_tol) +
                                                " must be finite");
  fo.pivot_tol = o.pivot_tol;
  if (!(o.watchdog_seconds >= 0) || !std::isfinite(o.watchdog_seconds))
    return fail(STARFRONT_INVALID_ARGUMENT, std::string(fn) + ": watchdog_seconds = " +
                                                std::to_string(o.watchdog_seconds) +
                                                " must be a finite number >= 0");
  fo.watchdog_seconds = o.watchdog_seconds;
  switch (enum_int(o.method)) {
    case STARFRONT_METHOD_LLT: fo.method = starfront::FactorMethod::llt; break;
    case STARFRONT_METHOD_LDLT: fo.method = starfront::FactorMethod::ldlt; break;
    case STARFRONT_METHOD_QUASI_DEFINITE: fo.method = starfront::FactorMethod::quasi_definite; break;
    case STARFRONT_METHOD_AUTO: fo.method = starfront::FactorMethod::automatic; break;
    default: return fail(STARFRONT_INVALID_ARGUMENT, f + ": unknown method " + str(enum_int(o.method)));
  }
  if (o.ldlt_threshold != 0.0) fo.ldlt_threshold = o.ldlt_threshold;  // 0: default
  if (o.perturbation != 0.0) fo.perturbation = o.perturbation;
  fo.refine_steps = o.refine_steps;
  if (const Status st = starfront::check_factor_options(fo); !st.ok())
    return fail(STARFRONT_INVALID_ARGUMENT, f + ": " + st.message);
  return STARFRONT_OK;
}

/// Factorises F.A (values already scattered); t0 is when the call started.
starfront_status run_factorization(const char* fn, starfront_factor& F, const starfront::FactorOptions& fo,
                                   std::chrono::steady_clock::time_point t0) {
  const auto exec = F.rt ? starfront::Executor::starpu : starfront::Executor::sequential;
#ifdef STARFRONT_HAVE_MPI
  const Status st = F.rt && F.rt->mpi ? F.solver.factorize_mpi(F.A, fo, F.rt->comm)
                                       : F.solver.refactorize(value_target(F), fo, exec);
#else
  // F.A is the analysed pattern by construction (check_same_pattern /
  // scatter_values): its values are refactorised without comparing it again.
  const Status st = F.solver.refactorize(value_target(F), fo, exec);
#endif
  F.inertia_valid = st.ok() || st.code == starfront::StatusCode::singular;
  if (!st.ok()) return fail(fn, st, F.desc.base);
  F.factorized = true;
  F.t_factor = seconds_since(t0);
  if (F.factorizations++ == 0) F.t_factor_first = F.t_factor;
  return STARFRONT_OK;
}

}  // namespace

// ================================================================== API

extern "C" {

const char* starfront_status_name(starfront_status status) {
  switch (status) {
    case STARFRONT_OK: return "ok";
    case STARFRONT_INVALID_ARGUMENT: return "invalid_argument";
    case STARFRONT_IO_ERROR: return "io_error";
    case STARFRONT_PARSE_ERROR: return "parse_error";
    case STARFRONT_UNSUPPORTED: return "unsupported";
    case STARFRONT_NOT_SYMMETRIC: return "not_symmetric";
    case STARFRONT_NOT_POSITIVE_DEFINITE: return "not_positive_definite";
    case STARFRONT_ORDERING_ERROR: return "ordering_error";
    case STARFRONT_RUNTIME_ERROR: return "runtime_error";
    case STARFRONT_OUT_OF_MEMORY: return "out_of_memory";
    case STARFRONT_INDEX_OVERFLOW: return "index_overflow";
    case STARFRONT_SINGULAR: return "singular";
  }
  return "unknown_status";
}

const char* starfront_last_error(void) { return t_error.message.c_str(); }

starfront_status starfront_last_error_info(starfront_error_info* info) {
  if (info) {
    info->status = t_error.status;
    info->column = t_error.column;
    info->pivot = t_error.pivot;
    info->message = t_error.message.c_str();
  }
  return t_error.status;
}

// ------------------------------------------------------------ runtime

starfront_status starfront_runtime_options_init(starfront_runtime_options* opts) {
  return guarded("starfront_runtime_options_init", [&] {
    if (!opts) return fail(STARFRONT_INVALID_ARGUMENT, "starfront_runtime_options_init: opts is NULL");
    opts->ncpu = -1;
    opts->ncuda = 0;
    opts->scheduler = nullptr;
    return STARFRONT_OK;
  });
}

namespace {
/// starfront_runtime_init, and with comm (not null) starfront_runtime_init_mpi.
starfront_status runtime_init(const char* fn, const starfront_runtime_options* opts, const void* comm,
                              starfront_runtime** rt) {
  return guarded(fn, [&] {
    if (!rt) return fail(STARFRONT_INVALID_ARGUMENT, std::string(fn) + ": rt is NULL");
    *rt = nullptr;
    starfront::RuntimeOptions ro;
    if (opts) {
      ro.ncpu = opts->ncpu;
      ro.ncuda = opts->ncuda;
      if (opts->scheduler) ro.sched = opts->scheduler;
    }
    // As `starfront solve --ncuda`: the tasks of tiled fronts (only fronts
    // above kGpuTileThreshold are tiled in the GPU graph) stay on the GPUs;
    // dmda once put 2048-tiles on CPU cores and took 8-80x longer
    // (bench/README.md, "The merged main on the H200 x2").
    if (ro.ncuda > 0 && !comm && starfront::cuda_codelets_built()) ro.tiles_on_cuda_only = true;
    const std::lock_guard<std::mutex> lock(g_runtime_mutex);
    if (g_runtime)
      return fail(STARFRONT_RUNTIME_ERROR,
                  std::string(fn) + ": a starfront runtime is already alive (one per process)");
    if (starpu_is_initialized())
      return fail(STARFRONT_RUNTIME_ERROR, std::string(fn) +
                                               ": StarPU is already initialised by the application: "
                                               "use starfront_runtime_attach");
    auto h = std::make_unique<starfront_runtime>();
#ifdef STARFRONT_HAVE_MPI
    if (comm) {  // the handle keeps its own copy of the communicator
      h->mpi = true;
      h->comm = *static_cast<const MPI_Comm*>(comm);
      ro.mpi_comm = &h->comm;
    }
#else
    (void)comm;
#endif
    const Status st = starfront::StarpuRuntime::start(ro, h->owned);
    if (!st.ok()) return fail(fn, st, 0);
    h->ncpu = h->owned->cpu_workers();
    h->ncuda = h->owned->gpus();  // the GPU count, whatever the streams per GPU
    *rt = g_runtime = h.release();
    return STARFRONT_OK;
  });
}
}  // namespace

starfront_status starfront_runtime_init(const starfront_runtime_options* opts, starfront_runtime** rt) {
  return runtime_init("starfront_runtime_init", opts, nullptr, rt);
}

#ifdef STARFRONT_HAVE_MPI
starfront_status starfront_runtime_init_mpi(const starfront_runtime_options* opts, MPI_Comm comm,
                                            starfront_runtime** rt) {
  return runtime_init("starfront_runtime_init_mpi", opts, &comm, rt);
}
#endif

starfront_status starfront_runtime_attach(starfront_runtime** rt) {
  constexpr const char* fn = "starfront_runtime_attach";
  return guarded(fn, [&] {
    if (!rt) return fail(STARFRONT_INVALID_ARGUMENT, std::string(fn) + ": rt is NULL");
    *rt = nullptr;
    const std::lock_guard<std::mutex> lock(g_runtime_mutex);
    if (g_runtime)
      return fail(STARFRONT_RUNTIME_ERROR,
                  std::string(fn) + ": a starfront runtime is already alive (one per process)");
    if (!starpu_is_initialized())
      return fail(STARFRONT_RUNTIME_ERROR,
                  std::string(fn) + ": StarPU is not initialised (call starpu_init first, or use "
                                    "starfront_runtime_init)");
    auto h = std::make_unique<starfront_runtime>();
    h->app_paused = starpu_is_paused();
    h->keep_awake = std::make_unique<starfront::WorkersActive>();
    h->ncpu = static_cast<int>(starpu_cpu_worker_get_count());
    h->ncuda = starfront::cuda_gpu_count();
    *rt = g_runtime = h.release();
    return STARFRONT_OK;
  });
}

starfront_status starfront_runtime_workers(const starfront_runtime* rt, int* ncpu, int* ncuda) {
  return guarded("starfront_runtime_workers", [&] {
    if (!rt) return fail(STARFRONT_INVALID_ARGUMENT, "starfront_runtime_workers: rt is NULL");
    if (ncpu) *ncpu = rt->ncpu;
    if (ncuda) *ncuda = rt->ncuda;
    return STARFRONT_OK;
  });
}

starfront_status starfront_runtime_free(starfront_runtime* rt) {
  constexpr const char* fn = "starfront_runtime_free";
  return guarded(fn, [&] {
    if (!rt) return STARFRONT_OK;
    const std::lock_guard<std::mutex> lock(g_runtime_mutex);
    if (rt != g_runtime)
      return fail(STARFRONT_INVALID_ARGUMENT, std::string(fn) + ": rt is not the live runtime");
    if (const int64_t alive = rt->factors.load(); alive > 0)
      return fail(STARFRONT_INVALID_ARGUMENT, std::string(fn) + ": " + str(alive) +
                                                  " factor(s) bound to this runtime are still "
                                                  "alive: free them first");
    const bool attached = !rt->owned;
    const bool app_paused = rt->app_paused;
    delete rt;  // shuts StarPU down unless attached
    g_runtime = nullptr;
    // Releasing the last WorkersActive pauses StarPU: give the application
    // its StarPU back in the state it had at attach time.
    if (attached && !app_paused && starpu_is_paused()) starpu_resume();
    return STARFRONT_OK;
  });
}

// ------------------------------------------------------ option structs

starfront_status starfront_matrix_init(starfront_matrix* A) {
  return guarded("starfront_matrix_init", [&] {
    if (!A) return fail(STARFRONT_INVALID_ARGUMENT, "starfront_matrix_init: A is NULL");
    *A = starfront_matrix{0, STARFRONT_CSC, STARFRONT_LOWER, STARFRONT_INT64, 0, nullptr, nullptr, nullptr};
    return STARFRONT_OK;
  });
}

starfront_status starfront_analysis_options_init(starfront_analysis_options* opts) {
  return guarded("starfront_analysis_options_init", [&] {
    if (!opts) return fail(STARFRONT_INVALID_ARGUMENT, "starfront_analysis_options_init: opts is NULL");
    *opts = starfront_analysis_options{STARFRONT_ORDERING_AUTO, nullptr, STARFRONT_AMALGAMATE_AUTO,
                                       STARFRONT_SLOTS_DAG, 0.0};
    return STARFRONT_OK;
  });
}

starfront_status starfront_factor_options_init(starfront_factor_options* opts) {
  return guarded("starfront_factor_options_init", [&] {
    if (!opts) return fail(STARFRONT_INVALID_ARGUMENT, "starfront_factor_options_init: opts is NULL");
    const starfront::FactorOptions d;
    opts->pivot_tol = -1.0;  // n·ε (FactorOptions::effective_pivot_tol)
    opts->watchdog_seconds = 0.0;
    opts->method = STARFRONT_METHOD_LLT;
    opts->ldlt_threshold = d.ldlt_threshold;
    opts->perturbation = d.perturbation;
    opts->refine_steps = d.refine_steps;
    return STARFRONT_OK;
  });
}

// ----------------------------------------------------------- analysis

starfront_status starfront_analyse(starfront_runtime* rt, const starfront_matrix* A,
                                   const starfront_analysis_options* opts, starfront_factor** F) {
  constexpr const char* fn = "starfront_analyse";
  return guarded(fn, [&] {
    if (!F) return fail(STARFRONT_INVALID_ARGUMENT, std::string(fn) + ": F is NULL");
    *F = nullptr;
    const auto t0 = std::chrono::steady_clock::now();
    auto h = std::make_unique<starfront_factor>();
    if (const starfront_status s = read_description(fn, A, h->desc); s != STARFRONT_OK) return s;
    starfront::AnalysisOptions ao;
    // A runtime with CUDA workers (not under MPI, whose executor keeps
    // subtrees and fronts on CPUs) gets the GPU graph: few, large tasks.
    const bool gpu_graph = rt && rt->ncuda > 0 && !runtime_is_mpi(*rt);
    starfront::GraphOptions go =
        gpu_graph ? starfront::gpu_graph_options(rt->ncpu + rt->ncuda) : starfront::GraphOptions{};
    if (const starfront_status s = read_analysis_options(fn, opts, h->desc, gpu_graph, ao, go); s != STARFRONT_OK)
      return s;
    if (const starfront_status s = build_private(fn, *h); s != STARFRONT_OK) return s;
    h->desc.ptr = h->desc.ind = nullptr;  // never kept
    std::optional<starfront::SymbolicFactor> pre;
    if (const starfront_status s = precheck_int32(fn, *h, ao, pre); s != STARFRONT_OK) return s;
    if (const Status st = pre ? h->solver.analyse(h->A, std::move(*pre), go) : h->solver.analyse(h->A, ao, go);
        !st.ok())
      return fail(fn, st, h->desc.base);
    // Without MPI the values go into the solver's buffer (value_target):
    // the private matrix keeps its pattern only.
    if (!(rt && runtime_is_mpi(*rt))) std::vector<double>().swap(h->A.values);
    if (const starfront_status s = check_int32_sizes(fn, *h, h->solver.symbolic(),
                                                     static_cast<double>(h->solver.plan().factor_size()));
        s != STARFRONT_OK)
      return s;
    h->memory = memory_estimate(*h, rt ? rt->ncpu : 1);
    h->t_analyse = seconds_since(t0);
    h->rt = rt;
    if (rt) ++rt->factors;
    *F = h.release();
    return STARFRONT_OK;
  });
}

// ------------------------------------------------------ factorisation

starfront_status starfront_factorize(starfront_factor* F, const starfront_matrix* A,
                                     const starfront_factor_options* opts) {
  constexpr const char* fn = "starfront_factorize";
  return guarded(fn, [&] {
    if (!F) return fail(STARFRONT_INVALID_ARGUMENT, std::string(fn) + ": F is NULL");
    const std::lock_guard<std::mutex> lock(F->mutex);
    const auto t0 = std::chrono::steady_clock::now();
    F->factorized = false;
    F->inertia_valid = false;
    starfront::FactorOptions fo;
    if (const starfront_status s = read_factor_options(fn, opts, fo); s != STARFRONT_OK) return s;
    Description d;
    if (const starfront_status s = check_same_pattern(fn, *F, A, d); s != STARFRONT_OK) return s;
    if (const starfront_status s = scatter_values(fn, *F, A->values); s != STARFRONT_OK) return s;
    return run_factorization(fn, *F, fo, t0);
  });
}

starfront_status starfront_refactorize(starfront_factor* F, const double* values,
                                       const starfront_factor_options* opts) {
  constexpr const char* fn = "starfront_refactorize";
  return guarded(fn, [&] {
    if (!F) return fail(STARFRONT_INVALID_ARGUMENT, std::string(fn) + ": F is NULL");
    const std::lock_guard<std::mutex> lock(F->mutex);
    const auto t0 = std::chrono::steady_clock::now();
    F->factorized = false;
    F->inertia_valid = false;
    starfront::FactorOptions fo;
    if (const starfront_status s = read_factor_options(fn, opts, fo); s != STARFRONT_OK) return s;
    if (const starfront_status s = scatter_values(fn, *F, values); s != STARFRONT_OK) return s;
    return run_factorization(fn, *F, fo, t0);
  });
}

// -------------------------------------------------------------- solve

starfront_status starfront_solve(starfront_factor* F, int64_t nrhs, double* B, int64_t ldb) {
  constexpr const char* fn = "starfront_solve";
  return guarded(fn, [&] {
    const std::string f(fn);
    if (!F) return fail(STARFRONT_INVALID_ARGUMENT, f + ": F is NULL");
    const std::lock_guard<std::mutex> lock(F->mutex);
    if (!F->factorized)
      return fail(STARFRONT_INVALID_ARGUMENT, f + ": no successful factorisation to solve with");
    const int64_t n = F->desc.n;
#ifdef STARFRONT_HAVE_MPI
    if (F->rt && F->rt->mpi) {  // collective: B on rank 0 (checked there, agreed by all ranks)
      int rank = 0, nranks = 1;
      MPI_Comm_rank(F->rt->comm, &rank);
      MPI_Comm_size(F->rt->comm, &nranks);
      const auto t0 = std::chrono::steady_clock::now();
      const Status st = F->solver.solve_mpi(starfront::root_layout(n, nranks), rank == 0 ? B : nullptr, nrhs,
                                            rank == 0 ? ldb : 1, F->rt->comm);
      if (!st.ok()) return fail(fn, st, F->desc.base);
      F->t_solve = seconds_since(t0);
      ++F->solves;
      return STARFRONT_OK;
    }
#endif
    if (nrhs < 0) return fail(STARFRONT_INVALID_ARGUMENT, f + ": nrhs = " + str(nrhs) + " is negative");
    if (ldb < std::max<int64_t>(1, n))
      return fail(STARFRONT_INVALID_ARGUMENT,
                  f + ": ldb = " + str(ldb) + " must be >= max(1, n) = " + str(std::max<int64_t>(1, n)));
    if (!B && n > 0 && nrhs > 0) return fail(STARFRONT_INVALID_ARGUMENT, f + ": B is NULL");
    const auto t0 = std::chrono::steady_clock::now();
    if (n > 0 && nrhs > 0)
      if (const Status st = F->solver.solve(B, nrhs, ldb); !st.ok()) return fail(fn, st, F->desc.base);
    F->t_solve = seconds_since(t0);
    ++F->solves;
    return STARFRONT_OK;
  });
}

#ifdef STARFRONT_HAVE_MPI
namespace {
/// The checks shared by the distributed-vector entry points: F bound to an
/// MPI runtime and distributed-factorised. Local (every rank reaches the
/// same verdict: the factorisation's status is agreed on).
starfront_status check_mpi_factor(const std::string& f, const starfront_factor* F) {
  if (!F) return fail(STARFRONT_INVALID_ARGUMENT, f + ": F is NULL");
  if (!F->rt || !F->rt->mpi)
    return fail(STARFRONT_INVALID_ARGUMENT, f + ": F is not bound to a runtime of starfront_runtime_init_mpi");
  if (!F->factorized)
    return fail(STARFRONT_INVALID_ARGUMENT, f + ": no successful factorisation to solve with");
  return STARFRONT_OK;
}

/// A distributed solve in layout L (collective), timed and counted.
starfront_status solve_in_layout(const char* fn, starfront_factor* F, const starfront::VectorLayout& L,
                                 int64_t nrhs, double* X, int64_t ldx) {
  const auto t0 = std::chrono::steady_clock::now();
  const Status st = F->solver.solve_mpi(L, X, nrhs, ldx, F->rt->comm);
  if (!st.ok()) return fail(fn, st, F->desc.base);
  F->t_solve = seconds_since(t0);
  ++F->solves;
  return STARFRONT_OK;
}
}  // namespace

starfront_status starfront_mpi_local_rows(const starfront_factor* F, int64_t* count, int64_t* rows) {
  constexpr const char* fn = "starfront_mpi_local_rows";
  return guarded(fn, [&] {
    const std::string f(fn);
    if (const starfront_status s = check_mpi_factor(f, F); s != STARFRONT_OK) return s;
    if (!count) return fail(STARFRONT_INVALID_ARGUMENT, f + ": count is NULL");
    const std::lock_guard<std::mutex> lock(F->mutex);
    int rank = 0;
    MPI_Comm_rank(F->rt->comm, &rank);
    const starfront::VectorLayout L = F->solver.solve_layout();
    *count = L.count(rank);
    if (rows) {
      const std::vector<idx_t> mine = L.rows(rank);
      for (std::size_t i = 0; i < mine.size(); ++i) rows[i] = mine[i] + F->desc.base;
    }
    return STARFRONT_OK;
  });
}

starfront_status starfront_mpi_solve_local(starfront_factor* F, int64_t nrhs, double* X, int64_t ldx) {
  constexpr const char* fn = "starfront_mpi_solve_local";
  return guarded(fn, [&] {
    if (const starfront_status s = check_mpi_factor(fn, F); s != STARFRONT_OK) return s;
    const std::lock_guard<std::mutex> lock(F->mutex);
    return solve_in_layout(fn, F, F->solver.solve_layout(), nrhs, X, ldx);
  });
}

starfront_status starfront_mpi_solve_block(starfront_factor* F, int64_t first_row, int64_t nlocal, int64_t nrhs,
                                           double* X, int64_t ldx) {
  constexpr const char* fn = "starfront_mpi_solve_block";
  return guarded(fn, [&] {
    if (const starfront_status s = check_mpi_factor(fn, F); s != STARFRONT_OK) return s;
    const std::lock_guard<std::mutex> lock(F->mutex);
    starfront::VectorLayout L;
    const Status st = starfront::block_layout(F->desc.n, first_row - F->desc.base, nlocal, F->rt->comm, L);
    if (!st.ok()) return fail(fn, st, F->desc.base);
    return solve_in_layout(fn, F, L, nrhs, X, ldx);
  });
}
#endif

// -------------------------------------------------------- information

starfront_status starfront_inertia(const starfront_factor* F, int64_t* npos, int64_t* nneg,
                                   int64_t* nzero) {
  return guarded("starfront_inertia", [&] {
    if (!F) return fail(STARFRONT_INVALID_ARGUMENT, "starfront_inertia: F is NULL");
    const std::lock_guard<std::mutex> lock(F->mutex);
    if (!F->inertia_valid)
      return fail(STARFRONT_INVALID_ARGUMENT,
                  "starfront_inertia: no factorisation that succeeded or stopped on a zero pivot");
    const starfront::InertiaCounts in = F->solver.inertia();
    if (npos) *npos = in.positive;
    if (nneg) *nneg = in.negative;
    if (nzero) *nzero = in.zero;
    return STARFRONT_OK;
  });
}

starfront_status starfront_memory_estimate(const starfront_factor* F, starfront_memory* out) {
  return guarded("starfront_memory_estimate", [&] {
    if (!F || !out)
      return fail(STARFRONT_INVALID_ARGUMENT, "starfront_memory_estimate: F or out is NULL");
    const std::lock_guard<std::mutex> lock(F->mutex);
    *out = F->memory;
    return STARFRONT_OK;
  });
}

starfront_status starfront_get_stats(const starfront_factor* F, starfront_stats* out) {
  return guarded("starfront_get_stats", [&] {
    if (!F || !out) return fail(STARFRONT_INVALID_ARGUMENT, "starfront_get_stats: F or out is NULL");
    const std::lock_guard<std::mutex> lock(F->mutex);
    const starfront::SymbolicFactor& S = F->solver.symbolic();
    starfront_stats s{};
    s.n = F->desc.n;
    s.nnz_input = F->desc.nnz;
    s.nnz_a = F->A.nnz();
    s.nnz_l = S.nnz_l;
    s.nnz_l_exact = S.nnz_l_exact;
    s.flops = S.flops;
    s.supernodes = S.nsuper;
    s.max_front = S.max_front;
    s.tasks = F->factorizations > 0 ? F->solver.stats().factor.tasks : 0;
    s.factorizations = F->factorizations;
    s.solves = F->solves;
    s.t_analyse_s = F->t_analyse;
    s.t_factor_s = F->t_factor;
    s.t_factor_first_s = F->t_factor_first;
    s.t_solve_s = F->t_solve;
    s.min_pivot_ratio = F->factorizations > 0 ? F->solver.min_pivot_ratio() : 0.0;
    const starfront::NumericFactor& nf = F->solver.factor();
    s.method = -1;
    if (F->inertia_valid || F->factorizations > 0)
      s.method = nf.method == starfront::FactorMethod::ldlt             ? STARFRONT_METHOD_LDLT
                 : nf.method == starfront::FactorMethod::quasi_definite ? STARFRONT_METHOD_QUASI_DEFINITE
                                                                        : STARFRONT_METHOD_LLT;
    s.perturbed_pivots = nf.perturbed_pivots;
    s.delayed_pivots = nf.delayed_pivots;
    s.two_by_two_pivots = nf.two_by_two_pivots;
    s.refine_steps = F->solves > 0 ? F->solver.stats().refine.steps : 0;
    s.backward_error = F->solves > 0 ? F->solver.stats().refine.backward_error : 0.0;
    *out = s;
    return STARFRONT_OK;
  });
}

starfront_status starfront_analysis_used(const starfront_factor* F, starfront_ordering* ordering,
                                         starfront_amalgamation* amalgamation) {
  return guarded("starfront_analysis_used", [&] {
    if (!F) return fail(STARFRONT_INVALID_ARGUMENT, "starfront_analysis_used: F is NULL");
    const std::lock_guard<std::mutex> lock(F->mutex);
    const starfront::SymbolicFactor& S = F->solver.symbolic();
    using starfront::OrderingMethod;
    if (ordering)
      *ordering = S.ordering_used == OrderingMethod::scotch_amd ? STARFRONT_ORDERING_SCOTCH_AMD
                  : S.ordering_used == OrderingMethod::natural  ? STARFRONT_ORDERING_NATURAL
                  : S.ordering_used == OrderingMethod::user     ? STARFRONT_ORDERING_USER
                                                                : STARFRONT_ORDERING_SCOTCH_ND;
    if (amalgamation)
      *amalgamation = !S.amalgamated                   ? STARFRONT_AMALGAMATE_NONE
                      : S.critical_path_amalgamation ? STARFRONT_AMALGAMATE_CRITICAL_PATH
                                                     : STARFRONT_AMALGAMATE_RELAXED;
    return STARFRONT_OK;
  });
}

starfront_status starfront_factor_free(starfront_factor* F) {
  t_error = LastError{};
  if (!F) return STARFRONT_OK;
  if (F->rt) --F->rt->factors;
  delete F;
  return STARFRONT_OK;
}

}  // extern "C"
