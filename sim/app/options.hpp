#pragma once
// Shared command-line plumbing: parsing with readable errors, writing output files.
#include <boost/program_options.hpp>

#include <fstream>
#include <string>
#include <vector>

#include "common/error.hpp"

namespace tilesim::app {

inline boost::program_options::variables_map parse_args(
    const std::vector<std::string>& args, const boost::program_options::options_description& visible,
    const boost::program_options::options_description& hidden,
    const boost::program_options::positional_options_description& pos) {
  namespace po = boost::program_options;
  po::options_description all;
  all.add(visible).add(hidden);
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(args).options(all).positional(pos).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    throw InputError(std::string("command line: ") + e.what());
  }
  return vm;
}

inline void write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  if (!out) throw InputError(path + ": cannot open for writing");
  out << text;
  if (!out) throw InputError(path + ": write failed");
}

}  // namespace tilesim::app
