// The opt-in MPI API (include/starfront/starfront_mpi.hpp over
// starfront_mpi.h), run by mpirun: a runtime on MPI_COMM_WORLD, collective
// analyse and factorize, the solve on rank 0 (refused elsewhere), and a
// not-positive-definite matrix reported with the same column on every rank.
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
    if (rank == 0) {
      const std::vector<double> x = f.solve(b);
      double err = 0;
      for (double xi : x) err = std::fmax(err, std::fabs(xi - 1.0));
      expect(err <= 1e-12, "rank 0 solves A x = A*1 to 1e-12");
      std::printf("[rank 0 of %d] C++ MPI API: max |x - 1| = %.2e\n", nranks, err);
    } else {
      bool refused = false;
      try {
        f.solve(b);
      } catch (const starfront::Error& e) {
        refused = e.status() == STARFRONT_INVALID_ARGUMENT;
      }
      expect(refused, "solve refused on a rank other than 0");
    }
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
