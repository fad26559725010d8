#include <catch2/catch.hpp>

#include <sstream>

#include "report_fixtures.hpp"
#include "sim/report/report.hpp"

using namespace tilesim;

namespace {

std::vector<nlohmann::json> events(const nlohmann::json& trace, const std::string& ph, const std::string& cat = "") {
  std::vector<nlohmann::json> out;
  for (const auto& e : trace.at("traceEvents"))
    if (e.at("ph") == ph && (cat.empty() || e.value("cat", "") == cat)) out.push_back(e);
  return out;
}

/// One block at a time per SM, so each SM is one track and tid = SM id. Block 1 waited 25 ns.
SimResult one_slot_result() {
  SimResult r;
  r.experiment = "hand";
  r.arch = "toy";
  r.num_sms = 3;
  r.kernels.push_back(test::kernel_stats("gemm", 1, 0, 300));
  r.blocks = {test::record(0, 0, 0, 0, 0, 100), test::record(0, 1, 1, 2, 0, 150, 25),
              test::record(0, 2, 2, 0, 100, 300)};
  r.blocks[2].end += 500;  // 300.5 ns: sub-ns picoseconds must survive exactly
  return r;
}

}  // namespace

TEST_CASE("timeline: CSV has one row per block with exact times", "[report]") {
  std::ostringstream out;
  write_timeline_csv(out, one_slot_result());
  CHECK(out.str() ==
        "kernel_index,kernel,block,position,sm,start_ns,end_ns,wait_ns\n"
        "0,\"gemm\",0,0,0,0,100,0\n"
        "0,\"gemm\",1,1,2,0,150,25\n"
        "0,\"gemm\",2,2,0,100,300.5,0\n");
}

TEST_CASE("timeline: an early-exit block is block -1", "[report]") {
  SimResult r = one_slot_result();
  r.blocks[1].block = kNoBlock;
  std::ostringstream out;
  write_timeline_csv(out, r);
  CHECK_THAT(out.str(), Catch::Matchers::Contains("0,\"gemm\",-1,1,2,0,150,25\n"));
}

TEST_CASE("timeline: trace JSON has one X slice per block on its SM's track, in microseconds", "[report]") {
  const SimResult r = one_slot_result();
  std::ostringstream out;
  write_timeline_trace_json(out, r);
  const nlohmann::json j = nlohmann::json::parse(out.str());
  const auto blocks = events(j, "X", "block");
  REQUIRE(blocks.size() == 3);
  for (std::size_t i = 0; i < 3; ++i) {
    CHECK(blocks[i].at("pid") == 0);
    CHECK(blocks[i].at("tid") == r.blocks[i].sm);
    CHECK(blocks[i].at("ts").get<double>() == Approx(static_cast<double>(r.blocks[i].start) / 1e6));
    CHECK(blocks[i].at("dur").get<double>() == Approx(static_cast<double>(r.blocks[i].end - r.blocks[i].start) / 1e6));
    CHECK(blocks[i].at("args").at("block") == r.blocks[i].block);
    CHECK(blocks[i].at("args").at("position") == r.blocks[i].position);
  }
  CHECK(blocks[1].at("name") == "gemm #1");
  CHECK(blocks[2].at("dur").get<double>() == Approx(0.2005));
  CHECK(blocks[1].at("args").at("wait_ns").get<double>() == Approx(25));

  // The wait is a slice nested at the start of its block, on the same track.
  const auto waits = events(j, "X", "wait");
  REQUIRE(waits.size() == 1);
  CHECK(waits[0].at("tid") == 2);
  CHECK(waits[0].at("ts").get<double>() == Approx(0));
  CHECK(waits[0].at("dur").get<double>() == Approx(0.025));

  // Tracks named after their SMs: only the two that ran blocks.
  std::map<int, std::string> names;
  for (const auto& m : events(j, "M"))
    if (m.at("name") == "thread_name") names[m.at("tid").get<int>()] = m.at("args").at("name");
  CHECK(names == std::map<int, std::string>{{0, "SM 0"}, {2, "SM 2"}});
}

TEST_CASE("timeline: blocks sharing an SM go to lanes so no track has overlapping slices", "[report]") {
  const SimResult r = test::two_wave_result(true);  // 2 SMs, two blocks resident on each at a time
  std::uint32_t lanes = 0;
  const std::vector<std::uint32_t> lane = timeline_lanes(r, &lanes);
  // SM 0: positions 0 [0,100] and 2 [0,120] take lanes 0 and 1; position 4 [100,300] reuses lane
  // 0 and k1's block 0 [120,300] lane 1 (a block may start as another ends). SM 1 likewise.
  CHECK(lanes == 2);
  CHECK(lane == std::vector<std::uint32_t>{0, 0, 1, 1, 0, 0, 1, 1});
  std::ostringstream out;
  write_timeline_trace_json(out, r);
  const nlohmann::json j = nlohmann::json::parse(out.str());
  const auto blocks = events(j, "X", "block");
  REQUIRE(blocks.size() == r.blocks.size());
  std::map<int, std::vector<std::pair<double, double>>> by_tid;
  for (std::size_t i = 0; i < blocks.size(); ++i) {
    CHECK(blocks[i].at("tid").get<std::uint32_t>() / lanes == r.blocks[i].sm);
    CHECK(blocks[i].at("args").at("sm") == r.blocks[i].sm);
    const double ts = blocks[i].at("ts"), dur = blocks[i].at("dur");
    by_tid[blocks[i].at("tid")].push_back({ts, ts + dur});
  }
  for (auto& [tid, spans] : by_tid) {
    std::sort(spans.begin(), spans.end());
    for (std::size_t i = 1; i < spans.size(); ++i) CHECK(spans[i].first >= spans[i - 1].second - 1e-12);
  }
  std::map<int, std::string> names;
  for (const auto& m : events(j, "M"))
    if (m.at("name") == "thread_name") names[m.at("tid").get<int>()] = m.at("args").at("name");
  CHECK(names.at(0) == "SM 0 lane 0");
  CHECK(names.at(3) == "SM 1 lane 1");
}

TEST_CASE("timeline: a result without block records still writes a valid, empty timeline", "[report]") {
  SimResult r = one_slot_result();
  r.blocks.clear();
  std::ostringstream json, csv;
  write_timeline_trace_json(json, r);
  write_timeline_csv(csv, r);
  CHECK(events(nlohmann::json::parse(json.str()), "X").empty());
  CHECK(csv.str() == "kernel_index,kernel,block,position,sm,start_ns,end_ns,wait_ns\n");
}
