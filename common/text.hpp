#pragma once
// Text helpers the readers of hand-written inputs share (order files, chain order files,
// measurement CSVs), and the list of names every "expected one of" message prints.
#include <string>
#include <vector>

namespace tilesim {

/// `s` without leading and trailing blanks (spaces, tabs, a CR left by CRLF line ends).
inline std::string trim(const std::string& s) {
  const auto first = s.find_first_not_of(" \t\r");
  if (first == std::string::npos) return {};
  return s.substr(first, s.find_last_not_of(" \t\r") - first + 1);
}

/// A line of a `#`-commented file: the text before any `#`, trimmed.
inline std::string strip_comment(const std::string& raw) { return trim(raw.substr(0, raw.find('#'))); }

/// The names as a message lists them: "a, b, c".
inline std::string join(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

}  // namespace tilesim
