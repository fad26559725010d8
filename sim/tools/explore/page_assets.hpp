#pragma once
// The explorer page's scripts and styles, compiled into the binary from files read at build
// time (cmake/explore_assets.cmake). D3 and the error-recording prelude come from the report's
// assets (sim/report/html_assets.hpp); the WebAssembly module from sim/tools/explore/wasm_module.hpp.
#include <string>

namespace tilesim::explore_assets {

const std::string& replay_js();      ///< sim/tools/explore/assets/replay.js: TilesimReplay, the wasm replay
const std::string& util_js();        ///< explore_util.js: DOM, formats, colours, tooltip
const std::string& grid_js();        ///< explore_grid.js: a kernel's tile grid (SVG)
const std::string& grid_canvas_js(); ///< explore_grid_canvas.js: the same on a canvas, for huge grids
const std::string& heatmap_js();     ///< explore_heatmap.js: a tensor's residency (canvas)
const std::string& specs_js();       ///< explore_specs.js: which grids to draw, which operands beside them
const std::string& panel_js();       ///< explore_panel.js: grid + operand heatmaps
const std::string& chart_js();       ///< explore_chart.js: cumulative DRAM and hit rate (D3)
const std::string& gantt_js();       ///< explore_gantt.js: per-SM timeline (canvas)
const std::string& view_js();        ///< explore_view.js: one simulated view and its step control
const std::string& manual_layout_js(); ///< explore_manual_layout.js: a GEMM's or a chain's tiles and order rules
const std::string& manual_js();      ///< explore_manual.js: the manual mode
const std::string& main_js();        ///< explore_main.js: entry point, sets body[data-ready]
const std::string& page_css();       ///< explore.css

}  // namespace tilesim::explore_assets
