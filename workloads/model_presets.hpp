#pragma once
// Transformer model dimensions from the models' published configurations: what `kind: ffn`
// reads for `model:` and what `tilesim tune --model` turns into one layer's GEMMs.
#include <cstdint>
#include <string>
#include <vector>

namespace tilesim {

struct ModelPreset {
  std::string name;
  std::uint32_t d = 0;         ///< hidden size
  std::uint32_t f = 0;         ///< FFN intermediate size
  bool gated = false;          ///< SwiGLU: a gate and an up projection
  std::uint32_t heads = 0;     ///< query heads
  std::uint32_t kv_heads = 0;  ///< key/value heads (grouped-query attention when < heads)
  std::uint32_t head_dim = 0;
};

/// Every preset, by name.
const std::vector<ModelPreset>& model_presets();
/// The preset called `name`, or nullptr.
const ModelPreset* find_model_preset(const std::string& name);
/// The names, comma-separated, for error messages and --help.
std::string model_preset_names();

}  // namespace tilesim
