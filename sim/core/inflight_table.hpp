#pragma once
// When the DRAM fill of each recently missed tile rectangle arrives: an open-addressing hash
// table (linear probing, power-of-two capacity) from a 64-bit rectangle key to a time. It is
// consulted on every tile access, so it is flat: one probe is usually one host cache line,
// where a node-based map would chase a pointer per lookup. Its users only ever ask whether a
// time is still ahead of the present (a later find is maxed with a time at or past `now`), so
// entries at or before the present are dead: the table drops them when it would grow, and its
// size follows the rectangles in flight, not every rectangle the run has touched.
#include <cstdint>
#include <vector>

#include "common/types.hpp"

namespace tilesim {

class InflightTable {
 public:
  /// The time recorded for `key`, or `none` when there is none.
  Time find(std::uint64_t key, Time none) const {
    if (keys_.empty()) return none;
    for (std::size_t i = slot(key);; i = (i + 1) & mask_) {
      if (keys_[i] == key) return times_[i];
      if (keys_[i] == kEmpty) return none;
    }
  }
  /// Records max(existing, t) for `key` at time `now` (t >= now; events come in time order).
  void raise(std::uint64_t key, Time t, Time now) {
    if (key == kEmpty) key = 1;  // the empty marker is never a real key
    if ((size_ + 1) * 2 > keys_.size()) grow(now);
    for (std::size_t i = slot(key);; i = (i + 1) & mask_) {
      if (keys_[i] == key) {
        if (times_[i] < t) times_[i] = t;
        return;
      }
      if (keys_[i] == kEmpty) {
        keys_[i] = key;
        times_[i] = t;
        counts_[i] = 0;
        ++size_;
        return;
      }
    }
  }
  /// The count recorded with `key` (set), 0 when there is none.
  std::uint32_t count(std::uint64_t key) const {
    if (keys_.empty()) return 0;
    for (std::size_t i = slot(key);; i = (i + 1) & mask_) {
      if (keys_[i] == key) return counts_[i];
      if (keys_[i] == kEmpty) return 0;
    }
  }
  /// Adds one to the count of `key`'s entry, if it has one; returns the count (0: no entry).
  std::uint32_t add_count(std::uint64_t key) {
    if (keys_.empty()) return 0;
    for (std::size_t i = slot(key);; i = (i + 1) & mask_) {
      if (keys_[i] == key) return ++counts_[i];
      if (keys_[i] == kEmpty) return 0;
    }
  }
  /// Records exactly `t` and `count` for `key` at time `now` (t >= now), whatever was there.
  void set(std::uint64_t key, Time t, std::uint32_t count, Time now) {
    if (key == kEmpty) key = 1;
    if ((size_ + 1) * 2 > keys_.size()) grow(now);
    for (std::size_t i = slot(key);; i = (i + 1) & mask_) {
      if (keys_[i] == key || keys_[i] == kEmpty) {
        size_ += keys_[i] == kEmpty;
        keys_[i] = key;
        times_[i] = t;
        counts_[i] = count;
        return;
      }
    }
  }
  std::size_t capacity() const { return keys_.size(); }
  void clear() {
    keys_.assign(keys_.size(), kEmpty);
    size_ = 0;
  }

 private:
  static constexpr std::uint64_t kEmpty = 0;
  std::size_t slot(std::uint64_t key) const { return static_cast<std::size_t>((key * 0x9e3779b97f4a7c15ull) >> 20) & mask_; }
  // Rebuilds without the dead entries, twice as large only if the live ones still fill a quarter.
  void grow(Time now) {
    std::size_t live = 0;
    for (std::size_t i = 0; i < keys_.size(); ++i) live += keys_[i] != kEmpty && times_[i] > now;
    std::vector<std::uint64_t> old_keys = std::move(keys_);
    std::vector<Time> old_times = std::move(times_);
    std::vector<std::uint32_t> old_counts = std::move(counts_);
    const std::size_t cap = old_keys.empty() ? 1024 : (live + 1) * 4 > old_keys.size() ? old_keys.size() * 2 : old_keys.size();
    keys_.assign(cap, kEmpty);
    times_.assign(cap, 0);
    counts_.assign(cap, 0);
    mask_ = cap - 1;
    size_ = 0;
    for (std::size_t i = 0; i < old_keys.size(); ++i)
      if (old_keys[i] != kEmpty && old_times[i] > now) set(old_keys[i], old_times[i], old_counts[i], now);
  }

  std::vector<std::uint64_t> keys_;
  std::vector<Time> times_;
  std::vector<std::uint32_t> counts_;  // what set() and add_count() keep with a key (0 after raise())
  std::size_t mask_ = 0;
  std::size_t size_ = 0;
};

}  // namespace tilesim
