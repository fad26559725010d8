// The explorer page (`tilesim explore`) in a real browser: Debian's chromium, headless and
// offline, driven over the DevTools protocol by cdp_driver.py (Python 3 standard library, over
// --remote-debugging-pipe) with real mouse clicks and key presses. Each test writes a page with
// the real binary, runs a list of actions in the page and checks what the page showed against
// the data embedded in it; the manual-mode test also runs `tilesim run` on the exported order.
// Every test also requires a silent console: no exception, no console error, nothing in
// #errors, no network request. A missing chromium or python3 fails the test with the way to
// install it.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "tests/sim/cli_util.hpp"
#include "tests/sim/tools/explore/manual_util.hpp"

using nlohmann::json;
using tilesim::test::slurp;

namespace {

namespace fs = std::filesystem;

const fs::path kRoot = fs::path(TILESIM_TEST_DIR).parent_path();
const fs::path kDriver = fs::path(TILESIM_TEST_DIR) / "sim" / "tools" / "explore" / "cdp_driver.py";
const fs::path kExample = kRoot / "experiments" / "explore_gemm_3x3.yaml";

bool on_path(const std::string& name) {
  return std::system(("command -v " + name + " > /dev/null 2>&1").c_str()) == 0;
}

/// The browser: $TILESIM_CHROMIUM, else Debian's `chromium` (or `chromium-browser`) on PATH.
std::string chromium() {
  if (const char* env = std::getenv("TILESIM_CHROMIUM"); env && *env) return env;
  for (const char* name : {"chromium", "chromium-browser"})
    if (on_path(name)) return name;
  FAIL("chromium not found: the explorer's browser tests need Debian's chromium; run scripts/install-deps.sh "
       "(or set TILESIM_CHROMIUM to a Chromium binary)");
  return "";
}

std::string python() {
  if (const char* env = std::getenv("TILESIM_PYTHON"); env && *env) return env;
  if (on_path("python3")) return "python3";
  FAIL("python3 not found: the explorer's browser tests drive chromium with tests/sim/tools/explore/cdp_driver.py; "
       "install python3 (or set TILESIM_PYTHON)");
  return "";
}

fs::path fresh_dir(const std::string& name) {
  const fs::path dir = tilesim::test::scratch_dir() / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

/// `tilesim explore ARGS -o DIR/page.html`; returns the page's path.
fs::path write_page(const std::string& args, const fs::path& dir) {
  const fs::path page = dir / "page.html";
  const auto r = tilesim::test::run_tilesim("explore " + args + " -q -o " + page.string());
  INFO(r.out);
  REQUIRE(r.code == 0);
  return page;
}

/// The data embedded in the page (<script id="explore-data">).
json page_data(const fs::path& page) {
  const std::string html = slurp(page);
  const std::string open = "<script type=\"application/json\" id=\"explore-data\">";
  const auto begin = html.find(open);
  REQUIRE(begin != std::string::npos);
  const auto from = begin + open.size();
  return json::parse(html.substr(from, html.find("</script>", from) - from));
}

/// Runs `actions` in the page (cdp_driver.py) and returns one result per action. Fails unless
/// every action ran and the page stayed silent: no exception, console error, request, #errors.
json drive(const fs::path& page, const json& actions, const fs::path& dir, const fs::path& downloads = {}) {
  const std::string browser = chromium(), py = python();
  const fs::path script = dir / "actions.json", out = dir / "result.json";
  std::ofstream(script) << actions.dump(1);
  json all = actions;
  all.push_back({{"op", "text"}, {"selector", "#errors"}});
  std::ofstream(script) << all.dump(1);
  fs::remove(out);
  std::string cmd = "timeout 300 " + py + " " + kDriver.string() + " --chromium " + browser + " --page " +
                    page.string() + " --script " + script.string() + " --out " + out.string() + " --timeout 240";
  if (!downloads.empty()) cmd += " --downloads " + downloads.string();
  cmd += " > " + (dir / "driver.log").string() + " 2>&1";
  const int status = std::system(cmd.c_str());
  INFO("driver: " << slurp(dir / "driver.log").substr(0, 4000) << "\nchromium: "
                  << slurp(fs::path(out.string() + ".chromium.log")).substr(0, 4000));
  REQUIRE(fs::exists(out));
  json r = json::parse(slurp(out));
  INFO("result: " << r.dump(1).substr(0, 6000));
  CHECK(r["fatal"].is_null());
  REQUIRE(WEXITSTATUS(status) == 0);
  CHECK(r["exceptions"].empty());
  CHECK(r["console_errors"].empty());
  CHECK(r["network"].empty());
  REQUIRE(r["results"].size() == all.size());
  CHECK(r["results"].back() == "");  // #errors
  json results = r["results"];
  results.erase(results.size() - 1);
  return results;
}

json op(const std::string& name, json fields = json::object()) {
  fields["op"] = name;
  return fields;
}
json click(const std::string& selector) { return op("click", {{"selector", selector}}); }

json manual_cost() {
  return op("attrs", {{"selector", "#v0-manual-cost"}, {"names", {"data-steps", "data-read-bytes", "data-write-bytes"}}});
}
json final_cost() {
  return op("attrs", {{"selector", "#v0-manual-final"},
                      {"names", {"data-steps", "data-read-bytes", "data-write-bytes", "data-sectors", "data-hit-sectors"}}});
}

/// The page's final totals equal the run's: DRAM bytes read and written, L2 sectors and hits.
void check_same_cost(const json& shown, const json& run) {
  INFO("page " << shown.dump() << "\nrun " << run["total"].dump() << " " << run["kernels"][0]["l2"].dump());
  const json& l2 = run["kernels"][0]["l2"];
  CHECK(shown["data-read-bytes"] == std::to_string(run["total"]["dram_read_bytes"].get<std::uint64_t>()));
  CHECK(shown["data-write-bytes"] == std::to_string(run["total"]["dram_write_bytes"].get<std::uint64_t>()));
  CHECK(shown["data-sectors"] == std::to_string(l2["read_sectors"].get<std::uint64_t>() + l2["write_sectors"].get<std::uint64_t>()));
  CHECK(shown["data-hit-sectors"] ==
        std::to_string(l2["read_hit_sectors"].get<std::uint64_t>() + l2["write_hit_sectors"].get<std::uint64_t>()));
}

/// Appends the end of a manual-mode script: wait for the final totals, read them (final_cost),
/// click both exports, wait for the two downloads, read the order file's and the experiment's
/// texts: six results, in that order after the wait.
void finish_and_export(json& actions) {
  actions.push_back(op("wait", {{"expr", "!!document.getElementById('v0-manual-final')"}, {"timeout", 120}}));
  actions.push_back(final_cost());
  actions.push_back(click("#v0-manual-export-order"));
  actions.push_back(click("#v0-manual-export-yaml"));
  actions.push_back(op("wait_downloads", {{"count", 2}}));
  actions.push_back(op("text", {{"selector", "pre#v0-export-order"}}));
  actions.push_back(op("text", {{"selector", "pre#v0-export-yaml"}}));
}

/// What view `v` shows at its current step (checked by check_state).
json state(int v) {
  const std::string p = "v" + std::to_string(v) + "-";
  return op("eval", {{"expr", "(() => { const g = id => document.getElementById('" + p +
                                  "' + id); return {step: Number(g('step-slider').value), read: "
                                  "g('cum-dram').getAttribute('data-read-bytes'), write: "
                                  "g('cum-dram').getAttribute('data-write-bytes'), rate: "
                                  "Number(g('cum-hit').getAttribute('data-rate')), pending: "
                                  "document.querySelectorAll('#" + p + "kernel-0 rect.pending').length}; })()"}});
}

/// The counters shown equal the data's at `step`, as exact integers.
void check_state(const json& shown, const json& view, std::size_t step) {
  INFO("shown " << shown.dump() << ", expected step " << step);
  const json& s = view["steps"];
  REQUIRE(shown["step"] == step);
  CHECK(shown["read"] == std::to_string(s["dram_read_bytes"][step].get<std::uint64_t>()));
  CHECK(shown["write"] == std::to_string(s["dram_write_bytes"][step].get<std::uint64_t>()));
  const double sectors = s["sectors"][step].get<double>();
  CHECK(shown["rate"].get<double>() == Approx(sectors > 0 ? s["hit_sectors"][step].get<double>() / sectors : 0.0));
  // Single-kernel views: every tile after this step is drawn as not dispatched yet.
  if (view["kernels"].size() == 1) CHECK(shown["pending"] == s["t_ns"].size() - 1 - step);
}

/// The step of the block that computed tile (m, n) of kernel 0.
std::size_t step_of(const json& view, std::uint64_t m, std::uint64_t n) {
  const json& b = view["blocks"];
  for (std::size_t i = 0; i < b["tile_m"].size(); ++i)
    if (b["kernel"][i] == 0 && b["tile_m"][i] == m && b["tile_n"][i] == n) return i;
  FAIL("no block computes tile " << m << "," << n);
  return 0;
}

}  // namespace

TEST_CASE("explore in chromium: stepping forward and back shows the data's cumulative DRAM bytes",
          "[explore][browser]") {
  const fs::path dir = fresh_dir("explore-steps");
  // The example on a 16x16 grid: 256 dispatches over two waves of 132 SMs.
  const fs::path page = write_page(kExample.string() + " --set workload.m=2048 --set workload.n=2048", dir);
  const json data = page_data(page);
  REQUIRE(data["views"].size() == 1);
  const json& v = data["views"][0];
  const std::size_t n = v["steps"]["t_ns"].size();
  REQUIRE(n == 256);
  const std::size_t tile_step = step_of(v, 5, 7);

  const json actions = {
      op("wait_ready"), state(0),                                                           // 1: step 0
      click("#v0-step-next"), state(0), click("#v0-step-next"), state(0),                   // 3: 1, 5: 2
      click("#v0-step-next"), state(0), click("#v0-step-prev"), state(0),                   // 7: 3, 9: 2
      op("key", {{"selector", "#v0-step-slider"}, {"key", "End"}}), state(0),               // 11: last
      op("key", {{"selector", "#v0-step-slider"}, {"key", "ArrowLeft"}}), state(0),         // 13: last - 1
      click("#v0-step-prev"), state(0),                                                     // 15: last - 2
      click("#v0-kernel-0 [data-tile=\"5,7,0\"]"), state(0),                                // 17: the tile's step
      op("count", {{"selector", "#v0-kernel-0 [data-tile]"}}),                              // 18
      op("count", {{"selector", "#v0-kernel-0 .step-numbers text"}}),                       // 19
      // Play from the start, let it run, pause: the counters still match the step shown.
      op("key", {{"selector", "#v0-step-slider"}, {"key", "Home"}}), click("#v0-step-play"),
      op("wait", {{"expr", "Number(document.getElementById('v0-step-slider').value) >= 20"}, {"timeout", 20}}),
      click("#v0-step-play"), state(0),                                                     // 24
      // Every colour mode draws.
      op("eval", {{"expr", "(() => { const s = document.getElementById('v0-color-by'); const out = []; "
                           "for (const m of ['time', 'hit', 'sm', 'order']) { s.value = m; "
                           "s.dispatchEvent(new Event('change')); out.push(document.querySelector("
                           "'#v0-kernel-0 [data-tile=\"0,0,0\"]').getAttribute('fill')); } return out; })()"}}),  // 25
      op("count", {{"selector", "#v0 canvas.gantt"}}), op("count", {{"selector", "#v0 svg.step-chart path.line-read"}}),
      op("count", {{"selector", "#v0-kernel-0 canvas.heatmap"}})};                          // 26, 27, 28
  const json r = drive(page, actions, dir);
  CHECK(r[0] == "1");
  check_state(r[1], v, 0);
  check_state(r[3], v, 1);
  check_state(r[5], v, 2);
  check_state(r[7], v, 3);
  check_state(r[9], v, 2);
  check_state(r[11], v, n - 1);
  check_state(r[13], v, n - 2);
  check_state(r[15], v, n - 3);
  check_state(r[17], v, tile_step);
  CHECK(r[18] == n);
  CHECK(r[19] == n);  // up to 400 tiles, each step is numbered on its tile
  REQUIRE(r[24].is_object());
  check_state(r[24], v, r[24]["step"].get<std::size_t>());
  CHECK(r[24]["step"].get<std::size_t>() >= 20);
  REQUIRE(r[25].size() == 4);
  CHECK(r[25][0] != r[25][2]);  // dispatch time and SM colour tile (0,0) differently
  CHECK(r[26] == 1);
  CHECK(r[27] == 1);
  CHECK(r[28] == 2);  // A and B
}

TEST_CASE("explore in chromium: a 3x3 order clicked by hand costs what `tilesim run` says", "[explore][browser]") {
  const fs::path dir = fresh_dir("explore-manual");
  const fs::path downloads = dir / "downloads";
  fs::create_directories(downloads);
  const fs::path page = write_page(kExample.string(), dir);
  const json data = page_data(page);
  const json& v = data["views"][0];
  REQUIRE(v["manual"].is_object());
  REQUIRE(v["manual"]["grid_m"] == 3);
  REQUIRE(v["manual"]["grid_n"] == 3);

  const auto tile = [](int m, int n) {
    return click("#v0-manual-grid [data-tile=\"" + std::to_string(m) + "," + std::to_string(n) + "\"]");
  };
  const json cost = op("attrs", {{"selector", "#v0-manual-cost"}, {"names", {"data-steps", "data-read-bytes", "data-write-bytes"}}});
  // A snake through the rows, with an undo and a click on a tile already in the order.
  json actions = {op("wait_ready"), cost};
  const std::vector<std::pair<int, int>> first = {{0, 0}, {0, 1}, {0, 2}, {1, 2}};
  for (auto [m, n] : first) {
    actions.push_back(tile(m, n));
    actions.push_back(cost);
  }
  actions.push_back(click("#v0-manual-undo"));  // 10
  actions.push_back(cost);                      // 11
  actions.push_back(tile(0, 0));                // 12: already clicked, ignored
  actions.push_back(cost);                      // 13
  const std::vector<std::pair<int, int>> rest = {{1, 2}, {1, 1}, {1, 0}, {2, 0}, {2, 1}, {2, 2}};
  for (auto [m, n] : rest) {
    actions.push_back(tile(m, n));
    actions.push_back(cost);
  }                                                                                            // 14..25
  finish_and_export(actions);                                                                   // 26..32
  actions.push_back(op("count", {{"selector", "#v0-manual-grid .step-numbers text"}}));         // 33
  // Undo after the flush, then the simulated order in one click, then reset.
  actions.push_back(click("#v0-manual-undo"));                                                  // 34
  actions.push_back(op("count", {{"selector", "#v0-manual-final"}}));                           // 35
  actions.push_back(cost);                                                                      // 36
  actions.push_back(click("#v0-manual-simulated"));                                             // 37
  actions.push_back(op("attrs", {{"selector", "#v0-manual-final"}, {"names", {"data-steps"}}}));  // 38
  actions.push_back(op("text", {{"selector", "pre#v0-export-order"}}));                         // 39
  actions.push_back(click("#v0-manual-reset"));                                                 // 40
  actions.push_back(cost);                                                                      // 41
  actions.push_back(op("count", {{"selector", "#v0-manual-grid rect.clicked"}}));               // 42
  const json r = drive(page, actions, dir, downloads);
  CHECK(r[0] == "1");
  CHECK(r[1]["data-steps"] == "0");
  CHECK(r[1]["data-read-bytes"] == "0");
  // Each click adds one tile and never lowers the running cost.
  std::uint64_t last_read = 0;
  for (std::size_t i = 0; i < first.size(); ++i) {
    const json& c = r[3 + 2 * i];
    INFO("after click " << i << ": " << c.dump());
    CHECK(c["data-steps"] == std::to_string(i + 1));
    const std::uint64_t read = std::stoull(c["data-read-bytes"].get<std::string>());
    CHECK(read >= last_read);
    last_read = read;
  }
  CHECK(std::stoull(r[3]["data-read-bytes"].get<std::string>()) > 0);
  CHECK(r[11] == r[7]);   // undo: back to the cost after three tiles
  CHECK(r[13] == r[11]);  // re-clicking a tile of the order does nothing
  CHECK(r[25]["data-steps"] == "9");
  const json& final_attrs = r[27];
  CHECK(final_attrs["data-steps"] == "9");

  // The exported order is the one clicked; the downloads hold the texts shown.
  const std::string order = r[31], yaml = r[32];
  CHECK(order.rfind("# ", 0) == 0);
  std::string expected = "grid 3 3\n";
  for (auto [m, n] : std::vector<std::pair<int, int>>{{0, 0}, {0, 1}, {0, 2}, {1, 2}, {1, 1}, {1, 0}, {2, 0}, {2, 1}, {2, 2}})
    expected += std::to_string(m) + " " + std::to_string(n) + "\n";
  CHECK(order.substr(order.find("grid ")) == expected);
  CHECK(yaml.find("@ORDER_FILE@") == std::string::npos);
  CHECK(yaml.find(v["manual"]["order_file"].get<std::string>()) != std::string::npos);
  REQUIRE(r[30].size() == 2);
  for (const json& d : r[30]) CHECK(d["state"] == "completed");
  CHECK(slurp(downloads / v["manual"]["order_file"].get<std::string>()) == order);
  CHECK(r[33] == 9);

  CHECK(r[35] == 0);  // no final totals for 8 tiles
  CHECK(r[36]["data-steps"] == "8");
  CHECK(r[36]["data-read-bytes"] == r[23]["data-read-bytes"]);  // the cost after 8 clicks, replayed from cold
  CHECK(r[38]["data-steps"] == "9");
  std::string simulated = "grid 3 3\n";
  for (std::size_t i = 0; i < v["blocks"]["tile_m"].size(); ++i)
    simulated += std::to_string(v["blocks"]["tile_m"][i].get<int>()) + " " + std::to_string(v["blocks"]["tile_n"][i].get<int>()) + "\n";
  CHECK(r[39].get<std::string>().substr(r[39].get<std::string>().find("grid ")) == simulated);
  CHECK(r[41]["data-steps"] == "0");
  CHECK(r[41]["data-read-bytes"] == "0");
  CHECK(r[42] == 0);

  // `tilesim run` on the exported experiment reports the page's final cost.
  check_same_cost(final_attrs, tilesim::test::run_manual(dir / "run", v["manual"], yaml, order));
}

TEST_CASE("explore in chromium: the comparison view draws both experiments side by side", "[explore][browser]") {
  const fs::path dir = fresh_dir("explore-compare");
  // Grouped against Hilbert on a 16x16 grid: the example with its order and size changed.
  std::string text = slurp(kExample);
  const auto order_at = text.find("order: {kind: row}");
  REQUIRE(order_at != std::string::npos);
  text.replace(text.find("m: 384"), 6, "m: 2048");
  text.replace(text.find("n: 384"), 6, "n: 2048");
  std::string grouped = text, hilbert = text;
  grouped.replace(grouped.find("order: {kind: row}"), 18, "order: {kind: grouped, group_m: 4}");
  hilbert.replace(hilbert.find("order: {kind: row}"), 18, "order: {kind: hilbert}");
  std::ofstream(dir / "grouped.yaml") << grouped;
  std::ofstream(dir / "hilbert.yaml") << hilbert;
  const fs::path page = write_page((dir / "grouped.yaml").string() + " --compare " + (dir / "hilbert.yaml").string(), dir);
  const json data = page_data(page);
  REQUIRE(data["views"].size() == 2);

  const json actions = {op("wait_ready"),
                        op("count", {{"selector", "section.view"}}),
                        op("count", {{"selector", "#v1 [data-tile]"}}),
                        op("count", {{"selector", "#compare tr"}}),
                        click("#v1-step-next"), click("#v1-step-next"), state(1), state(0),
                        click("#link-steps"), click("#v0-step-next"), state(0), state(1)};
  const json r = drive(page, actions, dir);
  CHECK(r[0] == "1");
  CHECK(r[1] == 2);
  CHECK(r[2] == 256 + 256);  // the kernel grid and the manual grid
  CHECK(r[3] == 5);
  check_state(r[6], data["views"][1], 2);
  check_state(r[7], data["views"][0], 0);
  // Linked: stepping view 0 moves view 1 to the same step.
  check_state(r[10], data["views"][0], 1);
  check_state(r[11], data["views"][1], 1);
}

TEST_CASE("explore in chromium: a 3x3+3x3 chain order clicked by hand costs what `tilesim run` says",
          "[explore][browser]") {
  const fs::path dir = fresh_dir("explore-chain");
  const fs::path downloads = dir / "downloads";
  fs::create_directories(downloads);
  // Simulated with `after: half_row`: the simulation's tickets put a row's consumer tiles
  // before its last producer tile, which "use the simulated order" has to move.
  const fs::path page = write_page((kRoot / "experiments" / "explore_ffn_chain_3x3.yaml").string() +
                                   " --set sync.after=half_row", dir);
  const json data = page_data(page);
  const json& m = data["views"][0]["manual"];
  REQUIRE(m.is_object());
  REQUIRE(m["chain"]["consumer_n"] == 3);

  const auto tile = [](char part, int row, int col) {
    return click(std::string("#v0-manual-grid-") + part + " [data-tile=\"" + std::to_string(row) + "," + std::to_string(col) + "\"]");
  };
  const json blocked = op("count", {{"selector", "#v0-manual-grid-c rect.blocked"}});
  const json refused = op("attrs", {{"selector", "#v0-manual-status"}, {"names", {"data-refused"}}});
  json actions = {op("wait_ready"), blocked,                                          // 0, 1
                  tile('c', 0, 0), refused, manual_cost(),                             // 2, 3, 4: refused
                  tile('p', 0, 2), tile('p', 0, 1), tile('c', 0, 1), refused, blocked, // 5..9: row 0 incomplete
                  tile('p', 0, 0), blocked, tile('c', 0, 1), refused, manual_cost(),   // 10..14: row 0 complete
                  click("#v0-manual-undo"), manual_cost(), blocked};                   // 15, 16, 17
  // The rest: an order that keeps a row of H in the L2 while its consumer tiles read it.
  const std::vector<std::string> rest = {"c01", "c00", "c02", "p12", "p11", "p10", "c12", "c11", "c10",
                                         "p20", "p21", "p22", "c20", "c21", "c22"};
  for (const std::string& e : rest) actions.push_back(tile(e[0], e[1] - '0', e[2] - '0'));  // 18..32
  finish_and_export(actions);  // 33..39
  actions.push_back(op("count", {{"selector", "#v0-manual-grid-p rect.clicked"}}));          // 40
  actions.push_back(op("count", {{"selector", "#v0-manual-grid-c rect.clicked"}}));          // 41
  actions.push_back(click("#v0-manual-simulated"));                                          // 42
  actions.push_back(op("text", {{"selector", "pre#v0-export-order"}}));                      // 43
  const json r = drive(page, actions, dir, downloads);
  CHECK(r[0] == "1");
  CHECK(r[1] == 9);  // every consumer tile waits for its producer row
  CHECK(r[3]["data-refused"] == "consumer tile (0, 0)");
  CHECK(r[4]["data-steps"] == "0");
  CHECK(r[8]["data-refused"] == "consumer tile (0, 1)");
  CHECK(r[9] == 9);
  CHECK(r[11] == 6);  // row 0 placed: its three consumer tiles may follow
  CHECK(r[13]["data-refused"] == "");
  CHECK(r[14]["data-steps"] == "4");
  CHECK(std::stoull(r[14]["data-read-bytes"].get<std::string>()) > 0);
  CHECK(r[16]["data-steps"] == "3");
  CHECK(r[17] == 6);
  REQUIRE(r[34]["data-steps"] == "18");
  CHECK(r[40] == 9);
  CHECK(r[41] == 9);

  const std::string order = r[38], yaml = r[39];
  std::string expected = "chain 3 3 3\np 0 2\np 0 1\np 0 0\n";
  for (const std::string& e : rest) expected += std::string(1, e[0]) + " " + e[1] + " " + e[2] + "\n";
  CHECK(order.substr(order.find("chain ")) == expected);
  CHECK(slurp(downloads / "manual_chain_order.txt") == order);
  CHECK(yaml.find("manual_chain_order.txt") != std::string::npos);

  // The simulated tickets (p00 p01, then row 0's consumers, then p02 ...) made runnable: each
  // row's consumer tiles right after its last producer tile.
  const json& b = data["views"][0]["blocks"];
  CHECK(b["tile_z"][2] == 1);  // the simulation's third ticket is a consumer tile
  std::string rows = "chain 3 3 3\n";
  for (int row = 0; row < 3; ++row) {
    for (int c = 0; c < 3; ++c) rows += "p " + std::to_string(row) + " " + std::to_string(c) + "\n";
    for (int c = 0; c < 3; ++c) rows += "c " + std::to_string(row) + " " + std::to_string(c) + "\n";
  }
  CHECK(r[43].get<std::string>().substr(r[43].get<std::string>().find("chain ")) == rows);

  // `tilesim run` on the exported files (as downloaded) reports the page's cost.
  const json run = tilesim::test::run_manual(dir / "run", m, slurp(downloads / (data["views"][0]["experiment"].get<std::string>() + "-manual.yaml")), order);
  check_same_cost(r[34], run);
}

TEST_CASE("explore in chromium: manual mode on a 64x64 grid (4096 tiles) clicks, fills and matches `tilesim run`",
          "[explore][browser]") {
  const fs::path dir = fresh_dir("explore-manual-4096");
  // The example at 8192 x 8192 with a short K (8 k-steps) so that filling all 4096 tiles is quick.
  const fs::path page = write_page(kExample.string() + " --set workload.m=8192 --set workload.n=8192 --set workload.k=512", dir);
  const json data = page_data(page);
  const json& m = data["views"][0]["manual"];
  REQUIRE(m.is_object());
  REQUIRE(m["grid_m"] == 64);
  REQUIRE(m["grid_n"] == 64);
  const json actions = {op("wait_ready"),
                        op("count", {{"selector", "#v0-manual-grid rect[data-tile]"}}),
                        click("#v0-manual-grid [data-tile=\"63,63\"]"), click("#v0-manual-grid [data-tile=\"0,5\"]"),
                        manual_cost(),
                        op("attrs", {{"selector", "#v0-manual-grid [data-tile=\"0,5\"]"}, {"names", {"class"}}}),
                        click("#v0-manual-fill"),
                        op("wait", {{"expr", "!!document.getElementById('v0-manual-final')"}, {"timeout", 120}}),
                        final_cost(),
                        op("text", {{"selector", "pre#v0-export-order"}})};
  const json r = drive(page, actions, dir);
  CHECK(r[1] == 4096);
  CHECK(r[4]["data-steps"] == "2");
  CHECK(std::stoull(r[4]["data-read-bytes"].get<std::string>()) > 0);
  CHECK(r[5]["class"] == "clicked");
  REQUIRE(r[8]["data-steps"] == "4096");
  const std::string order = r[9];
  CHECK(order.find("grid 64 64\n63 63\n0 5\n0 0\n0 1\n") != std::string::npos);
  const json run = tilesim::test::run_manual(dir / "run", m, m["experiment_yaml"], order);
  check_same_cost(r[8], run);
}
