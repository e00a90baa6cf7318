#include "analysis/ordering.hpp"

#include <pthread.h>

#include <algorithm>
#include <cstdarg>
#include <cstdio>  // scotch.h uses FILE
#include <limits>
#include <numeric>
#include <string>

#include <scotch.h>

#include "analysis/permutation.hpp"

namespace starfront {
namespace {

// Owners of the Scotch objects, so that every exit path releases them
// (a context must outlive the graph bound to it: declare it first).
struct ScotchContext {
  SCOTCH_Context ctx;
  bool live = false;
  ~ScotchContext() { if (live) SCOTCH_contextExit(&ctx); }
};
struct ScotchGraph {
  SCOTCH_Graph graph;
  bool live = false;
  ~ScotchGraph() { if (live) SCOTCH_graphExit(&graph); }
};
struct ScotchStrat {
  SCOTCH_Strat strat;
  bool live = false;
  ~ScotchStrat() { if (live) SCOTCH_stratExit(&strat); }
};

// The ordering strategy; see ordering.hpp for what each part means. The same
// nested dissection is used for the compressed (cpr) and uncompressed (unc) graph.
constexpr const char* kScotchStrategy =
    "c{rat=0.7,"
    "cpr=n{sep=/(vert>120)?m{vert=100,low=h{pass=10},asc=f{bal=0.2}};,"
    "ole=f{cmin=0,cmax=100000,frat=0.0},ose=g},"
    "unc=n{sep=/(vert>120)?m{vert=100,low=h{pass=10},asc=f{bal=0.2}};,"
    "ole=f{cmin=0,cmax=100000,frat=0.0},ose=g}}";

// Halo approximate minimum degree on the whole (compressed) graph: the best
// choice for the very sparse, tree-like graphs of power networks, where
// nested dissection's separators add fill.
// Scotch 7.0.3's method d stops with an internal error on some small graphs
// (seen on random patterns of n <= 60): the minimum fill variant f is then used.
constexpr const char* kScotchMinDegreeStrategy =
    "c{rat=0.7,cpr=d{cmin=0,cmax=100000,frat=0.0},unc=d{cmin=0,cmax=100000,frat=0.0}}";
constexpr const char* kScotchMinFillStrategy =
    "c{rat=0.7,cpr=f{cmin=0,cmax=100000,frat=0.0},unc=f{cmin=0,cmax=100000,frat=0.0}}";

// Scotch reports errors through SCOTCH_errorPrint, which libscotcherr writes
// to stderr. starfront defines it instead (and does not link libscotcherr):
// the message is kept for the Status, and the library prints nothing.
thread_local std::string g_scotch_error;

// Scotch's minimum-degree tree walk (hallOrderHxTree) recurses once per
// vertex of a path-like elimination tree: a tridiagonal matrix of n = 1e5
// overflowed the default 8 MiB stack. The ordering therefore runs on a thread
// of its own with a stack of at least `bytes` (and 64 MiB).
template <class F>
void run_with_stack(std::size_t bytes, F&& body) {
  struct Call {
    F* f;
    static void* run(void* p) {
      (*static_cast<Call*>(p)->f)();
      return nullptr;
    }
  } call{&body};
  pthread_attr_t attr;
  pthread_t thread;
  bool threaded = pthread_attr_init(&attr) == 0;
  threaded = threaded && pthread_attr_setstacksize(&attr, std::max<std::size_t>(bytes, 64u << 20)) == 0;
  threaded = threaded && pthread_create(&thread, &attr, &Call::run, &call) == 0;
  pthread_attr_destroy(&attr);
  if (threaded)
    pthread_join(thread, nullptr);
  else
    body();  // no thread could be made: order on this one
}

Status scotch_failed(const char* what) {
  std::string msg = std::string("Scotch: ") + what + " failed";
  if (!g_scotch_error.empty()) msg += " (" + g_scotch_error + ")";
  g_scotch_error.clear();
  return Status::error(StatusCode::ordering_error, msg);
}

// Symmetric adjacency (both directions, no self loops) of the lower CSC A, in
// Scotch's compact form. Assumes the sizes were checked to fit SCOTCH_Num.
void build_adjacency(const CscMatrix& A, std::vector<SCOTCH_Num>& verttab,
                     std::vector<SCOTCH_Num>& edgetab) {
  const idx_t n = A.n;
  std::vector<idx_t> degree(n, 0);
  for (idx_t j = 0; j < n; ++j)
    for (idx_t p = A.colptr[j]; p < A.colptr[j + 1]; ++p)
      if (A.rowind[p] != j) {
        ++degree[j];
        ++degree[A.rowind[p]];
      }
  verttab.assign(n + 1, 0);
  for (idx_t j = 0; j < n; ++j) verttab[j + 1] = verttab[j] + static_cast<SCOTCH_Num>(degree[j]);
  edgetab.resize(verttab[n]);
  std::vector<SCOTCH_Num> next(verttab.begin(), verttab.end() - 1);
  for (idx_t j = 0; j < n; ++j)
    for (idx_t p = A.colptr[j]; p < A.colptr[j + 1]; ++p) {
      const idx_t i = A.rowind[p];
      if (i == j) continue;
      edgetab[next[j]++] = static_cast<SCOTCH_Num>(i);
      edgetab[next[i]++] = static_cast<SCOTCH_Num>(j);
    }
}

// Orders the graph (verttab, edgetab) of n >= 2 vertices with the strategy of
// `method` in a private single-thread context; peritab[k] = vertex at position k.
Status scotch_order_graph(std::vector<SCOTCH_Num>& verttab, std::vector<SCOTCH_Num>& edgetab,
                          std::vector<SCOTCH_Num>& peritab, const char* strategy) {
  const auto nv = static_cast<SCOTCH_Num>(verttab.size() - 1);
  g_scotch_error.clear();
  ScotchContext context;  // declared first: destroyed after the graphs bound to it
  if (SCOTCH_contextInit(&context.ctx) != 0) return scotch_failed("SCOTCH_contextInit");
  context.live = true;
  if (SCOTCH_contextOptionSetNum(&context.ctx, SCOTCH_OPTIONNUMDETERMINISTIC, 1) != 0)
    return scotch_failed("SCOTCH_contextOptionSetNum");
  if (SCOTCH_contextRandomClone(&context.ctx) != 0) return scotch_failed("SCOTCH_contextRandomClone");
  SCOTCH_contextRandomReset(&context.ctx);
  if (SCOTCH_contextThreadSpawn(&context.ctx, 1, nullptr) != 0)
    return scotch_failed("SCOTCH_contextThreadSpawn");

  ScotchGraph graph;
  if (SCOTCH_graphInit(&graph.graph) != 0) return scotch_failed("SCOTCH_graphInit");
  graph.live = true;
  if (SCOTCH_graphBuild(&graph.graph, 0, nv, verttab.data(), verttab.data() + 1, nullptr, nullptr,
                        verttab[nv], edgetab.empty() ? nullptr : edgetab.data(), nullptr) != 0)
    return scotch_failed("SCOTCH_graphBuild");
  // (No SCOTCH_graphCheck: it costs about Σ degree² — 86% of the ordering
  // time of a dense matrix of order 1500, minutes at 5000 — and the graph is
  // symmetric and loop-free by construction from a lower CSC that
  // order_scotch has checked.)

  ScotchGraph bound;  // the graph seen through the private context
  if (SCOTCH_graphInit(&bound.graph) != 0) return scotch_failed("SCOTCH_graphInit");
  bound.live = true;
  if (SCOTCH_contextBindGraph(&context.ctx, &graph.graph, &bound.graph) != 0)
    return scotch_failed("SCOTCH_contextBindGraph");

  ScotchStrat strat;
  if (SCOTCH_stratInit(&strat.strat) != 0) return scotch_failed("SCOTCH_stratInit");
  strat.live = true;
  if (SCOTCH_stratGraphOrder(&strat.strat, strategy) != 0)
    return scotch_failed("SCOTCH_stratGraphOrder");

  std::vector<SCOTCH_Num> permtab(nv);
  peritab.resize(nv);
  if (SCOTCH_graphOrder(&bound.graph, &strat.strat, permtab.data(), peritab.data(), nullptr,
                        nullptr, nullptr) != 0)
    return scotch_failed("SCOTCH_graphOrder");
  return Status::success();
}

}  // namespace

std::vector<idx_t> order_natural(idx_t n) {
  std::vector<idx_t> perm(n);
  std::iota(perm.begin(), perm.end(), idx_t{0});
  return perm;
}

Status order_scotch(const CscMatrix& A, std::vector<idx_t>& perm, ScotchMethod method) {
  if (Status st = check_lower_csc(A); !st.ok()) return st;  // O(nnz); the graph is built on it
  const idx_t n = A.n;
  if (n <= 1) {  // nothing to order (Scotch is not needed for 0 or 1 vertex)
    perm = order_natural(n);
    return Status::success();
  }
  idx_t offdiag = 0;
  for (idx_t j = 0; j < n; ++j)
    for (idx_t p = A.colptr[j]; p < A.colptr[j + 1]; ++p) offdiag += (A.rowind[p] != j);
  constexpr idx_t num_max = std::numeric_limits<SCOTCH_Num>::max();
  if (n >= num_max || offdiag > num_max / 2)
    return Status::error(StatusCode::unsupported,
                         "Scotch uses 32-bit SCOTCH_Num: n = " + std::to_string(n) +
                             " with " + std::to_string(2 * offdiag) +
                             " adjacency entries exceeds " + std::to_string(num_max) +
                             "; use the natural or a user ordering");

  std::vector<SCOTCH_Num> verttab, edgetab, peritab;
  build_adjacency(A, verttab, edgetab);
  Status st;
  run_with_stack(512 * static_cast<std::size_t>(n), [&] {
    st = scotch_order_graph(
        verttab, edgetab, peritab,
        method == ScotchMethod::minimum_degree ? kScotchMinDegreeStrategy : kScotchStrategy);
    if (!st.ok() && method == ScotchMethod::minimum_degree)
      st = scotch_order_graph(verttab, edgetab, peritab, kScotchMinFillStrategy);
  });
  if (!st.ok()) return st;

  // peritab[k] = original vertex at position k: exactly our perm convention.
  std::vector<idx_t> result(peritab.begin(), peritab.end());
  if (Status st = check_permutation(result, n); !st.ok())
    return Status::error(StatusCode::ordering_error,
                         "Scotch returned an invalid permutation: " + st.message);
  perm = std::move(result);
  return Status::success();
}

}  // namespace starfront

extern "C" {
// Replacements of libscotcherr's error and warning printers (see above).
void SCOTCH_errorProg(const char*) {}
void SCOTCH_errorPrint(const char* fmt, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  if (!starfront::g_scotch_error.empty()) starfront::g_scotch_error += "; ";
  starfront::g_scotch_error += buf;
}
void SCOTCH_errorPrintW(const char*, ...) {}
}
