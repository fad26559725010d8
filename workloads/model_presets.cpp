#include "workloads/model_presets.hpp"

namespace tilesim {

// Sources: the models' config.json on Hugging Face (Llama 3: hidden_size, intermediate_size,
// num_attention_heads, num_key_value_heads), the LLaMA paper's table 2 (65B), and the GPT-3
// paper's table 2.1 (d_model 12288, 96 heads of 128, FFN 4 x d_model). gpt3-175b-mp8 is the
// 8-way tensor-parallel slice CuSync evaluates: every weight split by 8 along its output
// (QKV, FFN up) or input (attention output, FFN down) dimension, so 12 heads and f = 6144.
const std::vector<ModelPreset>& model_presets() {
  static const std::vector<ModelPreset> p{
      {"gpt3-175b", 12288, 49152, false, 96, 96, 128},
      {"gpt3-175b-mp8", 12288, 6144, false, 12, 12, 128},
      {"llama-65b", 8192, 22016, true, 64, 64, 128},
      {"llama3-70b", 8192, 28672, true, 64, 8, 128},
      {"llama3-8b", 4096, 14336, true, 32, 8, 128},
  };
  return p;
}

const ModelPreset* find_model_preset(const std::string& name) {
  for (const ModelPreset& m : model_presets())
    if (m.name == name) return &m;
  return nullptr;
}

std::string model_preset_names() {
  std::string s;
  for (const ModelPreset& m : model_presets()) s += (s.empty() ? "" : ", ") + m.name;
  return s;
}

}  // namespace tilesim
