#pragma once
// What every policy family lists: a name and a line saying what it does (`tilesim policies`).
#include <string>

namespace tilesim {

struct NamedPolicy {
  std::string name;
  std::string description;
};

}  // namespace tilesim
