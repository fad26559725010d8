#pragma once
// The scripts and styles of the HTML report, compiled into the binary from files read at build
// time (cmake/report_assets.cmake): the page needs no file and no network when it is opened.
#include <string>

namespace tilesim::report_assets {

const std::string& d3_js();       ///< D3 3.5 (Debian's libjs-d3), which C3 draws with
const std::string& c3_js();       ///< C3 0.4 (Debian's libjs-c3), the charts
const std::string& c3_css();      ///< C3's stylesheet
const std::string& prelude_js();  ///< sim/report/assets/prelude.js: records errors into #errors
const std::string& page_js();     ///< sim/report/assets/report.js: renders the tables and charts
const std::string& page_css();    ///< sim/report/assets/report.css

}  // namespace tilesim::report_assets
