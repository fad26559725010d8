#pragma once
// The explorer's WebAssembly module: the L2 model and sim/tools/explore/replay.cpp compiled for
// wasm32 (cmake/explore_wasm.cmake, C ABI in sim/tools/explore/wasm/replay_wasm.cpp), compiled into
// tilesim so that `tilesim explore` writes a page that needs no file beside it. The page loads
// it through TilesimReplay (sim/tools/explore/assets/replay.js).
#include <cstddef>
#include <string>

namespace tilesim::explore_assets {

/// The module, base64-encoded (standard alphabet, '=' padding, no line breaks).
const std::string& replay_wasm_base64();
/// The module's size in bytes.
std::size_t replay_wasm_size();
/// Empty when the module is compiled in. In a build without it (its toolchain missing,
/// cmake/explore_wasm.cmake), why not, as a sentence: `tilesim explore` reports it and stops.
const std::string& replay_wasm_missing();

}  // namespace tilesim::explore_assets
