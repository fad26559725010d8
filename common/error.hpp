#pragma once
// Errors that reach the user. Each carries the process exit code the CLI returns for it.
#include <stdexcept>
#include <string>

namespace tilesim {

/// Bad input: a configuration, trace or CSV the user gave. Exit code 2.
class InputError : public std::runtime_error {
 public:
  explicit InputError(const std::string& what) : std::runtime_error(what) {}
  virtual int exit_code() const { return 2; }
};

/// A simulated schedule that cannot make progress. Exit code 3.
class DeadlockError : public std::runtime_error {
 public:
  explicit DeadlockError(const std::string& what) : std::runtime_error(what) {}
  int exit_code() const { return 3; }
};

/// Throws InputError(what). Code that is also built for the explorer's WebAssembly module
/// (the L2 model, where exceptions are off) reports errors through this; that build defines
/// it to trap, and the native build checked the same configuration first.
[[noreturn]] void throw_input_error(const std::string& what);

}  // namespace tilesim
