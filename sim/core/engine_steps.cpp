// A resident block's steps: issuing its loads (software-pipelined, `stages` deep, within its
// SM's in-flight room, after its semaphore waits), their timing through the memory system, its
// MMA on the SM's shared pipe, its stores and semaphore posts.
#include <algorithm>
#include <cmath>

#include "common/hash.hpp"
#include "sim/core/engine.hpp"
#include "sim/core/tile_rect.hpp"

namespace tilesim::detail {

namespace {

// A zero-work step (an epilogue that only stores) ends at once, without the pipe.
constexpr std::uint32_t kZeroWork = 0;

std::uint64_t rect_key(const TileAccess& a) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (std::uint64_t v : {std::uint64_t{a.tensor}, std::uint64_t{a.batch}, std::uint64_t{a.row0}, std::uint64_t{a.col0},
                          std::uint64_t{a.rows}, std::uint64_t{a.cols}})
    h = (h ^ v) * 0x100000001b3ull;
  return h;
}

}  // namespace

void Engine::count(KernelRun& kr, const TileAccess& a, const L2AccessResult& r, bool write) {
  MemCounters c;
  if (write) {
    c.write_sectors = r.sectors;
    c.write_hit_sectors = r.hit_sectors;
  } else {
    c.read_sectors = r.sectors;
    c.read_hit_sectors = r.hit_sectors;
  }
  c.near_copy_hit_sectors = r.near_copy_hit_sectors;
  c.fabric_sectors = r.fabric_sectors;
  c.fill_hit_sectors = r.fill_hit_sectors;
  c.dram_read_bytes = r.dram_read_sectors * sector_bytes_;
  kr.stats.mem += c;
  kr.stats.tensors[a.tensor].mem += c;
}

// A bulk tensor copy's requests reach the L2 over the time the copy takes through the SM's
// port (mainloops' bulk_copies): the coalescer can merge a request for the same tile during
// all of it, the part that overlaps.
Time Engine::spread_ps(const KernelRun& kr, const TileAccess& a) const {
  if (kr.ps_per_copy_byte == 0) return 0;  // not bulk: no rectangle to size on the hot path
  const ByteRect rect = to_rect(w_.tensors[a.tensor], a);
  return static_cast<Time>(static_cast<double>(rect_sectors(rect, sector_bytes_) * sector_bytes_) * kr.ps_per_copy_byte);
}

// A read narrower than its kernel's fill chunk (a 32-element fp16 k-step under
// cp.async.L2::128B, a 32-byte row under the 64-byte fill) fetches its neighbours' bytes with
// its own: the key of the chunk-wide rectangle around it, which the neighbour's lookups find in
// the in-flight table and wait on when they hit what this miss is still fetching. 0: the read
// is as wide as the chunk, or straddles two (it fetches only what it asks for, or its misses
// are its own).
std::uint64_t Engine::fill_chunk_key(const KernelRun& kr, const TileAccess& a) const {
  if (kr.fill_chunk == 0) return 0;
  const Tensor& t = w_.tensors[a.tensor];
  const std::uint64_t chunk = std::uint64_t{kr.fill_chunk} * 8 / t.elem_bits;  // elements along the contiguous dimension
  const std::uint32_t c0 = t.col_major ? a.row0 : a.col0, nc = t.col_major ? a.rows : a.cols;
  if (chunk == 0 || nc >= chunk) return 0;
  const std::uint64_t first = c0 / chunk * chunk;
  if (c0 + nc > first + chunk) return 0;
  TileAccess wide = a;
  (t.col_major ? wide.row0 : wide.col0) = static_cast<std::uint32_t>(first);
  (t.col_major ? wide.rows : wide.cols) = static_cast<std::uint32_t>(chunk);
  return rect_key(wide) ^ 0x6a09e667f3bcc909ull;  // apart from the rectangle's own key
}

std::uint64_t Engine::request_key(const TileAccess& a, std::uint32_t sm) const {
  return coalesce_salt_.empty() ? rect_key(a) : rect_key(a) ^ coalesce_salt_[sm];
}

// Counts `sectors` of access `a` as merged by the request coalescer (never looked up); returns them.
std::uint64_t Engine::count_coalesced(KernelRun& kr, const TileAccess& a, std::uint64_t sectors) {
  MemCounters c;
  c.coalesced_sectors = sectors;
  kr.stats.mem += c;
  kr.stats.tensors[a.tensor].mem += c;
  return sectors;
}

// The request coalescer on load request `i` of a step (`step_acc`: the step's accesses), when
// l2.request_coalescing_ns is set: true when all of it merged into a request in flight (its data
// then arrives with that one's: `pending`); false when it is to be looked up, `rect` being what
// is left (all of it, or for a bulk copy the part its overlap with the other copy did not
// cover). `run` is the entry the step's previous request joined or opened. A request merges into
// an entry only while it carries fewer than l2.request_coalescing_max requests (`bounded`), its
// own included, whichever SMs they come from, load instructions and bulk copies alike: measured,
// eight repeats of one SM reach the L2 as two lookups and four as one, a repeated row's entry is
// then full, so that other SMs' requests for it are looked up (the Triton decode matmuls:
// docs/validation.md, "One entry, four requests"), and 2-132 SMs streaming the same pieces at
// once merge at most four to a lookup by TMA as by loads (measurements/h100/lrc_share). Another SM's request merges only
// into a request for whole lines: a request for part of each line (a 32-element fp16 k-step,
// 64 bytes of every line) is looked up every time, its own SM's repeats included (measured on
// CUTLASS 2's and the project's kernels, and on W4A16's wrapped halves of A: docs/validation.md,
// "Part lines are not merged" and "Part lines are not folded either").
bool Engine::coalesce_request(KernelRun& kr, const TileAccess* step_acc, std::uint32_t i, std::uint32_t sm, Time now,
                              bool bounded, ByteRect& rect, CoalesceRun& run, Time& pending, std::uint64_t& merged) {
  const TileAccess& a = step_acc[i];
  const std::uint64_t key = request_key(a, sm);
  // The same rectangle again from this SM (a wrapped tile's repeated rows, one warp's
  // instructions in a row): into the entry its previous request joined or opened. Only a request
  // for whole lines: part-line reads reach the L2 a sector a request, repeats and all (measured:
  // the W4A16 decode kernel's 64-byte halves of A, docs/validation.md "Part lines are not folded
  // either").
  const bool whole = whole_lines(rect, arch_.l2.line_bytes);
  if (whole && i > 0 && a == step_acc[i - 1] && (coalesce_max_ == 0 || run.count < coalesce_max_)) {
    merged += count_coalesced(kr, a, rect_sectors(rect, sector_bytes_));
    ++run.count;
    if (bounded && run.in_table) merge_until_.add_count(key);
    if (bounded && !run.in_table && !requested_count_.empty()) ++requested_count_.back();
    return true;
  }
  if (!whole) return false;
  const Time until = merge_until_.find(key, now);
  if (until <= now || (bounded && merge_until_.count(key) >= coalesce_max_)) return false;
  if (lrc_inv_lines_ > 0) {
    // l2.request_coalescing_lines: the entry survived the lines brought in since it opened
    // with probability exp(-lines / room); a draw from (key, that count) says whether it did.
    const std::uint32_t since = lrc_lines_[coalescer_of_sm_[sm]] - lrc_opened_.count(key);
    const double u = unit_interval(splitmix64(key ^ (std::uint64_t{since} << 32 | 0x4C52Cu)));
    if (u >= std::exp(-static_cast<double>(since) * lrc_inv_lines_)) return false;
  }
  // Just requested by another block: merged into it, or the part that overlaps.
  run = bounded ? CoalesceRun{merge_until_.add_count(key), true} : CoalesceRun{1, false};
  pending = std::max(pending, request_ready_.find(key, now));
  const Time window = coalesce_ps_ + spread_ps(kr, a);
  const std::uint32_t mr = window > coalesce_ps_ && until - now < window
                               ? static_cast<std::uint32_t>(a.rows * static_cast<double>(until - now) / window)
                               : a.rows;
  TileAccess part_a = a;
  part_a.rows = mr;
  merged += count_coalesced(kr, a, mr ? rect_sectors(to_rect(w_.tensors[a.tensor], part_a), sector_bytes_) : 0);
  if (mr == a.rows) return true;
  part_a.row0 = a.row0 + mr;
  part_a.rows = a.rows - mr;
  rect = to_rect(w_.tensors[a.tensor], part_a);
  return false;
}

// Issues the accesses of one step of `kind` from an SM; returns when they complete.
Time Engine::do_accesses(const SlotState& s, const Step& st, Time now, AccessKind kind) {
  const std::uint32_t kernel = s.kernel, block = s.block, sm = s.sm;
  const TileAccess* acc = s.acc;
  KernelRun& kr = runs_[kernel];
  L2AccessResult sum;
  const std::uint32_t part = mem_.partition_of(sm);
  // Loads through L1 reach the L2 unmerged (Kernel::cached_loads: the stream kernel's, measured).
  const bool coalesce = coalesce_ps_ > 0 && kind == AccessKind::load && !kr.k->cached_loads;
  const bool bounded = coalesce && coalesce_max_ != 0;  // loads and bulk copies alike (lrc_share)
  // Requests are remembered for the coalescer and for cluster partners' multicast slices.
  const bool remember = kind == AccessKind::load && (coalesce || kr.multicast);
  Time pending = now;  // latest in-flight fill or merged request this step's data waits for
  std::uint64_t merged = 0;
  CoalesceRun run;
  missed_.clear();
  requested_.clear();
  requested_count_.clear();
  requested_lines_.clear();
  for (std::uint32_t i = 0; i < st.num_accesses; ++i) {
    const TileAccess& a = acc[st.first_access + i];
    if (a.kind == AccessKind::multicast && kind == AccessKind::load) {
      // A partner's slice, multicast to this SM: through the port when the partner's request
      // is served. A partner that has not issued it yet is within a step of this block (a
      // cluster's blocks start together and run the same steps) and is not waited for.
      merged += rect_sectors(to_rect(w_.tensors[a.tensor], a), sector_bytes_);
      pending = std::max(pending, request_ready_.find(request_key(a, sm), now));
      continue;
    }
    if (a.kind != kind) continue;
    ByteRect rect = to_rect(w_.tensors[a.tensor], a);
    if (coalesce && coalesce_request(kr, acc + st.first_access, i, sm, now, bounded, rect, run, pending, merged)) continue;
    if (remember) {
      requested_.push_back(st.first_access + i);
      requested_count_.push_back(1);
    }
    if (lrc_inv_lines_ > 0 && coalesce) {
      std::uint32_t& lines = lrc_lines_[coalescer_of_sm_[sm]];
      lines += static_cast<std::uint32_t>(ceil_div<std::uint64_t>(rect_sectors(rect, sector_bytes_) * sector_bytes_, arch_.l2.line_bytes));
      requested_lines_.push_back(lines);
    }
    run = CoalesceRun{1, false};
    if (opt_.observer) opt_.observer->on_l2_request(kernel, sm, now, rect, part, kind == AccessKind::store);
    const L2AccessResult r = l2_.access(rect, part, kind == AccessKind::store, kr.k->l2_prefetch_bytes);
    count(kr, a, r, kind == AccessKind::store);
    if (opt_.observer) opt_.observer->on_access(kernel, block, a, r);
    if (r.dram_write_sectors) attribute_writebacks(kernel);
    sum += r;
    if (kind == AccessKind::load) {
      if (r.hit_sectors) {
        pending = std::max(pending, inflight_.find(rect_key(a), pending));
        if (const std::uint64_t ck = fill_chunk_key(kr, a)) pending = std::max(pending, inflight_.find(ck, pending));
      }
      if (r.dram_read_sectors) missed_.push_back(st.first_access + i);
    }
  }
  last_served_.port_ps = 0;
  if (sum.sectors == 0 && merged == 0) return now;
  // The step's requests wait in the coalescer while the crossbar serves those ahead of them;
  // requests for the same rectangle arriving meanwhile join them (l2.request_coalescing_queue).
  Time backlog = coalesce && coalesce_queue_ ? mem_.crossbar_backlog(sm, now) : 0;
  if (coalesce_queue_max_ps_ > 0) backlog = std::min(backlog, coalesce_queue_max_ps_);
  const MemoryTiming::Served t = mem_.serve(sm, now, sum, pending, merged, kr.port_factor);
  last_served_ = t;
  for (std::uint32_t i : missed_) {
    inflight_.raise(rect_key(acc[i]), t.filled, now);
    if (const std::uint64_t ck = fill_chunk_key(kr, acc[i])) inflight_.raise(ck, t.filled, now);
  }
  for (std::size_t j = 0; j < requested_.size(); ++j) {
    const std::uint64_t key = request_key(acc[requested_[j]], sm);
    if (coalesce) {
      const Time until = now + coalesce_ps_ + spread_ps(kr, acc[requested_[j]]) + backlog;
      if (bounded) merge_until_.set(key, until, requested_count_[j], now);  // a new entry
      else merge_until_.raise(key, until, now);
      if (lrc_inv_lines_ > 0) lrc_opened_.set(key, until, requested_lines_[j], now);
    }
    request_ready_.raise(key, t.ready, now);
  }
  return t.ready;
}

// The bytes a step loads (logical rectangles; what occupies the SM's in-flight room).
std::uint64_t Engine::load_bytes(const TileAccess* acc, const Step& st) const {
  std::uint64_t bytes = 0;
  for (std::uint32_t i = 0; i < st.num_accesses; ++i) {
    const TileAccess& a = acc[st.first_access + i];
    if (a.kind != AccessKind::store)  // multicast slices land in this block's shared memory too
      bytes += (std::uint64_t{a.rows} * a.cols * w_.tensors[a.tensor].elem_bits + 7) / 8;
  }
  return bytes;
}

// Parks the block on the step's semaphore if its value is not reached; true when parked.
bool Engine::park_on_semaphore(SlotState& s, const Step& st, std::uint32_t slot, Time now) {
  if (st.wait_sem == kNoSem || sem_[st.wait_sem] >= st.wait_value) return false;
  if (!s.queued) sem_waiters_[st.wait_sem].push_back(slot);
  s.queued = true;
  if (!s.waiting) s.wait_start = now;
  s.waiting = true;
  // A parked block still computes the steps it issued before; it stalls once they are done.
  if (s.stall_start < 0 && !s.computing && s.computed == s.next_issue) s.stall_start = now;
  return true;
}

void Engine::issue_loads(std::uint32_t slot, Time now) {
  SlotState& s = slots_[slot];
  const KernelRun& kr = runs_[s.kernel];
  const std::uint32_t stages = kr.k->stages;
  // How far ahead of the next step to compute loads may go: `stages` buffers; under
  // `prefetch: after_wait` the last of them fills only once the next step has started.
  const std::uint32_t ahead =
      kr.prefetch_after_wait && !s.computing ? std::max<std::uint32_t>(1, stages - 1) : stages;
  while (s.next_issue < s.num_steps && s.next_issue < s.computed + ahead) {
    const Step& st = s.steps[s.next_issue];
    // A loop per tile: the next tile's loads wait until the previous tile has computed all its
    // steps (its epilogue, the step without MMA work, included); so do a new loop's after a
    // pipeline restart marker. compute_done issues them.
    if (s.next_issue > 0 && s.computed < s.next_issue &&
        ((kr.k->drain_between_tiles && s.steps[s.next_issue - 1].flops == 0) ||
         s.steps[s.next_issue - 1].restarts_pipeline()))
      return;
    if (park_on_semaphore(s, st, slot, now)) return;
    if (s.waiting) stop_waiting(s, now);
    const std::uint64_t bytes = inflight_cap_ ? load_bytes(s.acc, st) : 0;
    if (inflight_cap_ && sm_inflight_[s.sm] > 0 && sm_inflight_[s.sm] + bytes > inflight_cap_) {
      // No room for this step's loads on the SM: it issues when earlier loads land.
      if (!s.issue_blocked) sm_issue_queue_[s.sm].push_back(slot);
      s.issue_blocked = true;
      return;
    }
    Time ready = do_accesses(s, st, now, AccessKind::load);
    Time extra = ready > now ? kr.load_use_ps : 0;  // a step that loads nothing has nothing to wait for
    // A semaphore check sits on the block's critical path whether or not it is already met.
    if (st.wait_sem != kNoSem) extra += check_ps_;
    ready = fair_port_ && ready > now && last_served_.port_ps > 0 ? share_port(slot, s.sm, s.next_issue, now, extra)
                                                                  : ready + extra;
    const std::size_t idx = stage_index(slot, s.next_issue);
    ready_[idx] = ready;
    stage_bytes_[idx] = bytes;
    sm_inflight_[s.sm] += bytes;
    push(ready, kLoadReady, slot, s.next_issue);
    ++s.next_issue;
  }
}

void Engine::start_block(std::uint32_t slot, Time now) {
  issue_loads(slot, now);
  if (runs_[slots_[slot].kernel].waiting_holds > 0) try_compute(slot, now);  // waiting for its first data: it holds
}

// sm.l2_port_sharing: fair. The port interleaves the requests of different blocks on its SM
// (processor sharing) instead of serving them one after the other: a request arriving while
// another block's is still in the port takes half the port from it while both are in, so that
// one's data lands later by as much as the newcomer's bytes take (at most what it had left) and
// the newcomer's sooner than behind it. Two blocks whose copies overlap thus both wait, as two
// synchronous blocks on one H100 SM do (calibration/measurements/h100/sync_pair), instead of
// settling into turns. A block's own requests stay in order; the port's total time is the same.
// Returns the new step's ready time; later ready times of the slowed steps are re-queued (their
// earlier kLoadReady events become stale: load_ready and try_compute check ready_).
Time Engine::share_port(std::uint32_t slot, std::uint32_t sm, std::uint32_t step, Time now, Time extra) {
  std::vector<PortJob>& jobs = port_jobs_[sm];
  std::erase_if(jobs, [&](const PortJob& j) { return j.port <= now; });
  const Time x = last_served_.port_ps;
  Time port = last_served_.port;
  const bool own = std::any_of(jobs.begin(), jobs.end(), [&](const PortJob& j) { return j.slot == slot; });
  if (!own && !jobs.empty()) {
    const Time backlog = std::max<Time>(0, port - x - now);
    port = now + x + std::min(x, backlog);
    for (PortJob& j : jobs) {
      j.port += std::min(j.port - now, x);
      const Time r = std::max(j.port, j.rest) + j.extra;
      const std::size_t idx = stage_index(j.slot, j.step);
      if (r > ready_[idx]) {
        ready_[idx] = r;
        push(r, kLoadReady, j.slot, j.step);
      }
    }
  }
  jobs.push_back({slot, step, port, last_served_.rest, extra});
  return std::max(port, last_served_.rest) + extra;
}

// A step's data has arrived: its bytes leave the SM's in-flight room, which may let blocks
// waiting for room issue, and the step may compute.
void Engine::load_ready(std::uint32_t slot, std::uint32_t step, Time now) {
  SlotState& s = slots_[slot];
  const std::size_t idx = stage_index(slot, step);
  if (fair_port_ && ready_[idx] > now) return;  // superseded: share_port moved it later
  if (stage_bytes_[idx]) {
    sm_inflight_[s.sm] -= stage_bytes_[idx];
    stage_bytes_[idx] = 0;
    std::vector<std::uint32_t> waiting;
    waiting.swap(sm_issue_queue_[s.sm]);
    for (std::uint32_t w : waiting) {
      slots_[w].issue_blocked = false;
      issue_loads(w, now);  // re-queues itself if there is still no room
      try_compute(w, now);
    }
  }
  try_compute(slot, now);
}

// A waiting block spins: it holds its SM's resources and reads its semaphore every poll
// interval (counted separately from the tiles' traffic).
void Engine::stop_waiting(SlotState& s, Time now) {
  const Time polled = now - s.wait_start;
  const Time stalled = s.stall_start >= 0 ? now - s.stall_start : 0;
  s.wait += stalled;
  s.waiting = false;
  s.stall_start = -1;
  KernelStats& ks = runs_[s.kernel].stats;
  ks.wait_ps += static_cast<std::uint64_t>(stalled);
  // It read the semaphore at least once, and every poll interval while parked.
  ks.poll_sectors += static_cast<std::uint64_t>(std::max<Time>(1, ceil_div<Time>(polled, poll_ps_)));
}

// Starts the next step's MMA on the SM's pipe once its data is in and the previous step is done.
void Engine::try_compute(std::uint32_t slot, Time now) {
  SlotState& s = slots_[slot];
  const KernelRun& kr = runs_[s.kernel];
  const std::uint32_t i = s.computed;
  if (s.computing || i >= s.next_issue) return;
  if (ready_[stage_index(slot, i)] > now) {
    if (kr.waiting_holds > 0 && !s.holding) set_hold(slot, true, now);
    return;
  }
  if (s.holding) set_hold(slot, false, now);
  const Step& st = s.steps[i];
  s.computing = true;
  const Time work = step_work(s, kr, st, i);
  if (work == 0) {
    push(now, kComputeDone, slot, kZeroWork);
  } else {
    changed_.clear();
    pipes_[s.sm].start(slot, static_cast<double>(work), kr.timing.share(st, kr.share), s.age, kr.arbitration, now,
                       changed_);
    schedule_changed();
  }
  if (kr.prefetch_after_wait) issue_loads(slot, now);  // the step has started: its last buffer's loads go
}

// A block waiting for its next step's data keeps its main loop's waiting_holds of its warps'
// part of the SM's pipe (its threads over the threads resident there), so the blocks computing
// beside it cannot use all of the pipe meanwhile: what two synchronous blocks on one H100 or
// H200 SM cost each other while they take turns (docs/validation.md, "Two blocks that share a
// port"). Released when its data is in.
void Engine::set_hold(std::uint32_t slot, bool hold, Time now) {
  SlotState& s = slots_[slot];
  const KernelRun& kr = runs_[s.kernel];
  s.holding = hold;
  const double fraction =
      hold ? kr.waiting_holds * kr.cost.threads / std::max<double>(1, pool_.threads(s.sm)) : 0.0;
  changed_.clear();
  pipes_[s.sm].set_hold(slot, fraction, now, changed_);
  schedule_changed();
}

// Each SM's deviation: the sum of four uniforms scaled to unit variance (bell-shaped, bounded
// at 3.5 standard deviations, so no SM stalls or races), drawn from (seed, SM).
std::vector<double> coresident_deviations(std::uint32_t sms, std::uint64_t seed) {
  std::vector<double> z(sms);
  for (std::uint32_t sm = 0; sm < sms; ++sm) {
    double sum = 0;
    for (std::uint64_t j = 0; j < 4; ++j)
      sum += unit_interval(splitmix64((seed ^ 0x5DEECE66Dull) * 0x9E3779B97F4A7C15ull ^ (std::uint64_t{sm} << 8 | j))) - 0.5;
    z[sm] = sum * std::sqrt(3.0);
  }
  return z;
}

// A k-step's pipe work: its duration at the SM's full rate, moved by its own deviation (zero
// mean, uniform, sm.step_noise_ns; sm.solo_step_noise_ns for a block alone on its SM), drawn
// from a hash of (seed, kernel, the step's first access): the step's identity whichever SM
// runs it, the same at any thread count. A step without accesses adds its block and index.
// Then by the deviation of the tile it loads last (sm.shared_step_noise_ns), drawn from a hash
// of (seed, kernel, that rectangle), the same for every block that loads it. On
// an SM holding two or more blocks it is also scaled by 1 + the SM's deviation times its main
// loop's coresident_rate_sd.
Time Engine::step_work(const SlotState& s, const KernelRun& kr, const Step& st, std::uint32_t step) const {
  const Time base = kr.timing.duration(st);
  if (base == 0 || st.flops == 0) return base;
  double ps = static_cast<double>(base);
  const double half = pool_.resident(s.sm) >= 2 ? noise_half_ps_ : solo_noise_half_ps_;
  const std::uint64_t seed = opt_.seed * 0x9E3779B97F4A7C15ull;
  if (half > 0) {
    const std::uint64_t id = st.num_accesses ? s.access_id_base + st.first_access
                                             : (std::uint64_t{1} << 47 | std::uint64_t{s.block} << 20 | step);
    ps += (unit_interval(splitmix64(seed ^ (std::uint64_t{s.kernel} << 48 | id))) * 2.0 - 1.0) * half;  // [-1, 1)
  }
  if (shared_noise_half_ps_ > 0) {
    for (std::uint32_t i = st.num_accesses; i-- > 0;) {  // the step's last load (a multicast slice counts)
      const TileAccess& a = s.acc[st.first_access + i];
      if (a.kind == AccessKind::store) continue;
      const std::uint64_t h = splitmix64(seed ^ 0xA5A5A5A5A5A5A5A5ull ^ splitmix64(rect_key(a) ^ std::uint64_t{s.kernel} << 48));
      ps += (unit_interval(h) * 2.0 - 1.0) * shared_noise_half_ps_;
      break;
    }
  }
  if (kr.coresident_sd > 0 && pool_.resident(s.sm) >= 2) ps *= std::max(0.5, 1.0 + kr.coresident_sd * coresident_z_[s.sm]);
  return std::max<Time>(1, static_cast<Time>(std::llround(ps)));
}

void Engine::schedule_changed() {
  for (const SmPipe::Completion& c : changed_) push(c.at, kComputeDone, c.slot, c.version);
  changed_.clear();
}

void Engine::pipe_done(std::uint32_t slot, std::uint32_t version, Time now) {
  SlotState& s = slots_[slot];
  if (version != kZeroWork) {
    changed_.clear();
    if (!pipes_[s.sm].finish(slot, version, now, changed_)) return;  // superseded by a rate change
    schedule_changed();
  }
  compute_done(slot, now);
}

void Engine::compute_done(std::uint32_t slot, Time now) {
  SlotState& s = slots_[slot];
  s.computing = false;
  const std::uint32_t i = s.computed++;
  const Step& st = s.steps[i];
  Time stored = do_accesses(s, st, now, AccessKind::store);
  // A post fences the stores to L2, then adds to the semaphore; the block waits for it.
  if (st.post_sem != kNoSem) stored += post_ps_;
  s.stores_done = std::max(s.stores_done, stored);
  if (st.post_sem != kNoSem) push(stored, kSemPost, slot, st.post_sem);
  issue_loads(slot, now);
  try_compute(slot, now);
  if (s.computed == s.num_steps) push(std::max(now, s.stores_done), kBlockDone, slot, 0);
}

void Engine::post(std::uint32_t sem, Time now) {
  ++sem_[sem];
  auto waiters = std::move(sem_waiters_[sem]);
  sem_waiters_[sem].clear();
  for (std::uint32_t slot : waiters) {
    slots_[slot].queued = false;
    issue_loads(slot, now);  // re-parks itself if its value is not reached yet
    try_compute(slot, now);
  }
}

}  // namespace tilesim::detail
