// `tilesim validate` through the binary: the table, --json, and exit code 4 on a missed target.
#include <catch2/catch.hpp>

#include <fstream>

#include "tests/sim/cli_util.hpp"

using Catch::Matchers::Contains;

TEST_CASE("cli: validate compares, writes JSON and exits 4 when a target is missed", "[validate][cli]") {
  namespace fs = std::filesystem;
  const fs::path dir = tilesim::test::scratch_dir() / "vcli";
  fs::create_directories(dir);
  std::ofstream(dir / "g.yaml") << "name: g_row\narch: h100\n"
                                   "workload: {kind: gemm, m: 1024, n: 1024, k: 512, tile: [128, 128, 32]}\n";
  // Made-up measurements: 50% hits, 10 MB read, 4 MB written, 100 us.
  std::ofstream(dir / "m.csv") << "case,lts__t_sector_hit_rate.pct,lts__t_sectors_op_read.sum,lts__t_sectors_op_write.sum,"
                                  "dram__bytes_read.sum,dram__bytes_write.sum,median_us\n"
                                  "g_row,50,1000,10,10000000,4000000,100\n";
  const std::string base = "validate -m " + (dir / "m.csv").string() + " -e " + (dir / "g.yaml").string();
  auto r = tilesim::test::run_tilesim(base + " --json " + (dir / "v.json").string());
  REQUIRE(r.code == 0);
  REQUIRE_THAT(r.out, Contains("g_row"));
  REQUIRE_THAT(r.out, Contains("validation (1 cases)"));
  REQUIRE_THAT(tilesim::test::slurp(dir / "v.json"), Contains("\"dram_read_mape_pct\""));
  r = tilesim::test::run_tilesim(base + " --max-dram-mape 0.001");
  REQUIRE(r.code == 4);
  REQUIRE_THAT(r.out, Contains("target missed") && Contains("DRAM read MAPE"));
  r = tilesim::test::run_tilesim(base + " --max-dram-mape 1e9");
  REQUIRE(r.code == 0);
  REQUIRE_THAT(r.out, Contains("all targets met"));
  // An experiment with no measured case is an error naming it.
  std::ofstream(dir / "h.yaml") << "name: h_row\narch: h100\n"
                                   "workload: {kind: gemm, m: 1024, n: 1024, k: 512, tile: [128, 128, 32]}\n";
  r = tilesim::test::run_tilesim("validate -m " + (dir / "m.csv").string() + " -e " + (dir / "h.yaml").string());
  REQUIRE(r.code == 2);
  REQUIRE_THAT(r.out, Contains("h.yaml") && Contains("no measured case 'h_row'"));
}
