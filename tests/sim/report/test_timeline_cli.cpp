// `--timeline` through the real binary: format by file extension, one point only.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <unistd.h>

using Catch::Matchers::Contains;

namespace {

std::filesystem::path dir() {
  auto d = std::filesystem::temp_directory_path() / ("tilesim_timeline_" + std::to_string(::getpid()));
  std::filesystem::create_directories(d);
  return d;
}

std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::pair<int, std::string> tilesim(const std::string& args) {
  const auto out = dir() / "out.txt";
  const int status = std::system((std::string(TILESIM_BINARY) + " " + args + " > " + out.string() + " 2>&1").c_str());
  return {WEXITSTATUS(status), slurp(out)};
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
  auto r = tilesim("run " + exp.string() + " -q --timeline " + json.string());
  REQUIRE(r.first == 0);
  const nlohmann::json j = nlohmann::json::parse(slurp(json));
  CHECK(j.contains("traceEvents"));
  r = tilesim("run " + exp.string() + " -q --timeline " + csv.string());
  REQUIRE(r.first == 0);
  CHECK(slurp(csv).rfind("kernel_index,kernel,block,position,sm,start_ns,end_ns,wait_ns\n", 0) == 0);

  REQUIRE(tilesim("trace " + exp.string() + " -o " + trace.string()).first == 0);
  const auto replay_csv = dir() / "r.csv";
  r = tilesim("replay " + trace.string() + " -q --timeline " + replay_csv.string());
  REQUIRE(r.first == 0);
  CHECK(slurp(replay_csv) == slurp(csv));  // run == trace + replay, block for block
}

TEST_CASE("cli --timeline: a sweep of several points is refused before simulating", "[report][cli]") {
  const auto exp = dir() / "sweep.yaml";
  std::ofstream(exp) << kGemm << "sweep: {order: [{kind: row}, {kind: column}]}\n";
  const auto r = tilesim("run " + exp.string() + " --timeline " + (dir() / "t.json").string());
  CHECK(r.first == 2);
  CHECK_THAT(r.second, Contains("--timeline") && Contains("2 points") && Contains("--set 'sweep={}'"));
  // Narrowed to one point, it is accepted.
  CHECK(tilesim("run " + exp.string() + " -q --set 'sweep={}' --timeline " + (dir() / "one.csv").string()).first == 0);
}
