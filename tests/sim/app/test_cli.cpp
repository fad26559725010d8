// End-to-end checks through the real binary: exit codes, messages, run == trace + replay,
// determinism across thread counts.
#include <catch2/catch.hpp>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "tests/sim/cli_util.hpp"

using Catch::Matchers::Contains;

namespace {

using Run = tilesim::test::CliRun;
using tilesim::test::slurp;
std::filesystem::path temp_dir() { return tilesim::test::scratch_dir(); }
Run cli(const std::string& args) { return tilesim::test::run_tilesim(args); }

std::filesystem::path write(const std::string& name, const std::string& text) {
  const auto p = temp_dir() / name;
  std::ofstream(p) << text;
  return p;
}

const char* kSmallGemm = R"(name: small
arch: h100
workload: {kind: gemm, m: 1024, n: 1024, k: 1024, dtype: fp16, tile: [128, 128, 64], stages: 3}
order: {kind: grouped, group_m: 4}
)";

}  // namespace

TEST_CASE("cli: a YAML typo is one line naming the key, exit code 2", "[cli]") {
  const auto exp = write("typo.yaml", "workload: {kind: gemm, mm: 5, m: 64, n: 64, k: 64, tile: [64, 64, 64]}\n");
  const Run r = cli("run " + exp.string());
  CHECK(r.code == 2);
  CHECK_THAT(r.out, Contains("workload.mm") && Contains("unknown key"));
  CHECK(std::count(r.out.begin(), r.out.end(), '\n') == 1);
}

TEST_CASE("cli: --set overrides are validated like the file", "[cli]") {
  const auto exp = write("small.yaml", kSmallGemm);
  const Run r = cli("run " + exp.string() + " --set workload.m=-5");
  CHECK(r.code == 2);
  CHECK_THAT(r.out, Contains("workload.m"));
  CHECK(cli("run " + exp.string() + " --set workload.m=512 -q").code == 0);
}

TEST_CASE("cli: run and trace+replay give identical results", "[cli]") {
  const auto exp = write("small.yaml", kSmallGemm);
  const auto dir = temp_dir();
  REQUIRE(cli("run " + exp.string() + " -q --json " + (dir / "run.json").string()).code == 0);
  for (const char* form : {"", " --text"}) {
    REQUIRE(cli("trace " + exp.string() + " -o " + (dir / "t.trace").string() + form).code == 0);
    REQUIRE(cli("replay " + (dir / "t.trace").string() + " -q --json " + (dir / "replay.json").string()).code == 0);
    CHECK(slurp(dir / "run.json") == slurp(dir / "replay.json"));
  }
}

TEST_CASE("cli: a truncated trace is an error with its byte offset", "[cli]") {
  const auto exp = write("small.yaml", kSmallGemm);
  const auto dir = temp_dir();
  REQUIRE(cli("trace " + exp.string() + " -o " + (dir / "t.trace").string()).code == 0);
  std::filesystem::resize_file(dir / "t.trace", std::filesystem::file_size(dir / "t.trace") / 2);
  const Run r = cli("replay " + (dir / "t.trace").string());
  CHECK(r.code == 2);
  CHECK_THAT(r.out, Contains("offset"));
}

TEST_CASE("cli: results are identical at any thread count", "[cli]") {
  const auto exp = write("sweep.yaml", std::string(kSmallGemm) +
                                           "sweep:\n  order: [{kind: row}, {kind: column}, {kind: hilbert}, "
                                           "{kind: swizzle, log_tile: 2}]\n");
  const auto dir = temp_dir();
  REQUIRE(cli("run " + exp.string() + " -q -j1 --json " + (dir / "j1.json").string() + " --csv " +
                  (dir / "j1.csv").string())
              .code == 0);
  REQUIRE(cli("run " + exp.string() + " -q -j2 --json " + (dir / "j2.json").string() + " --csv " +
                  (dir / "j2.csv").string())
              .code == 0);
  REQUIRE(cli("run " + exp.string() + " -q -j2 --json " + (dir / "j2b.json").string()).code == 0);
  CHECK(slurp(dir / "j1.json") == slurp(dir / "j2.json"));
  CHECK(slurp(dir / "j2.json") == slurp(dir / "j2b.json"));
  CHECK(slurp(dir / "j1.csv") == slurp(dir / "j2.csv"));
}

TEST_CASE("cli: unknown commands and missing files are clear errors", "[cli]") {
  CHECK(cli("frobnicate").code == 2);
  const Run r = cli("run /nonexistent/exp.yaml");
  CHECK(r.code == 2);
  CHECK_THAT(r.out, Contains("/nonexistent/exp.yaml") && Contains("cannot open"));
  CHECK(cli("run --help").code == 0);
}

TEST_CASE("cli: a result that cannot be written is an error, not a silent exit 0", "[cli]") {
  const auto exp = write("small_full.yaml", kSmallGemm);
  // A short CSV sits in the stream's buffer until it is closed: the full disk shows only then.
  const Run csv = cli("run " + exp.string() + " --csv /dev/full");
  CHECK(csv.code == 2);
  CHECK_THAT(csv.out, Contains("/dev/full: write failed"));
  // The table on standard output, to a full disk.
  const std::string cmd = std::string(TILESIM_BINARY) + " run " + exp.string() + " > /dev/full 2> " +
                          (temp_dir() / "err.txt").string();
  const int status = std::system(cmd.c_str());
  CHECK(WEXITSTATUS(status) == 2);
  CHECK_THAT(tilesim::test::slurp(temp_dir() / "err.txt"), Contains("writing to standard output failed"));
}

TEST_CASE("cli: a chain's run equals trace + replay with the same simulation options", "[cli]") {
  const auto exp = write("chain.yaml", R"(name: chain
arch: h100
workload: {kind: ffn, d: 256, f: 512, m: 128, gated: false, gemm0: {tile: [64, 128, 64]}, gemm1: {tile: [64, 128, 64]}}
sync: {kind: rowsync}
sim: {launch_gap_ns: 1500, poll_interval_ns: 100}
)");
  const auto dir = temp_dir();
  REQUIRE(cli("run " + exp.string() + " -q --json " + (dir / "run.json").string()).code == 0);
  REQUIRE(cli("trace " + exp.string() + " -o " + (dir / "chain.trace").string()).code == 0);
  REQUIRE(cli("replay " + (dir / "chain.trace").string() + " -q --launch-gap-ns 1500 --poll-interval-ns 100 --json " +
              (dir / "replay.json").string())
              .code == 0);
  CHECK(slurp(dir / "run.json") == slurp(dir / "replay.json"));
  CHECK(cli("replay " + (dir / "chain.trace").string() + " -q --dispatch fastest").code == 2);
}

TEST_CASE("cli: order writes a policy's sequence that `order: {kind: file}` reads back", "[cli]") {
  const auto dir = temp_dir();
  const auto file = dir / "grouped.order";
  REQUIRE(cli("order '{kind: grouped, group_m: 2}' --grid 8x8 -o " + file.string()).code == 0);
  const auto a = write("a.yaml", "workload: {kind: gemm, m: 1024, n: 1024, k: 256, tile: [128, 128, 64]}\n"
                                 "order: {kind: grouped, group_m: 2}\n");
  const auto b = write("b.yaml", "workload: {kind: gemm, m: 1024, n: 1024, k: 256, tile: [128, 128, 64]}\n"
                                 "order: {kind: file, path: " + file.string() + "}\n");
  REQUIRE(cli("run " + a.string() + " -q --json " + (dir / "a.json").string()).code == 0);
  REQUIRE(cli("run " + b.string() + " -q --json " + (dir / "b.json").string()).code == 0);
  // Same dispatch order, same simulation (the experiment names differ: compare the kernels).
  const auto kernels = [&](const std::string& f) {
    const std::string s = slurp(dir / f);
    return s.substr(s.find("\"kernels\""));
  };
  CHECK(kernels("a.json") == kernels("b.json"));
  CHECK(cli("order '{kind: grouped}' --grid 8x8").code == 2);
  CHECK(cli("order '{kind: row}' --grid 8by8").code == 2);
}

TEST_CASE("cli: policies lists every family with descriptions, and a policy may be a {kind:} node (issue 17)", "[cli]") {
  const Run all = cli("policies");
  CHECK(all.code == 0);
  for (const char* family : {"workload", "order", "sync", "replacement", "hash", "dispatch"}) CHECK_THAT(all.out, Contains(family));
  CHECK_THAT(all.out, Contains("srrip") && Contains("round_robin") && Contains("CuSync's RowSync"));
  const Run one = cli("policies hash");
  CHECK(one.code == 0);
  CHECK_THAT(one.out, Contains("xor_fold"));
  CHECK_FALSE(one.out.find("srrip") != std::string::npos);
  const Run bad = cli("policies caches");
  CHECK(bad.code == 2);
  CHECK_THAT(bad.out, Contains("unknown family 'caches'") && Contains("replacement"));

  // Bare names and {kind:} nodes give the same run, bit for bit.
  const auto bare = write("bare.yaml", std::string(kSmallGemm) +
                                           "arch_overrides: {l2: {replacement: srrip, hash: modulo}}\n"
                                           "sim: {dispatch: round_robin}\n");
  const auto node = write("node.yaml", std::string(kSmallGemm) +
                                           "arch_overrides: {l2: {replacement: {kind: srrip}, hash: {kind: modulo}}}\n"
                                           "sim: {dispatch: {kind: round_robin}}\n");
  const Run rb = cli("run " + bare.string() + " --json " + (temp_dir() / "bare.json").string() + " -q");
  const Run rn = cli("run " + node.string() + " --json " + (temp_dir() / "node.json").string() + " -q");
  REQUIRE(rb.code == 0);
  REQUIRE(rn.code == 0);
  CHECK(tilesim::test::run_json_total(temp_dir() / "bare.json") == tilesim::test::run_json_total(temp_dir() / "node.json"));

  // A typo inside a node is caught by --dry-run, with the file, the key and the choices.
  const auto typo = write("typo_kind.yaml", std::string(kSmallGemm) + "sim: {dispatch: {kind: round}}\n");
  const Run rt = cli("run " + typo.string() + " --dry-run");
  CHECK(rt.code == 2);
  CHECK_THAT(rt.out, Contains("typo_kind.yaml") && Contains("sim.dispatch.kind") && Contains("oldest_kernel, round_robin"));
  const auto extra = write("extra_key.yaml", std::string(kSmallGemm) + "arch_overrides: {l2: {replacement: {kind: lru, ways: 2}}}\n");
  const Run re = cli("run " + extra.string() + " --dry-run");
  CHECK(re.code == 2);
  CHECK_THAT(re.out, Contains("extra_key.yaml") && Contains("l2.replacement.ways") && Contains("unknown key"));
}

TEST_CASE("cli: a layer's run equals trace + replay, views and intermediate reads included", "[cli][layer]") {
  const auto exp = write("layer.yaml", R"(name: layer
arch: h100
workload: {kind: layer, d: 256, f: 512, heads: 4, kv_heads: 2, head_dim: 64, phase: decode, batch: 4, context: 200}
sync: {attention_out_proj: {kind: rowsync}, ffn: {kind: tilesync}}
sim: {launch_gap_ns: 1500, poll_interval_ns: 100}
)");
  const auto dir = temp_dir();
  REQUIRE(cli("run " + exp.string() + " -q --json " + (dir / "layer_run.json").string()).code == 0);
  REQUIRE(cli("trace " + exp.string() + " -o " + (dir / "layer.trace").string()).code == 0);
  REQUIRE(cli("replay " + (dir / "layer.trace").string() + " -q --launch-gap-ns 1500 --poll-interval-ns 100 --json " +
              (dir / "layer_replay.json").string())
              .code == 0);
  CHECK(slurp(dir / "layer_run.json") == slurp(dir / "layer_replay.json"));
  const auto total = tilesim::test::run_json_total(dir / "layer_run.json");
  REQUIRE(total.at("intermediate_reads").size() == 7);
  CHECK(total.at("intermediate_reads")[0].at("tensor") == "L0.Q");
  CHECK(total.at("intermediate_reads")[0].at("storage") == "L0.QKV");
  CHECK(total.at("intermediates").size() == 4);
  // A boundary a policy cannot serve is one line naming the key, exit code 2.
  const auto bad = write("layer_bad.yaml", R"(arch: h100
workload: {kind: layer, d: 256, f: 512, heads: 4, head_dim: 64, seq: 128}
sync: {attention_out_proj: {kind: dataflow}}
)");
  const Run r = cli("run " + bad.string());
  CHECK(r.code == 2);
  CHECK_THAT(r.out, Contains("layer_bad.yaml") && Contains("sync.attention_out_proj.kind"));
}
