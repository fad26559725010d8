#pragma once
// Running the real `tilesim` binary from tests: a scratch folder, its output and exit code.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

namespace tilesim::test {

struct CliRun {
  int code;
  std::string out;  ///< stdout and stderr together
};

/// A per-process scratch folder (tests of one binary run in parallel under ctest).
inline std::filesystem::path scratch_dir() {
  auto d = std::filesystem::temp_directory_path() / ("tilesim_cli_" + std::to_string(::getpid()));
  std::filesystem::create_directories(d);
  return d;
}

inline std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline CliRun run_tilesim(const std::string& args) {
  const auto out = scratch_dir() / "out.txt";
  const std::string cmd = std::string(TILESIM_BINARY) + " " + args + " > " + out.string() + " 2>&1";
  const int status = std::system(cmd.c_str());
  return {WEXITSTATUS(status), slurp(out)};
}

/// The "total" object of a single-point experiment's `tilesim run --json FILE`.
inline nlohmann::json run_json_total(const std::filesystem::path& file) {
  return nlohmann::json::parse(slurp(file)).at("total");
}

}  // namespace tilesim::test
