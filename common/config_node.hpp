#pragma once
// A validated view of one YAML node that knows its file and dotted path, so that every
// error names both: "exp.yaml: workload.tile[2] (line 7): expected a positive integer".
#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tilesim {

class ConfigNode {
 public:
  ConfigNode(YAML::Node node, std::string file, std::string path);

  const YAML::Node& raw() const { return node_; }
  const std::string& file() const { return file_; }
  const std::string& path() const { return path_; }
  /// The dotted path of a child key ("workload" + "m" -> "workload.m").
  std::string path_of(std::string_view key) const;

  bool is_map() const { return node_.IsMap(); }
  bool is_sequence() const { return node_.IsSequence(); }
  bool is_scalar() const { return node_.IsScalar(); }
  bool has(std::string_view key) const;
  std::vector<std::string> keys() const;
  std::size_t size() const { return node_.size(); }

  /// Throws InputError naming this node (or its child key) and what was expected.
  [[noreturn]] void fail(std::string_view what) const;
  [[noreturn]] void fail_key(std::string_view key, std::string_view what) const;

  /// Rejects any key not in `allowed`; requires this node to be a mapping.
  void allow_keys(std::initializer_list<std::string_view> allowed) const;
  void allow_keys(const std::vector<std::string>& allowed) const;
  void expect_map() const;

  ConfigNode at(std::string_view key) const;               // required child
  std::optional<ConfigNode> find(std::string_view key) const;
  ConfigNode element(std::size_t i) const;                 // sequence element

  // Scalars of this node itself.
  std::int64_t as_integer(std::int64_t lo, std::int64_t hi) const;
  double as_number(double lo, double hi) const;
  std::string as_string() const;
  bool as_bool() const;
  /// An integer count of bytes; accepts 4096, "4 KiB", "16MB", "1.5 GiB".
  std::uint64_t as_bytes(std::uint64_t lo, std::uint64_t hi) const;
  std::string as_choice(const std::vector<std::string>& allowed) const;
  /// A policy's name, given bare (`srrip`) or as a node (`{kind: srrip}`, the spelling of
  /// `order:` and `sync:`); a node may hold nothing but `kind`.
  std::string as_kind(const std::vector<std::string>& allowed) const;

  // Children by key; the *_or forms return the default when the key is absent.
  std::int64_t integer(std::string_view key, std::int64_t lo, std::int64_t hi) const;
  std::int64_t integer_or(std::string_view key, std::int64_t def, std::int64_t lo, std::int64_t hi) const;
  double number(std::string_view key, double lo, double hi) const;
  double number_or(std::string_view key, double def, double lo, double hi) const;
  std::string string(std::string_view key) const;
  std::string string_or(std::string_view key, std::string def) const;
  bool boolean(std::string_view key) const;
  bool boolean_or(std::string_view key, bool def) const;
  std::uint64_t bytes(std::string_view key, std::uint64_t lo, std::uint64_t hi) const;
  std::uint64_t bytes_or(std::string_view key, std::uint64_t def, std::uint64_t lo, std::uint64_t hi) const;
  std::string choice(std::string_view key, const std::vector<std::string>& allowed) const;
  std::string choice_or(std::string_view key, std::string def, const std::vector<std::string>& allowed) const;
  std::string kind_or(std::string_view key, std::string def, const std::vector<std::string>& allowed) const;
  std::vector<std::int64_t> integer_list(std::string_view key, std::size_t count, std::int64_t lo,
                                         std::int64_t hi) const;

 private:
  std::string where() const;

  YAML::Node node_;
  std::string file_;
  std::string path_;
};

/// Parses a YAML file; a syntax error or a missing file is an InputError naming the file and line.
YAML::Node load_yaml_file(const std::string& path);
/// Parses YAML text (used for --set values and embedded presets); `origin` names it in errors.
YAML::Node load_yaml_text(const std::string& text, const std::string& origin);
/// `n` as the text of a YAML document, ending in a newline (what tilesim writes as a file).
std::string yaml_document(const YAML::Node& n);
/// `base` with mapping `over` merged into it key by key (maps recurse, others replace); shares
/// the inputs' subtrees (so their source positions stay), so treat the result as read-only.
YAML::Node merge_yaml(const YAML::Node& base, const YAML::Node& over);
/// Applies "a.b.c=value" to a tree (value parsed as YAML), creating mappings on the way.
void apply_override(YAML::Node& root, const std::string& assignment);
/// "a.b.c" -> {"a", "b", "c"} (empty components are kept, for the caller to refuse); "a\\.b"
/// is the one component "a.b".
std::vector<std::string> split_dotted_key(const std::string& key);

}  // namespace tilesim
