#include "sim/core/stats.hpp"

#include <iterator>

namespace tilesim {

// A counter missing from kMemCounterFields would be silently left out of sums and printers;
// the struct holds nothing but counters, so its size tells.
static_assert(sizeof(MemCounters) == std::size(kMemCounterFields) * sizeof(std::uint64_t),
              "every MemCounters member must be listed in kMemCounterFields");

MemCounters& MemCounters::operator+=(const MemCounters& o) {
  for (const MemCounterField& f : kMemCounterFields) this->*f.member += o.*f.member;
  return *this;
}

MemCounters& MemCounters::operator-=(const MemCounters& o) {
  for (const MemCounterField& f : kMemCounterFields) this->*f.member -= o.*f.member;
  return *this;
}

double MemCounters::hit_rate() const {
  const std::uint64_t all = read_sectors + write_sectors;
  return all ? static_cast<double>(read_hit_sectors + write_hit_sectors) / static_cast<double>(all) : 0.0;
}

double MemCounters::lookup_hit_rate() const {
  const std::uint64_t lookups = read_sectors + write_sectors + fabric_sectors;
  return lookups ? static_cast<double>(read_hit_sectors + fill_hit_sectors + write_sectors) / static_cast<double>(lookups)
                 : 0.0;
}

double MemCounters::read_hit_rate() const {
  return read_sectors ? static_cast<double>(read_hit_sectors) / static_cast<double>(read_sectors) : 0.0;
}

}  // namespace tilesim
