#pragma once
// A registry of named implementations (launch orders, workload generators, sync policies),
// filled by static initialisers in each implementation's file.
#include <map>
#include <string>
#include <vector>

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
  bool add(const std::string& name, Factory f) {
    entries_[name] = std::move(f);
    return true;
  }
  /// Names in sorted order (for "expected one of" messages).
  std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (const auto& kv : entries_) out.push_back(kv.first);
    return out;
  }
  /// The implementation of a name that names() listed; callers validate the name first.
  const Factory& at(const std::string& name) const { return entries_.at(name); }

 private:
  std::map<std::string, Factory> entries_;
};

}  // namespace tilesim
