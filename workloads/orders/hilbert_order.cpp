// `hilbert`: a generalized Hilbert curve over any grid_m x grid_n rectangle, after the idea of
// Jakub Cervený's "gilbert" construction (own implementation).
//
// A sub-rectangle is walked from its origin corner and should end at the far corner along its
// major (longer-ish) axis, so that the next sub-rectangle starts next to it. Each step either
//  - walks a single row/column straight through,
//  - cuts a much-longer-than-wide rectangle in two halves along the major axis, or
//  - splits it Hilbert style into three: up the left part of the minor axis (with major and
//    minor swapped), across the full width above it, and back down the right part.
// Split points are rounded to even lengths where possible: a corner-to-corner walk whose end
// lies on the same side as its start needs an even length along that side, and an odd split
// forces a diagonal (non-adjacent) step. Odd shapes still need a few such steps; power-of-two
// squares need none.
#include <cstdint>

#include "workloads/orders/order.hpp"

namespace tilesim {

namespace {

struct Vec {
  std::int64_t m = 0, n = 0;
  Vec operator+(Vec o) const { return {m + o.m, n + o.n}; }
  Vec operator-() const { return {-m, -n}; }
  Vec operator*(std::int64_t k) const { return {m * k, n * k}; }
};

class HilbertWalker {
 public:
  explicit HilbertWalker(std::vector<TileCoord>& out) : out_(out) {}

  /// Visits the len_a x len_b cells origin + i*dir_a + j*dir_b (dir_* are unit vectors),
  /// starting at origin and ending (when the shape allows) at origin + (len_a - 1) * dir_a.
  void walk(Vec origin, Vec dir_a, std::int64_t len_a, Vec dir_b, std::int64_t len_b) {
    if (len_b == 1) return line(origin, dir_a, len_a);
    if (len_a == 1) return line(origin, dir_b, len_b);

    if (2 * len_a > 3 * len_b) {
      // Long and thin: two halves side by side keep the pieces close to square.
      std::int64_t half_a = len_a / 2;
      if (half_a % 2 == 1 && len_a > 2) ++half_a;
      walk(origin, dir_a, half_a, dir_b, len_b);
      walk(origin + dir_a * half_a, dir_a, len_a - half_a, dir_b, len_b);
      return;
    }

    std::int64_t half_a = len_a / 2;
    std::int64_t half_b = len_b / 2;
    if (half_b % 2 == 1 && len_b > 2) ++half_b;
    // Up: the lower-left block, walked along dir_b so it ends just below the top band.
    walk(origin, dir_b, half_b, dir_a, half_a);
    // Across: the full-width band above it.
    walk(origin + dir_b * half_b, dir_a, len_a, dir_b, len_b - half_b);
    // Down: the lower-right block, from below the band's end back to the major-axis corner.
    walk(origin + dir_a * (len_a - 1) + dir_b * (half_b - 1), -dir_b, half_b, -dir_a, len_a - half_a);
  }

 private:
  void line(Vec from, Vec dir, std::int64_t len) {
    for (std::int64_t i = 0; i < len; ++i) {
      const Vec p = from + dir * i;
      out_.push_back({static_cast<std::uint32_t>(p.m), static_cast<std::uint32_t>(p.n)});
    }
  }

  std::vector<TileCoord>& out_;
};

class HilbertOrder final : public LaunchOrder {
 public:
  std::string describe() const override { return "hilbert"; }

  std::vector<TileCoord> sequence(std::uint32_t grid_m, std::uint32_t grid_n) const override {
    std::vector<TileCoord> out;
    if (grid_m == 0 || grid_n == 0) return out;
    out.reserve(static_cast<std::size_t>(grid_m) * grid_n);
    HilbertWalker walker(out);
    // The longer side is the major axis, so the curve starts at (0, 0) and ends at the far
    // corner of the long side.
    const Vec along_m{1, 0}, along_n{0, 1};
    if (grid_n >= grid_m)
      walker.walk({0, 0}, along_n, grid_n, along_m, grid_m);
    else
      walker.walk({0, 0}, along_m, grid_m, along_n, grid_n);
    return out;
  }
};

const bool registered = register_order("hilbert",
    "a generalized Hilbert curve over any grid rectangle",
    [](const ConfigNode& node, const std::string&) {
  node.allow_keys({"kind"});
  return std::make_unique<HilbertOrder>();
});

}  // namespace

}  // namespace tilesim
