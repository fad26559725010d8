#pragma once
// Line-level text helpers the readers of hand-written inputs share (order files, chain order
// files, measurement CSVs).
#include <string>

namespace tilesim {

/// `s` without leading and trailing blanks (spaces, tabs, a CR left by CRLF line ends).
inline std::string trim(const std::string& s) {
  const auto first = s.find_first_not_of(" \t\r");
  if (first == std::string::npos) return {};
  return s.substr(first, s.find_last_not_of(" \t\r") - first + 1);
}

/// A line of a `#`-commented file: the text before any `#`, trimmed.
inline std::string strip_comment(const std::string& raw) { return trim(raw.substr(0, raw.find('#'))); }

}  // namespace tilesim
