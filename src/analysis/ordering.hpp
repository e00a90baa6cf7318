// Fill-reducing orderings: Scotch nested dissection or minimum degree, and
// the natural order.
//
// order_scotch builds the adjacency graph of the symmetric matrix whose lower
// triangle is A (every off-diagonal entry (i, j) gives the edges i-j and j-i;
// diagonal entries give no self loop) and orders it with SCOTCH_graphOrder
// (not SCOTCH_graphCheck, whose cost grows as the sum of the squared degrees:
// a matrix with dense rows took minutes there; the graph is correct by
// construction from a checked CSC) under this strategy (kScotchStrategy in
// ordering.cpp, written in Scotch's strategy grammar):
//   c{rat=0.7, cpr=ND, unc=ND}   order the compressed graph (vertices with
//                                identical adjacency merged) when compression
//                                removes >= 30% of the vertices, else the graph
//   ND = n{sep=/(vert>120)?m{vert=100,low=h{pass=10},asc=f{bal=0.2}};,
//          ole=f{cmin=0,cmax=100000,frat=0.0}, ose=g}
//        nested dissection while a part has more than 120 vertices: multilevel
//        vertex separators (coarsen to 100 vertices, greedy graph growing,
//        Fiduccia–Mattheyses refinement with 20% imbalance); leaves ordered by
//        halo approximate minimum fill with no column-block amalgamation
//        (cmin=0, frat=0: starfront amalgamates supernodes itself, and Scotch's
//        blocking only adds fill); separators by Gibbs–Poole–Stockmeyer.
// Disconnected components are ordered separately. Measured here (mean of 4
// random seeds, exact nnz(L) / flops), against Scotch's default strategy
// (SCOTCH_stratInit alone; SCOTCH_STRATQUALITY gave the same):
//   activsg2000_hykkt_10   4.06e5 / 1.95e7  (default 5.89e5 / 2.68e7)
//   opf_case10000_goc_kkt  6.95e5 / 5.11e7  (default 9.46e5 / 6.74e7)
//   bcsstk13               2.89e5 / 5.98e7  (default 3.16e5 / 6.67e7)
//   3D 7-point 30^3        4.73e6 / 3.04e9  (default 5.36e6 / 3.11e9)
//   2D 5-point 200^2       1.10e6 / 1.19e8  (default 1.34e6 / 1.31e8)
//
// Determinism: the ordering runs in a private Scotch context with one thread
// and its own random generator reset at every call, so the same matrix gives
// the same permutation in every call and every process.
//
// Inputs/outputs: A (checked again here with check_lower_csc: an invalid A
// gives check_lower_csc's error, perm untouched); perm[k] =
// original index of pivot k, a bijection of 0..n-1 (validated before return).
// Workspace: the graph (n+1 + 2*offdiag(A) SCOTCH_Num) and Scotch's own.
// Failure: unsupported when n or 2*offdiag(A) does not fit Scotch's 32-bit
// SCOTCH_Num; ordering_error when a Scotch call fails (Scotch then prints its
// own message on stderr through SCOTCH_errorPrint) or returns something that
// is not a permutation. Nothing is printed on success. perm is only written on
// success.
//
// References: F. Pellegrini, "Scotch and libScotch 7.0 User's Guide", Inria
// (SCOTCH_graphOrder, SCOTCH_context*, ordering strategy grammar: methods c,
// n, m, h, f, g); F. Pellegrini, J. Roman, P. Amestoy,
// "Hybridizing nested dissection and halo approximate minimum degree for
// efficient sparse matrix ordering", Concurrency: Pract. Exper. 12 (2000).
#pragma once

#include <vector>

#include "sparse/csc.hpp"

namespace starfront {

/// Which of Scotch's ordering strategies order_scotch runs.
enum class ScotchMethod {
  nested_dissection,  ///< the nested dissection described above (kScotchStrategy)
  minimum_degree,     ///< halo approximate minimum degree on the whole graph
                      ///< (strategy c{cpr=d{..},unc=d{..}}; Scotch's method d)
};

/// Scotch ordering of the lower CSC matrix A (see file header).
/// Measured here (exact nnz(L) / flops): minimum_degree gives CHOLMOD's AMD
/// figures on power networks (activsg2000_hykkt_10 3.22e5 / 1.37e7 against
/// 4.06e5 / 1.95e7 with nested dissection; bcsstk13 2.66e5 / 5.53e7) and is
/// ten times faster to compute, while nested dissection wins by far on
/// meshes (3D grids). analyse() computes both and keeps the cheaper.
Status order_scotch(const CscMatrix& A, std::vector<idx_t>& perm,
                    ScotchMethod method = ScotchMethod::nested_dissection);

/// The natural ordering: the identity permutation of 0..n-1.
std::vector<idx_t> order_natural(idx_t n);

}  // namespace starfront
