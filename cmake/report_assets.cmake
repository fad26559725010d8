# The HTML report (`tilesim report`, sim/report/html*.cpp) is one self-contained page: the
# charting library (C3 on D3, Debian's libjs-c3 and libjs-d3) and the page's own JS and CSS are
# compiled into the binary, so that neither tilesim nor the page needs any file at run time.
# Included from CMakeLists.txt; sets TILESIM_REPORT_ASSETS_CPP, the generated source to add to
# tilesim_lib. TILESIM_JS_DIR points elsewhere for a non-Debian layout.
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

set(_report_asset_files "")
foreach(pair IN LISTS TILESIM_REPORT_ASSETS)
  string(REGEX REPLACE "^[^=]*=" "" file "${pair}")
  if(NOT EXISTS "${file}")
    message(FATAL_ERROR "The HTML report needs ${file}, which is missing. On Debian, install "
                        "libjs-c3 and libjs-d3 (scripts/install-deps.sh does), or set TILESIM_JS_DIR to "
                        "a folder with d3/d3.min.js, c3/c3.min.js and c3/c3.min.css (C3 0.4, D3 3.5).")
  endif()
  list(APPEND _report_asset_files "${file}")
endforeach()

set(TILESIM_REPORT_ASSETS_CPP ${CMAKE_BINARY_DIR}/generated/report_assets.cpp)
string(REPLACE ";" "|" _report_assets_arg "${TILESIM_REPORT_ASSETS}")
add_custom_command(
  OUTPUT ${TILESIM_REPORT_ASSETS_CPP}
  COMMAND ${CMAKE_COMMAND} "-DASSETS=${_report_assets_arg}" -DOUT=${TILESIM_REPORT_ASSETS_CPP}
          -P ${CMAKE_SOURCE_DIR}/cmake/embed_report_assets.cmake
  DEPENDS ${_report_asset_files} ${CMAKE_SOURCE_DIR}/cmake/embed_report_assets.cmake
  COMMENT "Embedding the HTML report's scripts and styles (C3, D3, sim/report/assets)"
  VERBATIM)
