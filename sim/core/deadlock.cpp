// Explaining a simulated deadlock: which block waits, on what, and why it can never come.
#include <string>

#include "sim/core/engine.hpp"

namespace tilesim::detail {

namespace {

std::string tile_of(const Block& b) {
  return "tile (" + std::to_string(b.tile_m) + "," + std::to_string(b.tile_n) + "," + std::to_string(b.tile_z) + ")";
}

// Why a block that would post `sem` cannot: it is waiting too, it is not dispatched (and why),
// or its kernel never launched.
std::string poster_state(const Workload& w, const std::vector<KernelRun>& kernels, const std::vector<SlotState>& slots,
                         std::uint32_t kernel, std::uint32_t block, std::uint32_t num_sms) {
  const KernelRun& kr = kernels[kernel];
  const std::string who = "block " + std::to_string(block) + " of kernel '" + kr.k->name + "' (" +
                          tile_of(kr.k->blocks[block]) + ")";
  for (const SlotState& s : slots)
    if (s.busy && s.kernel == kernel && s.block == block)
      return who + ", which is itself waiting on SM " + std::to_string(s.sm);
  if (!kr.launched)
    return who + ", whose kernel never launched: it is behind an unfinished kernel on stream " +
           std::to_string(kr.k->stream);
  std::uint32_t resident = 0, waiting = 0;
  for (const SlotState& s : slots) {
    resident += s.busy;
    waiting += s.busy && s.waiting;
  }
  return who + ", which is not dispatched: its kernel's dispatch order puts it after blocks that " +
         "now hold all the room on the " + std::to_string(num_sms) + " SMs (" + std::to_string(resident) +
         " resident blocks, " + std::to_string(waiting) + " of them waiting)";
}

}  // namespace

std::string explain_deadlock(const Workload& w, const std::vector<KernelRun>& kernels,
                             const std::vector<SlotState>& slots, const std::vector<std::uint32_t>& sems,
                             std::uint32_t num_sms) {
  std::uint32_t unfinished = 0;
  for (const KernelRun& kr : kernels) unfinished += !kr.finished;
  std::string msg = std::to_string(unfinished) + " kernel(s) can never finish";
  const SlotState* waiter = nullptr;
  for (const SlotState& s : slots)
    if (s.busy && s.waiting) {
      waiter = &s;
      break;
    }
  if (!waiter) return msg + ": no block is waiting, yet no event is left (an internal inconsistency)";
  const KernelRun& kr = kernels[waiter->kernel];
  const Step& st = waiter->steps[waiter->next_issue];
  msg += "; block " + std::to_string(waiter->block) + " of kernel '" + kr.k->name + "' (" +
         tile_of(kr.k->blocks[waiter->block]) + ") on SM " + std::to_string(waiter->sm) + " waits at step " +
         std::to_string(waiter->next_issue) + " for semaphore " + std::to_string(st.wait_sem) + " to reach " +
         std::to_string(st.wait_value) + " (it holds " + std::to_string(sems[st.wait_sem]) + ")";
  // Who posts that semaphore and has not yet done so? Report the first such block.
  for (std::uint32_t k = 0; k < kernels.size(); ++k) {
    const Kernel& K = *kernels[k].k;
    if (K.lazy()) continue;  // a lazy kernel's blocks post no semaphores
    for (std::uint32_t b = 0; b < K.blocks.size(); ++b) {
      if (k == waiter->kernel && b == waiter->block) continue;  // its own later post cannot unblock it
      const Block& B = K.blocks[b];
      bool posts = false;
      for (std::uint32_t i = 0; i < B.num_steps && !posts; ++i) posts = K.steps[B.first_step + i].post_sem == st.wait_sem;
      if (!posts) continue;
      // A block that finished has posted already; look for one that has not run yet or is stuck.
      bool done = true;
      for (const SlotState& s : slots) done = done && !(s.busy && s.kernel == k && s.block == b);
      if (done && kernels[k].launched) {
        bool dispatched = false;
        for (std::size_t p = 0; p < kernels[k].next_dispatch; ++p) dispatched = dispatched || K.dispatch[p] == b;
        if (dispatched) continue;
      }
      return msg + "; it would be posted by " + poster_state(w, kernels, slots, k, b, num_sms) + ", so it can never come";
    }
  }
  return msg + "; no block that has not yet run posts semaphore " + std::to_string(st.wait_sem) +
         ", so the value can never be reached";
}

}  // namespace tilesim::detail
