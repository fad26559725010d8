// Every experiment shipped in experiments/ and bench/ stays valid: each of its points builds
// (run --dry-run), so a renamed key or a changed limit cannot leave a reference study broken.
#include <catch2/catch.hpp>

#include <filesystem>

#include "tests/sim/cli_util.hpp"

using namespace tilesim::test;
namespace fs = std::filesystem;

TEST_CASE("experiments: every shipped experiment validates", "[experiments][cli]") {
  const fs::path root = fs::path(TILESIM_TEST_DIR).parent_path();
  std::vector<fs::path> files;
  for (const char* dir : {"experiments", "bench"})
    for (const auto& e : fs::directory_iterator(root / dir))
      if (e.path().extension() == ".yaml") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  REQUIRE(files.size() >= 6);
  for (const fs::path& f : files) {
    const CliRun r = run_tilesim("run " + f.string() + " --dry-run");
    INFO(f.string() << ":\n" << r.out);
    CHECK(r.code == 0);
  }
}
