// Grid Laplacians built directly in lower CSC form. Natural numbering orders
// grid points lexicographically by (z, y, x), so the neighbours of a point,
// visited in lexicographic order of their offset (dz, dy, dx), come out with
// increasing indices: each column is produced already sorted.
#include "sparse/generators.hpp"

#include <new>
#include <stdexcept>
#include <string>
#include <vector>

namespace starfront {
namespace {

/// A neighbour offset (dx, dy, dz) of a stencil.
struct Offset {
  int dx, dy, dz;
};

/// Offsets of the stencil that point to a larger index (the lower triangle),
/// in increasing (dz, dy, dx) order. box: the full 3x3x3 (or 3x3) box,
/// otherwise the face neighbours only. dims: 2 or 3.
std::vector<Offset> lower_offsets(int dims, bool box) {
  std::vector<Offset> offs;
  const int zmax = dims == 3 ? 1 : 0;
  for (int dz = 0; dz <= zmax; ++dz)
    for (int dy = -1; dy <= 1; ++dy)
      for (int dx = -1; dx <= 1; ++dx) {
        const bool later = dz > 0 || (dz == 0 && (dy > 0 || (dy == 0 && dx > 0)));
        const int nonzero = (dx != 0) + (dy != 0) + (dz != 0);
        if (later && (box || nonzero == 1)) offs.push_back({dx, dy, dz});
      }
  return offs;
}

bool inside(idx_t c, int d, idx_t N) { return c + d >= 0 && c + d < N; }

/// Fills the lower CSC of the Laplacian with the given lower offsets on an
/// N x N x Nz grid: diagonal = number of neighbours in the full stencil,
/// off-diagonals -1.
void fill_laplacian(idx_t N, idx_t Nz, const std::vector<Offset>& offs, idx_t nnz,
                    CscMatrix& A) {
  const double diag = 2.0 * static_cast<double>(offs.size());
  A.n = N * N * Nz;
  A.colptr.assign(A.n + 1, 0);
  A.rowind.resize(nnz);
  A.values.resize(nnz);
  idx_t p = 0, j = 0;
  for (idx_t z = 0; z < Nz; ++z)
    for (idx_t y = 0; y < N; ++y)
      for (idx_t x = 0; x < N; ++x, ++j) {
        A.rowind[p] = j;
        A.values[p++] = diag;
        for (const Offset& o : offs)
          if (inside(x, o.dx, N) && inside(y, o.dy, N) && inside(z, o.dz, Nz)) {
            A.rowind[p] = j + o.dx + N * (o.dy + N * o.dz);
            A.values[p++] = -1.0;
          }
        A.colptr[j + 1] = p;
      }
}

/// Builds into a fresh matrix and moves it to out; allocation failures
/// become out_of_memory.
Status build(idx_t N, idx_t Nz, const std::vector<Offset>& offs, idx_t nnz, CscMatrix& out) {
  try {
    CscMatrix A;
    fill_laplacian(N, Nz, offs, nnz, A);
    out = std::move(A);
    return Status::success();
  } catch (const std::bad_alloc&) {
  } catch (const std::length_error&) {
  }
  return Status::error(StatusCode::out_of_memory,
                       "laplacian: cannot allocate " + std::to_string(nnz) + " entries");
}

}  // namespace

Status laplace2d(idx_t N, CscMatrix& out) {
  if (N < 1 || N > 1000000000)
    return Status::error(StatusCode::invalid_argument,
                         "laplace2d: grid size N = " + std::to_string(N) + " is not in 1..1e9");
  const idx_t nnz = N * N + 2 * N * (N - 1);
  return build(N, 1, lower_offsets(2, false), nnz, out);
}

Status laplace3d(idx_t N, int stencil, CscMatrix& out) {
  if (N < 1 || N > 500000)
    return Status::error(StatusCode::invalid_argument,
                         "laplace3d: grid size N = " + std::to_string(N) + " is not in 1..500000");
  if (stencil != 7 && stencil != 27)
    return Status::error(StatusCode::invalid_argument,
                         "laplace3d: stencil " + std::to_string(stencil) + " is not 7 or 27");
  // Along one axis, the pairs (point, point or neighbour) number N + 2(N-1) = 3N-2.
  const idx_t n = N * N * N, m = 3 * N - 2;
  const idx_t nnz = stencil == 7 ? n + 3 * N * N * (N - 1) : (n + m * m * m) / 2;
  return build(N, N, lower_offsets(3, stencil == 27), nnz, out);
}

}  // namespace starfront
