#include "sim/config/workload_cache.hpp"

namespace tilesim::sweep {

std::size_t workload_bytes(const Workload& w) {
  std::size_t b = sizeof(Workload) + w.tensors.size() * sizeof(Tensor);
  for (const Kernel& k : w.kernels)
    b += sizeof(Kernel) + k.blocks.size() * sizeof(Block) + k.steps.size() * sizeof(Step) +
         k.accesses.size() * sizeof(TileAccess) + k.dispatch.size() * sizeof(std::uint32_t);
  return b;
}

std::shared_ptr<const Workload> WorkloadCache::get(const std::string& key, const Builder& build) {
  std::unique_lock<std::mutex> lock(mutex_);
  auto it = entries_.find(key);
  if (it != entries_.end()) {
    ++hits_;
    lru_.splice(lru_.begin(), lru_, it->second.lru);
    const auto value = it->second.value;
    lock.unlock();  // it may still be being built by another thread: wait outside the lock
    return value.get();
  }
  std::promise<std::shared_ptr<const Workload>> promise;
  lru_.push_front(key);
  entries_[key] = Entry{promise.get_future().share(), 0, lru_.begin()};
  ++builds_;
  lock.unlock();

  std::shared_ptr<const Workload> built;
  try {
    built = std::make_shared<const Workload>(build());
  } catch (...) {
    promise.set_exception(std::current_exception());
    lock.lock();
    auto e = entries_.find(key);
    lru_.erase(e->second.lru);
    entries_.erase(e);
    throw;
  }
  promise.set_value(built);
  lock.lock();
  auto e = entries_.find(key);
  if (e != entries_.end()) {
    e->second.bytes = workload_bytes(*built);
    bytes_ += e->second.bytes;
    evict_locked();
  }
  return built;
}

void WorkloadCache::evict_locked() {
  // Entries still building count 0 bytes and are never the ones evicted first in practice:
  // they sit at the front of the list.
  while (bytes_ > max_bytes_ && lru_.size() > 1) {
    const std::string victim = lru_.back();
    auto e = entries_.find(victim);
    bytes_ -= e->second.bytes;
    lru_.pop_back();
    entries_.erase(e);
  }
}

std::size_t WorkloadCache::builds() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return builds_;
}

std::size_t WorkloadCache::hits() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return hits_;
}

}  // namespace tilesim::sweep
