// The explorer page: a fixed skeleton, the embedded libraries, scripts and styles, the data as
// JSON and the replay module as base64. All drawing happens in the page's scripts
// (sim/tools/explore/assets), so this file only assembles text and escapes what it inlines.
#include "sim/tools/explore/page.hpp"

#include <cctype>
#include <stdexcept>

#include "sim/tools/explore/page_assets.hpp"
#include "sim/tools/explore/wasm_module.hpp"
#include "sim/report/html.hpp"
#include "sim/report/html_assets.hpp"

namespace tilesim::explore {

namespace {

std::string script(const std::string& text) { return "<script>\n" + inline_safe(text, "script") + "\n</script>\n"; }

std::string page_title(const nlohmann::json& views) {
  std::string title = "tilesim explore:";
  for (std::size_t i = 0; i < views.size(); ++i) {
    const nlohmann::json& v = views[i];
    std::string name = v.value("label", "");
    if (name.empty()) name = v.value("experiment", "view " + std::to_string(i));
    title += (i ? " vs " : " ") + name;
  }
  return title;
}

}  // namespace

std::string explore_page(const nlohmann::json& data) {
  namespace a = explore_assets;
  namespace r = report_assets;
  if (!data.is_object() || !data.contains("views") || !data["views"].is_array() || data["views"].empty())
    throw std::invalid_argument("explore_page: the data has no views");
  bool manual = false;
  for (const nlohmann::json& v : data["views"]) manual = manual || (v.contains("manual") && v["manual"].is_object());

  const std::string json = json_for_script(data);
  std::string page;
  page.reserve(json.size() + r::d3_js().size() + a::replay_wasm_base64().size() + 256 * 1024);
  page += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  page += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
  page += "<meta name=\"generator\" content=\"tilesim " TILESIM_VERSION "\">\n";
  page += "<title>" + html_escaped(page_title(data["views"])) + "</title>\n";
  page += "<style>\n" + inline_safe(a::page_css(), "style") + "\n</style>\n";
  page += "</head>\n<body>\n";
  // #errors and the script that fills it come first, so that an error anywhere below (a
  // library, the data, the drawing, the wasm module) is shown and seen by the browser tests.
  page += "<pre id=\"errors\"></pre>\n";
  page += script(r::prelude_js());
  page += "<noscript><p>The explorer draws everything with JavaScript; enable it to see the page.</p></noscript>\n";
  page += "<main id=\"explore\"></main>\n";
  page += "<script type=\"application/json\" id=\"explore-data\">" + json + "</script>\n";
  // The module only when a view has a manual mode: it is the bulk of a small page otherwise.
  // Base64 has no '<', so it cannot close the element.
  page += "<script type=\"application/octet-stream\" id=\"explore-wasm\">";
  if (manual) page += a::replay_wasm_base64();
  page += "</script>\n";
  page += script(r::d3_js());
  for (const std::string* js : {&a::replay_js(), &a::util_js(), &a::grid_js(), &a::grid_canvas_js(), &a::heatmap_js(),
                                &a::specs_js(), &a::panel_js(), &a::chart_js(), &a::gantt_js(), &a::view_js(),
                                &a::manual_layout_js(), &a::manual_js(), &a::main_js()})
    page += script(*js);
  page += "</body>\n</html>\n";
  return page;
}

}  // namespace tilesim::explore
