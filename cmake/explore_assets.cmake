# The explorer page (`tilesim explore`, sim/explore/page.cpp) is one self-contained file: its
# scripts and styles (sim/explore/assets/explore*.js, explore.css, and replay.js, which drives
# the WebAssembly module) are compiled into the binary, like the report's (report_assets.cmake).
# D3 and the error-recording prelude are the report's own copies (sim/report/html_assets.hpp),
# so the binary holds D3 once.
#
# Two roles in one file:
# - included from CMakeLists.txt: sets TILESIM_EXPLORE_ASSETS_CPP, the generated source to add
#   to tilesim_lib, and the rule that writes it;
# - run as a script (cmake -P, by that rule): writes OUT by running embed_report_assets.cmake
#   and moving its output into namespace tilesim::explore_assets (sim/explore/page_assets.hpp),
#   so that both pages share one embedding routine.
if(CMAKE_SCRIPT_MODE_FILE)
  cmake_minimum_required(VERSION 3.20)
  set(_final_out "${OUT}")
  set(OUT "${_final_out}.report")
  include(${CMAKE_CURRENT_LIST_DIR}/embed_report_assets.cmake)
  file(READ "${OUT}" text)
  foreach(pair IN ITEMS "sim/report/html_assets.hpp=sim/explore/page_assets.hpp"
                        "namespace tilesim::report_assets=namespace tilesim::explore_assets"
                        "cmake/report_assets.cmake=cmake/explore_assets.cmake")
    string(REGEX MATCH "^[^=]*" from "${pair}")
    string(REGEX REPLACE "^[^=]*=" "" to "${pair}")
    string(FIND "${text}" "${from}" at)
    if(at EQUAL -1)
      message(FATAL_ERROR "cmake/explore_assets.cmake: the output of embed_report_assets.cmake no longer "
                          "contains '${from}'; update the replacements here")
    endif()
    string(REPLACE "${from}" "${to}" text "${text}")
  endforeach()
  file(WRITE "${_final_out}.tmp" "${text}")
  execute_process(COMMAND ${CMAKE_COMMAND} -E copy_if_different "${_final_out}.tmp" "${_final_out}")
  return()
endif()

# name=file pairs: the generated file defines tilesim::explore_assets::<name>(). The page
# embeds the scripts in this order (page.cpp lists the same names).
set(_explore_dir ${CMAKE_SOURCE_DIR}/sim/explore/assets)
set(TILESIM_EXPLORE_ASSETS
  "replay_js=${_explore_dir}/replay.js"
  "util_js=${_explore_dir}/explore_util.js"
  "grid_js=${_explore_dir}/explore_grid.js"
  "grid_canvas_js=${_explore_dir}/explore_grid_canvas.js"
  "heatmap_js=${_explore_dir}/explore_heatmap.js"
  "specs_js=${_explore_dir}/explore_specs.js"
  "panel_js=${_explore_dir}/explore_panel.js"
  "chart_js=${_explore_dir}/explore_chart.js"
  "gantt_js=${_explore_dir}/explore_gantt.js"
  "view_js=${_explore_dir}/explore_view.js"
  "manual_js=${_explore_dir}/explore_manual.js"
  "main_js=${_explore_dir}/explore_main.js"
  "page_css=${_explore_dir}/explore.css")

set(_explore_asset_files "")
foreach(pair IN LISTS TILESIM_EXPLORE_ASSETS)
  string(REGEX REPLACE "^[^=]*=" "" file "${pair}")
  if(NOT EXISTS "${file}")
    message(FATAL_ERROR "The explorer page needs ${file}, which is missing")
  endif()
  list(APPEND _explore_asset_files "${file}")
endforeach()

set(TILESIM_EXPLORE_ASSETS_CPP ${CMAKE_BINARY_DIR}/generated/explore_assets.cpp)
string(REPLACE ";" "|" _explore_assets_arg "${TILESIM_EXPLORE_ASSETS}")
add_custom_command(
  OUTPUT ${TILESIM_EXPLORE_ASSETS_CPP}
  COMMAND ${CMAKE_COMMAND} "-DASSETS=${_explore_assets_arg}" -DOUT=${TILESIM_EXPLORE_ASSETS_CPP}
          -P ${CMAKE_SOURCE_DIR}/cmake/explore_assets.cmake
  DEPENDS ${_explore_asset_files} ${CMAKE_SOURCE_DIR}/cmake/explore_assets.cmake
          ${CMAKE_SOURCE_DIR}/cmake/embed_report_assets.cmake
  COMMENT "Embedding the explorer page's scripts and styles (sim/explore/assets)"
  VERBATIM)
