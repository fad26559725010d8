#include "common/files.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/error.hpp"

namespace tilesim {

void check_input_file(const std::string& path, std::uint64_t max_bytes, bool allow_pipe) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (ec || !fs::exists(st)) return;
  if (fs::is_directory(st)) throw InputError(path + ": is a folder, not a file");
  if (fs::is_fifo(st) && allow_pipe) return;
  if (!fs::is_regular_file(st))
    throw InputError(path + ": not a regular file (a device or pipe); give a file");
  const std::uintmax_t size = fs::file_size(path, ec);
  if (!ec && size > max_bytes)
    throw InputError(path + ": " + std::to_string(size) + " bytes, more than the " + std::to_string(max_bytes) +
                     " an input of this kind may hold");
}

std::string read_text_file(const std::string& path) {
  check_input_file(path, kMaxTextInputBytes);
  std::ifstream in(path);
  if (!in) throw InputError(path + ": cannot open file");
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::vector<std::string> expand_folders(const std::vector<std::string>& paths, const std::vector<std::string>& extensions,
                                        const std::string& what) {
  namespace fs = std::filesystem;
  std::vector<std::string> out;
  for (const auto& p : paths) {
    if (!fs::is_directory(p)) {
      out.push_back(p);
      continue;
    }
    std::vector<std::string> in_dir;
    for (const auto& e : fs::directory_iterator(p))
      if (std::find(extensions.begin(), extensions.end(), e.path().extension().string()) != extensions.end())
        in_dir.push_back(e.path().string());
    if (in_dir.empty()) throw InputError(p + ": no " + what + " in this folder");
    std::sort(in_dir.begin(), in_dir.end());
    out.insert(out.end(), in_dir.begin(), in_dir.end());
  }
  return out;
}

}  // namespace tilesim
