#include "workloads/dependency_graph.hpp"

#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/strong_components.hpp>

#include <algorithm>

#include "common/error.hpp"

namespace tilesim {

namespace {

using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::directedS>;

std::string block_name(const Kernel& k, std::uint32_t b) {
  const Block& x = k.blocks[b];
  return "block " + std::to_string(b) + " of kernel '" + k.name + "' (tile " + std::to_string(x.tile_m) + "," +
         std::to_string(x.tile_n) + "," + std::to_string(x.tile_z) + ")";
}

// Semaphores posted and awaited by each block: (semaphore, value) pairs.
struct BlockSync {
  std::vector<std::uint32_t> posts;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> waits;
};

BlockSync sync_of(const Kernel& k, const Block& b) {
  BlockSync s;
  for (std::uint32_t i = 0; i < b.num_steps; ++i) {
    const Step& st = k.steps[b.first_step + i];
    if (st.post_sem != kNoSem) s.posts.push_back(st.post_sem);
    if (st.wait_sem != kNoSem) s.waits.emplace_back(st.wait_sem, st.wait_value);
  }
  return s;
}

}  // namespace

void check_dependencies_acyclic(const Workload& w) {
  const std::uint32_t num_sems = semaphores_used(w);
  if (num_sems == 0) return;  // stream order alone cannot form a cycle
  std::vector<std::uint32_t> base(w.kernels.size() + 1, 0);
  for (std::size_t k = 0; k < w.kernels.size(); ++k) base[k + 1] = base[k] + w.kernels[k].num_blocks();
  const std::uint32_t blocks = base.back();
  // Vertices: blocks, then one "end" vertex per kernel (so stream order costs 2n edges, not n^2).
  Graph g(blocks + w.kernels.size());
  std::vector<std::vector<std::uint32_t>> posters(num_sems), waiters(num_sems);
  for (std::uint32_t k = 0; k < w.kernels.size(); ++k) {
    const Kernel& K = w.kernels[k];
    for (std::uint32_t b = 0; b < K.num_blocks(); ++b) {
      const BlockSync s = sync_of(K, K.blocks[b]);
      for (std::uint32_t p : s.posts) posters[p].push_back(base[k] + b);
      for (const auto& [sem, value] : s.waits) waiters[sem].push_back(base[k] + b);
      boost::add_edge(base[k] + b, blocks + k, g);
    }
    for (std::uint32_t n = k + 1; n < w.kernels.size(); ++n)
      if (w.kernels[n].stream == K.stream) {
        for (std::uint32_t b = 0; b < w.kernels[n].num_blocks(); ++b) boost::add_edge(blocks + k, base[n] + b, g);
        break;
      }
  }
  for (std::uint32_t s = 0; s < num_sems; ++s)
    for (std::uint32_t p : posters[s])
      for (std::uint32_t q : waiters[s])
        if (p != q) boost::add_edge(p, q, g);
  std::vector<int> component(boost::num_vertices(g));
  const int n = boost::strong_components(g, component.data());
  std::vector<int> size(n, 0);
  for (int c : component) ++size[c];
  for (std::uint32_t v = 0; v < blocks; ++v) {
    if (size[component[v]] < 2) continue;
    const auto k = static_cast<std::uint32_t>(std::upper_bound(base.begin(), base.end(), v) - base.begin() - 1);
    throw DeadlockError("workload '" + w.name + "': cyclic dependencies: " + block_name(w.kernels[k], v - base[k]) +
                        " is part of a cycle of " + std::to_string(size[component[v]]) +
                        " blocks and kernel ends that wait on each other, so none of them can ever run");
  }
}

void check_progress(const Workload& w, std::uint32_t kernel, std::uint64_t slots) {
  const Kernel& K = w.kernels[kernel];
  // Semaphores this kernel waits on, and how many of its own blocks post each.
  const std::uint32_t num_sems = semaphores_used(w);
  std::vector<std::uint32_t> local_posters(num_sems, 0);
  std::vector<BlockSync> sync(K.num_blocks());
  bool waits = false;
  for (std::uint32_t b = 0; b < K.num_blocks(); ++b) {
    sync[b] = sync_of(K, K.blocks[b]);
    for (std::uint32_t p : sync[b].posts) ++local_posters[p];
    waits = waits || !sync[b].waits.empty();
  }
  if (!waits) return;
  std::vector<bool> external(num_sems, false);  // posted by some other kernel
  for (std::uint32_t k = 0; k < w.kernels.size(); ++k)
    if (k != kernel)
      for (const Step& st : w.kernels[k].steps)
        if (st.post_sem != kNoSem) external[st.post_sem] = true;
  std::vector<std::uint32_t> posted(num_sems, 0);
  const auto can_finish = [&](std::uint32_t b) {
    for (const auto& [sem, value] : sync[b].waits)
      if (!external[sem] && posted[sem] < value) return false;
    return true;
  };
  std::vector<std::uint32_t> resident;
  std::size_t next = 0;
  while (true) {
    while (resident.size() < slots && next < K.dispatch.size()) {
      if (K.dispatch[next] != kNoBlock) resident.push_back(K.dispatch[next]);
      ++next;
    }
    if (resident.empty()) return;
    std::vector<std::uint32_t> still;
    bool progressed = false;
    for (std::uint32_t b : resident) {
      if (can_finish(b)) {
        for (std::uint32_t p : sync[b].posts) ++posted[p];
        progressed = true;
      } else {
        still.push_back(b);
      }
    }
    resident.swap(still);
    if (progressed) continue;
    // Stuck: every resident block waits on something only blocks not yet dispatched can post.
    const std::uint32_t b = resident.front();
    std::uint32_t sem = 0, value = 0;
    for (const auto& [s, v] : sync[b].waits)
      if (!external[s] && posted[s] < v) {
        sem = s, value = v;
        break;  // the first wait it would block on
      }
    throw DeadlockError("kernel '" + K.name + "': its dispatch order cannot make progress with " + std::to_string(slots) +
                        " resident blocks: after " + std::to_string(next) + " of " +
                        std::to_string(K.dispatch.size()) + " dispatches every resident block waits; e.g. " +
                        block_name(K, b) + " waits for semaphore " + std::to_string(sem) + " to reach " +
                        std::to_string(value) + " (posted " + std::to_string(posted[sem]) + " times so far, by " +
                        std::to_string(local_posters[sem]) +
                        " blocks of this kernel in all), but the blocks that post it come later in the dispatch order "
                        "and cannot be dispatched while the waiting blocks hold every slot");
  }
}

}  // namespace tilesim
