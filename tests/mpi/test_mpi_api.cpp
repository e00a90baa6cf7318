// The opt-in MPI API (include/starfront/starfront_mpi.hpp over
// starfront_mpi.h), run by mpirun: a runtime on MPI_COMM_WORLD, collective
// analyse and factorize, the collective distributed solve with b on rank 0,
// the distributed-vector solves (the solve's own rows, contiguous blocks)
// against it, bad
// distributed input refused on every rank, and a not-positive-definite
// matrix reported with the same column on every rank.
// Only the public headers are used. Exit status 0 when every rank passed.
#include <mpi.h>
#include <starfront/starfront_mpi.hpp>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

int failures = 0;
int rank = 0, nranks = 1;

void expect(bool ok, const char* what) {
  if (ok) return;
  ++failures;
  std::fprintf(stderr, "[rank %d] FAILED: %s\n", rank, what);
}

/// Lower CSC of the 2D 5-point Laplacian on an N×N grid (0-based), with
/// diagonal `diag` except `bad_diag` at column `bad`.
void laplace2d(int N, double diag, int bad, double bad_diag, std::vector<int64_t>& ptr,
               std::vector<int64_t>& ind, std::vector<double>& val) {
  const int n = N * N;
  ptr.assign(1, 0), ind.clear(), val.clear();
  for (int j = 0; j < n; ++j) {
    ind.push_back(j), val.push_back(j == bad ? bad_diag : diag);
    if (j % N != N - 1) ind.push_back(j + 1), val.push_back(-1.0);
    if (j + N < n) ind.push_back(j + N), val.push_back(-1.0);
    ptr.push_back(static_cast<int64_t>(ind.size()));
  }
}

}  // namespace

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  setenv("STARPU_WORKERS_NOBIND", "1", 0);
  {
    starfront::RuntimeOptions ro;
    ro.ncpu = 1;
    starfront::Runtime rt = starfront::mpi_runtime(MPI_COMM_WORLD, ro);
    const int N = 40, n = N * N;
    std::vector<int64_t> ptr, ind;
    std::vector<double> val;
    laplace2d(N, 4.0, -1, 0.0, ptr, ind, val);
    const auto A = starfront::Matrix::csc<int64_t>(n, ptr.data(), ind.data(), val.data());
    starfront::Factor f(rt, A);
    f.factorize(A);
    // b = A * 1 (lower triangle stored): the solution is all ones.
    std::vector<double> b(n, 0.0);
    for (int j = 0; j < n; ++j)
      for (int64_t p = ptr[j]; p < ptr[j + 1]; ++p) {
        b[ind[p]] += val[p];
        if (ind[p] != j) b[j] += val[p];
      }
    // Collective solve, b and x on rank 0 (the other ranks pass no vector).
    std::vector<double> x0 = b;
    f.solve(rank == 0 ? x0.data() : nullptr, 1, n);
    if (rank == 0) {
      double err = 0;
      for (double xi : x0) err = std::fmax(err, std::fabs(xi - 1.0));
      expect(err <= 1e-12, "rank 0 solves A x = A*1 to 1e-12");
      std::printf("[rank 0 of %d] C++ MPI API: max |x - 1| = %.2e\n", nranks, err);
    }
    MPI_Bcast(x0.data(), n, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    // The solve's own distribution: every row owned once; two right-hand
    // sides (b and 2b) in one call equal rank 0's solution row for row.
    const std::vector<int64_t> rows = starfront::local_rows(f);
    long long total = static_cast<long long>(rows.size());
    MPI_Allreduce(MPI_IN_PLACE, &total, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    expect(total == n, "local rows cover n");
    const std::size_t nl = rows.size(), ld = nl > 0 ? nl : 1;
    std::vector<double> xl(2 * ld);
    for (std::size_t i = 0; i < nl; ++i) xl[i] = b[rows[i]], xl[ld + i] = 2 * b[rows[i]];
    starfront::solve_local(f, xl.data(), 2, static_cast<int64_t>(ld));
    double dl = 0;
    for (std::size_t i = 0; i < nl; ++i)
      dl = std::fmax(dl, std::fmax(std::fabs(xl[i] - x0[rows[i]]), std::fabs(xl[ld + i] - 2 * x0[rows[i]])));
    expect(dl <= 1e-13, "solve_local equals rank 0's solution");
    // Contiguous blocks, in rank order; the last rank holds the remainder.
    const int per = n / nranks, first = per * rank, count = rank == nranks - 1 ? n - first : per;
    std::vector<double> xb(b.begin() + first, b.begin() + first + count);
    starfront::solve_block(f, first, count, xb.data());
    double db = 0;
    for (int i = 0; i < count; ++i) db = std::fmax(db, std::fabs(xb[i] - x0[first + i]));
    expect(db <= 1e-13, "solve_block equals rank 0's solution");
    if (rank == 0)
      std::printf("[rank 0 of %d] distributed vectors: %zu local rows on rank 0, max difference to the rank-0 "
                  "solve %.1e (solve_local, 2 rhs) and %.1e (solve_block)\n", nranks, nl, dl, db);
    // Blocks that do not tile [0, n) are refused on every rank, x unchanged.
    std::vector<double> keep = xb;
    const starfront_status st = starfront_mpi_solve_block(f.get(), 0, count, 1, xb.data(), count > 0 ? count : 1);
    expect(nranks == 1 ? st == STARFRONT_OK : st == STARFRONT_INVALID_ARGUMENT, "overlapping blocks refused");
    if (nranks > 1) expect(xb == keep, "x unchanged on error");
    int code = st, lo = 0, hi = 0;
    MPI_Allreduce(&code, &lo, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(&code, &hi, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    expect(lo == hi, "the same status on every rank");
    // Not positive definite: every rank reports the same column.
    std::vector<double> bad = val;
    bad[static_cast<std::size_t>(ptr[n / 2])] = -30.0;  // the diagonal of column n/2
    long long column = -1;
    try {
      f.factorize(A.with_values(bad.data()));
    } catch (const starfront::Error& e) {
      if (e.status() == STARFRONT_NOT_POSITIVE_DEFINITE) column = e.column();
    }
    expect(column >= 0, "not positive definite reported");
    std::vector<long long> all(nranks);
    MPI_Allgather(&column, 1, MPI_LONG_LONG, all.data(), 1, MPI_LONG_LONG, MPI_COMM_WORLD);
    for (long long c : all) expect(c == all[0], "the same column on every rank");
    if (rank == 0) std::printf("[rank 0 of %d] not positive definite at column %lld on every rank\n", nranks, column);
  }
  int any = 0;
  MPI_Allreduce(&failures, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return any ? 1 : 0;
}
