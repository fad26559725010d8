#pragma once
// Reading input files: whole text files, and folders standing for the files in them.
#include <string>
#include <vector>

namespace tilesim {

/// The whole file as text; an InputError "PATH: cannot open file" when it cannot be read.
std::string read_text_file(const std::string& path);

/// Each path as given, except a folder, which stands for its files whose extension is one of
/// `extensions` (".yaml"), sorted by name. A folder with none of them is an InputError
/// "PATH: no WHAT in this folder".
std::vector<std::string> expand_folders(const std::vector<std::string>& paths, const std::vector<std::string>& extensions,
                                        const std::string& what);

}  // namespace tilesim
