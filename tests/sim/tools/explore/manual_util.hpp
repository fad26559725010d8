#pragma once
// Helpers of the explorer's manual-mode tests: the replay program a view carries, and a
// manual experiment run through `tilesim run`.
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "common/base64.hpp"
#include "sim/tools/explore/replay.hpp"
#include "tests/sim/cli_util.hpp"

namespace tilesim::test {

/// The replay program of a view's `manual` object (base64 of little-endian words).
inline explore::ReplayProgram manual_program(const nlohmann::json& manual) {
  const std::vector<std::uint8_t> bytes = base64_decode(manual.at("program").get<std::string>());
  std::vector<std::uint32_t> words(bytes.size() / 4);
  std::memcpy(words.data(), bytes.data(), words.size() * 4);
  explore::ReplayProgram prog;
  REQUIRE(explore::unpack_program(words.data(), words.size(), prog));
  return prog;
}

/// `tilesim run` of the manual experiment `yaml` (its @ORDER_FILE@ replaced) with the order
/// file `order_text`, in a fresh folder `dir`: the run's JSON.
inline nlohmann::json run_manual(const std::filesystem::path& dir, const nlohmann::json& manual, std::string yaml,
                                 const std::string& order_text) {
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string order_file = manual.at("order_file").get<std::string>();
  std::ofstream(dir / order_file) << order_text;
  const auto at = yaml.find("@ORDER_FILE@");
  if (at != std::string::npos) yaml.replace(at, 12, order_file);
  std::ofstream(dir / "manual.yaml") << yaml;
  const CliRun run = run_tilesim("run " + (dir / "manual.yaml").string() + " --json " + (dir / "out.json").string());
  INFO(run.out);
  REQUIRE(run.code == 0);
  return nlohmann::json::parse(slurp(dir / "out.json"));
}

}  // namespace tilesim::test
