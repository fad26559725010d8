// The optimizer, the preset editing, and an end-to-end fit that must recover a parameter
// from "measurements" the simulator itself produced with a known value.
#include <catch2/catch.hpp>

#include <cmath>
#include <fstream>

#include "tests/sim/cli_util.hpp"
#include "common/config_node.hpp"
#include "sim/tools/validate/calibrate.hpp"

using Catch::Matchers::Contains;
using namespace tilesim;

TEST_CASE("calibrate: Nelder-Mead finds a minimum inside the box and stops at its wall", "[validate]") {
  int evals = 0;
  const auto x = nelder_mead([](const std::vector<double>& v) { return std::pow(v[0] - 0.3, 2) + 2 * std::pow(v[1] - 0.7, 2); },
                             {0.9, 0.1}, 0.2, 400, 1e-12, &evals);
  REQUIRE(x[0] == Approx(0.3).margin(1e-3));
  REQUIRE(x[1] == Approx(0.7).margin(1e-3));
  REQUIRE(evals <= 400);
  // The unconstrained minimum is at 1.5: the box keeps the answer at 1.
  const auto y = nelder_mead([](const std::vector<double>& v) { return std::pow(v[0] - 1.5, 2); }, {0.2}, 0.2, 200, 1e-12);
  REQUIRE(y[0] == Approx(1.0).margin(1e-6));
}

TEST_CASE("calibrate: set_yaml_key edits in place and keeps comments", "[validate]") {
  const std::string text =
      "# header comment\n"
      "name: x\n"
      "sm:\n"
      "  count: 4            # source: datasheet\n"
      "  clock_mhz: 1000\n"
      "compute:\n"
      "  flops_per_cycle:\n"
      "    fp16: 10\n"
      "l2:\n"
      "  ways: 16\n";
  std::string t = set_yaml_key(text, "sm.clock_mhz", "1500");
  REQUIRE_THAT(t, Contains("  clock_mhz: 1500  # fitted"));
  REQUIRE_THAT(t, Contains("  count: 4            # source: datasheet"));
  REQUIRE_THAT(t, Contains("# header comment"));
  t = set_yaml_key(t, "compute.flops_per_cycle.fp16", "7");
  REQUIRE_THAT(t, Contains("    fp16: 7  # fitted"));
  t = set_yaml_key(t, "compute.alu_ops_per_cycle", "0.5");  // absent: added to its block
  t = set_yaml_key(t, "sm.sync_check_ns", "0.1");
  const YAML::Node n = load_yaml_text(t, "edited");
  REQUIRE(n["sm"]["clock_mhz"].as<double>() == 1500);
  REQUIRE(n["sm"]["count"].as<int>() == 4);
  REQUIRE(n["sm"]["sync_check_ns"].as<double>() == 0.1);
  REQUIRE(n["compute"]["alu_ops_per_cycle"].as<double>() == 0.5);
  REQUIRE(n["compute"]["flops_per_cycle"]["fp16"].as<double>() == 7);
  REQUIRE(n["l2"]["ways"].as<int>() == 16);
  // A parent written inline cannot be edited line by line: a clear error, not broken YAML.
  REQUIRE_THROWS_WITH(set_yaml_key("compute:\n  mainloops:\n    mma_sync: {efficiency: 0.3}\n",
                                   "compute.mainloops.mma_sync.efficiency", "0.4"),
                      Contains("'mma_sync' is written inline") && Contains("efficiency"));
}

TEST_CASE("calibrate: recovers a known main-loop efficiency from simulated measurements", "[validate][slow]") {
  namespace fs = std::filesystem;
  const fs::path dir = tilesim::test::scratch_dir() / "calib";
  fs::create_directories(dir / "exp");
  const std::string exp =
      "name: small\n"
      "arch: h100\n"
      // 6 warps: a tile without a measured ceiling (tile_efficiency), so it runs at `efficiency`
      "workload: {kind: gemm, m: 2048, n: 2048, k: 4096, tile: [128, 128, 32], stages: 3, threads: 192}\n"
      "validate: {subset: calibration}\n";
  std::ofstream(dir / "exp" / "small.yaml") << exp;
  // "Measure" it with the simulator at a wgmma_cp_async efficiency of 0.5.
  const auto truth = load_validation_experiments({(dir / "exp" / "small.yaml").string()},
                                                 {"arch_overrides.compute.mainloops.wgmma_cp_async.efficiency=0.5"});
  const ExperimentPoint p = truth[0].plan->build(0);  // validation releases the built workload
  const CaseFigures f = simulated_figures(simulate(*p.workload, p.arch, p.options));
  {
    std::ofstream csv(dir / "measured.csv");
    csv << "case,lts__t_sector_hit_rate.pct,lts__t_sectors_op_read.sum,lts__t_sectors_op_write.sum,"
           "dram__bytes_read.sum,dram__bytes_write.sum,median_us\n";
    csv << "small," << *f.hit_rate_pct << ",1000,0," << *f.dram_read_bytes << "," << *f.dram_write_bytes << ","
        << *f.duration_ns / 1e3 << "\n";
  }
  std::ofstream(dir / "spec.yaml") << "arch: h100\n"
                                      "measured: [measured.csv]\n"
                                      "experiments: [exp]\n"
                                      "parameters:\n"
                                      "  compute.mainloops.wgmma_cp_async.efficiency: {min: 0.2, max: 1.0}\n"
                                      "max_evaluations: 40\n"
                                      "tolerance: 0.0001\n";
  const CalibSpec spec = load_calib_spec((dir / "spec.yaml").string());
  const CalibResult r = calibrate(spec, 1, nullptr);
  REQUIRE(r.values.size() == 1);
  REQUIRE(std::stod(r.values[0].second) == Approx(0.5).margin(0.01));
  REQUIRE(*r.calibration.duration_mape_pct < 1.0);
  // The written preset loads and carries the fitted value and its provenance.
  const std::string yaml = fitted_arch_yaml(spec, r, "test");
  REQUIRE_THAT(yaml, Contains("calibration:"));
  REQUIRE_THAT(yaml, Contains("calibration_cases: [small]"));
  const YAML::Node n = load_yaml_text(yaml, "fitted");
  REQUIRE(n["compute"]["mainloops"]["wgmma_cp_async"]["efficiency"].as<double>() == Approx(0.5).margin(0.01));
}

TEST_CASE("calibrate: a spec with a bad parameter names it", "[validate]") {
  const auto dir = tilesim::test::scratch_dir();
  std::ofstream(dir / "bad_spec.yaml") << "measured: [bad_spec.yaml]\nexperiments: [bad_spec.yaml]\n"
                                          "parameters:\n  compute.alu_ops_per_cycle: {min: 1.0, max: 0.5}\n";
  REQUIRE_THROWS_WITH(load_calib_spec((dir / "bad_spec.yaml").string()),
                      Contains("parameters.compute.alu_ops_per_cycle.max") && Contains("max > min"));
}
