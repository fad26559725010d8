#include "sim/config/canonical.hpp"

#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <iterator>

namespace tilesim::sweep {

nlohmann::json yaml_to_json(const YAML::Node& n) {
  if (n.IsMap()) {
    nlohmann::json j = nlohmann::json::object();
    for (const auto& kv : n) j[kv.first.Scalar()] = yaml_to_json(kv.second);
    return j;
  }
  if (n.IsSequence()) {
    nlohmann::json j = nlohmann::json::array();
    for (const auto& e : n) j.push_back(yaml_to_json(e));
    return j;
  }
  if (!n.IsDefined() || n.IsNull()) return nullptr;
  const std::string& s = n.Scalar();
  if (n.Tag() == "!") return s;  // quoted: the user meant a string
  if (s == "true" || s == "True") return true;
  if (s == "false" || s == "False") return false;
  if (s == "~" || s == "null") return nullptr;
  if (!s.empty()) {
    char* end = nullptr;
    errno = 0;
    const long long i = std::strtoll(s.c_str(), &end, 10);
    if (end == s.c_str() + s.size() && errno == 0) return static_cast<std::int64_t>(i);
    const double d = std::strtod(s.c_str(), &end);
    if (end == s.c_str() + s.size() && std::isfinite(d)) return d;
  }
  return s;
}

std::string canonical_text(const YAML::Node& n) { return yaml_to_json(n).dump(); }

std::string digest_hex(const std::string& data) {
  // Two FNV-1a 64 lanes with different offsets; the second also sees each byte's position.
  std::uint64_t h1 = 0xcbf29ce484222325ull, h2 = 0x84222325cbf29ce4ull;
  for (std::size_t i = 0; i < data.size(); ++i) {
    const auto c = static_cast<unsigned char>(data[i]);
    h1 = (h1 ^ c) * 0x100000001b3ull;
    h2 = (h2 ^ c ^ (i & 0xff)) * 0x100000001b3ull;
  }
  char buf[33];
  std::snprintf(buf, sizeof buf, "%016llx%016llx", static_cast<unsigned long long>(h1),
                static_cast<unsigned long long>(h2));
  return buf;
}

const std::string& simulator_fingerprint() {
  static const std::string fp = [] {
    std::ifstream exe("/proc/self/exe", std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(exe)), std::istreambuf_iterator<char>());
    return std::string(TILESIM_VERSION) + "+" + (bytes.empty() ? "unknown" : digest_hex(bytes).substr(0, 16));
  }();
  return fp;
}

}  // namespace tilesim::sweep
