/* starfront: sparse symmetric positive definite direct solver (multifrontal
 * Cholesky on StarPU). The C API (C99; usable from C++, no C++ types).
 *
 * Phases
 *   1. starfront_runtime_init (or starfront_runtime_attach): once per process.
 *   2. starfront_analyse: ordering + symbolic analysis of a sparsity pattern;
 *      returns a starfront_factor handle.
 *   3. starfront_factorize (values with the same pattern, checked) or
 *      starfront_refactorize (new values only): numeric factorisation
 *      A = Pᵀ L Lᵀ P. Repeat as often as wanted on the same pattern: nothing
 *      from the analysis is recomputed and no factor storage is reallocated.
 *   4. starfront_solve: one or many right-hand sides.
 *   5. starfront_get_stats / starfront_memory_estimate / starfront_inertia.
 *   6. starfront_factor_free, then starfront_runtime_free.
 *
 * Conventions
 *   - Every function except the error queries returns a starfront_status;
 *     STARFRONT_OK (0) is success. On failure, starfront_last_error() (a
 *     thread-local message) says what went wrong and starfront_last_error_info()
 *     also gives the failing column and pivot of a not-positive-definite
 *     matrix. Every status-returning call clears the calling thread's last
 *     error first, so it always describes the most recent call on the thread.
 *   - No function aborts, prints or throws: bad arguments (NULL pointers,
 *     negative sizes, out-of-range indices, ...) are refused with
 *     STARFRONT_INVALID_ARGUMENT and a message naming the argument and, for an
 *     array, the position at fault.
 *   - Caller arrays are read only, except the right-hand-side array of
 *     starfront_solve (overwritten with the solution) and the output structs
 *     and handle pointers. The library keeps no pointer to a caller array
 *     after a call returns.
 *   - Counts that can exceed 2^31 (nnz(L), sizes in bytes) are int64_t;
 *     flop counts are double (exact up to 2^53). Times are seconds (double),
 *     wall clock.
 *   - Only this header and starfront.hpp are public; no StarPU type appears.
 *
 * Thread safety
 *   - One runtime per process (StarPU can be initialised once at a time):
 *     starfront_runtime_init / _attach / _free must not race with each other
 *     (they are internally serialised, and a second runtime is refused).
 *   - Different starfront_factor objects may be analysed, factorised and
 *     solved concurrently from different threads, on the same runtime: each
 *     factorisation submits its own StarPU tasks from the calling thread and
 *     waits only for them. Calls on the *same* starfront_factor are
 *     serialised internally by a per-factor lock (safe, but not concurrent).
 *   - starfront_factor_free must not race with another call on that factor,
 *     nor starfront_runtime_free with a call that uses the runtime (it is
 *     refused while a factor bound to the runtime is alive).
 *   - starfront_last_error* are per thread.
 *
 * Scope of this version: Cholesky (LLᵀ, symmetric positive definite) and
 * LDLᵀ for symmetric indefinite and quasi-definite matrices
 * (starfront_factor_options.method; docs/LDLT.md in the source tree):
 * symmetric pivoting with 1×1 and 2×2 pivots inside each front (threshold
 * u), static perturbation of tiny pivots that have no acceptable
 * alternative (no delayed pivoting yet), the inertia (starfront_inertia)
 * and iterative refinement in starfront_solve. With a runtime that has
 * CUDA workers (not under MPI), Cholesky's fronts may run on the GPUs as the
 * scheduler places them (the small fronts of a subtree in one fused kernel;
 * subtrees with fronts above order 232 stay on the CPU workers); LDLᵀ's
 * fronts run on the CPU workers unless a scheduler with cost models places
 * them on a GPU (docs/LDLT.md).
 */
#ifndef STARFRONT_H
#define STARFRONT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define STARFRONT_VERSION_MAJOR 0
#define STARFRONT_VERSION_MINOR 1
#define STARFRONT_VERSION_PATCH 0

/* ------------------------------------------------------------------ status */

/** Result of every call. Values 0..9 and 11 mirror the library's internal codes. */
typedef enum starfront_status {
  STARFRONT_OK = 0,
  STARFRONT_INVALID_ARGUMENT = 1,      /**< an argument is NULL, out of range or inconsistent */
  STARFRONT_IO_ERROR = 2,              /**< (not returned by this API; reserved) */
  STARFRONT_PARSE_ERROR = 3,           /**< (not returned by this API; reserved) */
  STARFRONT_UNSUPPORTED = 4,           /**< valid input of a kind not handled (e.g. too large for Scotch) */
  STARFRONT_NOT_SYMMETRIC = 5,         /**< STARFRONT_FULL input that is not symmetric (message names a pair) */
  STARFRONT_NOT_POSITIVE_DEFINITE = 6, /**< a pivot <= pivot_tol·|a_jj| or not finite (column in the error info) */
  STARFRONT_ORDERING_ERROR = 7,        /**< Scotch failed */
  STARFRONT_RUNTIME_ERROR = 8,         /**< StarPU failed, or is not (or already) started */
  STARFRONT_OUT_OF_MEMORY = 9,         /**< an allocation failed */
  STARFRONT_INDEX_OVERFLOW = 10,       /**< 32-bit indices too small for the factor (message: predicted sizes) */
  STARFRONT_SINGULAR = 11              /**< LDLᵀ met a zero pivot: the error info names the column (caller's
                                            numbering and base); starfront_inertia then counts it in nzero;
                                            no solve */
} starfront_status;

/** Short stable name of a status ("ok", "invalid_argument", ...); never NULL. */
const char* starfront_status_name(starfront_status status);

/** Message of the last failed call on this thread ("" when the last call
 *  succeeded). The string stays valid until the next starfront call on this
 *  thread. Never NULL. */
const char* starfront_last_error(void);

/** Details of the last failed call on this thread. */
typedef struct starfront_error_info {
  starfront_status status; /**< STARFRONT_OK when the last call succeeded */
  int64_t column;  /**< failing column of a not-positive-definite matrix (or the
                        first zero pivot of a singular one), in the caller's
                        numbering and index base, or -1 */
  double pivot;    /**< the offending pivot value when column >= 0 */
  const char* message; /**< same as starfront_last_error() */
} starfront_error_info;

/** Fills *info (if not NULL) and returns info->status. Does not clear the error. */
starfront_status starfront_last_error_info(starfront_error_info* info);

/* ----------------------------------------------------------------- runtime */

typedef struct starfront_runtime starfront_runtime;

typedef struct starfront_runtime_options {
  int ncpu;              /**< CPU workers; -1 (default): all cores not driving a GPU, less one left
                              to the application when ncuda > 0 and at least two remain (not under
                              MPI, nor when STARPU_NCPU, STARPU_RESERVE_NCPU or
                              STARPU_MAIN_THREAD_BIND is set) */
  int ncuda;             /**< GPUs; default 0. Each GPU gets 4 CUDA workers (streams, one driving thread) unless STARPU_NWORKER_PER_CUDA sets another count. With GPUs (not under MPI) starfront_analyse builds the GPU graph and the tasks of tiled fronts run on the GPUs only */
  const char* scheduler; /**< StarPU scheduling policy name, or "auto"; NULL (default): "auto", which is
                              "lws" without GPUs, "prio" with one GPU, "dmda" with several ("lws" under MPI). With
                              GPUs and a policy without cost models (eager, prio, lws, ws, random, ...),
                              not under MPI, tile and Cholesky front tasks run on the GPUs only, LDLT
                              front tasks on the CPUs. The environment's STARPU_SCHED wins. */
} starfront_runtime_options;

/** Sets the defaults above. Returns STARFRONT_INVALID_ARGUMENT when opts is NULL. */
starfront_status starfront_runtime_options_init(starfront_runtime_options* opts);

/** Starts StarPU with `opts` (NULL: defaults) and returns the runtime in *rt.
 *  StarPU's workers sleep (paused) while no factorisation runs.
 *  Sets STARPU_SILENT=1 and STARPU_FXT_TRACE=0 unless already in the
 *  environment, installs no signal handler, and sets OpenBLAS to one thread
 *  (parallelism comes from the tasks).
 *  Errors: INVALID_ARGUMENT (rt NULL), RUNTIME_ERROR (a starfront runtime is
 *  already alive; StarPU already initialised by the application: use
 *  starfront_runtime_attach; unknown scheduler: the message lists the known
 *  ones; ncpu < -1, ncuda < 0, no worker; starpu_init failed; fewer GPUs
 *  than requested). *rt is NULL on failure. */
starfront_status starfront_runtime_init(const starfront_runtime_options* opts,
                                        starfront_runtime** rt);

/** Uses a StarPU that the application already started with starpu_init.
 *  starfront never pauses, reconfigures nor shuts down that StarPU
 *  (starfront_runtime_free only releases the handle); the application keeps
 *  it running until every starfront_factor bound to it is freed, and should
 *  configure its BLAS to one thread per worker itself.
 *  Errors: INVALID_ARGUMENT (rt NULL), RUNTIME_ERROR (StarPU not initialised;
 *  a starfront runtime is already alive). */
starfront_status starfront_runtime_attach(starfront_runtime** rt);

/** Worker counts of the running StarPU (either pointer may be NULL): CPU
 *  workers, and GPUs with CUDA workers (not the CUDA workers themselves:
 *  a GPU may have several, one per stream).
 *  Errors: INVALID_ARGUMENT (rt NULL). */
starfront_status starfront_runtime_workers(const starfront_runtime* rt, int* ncpu, int* ncuda);

/** Shuts StarPU down (not when attached) and frees rt. NULL is a no-op.
 *  Errors: INVALID_ARGUMENT when factors bound to rt are still alive (rt is
 *  then left untouched: free them first). */
starfront_status starfront_runtime_free(starfront_runtime* rt);

/* ------------------------------------------------------------------ matrix */

/** Which part of the symmetric matrix the arrays hold. */
typedef enum starfront_triangle {
  STARFRONT_LOWER = 0, /**< entries (i, j) with i >= j only */
  STARFRONT_UPPER = 1, /**< entries (i, j) with i <= j only */
  STARFRONT_FULL = 2   /**< both triangles; must be symmetric (exactly: same pattern and values,
                            checked at every factorisation); one triangle is used */
} starfront_triangle;

typedef enum starfront_format {
  STARFRONT_CSC = 0, /**< ptr indexes columns, ind holds row indices */
  STARFRONT_CSR = 1  /**< ptr indexes rows, ind holds column indices */
} starfront_format;

typedef enum starfront_index_type {
  STARFRONT_INT64 = 0, /**< ptr, ind (and user_perm) are int64_t arrays */
  STARFRONT_INT32 = 1  /**< ptr, ind (and user_perm) are int32_t arrays */
} starfront_index_type;

/** A sparse symmetric n×n matrix in the caller's arrays (read only).
 *  Let nnz = ptr[n] - base. ptr has n+1 entries, ptr[0] = base, non-decreasing;
 *  ind and values have nnz entries; every ind[p] lies in [base, n-1+base].
 *  Entries within a column (row) may be unsorted; duplicates are summed.
 *  Explicit zeros are part of the pattern. The diagonal need not be stored
 *  (a missing diagonal entry is zero). */
typedef struct starfront_matrix {
  int64_t n;                        /**< order, >= 0 (<= INT32_MAX with STARFRONT_INT32) */
  starfront_format format;          /**< default STARFRONT_CSC */
  starfront_triangle triangle;      /**< default STARFRONT_LOWER */
  starfront_index_type index_type;  /**< default STARFRONT_INT64 */
  int base;                         /**< index base, 0 (default) or 1, of ptr, ind and user_perm */
  const void* ptr;                  /**< n+1 pointers */
  const void* ind;                  /**< nnz indices */
  const double* values;             /**< nnz values; may be NULL for starfront_analyse */
} starfront_matrix;

/** Sets the defaults above (n = 0, all pointers NULL). */
starfront_status starfront_matrix_init(starfront_matrix* A);

/* ---------------------------------------------------------------- analysis */

typedef struct starfront_factor starfront_factor;

typedef enum starfront_ordering {
  STARFRONT_ORDERING_AUTO = 0,       /**< best (fewest flops) of Scotch ND and Scotch AMD */
  STARFRONT_ORDERING_SCOTCH_ND = 1,  /**< Scotch nested dissection */
  STARFRONT_ORDERING_SCOTCH_AMD = 2, /**< Scotch halo approximate minimum degree */
  STARFRONT_ORDERING_NATURAL = 3,    /**< the given order (then the assembly-tree postorder) */
  STARFRONT_ORDERING_USER = 4,       /**< user_perm (then the assembly-tree postorder) */
  /** Scotch ND or Scotch AMD, whichever gives the assembly tree the shorter
   *  modelled critical path (longest leaf-to-root sum of front latencies
   *  under the fused GPU kernel's latency model: a front of order m with k
   *  fully-summed columns costs 10.5 µs + 0.36 µs·k + 0.6 ns·k(m−k)), not
   *  the fewer flops. For small latency-bound matrices (power-grid KKT
   *  systems) factorised on a GPU, whose time is that path. */
  STARFRONT_ORDERING_SCOTCH_PATH = 5
} starfront_ordering;

/** Values of starfront_analysis_options.amalgamate. */
typedef enum starfront_amalgamation {
  STARFRONT_AMALGAMATE_NONE = 0,    /**< fundamental supernodes only */
  STARFRONT_AMALGAMATE_RELAXED = 1, /**< relaxed amalgamation: merges that add few explicit zeros (the
                                         default's choice except on the GPU graph: STARFRONT_AMALGAMATE_AUTO) */
  /** Merges chosen for the assembly tree's modelled critical path (the
   *  latency model of STARFRONT_ORDERING_SCOTCH_PATH), in two passes (each
   *  parent takes the prefix of its children, longest path first, that
   *  shortens its own path most; then further merges within the path so
   *  reached), and no merge makes a front of order above 232 (the largest
   *  the fused GPU kernel keeps in shared memory; a fundamental supernode
   *  above it stays as it is). The result is kept when its path is shorter
   *  than the relaxed rule's under the same cap, else that rule's is: the
   *  path is never longer than the capped relaxed rule's (it can be longer
   *  than RELAXED's on matrices whose merges exceed the cap). Fewer merges:
   *  more fronts, usually fewer flops for a given ordering. For the same
   *  matrices as STARFRONT_ORDERING_SCOTCH_PATH. */
  STARFRONT_AMALGAMATE_CRITICAL_PATH = 2,
  /** The default (starfront_analysis_options_init): RELAXED, except on the
   *  GPU graph (a runtime with CUDA workers, not under MPI), where the
   *  latency rule may choose CRITICAL_PATH instead. The rule builds the
   *  critical-path analysis too (with STARFRONT_ORDERING_AUTO, ordered as
   *  STARFRONT_ORDERING_SCOTCH_PATH; other orderings are kept) and keeps
   *  it when every front of its tree has order <= 232 (the whole
   *  factorisation is then one fused GPU kernel, whose time is the tree's
   *  modelled critical path) and that path is shorter than the relaxed
   *  analysis's, or the relaxed analysis has a front above 232. On
   *  power-grid KKT matrices it halves the factorisation on an H200;
   *  meshes keep RELAXED (their largest column count is above 232, which
   *  one extra pass over the column counts finds). starfront_analysis_used
   *  says what was chosen. */
  STARFRONT_AMALGAMATE_AUTO = 3
} starfront_amalgamation;

/** How contribution blocks share memory ("slots", planned at analysis over
 *  the task submission order so that reuse is safe in any execution order;
 *  see DESIGN.md). */
typedef enum starfront_slot_policy {
  STARFRONT_SLOTS_DAG = 0,       /**< reuse only where the task graph already orders it (default) */
  STARFRONT_SLOTS_PRIVATE = 1,   /**< one slot per contribution block: no reuse */
  STARFRONT_SLOTS_BUDGET = 2,    /**< fit in cb_budget_bytes, adding the fewest task dependencies */
  STARFRONT_SLOTS_BUDGET_MIN = 3 /**< the least memory the planner reaches (adds dependencies) */
} starfront_slot_policy;

typedef struct starfront_analysis_options {
  starfront_ordering ordering; /**< default STARFRONT_ORDERING_AUTO */
  /** With STARFRONT_ORDERING_USER: n entries, the matrix's index type and
   *  base; user_perm[k] = the row/column eliminated k-th (a permutation,
   *  checked). The analysis then only postorders within it. Otherwise ignored. */
  const void* user_perm;
  int amalgamate; /**< a starfront_amalgamation: STARFRONT_AMALGAMATE_AUTO (3, default), _RELAXED (1),
                       _NONE (0) or _CRITICAL_PATH (2) */
  starfront_slot_policy slot_policy; /**< default STARFRONT_SLOTS_DAG */
  /** STARFRONT_SLOTS_BUDGET: bytes all contribution-block slots may hold
   *  together (>= 0); a budget below the planner's minimum makes
   *  starfront_analyse fail with OUT_OF_MEMORY, the message giving the minimum. */
  double cb_budget_bytes;
} starfront_analysis_options;

starfront_status starfront_analysis_options_init(starfront_analysis_options* opts);

/** Analyses the pattern of A (values are not read) and returns a new factor
 *  object in *F, bound to rt. rt may be NULL: the factorisations of F then run
 *  in the calling thread without StarPU (the sequential executor). When rt
 *  has CUDA workers (and was not started for MPI), the task graph is the GPU
 *  graph (as `starfront solve --ncuda`: small fronts in fused subtrees, one
 *  task per medium front, only fronts above order 8192 tiled); otherwise the
 *  default graph, which suits CPU workers.
 *  The library keeps a private lower-CSC 0-based int64 copy of the pattern
 *  (duplicates merged) and the map from the caller's entries to it; the
 *  caller's arrays are not referenced after the call.
 *  Cost: ordering + O(nnz(A) + n + Σ front orders); memory O(nnz(A) + n).
 *  Errors: INVALID_ARGUMENT (NULL A, ptr, ind or F; n < 0; bad enum or base;
 *  ptr[0] != base, ptr decreasing, an index out of range — the message gives
 *  the array position; an entry in the wrong triangle for LOWER/UPPER; bad
 *  user_perm), NOT_SYMMETRIC (FULL input with an entry whose mirror is
 *  missing, naming the pair), UNSUPPORTED / ORDERING_ERROR (Scotch),
 *  INDEX_OVERFLOW (STARFRONT_INT32 and the predicted nnz(L) exceeds
 *  INT32_MAX: the message gives the predicted nnz(L), flops and factor
 *  bytes; analyse with STARFRONT_INT64 indices), OUT_OF_MEMORY.
 *  *F is NULL on failure. */
starfront_status starfront_analyse(starfront_runtime* rt, const starfront_matrix* A,
                                   const starfront_analysis_options* opts,
                                   starfront_factor** F);

/* ----------------------------------------------------------- factorisation */

/** Factorisation method. */
typedef enum starfront_method {
  STARFRONT_METHOD_LLT = 0,            /**< Cholesky; NOT_POSITIVE_DEFINITE for other matrices */
  STARFRONT_METHOD_LDLT = 1,           /**< symmetric indefinite: L D Lᵀ with 1×1/2×2 pivots */
  STARFRONT_METHOD_QUASI_DEFINITE = 2, /**< L D Lᵀ without pivoting, for symmetric quasi-definite
                                            matrices [H + ρI, Aᵀ; A, −δI] (faster, exact inertia) */
  STARFRONT_METHOD_AUTO = 3            /**< LLᵀ, then LDLᵀ when LLᵀ finds the matrix not positive
                                            definite (starfront_stats.method says which ran) */
} starfront_method;

typedef struct starfront_factor_options {
  /** Relative pivot tolerance of LLᵀ: the pivot d_jj (Schur complement diagonal
   *  when column j is eliminated) must be finite and > tol·|a_jj|, with
   *  tol = pivot_tol when pivot_tol >= 0, and tol = n·ε (ε = 2.2e-16, n the
   *  order) when pivot_tol < 0 (the default, -1). 0 refuses only d_jj <= 0
   *  and NaN. Must be finite. */
  double pivot_tol;
  /** Watchdog (factors bound to a runtime): when no task of the
   *  factorisation completes for this many seconds, it is cancelled and the
   *  call returns RUNTIME_ERROR naming the tasks still running (if they do
   *  not stop either, the factorisation is abandoned: the message says so
   *  and the runtime should not be used again). 0 (the default): none.
   *  Must be finite and >= 0. */
  double watchdog_seconds;
  /** Factorisation method (default STARFRONT_METHOD_LLT). */
  starfront_method method;
  /** LDLᵀ threshold u in (0, 0.5] (0: the default 0.01): a 1×1 pivot d is
   *  accepted when |d| >= u × the largest off-diagonal |entry| of its column,
   *  a 2×2 pivot by the analogous test (Duff & Reid 1983); |l_ij| <= 1/u. */
  double ldlt_threshold;
  /** LDLᵀ static perturbation τ in (0, 1) (0: the default √ε ≈ 1.5e-8): a
   *  pivot of column j at most τ·c_j in magnitude (c_j = max_i |a_ij|) with
   *  no acceptable alternative in its front becomes ±τ·c_j (counted in
   *  starfront_stats.perturbed_pivots; the inertia is then not guaranteed). */
  double perturbation;
  /** Iterative refinement steps at most in each later starfront_solve, 0..100
   *  (starfront_factor_options_init: 3; 0: none). Stops early at backward
   *  error <= 1e-15 or when a step does not halve it. */
  int refine_steps;
} starfront_factor_options;

/** Defaults: pivot_tol -1 (n·ε), method LLT, ldlt_threshold 0.01,
 *  perturbation √ε, refine_steps 3. */
starfront_status starfront_factor_options_init(starfront_factor_options* opts);

/** Numeric factorisation of A, whose description (n, format, triangle, index
 *  type, base) and pattern (ptr, and ind entry by entry in the same order)
 *  must be those given to starfront_analyse; checked in O(nnz).
 *  opts NULL: defaults. A->values (nnz finite doubles) are copied into the
 *  private matrix (duplicates summed); for STARFRONT_FULL the two triangles
 *  must hold equal values.
 *  Errors: INVALID_ARGUMENT (NULL argument; a different description or
 *  pattern: the message names the first differing column or entry — analyse
 *  again; a non-finite value; pivot_tol not finite; an unknown method;
 *  ldlt_threshold, perturbation or refine_steps out of range), NOT_SYMMETRIC
 *  (FULL: names the first unequal pair), NOT_POSITIVE_DEFINITE (LLᵀ: the
 *  error info gives the column in the caller's numbering and base, and the
 *  pivot), SINGULAR (LDLᵀ: a zero pivot, column in the error info; the
 *  inertia stays available), RUNTIME_ERROR (StarPU; LDLᵀ overflow). After a
 *  failure F cannot solve until a factorisation succeeds. With CUDA
 *  workers, a Cholesky factorisation that is one fused GPU kernel (small
 *  KKT-like matrices) runs it from the calling thread without StarPU: that
 *  thread then keeps a CUDA stream and device buffers until it ends; its
 *  current CUDA device is set back to the one it had (device 0 for a
 *  thread that never chose one). */
starfront_status starfront_factorize(starfront_factor* F, const starfront_matrix* A,
                                     const starfront_factor_options* opts);

/** Refactorisation with new values on the analysed pattern: `values` has the
 *  nnz entries of the caller's ind array at analysis, in the same order. The
 *  values are scattered in O(nnz) straight into the values buffer of the
 *  factor's solver (page-locked when CUDA workers run; allocated by the
 *  first factorisation: no allocation of matrix or factor storage here),
 *  which becomes the matrix kept for iterative refinement without a
 *  further copy, then factorised as starfront_factorize does.
 *  Errors: as starfront_factorize (values NULL: INVALID_ARGUMENT). */
starfront_status starfront_refactorize(starfront_factor* F, const double* values,
                                       const starfront_factor_options* opts);

/* ------------------------------------------------------------------- solve */

/** Overwrites B with A⁻¹B. B is n×nrhs, column-major, leading dimension ldb
 *  (column k starts at B + k·ldb), in the caller's row numbering. Runs in the
 *  calling thread (sequential multifrontal substitution; LLᵀ: over the task
 *  graph's fronts and tiles), then up to refine_steps steps of iterative
 *  refinement (the right-hand sides still refining are solved together)
 *  (starfront_stats.refine_steps, .backward_error report the last solve).
 *  F bound to a runtime of starfront_runtime_init_mpi: collective and
 *  distributed, B and ldb significant on rank 0 only (starfront_mpi.h).
 *  Errors: INVALID_ARGUMENT (F NULL; no successful factorisation; nrhs < 0;
 *  ldb < max(1, n); B NULL while n·nrhs > 0; a non-finite entry in B);
 *  RUNTIME_ERROR (the solution overflows double precision; or, when
 *  refinement is on, the backward error stays above 1.5e-8: an unstable
 *  factorisation, the message gives the figure). B is left unchanged on
 *  any error. */
starfront_status starfront_solve(starfront_factor* F, int64_t nrhs, double* B, int64_t ldb);

/* ------------------------------------------------------- information, free */

/** Inertia of the last factorisation: positive, negative and zero
 *  eigenvalue counts (Sylvester: the signs of D). (n, 0, 0) after a
 *  successful Cholesky; LDLᵀ: also after a SINGULAR failure (zero pivots
 *  counted in nzero). Exact in exact arithmetic when
 *  starfront_stats.perturbed_pivots is 0 (not guaranteed otherwise).
 *  Any output pointer may be NULL.
 *  Errors: INVALID_ARGUMENT (F NULL, no factorisation that succeeded or
 *  stopped as SINGULAR). */
starfront_status starfront_inertia(const starfront_factor* F, int64_t* npos, int64_t* nneg,
                                   int64_t* nzero);

/** Memory estimates in bytes, available right after the analysis.
 *  Contribution blocks (CBs) live in slots planned at analysis
 *  (starfront_analysis_options.slot_policy): cb_planned_bytes holds under
 *  ANY execution order the runtime picks; the other CB figures are for
 *  comparison. StarPU adds its own bookkeeping (not counted). */
typedef struct starfront_memory {
  int64_t factor_bytes;   /**< 8 × doubles of L (dense front panels, amalgamated) */
  int64_t cb_peak_bytes;  /**< CB memory reserved at most: cb_planned_bytes + subtree_workspace_bytes × CPU workers */
  int64_t matrix_bytes;   /**< private copies of A: values (two arrays: the one the caller's values are scattered into and the one kept for refinement), row indices and column pointers (two each), caller map */
  int64_t analysis_bytes; /**< symbolic factor, assembly plan and task graph (index arrays) */
  int64_t total_bytes;    /**< sum of the four above */
  int64_t cb_planned_bytes;        /**< sum of the slot capacities */
  int64_t cb_lower_bound_bytes;    /**< max over the submission order of the live CBs: no plan goes below */
  int64_t cb_private_bytes;        /**< one slot per CB (no reuse) */
  int64_t cb_level_stack_bytes;    /**< classical level-synchronous estimate (CBs of two adjacent tree levels) */
  int64_t subtree_workspace_bytes; /**< largest internal workspace of one fused-subtree task */
  int64_t slots;                   /**< number of slots */
  int64_t added_deps;              /**< task dependencies the slot planner added (budget policies) */
} starfront_memory;

/** Errors: INVALID_ARGUMENT (F or out NULL). */
starfront_status starfront_memory_estimate(const starfront_factor* F, starfront_memory* out);

typedef struct starfront_stats {
  int64_t n;               /**< order */
  int64_t nnz_input;       /**< entries given by the caller (ptr[n] - base) */
  int64_t nnz_a;           /**< entries of the private lower triangle (duplicates merged) */
  int64_t nnz_l;           /**< entries of L including the diagonal, as stored (amalgamated) */
  int64_t nnz_l_exact;     /**< nnz(L) without amalgamation's explicit zeros */
  double flops;            /**< flops of one factorisation, Σ_j c_j² over the stored columns of L */
  int64_t supernodes;      /**< fronts of the assembly tree */
  int64_t max_front;       /**< largest front order */
  int64_t tasks;           /**< tasks of the last successful factorisation */
  int64_t factorizations;  /**< successful numeric factorisations of this object */
  int64_t solves;          /**< successful starfront_solve calls */
  double t_analyse_s;      /**< analysis (conversion, ordering, symbolic, plan) */
  double t_factor_s;       /**< last successful factorisation (value copy included) */
  double t_factor_first_s; /**< first successful factorisation */
  double t_solve_s;        /**< last successful solve */
  double min_pivot_ratio;  /**< LLᵀ: min d_jj/|a_jj| of the last successful factorisation (0 before; LDLᵀ: 0) */
  int method;              /**< starfront_method that ran last (LLT, LDLT or QUASI_DEFINITE; -1 before) */
  int64_t perturbed_pivots;  /**< LDLᵀ: pivots replaced by ±τ·c_j (inertia not guaranteed when > 0) */
  int64_t delayed_pivots;    /**< LDLᵀ: always 0 (delayed pivoting is not implemented) */
  int64_t two_by_two_pivots; /**< LDLᵀ: 2×2 pivot blocks */
  int64_t refine_steps;    /**< refinement steps of the last solve (largest over its right-hand sides) */
  double backward_error;   /**< backward error ‖Ax−b‖∞/(‖A‖∞‖x‖∞+‖b‖∞) after the last solve (largest) */
} starfront_stats;

/** Errors: INVALID_ARGUMENT (F or out NULL). */
starfront_status starfront_get_stats(const starfront_factor* F, starfront_stats* out);

/** The analysis F was built with: *ordering the one that ran
 *  (STARFRONT_ORDERING_SCOTCH_ND or _SCOTCH_AMD when AUTO or SCOTCH_PATH
 *  picked one, else the requested _NATURAL or _USER) and *amalgamation
 *  the one that ran (_NONE, _RELAXED or _CRITICAL_PATH; AUTO's choice).
 *  Either pointer may be NULL. Errors: INVALID_ARGUMENT (F NULL). */
starfront_status starfront_analysis_used(const starfront_factor* F, starfront_ordering* ordering,
                                         starfront_amalgamation* amalgamation);

/** Frees F (NULL: no-op). Always returns STARFRONT_OK. */
starfront_status starfront_factor_free(starfront_factor* F);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* STARFRONT_H */
