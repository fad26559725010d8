#pragma once
// Shared by the libFuzzer targets (tests/fuzz/README.md): a parser may refuse its input with
// InputError (exit 2 in the CLI), never with anything else. Any other exception, a crash, a
// sanitizer report, a hang or a blown memory limit is a finding.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <string_view>

#include "common/error.hpp"

namespace tilesim::fuzz {

inline std::string_view as_text(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

/// Runs `f`; InputError is the expected refusal, anything else aborts (libFuzzer records it).
template <class F>
void expect_input_errors_only(F&& f) {
  try {
    f();
  } catch (const InputError&) {
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fuzz: not an InputError: %s\n", e.what());
    std::abort();
  }
}

/// A scratch file holding `data` (for readers that take a path), removed when it goes.
class ScratchFile {
 public:
  ScratchFile(std::string_view data, const char* suffix) {
    path_ = std::string("/tmp/tilesim_fuzz_") + std::to_string(::getpid()) + suffix;
    if (std::FILE* f = std::fopen(path_.c_str(), "wb")) {
      std::fwrite(data.data(), 1, data.size(), f);
      std::fclose(f);
    }
  }
  ~ScratchFile() {
    std::remove(path_.c_str());
    std::remove((path_ + ".damaged").c_str());
    std::remove((path_ + ".tmp").c_str());
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace tilesim::fuzz
