// The explorer's manual mode beyond one small GEMM: the replay program's loops (exact, and
// small enough for 4096-tile grids), and the chain mode (an FFN fused under `sync: dataflow`):
// its program replayed in a chain order is what `tilesim run` reports for the exported chain
// order file and experiment.
#include <catch2/catch.hpp>

#include <filesystem>
#include <string>
#include <vector>

#include "sim/config/experiment.hpp"
#include "sim/tools/explore/explore_data.hpp"
#include "sim/tools/explore/replay.hpp"
#include "sim/tools/explore/replay_program.hpp"
#include "tests/sim/cli_util.hpp"
#include "tests/sim/tools/explore/manual_util.hpp"

using namespace tilesim;
using namespace tilesim::test;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

const fs::path kExperiments = fs::path(TILESIM_TEST_DIR) / ".." / "experiments";

explore::ReplayRequest req(Addr start, std::uint64_t pitch, std::uint32_t rows, bool write = false) {
  return {{start, pitch, 128, rows}, write};
}

bool same(const std::vector<explore::ReplayRequest>& a, const std::vector<explore::ReplayRequest>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (a[i].rect.start != b[i].rect.start || a[i].rect.pitch != b[i].rect.pitch ||
        a[i].rect.row_bytes != b[i].rect.row_bytes || a[i].rect.rows != b[i].rect.rows || a[i].write != b[i].write)
      return false;
  return true;
}

/// Replays a chain order ("p01": producer tile (0, 1); "c12": consumer tile (1, 2)) through
/// the view's manual program and runs the exported experiment with that chain order file: the
/// run's DRAM bytes, L2 sectors and hits must be the replay's. Returns the replay's totals.
explore::ReplayTotals replay_and_run(const ExperimentPlan& plan, const json& m, const std::vector<std::string>& order,
                                     const std::string& name) {
  const L2Spec spec = plan.build(0).arch.l2;
  const explore::ReplayProgram prog = manual_program(m);
  const std::uint32_t gm = m["grid_m"], gn = m["grid_n"], n1 = m["chain"]["consumer_n"];
  explore::Replay replay(spec, m["seed"].get<std::uint64_t>(), 0);
  std::string text = "# by hand\nchain " + std::to_string(gm) + " " + std::to_string(gn) + " " + std::to_string(n1) + "\n";
  for (const std::string& e : order) {
    const std::uint32_t row = e[1] - '0', col = e[2] - '0';
    replay.run_block(prog, e[0] == 'p' ? row * gn + col : gm * gn + row * n1 + col);
    text += std::string(1, e[0]) + " " + std::to_string(row) + " " + std::to_string(col) + "\n";
  }
  replay.flush();
  const json out = run_manual(scratch_dir() / ("explore_chain_" + name), m, m["experiment_yaml"], text);
  const json& k = out["kernels"][0]["l2"];
  const explore::ReplayTotals& t = replay.totals();
  INFO(name << ": " << out["total"].dump() << " " << k.dump());
  CHECK(out["total"]["dram_read_bytes"].get<std::uint64_t>() == t.dram_read_sectors * spec.sector_bytes);
  CHECK(out["total"]["dram_write_bytes"].get<std::uint64_t>() == t.dram_write_sectors * spec.sector_bytes);
  CHECK(k["read_sectors"].get<std::uint64_t>() + k["write_sectors"].get<std::uint64_t>() == t.sectors);
  CHECK(k["read_hit_sectors"].get<std::uint64_t>() + k["write_hit_sectors"].get<std::uint64_t>() == t.hit_sectors);
  return t;
}

/// Each row's producer tiles from the right, then its consumer tiles: a valid chain order.
std::vector<std::string> rows_reversed(const json& m) {
  std::vector<std::string> out;
  for (int r = 0; r < m["grid_m"].get<int>(); ++r) {
    for (int c = m["grid_n"].get<int>() - 1; c >= 0; --c) out.push_back("p" + std::to_string(r) + std::to_string(c));
    for (int c = 0; c < m["chain"]["consumer_n"].get<int>(); ++c) out.push_back("c" + std::to_string(r) + std::to_string(c));
  }
  return out;
}

}  // namespace

TEST_CASE("explore replay program: blocks fold into loops and expand back exactly", "[explore]") {
  // A GEMM-like block (A_k, B_k for 6 k-steps, then C), one with a descending stride, one
  // without any pattern, and an empty one.
  std::vector<explore::ReplayRequest> gemm, down, odd;
  for (Addr k = 0; k < 6; ++k) gemm.insert(gemm.end(), {req(1000 + 128 * k, 4096, 64), req(900000 + 128 * k, 8192, 64)});
  gemm.push_back(req(5000000, 4096, 64, true));
  for (Addr k = 0; k < 5; ++k) down.push_back(req((1 << 20) - 4096 * k, 256, 8));
  odd = {req(7, 1, 1), req(300, 2, 1), req(100, 1, 2), req(100, 1, 2, true)};
  explore::ReplayProgram p;
  for (const auto* b : {&gemm, &down, &odd, &gemm}) explore::append_block(p, *b);
  explore::append_block(p, {});
  REQUIRE(p.blocks() == 5);
  CHECK(same(explore::block_requests(p, 0), gemm));
  CHECK(same(explore::block_requests(p, 1), down));
  CHECK(same(explore::block_requests(p, 2), odd));
  CHECK(same(explore::block_requests(p, 3), gemm));
  CHECK(explore::block_requests(p, 4).empty());
  // The GEMM block is one loop of period 2 and the store; the descending one a single loop.
  CHECK(p.block_first[1] - p.block_first[0] == 2);
  CHECK(p.loops[0].period == 2);
  CHECK(p.loops[0].repeat == 6);
  CHECK(p.block_first[2] - p.block_first[1] == 1);

  // Packed and unpacked, it is the same program; a word less is refused.
  const std::vector<std::uint32_t> words = explore::pack_program(p);
  explore::ReplayProgram back;
  REQUIRE(explore::unpack_program(words.data(), words.size(), back));
  for (std::uint32_t b = 0; b < p.blocks(); ++b) CHECK(same(explore::block_requests(back, b), explore::block_requests(p, b)));
  CHECK_FALSE(explore::unpack_program(words.data(), words.size() - 1, back));
}

TEST_CASE("explore manual mode: a 4096-tile GEMM gets a manual mode whose program stays small", "[explore]") {
  // 8192^3 fp16 in 128 x 128 x 64 tiles: 64 x 64 tiles of 128 k-steps each (257 requests).
  const ExperimentPlan plan = load_plan((kExperiments / "explore_gemm_3x3.yaml").string(),
                                        {"workload.m=8192", "workload.n=8192", "workload.k=8192"});
  const json v = explore::explore_view(plan, 0, "big");
  INFO(v["manual_note"]);
  REQUIRE(v["manual"].is_object());
  CHECK(v["manual"]["grid_m"] == 64);
  CHECK(v["manual"]["grid_n"] == 64);
  const explore::ReplayProgram prog = manual_program(v["manual"]);
  REQUIRE(prog.blocks() == 4096);
  // Unfolded, the requests would be 4096 x 257 x 8 words (34 MB); folded, a block is one
  // main loop of period 2 and the store.
  CHECK(prog.loops.size() == 2 * 4096);
  CHECK(prog.requests.size() == 3 * 4096);
  CHECK(v["manual"]["program"].get<std::string>().size() < 3'000'000);  // with 8192 cells of 16 sample lines
  CHECK(explore::block_requests(prog, 4095).size() == 2 * 128 + 1);

  // One tile more is refused, with the limit named.
  const json over = explore::explore_view(
      load_plan((kExperiments / "explore_gemm_3x3.yaml").string(), {"workload.m=8192", "workload.n=8320", "workload.k=256"}),
      0, "over");
  CHECK(over["manual"].is_null());
  CHECK(over["manual_note"].get<std::string>().find("up to 4096 tiles") != std::string::npos);
}

TEST_CASE("explore manual chain mode: a chain order replayed is what tilesim run reports", "[explore][cli]") {
  const ExperimentPlan plan = load_plan((kExperiments / "explore_ffn_chain_3x3.yaml").string(), {});
  const json v = explore::explore_view(plan, 0, "chain");
  INFO(v["manual_note"]);
  REQUIRE(v["manual"].is_object());
  const json& m = v["manual"];
  CHECK(m["grid_m"] == 3);
  CHECK(m["grid_n"] == 3);
  CHECK(m["chain"]["consumer_n"] == 3);
  CHECK(m["order_file"] == "manual_chain_order.txt");
  const std::string yaml = m["experiment_yaml"];
  CHECK(yaml.find("after:") == std::string::npos);  // the chain order file gives the interleaving
  const explore::ReplayProgram prog = manual_program(m);
  REQUIRE(prog.blocks() == 18);

  // Row by row (as `after: row` dispatches), and an interleaving that uses a row of H while it
  // is still in the L2 and visits W1's columns in a snake.
  const explore::ReplayTotals rows = replay_and_run(plan, m,
      {"p00", "p01", "p02", "c00", "c01", "c02", "p10", "p11", "p12", "c10", "c11", "c12", "p20", "p21", "p22", "c20", "c21", "c22"},
      "rows");
  const explore::ReplayTotals snake = replay_and_run(plan, m,
      {"p02", "p01", "p00", "c00", "c01", "c02", "p12", "p11", "p10", "c12", "c11", "c10", "p20", "p21", "p22", "c20", "c21", "c22"},
      "snake");
  CHECK(rows.dram_read_sectors != snake.dram_read_sectors);  // the interleaving matters here
}

TEST_CASE("explore manual chain mode: gated FFNs (fused gate+up, concatenated [gate | up]) replay exactly",
          "[explore][cli]") {
  // concat widens the producer to 2f columns: a 3 x 6 producer grid before a 3 x 3 consumer.
  for (const auto& [fusion, producer_n] : std::vector<std::pair<std::string, int>>{{"fused", 3}, {"concat", 6}}) {
    const ExperimentPlan plan = load_plan((kExperiments / "explore_ffn_chain_3x3.yaml").string(),
                                          {"workload.gated=true", "workload.gate_fusion=" + fusion});
    const json v = explore::explore_view(plan, 0, fusion);
    INFO(fusion << ": " << v["manual_note"]);
    REQUIRE(v["manual"].is_object());
    CHECK(v["manual"]["grid_n"] == producer_n);
    CHECK(v["manual"]["chain"]["consumer_n"] == 3);
    replay_and_run(plan, v["manual"], rows_reversed(v["manual"]), "gated_" + fusion);
  }
  // A separate gate kernel runs before the fused one: no single chain to click.
  const json sep = explore::explore_view(load_plan((kExperiments / "explore_ffn_chain_3x3.yaml").string(),
                                                   {"workload.gated=true", "workload.gate_fusion=separate"}),
                                         0, "separate");
  CHECK(sep["manual"].is_null());
  CHECK(sep["manual_note"].get<std::string>().find("separate gate kernel") != std::string::npos);
}

TEST_CASE("explore manual chain mode: an FFN under another sync has no manual mode, and says why", "[explore]") {
  std::string text = slurp(kExperiments / "explore_ffn_chain_3x3.yaml");
  const std::string dataflow = "sync: {kind: dataflow, after: row}";
  REQUIRE(text.find(dataflow) != std::string::npos);
  text.replace(text.find(dataflow), dataflow.size(), "sync: {kind: rowsync}");
  const json v = explore::explore_view(load_plan_text(text, "<test>", kExperiments.string(), {}), 0, "s");
  CHECK(v["manual"].is_null());
  CHECK(v["manual_note"].get<std::string>().find("sync: {kind: dataflow}") != std::string::npos);
}
