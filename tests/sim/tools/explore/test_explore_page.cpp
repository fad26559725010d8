// The explorer page as text (sim/tools/explore/page.hpp): the data round-trips through the inline
// JSON whatever its strings hold, every script is embedded once, and the wasm module is
// embedded exactly when a view has a manual mode. What the page draws is checked in Chromium
// (test_explore_page_browser.cpp).
#include <catch2/catch.hpp>

#include <stdexcept>

#include "sim/tools/explore/page.hpp"
#include "sim/tools/explore/page_assets.hpp"
#include "sim/tools/explore/wasm_module.hpp"

using nlohmann::json;

namespace {

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto pos = text.find(what); pos != std::string::npos; pos = text.find(what, pos + 1)) ++n;
  return n;
}

/// The text of <script ... id="ID"> up to its </script>.
std::string script_body(const std::string& page, const std::string& id) {
  const auto at = page.find("id=\"" + id + "\">");
  REQUIRE(at != std::string::npos);
  const auto begin = at + id.size() + 6;
  return page.substr(begin, page.find("</script>", begin) - begin);
}

/// A view with just what the page's text depends on (the browser tests use real ones).
json view(const std::string& label, bool manual) {
  json v = {{"label", label}, {"experiment", "exp " + label}, {"manual_note", manual ? "" : "needs a single GEMM"}};
  v["manual"] = manual ? json{{"kernel", 0}, {"grid_m", 1}, {"grid_n", 1}} : json(nullptr);
  return v;
}

}  // namespace

TEST_CASE("explore page: the data survives inline embedding, whatever its strings hold", "[explore][page]") {
  const std::string nasty = "</script><script>alert(1)</script> <!-- </SCRIPT \u00b5 & \"q\"";
  json data = {{"format", "tilesim-explore"}, {"version", 1}, {"views", json::array({view(nasty, false)})}};
  const std::string page = tilesim::explore::explore_page(data);
  const std::string body = script_body(page, "explore-data");
  CHECK(json::parse(body) == data);
  // The label can neither close the data element nor open a comment in it.
  CHECK(body.find("</") == std::string::npos);
  CHECK(body.find("<!--") == std::string::npos);
  CHECK(page.find("<title>tilesim explore: &lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;") != std::string::npos);
}

TEST_CASE("explore page: every script is embedded once, in order, and the wasm module only with a manual mode",
          "[explore][page]") {
  namespace a = tilesim::explore_assets;
  json one = {{"format", "tilesim-explore"}, {"version", 1}, {"views", json::array({view("a", false)})}};
  const std::string without = tilesim::explore::explore_page(one);
  CHECK(script_body(without, "explore-wasm").empty());
  CHECK(without.find("<pre id=\"errors\"></pre>") < without.find("<main id=\"explore\">"));
  std::size_t last = 0;
  for (const std::string* js : {&a::replay_js(), &a::util_js(), &a::grid_js(), &a::grid_canvas_js(), &a::heatmap_js(),
                                &a::specs_js(), &a::panel_js(), &a::chart_js(), &a::gantt_js(), &a::view_js(),
                                &a::manual_layout_js(), &a::manual_js(), &a::main_js()}) {
    REQUIRE(js->size() > 100);
    const auto at = without.find(*js);
    CHECK(at != std::string::npos);
    CHECK(at > last);
    CHECK(count(without, *js) == 1);
    last = at;
  }
  CHECK(without.find("d3={version:\"3.5") != std::string::npos);  // D3, before the page's scripts
  CHECK(without.find("d3={version:\"3.5") < without.find(a::util_js()));
  CHECK(without.find(a::page_css()) != std::string::npos);

  json two = {{"format", "tilesim-explore"}, {"version", 1}, {"views", json::array({view("a", false), view("b", true)})}};
  const std::string with = tilesim::explore::explore_page(two);
  CHECK(script_body(with, "explore-wasm") == a::replay_wasm_base64());
  CHECK(a::replay_wasm_base64().size() > 1000);
  CHECK(with.find("<title>tilesim explore: a vs b</title>") != std::string::npos);
}

TEST_CASE("explore page: data without views is a caller's error", "[explore][page]") {
  CHECK_THROWS_AS(tilesim::explore::explore_page(json::object()), std::invalid_argument);
  CHECK_THROWS_AS(tilesim::explore::explore_page(json{{"views", json::array()}}), std::invalid_argument);
}
