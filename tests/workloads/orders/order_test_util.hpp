#pragma once
// Shared by the order tests: how Catch prints a tile, and a string builder.
#include <catch2/catch.hpp>

#include <sstream>
#include <string>

#include "workloads/orders/order.hpp"

namespace Catch {
template <>
struct StringMaker<tilesim::TileCoord> {
  static std::string convert(const tilesim::TileCoord& t) {
    if (t == tilesim::kEarlyExit) return "exit";
    std::ostringstream out;
    out << '(' << t.m << ", " << t.n << ')';
    return out.str();
  }
};
}  // namespace Catch

namespace tilesim::test {
/// Streams the arguments into one string (also keeps GCC 12's -Wrestrict false positive on
/// "literal" + std::string out of the build log).
template <typename... Args>
std::string cat(const Args&... args) {
  std::ostringstream out;
  (out << ... << args);
  return out.str();
}
}  // namespace tilesim::test
