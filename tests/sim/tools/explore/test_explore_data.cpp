// The explorer's data from a real simulation (sim/tools/explore/explore_data.cpp): the counters at
// each dispatch add up to the run's totals, residency snapshots have the documented shape and
// say "all resident" when the L2 holds everything, and the manual mode's sequential replay of
// an order gives exactly what `tilesim run` reports for the exported experiment.
#include <catch2/catch.hpp>

#include <filesystem>
#include <set>

#include "sim/config/experiment.hpp"
#include "sim/tools/explore/explore_data.hpp"
#include "sim/tools/explore/replay.hpp"
#include "common/base64.hpp"
#include "tests/sim/cli_util.hpp"
#include "tests/sim/tools/explore/manual_util.hpp"

using namespace tilesim;
using namespace tilesim::test;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

const fs::path kExperiment = fs::path(TILESIM_TEST_DIR) / ".." / "experiments" / "explore_gemm_3x3.yaml";

}  // namespace

TEST_CASE("explore data: per-dispatch counters add up to the run's totals", "[explore]") {
  // Without the request coalescer, every block's loads reach the L2 (a merged load is not an L2
  // access, so it has no per-operand counters to add up).
  const ExperimentPlan plan =
      load_plan(kExperiment.string(), {"order.kind=hilbert", "arch_overrides.l2.request_coalescing_ns=0"});
  const json v = explore::explore_view(plan, 0, "hilbert");
  const json& steps = v["steps"];
  const json& blocks = v["blocks"];
  REQUIRE(steps["t_ns"].size() == 9);
  REQUIRE(blocks["sm"].size() == 9);
  std::uint64_t sectors = 0;
  for (std::size_t i = 0; i < 9; ++i) {
    sectors += blocks["sectors"][i].get<std::uint64_t>();
    if (i)
      CHECK(steps["dram_read_bytes"][i].get<std::uint64_t>() >= steps["dram_read_bytes"][i - 1].get<std::uint64_t>());
  }
  // The last step closes at the end of the run: every read is in it; only the final write-back is not.
  CHECK(steps["dram_read_bytes"].back() == v["total"]["dram_read_bytes"]);
  CHECK(steps["sectors"].back() == v["total"]["sectors"]);
  CHECK(sectors == v["total"]["sectors"].get<std::uint64_t>());
  CHECK(steps["dram_write_bytes"].back().get<std::uint64_t>() <= v["total"]["dram_write_bytes"].get<std::uint64_t>());
  // A block's loads, per tensor, are A and B, and add up to less than all its requests (C's store).
  for (std::size_t i = 0; i < 9; ++i) {
    const json& loads = blocks["loads"][i];
    REQUIRE(loads.size() == 2);
    CHECK(loads[0][0] == 0);
    CHECK(loads[1][0] == 1);
    const std::uint64_t load_sectors = loads[0][1].get<std::uint64_t>() + loads[1][1].get<std::uint64_t>();
    CHECK(load_sectors < blocks["sectors"][i].get<std::uint64_t>());
    CHECK(loads[0][2].get<std::uint64_t>() <= loads[0][1].get<std::uint64_t>());
  }
  // Each tile of the 3x3 grid appears once.
  std::set<std::pair<int, int>> tiles;
  for (std::size_t i = 0; i < 9; ++i) tiles.insert({blocks["tile_m"][i].get<int>(), blocks["tile_n"][i].get<int>()});
  CHECK(tiles.size() == 9);
}

TEST_CASE("explore data: residency cells and snapshots, a cache that holds everything ends full", "[explore]") {
  // 50 MiB of L2 holds A and B (3 MiB each): at the end every sampled line is resident.
  const ExperimentPlan plan = load_plan(kExperiment.string(), {"arch_overrides.l2.bytes=52428800"});
  const json v = explore::explore_view(plan, 0, "big");
  const json& t = v["tensors"];
  // A is 384 x 4096 read in 128 x 64 tiles: 3 x 64 cells; B 4096 x 384 in 64 x 128: 64 x 3; C has none.
  CHECK(t[0]["grid_rows"] == 3);
  CHECK(t[0]["grid_cols"] == 64);
  CHECK(t[1]["cell_first"] == 192);
  CHECK(t[1]["grid_rows"] == 64);
  CHECK(t[2]["cell_first"] == -1);
  const std::size_t cells = v["residency"]["cells"].get<std::size_t>();
  CHECK(cells == 384);
  const auto bytes = base64_decode(v["residency"]["data"].get<std::string>());
  const std::size_t snaps = v["residency"]["snapshot_steps"].size();
  REQUIRE(bytes.size() == snaps * cells);
  CHECK(v["residency"]["snapshot_steps"].back() == 8);
  for (std::size_t c = 0; c < cells; ++c) CHECK(int(bytes[(snaps - 1) * cells + c]) == 255);
}

TEST_CASE("explore manual mode: the sequential replay of an order is what tilesim run reports", "[explore][cli]") {
  const ExperimentPlan plan = load_plan(kExperiment.string(), {});
  const json v = explore::explore_view(plan, 0, "row");
  REQUIRE(v["manual"].is_object());
  const json& m = v["manual"];
  const explore::ReplayProgram prog = manual_program(m);
  CHECK(prog.cell_first.size() == v["residency"]["cells"].get<std::size_t>() + 1);

  // A snake through the grid, as a user would click it.
  const std::vector<std::pair<int, int>> order{{0, 0}, {0, 1}, {0, 2}, {1, 2}, {1, 1}, {1, 0}, {2, 0}, {2, 1}, {2, 2}};
  L2Spec spec;
  {
    const ExperimentPoint p = plan.build(0);
    spec = p.arch.l2;
  }
  explore::Replay replay(spec, m["seed"].get<std::uint64_t>(), m["partition"].get<std::uint32_t>());
  for (const auto& [tm, tn] : order) {
    const std::uint32_t b = tm * 3 + tn;
    replay.run_block(prog, b);
  }
  replay.flush();

  std::string order_text = "# clicked\ngrid 3 3\n";
  for (const auto& [tm, tn] : order) order_text += std::to_string(tm) + " " + std::to_string(tn) + "\n";
  const json total = run_manual(scratch_dir() / "explore_manual", m, m["experiment_yaml"], order_text)["total"];
  const std::uint64_t sector = spec.sector_bytes;
  CHECK(total["dram_read_bytes"].get<std::uint64_t>() == replay.totals().dram_read_sectors * sector);
  CHECK(total["dram_write_bytes"].get<std::uint64_t>() == replay.totals().dram_write_sectors * sector);
  // The order matters here (that is the point of the example): row order reads more.
  explore::Replay row(spec, 1, 0);
  for (std::uint32_t b = 0; b < 9; ++b) row.run_block(prog, b);
  CHECK(row.totals().dram_read_sectors != replay.totals().dram_read_sectors);
}
