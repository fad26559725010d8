// `tilesim run SWEEP -o DIR`: identical results at any -j, a folder that resumes after a kill
// or a cut line, and clear errors for a folder that is not a sweep's.
#include <catch2/catch.hpp>
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "tests/sim/cli_util.hpp"

using namespace tilesim::test;
using Catch::Matchers::Contains;
namespace fs = std::filesystem;

namespace {

// 24 small points: 2 shapes x 3 L2 sizes x 4 orders, compared against row order.
const char* kSweep = R"(name: runner-test
workload: {kind: gemm, m: 1024, n: 1024, k: 512, dtype: fp16, tile: [128, 128, 64], stages: 3, blocks_per_sm: 2}
sweep:
  workload.m: [1024, 2048]
  arch_overrides.l2.bytes: [4194304, 8388608, 16777216]
  order: [{kind: row}, {kind: column}, {kind: grouped, group_m: 4}, {kind: hilbert}]
  baseline: {order: row}
)";

fs::path write_sweep(const std::string& name, const std::string& text = kSweep) {
  const fs::path p = scratch_dir() / name;
  std::ofstream(p) << text;
  return p;
}

std::vector<std::string> read_lines(const fs::path& p) {
  std::vector<std::string> lines;
  std::ifstream in(p);
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  return lines;
}

void write_lines(const fs::path& p, const std::vector<std::string>& lines) {
  std::ofstream out(p);
  for (const auto& l : lines) out << l << "\n";
}

// Finished lines only: a kill -9 mid-write leaves a last line without its newline, and the
// runner drops it on resume, so counting it would expect one point too many.
std::size_t lines_of(const fs::path& p) {
  const std::string s = slurp(p);
  std::size_t n = 0, start = 0;
  for (std::size_t nl = s.find('\n'); nl != std::string::npos; start = nl + 1, nl = s.find('\n', start))
    n += nl > start;
  return n;
}

}  // namespace

TEST_CASE("sweep runner: the same folder contents and table at -j1 and -j2", "[sweep][cli]") {
  const fs::path exp = write_sweep("runner_j.yaml");
  const fs::path d1 = scratch_dir() / "runner_j1", d2 = scratch_dir() / "runner_j2";
  fs::remove_all(d1);
  fs::remove_all(d2);
  const CliRun r1 = run_tilesim("run " + exp.string() + " -j 1 -o " + d1.string());
  const CliRun r2 = run_tilesim("run " + exp.string() + " -j 2 -o " + d2.string());
  REQUIRE(r1.code == 0);
  REQUIRE(r2.code == 0);
  CHECK(r1.out == r2.out);
  for (const char* f : {"summary.json", "summary.csv", "kernels.csv", "experiment.yaml"})
    CHECK(slurp(d1 / f) == slurp(d2 / f));
  CHECK(lines_of(d1 / "results.jsonl") == 24);
  CHECK_THAT(r1.out, Contains("comparison of order against row") && Contains("speedup over row"));

  const auto s = nlohmann::json::parse(slurp(d1 / "summary.json"));
  REQUIRE(s["points"].size() == 24);
  CHECK(s["compare"]["keys"] == nlohmann::json::array({"order"}));
  CHECK(s["groups"].size() == 6);
  for (const auto& g : s["groups"]) {
    const double base = s["points"][g["baseline"].get<std::size_t>()]["result"]["total"]["duration_ns"];
    double last = 0;
    for (const auto& i : g["points"]) {  // fastest first, speedup = baseline time / time
      const auto& p = s["points"][i.get<std::size_t>()];
      const double t = p["result"]["total"]["duration_ns"];
      CHECK(t >= last);
      last = t;
      CHECK(p["comparison"]["speedup"].get<double>() == Approx(base / t));
    }
  }
  // The summary repeats what --json writes for the same sweep.
  const fs::path js = scratch_dir() / "runner_j.json";
  REQUIRE(run_tilesim("run " + exp.string() + " -q --json " + js.string()).code == 0);
  const auto j = nlohmann::json::parse(slurp(js));
  for (std::size_t i = 0; i < 24; ++i) CHECK(j["points"][i] == s["points"][i]["result"]);
}

TEST_CASE("sweep runner: a killed sweep resumes and runs only the missing points", "[sweep][cli]") {
  const fs::path exp = write_sweep("runner_kill.yaml");
  const fs::path full = scratch_dir() / "runner_full", part = scratch_dir() / "runner_part";
  fs::remove_all(full);
  fs::remove_all(part);
  REQUIRE(run_tilesim("run " + exp.string() + " -q -j 1 -o " + full.string()).code == 0);

  // Start it, wait for a few finished points, kill it hard.
  const std::string cmd = "bash -c '" + std::string(TILESIM_BINARY) + " run " + exp.string() + " -q -j 1 -o " +
                          part.string() + " & pid=$!; for i in $(seq 1 400); do n=$(grep -c . " + part.string() +
                          "/results.jsonl 2>/dev/null); [ \"${n:-0}\" -ge 3 ] && break; sleep 0.02; done; kill -9 $pid; wait $pid'";
  (void)std::system(cmd.c_str());
  const std::size_t before = lines_of(part / "results.jsonl");
  REQUIRE(before >= 3);
  REQUIRE(before < 24);  // killed halfway, not after the end
  // Whether or not the kill cut a line, append half a line as a kill mid-write would leave.
  std::ofstream(part / "results.jsonl", std::ios::app) << "{\"index\": 7, \"hash\": \"abc";
  CHECK_FALSE(fs::exists(part / "summary.json"));

  const CliRun again = run_tilesim("run " + exp.string() + " -q -v -j 2 -o " + part.string());
  REQUIRE(again.code == 0);
  CHECK_THAT(again.out, Contains("dropping an unfinished last line"));
  CHECK_THAT(again.out, Contains(std::to_string(before) + " of 24 point(s) already finished"));
  CHECK(lines_of(part / "results.jsonl") == 24);  // nothing ran twice
  CHECK(slurp(part / "summary.json") == slurp(full / "summary.json"));

  // A third run finds everything finished and changes nothing.
  const CliRun third = run_tilesim("run " + exp.string() + " -q -v -o " + part.string());
  CHECK_THAT(third.out, Contains("24 of 24 point(s) already finished in"));
  CHECK(lines_of(part / "results.jsonl") == 24);
}

TEST_CASE("sweep runner: a changed point reruns, a foreign results file is refused", "[sweep][cli]") {
  const fs::path exp = write_sweep("runner_change.yaml");
  const fs::path d = scratch_dir() / "runner_change";
  fs::remove_all(d);
  REQUIRE(run_tilesim("run " + exp.string() + " -q -o " + d.string()).code == 0);
  // Another L2 size for one axis value: the points with it are new, the rest resume.
  const CliRun r = run_tilesim("run " + exp.string() + " -q -v -o " + d.string() +
                               " --set 'sweep.arch_overrides\\.l2\\.bytes=[4194304, 8388608, 33554432]'");
  INFO(r.out);
  REQUIRE(r.code == 0);
  CHECK_THAT(r.out, Contains("16 of 24 point(s) already finished"));

  const fs::path bad = scratch_dir() / "runner_bad";
  fs::remove_all(bad);
  fs::create_directories(bad);
  std::ofstream(bad / "results.jsonl") << "{\"hash\": \"x\", \"result\": {}}\nnot json\n";
  const CliRun e = run_tilesim("run " + exp.string() + " -q -o " + bad.string());
  CHECK(e.code == 2);
  CHECK_THAT(e.out, Contains("results.jsonl:1: a field of its result is missing") &&
                        Contains("no line of the file is a point of a tilesim sweep"));
  CHECK_FALSE(fs::exists(bad / "results.jsonl.damaged"));  // left alone
}

TEST_CASE("sweep runner: a damaged, edited or repeated line is set aside and its point reruns (issue 17, D5)",
          "[sweep][cli]") {
  const fs::path exp = write_sweep("runner_damaged.yaml");
  const fs::path full = scratch_dir() / "runner_damaged_full";
  fs::remove_all(full);
  REQUIRE(run_tilesim("run " + exp.string() + " -q -o " + full.string()).code == 0);
  const std::vector<std::string> lines = read_lines(full / "results.jsonl");
  REQUIRE(lines.size() == 24);
  // Line 3 cut in the middle, line 5 without a kernel's l2 figures, line 7 with a negative
  // duration, and line 1 again at the end.
  std::vector<std::string> damaged = lines;
  damaged[2] = damaged[2].substr(0, 40);
  auto j5 = nlohmann::json::parse(damaged[4]);
  j5["result"]["kernels"][0].erase("l2");
  damaged[4] = j5.dump();
  auto j7 = nlohmann::json::parse(damaged[6]);
  j7["result"]["total"]["duration_ns"] = -5.0;
  damaged[6] = j7.dump();
  damaged.push_back(lines[0]);
  const fs::path d = scratch_dir() / "runner_damaged";
  fs::remove_all(d);
  fs::create_directories(d);
  write_lines(d / "results.jsonl", damaged);
  const CliRun r = run_tilesim("run " + exp.string() + " -q -v -o " + d.string());
  INFO(r.out);
  REQUIRE(r.code == 0);
  CHECK_THAT(r.out, Contains("results.jsonl:3: not a point of a tilesim sweep"));
  CHECK_THAT(r.out, Contains("results.jsonl:5: a field of its result is missing or mistyped") && Contains("'l2'"));
  CHECK_THAT(r.out, Contains("results.jsonl:7: result.total.duration_ns is -5.0, not a finite figure >= 0"));
  CHECK_THAT(r.out, Contains("results.jsonl:25: the same point as line 1, which is kept"));
  CHECK_THAT(r.out, Contains("21 of 24 point(s) already finished"));
  // The four lines moved aside, nothing lost; the folder is whole and gives what a clean run gives.
  CHECK(lines_of(d / "results.jsonl.damaged") == 4);
  CHECK(lines_of(d / "results.jsonl") == 24);
  CHECK(slurp(d / "summary.csv") == slurp(full / "summary.csv"));
  CHECK(slurp(d / "kernels.csv") == slurp(full / "kernels.csv"));
  // And now it resumes without a word about damage.
  const CliRun again = run_tilesim("run " + exp.string() + " -q -v -o " + d.string());
  CHECK_THAT(again.out, Contains("24 of 24 point(s) already finished"));
  CHECK_THAT(again.out, !Contains("set aside"));
}

TEST_CASE("sweep runner: --dry-run validates and lists the points", "[sweep][cli]") {
  const fs::path exp = write_sweep("runner_dry.yaml");
  const CliRun r = run_tilesim("run " + exp.string() + " --dry-run");
  REQUIRE(r.code == 0);
  CHECK_THAT(r.out, Contains("points: 24") && Contains("23  ") && Contains("workload.m=2048 arch_overrides.l2.bytes=16777216 order=hilbert"));
  const CliRun bad = run_tilesim("run " + exp.string() + " --dry-run --set 'sweep.workload\\.m=[1024, 100000000000]'");
  CHECK(bad.code == 2);
  CHECK_THAT(bad.out, Contains("[sweep point workload.m=100000000000"));
}

TEST_CASE("sweep runner: a point that would deadlock is named before anything runs", "[sweep][cli]") {
  const fs::path root = fs::path(TILESIM_TEST_DIR).parent_path();
  const fs::path d = scratch_dir() / "runner_deadlock";
  fs::remove_all(d);
  const CliRun r = run_tilesim("run " + (root / "experiments/ffn_bad_dataflow.yaml").string() +
                               " --set 'sweep={sim.seed: [1, 2]}' -o " + d.string());
  CHECK(r.code == 3);
  CHECK_THAT(r.out, Contains("ffn_bad_dataflow.yaml [sweep point sim.seed=1]: kernel 'dataflow'"));
  CHECK_FALSE(fs::exists(d / "results.jsonl"));  // stopped in validation: nothing ran
}

TEST_CASE("sweep runner: a folder another sweep is writing is refused (issue 17, the folder lock)", "[sweep][cli]") {
  const fs::path exp = write_sweep("runner_lock.yaml");
  const fs::path d = scratch_dir() / "runner_lock";
  fs::remove_all(d);
  fs::create_directories(d);
  // This process plays the other sweep: it holds the folder's lock as a running sweep does.
  const int fd = ::open((d / ".lock").c_str(), O_RDWR | O_CREAT, 0644);
  REQUIRE(fd >= 0);
  REQUIRE(::flock(fd, LOCK_EX | LOCK_NB) == 0);
  const CliRun busy = run_tilesim("run " + exp.string() + " -q -o " + d.string());
  CHECK(busy.code == 2);
  CHECK_THAT(busy.out, Contains("another tilesim is writing this folder now"));
  CHECK_FALSE(fs::exists(d / "results.jsonl"));  // it wrote nothing
  ::close(fd);  // the other sweep ends: the folder is free
  const CliRun free = run_tilesim("run " + exp.string() + " -q -o " + d.string());
  CHECK(free.code == 0);
  CHECK(lines_of(d / "results.jsonl") == 24);
}

TEST_CASE("sweep runner: a resumed result missing a kernel's grid or dram is set aside, not read past (issue 17, fuzzing)",
          "[sweep]") {
  // Found by fuzz_results_jsonl: the kernels CSV printer indexed k["dram"] and k["grid"] on a
  // const object, which reads freed memory when the key is absent; it now uses at(), so the
  // resume check sees the missing field.
  const fs::path exp = write_sweep("runner_fuzz.yaml");
  const fs::path d = scratch_dir() / "runner_fuzz";
  fs::remove_all(d);
  REQUIRE(run_tilesim("run " + exp.string() + " -q -o " + d.string()).code == 0);
  std::vector<std::string> lines = read_lines(d / "results.jsonl");
  auto j = nlohmann::json::parse(lines[0]);
  j["result"]["kernels"][0].erase("dram");
  lines[0] = j.dump();
  auto g = nlohmann::json::parse(lines[1]);
  g["result"]["kernels"][0].erase("grid");
  lines[1] = g.dump();
  write_lines(d / "results.jsonl", lines);
  const CliRun r = run_tilesim("run " + exp.string() + " -q -v -o " + d.string());
  REQUIRE(r.code == 0);
  CHECK_THAT(r.out, Contains("results.jsonl:1: a field of its result is missing") && Contains("'dram'"));
  CHECK_THAT(r.out, Contains("results.jsonl:2: a field of its result is missing") && Contains("'grid'"));
  CHECK_THAT(r.out, Contains("22 of 24 point(s) already finished"));
}

TEST_CASE("sweep runner: kernels.csv joins summary.csv by point index and hash (issue 16)", "[sweep][cli]") {
  const fs::path exp = write_sweep("runner_join.yaml");
  const fs::path d = scratch_dir() / "runner_join";
  fs::remove_all(d);
  REQUIRE(run_tilesim("run " + exp.string() + " -q -o " + d.string()).code == 0);
  const std::vector<std::string> kernels = read_lines(d / "kernels.csv"), summary = read_lines(d / "summary.csv");
  REQUIRE(kernels.size() == 25);  // header + 24 points of one kernel
  CHECK(kernels[0].substr(kernels[0].size() - 23) == ",point_index,point_hash");
  // Every kernel row ends with an index and hash that summary.csv has on one row.
  for (std::size_t i = 1; i < kernels.size(); ++i) {
    const std::string& row = kernels[i];
    const std::string hash = row.substr(row.rfind(',') + 1);
    const std::string rest = row.substr(0, row.rfind(','));
    const std::string index = rest.substr(rest.rfind(',') + 1);
    std::size_t found = 0;
    for (const auto& s : summary) found += s.rfind(index + "," + hash + ",", 0) == 0;
    CHECK(found == 1);
  }
}
