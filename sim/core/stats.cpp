#include "sim/core/stats.hpp"

namespace tilesim {

MemCounters& MemCounters::operator+=(const MemCounters& o) {
  read_sectors += o.read_sectors;
  read_hit_sectors += o.read_hit_sectors;
  write_sectors += o.write_sectors;
  write_hit_sectors += o.write_hit_sectors;
  near_copy_hit_sectors += o.near_copy_hit_sectors;
  fabric_sectors += o.fabric_sectors;
  coalesced_sectors += o.coalesced_sectors;
  dram_read_bytes += o.dram_read_bytes;
  dram_write_bytes += o.dram_write_bytes;
  return *this;
}

MemCounters& MemCounters::operator-=(const MemCounters& o) {
  read_sectors -= o.read_sectors;
  read_hit_sectors -= o.read_hit_sectors;
  write_sectors -= o.write_sectors;
  write_hit_sectors -= o.write_hit_sectors;
  near_copy_hit_sectors -= o.near_copy_hit_sectors;
  fabric_sectors -= o.fabric_sectors;
  coalesced_sectors -= o.coalesced_sectors;
  dram_read_bytes -= o.dram_read_bytes;
  dram_write_bytes -= o.dram_write_bytes;
  return *this;
}

double MemCounters::hit_rate() const {
  const std::uint64_t all = read_sectors + write_sectors;
  return all ? static_cast<double>(read_hit_sectors + write_hit_sectors) / static_cast<double>(all) : 0.0;
}

double MemCounters::lookup_hit_rate() const {
  const std::uint64_t lookups = read_sectors + write_sectors + fabric_sectors;
  return lookups ? static_cast<double>(read_hit_sectors + write_sectors) / static_cast<double>(lookups) : 0.0;
}

double MemCounters::read_hit_rate() const {
  return read_sectors ? static_cast<double>(read_hit_sectors) / static_cast<double>(read_sectors) : 0.0;
}

double KernelStats::tflops() const {
  const Time d = duration();
  return d > 0 ? static_cast<double>(flops) / (static_cast<double>(d) * 1e-12) / 1e12 : 0.0;
}

}  // namespace tilesim
