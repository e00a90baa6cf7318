// Model problems: finite-difference Laplacians on square and cubic grids, the
// standard scalable SPD test matrices of sparse direct solvers.
#pragma once

#include "sparse/csc.hpp"
#include "sparse/types.hpp"

namespace starfront {

/// 5-point Laplacian on an N x N grid with Dirichlet boundary (neighbours
/// outside the grid dropped): n = N², diagonal 4, off-diagonals -1. Grid point
/// (x, y) is index x + N*y (0-based, x fastest). `out` gets the lower
/// triangle, rows sorted; nnz(lower) = N² + 2N(N-1). SPD.
/// Errors: invalid_argument for N < 1 or N > 1e9 (out untouched),
/// out_of_memory when the arrays cannot be allocated.
Status laplace2d(idx_t N, CscMatrix& out);

/// 3D Laplacian on an N x N x N grid with Dirichlet boundary, point (x, y, z)
/// at index x + N*y + N²*z (0-based, x fastest). stencil 7: diagonal 6, the 6
/// face neighbours -1, nnz(lower) = N³ + 3N²(N-1). stencil 27: diagonal 26,
/// all 26 neighbours of the 3x3x3 box -1, nnz(lower) = (N³ + (3N-2)³)/2. Both
/// are SPD (weakly diagonally dominant, irreducible). `out` gets the lower
/// triangle, rows sorted, built column by column (no triplet sort).
/// Errors: invalid_argument for N < 1, N > 500000 or stencil not 7 or 27
/// (out untouched), out_of_memory when the arrays cannot be allocated.
Status laplace3d(idx_t N, int stencil, CscMatrix& out);

}  // namespace starfront
