#pragma once
// Workloads shared between the points of a sweep. Points that differ only in what the
// simulator models (L2 size, DRAM bandwidth, replacement, sim options) have the same workload
// and dispatch sequence: it is generated once and handed out read-only. Bounded in memory
// (least recently used entries go first), safe to use from many threads, and a workload that
// one thread is building is waited for, not built twice.
#include <cstddef>
#include <functional>
#include <future>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "workloads/kernel.hpp"

namespace tilesim::sweep {

class WorkloadCache {
 public:
  explicit WorkloadCache(std::size_t max_bytes = std::size_t{1} << 30) : max_bytes_(max_bytes) {}

  using Builder = std::function<Workload()>;
  /// The workload of `key`, built by `build` when no entry has it. Exceptions of `build` reach
  /// every caller waiting for that key, and nothing is cached for it.
  std::shared_ptr<const Workload> get(const std::string& key, const Builder& build);

  std::size_t builds() const;  ///< workloads built so far (not served from the cache)
  std::size_t hits() const;

 private:
  struct Entry {
    std::shared_future<std::shared_ptr<const Workload>> value;
    std::size_t bytes = 0;
    std::list<std::string>::iterator lru;
  };
  void evict_locked();

  mutable std::mutex mutex_;
  std::size_t max_bytes_;
  std::size_t bytes_ = 0;
  std::size_t builds_ = 0, hits_ = 0;
  std::list<std::string> lru_;  // most recent first
  std::unordered_map<std::string, Entry> entries_;
};

/// The memory a workload's arrays hold (what the cache counts).
std::size_t workload_bytes(const Workload& w);

}  // namespace tilesim::sweep
