// Launch-order policies: each is a bijection onto the tile grid, and the published formulas
// (CUTLASS 2.x swizzle, Triton grouped order) are reproduced exactly.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdlib>
#include <set>
#include <sstream>

#include "common/error.hpp"
#include "workloads/orders/order.hpp"
#include "order_test_util.hpp"

using namespace tilesim;
using tilesim::test::cat;

namespace {

std::unique_ptr<LaunchOrder> order_from(const std::string& yaml) {
  return make_order(ConfigNode(YAML::Load(yaml), "exp.yaml", "order"), "");
}

/// True when `seq` without kEarlyExit entries holds every tile of the grid exactly once.
bool is_bijection(const std::vector<TileCoord>& seq, std::uint32_t gm, std::uint32_t gn) {
  std::vector<int> count(static_cast<std::size_t>(gm) * gn, 0);
  for (const auto& t : seq) {
    if (t == kEarlyExit) continue;
    if (t.m >= gm || t.n >= gn) return false;
    if (++count[static_cast<std::size_t>(t.m) * gn + t.n] != 1) return false;
  }
  return std::all_of(count.begin(), count.end(), [](int c) { return c == 1; });
}

std::size_t count_exits(const std::vector<TileCoord>& seq) {
  return static_cast<std::size_t>(std::count(seq.begin(), seq.end(), kEarlyExit));
}

bool adjacent(TileCoord a, TileCoord b) {
  const auto dm = a.m > b.m ? a.m - b.m : b.m - a.m;
  const auto dn = a.n > b.n ? a.n - b.n : b.n - a.n;
  return dm + dn == 1;
}

/// The Triton tutorial kernel's index math, transcribed with Python-like signed ints.
TileCoord triton_grouped(long pid, long num_pid_m, long num_pid_n, long group_size_m_param) {
  const long num_pid_in_group = group_size_m_param * num_pid_n;
  const long group_id = pid / num_pid_in_group;
  const long first_pid_m = group_id * group_size_m_param;
  const long group_size_m = std::min(num_pid_m - first_pid_m, group_size_m_param);
  const long pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m);
  const long pid_n = (pid % num_pid_in_group) / group_size_m;
  return {static_cast<std::uint32_t>(pid_m), static_cast<std::uint32_t>(pid_n)};
}

/// Blocks of A and B loaded to compute the first `count` dispatched tiles with K = k_tiles:
/// each distinct row of tiles needs k_tiles blocks of A, each distinct column k_tiles of B.
std::size_t blocks_loaded(const std::vector<TileCoord>& seq, std::size_t count, std::size_t k_tiles) {
  std::set<std::uint32_t> rows, cols;
  for (std::size_t i = 0; i < count; ++i) {
    rows.insert(seq[i].m);
    cols.insert(seq[i].n);
  }
  return rows.size() * k_tiles + cols.size() * k_tiles;
}

}  // namespace

TEST_CASE("every order kind is registered", "[orders]") {
  const auto kinds = order_kinds();
  for (const char* k : {"row", "column", "swizzle", "grouped", "hilbert", "file", "cutlass_sm90", "thunderkittens", "fa3"})
    CHECK(std::find(kinds.begin(), kinds.end(), k) != kinds.end());
}

TEST_CASE("row and column follow their index formulas on all shapes up to 40x40", "[orders]") {
  const auto row = order_from("kind: row");
  const auto column = order_from("kind: column");
  CHECK(row->describe() == "row");
  CHECK(column->describe() == "column");
  for (std::uint32_t gm = 1; gm <= 40; ++gm) {
    for (std::uint32_t gn = 1; gn <= 40; ++gn) {
      INFO("grid " << gm << "x" << gn);
      const auto r = row->sequence(gm, gn);
      const auto c = column->sequence(gm, gn);
      std::vector<TileCoord> want_r, want_c;
      for (std::uint32_t i = 0; i < gm * gn; ++i) {
        want_r.push_back({i / gn, i % gn});
        want_c.push_back({i % gm, i / gm});
      }
      REQUIRE(r == want_r);
      REQUIRE(c == want_c);
      REQUIRE(is_bijection(r, gm, gn));
      REQUIRE(is_bijection(c, gm, gn));
    }
  }
}

TEST_CASE("swizzle covers every tile once and pads with early exits", "[orders]") {
  for (int log_tile = 0; log_tile <= 6; ++log_tile) {
    const auto order = order_from(cat("{kind: swizzle, log_tile: ", log_tile, "}"));
    CHECK(order->describe() == cat("swizzle(log_tile=", log_tile, ")"));
    const std::uint32_t tile = 1u << log_tile;
    for (std::uint32_t gm = 1; gm <= 40; ++gm) {
      for (std::uint32_t gn = 1; gn <= 40; ++gn) {
        INFO("log_tile " << log_tile << " grid " << gm << "x" << gn);
        const auto seq = order->sequence(gm, gn);
        const std::size_t padded = std::size_t{gm << log_tile} * ((gn + tile - 1) / tile);
        REQUIRE(seq.size() == padded);
        REQUIRE(count_exits(seq) == padded - std::size_t{gm} * gn);
        REQUIRE(is_bijection(seq, gm, gn));
      }
    }
  }
}

TEST_CASE("swizzle with log_tile 0 is column order", "[orders]") {
  // grid = dim3(grid_m, grid_n), x fastest, m = x, n = y: m runs fastest, i.e. column order.
  const auto swizzle = order_from("kind: swizzle");  // log_tile defaults to 0
  const auto column = order_from("kind: column");
  for (std::uint32_t gm = 1; gm <= 40; ++gm)
    for (std::uint32_t gn = 1; gn <= 40; ++gn) REQUIRE(swizzle->sequence(gm, gn) == column->sequence(gm, gn));
}

TEST_CASE("swizzle matches a hand-computed 3x5 example with log_tile 1", "[orders]") {
  // Launched grid: x = 3 << 1 = 6, y = ceil(5 / 2) = 3; position i -> x = i % 6, y = i / 6;
  // m = x >> 1, n = 2y + (x & 1).
  //   y=0: x=0..5 -> (0,0) (0,1) (1,0) (1,1) (2,0) (2,1)
  //   y=1:         -> (0,2) (0,3) (1,2) (1,3) (2,2) (2,3)
  //   y=2:         -> (0,4) (0,5)=exit (1,4) (1,5)=exit (2,4) (2,5)=exit
  const TileCoord X = kEarlyExit;
  const std::vector<TileCoord> want = {{0, 0}, {0, 1}, {1, 0}, {1, 1}, {2, 0}, {2, 1},
                                       {0, 2}, {0, 3}, {1, 2}, {1, 3}, {2, 2}, {2, 3},
                                       {0, 4}, X,      {1, 4}, X,      {2, 4}, X};
  CHECK(order_from("{kind: swizzle, log_tile: 1}")->sequence(3, 5) == want);
}

TEST_CASE("grouped matches the Triton tutorial formula", "[orders]") {
  for (long group_m = 1; group_m <= 12; ++group_m) {
    const auto order = order_from(cat("{kind: grouped, group_m: ", group_m, "}"));
    CHECK(order->describe() == cat("grouped(group_m=", group_m, ")"));
    for (std::uint32_t gm = 1; gm <= 40; ++gm) {
      for (std::uint32_t gn = 1; gn <= 40; ++gn) {
        INFO("group_m " << group_m << " grid " << gm << "x" << gn);
        const auto seq = order->sequence(gm, gn);
        std::vector<TileCoord> want;
        for (long pid = 0; pid < long{gm} * gn; ++pid) want.push_back(triton_grouped(pid, gm, gn, group_m));
        REQUIRE(seq == want);
        REQUIRE(is_bijection(seq, gm, gn));
      }
    }
  }
}

TEST_CASE("grouped degenerates to row and column order", "[orders]") {
  const auto row = order_from("kind: row");
  const auto column = order_from("kind: column");
  const auto one = order_from("{kind: grouped, group_m: 1}");
  const auto big = order_from("{kind: grouped, group_m: 50}");
  for (std::uint32_t gm = 1; gm <= 40; ++gm) {
    for (std::uint32_t gn = 1; gn <= 40; ++gn) {
      REQUIRE(one->sequence(gm, gn) == row->sequence(gm, gn));
      // group_m >= grid_m: one group spanning all rows, m fastest.
      REQUIRE(big->sequence(gm, gn) == column->sequence(gm, gn));
      REQUIRE(order_from(cat("{kind: grouped, group_m: ", gm, "}"))->sequence(gm, gn) ==
              column->sequence(gm, gn));
    }
  }
}

TEST_CASE("Triton tutorial example: grouped order loads 54 blocks where row order loads 90", "[orders]") {
  // 9x9 output tiles, K = 9 tiles: the first 9 tiles in row order touch 1 row and 9 columns,
  // grouped with group_m = 3 touches a 3x3 square.
  const auto row = order_from("kind: row")->sequence(9, 9);
  const auto grouped = order_from("{kind: grouped, group_m: 3}")->sequence(9, 9);
  CHECK(blocks_loaded(row, 9, 9) == 90);
  CHECK(blocks_loaded(grouped, 9, 9) == 54);
}

TEST_CASE("hilbert is a bijection whose steps are nearly always grid neighbours", "[orders]") {
  const auto order = order_from("kind: hilbert");
  CHECK(order->describe() == "hilbert");
  std::size_t steps = 0, jumps = 0, worst = 0;
  for (std::uint32_t gm = 1; gm <= 40; ++gm) {
    for (std::uint32_t gn = 1; gn <= 40; ++gn) {
      INFO("grid " << gm << "x" << gn);
      const auto seq = order->sequence(gm, gn);
      REQUIRE(seq.size() == std::size_t{gm} * gn);
      REQUIRE(is_bijection(seq, gm, gn));
      REQUIRE(seq.front() == TileCoord{0, 0});
      std::size_t here = 0;
      for (std::size_t i = 1; i < seq.size(); ++i) {
        if (!adjacent(seq[i - 1], seq[i])) {
          ++here;
          // The construction's only compromise is a diagonal step, never a long jump.
          const auto dm = std::abs(static_cast<long>(seq[i].m) - static_cast<long>(seq[i - 1].m));
          const auto dn = std::abs(static_cast<long>(seq[i].n) - static_cast<long>(seq[i - 1].n));
          REQUIRE((dm == 1 && dn == 1));
        }
      }
      // The curve ends on the far corner of its long side, which a walk of neighbour steps
      // can reach only when that side is even or the grid's area is odd (chessboard colouring).
      const std::uint32_t major = std::max(gm, gn), minor = std::min(gm, gn);
      if (major % 2 == 0 || minor % 2 == 1) REQUIRE(here == 0);
      steps += seq.size() - 1;
      jumps += here;
      worst = std::max(worst, here);
    }
  }
  INFO("non-adjacent steps: " << jumps << " of " << steps << ", at most " << worst << " in one grid");
  CHECK(jumps * 1000 < steps);  // under 0.1% of all steps
  CHECK(worst <= 1);
}

TEST_CASE("hilbert on power-of-two squares only steps to neighbours", "[orders]") {
  const auto order = order_from("kind: hilbert");
  for (std::uint32_t side = 1; side <= 128; side *= 2) {
    INFO("side " << side);
    const auto seq = order->sequence(side, side);
    REQUIRE(is_bijection(seq, side, side));
    for (std::size_t i = 1; i < seq.size(); ++i) REQUIRE(adjacent(seq[i - 1], seq[i]));
    // A true Hilbert curve: every aligned run of 4^j positions fills an aligned 2^j square.
    for (std::uint32_t block = 2; block <= side; block *= 2) {
      const std::size_t run = std::size_t{block} * block;
      bool squares = true;
      for (std::size_t start = 0; start < seq.size(); start += run) {
        const std::uint32_t m0 = seq[start].m / block, n0 = seq[start].n / block;
        for (std::size_t i = start; i < start + run; ++i)
          squares = squares && seq[i].m / block == m0 && seq[i].n / block == n0;
      }
      INFO("runs of " << run);
      REQUIRE(squares);
    }
  }
}

TEST_CASE("order parameters are validated with file and YAML path", "[orders]") {
  using Catch::Matchers::Contains;
  REQUIRE_THROWS_AS(order_from("{kind: grouped, group_mm: 4}"), InputError);
  REQUIRE_THROWS_WITH(order_from("{kind: grouped, group_mm: 4}"),
                      Contains("exp.yaml") && Contains("order.group_mm") && Contains("unknown key"));
  REQUIRE_THROWS_WITH(order_from("kind: grouped"), Contains("order.group_m") && Contains("missing"));
  REQUIRE_THROWS_WITH(order_from("{kind: grouped, group_m: 0}"), Contains("order.group_m"));
  REQUIRE_THROWS_WITH(order_from("{kind: grouped, group_m: two}"), Contains("order.group_m"));
  REQUIRE_THROWS_WITH(order_from("{kind: swizzle, log_tile: 7}"), Contains("order.log_tile") && Contains("[0, 6]"));
  REQUIRE_THROWS_WITH(order_from("{kind: swizzle, log_tile: -1}"), Contains("order.log_tile"));
  REQUIRE_THROWS_WITH(order_from("{kind: row, group_m: 2}"), Contains("order.group_m") && Contains("unknown key"));
  REQUIRE_THROWS_WITH(order_from("{kind: hilbert, log_tile: 2}"), Contains("order.log_tile"));
  REQUIRE_THROWS_WITH(order_from("{kind: diagonal}"), Contains("order.kind") && Contains("hilbert"));
  REQUIRE_THROWS_WITH(order_from("{kind: file}"), Contains("order.path") && Contains("missing"));
}
