// The wave, wait and bound figures as they appear in the JSON, the CSV and the table.
#include <catch2/catch.hpp>

#include <sstream>

#include "report_fixtures.hpp"
#include "sim/report/report.hpp"

using namespace tilesim;
using Catch::Matchers::Contains;

namespace {

SimResult chain_result() {
  SimResult r = test::two_wave_result(true);
  r.kernels[0].wait_ps = 2500;  // 2.5 ns
  r.kernels[0].poll_sectors = 7;
  r.kernels[0].mem.dram_read_bytes = 150000;
  r.kernels[0].mem.dram_write_bytes = 50000;
  r.total.dram_read_bytes = 300000;
  return r;
}

RunBounds chain_bounds() {
  RunBounds b;
  b.kernels = {TrafficBounds{100000, 0, 40000}, TrafficBounds{}};
  b.total = TrafficBounds{120000, 30000, 0};
  return b;
}

std::vector<std::string> split(const std::string& line) {
  std::vector<std::string> out(1);
  bool quoted = false;
  for (char c : line) {
    if (c == '"') quoted = !quoted;
    if (c == ',' && !quoted)
      out.emplace_back();
    else
      out.back() += c;
  }
  return out;
}

}  // namespace

TEST_CASE("report JSON: waves_detail, tail, wait, stream and bounds per kernel", "[report]") {
  const std::vector<RunBounds> bounds = {chain_bounds()};
  const nlohmann::json j = run_json("hand", {chain_result()}, false, &bounds);
  const nlohmann::json& k0 = j.at("kernels").at(0);
  REQUIRE(k0.at("waves_detail").size() == 2);
  CHECK(k0.at("waves_detail")[1] == nlohmann::json{{"index", 1}, {"start_ns", 100.0}, {"end_ns", 300.0}, {"blocks", 2}});
  CHECK(k0.at("tail_lost_ns").get<double>() == Approx(100));
  CHECK(k0.at("tail_filled_fraction").get<double>() == Approx(7.0 / 9.0));
  CHECK(k0.at("wait_ns").get<double>() == Approx(2.5));
  CHECK(k0.at("poll_sectors") == 7);
  CHECK(k0.at("stream") == 0);
  CHECK(j.at("kernels").at(1).at("stream") == 1);
  CHECK(k0.at("bounds") == nlohmann::json{{"compulsory_bytes", 100000},
                                           {"intermediate_bytes", 0},
                                           {"io_bound_bytes", 40000},
                                           {"chain_io_bound_bytes", 0}});
  CHECK(k0.at("dram_over_bound").get<double>() == Approx(2.0));  // 200000 / max(100000, 40000)
  CHECK(j.at("kernels").at(1).at("dram_over_bound").is_null());   // no bound: no ratio
  CHECK(j.at("total").at("dram_over_bound").get<double>() == Approx(2.5));
  // A chain bound above the others is the one the ratio uses: 300000 / 150000.
  std::vector<RunBounds> with_chain = {chain_bounds()};
  with_chain[0].total.chain_io_bound_bytes = 150000;
  const nlohmann::json jc = run_json("hand", {chain_result()}, false, &with_chain);
  CHECK(jc.at("total").at("bounds").at("chain_io_bound_bytes") == 150000);
  CHECK(jc.at("total").at("dram_over_bound").get<double>() == Approx(2.0));

  // Without bounds the keys are absent; without block records the waves are empty.
  SimResult bare = chain_result();
  bare.blocks.clear();
  const nlohmann::json b = result_json(bare);
  CHECK_FALSE(b.at("kernels")[0].contains("bounds"));
  CHECK(b.at("kernels")[0].at("waves_detail").empty());
  CHECK(b.at("kernels")[0].at("tail_lost_ns") == 0);
}

TEST_CASE("report CSV: new columns appended after the old ones, one cell per column", "[report]") {
  const std::vector<RunBounds> bounds = {chain_bounds()};
  std::ostringstream out;
  write_csv(out, {chain_result()}, &bounds);
  std::istringstream in(out.str());
  std::string header, row0, row1;
  std::getline(in, header);
  std::getline(in, row0);
  std::getline(in, row1);
  // Existing consumers read columns by position: the old header must be an unchanged prefix.
  CHECK(header.rfind("experiment,point,arch,kernel,grid_m,grid_n,grid_z,blocks,blocks_per_sm,occupancy_limit,waves,"
                     "last_wave_utilization,duration_ns,tflops,l2_hit_rate,l2_read_hit_rate,read_sectors,"
                     "read_hit_sectors,write_sectors,fabric_sectors,dram_read_bytes,dram_write_bytes,bound,",
                     0) == 0);
  const auto h = split(header), c0 = split(row0), c1 = split(row1);
  REQUIRE(c0.size() == h.size());
  REQUIRE(c1.size() == h.size());
  const auto cell = [&](const std::vector<std::string>& row, const std::string& name) {
    return row[std::find(h.begin(), h.end(), name) - h.begin()];
  };
  CHECK(cell(c0, "wait_ns") == "2.5");
  CHECK(cell(c0, "poll_sectors") == "7");
  CHECK(cell(c1, "stream") == "1");
  CHECK(cell(c0, "tail_lost_ns") == "100");
  CHECK(cell(c1, "tail_lost_ns") == "140");
  CHECK(cell(c0, "compulsory_bytes") == "100000");
  CHECK(cell(c0, "dram_over_bound") == "2");
  CHECK(cell(c1, "dram_over_bound").empty());
  CHECK(cell(c0, "chain_io_bound_bytes") == "0");
  CHECK(h.back() == "chain_io_bound_bytes");

  std::ostringstream plain;  // without bounds: same columns, bounds cells empty
  write_csv(plain, {chain_result()});
  std::istringstream pin(plain.str());
  std::string ph, pr;
  std::getline(pin, ph);
  std::getline(pin, pr);
  CHECK(ph == header);
  CHECK(split(pr).size() == h.size());
}

TEST_CASE("report table: wait and tail columns, a DRAM/bound column only with bounds", "[report]") {
  std::ostringstream plain;
  print_table(plain, "hand", {chain_result()});
  CHECK_THAT(plain.str(), Contains("wait us") && Contains("tail lost us"));
  CHECK_THAT(plain.str(), !Contains("DRAM/bound"));

  const std::vector<RunBounds> bounds = {chain_bounds()};
  std::ostringstream with;
  print_table(with, "hand", {chain_result()}, &bounds);
  CHECK_THAT(with.str(), Contains("DRAM/bound") && Contains("2.00"));
  CHECK_THAT(with.str(), Contains("all kernels:") && Contains("DRAM/bound 2.50"));
}
