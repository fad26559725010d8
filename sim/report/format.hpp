#pragma once
// Small text helpers shared by the printers in this folder (not part of the public API).
#include <cstdint>
#include <cstdio>
#include <string>

#include "common/types.hpp"

namespace tilesim::report_detail {

/// Labels and kernel names may hold commas (order parameters): quote every CSV text field.
inline std::string csv_quoted(const std::string& s) {
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

/// `value / 10^decimals` as an exact decimal, trailing zeros dropped ("1234.5", "100").
/// Times are integer picoseconds; printing them through a double would round sub-ns digits
/// and make files differ in the last digit between platforms.
inline std::string exact_decimal(std::int64_t value, int decimals) {
  const bool neg = value < 0;
  std::uint64_t v = neg ? 0 - static_cast<std::uint64_t>(value) : static_cast<std::uint64_t>(value);
  std::uint64_t scale = 1;
  for (int i = 0; i < decimals; ++i) scale *= 10;
  std::string frac = std::to_string(v % scale);
  frac.insert(0, static_cast<std::size_t>(decimals) - frac.size(), '0');
  while (!frac.empty() && frac.back() == '0') frac.pop_back();
  std::string s = (neg ? "-" : "") + std::to_string(v / scale);
  return frac.empty() ? s : s + "." + frac;
}

/// printf-style formatting of one number ("%.1f").
inline std::string fmt(const char* spec, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, spec, v);
  return buf;
}

/// Pads to width `w`, right-aligned (or left-aligned).
inline std::string pad(const std::string& s, std::size_t w, bool left = false) {
  if (s.size() >= w) return s;
  return left ? s + std::string(w - s.size(), ' ') : std::string(w - s.size(), ' ') + s;
}

inline std::string ps_as_ns(Time ps) { return exact_decimal(ps, 3); }
inline std::string ps_as_us(Time ps) { return exact_decimal(ps, 6); }
inline double ns(Time ps) { return static_cast<double>(ps) / kPsPerNs; }

}  // namespace tilesim::report_detail
