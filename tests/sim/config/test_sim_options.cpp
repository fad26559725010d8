// The experiment's `sim:` section as sim/config/experiment.cpp reads it: sim.timing.
#include <catch2/catch.hpp>

#include "sim/config/experiment.hpp"

using namespace tilesim;

namespace {

SimOptions options(const std::string& sim) {
  const std::string text =
      "arch: h100\nworkload: {kind: gemm, m: 1024, n: 1024, k: 512, dtype: fp16, tile: [128, 128, 64], stages: 3}\n"
      "order: {kind: row}\nsim: " + sim + "\n";
  return load_experiment_text(text, "exp.yaml", ".", {}).points.at(0).options;
}

}  // namespace

TEST_CASE("sim.timing: steady by default, or a harness of launches from an idle board", "[sim][config]") {
  using Kind = SimOptions::Timing::Kind;
  CHECK(options("{}").timing.kind == Kind::steady);
  CHECK(options("{timing: steady}").timing.kind == Kind::steady);
  const SimOptions h = options("{timing: {warmup: 3, launches: 20}}");
  CHECK(h.timing.kind == Kind::launches);
  CHECK(h.timing.warmup == 3);
  CHECK(h.timing.launches == 20);
  CHECK(options("{timing: {launches: 5}}").timing.warmup == 0);
}

TEST_CASE("sim.timing: do_bench with Triton's defaults, or its own", "[sim][config]") {
  using Kind = SimOptions::Timing::Kind;
  const SimOptions d = options("{timing: do_bench}");
  CHECK(d.timing.kind == Kind::do_bench);
  CHECK(d.timing.warmup_ms == 25);
  CHECK(d.timing.rep_ms == 100);
  CHECK(d.timing.flush_bytes == 256.0 * 1024 * 1024);
  const SimOptions e = options("{timing: {kind: do_bench, rep_ms: 50, flush_bytes: 0}}");
  CHECK(e.timing.rep_ms == 50);
  CHECK(e.timing.flush_bytes == 0);
  CHECK(options("{timing: {kind: steady}}").timing.kind == Kind::steady);
  CHECK(options("{timing: {launches: 3, flush_bytes: 1e6}}").timing.flush_bytes == 1e6);
}

TEST_CASE("sim.timing: bad values name the key", "[sim][config]") {
  CHECK_THROWS_WITH(options("{timing: fast}"), Catch::Contains("sim.timing") && Catch::Contains("steady"));
  CHECK_THROWS_WITH(options("{timing: {warmup: 3}}"), Catch::Contains("launches"));
  CHECK_THROWS_WITH(options("{timing: {launches: 0}}"), Catch::Contains("sim.timing.launches"));
  CHECK_THROWS_WITH(options("{timing: {launches: 5, repeats: 2}}"), Catch::Contains("repeats"));
  CHECK_THROWS_WITH(options("{timing: [1, 2]}"), Catch::Contains("sim.timing"));
  CHECK_THROWS_WITH(options("{timing: {kind: do_bench, launches: 3}}"), Catch::Contains("launches"));
  CHECK_THROWS_WITH(options("{timing: {kind: bench}}"), Catch::Contains("sim.timing.kind"));
}
