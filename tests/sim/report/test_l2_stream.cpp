// The L2 request stream (sim/report/l2_stream.hpp): replayed through the same L2 model it gives
// the run's hit counts exactly, and a damaged file is refused naming the byte.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include "common/error.hpp"
#include "sim/config/experiment.hpp"
#include "sim/report/l2_stream.hpp"
#include "tests/sim/cli_util.hpp"

using namespace tilesim;
using Catch::Matchers::Contains;

namespace {

// Simulates `text` with a stream writer; replays the stream; returns (simulated, replayed)
// read sectors and read hit sectors.
void check_replay(const std::string& text, const std::filesystem::path& file) {
  const Experiment e = load_experiment_text(text, "s.yaml", ".", {});
  const ExperimentPoint& p = e.points.at(0);
  L2StreamWriter writer(file.string(), p.arch.l2);
  SimOptions opt = p.options;
  opt.observer = &writer;
  const SimResult r = simulate(*p.workload, p.arch, opt);
  writer.close();
  MemCounters sim;
  for (const KernelStats& k : r.kernels) sim += k.mem;

  L2Cache l2(p.arch.l2, p.options.seed);
  std::uint64_t reads = 0, read_hits = 0, writes = 0, requests = 0;
  const L2StreamHeader h = read_l2_stream(
      file.string(),
      [&](const L2StreamRequest& q) {
        const L2AccessResult a = l2.access(q.rect, q.partition, q.write);
        ++requests;
        if (q.write) writes += a.sectors;
        else reads += a.sectors, read_hits += a.hit_sectors;
      },
      [&](Time, bool invalidate) {
        l2.flush_dirty();
        if (invalidate) l2.invalidate_all();
      });
  CHECK(h.line_bytes == p.arch.l2.line_bytes);
  CHECK(requests == writer.requests());
  CHECK(requests > 0);
  CHECK(reads == sim.read_sectors);
  CHECK(read_hits == sim.read_hit_sectors);
  CHECK(writes == sim.write_sectors);
}

}  // namespace

TEST_CASE("L2 stream: replayed through the same L2 it gives the run's hits exactly", "[report][l2stream]") {
  const auto dir = tilesim::test::scratch_dir() / "l2stream";
  std::filesystem::create_directories(dir);
  // A GEMM under the request coalescer (merged requests never reach the L2 and are not in the
  // stream), and an FFN pair measured kernel by kernel (the L2 emptied between them).
  check_replay("arch: h100\nworkload: {kind: gemm, m: 1024, n: 1024, k: 1024, tile: [128, 128, 64]}\n"
               "order: {kind: grouped, group_m: 4}\n",
               dir / "gemm.l2s");
  check_replay("arch: h100\nworkload: {kind: ffn, d: 256, f: 512, m: 256, gated: false}\nsim: {cold_l2: kernel}\n",
               dir / "ffn.l2s");
}

TEST_CASE("L2 stream: a file that is not one, or is cut short, is refused naming the byte", "[report][l2stream]") {
  const auto dir = tilesim::test::scratch_dir() / "l2stream_bad";
  std::filesystem::create_directories(dir);
  const auto error_of = [&](const std::string& bytes) -> std::string {
    std::ofstream(dir / "b.l2s", std::ios::binary) << bytes;
    try {
      read_l2_stream((dir / "b.l2s").string(), [](const L2StreamRequest&) {}, [](Time, bool) {});
    } catch (const InputError& e) {
      return e.what();
    }
    return "no error";
  };
  CHECK_THAT(error_of("hello"), Contains("not an L2 request stream"));
  const std::string header = std::string("TSL2STRM") + std::string("\1\0\0\0\x80\0\0\0\x20\0\0\0\2\0\0\0", 16);
  CHECK(error_of(header) == "no error");
  CHECK_THAT(error_of(header + "\1\0\0"), Contains("byte 24: a request record cut short"));
  CHECK_THAT(error_of(header + "\7"), Contains("byte 24: unknown record tag 7"));
  // The CLI writes one and says how many requests.
  const auto r = tilesim::test::run_tilesim("trace " + std::string(TILESIM_SOURCE_DIR) +
                                            "/experiments/gemm_orders.yaml --set 'sweep={}' --set workload.m=512"
                                            " --set workload.n=512 --set workload.k=256 --l2-stream " +
                                            (dir / "cli.l2s").string());
  REQUIRE(r.code == 0);
  CHECK_THAT(r.out, Contains("L2 requests"));
}
