#include "sim/core/sm_pipe.hpp"

#include <algorithm>
#include <cmath>

namespace tilesim {

void SmPipe::start(std::uint32_t slot, double work_ps, double share, std::uint64_t age, PipeArbitration how, Time now,
                   std::vector<Completion>& changed) {
  advance(now);
  jobs_.push_back(Job{slot, 0, std::max(0.0, work_ps), std::clamp(share, 1e-6, 1.0), -1.0, age, how});
  reallocate(now, changed);
}

bool SmPipe::finish(std::uint32_t slot, std::uint32_t version, Time now, std::vector<Completion>& changed) {
  auto it = std::find_if(jobs_.begin(), jobs_.end(), [&](const Job& j) { return j.slot == slot; });
  if (it == jobs_.end() || it->version != version) return false;
  advance(now);
  jobs_.erase(it);
  reallocate(now, changed);
  return true;
}

void SmPipe::set_hold(std::uint32_t slot, double fraction, Time now, std::vector<Completion>& changed) {
  auto it = std::find_if(holds_.begin(), holds_.end(), [&](const Hold& h) { return h.slot == slot; });
  const double before = it == holds_.end() ? 0.0 : it->fraction;
  if (before == fraction) return;
  if (it != holds_.end()) holds_.erase(it);
  if (fraction > 0) holds_.push_back(Hold{slot, fraction});
  double held = 0;
  for (const Hold& h : holds_) held += h.fraction;
  held_ = std::min(1.0, held);
  if (jobs_.empty()) return;  // nothing's rate to change; the next start takes the holds as they are
  advance(now);
  reallocate(now, changed);
}

double SmPipe::rate_of(std::uint32_t slot) const {
  for (const Job& j : jobs_)
    if (j.slot == slot) return std::max(0.0, j.rate);
  return 0.0;
}

void SmPipe::advance(Time now) {
  const double dt = static_cast<double>(now - last_);
  if (dt > 0)
    for (Job& j : jobs_) j.remaining = std::max(0.0, j.remaining - std::max(0.0, j.rate) * dt);
  last_ = now;
}

void SmPipe::reallocate(Time now, std::vector<Completion>& changed) {
  // Oldest first; ages are unique (dispatch order), so the order is total and deterministic.
  std::sort(jobs_.begin(), jobs_.end(), [](const Job& a, const Job& b) { return a.age < b.age; });
  const bool fair = std::all_of(jobs_.begin(), jobs_.end(), [](const Job& j) { return j.how == PipeArbitration::fair; });
  std::vector<double>& rate = rate_;
  rate.assign(jobs_.size(), 0.0);
  // What the blocks waiting for their data keep (set_hold) the jobs cannot use.
  const double capacity = std::max(0.0, 1.0 - held_);
  if (fair) {
    // Water-filling: equal rates, jobs capped by their share give their excess to the others.
    double left = capacity;
    std::size_t open = jobs_.size();
    std::vector<char>& capped = capped_;
    capped.assign(jobs_.size(), 0);
    bool again = true;
    while (again && open > 0) {
      again = false;
      const double level = left / static_cast<double>(open);
      for (std::size_t i = 0; i < jobs_.size(); ++i)
        if (!capped[i] && jobs_[i].share <= level) {
          rate[i] = jobs_[i].share;
          left -= rate[i];
          capped[i] = 1;
          --open;
          again = true;
        }
    }
    for (std::size_t i = 0; i < jobs_.size(); ++i)
      if (!capped[i]) rate[i] = left / static_cast<double>(open);
  } else {
    double left = capacity;
    for (std::size_t i = 0; i < jobs_.size(); ++i) {
      rate[i] = std::min(jobs_[i].share, left);
      left = std::max(0.0, left - rate[i]);
    }
  }
  for (std::size_t i = 0; i < jobs_.size(); ++i) {
    Job& j = jobs_[i];
    // Its event still holds when its rate is unchanged, or when it has no work left (its
    // completion is due now: a new event would only duplicate it).
    const bool holds = rate[i] == j.rate || j.remaining <= 0;
    j.rate = rate[i];
    if (holds) continue;
    j.version = next_version_++;
    if (j.rate > 0)
      changed.push_back(Completion{j.slot, now + static_cast<Time>(std::ceil(j.remaining / j.rate)), j.version});
  }
}

}  // namespace tilesim
