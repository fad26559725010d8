// `tilesim validate` through the binary: the table, --json, and exit code 4 on a missed target.
#include <catch2/catch.hpp>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "tests/sim/cli_util.hpp"

using Catch::Matchers::Contains;

TEST_CASE("cli: validate compares, writes JSON and exits 4 when a target is missed", "[validate][cli]") {
  namespace fs = std::filesystem;
  const fs::path dir = tilesim::test::scratch_dir() / "vcli";
  fs::create_directories(dir);
  std::ofstream(dir / "g.yaml") << "name: g_row\narch: h100\n"
                                   "workload: {kind: gemm, m: 1024, n: 1024, k: 512, tile: [128, 128, 32]}\n";
  // Made-up measurements: 50% hits, 10 MB read, 4 MB written, 100 us.
  std::ofstream(dir / "m.csv") << "case,lts__t_sector_hit_rate.pct,lts__t_sectors_op_read.sum,lts__t_sectors_op_write.sum,"
                                  "dram__bytes_read.sum,dram__bytes_write.sum,median_us\n"
                                  "g_row,50,1000,10,10000000,4000000,100\n";
  const std::string base = "validate -m " + (dir / "m.csv").string() + " -e " + (dir / "g.yaml").string();
  auto r = tilesim::test::run_tilesim(base + " --json " + (dir / "v.json").string());
  REQUIRE(r.code == 0);
  REQUIRE_THAT(r.out, Contains("g_row"));
  REQUIRE_THAT(r.out, Contains("validation (1 cases)"));
  REQUIRE_THAT(tilesim::test::slurp(dir / "v.json"), Contains("\"dram_read_mape_pct\""));
  REQUIRE_THAT(r.out, !Contains("L2 read lookups MAPE"));  // the CSV has no lts__t_sectors_srcunit_tex_op_read
  // With it: the SMs' read lookups compared (1 measured: far below what the GEMM looks up).
  std::ofstream(dir / "mt.csv") << "case,lts__t_sector_hit_rate.pct,lts__t_sectors_op_read.sum,lts__t_sectors_op_write.sum,"
                                   "dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_srcunit_tex_op_read.sum,median_us\n"
                                   "g_row,50,1000,10,10000000,4000000,1,100\n";
  r = tilesim::test::run_tilesim("validate -m " + (dir / "mt.csv").string() + " -e " + (dir / "g.yaml").string() +
                                 " --json " + (dir / "vt.json").string());
  REQUIRE(r.code == 0);
  REQUIRE_THAT(r.out, Contains("L2 read lookups MAPE"));
  const auto vt = nlohmann::json::parse(tilesim::test::slurp(dir / "vt.json"));
  REQUIRE(vt["cases"][0]["measured"]["l2_read_lookups"].get<double>() == 1.0);
  REQUIRE(vt["cases"][0]["simulated"]["l2_read_lookups"].get<double>() > 1000.0);
  REQUIRE(vt["aggregate"]["validation"]["l2_lookups_mape_pct"].get<double>() > 1000.0);
  r = tilesim::test::run_tilesim(base + " --max-dram-mape 0.001");
  REQUIRE(r.code == 4);
  REQUIRE_THAT(r.out, Contains("target missed") && Contains("DRAM read MAPE"));
  r = tilesim::test::run_tilesim(base + " --max-dram-mape 1e9");
  REQUIRE(r.code == 0);
  REQUIRE_THAT(r.out, Contains("all targets met"));
  // An experiment with no measured case is an error naming it.
  std::ofstream(dir / "h.yaml") << "name: h_row\narch: h100\n"
                                   "workload: {kind: gemm, m: 1024, n: 1024, k: 512, tile: [128, 128, 32]}\n";
  r = tilesim::test::run_tilesim("validate -m " + (dir / "m.csv").string() + " -e " + (dir / "h.yaml").string());
  REQUIRE(r.code == 2);
  REQUIRE_THAT(r.out, Contains("h.yaml") && Contains("no measured case 'h_row'"));
}

TEST_CASE("cli: validate simulates an ncu-timed case at the SM clock the profiler recorded", "[validate][cli]") {
  namespace fs = std::filesystem;
  const fs::path dir = tilesim::test::scratch_dir() / "vclock";
  fs::create_directories(dir);
  // A compute-bound GEMM: its time follows the SM clock.
  std::ofstream(dir / "g.yaml") << "name: g_clk\narch: h100\n"
                                   "workload: {kind: gemm, m: 2048, n: 2048, k: 2048, tile: [128, 128, 64]}\n";
  const std::string metrics = "case,lts__t_sector_hit_rate.pct,lts__t_sectors_op_read.sum,lts__t_sectors_op_write.sum,"
                              "dram__bytes_read.sum,dram__bytes_write.sum,gpu__time_duration.sum";
  // Timed by the profiler at a locked 990 MHz (half the boost clock): simulated at 990 MHz.
  std::ofstream(dir / "ncu.csv") << metrics << ",sm__cycles_elapsed.avg.per_second\n"
                                 << "g_clk,50,1000,10,10000000,4000000,100000,990000000\n";
  // The same without the clock column, and the same with an event time: the arch's clock.
  std::ofstream(dir / "noclock.csv") << metrics << "\ng_clk,50,1000,10,10000000,4000000,100000\n";
  std::ofstream(dir / "events.csv") << metrics << ",sm__cycles_elapsed.avg.per_second,median_us\n"
                                    << "g_clk,50,1000,10,10000000,4000000,100000,990000000,100\n";
  const auto run = [&](const std::string& csv, const std::string& extra) {
    const fs::path json = dir / (csv + std::to_string(extra.size()) + ".json");
    const auto r = tilesim::test::run_tilesim("validate -q -m " + (dir / csv).string() + " -e " + (dir / "g.yaml").string() +
                                              " --json " + json.string() + extra);
    REQUIRE(r.code == 0);
    return std::make_pair(r.out, nlohmann::json::parse(tilesim::test::slurp(json)).at("cases").at(0));
  };
  const auto [out, locked] = run("ncu.csv", "");
  CHECK(locked.at("clock_source") == "measured");
  CHECK(locked.at("simulated_clock_mhz").get<double>() == Approx(990));
  CHECK(locked.at("measured_clock_mhz").get<double>() == Approx(990));
  CHECK_THAT(out, Contains("1 of 1 cases simulated at the SM clock Nsight Compute recorded"));
  const auto [out_model, model] = run("ncu.csv", " --clock model");
  CHECK(model.at("clock_source") == "model");
  CHECK(model.at("simulated_clock_mhz").get<double>() > 1000);
  CHECK_FALSE(out_model.find("recorded") != std::string::npos);
  // Half the clock: a compute-bound kernel takes well over 1.5x as long.
  CHECK(locked.at("simulated").at("duration_ns").get<double>() > 1.5 * model.at("simulated").at("duration_ns").get<double>());
  CHECK(run("noclock.csv", "").second.at("clock_source") == "model");
  const auto [out_events, events] = run("events.csv", "");
  CHECK(events.at("duration_source") == "events");
  CHECK(events.at("clock_source") == "model");
  // Its counters were the profiler's, at 990 MHz: simulated apart at that clock; the duration
  // (events) at the arch's. With --clock model, one simulation: no counters clock.
  CHECK(events.at("counters_clock_mhz").get<double>() == Approx(990));
  CHECK(events.at("simulated_clock_mhz").get<double>() > 1000);
  CHECK_THAT(out_events, Contains("1 of 1 event-timed cases had their Nsight Compute counters simulated apart"));
  CHECK(run("events.csv", " --clock model").second.at("counters_clock_mhz").is_null());
  CHECK(locked.at("counters_clock_mhz").is_null());  // ncu-timed: one simulation at 990 MHz already
  // A clock no GPU runs at is an error naming the file and the metric.
  std::ofstream(dir / "badclock.csv") << metrics << ",sm__cycles_elapsed.avg.per_second\n"
                                      << "g_clk,50,1000,10,10000000,4000000,100000,990\n";
  const auto absurd = tilesim::test::run_tilesim("validate -m " + (dir / "badclock.csv").string() + " -e " +
                                                 (dir / "g.yaml").string());
  CHECK(absurd.code == 2);
  CHECK_THAT(absurd.out, Contains("badclock.csv") && Contains("sm__cycles_elapsed.avg.per_second"));
  const auto bad = tilesim::test::run_tilesim("validate -m " + (dir / "ncu.csv").string() + " -e " + (dir / "g.yaml").string() +
                                              " --clock fixed");
  CHECK(bad.code == 2);
  CHECK_THAT(bad.out, Contains("--clock: expected auto or model"));
}

TEST_CASE("cli: event times taken after do_bench's flush are simulated from the L2 it leaves", "[validate][cli]") {
  namespace fs = std::filesystem;
  const fs::path dir = tilesim::test::scratch_dir() / "vflush";
  fs::create_directories(dir);
  // A decode GEMM: it reads 33.6 MB, most of the L2, so it evicts most of the flush's dirty lines.
  const std::string wl = "arch: h100\nworkload: {kind: gemm, m: 16, n: 4096, k: 4096, tile: [64, 64, 64]}\n"
                         "order: {kind: column}\nsim: {cold_l2: kernel}\n";
  std::ofstream(dir / "plain.yaml") << "name: d\n" << wl;
  std::ofstream(dir / "flushed.yaml") << "name: d\n" << wl << "validate: {events_after: write_flush}\n";
  const std::string metrics = "case,lts__t_sector_hit_rate.pct,lts__t_sectors_op_read.sum,lts__t_sectors_op_write.sum,"
                              "dram__bytes_read.sum,dram__bytes_write.sum,gpu__time_duration.sum";
  std::ofstream(dir / "events.csv") << metrics << ",median_us\nd,17,1000,10,33700000,1200000,22000,30\n";
  std::ofstream(dir / "ncu.csv") << metrics << "\nd,17,1000,10,33700000,1200000,22000\n";
  const auto run = [&](const std::string& csv, const std::string& exp) {
    const fs::path json = dir / (csv + exp + ".json");
    const auto r = tilesim::test::run_tilesim("validate -q -m " + (dir / csv).string() + " -e " + (dir / exp).string() +
                                              " --json " + json.string());
    REQUIRE(r.code == 0);
    return nlohmann::json::parse(tilesim::test::slurp(json)).at("cases").at(0);
  };
  const auto plain = run("events.csv", "plain.yaml"), flushed = run("events.csv", "flushed.yaml");
  CHECK(plain.at("l2_start") == "empty");
  CHECK(flushed.at("l2_start") == "write_flushed");
  // The dirty lines' write-back shares DRAM with the kernel's reads: a DRAM-bound kernel takes
  // longer (measured on the H100: 22.5 -> 28.1 us), and its own traffic is what it was.
  const double t0 = plain.at("simulated").at("duration_ns").get<double>();
  const double t1 = flushed.at("simulated").at("duration_ns").get<double>();
  CHECK(t1 > 1.1 * t0);
  CHECK(t1 < 1.5 * t0);
  CHECK(flushed.at("simulated").at("dram_read_bytes") == plain.at("simulated").at("dram_read_bytes"));
  // An Nsight Compute time is the kernel after an emptied L2, whatever the events were taken after.
  CHECK(run("ncu.csv", "flushed.yaml").at("l2_start") == "empty");
  // A condition validate does not know is an error naming the key.
  std::ofstream(dir / "bad.yaml") << "name: d\n" << wl << "validate: {events_after: sleep}\n";
  const auto bad = tilesim::test::run_tilesim("validate -m " + (dir / "events.csv").string() + " -e " + (dir / "bad.yaml").string());
  CHECK(bad.code == 2);
  CHECK_THAT(bad.out, Contains("bad.yaml") && Contains("events_after"));
}

TEST_CASE("cli: validate --seeds compares the mean of several noise seeds and keeps their range", "[validate][cli]") {
  namespace fs = std::filesystem;
  const fs::path dir = tilesim::test::scratch_dir() / "vseeds";
  fs::create_directories(dir);
  std::ofstream(dir / "g.yaml") << "name: g_seed\narch: h100\n"
                                   "workload: {kind: gemm, m: 2048, n: 2048, k: 1024, tile: [128, 128, 64]}\n"
                                   "order: {kind: column}\n";
  std::ofstream(dir / "m.csv") << "case,lts__t_sector_hit_rate.pct,lts__t_sectors_op_read.sum,lts__t_sectors_op_write.sum,"
                                  "dram__bytes_read.sum,dram__bytes_write.sum,gpu__time_duration.sum\n"
                                  "g_seed,50,1000,10,10000000,4000000,100000\n";
  const auto run = [&](const std::string& extra) {
    const fs::path json = dir / ("v" + std::to_string(extra.size()) + ".json");
    const auto r = tilesim::test::run_tilesim("validate -q --clock model -m " + (dir / "m.csv").string() + " -e " +
                                              (dir / "g.yaml").string() + " --json " + json.string() + extra);
    REQUIRE(r.code == 0);
    return std::make_pair(r.out, nlohmann::json::parse(tilesim::test::slurp(json)).at("cases").at(0));
  };
  const auto one = run("").second;
  const auto two = run(" --set sim.seed=2").second;
  const auto [out, both] = run(" --seeds 2");
  CHECK(one.count("seeds") == 0);
  CHECK(both.at("seeds") == 2);
  CHECK_THAT(out, Contains("the mean of 2 seeds"));
  for (const char* k : {"duration_ns", "dram_read_bytes", "l2_hit_rate_pct"}) {
    const double a = one.at("simulated").at(k).get<double>(), b = two.at("simulated").at(k).get<double>();
    CHECK(both.at("simulated").at(k).get<double>() == Approx((a + b) / 2));
    CHECK(both.at("simulated_min").at(k).get<double>() == Approx(std::min(a, b)));
    CHECK(both.at("simulated_max").at(k).get<double>() == Approx(std::max(a, b)));
  }
  CHECK(one.at("simulated").at("duration_ns") != two.at("simulated").at("duration_ns"));  // the seeds differ
  const auto bad = tilesim::test::run_tilesim("validate -m " + (dir / "m.csv").string() + " -e " + (dir / "g.yaml").string() +
                                              " --seeds 0");
  CHECK(bad.code == 2);
  CHECK_THAT(bad.out, Contains("--seeds: expected 1 to 1000"));
}

namespace {

// Three small GEMM cases (row, column, Hilbert order) named PREFIX_ORDER in `dir`, with one
// measurement file m.csv; returns the experiments as " a.yaml b.yaml c.yaml".
std::string three_cases(const std::filesystem::path& dir, const std::string& prefix) {
  std::filesystem::create_directories(dir);
  std::ofstream m(dir / "m.csv");
  m << "case,lts__t_sector_hit_rate.pct,lts__t_sectors_op_read.sum,lts__t_sectors_op_write.sum,"
       "dram__bytes_read.sum,dram__bytes_write.sum,median_us\n";
  std::string experiments;
  for (const char* order : {"row", "column", "hilbert"}) {
    const std::string name = prefix + "_" + order;
    std::ofstream(dir / (name + ".yaml")) << "name: " << name << "\narch: h100\n"
                                           << "workload: {kind: gemm, m: 1024, n: 1024, k: 512, tile: [128, 128, 32]}\n"
                                           << "order: {kind: " << order << "}\n";
    m << name << ",50,1000,10,10000000,4000000,100\n";
    experiments += " " + (dir / (name + ".yaml")).string();
  }
  return experiments;
}

}  // namespace

TEST_CASE("cli: validate --cases-jsonl writes each case as a JSON line, as --json's cases", "[validate][cli]") {
  namespace fs = std::filesystem;
  const fs::path dir = tilesim::test::scratch_dir() / "vjsonl";
  const std::string experiments = three_cases(dir, "j");
  const fs::path lines = dir / "cases.jsonl", json = dir / "v.json";
  const auto r = tilesim::test::run_tilesim("validate -q -j 2 --clock model -m " + (dir / "m.csv").string() + " -e" +
                                            experiments + " --json " + json.string() + " --cases-jsonl " +
                                            lines.string());
  REQUIRE(r.code == 0);
  std::ifstream in(lines);
  std::map<std::string, nlohmann::json> seen;
  for (std::string line; std::getline(in, line);) {
    const auto j = nlohmann::json::parse(line);
    seen[j.at("case").get<std::string>()] = j;
  }
  REQUIRE(seen.size() == 3);
  for (const auto& c : nlohmann::json::parse(tilesim::test::slurp(json)).at("cases"))
    CHECK(seen.at(c.at("case").get<std::string>()) == c);
  const auto bad = tilesim::test::run_tilesim("validate -m " + (dir / "m.csv").string() + " -e" + experiments +
                                              " --cases-jsonl " + (dir / "no" / "such" / "x.jsonl").string());
  CHECK(bad.code == 2);
  CHECK_THAT(bad.out, Contains("--cases-jsonl"));
}

TEST_CASE("cli: validate --resume takes the cases a cut-short run wrote and simulates the rest", "[validate][cli]") {
  namespace fs = std::filesystem;
  const fs::path dir = tilesim::test::scratch_dir() / "vresume";
  const std::string experiments = three_cases(dir, "r");
  const std::string base = "validate -q -j 2 --clock model -m " + (dir / "m.csv").string() + " -e" + experiments;
  const fs::path whole_lines = dir / "whole.jsonl", whole_json = dir / "whole.json";
  REQUIRE(tilesim::test::run_tilesim(base + " --json " + whole_json.string() + " --cases-jsonl " + whole_lines.string()).code == 0);
  // A run cut short: two cases written, the third's line torn off by the kill.
  std::vector<std::string> kept;
  {
    std::ifstream in(whole_lines);
    for (std::string line; std::getline(in, line);) kept.push_back(line);
  }
  REQUIRE(kept.size() == 3);
  const fs::path cut = dir / "cut.jsonl", resumed_json = dir / "resumed.json";
  std::ofstream(cut) << kept[0] << "\n" << kept[1] << "\n" << kept[2].substr(0, kept[2].size() / 2);
  const auto r = tilesim::test::run_tilesim(base + " --resume --json " + resumed_json.string() + " --cases-jsonl " + cut.string());
  REQUIRE(r.code == 0);
  // The report is the whole run's (the simulation is deterministic), and the file holds the two
  // whole lines and the case simulated again, the torn line gone.
  const auto whole = nlohmann::json::parse(tilesim::test::slurp(whole_json));
  const auto resumed = nlohmann::json::parse(tilesim::test::slurp(resumed_json));
  CHECK(resumed.at("aggregate") == whole.at("aggregate"));
  CHECK(resumed.at("cases") == whole.at("cases"));
  std::vector<std::string> after;
  {
    std::ifstream in(cut);
    for (std::string line; std::getline(in, line);) after.push_back(line);
  }
  REQUIRE(after.size() == 3);
  CHECK(after[0] == kept[0]);
  CHECK(after[1] == kept[1]);
  CHECK(nlohmann::json::parse(after[2]) == nlohmann::json::parse(kept[2]));
  // --resume alone, and a line that is not a case, are refused.
  const auto alone = tilesim::test::run_tilesim(base + " --resume");
  CHECK(alone.code == 2);
  CHECK_THAT(alone.out, Contains("--resume: needs --cases-jsonl"));
  const fs::path junk = dir / "junk.jsonl";
  std::ofstream(junk) << "{\"case\": 1}\n" << kept[0] << "\n";
  const auto bad = tilesim::test::run_tilesim(base + " --resume --cases-jsonl " + junk.string());
  CHECK(bad.code == 2);
  CHECK_THAT(bad.out, Contains("junk.jsonl:1: --resume"));
}
