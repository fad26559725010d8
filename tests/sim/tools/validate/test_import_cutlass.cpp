// `tilesim import cutlass`: experiments from the CUTLASS profiler's CSV (import_cutlass.hpp).
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <set>

#include "common/error.hpp"
#include "sim/config/experiment.hpp"
#include "sim/tools/validate/import_cutlass.hpp"
#include "tests/sim/cli_util.hpp"

using namespace tilesim;
using Catch::Matchers::Contains;

namespace {

const std::string kData = std::string(TILESIM_SOURCE_DIR) + "/tests/data/cutlass/profiler_gemm.csv";

}  // namespace

TEST_CASE("import cutlass: each GEMM row becomes an experiment that loads, with its runtime", "[validate][import]") {
  const auto rows = import_cutlass_csv(kData, "h100");
  REQUIRE(rows.size() == 5);
  const CutlassImport& coop = rows[0];
  CHECK_THAT(coop.yaml, Contains("schedule: cooperative") && Contains("tile: [128, 256, 64]") &&
                            Contains("layout: {a: row, b: col, c: col}") &&
                            Contains("order: {kind: cutlass_sm90, raster: n, max_swizzle: 2, cluster: [2, 1]}"));
  CHECK(coop.runtime_us == Approx(210));
  CHECK_THAT(rows[1].yaml, Contains("schedule: pingpong") && Contains("raster: m"));
  CHECK_THAT(rows[2].yaml, Contains("mainloop: {kind: mma_sync, l2_prefetch: 128}") && Contains("threads: 256") && Contains("stages: 3") &&
                               Contains("kind: swizzle"));
  CHECK(rows[3].yaml.empty());
  CHECK_THAT(rows[4].yaml, Contains("split_k: 4") && Contains("split_k_mode: parallel"));
  CHECK_THAT(rows[3].skipped, Contains("not_supported"));
  for (const CutlassImport& r : rows)
    if (!r.yaml.empty()) CHECK_NOTHROW(load_plan_text(r.yaml, r.case_name + ".yaml", ".", {}).build(0));
  const std::string table = cutlass_case_table(rows);
  CHECK_THAT(table, Contains("case,median_us\n") && Contains(rows[0].case_name + ",210\n"));
  CHECK_THAT(table, !Contains(rows[3].case_name));
}

TEST_CASE("import cutlass: a malformed file is one error naming its line", "[validate][import]") {
  namespace fs = std::filesystem;
  const fs::path dir = tilesim::test::scratch_dir() / "cutlass_bad";
  fs::create_directories(dir);
  const auto error_of = [&](const std::string& text) -> std::string {
    std::ofstream(dir / "p.csv") << text;
    try {
      import_cutlass_csv((dir / "p.csv").string(), "h100");
    } catch (const InputError& e) {
      return e.what();
    }
    return "no error";
  };
  const std::string header = "Problem,Provider,OperationKind,Operation,Disposition,Status,m,n,k,cta_m,cta_n,cta_k,Runtime\n";
  CHECK_THAT(error_of("m,n,k\n1,2,3\n"), Contains("no CUTLASS profiler CSV header"));
  CHECK_THAT(error_of(header + "1,CUTLASS,gemm,x,passed,success,64,64\n"), Contains("p.csv:2: 8 cells where the header has 13"));
  CHECK_THAT(error_of(header + "1,CUTLASS,gemm,x,passed,success,64,64,64,64,64,32,fast\n"),
             Contains("p.csv:2: column Runtime"));
  CHECK_THAT(error_of(header + "1,CUTLASS,gemm,x,passed,success,64,-1,64,64,64,32,0.1\n"), Contains("p.csv:2: column n"));
  // A row repeated gets a case of its own.
  std::ofstream(dir / "twice.csv") << header << "1,CUTLASS,gemm,x,passed,success,64,64,64,64,64,32,0.1\n"
                                   << "1,CUTLASS,gemm,x,passed,success,64,64,64,64,64,32,0.2\n";
  auto twice = import_cutlass_csv((dir / "twice.csv").string(), "h100");
  REQUIRE(twice.size() == 2);
  name_cases_uniquely(twice);
  CHECK(twice[1].case_name == twice[0].case_name + "_2");
  CHECK_THAT(twice[1].yaml, Contains("case: " + twice[1].case_name));
}

TEST_CASE("import cutlass: the command writes the experiments and the runtimes validate compares", "[validate][import][cli]") {
  namespace fs = std::filesystem;
  using tilesim::test::run_tilesim;
  const fs::path dir = tilesim::test::scratch_dir() / "cutlass_cli";
  fs::remove_all(dir);
  auto r = run_tilesim("import cutlass " + kData + " -o " + dir.string() + " --arch h100");
  REQUIRE(r.code == 0);
  CHECK_THAT(r.out, Contains("4 experiment(s)") && Contains("skipped"));
  r = run_tilesim("validate -q -m " + (dir / "measured.csv").string() + " -e " + dir.string());
  CHECK(r.code == 0);
  CHECK_THAT(r.out, Contains("validation (4 cases)"));
  r = run_tilesim("import cutlass " + kData + " -o " + dir.string());
  CHECK(r.code == 2);
  CHECK_THAT(r.out, Contains("--arch is required"));
  CHECK(run_tilesim("import nsys x.csv -o " + dir.string()).code == 2);
}

TEST_CASE("import cutlass: repeated rows across files get their own cases, runtimes keep every digit",
          "[validate][import]") {
  auto rows = import_cutlass_csv(kData, "h100");
  auto more = import_cutlass_csv(kData, "h100");
  rows.insert(rows.end(), more.begin(), more.end());
  name_cases_uniquely(rows);
  std::set<std::string> names;
  for (const auto& r : rows) CHECK(names.insert(r.case_name).second);
  CHECK(rows[5].case_name == rows[0].case_name + "_2");
  CHECK_THAT(rows[5].yaml, Contains("case: " + rows[5].case_name));
  CutlassImport r;
  r.case_name = "x";
  r.yaml = "name: x\n";
  r.runtime_us = 1234.56789;
  CHECK(cutlass_case_table({r}) == "case,median_us\nx,1234.56789\n");
}
