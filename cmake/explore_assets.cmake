# The explorer page (`tilesim explore`, sim/tools/explore/page.cpp) is one self-contained file: its
# scripts and styles (sim/tools/explore/assets/explore*.js, explore.css, and replay.js, which drives
# the WebAssembly module) are compiled into the binary, like the report's (report_assets.cmake).
# D3 and the error-recording prelude are the report's own copies (sim/report/html_assets.hpp),
# so the binary holds D3 once.
#
# name=file pairs: the generated file defines tilesim::explore_assets::<name>(). The page
# embeds the scripts in this order (page.cpp lists the same names).
set(_explore_dir ${CMAKE_SOURCE_DIR}/sim/tools/explore/assets)
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
  "manual_layout_js=${_explore_dir}/explore_manual_layout.js"
  "manual_js=${_explore_dir}/explore_manual.js"
  "main_js=${_explore_dir}/explore_main.js"
  "page_css=${_explore_dir}/explore.css")

include(${CMAKE_CURRENT_LIST_DIR}/embed_assets.cmake)
tilesim_embed_assets(TILESIM_EXPLORE_ASSETS_CPP
  NAME "The explorer page"
  ASSETS ${TILESIM_EXPLORE_ASSETS}
  NAMESPACE tilesim::explore_assets
  HEADER sim/tools/explore/page_assets.hpp
  LIST_FILE cmake/explore_assets.cmake
  COMMENT "Embedding the explorer page's scripts and styles (sim/tools/explore/assets)")
