#pragma once
// Reading input files: whole text files, and folders standing for the files in them.
#include <cstdint>
#include <string>
#include <vector>

namespace tilesim {

/// The most a text input (experiment, arch, results, CSV, order file) may hold.
inline constexpr std::uint64_t kMaxTextInputBytes = std::uint64_t{1} << 30;

/// Refuses, as an InputError naming the path, what cannot be an input file: a folder, a device
/// (`/dev/zero` never ends, `/dev/random` neither), a pipe unless `allow_pipe`, or a regular
/// file larger than `max_bytes`. A path that does not exist passes (opening it then fails with
/// the caller's message).
void check_input_file(const std::string& path, std::uint64_t max_bytes, bool allow_pipe = false);

/// The whole file as text; an InputError "PATH: cannot open file" when it cannot be read, and
/// the refusals of check_input_file (at most kMaxTextInputBytes).
std::string read_text_file(const std::string& path);

/// Each path as given, except a folder, which stands for its files whose extension is one of
/// `extensions` (".yaml"), sorted by name. A folder with none of them is an InputError
/// "PATH: no WHAT in this folder".
std::vector<std::string> expand_folders(const std::vector<std::string>& paths, const std::vector<std::string>& extensions,
                                        const std::string& what);

}  // namespace tilesim
