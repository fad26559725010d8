// `--timeline` through the real binary: format by file extension, one point only.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <unistd.h>

#include "../cli_util.hpp"

using Catch::Matchers::Contains;

namespace {

std::filesystem::path dir() { return tilesim::test::scratch_dir(); }
using tilesim::test::slurp;
std::pair<int, std::string> cli(const std::string& args) {
  const auto r = tilesim::test::run_tilesim(args);
  return {r.code, r.out};
}

const char* kGemm = R"(name: small
arch: h100
workload: {kind: gemm, m: 512, n: 512, k: 256, dtype: fp16, tile: [128, 128, 64], stages: 3}
)";

}  // namespace

TEST_CASE("cli --timeline: trace JSON or CSV by extension, for run and replay", "[report][cli]") {
  const auto exp = dir() / "small.yaml";
  std::ofstream(exp) << kGemm;
  const auto json = dir() / "t.json", csv = dir() / "t.csv", trace = dir() / "small.trace";
  auto r = cli("run " + exp.string() + " -q --timeline " + json.string());
  REQUIRE(r.first == 0);
  const nlohmann::json j = nlohmann::json::parse(slurp(json));
  CHECK(j.contains("traceEvents"));
  r = cli("run " + exp.string() + " -q --timeline " + csv.string());
  REQUIRE(r.first == 0);
  CHECK(slurp(csv).rfind("kernel_index,kernel,block,position,sm,start_ns,end_ns,wait_ns\n", 0) == 0);

  REQUIRE(cli("trace " + exp.string() + " -o " + trace.string()).first == 0);
  const auto replay_csv = dir() / "r.csv";
  r = cli("replay " + trace.string() + " -q --timeline " + replay_csv.string());
  REQUIRE(r.first == 0);
  CHECK(slurp(replay_csv) == slurp(csv));  // run == trace + replay, block for block
}

TEST_CASE("cli --timeline: a sweep of several points is refused before simulating", "[report][cli]") {
  const auto exp = dir() / "sweep.yaml";
  std::ofstream(exp) << kGemm << "sweep: {order: [{kind: row}, {kind: column}]}\n";
  const auto r = cli("run " + exp.string() + " --timeline " + (dir() / "t.json").string());
  CHECK(r.first == 2);
  CHECK_THAT(r.second, Contains("--timeline") && Contains("2 points") && Contains("--set 'sweep={}'"));
  // Narrowed to one point, it is accepted.
  CHECK(cli("run " + exp.string() + " -q --set 'sweep={}' --timeline " + (dir() / "one.csv").string()).first == 0);
}
