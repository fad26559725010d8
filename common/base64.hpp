#pragma once
// Base64 (RFC 4648, with padding): how binary data (the explorer's residency bytes, its
// WebAssembly module) travels inside a JSON document or an HTML page.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace tilesim {

inline std::string base64_encode(const void* data, std::size_t n) {
  static const char* kAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  const auto* p = static_cast<const std::uint8_t*>(data);
  std::string out;
  out.reserve((n + 2) / 3 * 4);
  std::size_t i = 0;
  for (; i + 2 < n; i += 3) {
    const std::uint32_t v = std::uint32_t{p[i]} << 16 | std::uint32_t{p[i + 1]} << 8 | p[i + 2];
    for (int s = 18; s >= 0; s -= 6) out += kAlphabet[(v >> s) & 63];
  }
  if (i < n) {
    const std::uint32_t v = std::uint32_t{p[i]} << 16 | (i + 1 < n ? std::uint32_t{p[i + 1]} << 8 : 0);
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
    out += i + 1 < n ? kAlphabet[(v >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

/// The inverse of base64_encode; characters outside the alphabet (padding, line breaks) are skipped.
inline std::vector<std::uint8_t> base64_decode(const std::string& s) {
  std::vector<std::uint8_t> out;
  out.reserve(s.size() / 4 * 3);
  std::uint32_t acc = 0;
  int bits = 0;
  for (const char c : s) {
    const int v = c >= 'A' && c <= 'Z'   ? c - 'A'
                  : c >= 'a' && c <= 'z' ? c - 'a' + 26
                  : c >= '0' && c <= '9' ? c - '0' + 52
                  : c == '+'             ? 62
                  : c == '/'             ? 63
                                         : -1;
    if (v < 0) continue;
    acc = acc << 6 | static_cast<std::uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<std::uint8_t>(acc >> bits));
    }
  }
  return out;
}

}  // namespace tilesim
