// The layer stage of `tilesim tune --model`: the whole layer simulated as `kind: layer` with
// the attention core, coordinate descent that starts from the isolated bests (so it is never
// worse than them), a written layer experiment that `tilesim run` reproduces exactly, the
// FFN's pair kept runnable (one bm, one order), and its options' errors.
#include <catch2/catch.hpp>

#include <set>

#include "sim/tools/tune/layer.hpp"
#include "sim/tools/tune/layer_stage.hpp"
#include "tests/sim/cli_util.hpp"

using namespace tilesim;
using namespace tilesim::test;
using Catch::Matchers::Contains;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

tune::KernelOption gemm_option(const char* tile, int stages, const char* order, double ns) {
  tune::KernelOption o;
  o.keys = YAML::Load(std::string("{tile: ") + tile + ", stages: " + std::to_string(stages) + "}");
  o.order = YAML::Load(order);
  tune::Measured m;
  m.duration_ns = ns;
  o.isolated = m;
  return o;
}

}  // namespace

TEST_CASE("tune layer stage: options print compactly", "[tune]") {
  tune::KernelOption o = gemm_option("[128, 256, 64]", 4, "{kind: grouped, group_m: 8}", 1);
  CHECK(tune::option_text(o) == "128x256x64 s4 grouped(8)");
  o.keys["split_k"] = 2;
  o.order = YAML::Load("{kind: row}");
  CHECK(tune::option_text(o) == "128x256x64 s4 splitk2 row");
  tune::KernelOption a;
  a.keys = YAML::Load("{block_kv: 64, split_kv: 1}");
  a.order = YAML::Load("{kind: swizzle, log_tile: 2}");
  CHECK(tune::option_text(a) == "bkv64 swizzle(2)");  // split 1 is the default: not shown
}

TEST_CASE("tune layer stage: the layer experiment names every kernel's settings", "[tune]") {
  tune::LayerRequest r;
  r.model = "llama3-8b";
  r.batch = 2;
  r.seq = 64;
  const auto g = gemm_option("[64, 128, 64]", 3, "{kind: row}", 1);
  tune::KernelOption att;
  att.keys = YAML::Load("{split_kv: 2}");
  att.order = YAML::Load("{kind: row}");
  const YAML::Node y = YAML::Load(tune::layer_experiment(r, "decode", g, att, g, g, g));
  const YAML::Node w = y["workload"];
  CHECK(w["kind"].as<std::string>() == "layer");
  // Decode: one new token per sequence after a KV cache of --seq positions.
  CHECK(w["phase"].as<std::string>() == "decode");
  CHECK(w["seq"].as<int>() == 1);
  CHECK(w["context"].as<int>() == 64);
  CHECK(w["kernels"]["attention"]["split_kv"].as<int>() == 2);
  CHECK(w["kernels"]["ffn"]["gate_fusion"].as<std::string>() == "separate");  // gate and up as tuned alone
  CHECK(w["kernels"]["ffn"]["gemm1"]["tile"][0].as<int>() == 64);
  r.model = "gpt3-175b-mp8";  // not gated: no gate_fusion, which kind: ffn refuses there
  const YAML::Node u = YAML::Load(tune::layer_experiment(r, "prefill", g, att, g, g, g));
  CHECK_FALSE(u["workload"]["kernels"]["ffn"]["gate_fusion"]);
  CHECK(u["workload"]["seq"].as<int>() == 64);
  CHECK_FALSE(u["workload"]["context"]);
}

TEST_CASE("tune layer stage: the FFN starts from a pair that agrees on bm and order", "[tune]") {
  tune::LayerRequest r;
  r.model = "gpt3-175b-mp8";
  r.batch = 1;
  r.seq = 16;
  tune::LayerOptions o;
  const auto row = "{kind: row}";
  o.qkv = {gemm_option("[64, 64, 64]", 3, row, 10)};
  tune::KernelOption att;
  att.keys = YAML::Node(YAML::NodeType::Map);
  att.order = YAML::Load(row);
  att.isolated = tune::Measured{};
  o.attention = {att};
  o.out_proj = {gemm_option("[64, 64, 64]", 3, row, 10)};
  // Isolated bests: up 128-row, down 64-row: kind: layer cannot run them together. The best
  // agreeing pair by the sum of isolated times is up's second with down's best (64 rows).
  o.ffn_up = {gemm_option("[128, 64, 64]", 3, row, 10), gemm_option("[64, 64, 64]", 3, row, 11)};
  o.ffn_down = {gemm_option("[64, 64, 64]", 3, row, 10), gemm_option("[128, 128, 64]", 3, row, 30)};
  tune::Settings s;
  s.cache_dir = "";
  s.jobs = 2;
  const tune::LayerStage st = tune::run_layer_stage(r, "prefill", o, 1, s);
  CHECK_THAT(st.note, Contains("one bm and one launch order"));
  REQUIRE(st.rows.size() == 5);  // qkv, attention, attn_out, ffn_up, ffn_down (not gated)
  CHECK(st.rows[3].role == "ffn_up");
  CHECK(tune::option_text(st.rows[3].start) == "64x64x64 s3 row");
  CHECK(tune::option_text(st.rows[4].start) == "64x64x64 s3 row");
  // top 1: nothing to try, one layer simulated, the choice is the start.
  CHECK(st.layers == 1);
  CHECK(st.best.duration_ns == st.start.duration_ns);
  // Every role's kernels were found in the layer's result.
  for (const tune::LayerStageRow& row : st.rows) CHECK(row.start_ns > 0);
}

TEST_CASE("tune layer stage: never worse than the isolated bests, and the layer YAML reproduces it", "[tune][cli]") {
  const fs::path dir = scratch_dir() / "tune_layer_stage";
  fs::remove_all(dir);
  const std::string cmd = "tune --model llama3-8b --batch 2 --seq 64 --phase decode --top-fraction 0.05 -j 2 "
                          "--layer-top 2 --cache-dir " + (dir / "cache").string();
  const CliRun first = run_tilesim(cmd + " -o " + (dir / "best").string() + " --json " + (dir / "out.json").string());
  INFO(first.out);
  REQUIRE(first.code == 0);
  CHECK_THAT(first.out, Contains("\n  attention "));  // the isolated attention row
  CHECK_THAT(first.out, Contains("in one layer (kind: layer"));
  const json j = json::parse(slurp(dir / "out.json"));
  const json& phase = j.at("phases").at(0);
  CHECK(phase.at("phase") == "decode");
  std::set<std::string> roles;
  for (const json& k : phase.at("layer").at("kernels")) {
    roles.insert(k.at("role").get<std::string>());
    CHECK(k.at("layer_tuned").at("in_layer_duration_ns").get<double>() > 0);
  }
  CHECK(roles == std::set<std::string>{"qkv", "attention", "attn_out", "ffn_gate", "ffn_up", "ffn_down"});
  const double start = phase.at("layer").at("isolated_bests").at("duration_ns").get<double>();
  const double tuned = phase.at("layer").at("layer_tuned").at("duration_ns").get<double>();
  CHECK(tuned <= start);
  CHECK(phase.at("layer").at("layer_configurations").get<int>() >= 1);

  // The written layer is an ordinary experiment with exactly the reported time.
  const CliRun run = run_tilesim("run " + (dir / "best" / "decode_layer.yaml").string() + " --json " +
                                 (dir / "run.json").string());
  INFO(run.out);
  REQUIRE(run.code == 0);
  CHECK(run_json_total(dir / "run.json").at("duration_ns").get<double>() == tuned);

  // A second run takes every layer from the cache and reports the same totals.
  const CliRun again = run_tilesim(cmd + " --json " + (dir / "again.json").string());
  INFO(again.out);
  REQUIRE(again.code == 0);
  CHECK_THAT(again.out, Contains(" 0 points simulated"));
  const json k = json::parse(slurp(dir / "again.json")).at("phases").at(0).at("layer");
  CHECK(k.at("layer_tuned").at("duration_ns").get<double>() == tuned);
  CHECK(k.at("simulated").get<int>() == 0);
}

TEST_CASE("tune layer stage: bad options name themselves and exit 2", "[tune][cli]") {
  const auto fails = [](const std::string& args, const std::string& message) {
    const CliRun r = run_tilesim(args);
    INFO(args << "\n" << r.out);
    CHECK(r.code == 2);
    CHECK_THAT(r.out, Contains(message));
  };
  fails("tune --model llama3-8b --seq 64 --layer-top -1", "--layer-top: expected 0 ... 16");
  fails("tune --model llama3-8b --seq 64 --layer-top 17", "--layer-top: expected 0 ... 16");
  fails("tune --model llama3-8b --seq 64 --layer-top x", "layer-top");
  fails("tune x.yaml --layer-top 2", "--layer-top: only meaningful with --model");
  fails("tune x.yaml --json out.json", "--json: only meaningful with --model");
  fails("tune --model llama3-8b --phase decode --batch 4", "--seq: expected the decode phase's KV-cache length");
  fails("tune --model llama3-8b --seq 64 --dtype fp8", "--dtype: the layer stage simulates kind: layer");
}
