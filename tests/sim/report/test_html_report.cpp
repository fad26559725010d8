// The HTML report (`tilesim report`): the page bundles its libraries and data, escapes what it
// inlines, formats numbers by the documented rule, and bad input gives one clear line, exit
// code 2. The page rendered in a real browser is checked in test_html_report_browser.cpp.
#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "../cli_util.hpp"
#include "common/error.hpp"
#include "sim/report/html.hpp"
#include "sim/report/html_assets.hpp"

using Catch::Matchers::Contains;
using nlohmann::json;
using tilesim::test::slurp;

namespace {

namespace fs = std::filesystem;

const fs::path kFixture = fs::path(TILESIM_TEST_DIR) / "data" / "report" / "gemm-orders";

json fixture_summary() { return json::parse(slurp(kFixture / "summary.json")); }

/// A fresh folder for one test case under the process's scratch folder.
fs::path case_dir(const std::string& name) {
  const fs::path d = tilesim::test::scratch_dir() / "report" / name;
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

void write(const fs::path& p, const std::string& text) { std::ofstream(p, std::ios::binary) << text; }

/// The text of the page's <script type="application/json" id="summary"> element.
std::string embedded_json(const std::string& page) {
  const std::string open = "<script type=\"application/json\" id=\"summary\">";
  const auto begin = page.find(open);
  REQUIRE(begin != std::string::npos);
  const auto end = page.find("</script>", begin);
  REQUIRE(end != std::string::npos);
  return page.substr(begin + open.size(), end - begin - open.size());
}

/// The message of the InputError that loading `path` throws ("" when none).
std::string load_error(const fs::path& path) {
  try {
    tilesim::load_sweep_summary(path.string());
  } catch (const tilesim::InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("report: numbers are x*10^d rounded half up, printed with d decimals", "[report][html]") {
  using tilesim::report_fixed;
  CHECK(report_fixed(1.25, 1) == "1.3");  // an exact half: printf would give 1.2 (half to even)
  CHECK(report_fixed(0.125, 2) == "0.13");
  CHECK(report_fixed(2.5, 0) == "3");
  CHECK(report_fixed(-2.5, 0) == "-2");  // halves go toward +infinity, as Math.round
  CHECK(report_fixed(-0.04, 1) == "0.0");  // never "-0.0"
  CHECK(report_fixed(1234.5678, 2) == "1234.57");
  CHECK(report_fixed(0.001, 2) == "0.00");
  CHECK(report_fixed(0.05, 3) == "0.050");
  CHECK(report_fixed(5, 3) == "5.000");
  CHECK(report_fixed(17, 0) == "17");
  CHECK(report_fixed(NAN, 2) == "\u2014");
  CHECK(report_fixed(1e300, 2) == "\u2014");  // past 2^53 the digits would not be exact
}

TEST_CASE("report: table cells of a fixture point", "[report][html]") {
  const json s = fixture_summary();
  const json& p = s["points"][7];  // workload.m=1024 n=4096 k=1024, grouped order: rank 2 of its group
  const json& total = p["result"]["total"];
  CHECK(tilesim::report_cell(p, "point") == "order=grouped(group_m=8)");
  CHECK(tilesim::report_cell(p, "label") == p["label"].get<std::string>());
  CHECK(tilesim::report_cell(p, "time_us") == tilesim::report_fixed(total["duration_ns"].get<double>() / 1000, 2));
  CHECK(tilesim::report_cell(p, "l2_hit_pct") == tilesim::report_fixed(total["l2_hit_rate"].get<double>() * 100, 1));
  CHECK(tilesim::report_cell(p, "rank") == "2");
  CHECK(tilesim::report_cell(p, "note") == "");
  CHECK(tilesim::report_cell(s["points"][6], "note") == "baseline");
  CHECK(tilesim::report_cell(s["points"][6], "speedup") == "1.000");
  CHECK(tilesim::report_cell(p, "waves") == "1");
  CHECK(tilesim::report_cell(s["points"][12], "waves") == "4");
  json no_cmp = p;
  no_cmp.erase("comparison");
  CHECK(tilesim::report_cell(no_cmp, "point") == p["label"].get<std::string>());
  CHECK(tilesim::report_cell(no_cmp, "speedup") == "\u2014");
  json nothing_compared = p;  // a sweep without a compared axis: compared "", no baseline
  nothing_compared["comparison"]["compared"] = "";
  nothing_compared["comparison"]["baseline"] = nullptr;
  CHECK(tilesim::report_cell(nothing_compared, "point") == p["label"].get<std::string>());
  CHECK(tilesim::report_cell(nothing_compared, "note") == "");
  nothing_compared["label"] = "";  // a run without a sweep
  CHECK(tilesim::report_cell(nothing_compared, "point") == "#7");
  json no_bounds = p;
  no_bounds["result"]["total"].erase("bounds");
  CHECK(tilesim::report_cell(no_bounds, "bound_mb") == "\u2014");
  CHECK_THROWS_AS(tilesim::report_cell(p, "nonsense"), std::invalid_argument);
}

TEST_CASE("report: the page bundles D3, C3, its own script and the summary, nothing is fetched", "[report][html]") {
  const json s = tilesim::load_sweep_summary(kFixture.string());
  const std::string page = tilesim::html_report(s);
  namespace a = tilesim::report_assets;
  CHECK(a::d3_js().find("version:\"3.5.") != std::string::npos);
  CHECK(a::c3_js().find("version:\"0.4.") != std::string::npos);
  for (const std::string* asset : {&a::d3_js(), &a::c3_js(), &a::c3_css(), &a::prelude_js(), &a::page_js(), &a::page_css()}) {
    CHECK(asset->size() > 100);
    CHECK(page.find(*asset) != std::string::npos);  // byte for byte
  }
  // The error recorder is the first script, after the element it writes to.
  const auto errors = page.find("<pre id=\"errors\"></pre>");
  const auto first_script = page.find("<script");
  REQUIRE(errors != std::string::npos);
  CHECK(errors < first_script);
  CHECK(page.find(a::prelude_js()) < page.find(a::d3_js()));
  CHECK(page.find(a::d3_js()) < page.find(a::c3_js()));
  CHECK(page.find(a::c3_js()) < page.find(a::page_js()));
  // Self-contained: no external script, stylesheet or image.
  CHECK_THAT(page, !Contains("<script src") && !Contains("<link") && !Contains("<img"));
  CHECK_THAT(page, Contains("<meta charset=\"utf-8\">") && Contains("<title>tilesim report: report-fixture</title>"));
  CHECK(json::parse(embedded_json(page)) == s);
  CHECK(tilesim::html_report(s) == page);  // deterministic
}

TEST_CASE("report: text that could end the data element or open a comment is escaped", "[report][html]") {
  json s = fixture_summary();
  const std::string nasty = "x</script><script>alert(1)</script><!--<script>&\"'\u00b5";
  s["experiment"] = nasty;
  s["points"][0]["label"] = "</SCRIPT >";
  const std::string page = tilesim::html_report(s);
  const std::string data = embedded_json(page);
  CHECK(data.find("</") == std::string::npos);
  CHECK(data.find("<!--") == std::string::npos);
  CHECK(json::parse(data) == s);  // JSON.parse reads back the same values
  CHECK_THAT(page, Contains("<title>tilesim report: x&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;&lt;!--"));
  CHECK(tilesim::json_for_script(json("a</b")) == "\"a<\\/b\"");
  CHECK(tilesim::json_for_script(json("<!--")) == "\"\\u003c!--\"");
  // The libraries themselves must not end their inline element early.
  for (const std::string* asset : {&tilesim::report_assets::d3_js(), &tilesim::report_assets::c3_js()})
    CHECK(asset->find("</script") == std::string::npos);
}

TEST_CASE("report: unreadable sweeps are one line naming the file and the problem", "[report][html]") {
  const fs::path dir = case_dir("errors");

  SECTION("a missing folder") {
    CHECK_THAT(load_error(dir / "nope"), Contains("nope: no such folder or file"));
  }
  SECTION("a folder that is not a sweep's output") {
    CHECK_THAT(load_error(dir), Contains("neither summary.json nor results.jsonl"));
  }
  SECTION("a sweep that has not finished: no summary.json yet") {
    write(dir / "results.jsonl", "{\"index\": 0}\n{\"index\": 2}\n{\"index\": 1}\n");
    const std::string e = load_error(dir);
    CHECK_THAT(e, Contains("summary.json: missing") && Contains("has not finished") &&
                      Contains("results.jsonl has 3 points"));
  }
  SECTION("malformed JSON: line, column and byte") {
    write(dir / "summary.json", "{\"experiment\": \"x\",\n \"points\": [1,, 2]}\n");
    const std::string e = load_error(dir);
    CHECK_THAT(e, Contains("summary.json: malformed JSON at line 2, column 15 (byte 35)"));
  }
  SECTION("a number too large for a double (found by fuzz_summary_json)") {
    write(dir / "summary.json", "{\"experiment\": \"x\", \"points\": [2e62144]}\n");
    CHECK_THAT(load_error(dir / "summary.json"), Contains("summary.json: malformed JSON") && Contains("number overflow"));
  }
  SECTION("an empty file") {
    write(dir / "summary.json", "\n");
    CHECK_THAT(load_error(dir / "summary.json"), Contains("summary.json: empty file"));
  }
  SECTION("a missing field is named by its path") {
    json s = fixture_summary();
    s["points"][3]["result"]["total"].erase("duration_ns");
    write(dir / "summary.json", s.dump());
    CHECK_THAT(load_error(dir), Contains("summary.json: points[3].result.total.duration_ns: missing"));
  }
  SECTION("a mistyped field") {
    json s = fixture_summary();
    s["tilesim_version"] = 4;
    write(dir / "summary.json", s.dump());
    CHECK_THAT(load_error(dir), Contains("tilesim_version: expected a string, got number"));
    s = fixture_summary();
    s["points"][2]["result"]["kernels"][0]["waves_detail"][0]["blocks"] = "many";
    write(dir / "summary.json", s.dump());
    CHECK_THAT(load_error(dir), Contains("points[2].result.kernels[0].waves_detail[0].blocks: expected a number, got string"));
  }
  SECTION("indices that do not fit") {
    json s = fixture_summary();
    s["groups"][1]["points"][0] = 99;
    write(dir / "summary.json", s.dump());
    CHECK_THAT(load_error(dir), Contains("groups[1].points[0]: expected a point index below 18, got 99"));
    s = fixture_summary();
    s["points"][4]["index"] = 5;
    write(dir / "summary.json", s.dump());
    CHECK_THAT(load_error(dir), Contains("points[4].index: expected 4"));
  }
}

TEST_CASE("cli: tilesim report writes the page, bad input is exit code 2 and one line", "[report][html][cli]") {
  const fs::path dir = case_dir("cli");
  const fs::path out = dir / "out.html";
  auto r = tilesim::test::run_tilesim("report " + kFixture.string() + " -o " + out.string());
  REQUIRE(r.code == 0);
  CHECK_THAT(r.out, Contains("18 points, 6 groups"));
  const std::string page = slurp(out);
  CHECK(page == tilesim::html_report(fixture_summary()));

  // summary.json itself, and the default output file next to it.
  fs::copy_file(kFixture / "summary.json", dir / "summary.json");
  r = tilesim::test::run_tilesim("report " + (dir / "summary.json").string() + " -q");
  CHECK(r.code == 0);
  CHECK(r.out.empty());
  CHECK(slurp(dir / "report.html") == page);

  const fs::path unfinished = dir / "unfinished";
  fs::create_directories(unfinished);
  write(unfinished / "results.jsonl", "{}\n{}\n");
  for (const std::string& bad : {(dir / "nope").string(), unfinished.string()}) {
    r = tilesim::test::run_tilesim("report " + bad + " -o " + out.string());
    CHECK(r.code == 2);
    CHECK(std::count(r.out.begin(), r.out.end(), '\n') == 1);
    CHECK_THAT(r.out, Contains("tilesim: error: " + bad));
  }
  CHECK_THAT(r.out, Contains("results.jsonl has 2 points"));
  r = tilesim::test::run_tilesim("report");
  CHECK(r.code == 2);
  CHECK_THAT(r.out, Contains("expected OUTDIR"));
}
