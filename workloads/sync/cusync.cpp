#include "workloads/sync/cusync.hpp"

namespace tilesim::sync_detail {

void cusync_streams(ChainPair& p, Workload& out) {
  const std::uint32_t started = out.num_semaphores++;
  Kernel& last = p.producers.back();
  for (const Block& b : last.blocks)
    if (b.num_steps > 0 && last.steps[b.first_step].post_sem == kNoSem) last.steps[b.first_step].post_sem = started;
  Kernel wait;
  wait.name = "wait";
  wait.stream = p.consumer_stream;
  wait.compute_dtype = p.consumer.compute_dtype;
  wait.resources = {32, 16, 0};
  Step s;
  s.wait_sem = started;
  s.wait_value = 1;
  wait.steps.push_back(s);
  wait.blocks.push_back(Block{0, 1, 0, 0, 0});
  wait.dispatch = {0};
  append_producers(p, out, p.producer_stream);
  out.kernels.push_back(std::move(wait));
  p.consumer.stream = p.consumer_stream;
  out.kernels.push_back(std::move(p.consumer));
}

}  // namespace tilesim::sync_detail
