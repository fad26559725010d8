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

// An abstract execution at step granularity: a resident block passes its steps in order,
// applying each step's post as it passes it and stopping at the first wait not yet met (as
// the engine issues steps in order). Timing is ignored; only whether progress is possible.
struct Abstract {
  const Workload& w;
  std::vector<std::uint32_t> sem;
  // Per kernel: each block's next step (num_steps when finished).
  std::vector<std::vector<std::uint32_t>> next;

  explicit Abstract(const Workload& wl) : w(wl), sem(semaphores_used(wl), 0), next(wl.kernels.size()) {
    for (std::size_t k = 0; k < wl.kernels.size(); ++k) next[k].assign(wl.kernels[k].num_blocks(), 0);
  }
  bool done(std::uint32_t k, std::uint32_t b) const { return next[k][b] >= w.kernels[k].blocks[b].num_steps; }
  // Advances a block as far as it can; true if it moved.
  bool advance(std::uint32_t k, std::uint32_t b, const std::vector<bool>* assume_posted) {
    const Kernel& K = w.kernels[k];
    const Block& B = K.blocks[b];
    bool moved = false;
    while (next[k][b] < B.num_steps) {
      const Step& s = K.steps[B.first_step + next[k][b]];
      if (s.wait_sem != kNoSem && sem[s.wait_sem] < s.wait_value &&
          !(assume_posted && (*assume_posted)[s.wait_sem]))
        break;
      if (s.post_sem != kNoSem) ++sem[s.post_sem];
      ++next[k][b];
      moved = true;
    }
    return moved;
  }
  // The wait a stuck block is blocked on.
  const Step& blocked_step(std::uint32_t k, std::uint32_t b) const {
    return w.kernels[k].steps[w.kernels[k].blocks[b].first_step + next[k][b]];
  }
};

// Names a cycle among stuck blocks if there is one: an edge from each stuck block to every
// unfinished block that posts what it waits for.
std::string describe_stuck(const Abstract& a, const std::vector<std::pair<std::uint32_t, std::uint32_t>>& stuck) {
  const Workload& w = a.w;
  std::vector<std::vector<std::uint32_t>> posters(a.sem.size());  // index into stuck/unfinished list
  std::vector<std::pair<std::uint32_t, std::uint32_t>> nodes = stuck;
  for (std::uint32_t k = 0; k < w.kernels.size(); ++k)
    for (std::uint32_t b = 0; b < w.kernels[k].num_blocks(); ++b) {
      if (a.done(k, b)) continue;
      const Block& B = w.kernels[k].blocks[b];
      bool listed = std::find(nodes.begin(), nodes.end(), std::make_pair(k, b)) != nodes.end();
      for (std::uint32_t i = a.next[k][b]; i < B.num_steps; ++i) {
        const std::uint32_t p = w.kernels[k].steps[B.first_step + i].post_sem;
        if (p == kNoSem) continue;
        if (!listed) nodes.emplace_back(k, b), listed = true;
        const auto idx = static_cast<std::uint32_t>(std::find(nodes.begin(), nodes.end(), std::make_pair(k, b)) - nodes.begin());
        posters[p].push_back(idx);
      }
    }
  Graph g(nodes.size());
  for (std::uint32_t i = 0; i < stuck.size(); ++i) {
    const Step& s = a.blocked_step(stuck[i].first, stuck[i].second);
    for (std::uint32_t p : posters[s.wait_sem])
      if (p != i) boost::add_edge(i, p, g);
  }
  std::vector<int> component(nodes.size());
  const int n = boost::strong_components(g, component.data());
  std::vector<int> size(n, 0);
  for (int c : component) ++size[c];
  const auto [k0, b0] = stuck.front();
  const Step& s0 = a.blocked_step(k0, b0);
  for (std::uint32_t i = 0; i < stuck.size(); ++i)
    if (size[component[i]] > 1) {
      const Step& s = a.blocked_step(stuck[i].first, stuck[i].second);
      return "cyclic dependencies: " + block_name(w.kernels[stuck[i].first], stuck[i].second) +
             " waits for semaphore " + std::to_string(s.wait_sem) + " to reach " + std::to_string(s.wait_value) +
             " and is part of a cycle of " + std::to_string(size[component[i]]) +
             " blocks that wait on each other's posts, so none of them can ever run";
    }
  return block_name(w.kernels[k0], b0) + " waits for semaphore " + std::to_string(s0.wait_sem) + " to reach " +
         std::to_string(s0.wait_value) + " (posted " + std::to_string(a.sem[s0.wait_sem]) +
         " times), but no block that has not yet passed its post of it remains";
}

}  // namespace

void check_dependencies_acyclic(const Workload& w) {
  if (semaphores_used(w) == 0) return;  // stream order alone cannot get stuck
  // Every block resident at once (unlimited slots), kernels of a stream in order: if even
  // this cannot finish, the dependencies themselves are unsatisfiable.
  Abstract a(w);
  std::vector<bool> finished(w.kernels.size(), false), active(w.kernels.size(), false);
  std::vector<bool> stream_started;
  for (std::uint32_t k = 0; k < w.kernels.size(); ++k) {
    const std::uint32_t s = w.kernels[k].stream;
    if (s >= stream_started.size()) stream_started.resize(s + 1, false);
    if (!stream_started[s]) active[k] = stream_started[s] = true;
  }
  bool progress = true;
  while (progress) {
    progress = false;
    for (std::uint32_t k = 0; k < w.kernels.size(); ++k) {
      if (!active[k] || finished[k]) continue;
      bool all_done = true;
      for (std::uint32_t b = 0; b < w.kernels[k].num_blocks(); ++b) {
        progress = a.advance(k, b, nullptr) || progress;
        all_done = all_done && a.done(k, b);
      }
      if (!all_done) continue;
      finished[k] = true;
      progress = true;
      for (std::uint32_t n = k + 1; n < w.kernels.size(); ++n)
        if (w.kernels[n].stream == w.kernels[k].stream) {
          active[n] = true;
          break;
        }
    }
  }
  std::vector<std::pair<std::uint32_t, std::uint32_t>> stuck;
  for (std::uint32_t k = 0; k < w.kernels.size(); ++k)
    if (active[k] && !finished[k])
      for (std::uint32_t b = 0; b < w.kernels[k].num_blocks(); ++b)
        if (!a.done(k, b)) stuck.emplace_back(k, b);
  if (stuck.empty()) return;
  throw DeadlockError("workload '" + w.name + "': " + describe_stuck(a, stuck));
}

void check_progress(const Workload& w, std::uint32_t kernel, std::uint64_t slots) {
  const Kernel& K = w.kernels[kernel];
  bool waits = false;
  for (const Step& s : K.steps) waits = waits || s.wait_sem != kNoSem;
  if (!waits) return;
  // Semaphores some other kernel posts are assumed to come (the engine checks those live).
  std::vector<bool> external(semaphores_used(w), false);
  for (std::uint32_t k = 0; k < w.kernels.size(); ++k)
    if (k != kernel)
      for (const Step& st : w.kernels[k].steps)
        if (st.post_sem != kNoSem) external[st.post_sem] = true;
  Abstract a(w);
  std::vector<std::uint32_t> resident;
  std::size_t next = 0;
  while (true) {
    while (resident.size() < slots && next < K.dispatch.size()) {
      if (K.dispatch[next] != kNoBlock) resident.push_back(K.dispatch[next]);
      ++next;
    }
    if (resident.empty()) return;
    bool progressed = false;
    for (std::uint32_t b : resident) progressed = a.advance(kernel, b, &external) || progressed;
    std::vector<std::uint32_t> still;
    for (std::uint32_t b : resident)
      if (!a.done(kernel, b)) still.push_back(b);
    progressed = progressed || still.size() != resident.size();
    resident.swap(still);
    if (progressed) continue;
    const std::uint32_t b = resident.front();
    const Step& s = a.blocked_step(kernel, b);
    throw DeadlockError("kernel '" + K.name + "': its dispatch order cannot make progress with " + std::to_string(slots) +
                        " resident blocks: after " + std::to_string(next) + " of " + std::to_string(K.dispatch.size()) +
                        " dispatches every resident block waits; e.g. " + block_name(K, b) + " waits for semaphore " +
                        std::to_string(s.wait_sem) + " to reach " + std::to_string(s.wait_value) + " (posted " +
                        std::to_string(a.sem[s.wait_sem]) +
                        " times so far), but the blocks that post it come later in the dispatch order "
                        "and cannot be dispatched while the waiting blocks hold every slot");
  }
}

}  // namespace tilesim
