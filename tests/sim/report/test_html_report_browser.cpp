// The HTML report in a real browser: Debian's chromium opens the page from a file, headless and
// offline, and dumps the DOM after the scripts ran. Checks that the page rendered (data-ready),
// recorded no error (#errors empty), drew every chart with C3, and that every table cell equals
// the number report_cell() computes from summary.json (the same rule as the page's script).
// A missing chromium fails the test, with the way to install it.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "../cli_util.hpp"
#include "sim/report/html.hpp"

using nlohmann::json;
using tilesim::test::slurp;

namespace {

namespace fs = std::filesystem;

const fs::path kData = fs::path(TILESIM_TEST_DIR) / "data" / "report";

/// The browser: $TILESIM_CHROMIUM, else Debian's `chromium` (or `chromium-browser`) on PATH.
std::string chromium() {
  if (const char* env = std::getenv("TILESIM_CHROMIUM"); env && *env) return env;
  for (const char* name : {"chromium", "chromium-browser"})
    if (std::system((std::string("command -v ") + name + " > /dev/null 2>&1").c_str()) == 0) return name;
  FAIL("chromium not found: the HTML report test needs Debian's chromium; run scripts/install-deps.sh "
       "(or set TILESIM_CHROMIUM to a Chromium binary)");
  return "";
}

/// Writes the report of `input` (OUTDIR or summary.json) and returns the DOM chromium renders.
std::string render(const fs::path& input, const fs::path& dir) {
  const std::string browser = chromium();
  const fs::path page = dir / "report.html";
  const auto r = tilesim::test::run_tilesim("report " + input.string() + " -q -o " + page.string());
  REQUIRE(r.out == "");
  REQUIRE(r.code == 0);
  // A throwaway HOME and profile: CI runs as root in a bare container (hence --no-sandbox too).
  const fs::path home = dir / "home";
  fs::create_directories(home);
  const fs::path dom = dir / "dom.html", log = dir / "chromium.log";
  const std::string cmd = "HOME=" + home.string() + " timeout 120 " + browser +
                          " --headless --no-sandbox --disable-gpu --disable-dev-shm-usage --no-first-run"
                          " --user-data-dir=" + (home / "profile").string() +
                          " --virtual-time-budget=5000 --dump-dom file://" + fs::absolute(page).string() + " > " +
                          dom.string() + " 2> " + log.string();
  const int status = std::system(cmd.c_str());
  INFO("chromium's stderr (" << log << "):\n" << slurp(log).substr(0, 4000));
  REQUIRE(WEXITSTATUS(status) == 0);
  const std::string text = slurp(dom);
  REQUIRE(text.size() > 1000);
  return text;
}

std::string unescape(std::string s) {
  static const std::pair<const char*, const char*> entities[] = {
      {"&lt;", "<"}, {"&gt;", ">"}, {"&quot;", "\""}, {"&#39;", "'"}, {"&nbsp;", "\u00a0"}, {"&amp;", "&"}};
  for (const auto& [from, to] : entities)
    for (auto pos = s.find(from); pos != std::string::npos; pos = s.find(from, pos + 1)) s.replace(pos, std::strlen(from), to);
  return s;
}

/// The value of attribute `name` in a tag's text ("" when absent).
std::string attribute(const std::string& tag, const std::string& name) {
  const std::string key = " " + name + "=\"";
  const auto pos = tag.find(key);
  if (pos == std::string::npos) return "";
  const auto end = tag.find('"', pos + key.size());
  return unescape(tag.substr(pos + key.size(), end - pos - key.size()));
}

struct Cell {
  std::size_t point;
  std::string field, text;
};

/// The <td data-point data-field> cells of `html` (cells hold text only, no child elements).
std::vector<Cell> cells(const std::string& html) {
  std::vector<Cell> out;
  for (auto pos = html.find("<td"); pos != std::string::npos; pos = html.find("<td", pos + 1)) {
    const auto tag_end = html.find('>', pos);
    const std::string tag = html.substr(pos, tag_end - pos);
    const std::string point = attribute(tag, "data-point");
    if (point.empty()) continue;
    const auto close = html.find("</td>", tag_end);
    out.push_back({std::stoul(point), attribute(tag, "data-field"), unescape(html.substr(tag_end + 1, close - tag_end - 1))});
  }
  return out;
}

/// The markup of the element whose opening tag holds `id="ID"`, up to the next `</TAG>`.
std::string element(const std::string& dom, const std::string& tag, const std::string& id) {
  const auto at = dom.find("id=\"" + id + "\"");
  if (at == std::string::npos) return "";
  const auto begin = dom.rfind("<" + tag, at);
  const auto end = dom.find("</" + tag + ">", at);
  return dom.substr(begin, end - begin);
}

/// The data-point of each <tr> of a table, in order.
std::vector<std::size_t> row_points(const std::string& table, std::vector<std::size_t>* baselines) {
  std::vector<std::size_t> out;
  for (auto pos = table.find("<tr "); pos != std::string::npos; pos = table.find("<tr ", pos + 1)) {
    const std::string tag = table.substr(pos, table.find('>', pos) - pos);
    const std::string p = attribute(tag, "data-point");
    if (p.empty()) continue;
    out.push_back(std::stoul(p));
    if (attribute(tag, "data-baseline") == "1") baselines->push_back(out.back());
  }
  return out;
}

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto pos = text.find(what); pos != std::string::npos; pos = text.find(what, pos + 1)) ++n;
  return n;
}

/// The checks every rendered report passes: rendered, no error, the tables equal the summary.
void check_page(const std::string& dom, const json& s) {
  const auto body = dom.find("<body");
  REQUIRE(body != std::string::npos);
  const std::string body_tag = dom.substr(body, dom.find('>', body) - body);
  const std::string errors = element(dom, "pre", "errors");
  INFO("#errors: " << errors);
  CHECK(errors == "<pre id=\"errors\">");  // empty
  REQUIRE(attribute(body_tag, "data-ready") == "1");

  // Every cell with data-point/data-field shows report_cell() of its point.
  const std::vector<Cell> all = cells(dom);
  std::map<std::string, std::size_t> per_field;
  for (const Cell& c : all) {
    REQUIRE(c.point < s["points"].size());
    INFO("point " << c.point << ", field " << c.field);
    CHECK(c.text == tilesim::report_cell(s["points"][c.point], c.field));
    ++per_field[c.field];
  }
  // The table of all points: one row per point, in sweep order.
  std::vector<std::size_t> baselines;
  const std::vector<std::size_t> rows = row_points(element(dom, "table", "all-points"), &baselines);
  REQUIRE(rows.size() == s["points"].size());
  for (std::size_t i = 0; i < rows.size(); ++i) CHECK(rows[i] == i);
  CHECK(per_field["label"] == s["points"].size());
  CHECK(per_field["tail_lost_us"] == s["points"].size());
  // One table per group, fastest first as in summary.groups, with its baseline marked.
  for (std::size_t g = 0; g < s["groups"].size(); ++g) {
    const json& group = s["groups"][g];
    baselines.clear();
    const auto order = row_points(element(dom, "table", "group-" + std::to_string(g)), &baselines);
    CHECK(order == group["points"].get<std::vector<std::size_t>>());
    if (group["baseline"].is_null()) CHECK(baselines.empty());
    else CHECK(baselines == std::vector<std::size_t>{group["baseline"].get<std::size_t>()});
  }
}

}  // namespace

TEST_CASE("report in chromium: a sweep run end to end renders without errors, draws the charts, "
          "tables match summary.json", "[report][browser]") {
  const fs::path dir = tilesim::test::scratch_dir() / "browser-sweep";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const fs::path out = dir / "sweep";
  const auto run = tilesim::test::run_tilesim("run " + (kData / "sweep.yaml").string() + " -o " + out.string() + " -q -j 2");
  INFO(run.out);
  REQUIRE(run.code == 0);
  const json s = json::parse(slurp(out / "summary.json"));
  const std::string dom = render(out, dir);
  check_page(dom, s);

  std::size_t compared = 0;
  for (const json& p : s["points"]) compared += p.contains("comparison") && p["comparison"].is_object();
  REQUIRE(compared > 0);
  CHECK(count(element(dom, "table", "pivot"), "data-field=\"speedup\"") == compared);
  for (const std::string field : {"point", "time_us", "dram_mb", "dram_over_bound", "l2_hit_pct", "speedup", "rank", "note"})
    CHECK(count(dom, "data-field=\"" + field + "\"") >= compared);

  // Every chart container holds the SVG C3 drew into it, with shapes in it.
  const std::vector<std::string> charts = {"chart-speedup",   "chart-dram", "chart-hitrate-0",  "chart-hitrate-1",
                                           "chart-waves",     "chart-tail", "chart-wave-detail"};
  for (std::size_t i = 0; i < charts.size(); ++i) {
    const auto at = dom.find("id=\"" + charts[i] + "\"");
    INFO(charts[i]);
    REQUIRE(at != std::string::npos);
    const auto next = i + 1 < charts.size() ? dom.find("id=\"" + charts[i + 1] + "\"") : std::string::npos;
    const std::string chart = dom.substr(at, next == std::string::npos ? std::string::npos : next - at);
    CHECK(count(chart, "<svg") == 1);
    CHECK(count(chart, "c3-shape ") > 0);
  }
  CHECK(count(dom, "<svg") == charts.size());
  // Grouped bars: one per compared point; hit-rate lines: one per order in each (N, K) slice.
  const auto speedup_at = dom.find("id=\"chart-speedup\"");
  const std::string speedup = dom.substr(speedup_at, dom.find("id=\"chart-dram\"") - speedup_at);
  CHECK(count(speedup, " c3-bar c3-bar-") == compared);
  const auto hit_at = dom.find("id=\"chart-hitrate-0\"");
  const std::string hit = dom.substr(hit_at, dom.find("id=\"chart-hitrate-1\"") - hit_at);
  CHECK(count(hit, "class=\"c3-chart-line c3-target") == s["axes"][2]["labels"].size());
}

TEST_CASE("report in chromium: a sweep that compares nothing and keeps M fixed renders too", "[report][browser]") {
  // The points of one M, no compared axis: no groups, no speedups, hit rate vs M not applicable.
  json s = json::parse(slurp(kData / "gemm-orders" / "summary.json"));
  json points = json::array();
  for (json p : s["points"])
    if (p["axes"]["workload.m"] == "1024") {
      p["index"] = points.size();
      p.erase("comparison");
      points.push_back(p);
    }
  s["points"] = points;
  s["axes"][0]["labels"] = {"1024"};
  s["compare"] = nullptr;
  s["groups"] = json::array();
  s["experiment"] = "no-compare </script> & <!-- \u00b5";
  const fs::path dir = tilesim::test::scratch_dir() / "browser-flat";
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::ofstream(dir / "summary.json") << s.dump(1);
  const std::string dom = render(dir, dir);
  check_page(dom, s);
  CHECK(dom.find("not applicable, workload.m is 1024 at every point") != std::string::npos);
  CHECK(dom.find("id=\"pivot\"") == std::string::npos);
  CHECK(dom.find("<h1>tilesim report: no-compare &lt;/script&gt; &amp; &lt;!-- \u00b5</h1>") != std::string::npos);
  for (const char* chart : {"chart-dram", "chart-waves", "chart-tail", "chart-wave-detail"})
    CHECK(dom.find(std::string("id=\"") + chart + "\"") != std::string::npos);
  CHECK(count(dom, "<svg") == 4);
}
