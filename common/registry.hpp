#pragma once
// A registry of named implementations (workload generators, launch orders, sync policies),
// filled by static initialisers in each implementation's file, each name with a one-line
// description (`tilesim policies` lists them).
#include <map>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "common/named_policy.hpp"

namespace tilesim {

template <class Factory>
class Registry {
 public:
  /// The one registry of this Factory type. A function-local static, so that registration from
  /// other translation units' static initialisers does not depend on initialisation order.
  static Registry& instance() {
    static Registry r;
    return r;
  }
  /// Adds a name. Two files claiming one name is a programming error that would otherwise make
  /// one of them unreachable depending on link order, so it throws; from a static initialiser
  /// that stops the program before main, naming the name.
  bool add(const std::string& name, std::string description, Factory f) {
    if (entries_.count(name)) throw std::logic_error("registry: the name '" + name + "' is registered twice");
    entries_.emplace(name, Entry{std::move(description), std::move(f)});
    return true;
  }
  /// Names in sorted order (for "expected one of" messages).
  std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (const auto& kv : entries_) out.push_back(kv.first);
    return out;
  }
  /// Names with their descriptions, in sorted order.
  std::vector<NamedPolicy> described() const {
    std::vector<NamedPolicy> out;
    for (const auto& kv : entries_) out.push_back({kv.first, kv.second.description});
    return out;
  }
  /// The implementation of a name that names() listed; callers validate the name first.
  const Factory& at(const std::string& name) const { return entries_.at(name).factory; }

 private:
  struct Entry {
    std::string description;
    Factory factory;
  };
  std::map<std::string, Entry> entries_;
};

}  // namespace tilesim
