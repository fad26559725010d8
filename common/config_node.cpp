#include "common/config_node.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <utility>
#include <vector>

#include "common/error.hpp"
#include "common/files.hpp"
#include "common/text.hpp"
#include "common/utf8.hpp"

namespace tilesim {

namespace {

// " (line N)" of a node read from a text, "" for one built in code (no position).
std::string line_of(const YAML::Node& n) {
  return n.Mark().line >= 0 ? " (line " + std::to_string(n.Mark().line + 1) + ")" : "";
}

// Parses the leading number of s; `used` is how many characters it took (0 if none).
double leading_double(const std::string& s, std::size_t& used) {
  used = 0;
  try {
    return std::stod(s, &used);
  } catch (...) {
    used = 0;
    return 0;
  }
}


}  // namespace

ConfigNode::ConfigNode(YAML::Node node, std::string file, std::string path)
    : node_(std::move(node)), file_(std::move(file)), path_(std::move(path)) {}

std::string ConfigNode::path_of(std::string_view key) const {
  if (path_.empty()) return std::string(key);
  return path_ + "." + std::string(key);
}

std::string ConfigNode::where() const {
  std::string w = file_.empty() ? std::string("<config>") : file_;
  w += ": ";
  w += path_.empty() ? std::string("<top level>") : path_;
  if (node_.IsDefined()) w += line_of(node_);
  return w;
}

void ConfigNode::fail(std::string_view what) const { throw InputError(where() + ": " + std::string(what)); }

void ConfigNode::fail_key(std::string_view key, std::string_view what) const {
  if (node_.IsMap() && node_[std::string(key)].IsDefined()) {
    ConfigNode(node_[std::string(key)], file_, path_of(key)).fail(what);
  }
  std::string w = (file_.empty() ? std::string("<config>") : file_) + ": " + path_of(key);
  throw InputError(w + ": " + std::string(what));
}

bool ConfigNode::has(std::string_view key) const {
  return node_.IsMap() && node_[std::string(key)].IsDefined() && !node_[std::string(key)].IsNull();
}

std::vector<std::string> ConfigNode::keys() const {
  std::vector<std::string> out;
  if (!node_.IsMap()) return out;
  for (const auto& kv : node_) out.push_back(kv.first.as<std::string>());
  return out;
}

void ConfigNode::expect_map() const {
  if (!node_.IsMap()) fail("expected a mapping of keys");
}

void ConfigNode::allow_keys(std::initializer_list<std::string_view> allowed) const {
  allow_keys(std::vector<std::string>(allowed.begin(), allowed.end()));
}

void ConfigNode::allow_keys(const std::vector<std::string>& allowed) const {
  expect_map();
  std::vector<std::string> seen;
  for (const auto& kv : node_) {
    const auto where = [&](const std::string& key) {
      std::string w = (file_.empty() ? std::string("<config>") : file_) + ": " + path_of(key);
      w += line_of(kv.first);
      return w;
    };
    // YAML allows any node as a key (`? {a: 1}`); a configuration's keys are names.
    if (!kv.first.IsScalar()) throw InputError(where("<key>") + ": expected a key name, got a " +
                                               (kv.first.IsMap() ? "mapping" : "list"));
    const std::string key = kv.first.Scalar();
    bool ok = false;
    for (const auto& a : allowed) ok = ok || a == key;
    if (!ok) throw InputError(where(key) + ": unknown key (expected one of: " + join(allowed) + ")");
    // yaml-cpp keeps both entries of a repeated key and reads the first: refuse it.
    if (std::find(seen.begin(), seen.end(), key) != seen.end())
      throw InputError(where(key) + ": duplicate key (given twice in this mapping)");
    seen.push_back(key);
  }
}

ConfigNode ConfigNode::at(std::string_view key) const {
  expect_map();
  if (!has(key)) fail_key(key, "missing required key");
  return ConfigNode(node_[std::string(key)], file_, path_of(key));
}

std::optional<ConfigNode> ConfigNode::find(std::string_view key) const {
  if (!has(key)) return std::nullopt;
  return ConfigNode(node_[std::string(key)], file_, path_of(key));
}

ConfigNode ConfigNode::element(std::size_t i) const {
  return ConfigNode(node_[i], file_, path_ + "[" + std::to_string(i) + "]");
}

std::int64_t ConfigNode::as_integer(std::int64_t lo, std::int64_t hi) const {
  if (!node_.IsScalar()) fail("expected an integer");
  const std::string s = node_.Scalar();
  // A quoted scalar is a string in YAML, whatever it spells.
  if (node_.Tag() == "!") fail("expected an integer, got the string \"" + s + "\"");
  // YAML 1.2's integers: decimal (a leading zero does not make it octal), 0x hex, 0o octal.
  const std::size_t sign = !s.empty() && (s[0] == '-' || s[0] == '+') ? 1 : 0;
  int base = 10;
  std::string digits = s;
  if (s.compare(sign, 2, "0x") == 0 || s.compare(sign, 2, "0X") == 0) {
    base = 16;
  } else if (s.compare(sign, 2, "0o") == 0) {
    base = 8;
    digits = s.substr(0, sign) + s.substr(sign + 2);
  }
  std::size_t used = 0;
  long long v = 0;
  try {
    v = std::stoll(digits, &used, base);
  } catch (...) {
    used = 0;
  }
  if (used == 0 || used != digits.size()) fail("expected an integer, got '" + s + "'");
  if (v < lo || v > hi)
    fail("expected an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "], got " + s);
  return v;
}

double ConfigNode::as_number(double lo, double hi) const {
  if (!node_.IsScalar()) fail("expected a number");
  const std::string s = node_.Scalar();
  std::size_t used = 0;
  const double v = leading_double(s, used);
  if (used == 0 || used != s.size() || !std::isfinite(v)) fail("expected a number, got '" + s + "'");
  if (v < lo || v > hi) {
    std::ostringstream o;
    o << "expected a number in [" << lo << ", " << hi << "], got " << s;
    fail(o.str());
  }
  return v;
}

std::string ConfigNode::as_string() const {
  if (!node_.IsScalar()) fail("expected a string");
  return node_.Scalar();
}

bool ConfigNode::as_bool() const {
  if (!node_.IsScalar()) fail("expected true or false");
  const std::string s = node_.Scalar();
  if (s == "true" || s == "True" || s == "yes" || s == "on") return true;
  if (s == "false" || s == "False" || s == "no" || s == "off") return false;
  fail("expected true or false, got '" + s + "'");
}

std::uint64_t ConfigNode::as_bytes(std::uint64_t lo, std::uint64_t hi) const {
  if (!node_.IsScalar()) fail("expected a byte count such as 4096 or \"16 MiB\"");
  const std::string s = node_.Scalar();
  std::size_t used = 0;
  const double v = leading_double(s, used);
  if (used == 0) fail("expected a byte count such as 4096 or \"16 MiB\", got '" + s + "'");
  std::string unit = s.substr(used);
  unit.erase(0, unit.find_first_not_of(' '));
  double scale = 0;
  if (unit.empty() || unit == "B") scale = 1;
  else if (unit == "KB") scale = 1e3;
  else if (unit == "MB") scale = 1e6;
  else if (unit == "GB") scale = 1e9;
  else if (unit == "KiB") scale = 1024.0;
  else if (unit == "MiB") scale = 1024.0 * 1024;
  else if (unit == "GiB") scale = 1024.0 * 1024 * 1024;
  else fail("unknown byte unit '" + unit + "' (expected B, KB, MB, GB, KiB, MiB or GiB)");
  const double bytes = v * scale;
  if (bytes < 0 || bytes != std::floor(bytes)) fail("expected a whole number of bytes, got '" + s + "'");
  if (bytes < static_cast<double>(lo) || bytes > static_cast<double>(hi))
    fail("expected a byte count in [" + std::to_string(lo) + ", " + std::to_string(hi) + "], got '" + s + "'");
  return static_cast<std::uint64_t>(bytes);
}

std::string ConfigNode::as_choice(const std::vector<std::string>& allowed) const {
  const std::string s = as_string();
  for (const auto& a : allowed)
    if (a == s) return s;
  fail("expected one of: " + join(allowed) + "; got '" + s + "'");
}

std::string ConfigNode::as_kind(const std::vector<std::string>& allowed) const {
  if (!is_map()) return as_choice(allowed);
  allow_keys({"kind"});
  return choice("kind", allowed);
}

std::int64_t ConfigNode::integer(std::string_view key, std::int64_t lo, std::int64_t hi) const {
  return at(key).as_integer(lo, hi);
}
std::int64_t ConfigNode::integer_or(std::string_view key, std::int64_t def, std::int64_t lo,
                                    std::int64_t hi) const {
  return has(key) ? at(key).as_integer(lo, hi) : def;
}
double ConfigNode::number(std::string_view key, double lo, double hi) const { return at(key).as_number(lo, hi); }
double ConfigNode::number_or(std::string_view key, double def, double lo, double hi) const {
  return has(key) ? at(key).as_number(lo, hi) : def;
}
std::string ConfigNode::string(std::string_view key) const { return at(key).as_string(); }
std::string ConfigNode::string_or(std::string_view key, std::string def) const {
  return has(key) ? at(key).as_string() : def;
}
bool ConfigNode::boolean(std::string_view key) const { return at(key).as_bool(); }
bool ConfigNode::boolean_or(std::string_view key, bool def) const { return has(key) ? at(key).as_bool() : def; }
std::uint64_t ConfigNode::bytes(std::string_view key, std::uint64_t lo, std::uint64_t hi) const {
  return at(key).as_bytes(lo, hi);
}
std::uint64_t ConfigNode::bytes_or(std::string_view key, std::uint64_t def, std::uint64_t lo,
                                   std::uint64_t hi) const {
  return has(key) ? at(key).as_bytes(lo, hi) : def;
}
std::string ConfigNode::choice(std::string_view key, const std::vector<std::string>& allowed) const {
  return at(key).as_choice(allowed);
}
std::string ConfigNode::choice_or(std::string_view key, std::string def,
                                  const std::vector<std::string>& allowed) const {
  return has(key) ? at(key).as_choice(allowed) : def;
}
std::string ConfigNode::kind_or(std::string_view key, std::string def, const std::vector<std::string>& allowed) const {
  return has(key) ? at(key).as_kind(allowed) : def;
}

std::vector<std::int64_t> ConfigNode::integer_list(std::string_view key, std::size_t count, std::int64_t lo,
                                                   std::int64_t hi) const {
  ConfigNode list = at(key);
  if (!list.is_sequence() || list.size() != count)
    list.fail("expected a list of " + std::to_string(count) + " integers");
  std::vector<std::int64_t> out;
  for (std::size_t i = 0; i < count; ++i) out.push_back(list.element(i).as_integer(lo, hi));
  return out;
}

YAML::Node load_yaml_file(const std::string& path) {
  return load_yaml_text(read_text_file(path), path);
}

namespace {

// Checks a document once, as loaded. Every key must be a name, every scalar and key UTF-8 text: what an
// experiment holds is copied into JSON and HTML outputs, which cannot carry other bytes. And
// the document, with its aliases expanded, must stay a size a configuration has: nested aliases
// (`b: [*a, *a, ...]` a few levels deep) make a few hundred bytes stand for billions of nodes,
// which every later walk would visit. Walks with an explicit stack (a document may nest deeply)
// and names the line of the first offender.
constexpr std::size_t kMaxDocumentNodes = std::size_t{1} << 21;

void check_document(const YAML::Node& root, const std::string& origin) {
  std::vector<YAML::Node> stack{root};
  std::size_t visited = 0;
  while (!stack.empty()) {
    if (++visited > kMaxDocumentNodes)
      throw InputError(origin + ": the document expands to more than " + std::to_string(kMaxDocumentNodes) +
                       " values (nested aliases?); a configuration is far smaller");
    const YAML::Node n = stack.back();
    stack.pop_back();
    if (n.IsScalar() && !valid_utf8(n.Scalar()))
      throw InputError(origin + line_of(n) + ": a value is not valid UTF-8 text");
    if (n.IsSequence())
      for (const auto& e : n) stack.push_back(e);
    if (n.IsMap())
      for (const auto& kv : n) {
        // YAML allows any node as a key (`? {a: 1} : 2`); ours are names, and code that reads
        // keys as strings would fail on anything else with yaml-cpp's own exception.
        if (!kv.first.IsScalar())
          throw InputError(origin + line_of(kv.first) + ": a mapping key must be a name, got a " +
                           (kv.first.IsMap() ? "mapping" : "list"));
        stack.push_back(kv.first);
        stack.push_back(kv.second);
      }
  }
}

}  // namespace

YAML::Node load_yaml_text(const std::string& text, const std::string& origin) {
  try {
    YAML::Node n = YAML::Load(text);
    check_document(n, origin);
    return n;
  } catch (const YAML::Exception& e) {
    // A one-line text (a --set value, a sweep point's assignment) has no lines worth naming.
    if (text.find('\n') == std::string::npos || text.find('\n') + 1 == text.size())
      throw InputError(origin + ": YAML syntax error at column " + std::to_string(e.mark.column + 1) + " of '" + text +
                       "': " + e.msg);
    throw InputError(origin + " (line " + std::to_string(e.mark.line + 1) + "): YAML syntax error: " + e.msg);
  }
}

namespace {

// A copy of `n` without source positions: a value from a --set or a sweep point is parsed from
// its own one-line text, and its "line 1" would read as a line of the experiment file.
YAML::Node without_marks(const YAML::Node& n, const std::string& origin) {
  YAML::Node out;
  switch (n.Type()) {
    case YAML::NodeType::Scalar:
      out = YAML::Node(n.Scalar());
      break;
    case YAML::NodeType::Sequence:
      out = YAML::Node(YAML::NodeType::Sequence);
      for (const auto& e : n) out.push_back(without_marks(e, origin));
      break;
    case YAML::NodeType::Map:
      out = YAML::Node(YAML::NodeType::Map);
      for (const auto& kv : n) {
        // Keys are names (load_yaml_text refused any other). Copying would merge a repeated key
        // into one entry; the file reader refuses it, so here too.
        const std::string key = kv.first.Scalar();
        if (std::as_const(out)[key].IsDefined())
          throw InputError(origin + ": key '" + key + "' given twice in one mapping");
        out[key] = without_marks(kv.second, origin);
      }
      break;
    case YAML::NodeType::Null:
      out = YAML::Node(YAML::NodeType::Null);
      break;
    case YAML::NodeType::Undefined:
      return n;
  }
  out.SetTag(n.Tag());  // a quoted scalar ("!") stays a string
  return out;
}

}  // namespace

std::string yaml_document(const YAML::Node& n) {
  YAML::Emitter em;
  em << n;
  return std::string(em.c_str()) + "\n";
}

YAML::Node merge_yaml(const YAML::Node& base, const YAML::Node& over) {
  // The result shares the inputs' subtrees rather than cloning them: a clone loses the source
  // positions, and errors about the merged tree would all say "line 1". Callers only read it.
  if (!base.IsMap() || !over.IsMap()) return over;
  YAML::Node out(YAML::NodeType::Map);
  for (const auto& kv : base) out[kv.first.as<std::string>()] = kv.second;
  for (const auto& kv : over) {
    const std::string key = kv.first.as<std::string>();
    const YAML::Node prev = std::as_const(out)[key];
    if (prev.IsDefined() && prev.IsMap() && kv.second.IsMap())
      out[key] = merge_yaml(prev, kv.second);
    else
      out[key] = kv.second;
  }
  return out;
}

std::vector<std::string> split_dotted_key(const std::string& key) {
  // "\." is a dot inside a component: `--set 'sweep.workload\.m=[16, 32]'` names the sweep
  // axis "workload.m".
  std::vector<std::string> parts(1);
  for (std::size_t i = 0; i < key.size(); ++i) {
    if (key[i] == '\\' && i + 1 < key.size() && key[i + 1] == '.') {
      parts.back() += '.';
      ++i;
    } else if (key[i] == '.') {
      parts.emplace_back();
    } else {
      parts.back() += key[i];
    }
  }
  return parts;
}

void apply_override(YAML::Node& root, const std::string& assignment) {
  const auto eq = assignment.find('=');
  if (eq == std::string::npos || eq == 0)
    throw InputError("--set " + assignment + ": expected dotted.key=value");
  const std::string key = assignment.substr(0, eq);
  const YAML::Node value = without_marks(load_yaml_text(assignment.substr(eq + 1), "--set " + key), "--set " + key);
  const std::vector<std::string> parts = split_dotted_key(key);
  for (const auto& p : parts)
    if (p.empty()) throw InputError("--set " + assignment + ": empty key component in '" + key + "'");
  if (!root.IsDefined() || root.IsNull()) root = YAML::Node(YAML::NodeType::Map);
  // yaml-cpp nodes are references: walk with copies of handles, then assign at the leaf.
  std::vector<YAML::Node> chain{root};
  for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
    YAML::Node next = chain.back()[parts[i]];
    if (!next.IsDefined() || next.IsNull()) {
      chain.back()[parts[i]] = YAML::Node(YAML::NodeType::Map);
      next = chain.back()[parts[i]];
    } else if (!next.IsMap()) {
      throw InputError("--set " + assignment + ": '" + parts[i] + "' is not a mapping");
    }
    chain.push_back(next);
  }
  chain.back()[parts.back()] = value;
}

}  // namespace tilesim
