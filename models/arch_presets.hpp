#pragma once
// The arch presets of models/archs/*.yaml, embedded into the binary at build time
// (CMake generates arch_presets.cpp), so `tilesim` finds them from any directory.
#include <string>
#include <vector>

namespace tilesim {

struct ArchPreset {
  std::string name;
  std::string yaml;
};

const std::vector<ArchPreset>& arch_presets();

}  // namespace tilesim
