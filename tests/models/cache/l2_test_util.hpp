#pragma once
// Shared by the L2 tests: tiny hand-computable geometries and one-line access helpers.
#include <catch2/catch.hpp>

#include <string>

#include "models/arch.hpp"
#include "models/cache/l2.hpp"

namespace tilesim::test {

inline L2Spec tiny_spec(std::uint32_t partitions, std::uint32_t ways, std::uint32_t sets, const std::string& repl = "lru",
                 bool far_copy = true, const std::string& hash = "modulo") {
  L2Spec s;
  s.partitions = partitions;
  s.ways = ways;
  s.line_bytes = 128;
  s.sector_bytes = 32;
  s.bytes = std::uint64_t{128} * ways * sets * partitions;
  s.hash = hash;
  s.replacement = repl;
  s.far_copy = far_copy;
  return s;
}

constexpr Addr line_addr(std::uint64_t line) { return line * 128; }

inline L2AccessResult read(L2Cache& c, Addr start, std::uint64_t bytes, std::uint32_t req = 0) {
  return c.access(ByteRect{start, 0, bytes, 1}, req, false);
}
inline L2AccessResult write(L2Cache& c, Addr start, std::uint64_t bytes, std::uint32_t req = 0) {
  return c.access(ByteRect{start, 0, bytes, 1}, req, true);
}
inline L2AccessResult read_line(L2Cache& c, std::uint64_t line, std::uint32_t req = 0) {
  return read(c, line_addr(line), 128, req);
}

}  // namespace tilesim::test

namespace Catch {
template <>
struct StringMaker<tilesim::L2AccessResult> {
  static std::string convert(const tilesim::L2AccessResult& r) {
    return "{sectors " + std::to_string(r.sectors) + ", hit " + std::to_string(r.hit_sectors) + ", near " +
           std::to_string(r.near_copy_hit_sectors) + ", fabric " + std::to_string(r.fabric_sectors) + ", dram_r " +
           std::to_string(r.dram_read_sectors) + ", dram_w " + std::to_string(r.dram_write_sectors) + ", part " +
           std::to_string(r.partition_sectors[0]) + "/" + std::to_string(r.partition_sectors[1]) + "}";
  }
};
}  // namespace Catch
