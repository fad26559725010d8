// sim/tools/explore/wasm_module.hpp for a build without the explorer's WebAssembly module: no
// module, and why not (cmake/explore_wasm.cmake defines TILESIM_EXPLORE_WASM_MISSING), which
// `tilesim explore` reports instead of writing a page.
#include "sim/tools/explore/wasm_module.hpp"

#ifndef TILESIM_EXPLORE_WASM_MISSING
#error "cmake/explore_wasm.cmake compiles this file with TILESIM_EXPLORE_WASM_MISSING defined"
#endif

namespace tilesim::explore_assets {

const std::string& replay_wasm_base64() {
  static const std::string none;
  return none;
}

std::size_t replay_wasm_size() { return 0; }

const std::string& replay_wasm_missing() {
  static const std::string why = "this tilesim was built without the explorer's WebAssembly module: " TILESIM_EXPLORE_WASM_MISSING;
  return why;
}

}  // namespace tilesim::explore_assets
