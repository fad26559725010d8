// Importing measurements: both CSV forms, unit conversion, and every malformed-input error.
#include <catch2/catch.hpp>

#include <fstream>

#include "tests/sim/cli_util.hpp"
#include "common/error.hpp"
#include "models/arch.hpp"
#include "sim/tools/validate/measured.hpp"
#include "sim/tools/validate/validation.hpp"

using Catch::Matchers::Contains;
using namespace tilesim;

namespace {

std::string write(const std::string& name, const std::string& text) {
  const auto p = tilesim::test::scratch_dir() / name;
  std::ofstream(p) << text;
  return p.string();
}

// A raw page the way `ncu --csv --page raw` writes it (header, units, one row per kernel).
const char* kRaw =
    "\"ID\",\"Kernel Name\",\"device__attribute_display_name\",\"device__attribute_multiprocessor_count\","
    "\"device__attribute_l2_cache_size\",\"dram__bytes_read.sum\",\"gpu__time_duration.sum\",\"launch__cluster_max_active\","
    "\"lts__t_sector_hit_rate.pct\",\"lts__t_sectors_op_read.sum\",\"lts__t_sectors_op_write.sum\",\"dram__bytes_write.sum\"\n"
    "\"\",\"\",\"\",\"\",\"\",\"Mbyte\",\"usecond\",\"cluster\",\"%\",\"sector\",\"sector\",\"byte\"\n"
    "\"0\",\"k(const __half *, int)\",\"NVIDIA H100 80GB HBM3\",\"132\",\"52,428,800\",\"4,368.5\",\"4,027.168\",\"1\","
    "\"61.81\",\"628,401,651\",\"6,294,204\",\"132,400,640\"\n";

}  // namespace

TEST_CASE("measured: CSV lines split with RFC 4180 quoting", "[validate]") {
  const auto c = split_csv_line("a,\"b,c\",\"say \"\"hi\"\"\",,\"4,096\"");
  REQUIRE(c == std::vector<std::string>{"a", "b,c", "say \"hi\"", "", "4,096"});
}

TEST_CASE("measured: units convert to base units, unknown ones are errors", "[validate]") {
  REQUIRE(to_base_unit(1.5, "Kbyte", "x") == 1500);
  REQUIRE(to_base_unit(2, "Gbyte", "x") == 2e9);
  REQUIRE(to_base_unit(3, "usecond", "x") == 3000);
  REQUIRE(to_base_unit(3, "msecond", "x") == 3e6);
  REQUIRE(to_base_unit(7, "Msector", "x") == 7e6);
  REQUIRE(to_base_unit(61.8, "%", "x") == 61.8);
  REQUIRE_THROWS_WITH(to_base_unit(1, "furlong", "f.csv:3: column 'x'"), Contains("f.csv:3") && Contains("furlong"));
}

TEST_CASE("measured: a raw Nsight Compute page is one case named by its file", "[validate]") {
  const auto m = load_measured({write("ncu_gemm_case.csv", kRaw)});
  REQUIRE(m.size() == 1);
  const MeasuredCase& c = m.at("gemm_case");
  REQUIRE(c.kernels.size() == 1);
  REQUIRE(c.kernels[0].name == "k(const __half *, int)");
  REQUIRE(*c.kernels[0].get("dram__bytes_read.sum") == Approx(4368.5e6));
  REQUIRE(*c.kernels[0].get("gpu__time_duration.sum") == Approx(4027168));
  REQUIRE(*c.kernels[0].get("lts__t_sectors_op_read.sum") == 628401651.0);
  // A metric in a unit tilesim does not compare ("cluster") is skipped, not an error.
  REQUIRE_FALSE(c.kernels[0].get("launch__cluster_max_active"));
  REQUIRE(c.device);
  REQUIRE(c.device->sm_count == 132);
  REQUIRE(c.device->l2_bytes == 52428800);
}

TEST_CASE("measured: a case table gives kernels and event times", "[validate]") {
  const auto f = write("table.csv",
                       "case,kernel,dram__bytes_read.sum,lts__t_sector_hit_rate.pct,median_us,units\n"
                       "a,k0,1.5,50,100.5,dram__bytes_read.sum=Gbyte\n"
                       "a,k1,0.5,70,100.5,dram__bytes_read.sum=Gbyte\n"
                       "b,,,,42,\n");
  const auto m = load_measured({f});
  REQUIRE(m.at("a").kernels.size() == 2);
  REQUIRE(*m.at("a").kernels[1].get("dram__bytes_read.sum") == 0.5e9);
  REQUIRE(*m.at("a").event_ns == Approx(100500));
  REQUIRE(m.at("b").kernels.empty());
  REQUIRE(*m.at("b").event_ns == 42000);
}

TEST_CASE("measured: malformed and foreign CSVs are one clear error", "[validate]") {
  SECTION("truncated row") {
    std::string t = kRaw;
    t = t.substr(0, t.rfind(",\"6,294,204\"")) + "\n";
    REQUIRE_THROWS_WITH(load_measured({write("ncu_trunc.csv", t)}), Contains("ncu_trunc.csv:3") && Contains("truncated"));
  }
  SECTION("not a measurement file") {
    REQUIRE_THROWS_WITH(load_measured({write("foreign.csv", "name,value\nx,1\n")}),
                        Contains("foreign.csv:1") && Contains("not a measurement CSV"));
  }
  SECTION("a non-number") {
    REQUIRE_THROWS_WITH(load_measured({write("nan.csv", "case,dram__bytes_read.sum\nx,lots\n")}),
                        Contains("nan.csv:2") && Contains("dram__bytes_read.sum") && Contains("lots"));
  }
  SECTION("wrong unit for a compared metric") {
    REQUIRE_THROWS_WITH(load_measured({write("unit.csv", "case,gpu__time_duration.sum\n,fortnight\nx,3\n")}),
                        Contains("unit.csv:3") && Contains("fortnight"));
  }
  SECTION("impossible values of a compared metric (issue 17, D13)") {
    REQUIRE_THROWS_WITH(load_measured({write("neg.csv", "case,dram__bytes_read.sum\nx,-5\n")}),
                        Contains("neg.csv:2") && Contains("non-negative"));
    REQUIRE_THROWS_WITH(load_measured({write("pct.csv", "case,lts__t_sector_hit_rate.pct\nx,130\n")}),
                        Contains("pct.csv:2") && Contains("[0, 100]"));
    REQUIRE_THROWS_WITH(load_measured({write("naninf.csv", "case,gpu__time_duration.sum\nx,inf\n")}),
                        Contains("naninf.csv:2") && Contains("inf"));
    std::string t = kRaw;
    t.replace(t.find("\"61.81\""), 7, "\"nan\"");
    REQUIRE_THROWS_WITH(load_measured({write("ncu_nan.csv", t)}), Contains("ncu_nan.csv:3") && Contains("'nan'"));
  }
  SECTION("missing file") { REQUIRE_THROWS_WITH(load_measured({"/nonexistent/m.csv"}), Contains("cannot open")); }
}

TEST_CASE("measured: a missing metric or another GPU is refused before comparing", "[validate]") {
  const ArchSpec h100 = load_arch("h100", YAML::Node(), "test");
  std::string src;
  SECTION("another GPU") {
    std::string t = kRaw;
    t.replace(t.find("\"132\""), 5, "\"108\"");
    const auto m = load_measured({write("ncu_a100.csv", t)});
    REQUIRE_THROWS_WITH(measured_figures(m.at("a100"), h100, "exp.yaml", src),
                        Contains("ncu_a100.csv") && Contains("108 SMs") && Contains("h100"));
  }
  SECTION("missing column") {
    const auto m = load_measured({write("ncu_short.csv",
                                        "\"ID\",\"Kernel Name\",\"dram__bytes_read.sum\"\n\"\",\"\",\"byte\"\n\"0\",\"k\",\"5\"\n")});
    REQUIRE_THROWS_WITH(measured_figures(m.at("short"), h100, "exp.yaml", src),
                        Contains("ncu_short.csv") && Contains("lts__t_sector_hit_rate.pct"));
  }
  SECTION("the figures of a good page") {
    const auto m = load_measured({write("ncu_good.csv", kRaw)});
    const CaseFigures f = measured_figures(m.at("good"), h100, "exp.yaml", src);
    REQUIRE(src == "ncu");
    REQUIRE(*f.hit_rate_pct == Approx(61.81));
    REQUIRE(*f.dram_write_bytes == 132400640.0);
  }
}

TEST_CASE("measured: a device count out of range is an error, not an overflow (issue 17, fuzzing)", "[validate]") {
  // Found by fuzz_measured_csv: an SM count of 2.3e11 was converted to a 32-bit count
  // (undefined behaviour; UBSan stopped there).
  std::string raw = kRaw;
  raw.replace(raw.find("\"132\""), 5, "\"230294000000\"");
  REQUIRE_THROWS_WITH(load_measured({write("ncu_big_sms.csv", raw)}),
                      Contains("ncu_big_sms.csv:3") && Contains("device__attribute_multiprocessor_count") &&
                          Contains("not a whole number"));
  std::string frac = kRaw;
  frac.replace(frac.find("\"132\""), 5, "\"-1.5\"");
  REQUIRE_THROWS_WITH(load_measured({write("ncu_neg_sms.csv", frac)}), Contains("not a whole number"));
}
