// Tests of io/matrix_market: every accepted layout, every refusal (with the
// content of its message), exact write/read round trips and the shared data.
#include "io/matrix_market.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <unistd.h>
#include <vector>

#include "sparse/csc.hpp"
#include "sparse/memory.hpp"

namespace starfront {
namespace {

namespace fs = std::filesystem;

/// A file path unique to the running test (name, pid) under the test tmpdir.
std::string tmp_path(const std::string& tag) {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  fs::path dir = STARFRONT_TEST_TMPDIR;
  if (!fs::is_directory(dir)) dir = fs::temp_directory_path();
  return (dir / (std::string("mm_") + info->test_suite_name() + "_" + info->name() + "_" + tag +
                 "_" + std::to_string(getpid()) + ".mtx"))
      .string();
}

std::string write_file(const std::string& tag, const std::string& text) {
  const std::string path = tmp_path(tag);
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

/// Writes `text` to a temporary file and reads it back as a sparse matrix.
Status read_text(const std::string& text, CscMatrix& A, MatrixMarketInfo* info = nullptr,
                 std::string* path_out = nullptr) {
  const std::string path = write_file("in", text);
  if (path_out) *path_out = path;
  Status s = read_matrix_market(path, A, info);
  fs::remove(path);
  return s;
}

/// Reads text expected to be refused; returns the status (path in *path).
Status refuse(const std::string& text, std::string* path = nullptr) {
  CscMatrix A;
  A.n = 99;  // sentinel: must be left untouched
  Status s = read_text(text, A, nullptr, path);
  EXPECT_EQ(A.n, 99) << "output modified on error";
  return s;
}

void expect_same(const CscMatrix& A, const CscMatrix& B) {
  EXPECT_EQ(A.n, B.n);
  EXPECT_EQ(A.colptr, B.colptr);
  EXPECT_EQ(A.rowind, B.rowind);
  EXPECT_EQ(A.values, B.values);
}

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

#define EXPECT_MSG(status, part) \
  EXPECT_TRUE(contains((status).message, part)) << "message: " << (status).message

const char* kTridiagLower =
    "%%MatrixMarket matrix coordinate real symmetric\n"
    "3 3 5\n"
    "1 1 4\n2 1 1\n2 2 4\n3 2 1\n3 3 4\n";

const char* kTridiagUpper =
    "%%MatrixMarket matrix coordinate real symmetric\n"
    "3 3 5\n"
    "1 1 4\n1 2 1\n2 2 4\n2 3 1\n3 3 4\n";

/// [[4,1,0],[1,4,1],[0,1,4]] in lower CSC.
CscMatrix tridiag() {
  CscMatrix A;
  A.n = 3;
  A.colptr = {0, 2, 4, 5};
  A.rowind = {0, 1, 1, 2, 2};
  A.values = {4, 1, 4, 1, 4};
  return A;
}

CscMatrix read_ok(const std::string& text) {
  CscMatrix A;
  const Status s = read_text(text, A);
  EXPECT_TRUE(s.ok()) << s.message;
  EXPECT_TRUE(check_lower_csc(A).ok());
  return A;
}

// ------------------------------------------------------------ accepted input

TEST(MatrixMarketRead, LowerTriangle) {
  MatrixMarketInfo info;
  CscMatrix A;
  ASSERT_TRUE(read_text(kTridiagLower, A, &info).ok());
  expect_same(A, tridiag());
  EXPECT_EQ(info.field, "real");
  EXPECT_EQ(info.symmetry, "symmetric");
  EXPECT_EQ(info.nrows, 3);
  EXPECT_EQ(info.ncols, 3);
  EXPECT_EQ(info.nentries, 5);
}

TEST(MatrixMarketRead, UpperTriangleGivesSameMatrix) {
  expect_same(read_ok(kTridiagUpper), tridiag());
}

TEST(MatrixMarketRead, BothTrianglesGiveTheSameMatrix) {
  // A symmetric file listing both triangles: each entry with its mirror,
  // counted once (not doubled); the result equals the one-triangle file.
  expect_same(read_ok("%%MatrixMarket matrix coordinate real symmetric\n3 3 7\n1 1 4\n2 1 1\n"
                      "1 2 1\n2 2 4\n3 2 1\n2 3 1\n3 3 4\n"),
              tridiag());
  // Mirrors that differ (or are missing) are refused, naming the pair.
  const Status st = refuse(
      "%%MatrixMarket matrix coordinate real symmetric\n2 2 3\n1 1 1\n2 1 0.5\n1 2 0.25\n");
  EXPECT_EQ(st.code, StatusCode::not_symmetric);
  EXPECT_NE(st.message.find("a(2,1) = 0.5"), std::string::npos) << st.message;
}

TEST(MatrixMarketRead, BannerWithLeadingBlanks) {
  expect_same(read_ok(std::string("  ") + kTridiagLower), tridiag());
  expect_same(read_ok(std::string("\n \t\n\t ") + kTridiagLower), tridiag());
}

TEST(MatrixMarketRead, KeywordsInAnyCase) {
  expect_same(read_ok("%%MatrixMarket MATRIX Coordinate REAL Symmetric\n"
                      "3 3 5\n1 1 4\n2 1 1\n2 2 4\n3 2 1\n3 3 4\n"),
              tridiag());
  expect_same(read_ok("%%matrixmarket matrix COORDINATE real SYMMETRIC\n"
                      "3 3 5\n1 1 4\n2 1 1\n2 2 4\n3 2 1\n3 3 4\n"),
              tridiag());
}

TEST(MatrixMarketRead, CrlfTabsAndTrailingSpaces) {
  expect_same(read_ok("%%MatrixMarket matrix coordinate real symmetric  \r\n"
                      "% comment\r\n"
                      "3\t3 5   \r\n"
                      "1 1 4  \r\n2\t1\t1\t\r\n\t2 2 4\r\n3  2  1 \r\n3 3 4\r\n"),
              tridiag());
  // Last line without line end.
  expect_same(read_ok("%%MatrixMarket matrix coordinate real symmetric\r\n3 3 5\r\n"
                      "1 1 4\r\n2 1 1\r\n2 2 4\r\n3 2 1\r\n3 3 4"),
              tridiag());
}

TEST(MatrixMarketRead, CommentsAndBlankLinesAnywhere) {
  expect_same(read_ok("%%MatrixMarket matrix coordinate real symmetric\n"
                      "%\n% header comment\n\n   % indented comment\n"
                      "3 3 5\n"
                      "1 1 4\n\n% between entries\n2 1 1\n   \n2 2 4\n\t%tab comment\n"
                      "3 2 1\n3 3 4\n\n% trailing comment\n\n"),
              tridiag());
}

TEST(MatrixMarketRead, NumberSpellings) {
  const CscMatrix A = read_ok(
      "%%MatrixMarket matrix coordinate real symmetric\n3 3 3\n"
      "+1 1 4.0e0\n2 +2 .4E1\n3 3 +400e-2\n");
  EXPECT_EQ(A.values, (std::vector<double>{4, 4, 4}));
}

TEST(MatrixMarketRead, DiagonalOnlyIsNotDoubled) {
  const CscMatrix A = read_ok(
      "%%MatrixMarket matrix coordinate real symmetric\n3 3 3\n1 1 4\n2 2 4\n3 3 4\n");
  EXPECT_EQ(A.nnz(), 3);
  EXPECT_EQ(A.rowind, (std::vector<idx_t>{0, 1, 2}));
  EXPECT_EQ(A.values, (std::vector<double>{4, 4, 4}));
}

TEST(MatrixMarketRead, DuplicatesSummed) {
  const CscMatrix A = read_ok(
      "%%MatrixMarket matrix coordinate real symmetric\n2 2 4\n1 1 1\n2 1 2\n2 1 3\n1 1 0.5\n");
  EXPECT_EQ(A.rowind, (std::vector<idx_t>{0, 1}));
  EXPECT_EQ(A.values, (std::vector<double>{1.5, 5}));
}

TEST(MatrixMarketRead, ExplicitZerosKept) {
  const CscMatrix A = read_ok(
      "%%MatrixMarket matrix coordinate real symmetric\n3 3 3\n1 1 1\n3 1 0\n3 3 0.0\n");
  EXPECT_EQ(A.nnz(), 3);
  EXPECT_EQ(A.rowind, (std::vector<idx_t>{0, 2, 2}));
  EXPECT_EQ(A.values, (std::vector<double>{1, 0, 0}));
}

TEST(MatrixMarketRead, UnderflowReadsAsTinyOrZero) {
  const CscMatrix A = read_ok(
      "%%MatrixMarket matrix coordinate real symmetric\n2 2 2\n1 1 1e-400\n2 2 4e-320\n");
  EXPECT_EQ(A.values[0], 0.0);
  EXPECT_GT(A.values[1], 0.0);
}

TEST(MatrixMarketRead, PatternField) {
  MatrixMarketInfo info;
  CscMatrix A;
  ASSERT_TRUE(read_text("%%MatrixMarket matrix coordinate pattern symmetric\n"
                        "3 3 4\n1 1\n2 1\n3 3\n3 2\n",
                        A, &info)
                  .ok());
  EXPECT_EQ(info.field, "pattern");
  EXPECT_EQ(A.colptr, (std::vector<idx_t>{0, 2, 3, 4}));
  EXPECT_EQ(A.rowind, (std::vector<idx_t>{0, 1, 2, 2}));
  EXPECT_EQ(A.values, (std::vector<double>{1, 1, 1, 1}));
}

TEST(MatrixMarketRead, IntegerField) {
  MatrixMarketInfo info;
  CscMatrix A;
  ASSERT_TRUE(read_text("%%MatrixMarket matrix coordinate integer symmetric\n"
                        "3 3 5\n1 1 4\n2 1 1\n2 2 4\n3 2 1\n3 3 4\n",
                        A, &info)
                  .ok());
  EXPECT_EQ(info.field, "integer");
  expect_same(A, tridiag());
}

TEST(MatrixMarketRead, GeneralSymmetricAccepted) {
  MatrixMarketInfo info;
  CscMatrix A;
  ASSERT_TRUE(read_text("%%MatrixMarket matrix coordinate real general\n"
                        "3 3 7\n1 1 4\n2 1 1\n1 2 1\n2 2 4\n3 2 1\n2 3 1\n3 3 4\n",
                        A, &info)
                  .ok());
  EXPECT_EQ(info.symmetry, "general");
  expect_same(A, tridiag());
}

TEST(MatrixMarketRead, GeneralSymmetricAfterSummingDuplicates) {
  const CscMatrix A = read_ok(
      "%%MatrixMarket matrix coordinate real general\n"
      "2 2 5\n1 1 3\n1 2 1\n2 1 2\n1 2 1\n2 2 3\n");
  EXPECT_EQ(A.values, (std::vector<double>{3, 2, 3}));
}

TEST(MatrixMarketRead, GeneralPatternSymmetric) {
  const CscMatrix A = read_ok(
      "%%MatrixMarket matrix coordinate pattern general\n2 2 3\n1 1\n1 2\n2 1\n");
  EXPECT_EQ(A.rowind, (std::vector<idx_t>{0, 1}));
}

TEST(MatrixMarketRead, EmptyMatrix) {
  const CscMatrix A = read_ok("%%MatrixMarket matrix coordinate real symmetric\n0 0 0\n");
  EXPECT_EQ(A.n, 0);
  EXPECT_EQ(A.nnz(), 0);
  EXPECT_EQ(A.colptr, (std::vector<idx_t>{0}));
}

TEST(MatrixMarketRead, NoEntries) {
  const CscMatrix A = read_ok("%%MatrixMarket matrix coordinate real symmetric\n4 4 0\n");
  EXPECT_EQ(A.n, 4);
  EXPECT_EQ(A.nnz(), 0);
}

TEST(MatrixMarketRead, StreamOverloadUsesSourceName) {
  std::istringstream in(kTridiagLower);
  CscMatrix A;
  ASSERT_TRUE(read_matrix_market(in, "memory", A).ok());
  expect_same(A, tridiag());
  std::istringstream bad("%%MatrixMarket matrix coordinate real symmetric\n3 3 1\n4 1 1\n");
  const Status s = read_matrix_market(bad, "memory", A);
  EXPECT_EQ(s.code, StatusCode::parse_error);
  EXPECT_MSG(s, "memory:3:");
}

// ------------------------------------------------------------ refusals

TEST(MatrixMarketRefuse, MissingBanner) {
  std::string path;
  const Status s = refuse("3 3 1\n1 1 1\n", &path);
  EXPECT_EQ(s.code, StatusCode::parse_error);
  EXPECT_MSG(s, path + ":1:");
  EXPECT_MSG(s, "%%MatrixMarket");
}

TEST(MatrixMarketRefuse, EmptyFile) {
  std::string path;
  const Status s = refuse("", &path);
  EXPECT_EQ(s.code, StatusCode::parse_error);
  EXPECT_MSG(s, path + ":1:");
  EXPECT_MSG(s, "banner");
}

TEST(MatrixMarketRefuse, BadBannerWords) {
  struct Case {
    const char* banner;
    const char* mentions;
  };
  for (const Case& c : {Case{"%MatrixMarket matrix coordinate real symmetric", "banner"},
                        Case{"%%MatrixMarket matrix coordinat real symmetric", "format"},
                        Case{"%%MatrixMarket matrix coordinate double symmetric", "field"},
                        Case{"%%MatrixMarket matrix coordinate real symetric", "symmetry"},
                        Case{"%%MatrixMarket vector coordinate real symmetric", "object"},
                        Case{"%%MatrixMarket matrix coordinate real", "symmetry"},
                        Case{"%%MatrixMarket matrix coordinate real symmetric extra", "after"}}) {
    std::string path;
    const Status s = refuse(std::string(c.banner) + "\n1 1 1\n1 1 1\n", &path);
    EXPECT_EQ(s.code, StatusCode::parse_error) << c.banner;
    EXPECT_MSG(s, c.mentions);
    EXPECT_MSG(s, path + ":1:");
  }
  // The banner must be the first non-blank line: a comment before it is refused.
  std::string path;
  const Status s = refuse("% comment\n%%MatrixMarket matrix coordinate real symmetric\n1 1 0\n",
                          &path);
  EXPECT_EQ(s.code, StatusCode::parse_error);
  EXPECT_MSG(s, path + ":1:");
}

TEST(MatrixMarketRefuse, UnsupportedKinds) {
  for (const char* kind : {"coordinate real skew-symmetric", "coordinate complex hermitian",
                           "coordinate complex symmetric", "array real symmetric",
                           "array real general"}) {
    const Status s = refuse(std::string("%%MatrixMarket matrix ") + kind + "\n2 2 1\n1 1 1\n");
    EXPECT_EQ(s.code, StatusCode::unsupported) << kind << ": " << s.message;
  }
  EXPECT_MSG(refuse("%%MatrixMarket matrix coordinate real skew-symmetric\n1 1 0\n"),
             "skew-symmetric");
  EXPECT_MSG(refuse("%%MatrixMarket matrix coordinate complex general\n1 1 0\n"), "complex");
  EXPECT_MSG(refuse("%%MatrixMarket matrix array real general\n1 1\n1\n"), "array");
}

TEST(MatrixMarketRefuse, BadSizeLine) {
  for (const char* size : {"3 3", "3 x 3", "-3 -3 1", "3 3 -1", "3 3 1 7", "3.0 3 1", "3 3 1x"}) {
    std::string path;
    const Status s = refuse(
        std::string("%%MatrixMarket matrix coordinate real symmetric\n% c\n") + size + "\n1 1 1\n",
        &path);
    EXPECT_EQ(s.code, StatusCode::parse_error) << size;
    EXPECT_MSG(s, path + ":3:");
    EXPECT_MSG(s, "size line");
    EXPECT_MSG(s, "rows columns entries");
  }
  const Status s = refuse("%%MatrixMarket matrix coordinate real symmetric\n% only comments\n");
  EXPECT_EQ(s.code, StatusCode::parse_error);
  EXPECT_MSG(s, "size line");
}

// An order too large to address gets out_of_memory naming the size line,
// never a crash: the largest 64-bit order once overflowed n + 1 in the CSC
// assembly (a helper's bad-input run, session 46).
TEST(MatrixMarketRefuse, OrderBeyondTheAddressableMemory) {
  for (const char* n : {"9223372036854775807", "9223372036854775806", "4611686018427387904"}) {
    std::string path;
    const Status s = refuse(std::string("%%MatrixMarket matrix coordinate real symmetric\n") + n + " " + n +
                                " 1\n1 1 1\n",
                            &path);
    EXPECT_EQ(s.code, StatusCode::out_of_memory) << n;
    EXPECT_MSG(s, path + ":2:");
    EXPECT_MSG(s, "exceeds the addressable memory");
  }
}

// An order whose column pointers are addressable but beyond the memory this
// process may use: refused at the size line, before anything is allocated
// (overcommit would grant the pointers and kill the process filling them).
TEST(MatrixMarketRefuse, OrderBeyondTheMemory) {
  const std::uint64_t usable = usable_memory_bytes();
  if (usable == 0) GTEST_SKIP() << "this process's memory is unknown: nothing is refused before allocating";
  for (idx_t n : {idx_t{1} << 50, static_cast<idx_t>(usable / (4 * sizeof(idx_t))) + 1}) {
    const std::string order = std::to_string(n);
    std::string path;
    const Status s = refuse("%%MatrixMarket matrix coordinate real symmetric\n" + order + " " + order +
                                " 1\n1 1 1\n",
                            &path);
    EXPECT_EQ(s.code, StatusCode::out_of_memory) << n;
    EXPECT_MSG(s, path + ":2:");
    EXPECT_MSG(s, "order " + order + ": the CSC's column arrays needs");
    EXPECT_MSG(s, "of memory this process may use");
  }
}

// A dense right-hand side given in coordinate form is zero-filled whole: one
// beyond the memory is refused at its size line.
TEST(DenseMatrixMarket, CoordinateBeyondTheMemoryIsRefused) {
  const std::uint64_t usable = usable_memory_bytes();
  if (usable == 0) GTEST_SKIP() << "this process's memory is unknown: nothing is refused before allocating";
  for (idx_t m : {idx_t{1} << 50, static_cast<idx_t>(usable / sizeof(double)) + 1}) {
    std::istringstream in("%%MatrixMarket matrix coordinate real general\n" + std::to_string(m) + " 1 1\n1 1 1\n");
    idx_t rows = -5, cols = -5;
    std::vector<double> x{42.0};
    const Status s = read_dense_matrix(in, "b", rows, cols, x);
    EXPECT_EQ(s.code, StatusCode::out_of_memory) << m;
    EXPECT_MSG(s, "b:2:");
    EXPECT_MSG(s, "dense array needs");
    EXPECT_EQ(rows, -5);
    EXPECT_EQ(x, std::vector<double>{42.0});  // the caller's array untouched
  }
}

// A right-hand side whose row count is not the one expected is refused at
// its size line, before its array is built (3e9 rows zero-filled would be
// 24 GB: within this machine's memory, so not refused by the memory check).
TEST(DenseMatrixMarket, UnexpectedRowCountRefusedAtTheSizeLine) {
  for (const char* body : {"%%MatrixMarket matrix coordinate real general\n3000000000 1 0\n",
                           "%%MatrixMarket matrix array real general\n1000 2\n"}) {
    std::istringstream in(body);
    idx_t rows = -5, cols = -5;
    std::vector<double> x{42.0};
    const Status s = read_dense_matrix(in, "b", rows, cols, x, 494);
    EXPECT_EQ(s.code, StatusCode::invalid_argument) << body;
    EXPECT_MSG(s, "b:2:");
    EXPECT_MSG(s, "rows, expected 494");
    EXPECT_EQ(rows, -5);
    EXPECT_EQ(x, std::vector<double>{42.0});
  }
  std::istringstream in("%%MatrixMarket matrix array real general\n2 1\n1.5\n-2\n");
  idx_t rows = 0, cols = 0;
  std::vector<double> x;
  ASSERT_TRUE(read_dense_matrix(in, "b", rows, cols, x, 2).ok());
  EXPECT_EQ(x, (std::vector<double>{1.5, -2}));
}

TEST(MatrixMarketRefuse, NotSquare) {
  std::string path;
  const Status s = refuse("%%MatrixMarket matrix coordinate real general\n3 4 1\n1 1 1\n", &path);
  EXPECT_EQ(s.code, StatusCode::unsupported);
  EXPECT_MSG(s, "not square");
  EXPECT_MSG(s, path + ":2:");
}

TEST(MatrixMarketRefuse, TooFewEntries) {
  std::string path;
  const Status s = refuse(
      "%%MatrixMarket matrix coordinate real symmetric\n5 5 5\n1 1 1\n2 2 1\n3 3 1\n4 4 1\n",
      &path);
  EXPECT_EQ(s.code, StatusCode::parse_error);
  EXPECT_MSG(s, path + ":6:");
  EXPECT_MSG(s, "expected 5");
  EXPECT_MSG(s, "found 4");
  EXPECT_MSG(s, "line 2");
}

TEST(MatrixMarketRefuse, TooManyEntries) {
  std::string path;
  const Status s = refuse(
      "%%MatrixMarket matrix coordinate real symmetric\n5 5 5\n"
      "1 1 1\n2 2 1\n3 3 1\n4 4 1\n5 5 1\n% comment\n5 4 1\n",
      &path);
  EXPECT_EQ(s.code, StatusCode::parse_error);
  EXPECT_MSG(s, path + ":9:");
  EXPECT_MSG(s, "expected 5");
  EXPECT_MSG(s, "found 6");
}

TEST(MatrixMarketRefuse, IndexOutOfRange) {
  struct Case {
    const char* entry;
    const char* which;
  };
  for (const Case& c : {Case{"0 0 1.0", "row"}, Case{"4 1 1.0", "row"}, Case{"1 4 1.0", "column"},
                        Case{"2 0 1.0", "column"}, Case{"-1 1 1.0", "row"},
                        Case{"99999999999999999999 1 1", "row"}}) {
    std::string path;
    const Status s = refuse(std::string("%%MatrixMarket matrix coordinate real symmetric\n"
                                        "3 3 2\n1 1 1\n") +
                                c.entry + "\n",
                            &path);
    EXPECT_EQ(s.code, StatusCode::parse_error) << c.entry;
    EXPECT_MSG(s, "index out of range");
    EXPECT_MSG(s, c.which);
    EXPECT_MSG(s, "1..3");
    EXPECT_MSG(s, path + ":4:");
  }
}

TEST(MatrixMarketRefuse, BadIndexText) {
  for (const char* entry : {"1.0 1 1", "a 1 1", "1 b 1", "1", "+-1 1 1"}) {
    std::string path;
    const Status s = refuse(
        std::string("%%MatrixMarket matrix coordinate real symmetric\n3 3 1\n") + entry + "\n",
        &path);
    EXPECT_EQ(s.code, StatusCode::parse_error) << entry;
    EXPECT_MSG(s, path + ":3:");
    EXPECT_MSG(s, "index");
  }
}

TEST(MatrixMarketRefuse, BadValues) {
  struct Case {
    const char* value;
    const char* mentions;
  };
  for (const Case& c : {Case{"abc", "does not parse"}, Case{"1.2.3", "does not parse"},
                        Case{"1,5", "does not parse"}, Case{"1e", "does not parse"},
                        Case{"0x10", "does not parse"}, Case{"1e999", "overflow"},
                        Case{"-1e999", "overflow"}, Case{"nan", "not finite"},
                        Case{"NaN", "not finite"}, Case{"inf", "not finite"},
                        Case{"-Infinity", "not finite"}}) {
    std::string path;
    const Status s = refuse(
        std::string("%%MatrixMarket matrix coordinate real symmetric\n2 2 2\n1 1 1\n2 2 ") +
            c.value + "\n",
        &path);
    EXPECT_EQ(s.code, StatusCode::parse_error) << c.value;
    EXPECT_MSG(s, path + ":4:");
    EXPECT_MSG(s, c.mentions);
    EXPECT_MSG(s, c.value);
  }
}

TEST(MatrixMarketRefuse, MissingValue) {
  const Status s = refuse("%%MatrixMarket matrix coordinate real symmetric\n2 2 1\n1 1\n");
  EXPECT_EQ(s.code, StatusCode::parse_error);
  EXPECT_MSG(s, ":3:");
  EXPECT_MSG(s, "expected a value");
}

TEST(MatrixMarketRefuse, NonIntegerInIntegerField) {
  const Status s = refuse("%%MatrixMarket matrix coordinate integer symmetric\n2 2 1\n1 1 3.5\n");
  EXPECT_EQ(s.code, StatusCode::parse_error);
  EXPECT_MSG(s, ":3:");
  EXPECT_MSG(s, "integer");
}

TEST(MatrixMarketRefuse, TrailingGarbage) {
  for (const char* entry : {"1 1 4.0 x", "1 1 4.0 5", "1 1 4.0 % comment"}) {
    std::string path;
    const Status s = refuse(
        std::string("%%MatrixMarket matrix coordinate real symmetric\n2 2 1\n") + entry + "\n",
        &path);
    EXPECT_EQ(s.code, StatusCode::parse_error) << entry;
    EXPECT_MSG(s, path + ":3:");
    EXPECT_MSG(s, "unexpected text");
  }
  const Status s = refuse("%%MatrixMarket matrix coordinate pattern symmetric\n2 2 1\n1 1 1\n");
  EXPECT_EQ(s.code, StatusCode::parse_error);
  EXPECT_MSG(s, "unexpected text");
}

TEST(MatrixMarketRefuse, GeneralNotSymmetric) {
  std::string path;
  const Status s = refuse(
      "%%MatrixMarket matrix coordinate real general\n2 2 4\n1 1 1\n1 2 1\n2 1 -1\n2 2 1\n", &path);
  EXPECT_EQ(s.code, StatusCode::not_symmetric);
  EXPECT_MSG(s, path);
  EXPECT_MSG(s, "a(2,1) = -1");
  EXPECT_MSG(s, "a(1,2) = 1");
}

TEST(MatrixMarketRefuse, GeneralMissingCounterpart) {
  Status s = refuse("%%MatrixMarket matrix coordinate real general\n3 3 2\n1 1 1\n3 1 0\n");
  EXPECT_EQ(s.code, StatusCode::not_symmetric);
  EXPECT_MSG(s, "a(3,1) = 0");
  EXPECT_MSG(s, "a(1,3) is missing");
  s = refuse("%%MatrixMarket matrix coordinate pattern general\n3 3 2\n1 1\n2 3\n");
  EXPECT_EQ(s.code, StatusCode::not_symmetric);
  EXPECT_MSG(s, "a(3,2) is missing");
  EXPECT_MSG(s, "a(2,3) = 1");
}

TEST(MatrixMarketRefuse, MissingFileAndDirectory) {
  CscMatrix A;
  const std::string missing = tmp_path("does_not_exist");
  Status s = read_matrix_market(missing, A);
  EXPECT_EQ(s.code, StatusCode::io_error);
  EXPECT_MSG(s, missing);
  s = read_matrix_market(STARFRONT_TEST_TMPDIR, A);
  EXPECT_EQ(s.code, StatusCode::io_error);
  EXPECT_MSG(s, STARFRONT_TEST_TMPDIR);
}

// ------------------------------------------------------------ dense

TEST(DenseMatrixMarket, ArrayIsColumnMajor) {
  const std::string path = write_file(
      "rhs", "%%MatrixMarket matrix array real general\n% c\n3 2\n1\n2\n3\n4.5\n-5\n6e-3\n");
  idx_t m = 0, n = 0;
  std::vector<double> x;
  ASSERT_TRUE(read_dense_matrix(path, m, n, x).ok());
  EXPECT_EQ(m, 3);
  EXPECT_EQ(n, 2);
  EXPECT_EQ(x, (std::vector<double>{1, 2, 3, 4.5, -5, 6e-3}));
  fs::remove(path);
}

TEST(DenseMatrixMarket, LoneRowCountIsAVector) {
  std::istringstream in("%%MatrixMarket matrix array real general\r\n3\r\n1\r\n2\r\n3\r\n");
  idx_t m = 0, n = 0;
  std::vector<double> x;
  ASSERT_TRUE(read_dense_matrix(in, "v", m, n, x).ok());
  EXPECT_EQ(m, 3);
  EXPECT_EQ(n, 1);
  EXPECT_EQ(x, (std::vector<double>{1, 2, 3}));
}

TEST(DenseMatrixMarket, CoordinateFilledWithZeros) {
  std::istringstream in(
      "%%MatrixMarket matrix coordinate real general\n3 2 4\n1 1 1\n3 2 5\n1 1 2\n2 2 0\n");
  idx_t m = 0, n = 0;
  std::vector<double> x;
  ASSERT_TRUE(read_dense_matrix(in, "c", m, n, x).ok());
  EXPECT_EQ(m, 3);
  EXPECT_EQ(n, 2);
  EXPECT_EQ(x, (std::vector<double>{3, 0, 0, 0, 0, 5}));
}

TEST(DenseMatrixMarket, Refusals) {
  struct Case {
    const char* text;
    StatusCode code;
    const char* mentions;
  };
  for (const Case& c : {
           Case{"%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n", StatusCode::parse_error,
                "d:5: entry count mismatch: expected 4"},
           Case{"%%MatrixMarket matrix array real general\n2 1\n1\n2\n3\n", StatusCode::parse_error,
                "found 3"},
           Case{"%%MatrixMarket matrix array real general\n2 1\n1 2\n3\n", StatusCode::parse_error,
                "d:3: unexpected text"},
           Case{"%%MatrixMarket matrix array real general\n2 1\n1\nx\n", StatusCode::parse_error,
                "d:4: expected a real"},
           Case{"%%MatrixMarket matrix array real general\n2 1\n1\n1e400\n", StatusCode::parse_error,
                "overflow"},
           Case{"%%MatrixMarket matrix array real general\n2 1 1\n1\n1\n", StatusCode::parse_error,
                "d:2: bad size line"},
           Case{"%%MatrixMarket matrix array real symmetric\n2 2\n1\n2\n3\n",
                StatusCode::unsupported, "symmetric"},
           Case{"%%MatrixMarket matrix coordinate pattern general\n2 2 1\n1 1\n",
                StatusCode::unsupported, "pattern"},
           Case{"%%MatrixMarket matrix coordinate real general\n2 2 1\n3 1 1\n",
                StatusCode::parse_error, "d:3: index out of range"},
           Case{"%%MatrixMarket matrix array real general\n4611686018427387904 4\n",
                StatusCode::parse_error, "overflows"},
           Case{"2 1\n1\n2\n", StatusCode::parse_error, "d:1: bad banner"}}) {
    std::istringstream in(c.text);
    idx_t m = -7, n = -7;
    std::vector<double> x;
    const Status s = read_dense_matrix(in, "d", m, n, x);
    EXPECT_EQ(s.code, c.code) << c.text;
    EXPECT_MSG(s, c.mentions);
    EXPECT_EQ(m, -7);
  }
}

TEST(DenseMatrixMarket, WriteReadRoundTrip) {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  const idx_t m = 17, n = 3;
  std::vector<double> x(m * n);
  for (double& v : x) v = u(rng) * std::pow(10.0, std::floor(u(rng) * 30));
  const std::string path = tmp_path("dense");
  ASSERT_TRUE(write_dense_matrix(path, m, n, x.data()).ok());
  idx_t m2 = 0, n2 = 0;
  std::vector<double> y;
  ASSERT_TRUE(read_dense_matrix(path, m2, n2, y).ok());
  EXPECT_EQ(m2, m);
  EXPECT_EQ(n2, n);
  EXPECT_EQ(y, x);
  fs::remove(path);
  EXPECT_EQ(write_dense_matrix(path, -1, 1, x.data()).code, StatusCode::invalid_argument);
  EXPECT_EQ(write_dense_matrix(path, 2, 1, nullptr).code, StatusCode::invalid_argument);
  EXPECT_FALSE(fs::exists(path)) << "invalid arguments must not create the file";
}

// ------------------------------------------------------------ writing

/// A random symmetric matrix: full diagonal, random lower pattern, values of
/// random sign and magnitude (never all zero: the diagonal is nonzero).
CscMatrix random_matrix(idx_t n, double density, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::uniform_int_distribution<int> expo(-300, 300);
  std::bernoulli_distribution keep(density);
  std::vector<idx_t> r, c;
  std::vector<double> v;
  for (idx_t j = 0; j < n; ++j)
    for (idx_t i = j; i < n; ++i)
      if (i == j || keep(rng)) {
        r.push_back(i);
        c.push_back(j);
        double x = u(rng) * std::pow(10.0, expo(rng));
        if (x == 0.0) x = 1.0;
        v.push_back(x);
      }
  CscMatrix A;
  EXPECT_TRUE(lower_csc_from_triplets(n, r, c, v, A).ok());
  return A;
}

TEST(MatrixMarketWrite, RoundTripIsExact) {
  std::mt19937_64 rng(20261130);
  for (idx_t n : {1, 2, 5, 40, 300}) {
    const CscMatrix A = random_matrix(n, 0.1, rng);
    const std::string path = tmp_path("rt" + std::to_string(n));
    ASSERT_TRUE(write_matrix_market(path, A).ok());
    CscMatrix B;
    MatrixMarketInfo info;
    const Status s = read_matrix_market(path, B, &info);
    ASSERT_TRUE(s.ok()) << s.message;
    EXPECT_EQ(info.symmetry, "symmetric");
    EXPECT_EQ(info.nentries, A.nnz());
    expect_same(B, A);
    fs::remove(path);
  }
}

TEST(MatrixMarketWrite, StreamFormat) {
  std::ostringstream os;
  ASSERT_TRUE(write_matrix_market(os, tridiag()).ok());
  const std::string text = os.str();
  EXPECT_EQ(text.rfind("%%MatrixMarket matrix coordinate real symmetric\n", 0), 0u);
  EXPECT_TRUE(contains(text, "\n3 3 5\n1 1 4\n2 1 1\n2 2 4\n3 2 1\n3 3 4\n"));
  EXPECT_TRUE(contains(text, "\n3 3 5\n"));
  std::ostringstream tenth;
  CscMatrix one;
  one.n = 1;
  one.colptr = {0, 1};
  one.rowind = {0};
  one.values = {0.1};
  ASSERT_TRUE(write_matrix_market(tenth, one).ok());
  EXPECT_TRUE(contains(tenth.str(), "1 1 0.10000000000000001\n"));  // 17 digits
}

TEST(MatrixMarketWrite, EmptyMatrix) {
  std::stringstream ss;
  ASSERT_TRUE(write_matrix_market(ss, CscMatrix{}).ok());
  CscMatrix B;
  ASSERT_TRUE(read_matrix_market(ss, "empty", B).ok());
  EXPECT_EQ(B.n, 0);
}

TEST(MatrixMarketWrite, Stdout) {
  ::testing::internal::CaptureStdout();
  const Status s = write_matrix_market("-", tridiag());
  const std::string out = ::testing::internal::GetCapturedStdout();
  ASSERT_TRUE(s.ok());
  std::istringstream in(out);
  CscMatrix B;
  ASSERT_TRUE(read_matrix_market(in, "stdout", B).ok());
  expect_same(B, tridiag());
}

TEST(MatrixMarketWrite, Errors) {
  const std::string bad_path = "/nonexistent-starfront-dir/x.mtx";
  Status s = write_matrix_market(bad_path, tridiag());
  EXPECT_EQ(s.code, StatusCode::io_error);
  EXPECT_MSG(s, bad_path);
  const double x[1] = {1.0};
  s = write_dense_matrix(bad_path, 1, 1, x);
  EXPECT_EQ(s.code, StatusCode::io_error);
  EXPECT_MSG(s, bad_path);
  CscMatrix upper = tridiag();
  upper.rowind[1] = 0;  // duplicate row in column 0: invalid
  std::ostringstream os;
  EXPECT_EQ(write_matrix_market(os, upper).code, StatusCode::invalid_argument);
  const std::string path = tmp_path("invalid");
  EXPECT_EQ(write_matrix_market(path, upper).code, StatusCode::invalid_argument);
  EXPECT_FALSE(fs::exists(path)) << "an invalid matrix must not create the file";
  std::ofstream closed;  // never opened: every write fails
  s = write_matrix_market(closed, tridiag(), "closed");
  EXPECT_EQ(s.code, StatusCode::io_error);
  EXPECT_MSG(s, "closed");
}

// ------------------------------------------------------------ shared data

/// n and nnz(lower) of the shared matrices, from data/README.md.
const std::map<std::string, std::pair<idx_t, idx_t>>& data_table() {
  static const std::map<std::string, std::pair<idx_t, idx_t>> table = {
      {"spd/lund_a.mtx", {147, 1298}},
      {"spd/494_bus.mtx", {494, 1080}},
      {"spd/1138_bus.mtx", {1138, 2596}},
      {"spd/A_spd01.mtx", {1024, 3800}},
      {"spd/bcsstk13.mtx", {2003, 42943}},
      {"spd/opf_case10000_goc_kkt.mtx", {24032, 220928}},
      {"spd/activsg2000_hykkt_10.mtx", {25910, 154262}},
      {"kkt/activsg200_kkt.mtx", {4644, 14078}},
      {"kkt/sqd_cvxqp3_m.mtx", {5750, 14981}},
      {"kkt/sqd_stcqp2.mtx", {22537, 74769}},
      {"kkt/sqd_liswet1.mtx", {30002, 70002}},
      {"kkt/sqd_aug2d.mtx", {30200, 70200}},
  };
  return table;
}

TEST(MatrixMarketData, EverySharedMatrixReads) {
  const fs::path root = STARFRONT_DATA_DIR;
  if (!fs::is_directory(root / "spd")) GTEST_SKIP() << "no data folder at " << root;
  int read = 0;
  for (const char* sub : {"spd", "kkt"})
    for (const auto& e : fs::directory_iterator(root / sub)) {
      if (e.path().extension() != ".mtx") continue;
      const std::string key = std::string(sub) + "/" + e.path().filename().string();
      CscMatrix A;
      MatrixMarketInfo info;
      const Status s = read_matrix_market(e.path().string(), A, &info);
      ASSERT_TRUE(s.ok()) << s.message;
      EXPECT_TRUE(check_lower_csc(A).ok()) << key;
      EXPECT_EQ(A.nnz(), info.nentries) << key << ": duplicates or mirrored entries";
      const auto it = data_table().find(key);
      if (it == data_table().end()) continue;  // a file added after this table
      EXPECT_EQ(A.n, it->second.first) << key;
      EXPECT_EQ(A.nnz(), it->second.second) << key;
      ++read;
    }
  EXPECT_EQ(read, static_cast<int>(data_table().size()));
}

TEST(MatrixMarketData, RightHandSidesAreColumns) {
  const fs::path root = STARFRONT_DATA_DIR;
  if (!fs::is_directory(root / "rhs")) GTEST_SKIP() << "no data folder at " << root;
  int read = 0;
  for (const auto& e : fs::directory_iterator(root / "rhs")) {
    const std::string stem = e.path().stem().string();  // <matrix>_rhs
    ASSERT_GT(stem.size(), 4u);
    const std::string matrix = stem.substr(0, stem.size() - 4) + ".mtx";
    idx_t m = 0, n = 0;
    std::vector<double> b;
    const Status s = read_dense_matrix(e.path().string(), m, n, b);
    ASSERT_TRUE(s.ok()) << s.message;
    EXPECT_EQ(n, 1) << stem;
    EXPECT_EQ(static_cast<idx_t>(b.size()), m) << stem;
    for (const char* sub : {"spd", "kkt"}) {
      const auto it = data_table().find(std::string(sub) + "/" + matrix);
      if (it != data_table().end()) {
        EXPECT_EQ(m, it->second.first) << stem;
      }
    }
    ++read;
  }
  EXPECT_GE(read, 2);
}

}  // namespace
}  // namespace starfront
