// The HTML report page: a fixed skeleton, the embedded scripts and styles
// (sim/report/html_assets.hpp), and the summary as JSON data. All rendering happens in the
// page's own script, so this file only assembles text and escapes what it inlines.
#include "sim/report/html.hpp"

#include <cctype>
#include <stdexcept>

#include "sim/report/html_assets.hpp"

namespace tilesim {

namespace {

void replace_all(std::string& s, const std::string& from, const std::string& to) {
  for (std::size_t pos = s.find(from); pos != std::string::npos; pos = s.find(from, pos + to.size()))
    s.replace(pos, from.size(), to);
}


}  // namespace

const std::string& inline_safe(const std::string& text, const std::string& tag) {
  const std::string end = "</" + tag;
  for (std::size_t pos = text.find("</"); pos != std::string::npos; pos = text.find("</", pos + 2)) {
    std::string candidate = text.substr(pos, end.size());
    for (char& c : candidate) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (candidate == end) throw std::logic_error("an embedded page asset contains </" + tag);
  }
  return text;
}

std::string html_escaped(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string json_for_script(const nlohmann::json& j) {
  // Non-ASCII stays UTF-8 (the page declares its charset); '<' only occurs inside JSON strings,
  // where "\/" and "\u003c" are valid escapes of '/' and '<'.
  std::string text = j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  replace_all(text, "</", "<\\/");
  replace_all(text, "<!--", "\\u003c!--");
  return text;
}

std::string html_report(const nlohmann::json& summary) {
  namespace a = report_assets;
  const std::string title = "tilesim report: " + summary.at("experiment").get<std::string>();
  std::string page;
  page.reserve(a::d3_js().size() + a::c3_js().size() + 1024 * 1024);
  page += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  page += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
  page += "<meta name=\"generator\" content=\"tilesim " TILESIM_VERSION "\">\n";
  page += "<title>" + html_escaped(title) + "</title>\n";
  page += "<style>\n" + inline_safe(a::c3_css(), "style") + "\n</style>\n";
  page += "<style>\n" + inline_safe(a::page_css(), "style") + "\n</style>\n";
  page += "</head>\n<body>\n";
  // #errors and the script that fills it come first, so that an error anywhere below (a
  // library, the data, the rendering) is shown on the page and seen by the browser test.
  page += "<pre id=\"errors\"></pre>\n";
  page += "<script>\n" + inline_safe(a::prelude_js(), "script") + "\n</script>\n";
  page += "<noscript><p>This report draws its tables and charts with JavaScript; enable it to see them.</p></noscript>\n";
  page += "<main id=\"report\"></main>\n";
  page += "<script type=\"application/json\" id=\"summary\">" + json_for_script(summary) + "</script>\n";
  page += "<script>\n" + inline_safe(a::d3_js(), "script") + "\n</script>\n";
  page += "<script>\n" + inline_safe(a::c3_js(), "script") + "\n</script>\n";
  page += "<script>\n" + inline_safe(a::page_js(), "script") + "\n</script>\n";
  page += "</body>\n</html>\n";
  return page;
}

}  // namespace tilesim
