// The properties the fuzz targets check on one input, shared by the libFuzzer
// entry points (fuzz_matrix_market.cpp, fuzz_csc_solve.cpp) and by the
// regression test that replays the corpus and every input the fuzzers ever
// broke (tests/robustness/test_fuzz_regressions.cpp). StarPU-free: links
// starfront_core only.
//
// Each function returns "" when every property holds, otherwise a sentence
// naming the one that failed; memory errors and undefined behaviour are the
// sanitizers' to report.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace starfront::fuzz {

/// The Matrix Market reader on arbitrary text (the input bytes as a file):
/// - read_matrix_market and read_dense_matrix return a Status, never crash;
/// - an accepted sparse matrix satisfies check_lower_csc, has the order the
///   size line announced and only finite values, and survives an exact
///   write / read round trip;
/// - an accepted dense matrix has rows·cols finite values;
/// - a small accepted sparse matrix (n <= 200, nnz <= 4000) goes through the
///   CSC checks of check_csc_pipeline below (natural ordering).
/// Inputs whose size line announces more than 2^20 rows, columns or entries
/// (or 2^24 dense values) are skipped: the reader then rightly allocates
/// O(n), which is a resource limit of the fuzzer, not a bug.
std::string check_matrix_market(const std::uint8_t* data, std::size_t size);

/// The CSC entry point (lower_csc_from_triplets / check_lower_csc, analyse,
/// the sequential factorisation, solve) on a small matrix decoded from the
/// bytes (layout in fuzz_checks.cpp):
/// - a malformed CSC is refused by check_lower_csc and by analyse
///   (invalid_argument), a well-formed one analysed without error, with a
///   permutation that is a bijection;
/// - the factorisation ends ok, not_positive_definite (with a column in
///   0..n-1 named in the message) or, for non-finite values,
///   invalid_argument; a strictly diagonally dominant matrix factorises; a
///   random valid task order gives the same kind of outcome (the column named
///   may differ when several independent columns fail: the executors stop at
///   the first failure they meet); a named column is confirmed by a dense
///   elimination of its elimination-tree descendants;
/// - after a success the solution of A x = A·x_true is finite with a
///   backward error <= 1e-12: never a wrong answer with a success status.
std::string check_csc_solve(const std::uint8_t* data, std::size_t size);

}  // namespace starfront::fuzz
