// Helpers shared by the benchmark programs (factor_bench, gpu_bench):
// inputs by name, the median, and CHOLMOD's supernodal factorisation timed
// on the same matrix. Header-only; benchmarks only (never the library).
#pragma once

#include <cholmod.h>
#include <cstdio>

#include <algorithm>
#include <climits>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "analysis/symbolic.hpp"
#include "cpu/blas.hpp"
#include "io/matrix_market.hpp"
#include "solve/solve.hpp"
#include "sparse/generators.hpp"

namespace starfront::bench {

/// Median of v (the upper one for an even count); v non-empty.
inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

/// A dense SPD matrix of order n, lower triangle: off-diagonal entries
/// uniform in (-1, 1) from a fixed seed, diagonal n (diagonally dominant).
/// For timing one front alone: its assembly tree is one front of order n.
inline Status dense_spd(long long n, CscMatrix& A) {
  if (n < 1 || n > 20000)
    return Status::error(StatusCode::invalid_argument, "dense:N: N = " + std::to_string(n) + " is not in 1..20000");
  A = CscMatrix{};
  A.n = static_cast<idx_t>(n);
  const std::size_t nnz = static_cast<std::size_t>(n) * static_cast<std::size_t>(n + 1) / 2;
  A.colptr.resize(static_cast<std::size_t>(n) + 1);
  A.rowind.resize(nnz);
  A.values.resize(nnz);
  unsigned long long x = 0x9E3779B97F4A7C15ULL;
  std::size_t q = 0;
  for (idx_t j = 0; j < A.n; ++j) {
    A.colptr[static_cast<std::size_t>(j)] = static_cast<idx_t>(q);
    for (idx_t i = j; i < A.n; ++i, ++q) {
      x = x * 6364136223846793005ULL + 1442695040888963407ULL;
      A.rowind[q] = i;
      A.values[q] = i == j ? static_cast<double>(n) : static_cast<double>(x >> 11) * 0x1.0p-52 - 1.0;
    }
  }
  A.colptr[static_cast<std::size_t>(n)] = static_cast<idx_t>(q);
  return Status{};
}

/// Parses a decimal integer in [lo, hi] (0 <= lo <= hi; no sign, base
/// prefix, blank or suffix) into v; false otherwise (v then unspecified).
inline bool parse_count(const char* text, long long lo, long long hi, long long& v) {
  if (!*text) return false;
  v = 0;
  for (const char* p = text; *p; ++p) {
    if (*p < '0' || *p > '9') return false;
    v = v * 10 + (*p - '0');
    if (v > hi) return false;
  }
  return v >= lo;
}

/// Parses a whole decimal real, finite and >= 0 (the amalgamation's zero
/// fractions, seconds): digits with an optional point and exponent ("0.2",
/// ".5", "1e3"); no sign, blank, hexadecimal or suffix. Into v; false
/// otherwise (v then unspecified).
inline bool parse_real(const char* text, double& v) {
  if (!((*text >= '0' && *text <= '9') || *text == '.')) return false;
  for (const char* p = text; *p; ++p)
    if (*p == 'x' || *p == 'X') return false;
  char* end = nullptr;
  v = std::strtod(text, &end);
  return end != text && *end == '\0' && std::isfinite(v) && v >= 0;
}

/// Parses exactly n comma-separated decimal numbers, each finite and >= 0,
/// into out[0..n); false otherwise (out then unspecified).
inline bool parse_list(const char* text, std::size_t n, double* out) {
  const char* p = text;
  for (std::size_t i = 0; i < n; ++i) {
    char* end = nullptr;
    if (*p == '\0' || *p == ',' || *p == ' ') return false;
    out[i] = std::strtod(p, &end);
    if (end == p || !std::isfinite(out[i]) || out[i] < 0) return false;
    p = end;
    if (i + 1 < n && *p++ != ',') return false;
  }
  return *p == '\0';
}

/// Parses "a,b,c" (µs a front, µs a column, ns per k(m−k) entry; each
/// finite and >= 0) into a front latency model; false otherwise.
inline bool parse_model(const char* text, FrontLatencyModel& m) {
  double v[3];
  if (!parse_list(text, 3, v)) return false;
  m = {v[0] * 1e-6, v[1] * 1e-6, v[2] * 1e-9};
  return true;
}

/// Loads INPUT: a Matrix Market file, or lap3d:N[:7|27] / lap2d:N / dense:N
/// (generated).
inline Status load(const std::string& in, CscMatrix& A) {
  if (in.rfind("dense:", 0) == 0) {
    char* end = nullptr;
    const long long n = std::strtoll(in.c_str() + 6, &end, 10);
    if (end == in.c_str() + 6 || *end != '\0')
      return Status::error(StatusCode::invalid_argument, "dense:N: '" + in + "' does not end in an integer N");
    return dense_spd(n, A);
  }
  // lap3d:N[:S] and lap2d:N: whole decimal integers (parse_count), nothing after them.
  const bool lap3 = in.rfind("lap3d:", 0) == 0, lap2 = in.rfind("lap2d:", 0) == 0;
  if (lap3 || lap2) {
    const std::string rest = in.substr(6);
    const std::size_t colon = lap3 ? rest.find(':') : std::string::npos;
    long long N = 0, S = 7;
    const bool ok = parse_count(rest.substr(0, colon).c_str(), 0, INT_MAX, N) &&
                    (colon == std::string::npos || parse_count(rest.c_str() + colon + 1, 0, INT_MAX, S));
    if (!ok)
      return Status::error(StatusCode::invalid_argument,
                           "'" + in + "': expected " + (lap3 ? "lap3d:N or lap3d:N:S" : "lap2d:N") + " with integers");
    return lap3 ? laplace3d(static_cast<int>(N), static_cast<int>(S), A) : laplace2d(static_cast<int>(N), A);
  }
  return read_matrix_market(in, A);
}

struct CholmodRun {
  double seconds = 0, lnz = 0, fl = 0, berr = 0;
  /// Median of `repeat` calls (one right-hand side, after a warm-up) of
  /// cholmod_solve followed by the backward error of its solution (one
  /// pass over A, ‖A‖∞ known): the work of Solver::solve without refinement.
  double solve_seconds = 0;
};

/// CHOLMOD supernodal: analyse (default ordering, or `perm` as given), then
/// `repeat` factorisations after a warm-up; backward error of A x = A*1
/// (the warm-up solve), then `repeat` timed solves of it (CholmodRun::
/// solve_seconds).
inline CholmodRun run_cholmod(const CscMatrix& A, const std::vector<idx_t>* perm, int repeat, int threads) {
  // CHOLMOD parallelises through OpenBLAS: give it as many threads as
  // starfront has workers (starfront's runtime set one BLAS thread per
  // worker; its workers are paused now).
  openblas_set_num_threads(threads);
  cholmod_common c;
  cholmod_start(&c);
  c.supernodal = CHOLMOD_SUPERNODAL;
  cholmod_sparse* S = cholmod_allocate_sparse(A.n, A.n, A.nnz(), 1, 1, -1, CHOLMOD_REAL, &c);
  for (idx_t j = 0; j <= A.n; ++j) static_cast<int*>(S->p)[j] = static_cast<int>(A.colptr[j]);
  for (idx_t k = 0; k < A.nnz(); ++k) {
    static_cast<int*>(S->i)[k] = static_cast<int>(A.rowind[k]);
    static_cast<double*>(S->x)[k] = A.values[k];
  }
  std::vector<int> p;
  if (perm) {
    p.assign(perm->begin(), perm->end());
    c.nmethods = 1;
    c.method[0].ordering = CHOLMOD_GIVEN;
  }
  cholmod_factor* L = cholmod_analyze_p(S, perm ? p.data() : nullptr, nullptr, 0, &c);
  CholmodRun r;
  r.lnz = c.lnz;
  r.fl = c.fl;
  std::vector<double> t;
  for (int k = 0; k <= repeat; ++k) {
    const auto t0 = std::chrono::steady_clock::now();
    cholmod_factorize(S, L, &c);
    if (k > 0) t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  r.seconds = median(t);
  std::vector<double> ones(A.n, 1.0), b(A.n);
  symmetric_matvec(A, ones.data(), b.data());
  cholmod_dense* B = cholmod_zeros(A.n, 1, CHOLMOD_REAL, &c);
  std::copy(b.begin(), b.end(), static_cast<double*>(B->x));
  cholmod_dense* X = cholmod_solve(CHOLMOD_A, L, B, &c);
  r.berr = backward_error(A, static_cast<double*>(X->x), b.data());
  cholmod_free_dense(&X, &c);
  t.clear();
  const double norm_a = symmetric_norm_inf(A);
  std::vector<double> residual(A.n);
  for (int k = 0; k < repeat; ++k) {
    const auto t0 = std::chrono::steady_clock::now();
    X = cholmod_solve(CHOLMOD_A, L, B, &c);
    backward_error(A, norm_a, static_cast<double*>(X->x), b.data(), residual.data());
    cholmod_free_dense(&X, &c);  // freeing is part of a cholmod_solve call's cost
    t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  if (!t.empty()) r.solve_seconds = median(t);
  cholmod_free_dense(&B, &c);
  cholmod_free_factor(&L, &c);
  cholmod_free_sparse(&S, &c);
  cholmod_finish(&c);
  openblas_set_num_threads(1);
  return r;
}

/// run_cholmod at each OpenBLAS thread count of `threads`: the fastest run,
/// with its count in `best_threads` (0 when `threads` is empty). With a
/// `label`, each count's time goes to stderr as "LABEL: CHOLMOD with T
/// OpenBLAS thread(s): S s". More threads are not always faster for CHOLMOD
/// (on the H200 machine 16 threads were 10x slower than 8: bench/README.md,
/// session 39), and issue 5 compares with its best count.
inline CholmodRun best_cholmod(const CscMatrix& A, const std::vector<idx_t>* perm, int repeat,
                               const std::vector<int>& threads, int& best_threads, const char* label = nullptr) {
  CholmodRun best;
  best_threads = 0;
  for (int th : threads) {
    const CholmodRun c = run_cholmod(A, perm, repeat, th);
    if (label) std::fprintf(stderr, "%s: CHOLMOD with %d OpenBLAS thread(s): %.4f s\n", label, th, c.seconds);
    if (best_threads == 0 || c.seconds < best.seconds) best = c, best_threads = th;
  }
  return best;
}

}  // namespace starfront::bench
