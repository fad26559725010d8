# The HTML report (`tilesim report`, sim/report/html*.cpp) is one self-contained page: the
# charting library (C3 on D3, Debian's libjs-c3 and libjs-d3) and the page's own JS and CSS are
# compiled into the binary, so that neither tilesim nor the page needs any file at run time.
# Included from CMakeLists.txt; sets TILESIM_REPORT_ASSETS_CPP, the generated source to add to
# tilesim_report. TILESIM_JS_DIR points elsewhere for a non-Debian layout.
set(TILESIM_JS_DIR "/usr/share/javascript" CACHE PATH
    "Folder holding d3/d3.min.js and c3/c3.min.js and c3/c3.min.css (Debian's libjs-d3 and libjs-c3)")

# name=file pairs: the generated file defines tilesim::report_assets::<name>().
set(TILESIM_REPORT_ASSETS
  "d3_js=${TILESIM_JS_DIR}/d3/d3.min.js"
  "c3_js=${TILESIM_JS_DIR}/c3/c3.min.js"
  "c3_css=${TILESIM_JS_DIR}/c3/c3.min.css"
  "prelude_js=${CMAKE_SOURCE_DIR}/sim/report/assets/prelude.js"
  "page_js=${CMAKE_SOURCE_DIR}/sim/report/assets/report.js"
  "page_css=${CMAKE_SOURCE_DIR}/sim/report/assets/report.css")

include(${CMAKE_CURRENT_LIST_DIR}/embed_assets.cmake)
tilesim_embed_assets(TILESIM_REPORT_ASSETS_CPP
  NAME "The HTML report"
  ASSETS ${TILESIM_REPORT_ASSETS}
  NAMESPACE tilesim::report_assets
  HEADER sim/report/html_assets.hpp
  LIST_FILE cmake/report_assets.cmake
  COMMENT "Embedding the HTML report's scripts and styles (C3, D3, sim/report/assets)"
  MISSING_HINT " On Debian, install libjs-c3 and libjs-d3 (scripts/install-deps.sh does), or set TILESIM_JS_DIR to a folder with d3/d3.min.js, c3/c3.min.js and c3/c3.min.css (C3 0.4, D3 3.5).")
