#include "models/compute/mainloop.hpp"

#include <array>

namespace tilesim {

namespace {
constexpr std::array<std::string_view, kNumMainLoops> kNames{"mma_sync", "wgmma_cp_async", "wgmma_tma_ws"};
constexpr std::array<std::string_view, 2> kArbitrations{"oldest_first", "fair"};
}  // namespace

std::string_view mainloop_name(MainLoop k) { return kNames[static_cast<int>(k)]; }

std::optional<MainLoop> mainloop_from_name(std::string_view name) {
  for (int i = 0; i < kNumMainLoops; ++i)
    if (kNames[i] == name) return static_cast<MainLoop>(i);
  return std::nullopt;
}

std::vector<std::string> mainloop_names() { return {kNames.begin(), kNames.end()}; }

std::string_view arbitration_name(PipeArbitration a) { return kArbitrations[static_cast<int>(a)]; }

std::optional<PipeArbitration> arbitration_from_name(std::string_view name) {
  for (std::size_t i = 0; i < kArbitrations.size(); ++i)
    if (kArbitrations[i] == name) return static_cast<PipeArbitration>(i);
  return std::nullopt;
}

}  // namespace tilesim
