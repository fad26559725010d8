// The explorer's WebAssembly module (cmake/explore_wasm.cmake) against the native replay: the
// same program and click order through the page's loader (sim/tools/explore/assets/replay.js) under
// node gives the same totals and residency after every block, for each replacement policy
// and hash; and bad input from JS is answered with error codes, never a trap.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/base64.hpp"
#include "sim/config/experiment.hpp"
#include "sim/tools/explore/explore_data.hpp"
#include "sim/tools/explore/manual_data.hpp"
#include "sim/tools/explore/replay.hpp"
#include "sim/tools/explore/replay_program.hpp"
#include "sim/tools/explore/wasm_module.hpp"
#include "tests/sim/cli_util.hpp"

using namespace tilesim;
using namespace tilesim::explore;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

// 384 x 384 x 2048 fp16 in 128 x 128 x 64 tiles: a 3 x 3 grid whose blocks each read 1 MiB of
// A and B panels, through a 1 MiB L2, so that every order evicts.
const char* kGemm = R"(arch: h100
arch_overrides: {l2: {bytes: 1048576}}
workload: {kind: gemm, m: 384, n: 384, k: 2048, dtype: fp16, tile: [128, 128, 64], stages: 3, blocks_per_sm: 1}
)";

const std::vector<std::uint32_t> kOrder{4, 0, 8, 2, 6, 4, 1, 7, 3, 5};

json manual_of(const L2Spec& l2, std::uint32_t partition, std::uint64_t seed, const std::vector<std::uint32_t>& words) {
  return {{"l2", explore::manual_l2_json(l2)},
          {"partition", partition},
          {"seed", seed},
          {"program", base64_encode(words.data(), words.size() * sizeof(std::uint32_t))}};
}

/// Totals and residency after a step, as replay.js reports them.
json snapshot(const Replay& r, const ReplayProgram& p, std::uint32_t sector_bytes) {
  json fractions = json::array();
  for (std::size_t c = 0; c + 1 < p.cell_first.size(); ++c)
    fractions.push_back(r.resident_fraction(p.samples.data() + p.cell_first[c], p.cell_first[c + 1] - p.cell_first[c]));
  const ReplayTotals& t = r.totals();
  return {{"sectors", static_cast<double>(t.sectors)},
          {"hit_sectors", static_cast<double>(t.hit_sectors)},
          {"dram_read_bytes", static_cast<double>(t.dram_read_sectors * sector_bytes)},
          {"dram_write_bytes", static_cast<double>(t.dram_write_sectors * sector_bytes)},
          {"fractions", fractions}};
}

/// Where node is, or "" (searched on PATH like a shell would).
std::string find_node() {
  FILE* f = ::popen("command -v node || command -v nodejs", "r");
  if (!f) return "";
  char buf[4096] = {};
  const bool got = std::fgets(buf, sizeof buf, f) != nullptr;
  ::pclose(f);
  std::string s = got ? buf : "";
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.pop_back();
  return s;
}

struct Fixture {
  ReplayProgram program;
  std::vector<std::uint32_t> words;
  L2Spec l2;
};

Fixture make_fixture() {
  const ExperimentPoint point = load_plan_text(kGemm, "<test>", ".", {}).build(0);
  Fixture f;
  f.l2 = point.arch.l2;
  f.program = replay_program(*point.workload, 0);
  // Cells: the sampled lines of every request of blocks 0 and 4 (A and B tiles, C), and
  // one empty cell (its fraction is 0).
  for (std::uint32_t b : {0u, 4u})
    for (const ReplayRequest& r : block_requests(f.program, b)) add_cell(f.program, sample_lines(r.rect, f.l2.line_bytes));
  add_cell(f.program, {});
  f.words = pack_program(f.program);
  return f;
}

/// Runs the node check on `cases`; its parsed output.
json run_node(const json& cases) {
  const std::string node = find_node();
  if (node.empty())
    FAIL("node (Debian package nodejs) is not on PATH; it runs the explorer's WebAssembly module in this test. "
         "Install it with scripts/install-deps.sh.");
  const fs::path dir = test::scratch_dir() / "replay_wasm";
  fs::create_directories(dir);
  std::ofstream(dir / "module.b64") << explore_assets::replay_wasm_base64();
  std::ofstream(dir / "cases.json") << cases.dump();
  const std::string cmd = node + " " + std::string(TILESIM_TEST_DIR) + "/sim/tools/explore/replay_wasm_check.js " +
                          std::string(TILESIM_SOURCE_DIR) + "/sim/tools/explore/assets/replay.js " +
                          (dir / "module.b64").string() + " " + (dir / "cases.json").string() + " > " +
                          (dir / "out.json").string() + " 2> " + (dir / "err.txt").string();
  const int status = std::system(cmd.c_str());
  INFO("node stderr: " << test::slurp(dir / "err.txt"));
  REQUIRE(status == 0);
  return json::parse(test::slurp(dir / "out.json"));
}

}  // namespace

TEST_CASE("the embedded WebAssembly module is base64 of a module that imports nothing", "[explore][wasm]") {
  const std::string& b64 = explore_assets::replay_wasm_base64();
  REQUIRE(b64.size() == (explore_assets::replay_wasm_size() + 2) / 3 * 4);
  CHECK(b64.substr(0, 8) == "AGFzbQEA");  // "\0asm", version 1
  // Under the page's budget (the L2 walk is instantiated per policy, hash and direction, so it
  // grows with each): 402 KiB with three hashes and four policies.
  CHECK(explore_assets::replay_wasm_size() < 448 * 1024);
}

TEST_CASE("the WebAssembly replay matches the native replay block by block", "[explore][wasm]") {
  const Fixture f = make_fixture();
  REQUIRE(f.program.blocks() == 9);  // 3 x 3 blocks

  // The preset's L2 (xor_fold, srrip, two halves with far copies) from either half, and the
  // other policies and hashes, one half, no far copies.
  struct Variant {
    std::string hash, replacement;
    std::uint32_t partitions;
    bool far_copy;
    std::uint32_t partition;
    std::uint64_t seed;
  };
  const std::vector<Variant> variants{{f.l2.hash, f.l2.replacement, f.l2.partitions, f.l2.far_copy, 0, 1},
                                      {f.l2.hash, f.l2.replacement, f.l2.partitions, f.l2.far_copy, 1, 1},
                                      {"modulo", "lru", 2, false, 1, 1},
                                      {"xor_fold", "fifo", 1, false, 0, 1},
                                      {"modulo", "random", 2, true, 0, 0x1234567890ull},
                                      {"xor_fold", "srrip", 2, true, 1, 7}};
  json cases = json::array(), expected = json::array();
  for (const Variant& v : variants) {
    L2Spec l2 = f.l2;
    l2.hash = v.hash;
    l2.replacement = v.replacement;
    l2.partitions = v.partitions;
    l2.far_copy = v.far_copy;
    Replay r(l2, v.seed, v.partition);
    json steps = json::array();
    for (std::uint32_t b : kOrder) {
      r.run_block(f.program, b);
      steps.push_back(snapshot(r, f.program, l2.sector_bytes));
    }
    r.flush();
    steps.push_back(snapshot(r, f.program, l2.sector_bytes));
    cases.push_back({{"manual", manual_of(l2, v.partition, v.seed, f.words)}, {"order", kOrder}});
    expected.push_back(steps);
  }
  const json out = run_node({{"cases", cases}});

  REQUIRE(out["cases"].size() == variants.size());
  for (std::size_t i = 0; i < variants.size(); ++i) {
    const json& got = out["cases"][i];
    INFO("variant " << i << ": " << cases[i]["manual"]["l2"].dump());
    CHECK(got["blocks"] == 9);
    CHECK(got["cells"] == f.program.cell_first.size() - 1);
    REQUIRE(got["steps"].size() == expected[i].size());
    for (std::size_t s = 0; s < expected[i].size(); ++s) {
      INFO("after step " << s << (s < kOrder.size() ? " (block " + std::to_string(kOrder[s]) + ")" : " (flush)"));
      CHECK(got["steps"][s] == expected[i][s]);
    }
    // Blocks shared panels (hits), the L2 evicted (A and B, 3 MiB, were read more than once)
    // and the flush wrote back C.
    const json& last = expected[i].back();
    CHECK(last["hit_sectors"].get<double>() > 0);
    CHECK(last["dram_read_bytes"].get<double>() > 2 * 384 * 2048 * 2);
    CHECK(last["dram_write_bytes"].get<double>() >= 384 * 384 * 2);
    // reset(): cold again, and the first step repeats.
    CHECK(got["cold"]["sectors"] == 0);
    CHECK(got["cold"]["dram_read_bytes"] == 0);
    CHECK(got["again"] == expected[i][0]);
  }
}

TEST_CASE("the WebAssembly replay answers bad input with error codes", "[explore][wasm]") {
  const Fixture f = make_fixture();
  json cases = json::array({{{"manual", manual_of(f.l2, 0, 1, f.words)}, {"order", {4, 0}}}});
  const json e = run_node({{"cases", cases}})["errors"];
  INFO(e.dump(1));
  // Codes: sim/tools/explore/wasm/replay_wasm.cpp.
  CHECK(e["run_block_past_end"] == -5);
  CHECK(e["run_block_huge"] == -5);
  CHECK(e["runBlock_negative"] == -5);
  CHECK(e["runBlock_fraction"] == -5);
  CHECK(e["cell_fractions_bad_ptr"] == -7);
  CHECK(e["reset_ways_0"] == -3);
  CHECK(e["run_block_after_failed_reset"] == -4);
  CHECK(e["reset_hash_9"] == -3);
  CHECK(e["reset_replacement_9"] == -3);
  CHECK(e["reset_line_100"] == -3);
  CHECK(e["reset_sector_4"] == -3);
  CHECK(e["reset_bytes_odd"] == -3);
  CHECK(e["reset_bytes_64g"] == -3);
  CHECK(e["reset_ok"] == 0);
  CHECK(e["load_bad_magic"] == -2);
  CHECK(e["run_block_without_program"] == -1);
  CHECK(e["reset_without_program"] == -1);
  CHECK(e["load_truncated"] == -2);
  CHECK(e["load_header_only"] == -2);
  CHECK(e["load_past_memory"] == -7);
  CHECK(e["load_null"] == -7);
  CHECK(e["create_bad_program"] == -2);
  // The module survived all of it.
  CHECK(e["load_good"] == 0);
  CHECK(e["reset_after"] == 0);
  CHECK(e["run_after"] == 0);
  CHECK(e["sectors_after"].get<double>() > 0);
}
