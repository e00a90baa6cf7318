// analyse() on the real SPD matrices of STARFRONT_DATA_DIR/spd, with Scotch
// and the natural ordering; nnz(L) checked against a plain column-by-column
// symbolic factorisation; figures compared to CHOLMOD's (data/README.md).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "analysis/amalgamation.hpp"
#include "analysis/symbolic.hpp"
#include "brute_force.hpp"
#include "io/matrix_market.hpp"
#include "sparse/generators.hpp"

namespace starfront {
namespace {

namespace fs = std::filesystem;

// nnz(L) of the lower CSC C by the plain (non-supernodal) symbolic
// factorisation: struct(L(:,j)) = {j} ∪ rows > j of A(:,j) ∪ (struct of each
// child k of j, minus k), with parent(k) = min struct(L(:,k)) \ {k}.
idx_t plain_symbolic_nnz(const CscMatrix& C) {
  const idx_t n = C.n;
  std::vector<std::vector<idx_t>> below(n);  // struct(L(:,j)) \ {j}, freed once merged
  std::vector<std::vector<idx_t>> children(n);
  std::vector<idx_t> mark(n, -1);
  idx_t nnz = 0;
  for (idx_t j = 0; j < n; ++j) {
    std::vector<idx_t>& s = below[j];
    for (idx_t p = C.colptr[j]; p < C.colptr[j + 1]; ++p)
      if (C.rowind[p] > j && mark[C.rowind[p]] != j) {
        mark[C.rowind[p]] = j;
        s.push_back(C.rowind[p]);
      }
    for (idx_t k : children[j]) {
      for (idx_t i : below[k])
        if (i > j && mark[i] != j) {
          mark[i] = j;
          s.push_back(i);
        }
      std::vector<idx_t>().swap(below[k]);
    }
    nnz += 1 + static_cast<idx_t>(s.size());
    if (!s.empty()) children[*std::min_element(s.begin(), s.end())].push_back(j);
  }
  return nnz;
}

struct Reference {
  const char* name;
  double cholmod_nnz, cholmod_flops;
};
constexpr Reference kCholmod[] = {{"activsg2000_hykkt_10", 321641, 1.37e7},
                                  {"bcsstk13", 265942, 5.53e7}};

TEST(AnalysisRealMatrices, AnalyseEverySpdFile) {
  const fs::path dir = fs::path(STARFRONT_DATA_DIR) / "spd";
  if (!fs::is_directory(dir)) GTEST_SKIP() << "no data directory " << dir;
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".mtx") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  ASSERT_FALSE(files.empty());
  for (const auto& path : files) {
    CscMatrix A;
    const Status rd = read_matrix_market(path.string(), A);
    ASSERT_TRUE(rd.ok()) << rd.message;
    const std::string name = path.stem().string();
    for (auto method : {OrderingMethod::scotch, OrderingMethod::natural}) {
      const char* mname = method == OrderingMethod::scotch ? "scotch" : "natural";
      SCOPED_TRACE(name + " " + mname);
      AnalysisOptions opts;
      opts.ordering = method;
      SymbolicFactor sf;
      const Status st = analyse(A, opts, sf);
      ASSERT_TRUE(st.ok()) << st.message;
      EXPECT_GE(sf.nnz_l, sf.nnz_l_exact);
      const idx_t plain = plain_symbolic_nnz(permute_symmetric(A, sf.perm));
      EXPECT_EQ(sf.nnz_l_exact, plain);
      std::printf("[ info ] %-24s %-7s n=%-6lld nnz(L) exact %-9lld flops exact %.3e | "
                  "amalgamated nnz %-9lld flops %.3e, %lld supernodes, max front %lld\n",
                  name.c_str(), mname, static_cast<long long>(A.n),
                  static_cast<long long>(sf.nnz_l_exact), sf.flops_exact,
                  static_cast<long long>(sf.nnz_l), sf.flops, static_cast<long long>(sf.nsuper),
                  static_cast<long long>(sf.max_front));
      if (method != OrderingMethod::scotch) continue;
      for (const auto& ref : kCholmod)
        if (name == ref.name) {  // Scotch differs from CHOLMOD's ordering, but not by 2x
          const double rn = static_cast<double>(sf.nnz_l_exact) / ref.cholmod_nnz;
          const double rf = sf.flops_exact / ref.cholmod_flops;
          std::printf("[ info ]   vs CHOLMOD: nnz(L) ratio %.2f, flops ratio %.2f\n", rn, rf);
          EXPECT_GT(rn, 0.5);
          EXPECT_LT(rn, 2.0);
          EXPECT_GT(rf, 0.5);
          EXPECT_LT(rf, 2.0);
        }
    }
  }
}

// The power-grid KKT matrices are latency-bound on the fused GPU kernel:
// the Scotch ordering chosen by modelled critical path with the
// critical-path amalgamation under the kernel's shared-memory cap (232)
// must shorten the default analysis's modelled path well (bench/README.md,
// issue 6, session 43: 693 -> 256 us and 634 -> 338 us, ratios 0.369 and
// 0.533; the bounds below are regression bounds for the rule's quality,
// about 4% above those: a rule that lost the merged children's paths from
// its bookkeeping gave 0.404 and 0.557), keep every front within the cap,
// keep the exact fill of its own permutation, and have pass 2 take away
// fronts that pass 1 alone leaves.
TEST(AnalysisRealMatrices, CriticalPathAnalysisShortensPowerGridTrees) {
  const fs::path dir = fs::path(STARFRONT_DATA_DIR) / "spd";
  for (const char* name : {"activsg2000_hykkt_10", "opf_case10000_goc_kkt"}) {
    SCOPED_TRACE(name);
    CscMatrix A;
    const Status rd = read_matrix_market((dir / (std::string(name) + ".mtx")).string(), A);
    ASSERT_TRUE(rd.ok()) << rd.message;
    SymbolicFactor base, path;
    ASSERT_TRUE(analyse(A, AnalysisOptions{}, base).ok());
    AnalysisOptions o;
    o.ordering_choice = OrderingChoice::critical_path;
    o.relax_critical_path = true;
    o.relax_max_front = 232;
    ASSERT_TRUE(analyse(A, o, path).ok());
    const double bound = std::string(name) == "activsg2000_hykkt_10" ? 0.385 : 0.545;
    EXPECT_LT(path.critical_path_s, bound * base.critical_path_s);
    EXPECT_LE(path.max_front, 232);
    EXPECT_EQ(path.nnz_l_exact, plain_symbolic_nnz(permute_symmetric(A, path.perm)));
    // Pass 2 of the rule takes fronts away (nested dissection's tree).
    AnalysisOptions f = o;
    f.ordering = OrderingMethod::scotch_nd;
    f.amalgamate = false;
    SymbolicFactor fsf;
    ASSERT_TRUE(analyse(A, f, fsf).ok());
    SupernodePartition fund;
    std::vector<idx_t> colcount;
    testing::fundamental_of(fsf, fund, colcount);
    const Amalgamation one = amalgamate_critical_path(fund, colcount, o, false);
    const Amalgamation two = amalgamate_critical_path(fund, colcount, o, true);
    EXPECT_LT(two.super.nsuper(), one.super.nsuper());
    std::printf("[ info ] %-24s critical-path rule on nested dissection: %lld fronts after pass 1, %lld after "
                "pass 2 (%lld fundamental)\n",
                name, static_cast<long long>(one.super.nsuper()), static_cast<long long>(two.super.nsuper()),
                static_cast<long long>(fund.nsuper()));
    std::printf("[ info ] %-24s modelled path %.0f us (%lld fronts, %lld columns), %lld supernodes, "
                "flops %.3e; default analysis %.0f us (%lld fronts), %lld supernodes, flops %.3e\n",
                name, path.critical_path_s * 1e6, static_cast<long long>(path.critical_path_fronts),
                static_cast<long long>(path.critical_path_columns), static_cast<long long>(path.nsuper),
                path.flops, base.critical_path_s * 1e6, static_cast<long long>(base.critical_path_fronts),
                static_cast<long long>(base.nsuper), base.flops);
  }
}

// The latency rule with the fused kernel's limit (232) on every SPD file
// and a 2D Laplacian 300²: the power-grid KKT matrices take the critical-path
// analysis (the same as asking for it: OrderingChoice::critical_path,
// relax_critical_path, relax_max_front 232), bcsstk13 (column counts
// above 232) and the mesh keep the default analysis unchanged.
TEST(AnalysisRealMatrices, LatencyRuleOnEverySpdFile) {
  const fs::path dir = fs::path(STARFRONT_DATA_DIR) / "spd";
  std::vector<std::pair<std::string, CscMatrix>> mats;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().extension() != ".mtx") continue;
    CscMatrix A;
    const Status rd = read_matrix_market(e.path().string(), A);
    ASSERT_TRUE(rd.ok()) << rd.message;
    mats.emplace_back(e.path().stem().string(), std::move(A));
  }
  ASSERT_GE(mats.size(), 2u);
  {
    CscMatrix L;
    ASSERT_TRUE(laplace2d(300, L).ok());
    mats.emplace_back("lap2d:300", std::move(L));
  }
  std::sort(mats.begin(), mats.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  for (const auto& [name, A] : mats) {
    SCOPED_TRACE(name);
    AnalysisOptions rule;
    rule.latency_rule_front = 232;
    AnalysisOptions path;
    path.ordering_choice = OrderingChoice::critical_path;
    path.relax_critical_path = true;
    path.relax_max_front = 232;
    SymbolicFactor r, d, p;
    ASSERT_TRUE(analyse(A, rule, r).ok());
    ASSERT_TRUE(analyse(A, AnalysisOptions{}, d).ok());
    ASSERT_TRUE(analyse(A, path, p).ok());
    const bool power_grid = name == "activsg2000_hykkt_10" || name == "opf_case10000_goc_kkt";
    if (power_grid) {
      EXPECT_TRUE(r.latency_rule.critical_path_chosen);
    }
    if (name == "bcsstk13" || name == "lap2d:300") {
      EXPECT_FALSE(r.latency_rule.critical_path_chosen);
      EXPECT_EQ(r.latency_rule.path_max_front, -1);
    }
    const SymbolicFactor& same = r.latency_rule.critical_path_chosen ? p : d;
    EXPECT_EQ(r.perm, same.perm);
    EXPECT_EQ(r.super_start, same.super_start);
    EXPECT_EQ(r.nnz_l, same.nnz_l);
    char path_figures[96] = "not built: a column count above 232";
    if (r.latency_rule.path_max_front >= 0)
      std::snprintf(path_figures, sizeof path_figures, "modelled path %.0f us, largest front %lld",
                    r.latency_rule.path_path_s * 1e6, static_cast<long long>(r.latency_rule.path_max_front));
    std::printf("[ info ] %-24s latency rule: %s (critical-path analysis %s; default analysis %.0f us, largest "
                "front %lld)\n",
                name.c_str(), r.latency_rule.critical_path_chosen ? "critical-path analysis" : "default analysis",
                path_figures, r.latency_rule.flops_path_s * 1e6,
                static_cast<long long>(r.latency_rule.flops_max_front));
  }
}

}  // namespace
}  // namespace starfront
