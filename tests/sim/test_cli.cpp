// End-to-end checks through the real binary: exit codes, messages, run == trace + replay,
// determinism across thread counts.
#include <catch2/catch.hpp>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

using Catch::Matchers::Contains;

namespace {

struct Run {
  int code;
  std::string out;
};

std::filesystem::path temp_dir() {
  auto d = std::filesystem::temp_directory_path() / ("tilesim_cli_" + std::to_string(::getpid()));
  std::filesystem::create_directories(d);
  return d;
}

std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

Run tilesim(const std::string& args) {
  const auto out = temp_dir() / "out.txt";
  const std::string cmd = std::string(TILESIM_BINARY) + " " + args + " > " + out.string() + " 2>&1";
  const int status = std::system(cmd.c_str());
  return {WEXITSTATUS(status), slurp(out)};
}

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
  const Run r = tilesim("run " + exp.string());
  CHECK(r.code == 2);
  CHECK_THAT(r.out, Contains("workload.mm") && Contains("unknown key"));
  CHECK(std::count(r.out.begin(), r.out.end(), '\n') == 1);
}

TEST_CASE("cli: --set overrides are validated like the file", "[cli]") {
  const auto exp = write("small.yaml", kSmallGemm);
  const Run r = tilesim("run " + exp.string() + " --set workload.m=-5");
  CHECK(r.code == 2);
  CHECK_THAT(r.out, Contains("workload.m"));
  CHECK(tilesim("run " + exp.string() + " --set workload.m=512 -q").code == 0);
}

TEST_CASE("cli: run and trace+replay give identical results", "[cli]") {
  const auto exp = write("small.yaml", kSmallGemm);
  const auto dir = temp_dir();
  REQUIRE(tilesim("run " + exp.string() + " -q --json " + (dir / "run.json").string()).code == 0);
  for (const char* form : {"", " --text"}) {
    REQUIRE(tilesim("trace " + exp.string() + " -o " + (dir / "t.trace").string() + form).code == 0);
    REQUIRE(tilesim("replay " + (dir / "t.trace").string() + " -q --json " + (dir / "replay.json").string()).code == 0);
    CHECK(slurp(dir / "run.json") == slurp(dir / "replay.json"));
  }
}

TEST_CASE("cli: a truncated trace is an error with its byte offset", "[cli]") {
  const auto exp = write("small.yaml", kSmallGemm);
  const auto dir = temp_dir();
  REQUIRE(tilesim("trace " + exp.string() + " -o " + (dir / "t.trace").string()).code == 0);
  std::filesystem::resize_file(dir / "t.trace", std::filesystem::file_size(dir / "t.trace") / 2);
  const Run r = tilesim("replay " + (dir / "t.trace").string());
  CHECK(r.code == 2);
  CHECK_THAT(r.out, Contains("offset"));
}

TEST_CASE("cli: results are identical at any thread count", "[cli]") {
  const auto exp = write("sweep.yaml", std::string(kSmallGemm) +
                                           "sweep:\n  order: [{kind: row}, {kind: column}, {kind: hilbert}, "
                                           "{kind: swizzle, log_tile: 2}]\n");
  const auto dir = temp_dir();
  REQUIRE(tilesim("run " + exp.string() + " -q -j1 --json " + (dir / "j1.json").string() + " --csv " +
                  (dir / "j1.csv").string())
              .code == 0);
  REQUIRE(tilesim("run " + exp.string() + " -q -j2 --json " + (dir / "j2.json").string() + " --csv " +
                  (dir / "j2.csv").string())
              .code == 0);
  REQUIRE(tilesim("run " + exp.string() + " -q -j2 --json " + (dir / "j2b.json").string()).code == 0);
  CHECK(slurp(dir / "j1.json") == slurp(dir / "j2.json"));
  CHECK(slurp(dir / "j2.json") == slurp(dir / "j2b.json"));
  CHECK(slurp(dir / "j1.csv") == slurp(dir / "j2.csv"));
}

TEST_CASE("cli: unknown commands and missing files are clear errors", "[cli]") {
  CHECK(tilesim("frobnicate").code == 2);
  const Run r = tilesim("run /nonexistent/exp.yaml");
  CHECK(r.code == 2);
  CHECK_THAT(r.out, Contains("/nonexistent/exp.yaml") && Contains("cannot open"));
  CHECK(tilesim("run --help").code == 0);
}
