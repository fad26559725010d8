// A stand-in for a sweep, to test ProcessGroup under mpirun: fake points whose "simulation" is
// a deterministic function of the index with varying cost and line length (some lines are
// tens of KB). The writer collects the lines in index order, checks that each point reached
// `done` once, and prints a checksum, which must not depend on the rank or thread count.
//
//   mpi_driver [--points N] [-j JOBS] [--fail-at I] [--fail-kind input|deadlock|other]
//              [--disagree] [--sleep-us US] [--errors-to DIR] [--lone-failure RANK]
// Exit codes as tilesim's: 2 for an input error, 3 for a deadlock, 1 otherwise.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <fstream>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "common/error.hpp"
#include "common/hash.hpp"
#include "sim/run/distribute.hpp"

namespace {

std::string fake_point(std::size_t index) {
  // Cost from about nothing to a few milliseconds, so ranks and threads finish out of order.
  std::uint64_t x = index;
  const std::uint64_t rounds = (tilesim::splitmix64(index) % 16) * 20000;
  for (std::uint64_t i = 0; i < rounds; ++i) x = tilesim::splitmix64(x);
  std::string line = "{\"point\":" + std::to_string(index) + ",\"value\":" + std::to_string(x);
  if (index % 17 == 3) line += ",\"pad\":\"" + std::string(40000 + index, 'a' + index % 26) + "\"";
  return line + "}";
}

std::uint64_t fnv1a(std::uint64_t h, const std::string& s) {
  for (const unsigned char c : s) h = (h ^ c) * 0x100000001B3ull;
  return h;
}

struct Options {
  std::size_t points = 200;
  int jobs = 2;
  std::optional<std::size_t> fail_at;
  std::string fail_kind = "input";
  bool disagree = false;
  int sleep_us = 0;  // extra time per point spent asleep: shows the CPU cost of waiting
  std::string errors_to;  // a folder where each rank writes the error it ended with
  std::optional<int> lone_failure;  // this rank fails alone before the run
};

// A failure of one rank that the others do not hear of: it leaves through the ProcessGroup's
// destructor, as an exception in tilesim does on its way to main().
struct LoneFailure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&] {
      if (i + 1 >= argc) throw tilesim::InputError("missing value after " + a);
      return std::string(argv[++i]);
    };
    if (a == "--points") o.points = std::stoul(value());
    else if (a == "-j") o.jobs = std::stoi(value());
    else if (a == "--fail-at") o.fail_at = std::stoul(value());
    else if (a == "--fail-kind") o.fail_kind = value();
    else if (a == "--disagree") o.disagree = true;
    else if (a == "--sleep-us") o.sleep_us = std::stoi(value());
    else if (a == "--errors-to") o.errors_to = value();
    else if (a == "--lone-failure") o.lone_failure = std::stoi(value());
    else throw tilesim::InputError("unknown option " + a);
  }
  return o;
}

int run(tilesim::sweep::ProcessGroup& group, int argc, char** argv) {
  const Options o = parse(argc, argv);
  if (o.lone_failure == group.rank()) throw LoneFailure("rank " + std::to_string(group.rank()) + " failed alone");
  // As a sweep whose experiment fails to load on the writer only: every rank must give up.
  if (!group.agree(!(o.disagree && group.is_writer()))) throw tilesim::InputError("a rank failed before the run");

  std::atomic<std::size_t> simulated{0};
  auto simulate = [&](std::size_t index) {
    ++simulated;
    if (o.fail_at && index == *o.fail_at) {
      // Fail late rather than first, so other points are in flight on every rank.
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
      const std::string what = "point " + std::to_string(index) + " failed";
      if (o.fail_kind == "input") throw tilesim::InputError(what);
      if (o.fail_kind == "deadlock") throw tilesim::DeadlockError(what);
      throw std::logic_error(what);
    }
    if (o.sleep_us > 0) std::this_thread::sleep_for(std::chrono::microseconds(o.sleep_us));
    return fake_point(index);
  };
  std::vector<std::size_t> pending;
  for (std::size_t i = 0; i < o.points; ++i) pending.push_back(i);
  std::vector<std::string> lines(o.points);
  std::vector<int> calls(o.points, 0);
  group.run(pending, o.jobs, simulate, [&](std::size_t index, const std::string& line) {
    lines.at(index) = line;
    ++calls.at(index);
  });
  // On stderr, for the test to see that every rank took part.
  // One write, so that the lines of two ranks do not interleave.
  const std::string note =
      "mpi_driver: rank " + std::to_string(group.rank()) + " simulated " + std::to_string(simulated) + " points\n";
  std::fwrite(note.data(), 1, note.size(), stderr);
  if (!group.is_writer()) return 0;

  std::uint64_t h = 0xCBF29CE484222325ull;
  std::size_t bytes = 0;
  for (std::size_t i = 0; i < o.points; ++i) {
    if (calls[i] != 1) throw std::runtime_error("point " + std::to_string(i) + " reached done " + std::to_string(calls[i]) + " times");
    h = fnv1a(h, lines[i] + "\n");
    bytes += lines[i].size() + 1;
  }
  std::printf("points %zu bytes %zu checksum %016llx\n", o.points, bytes, static_cast<unsigned long long>(h));
  return 0;
}

// Prints the error run() ended with and returns its exit code.
int report(const std::exception_ptr& error, const std::string& errors_to, int rank) {
  std::string text;
  int code = 1;
  try {
    std::rethrow_exception(error);
  } catch (const tilesim::InputError& e) {
    text = std::string("error: ") + e.what();
    code = e.exit_code();
  } catch (const tilesim::DeadlockError& e) {
    text = std::string("deadlock: ") + e.what();
    code = e.exit_code();
  } catch (const std::exception& e) {
    text = std::string("internal error: ") + e.what();
  }
  const std::string line = "mpi_driver: " + text + "\n";
  std::fwrite(line.data(), 1, line.size(), stderr);
  // mpirun may drop a rank's last output when another rank's failure ends the job, so the
  // test reads these files to see that every rank failed the same way.
  if (!errors_to.empty()) std::ofstream(errors_to + "/rank" + std::to_string(rank) + ".txt") << text << "\n";
  return code;
}

int guarded_main(int argc, char** argv) {
  tilesim::sweep::ProcessGroup group;
  // Errors are reported while the group lives, before MPI_Finalize in its destructor.
  std::string errors_to;
  for (int i = 1; i + 1 < argc; ++i)
    if (std::string(argv[i]) == "--errors-to") errors_to = argv[i + 1];
  try {
    return run(group, argc, argv);
  } catch (const LoneFailure&) {
    throw;
  } catch (...) {
    return report(std::current_exception(), errors_to, group.rank());
  }
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return guarded_main(argc, argv);
  } catch (const LoneFailure& e) {
    std::fprintf(stderr, "mpi_driver: %s\n", e.what());
    return 4;
  }
}
