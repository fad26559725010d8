// `tilesim tune --model`: one transformer layer's weight GEMMs (shapes checked by hand against
// the models' published configurations), equal shapes tuned once, the cache shared across
// runs, and the layer total as the sum of the table's rows.
#include <catch2/catch.hpp>

#include <regex>

#include "common/error.hpp"
#include "sim/tools/tune/layer.hpp"
#include "tests/sim/cli_util.hpp"

using namespace tilesim;
using namespace tilesim::test;
using Catch::Matchers::Contains;
namespace fs = std::filesystem;

namespace {

bool same(const tune::LayerGemm& g, const char* phase, const char* role, std::uint32_t m, std::uint32_t n,
          std::uint32_t k) {
  return g.phase == phase && g.role == role && g.m == m && g.n == n && g.k == k;
}

}  // namespace

TEST_CASE("tune layer: llama3-70b's GEMMs for prefill and decode", "[tune]") {
  tune::LayerRequest r;
  r.model = "llama3-70b";
  r.batch = 8;
  r.seq = 2048;
  const auto g = tune::layer_gemms(r);
  REQUIRE(g.size() == 10);
  // d 8192, 64 query heads and 8 KV heads of 128: QKV out = (64 + 2 x 8) x 128 = 10240;
  // FFN 28672, gated. Prefill runs 8 x 2048 = 16384 tokens, decode 8.
  CHECK(same(g[0], "prefill", "qkv", 16384, 10240, 8192));
  CHECK(same(g[1], "prefill", "attn_out", 16384, 8192, 8192));
  CHECK(same(g[2], "prefill", "ffn_gate", 16384, 28672, 8192));
  CHECK(same(g[3], "prefill", "ffn_up", 16384, 28672, 8192));
  CHECK(same(g[4], "prefill", "ffn_down", 16384, 8192, 28672));
  CHECK(same(g[5], "decode", "qkv", 8, 10240, 8192));
  CHECK(same(g[9], "decode", "ffn_down", 8, 8192, 28672));
}

TEST_CASE("tune layer: an ungated model has no gate, the mp8 slice narrows heads and FFN", "[tune]") {
  tune::LayerRequest r;
  r.model = "gpt3-175b-mp8";
  r.batch = 2;
  r.seq = 512;
  r.decode = false;
  const auto g = tune::layer_gemms(r);
  REQUIRE(g.size() == 4);
  // 12 heads of 128 per GPU: QKV out 3 x 1536 = 4608, attention output reads 1536.
  CHECK(same(g[0], "prefill", "qkv", 1024, 4608, 12288));
  CHECK(same(g[1], "prefill", "attn_out", 1024, 12288, 1536));
  CHECK(same(g[2], "prefill", "ffn_up", 1024, 6144, 12288));
  CHECK(same(g[3], "prefill", "ffn_down", 1024, 12288, 6144));
}

TEST_CASE("tune layer: bad requests name the option", "[tune]") {
  tune::LayerRequest r;
  r.model = "llama4";
  CHECK_THROWS_WITH(tune::layer_gemms(r), Contains("--model: unknown model 'llama4'") && Contains("llama3-70b"));
  r.model = "llama3-8b";
  r.seq = 0;
  CHECK_THROWS_WITH(tune::layer_gemms(r), Contains("--seq"));
  r.seq = 1 << 20;
  r.batch = 8;
  CHECK_THROWS_WITH(tune::layer_gemms(r), Contains("4194304"));
}

TEST_CASE("tune layer: gate and up tuned once, a second run is all cache, the total adds up", "[tune][cli]") {
  const fs::path dir = scratch_dir() / "tune_layer";
  fs::remove_all(dir);
  // --layer-top 0: the kernels alone (the layer stage has its own tests, test_layer_stage.cpp).
  const std::string cmd = "tune --model llama3-8b --batch 2 --seq 64 --phase decode --top-fraction 0.05 -j 2 "
                          "--layer-top 0 --cache-dir " + (dir / "cache").string();
  const CliRun first = run_tilesim(cmd + " -o " + (dir / "best").string());
  INFO(first.out);
  REQUIRE(first.code == 0);
  // Five GEMMs, four shapes: ffn_gate and ffn_up are both 2 x 14336 x 4096.
  CHECK_THAT(first.out, Contains("5 GEMMs, 4 distinct shapes tuned"));
  CHECK_THAT(first.out, Contains("[same shape as above: reused]"));
  const std::regex row("\\n  (qkv|attention|attn_out|ffn_gate|ffn_up|ffn_down) +\\S+(?: \\S+ \\S+)? +([0-9.]+) ");
  double sum = 0;
  int rows = 0;
  for (std::sregex_iterator it(first.out.begin(), first.out.end(), row), end; it != end; ++it, ++rows)
    sum += std::stod((*it)[2]);
  CHECK(rows == 6);  // the five GEMMs and the attention core
  std::smatch total;
  REQUIRE(std::regex_search(first.out, total, std::regex("\\n  sum +([0-9.]+) ")));
  CHECK(std::stod(total[1]) == Approx(sum).margin(0.3));  // rows are rounded to 0.1 us
  for (const char* f : {"decode_qkv", "decode_attn_out", "decode_ffn_gate", "decode_ffn_up", "decode_ffn_down"})
    CHECK(fs::exists(dir / "best" / (std::string(f) + ".yaml")));
  // The written best configuration runs as an ordinary experiment.
  const CliRun run = run_tilesim("run " + (dir / "best" / "decode_ffn_up.yaml").string());
  INFO(run.out);
  CHECK(run.code == 0);

  const CliRun again = run_tilesim(cmd);
  INFO(again.out);
  REQUIRE(again.code == 0);
  CHECK_THAT(again.out, Contains(" 0 points simulated"));
  // Same figures from the cache: the layer line is unchanged.
  std::smatch total2;
  REQUIRE(std::regex_search(again.out, total2, std::regex("\\n  sum +([0-9.]+) ")));
  CHECK(total2[1] == total[1]);
}

TEST_CASE("tune layer: --model excludes an experiment and layer options need --model", "[tune][cli]") {
  const CliRun both = run_tilesim("tune x.yaml --model llama3-8b");
  CHECK(both.code != 0);
  CHECK_THAT(both.out, Contains("either an EXPERIMENT.yaml or --model"));
  const CliRun stray = run_tilesim("tune x.yaml --batch 4");
  CHECK(stray.code != 0);
  CHECK_THAT(stray.out, Contains("--batch: only meaningful with --model"));
  CHECK(stray.code == 2);
  const CliRun phase = run_tilesim("tune --model llama3-8b --seq 16 --phase warmup");
  CHECK(phase.code != 0);
  CHECK_THAT(phase.out, Contains("--phase: expected prefill, decode or both"));
}
