#pragma once
// The launch-order explorer's page (`tilesim explore`, docs/explore.md): one self-contained
// HTML file that draws the data of sim/tools/explore/explore_data.hpp in the browser, offline.
#include <string>

#include <nlohmann/json.hpp>

namespace tilesim::explore {

/// The complete HTML page for `data` ({"format": "tilesim-explore", "version": 1, "views": [...]}):
/// D3, the page's scripts and styles, the data as <script type="application/json"
/// id="explore-data"> and the replay module as base64 in <script id="explore-wasm">.
/// Throws std::invalid_argument when `data` has no view.
std::string explore_page(const nlohmann::json& data);

}  // namespace tilesim::explore
