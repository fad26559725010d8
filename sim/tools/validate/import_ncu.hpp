#pragma once
// `tilesim import ncu`: experiments from Nsight Compute raw pages, so that a user's own kernels
// are compared with the simulator at once (`tilesim validate -m CSV -e DIR`).
//
// Each profiled case with one GEMM kernel becomes one experiment: its launch (threads,
// registers, shared memory) from the page's launch__ metrics; the GPU from the page's device
// (or --arch); the shape MxNxK, the tile BMxBNxBK and the launch order from the options, else
// from the case name (a MxNxK and a row/column/groupedG token, as the project's own suite
// names its cases) and the kernel name (CUTLASS's and cuBLAS's 128x256_64x3-style tile and
// stages; a cuBLAS nvjet_* name whole: frame, layouts, cluster, raster, schedule and the
// persistent grid); a `validate:` section naming the case. A case that says too little is
// skipped with the reason.
#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "sim/tools/validate/measured.hpp"

namespace tilesim {

struct ImportOptions {
  std::string arch;                                  ///< empty: from the page's device name
  std::optional<std::array<std::uint32_t, 3>> shape;  ///< M, N, K
  std::optional<std::array<std::uint32_t, 3>> tile;   ///< BM, BN, BK
  std::optional<std::uint32_t> stages;
  std::string order;                                 ///< YAML of `order:`; empty: from the case name, else row
  std::string dtype = "fp16";
  std::string family = "imported";
  std::vector<std::string> overrides;                ///< --set KEY=VALUE on every experiment
};

struct ImportedCase {
  std::string case_name;
  std::string yaml;     ///< the experiment, "" when skipped
  std::string skipped;  ///< why it was not imported
  std::vector<std::string> guessed;  ///< what came from names rather than options or metrics
};

/// "MxNxK" -> {M, N, K} (positive integers); InputError naming `what` otherwise.
std::array<std::uint32_t, 3> parse_dims(const std::string& text, const std::string& what);

/// The arch preset for an Nsight device name ("NVIDIA H100 80GB HBM3" -> h100), "" if none fits.
std::string arch_for_device(const std::string& device_name);

/// File names (without folder) for experiments of these cases, one each: the case name with
/// anything but letters, digits, '-', '_' and '.' replaced by '_' (no folder can be named, no
/// leading dot), ".yaml" added, and _2, _3 ... where two names would be the same.
std::vector<std::string> experiment_file_names(const std::vector<std::string>& cases);

/// One entry per measured case, in case-name order.
std::vector<ImportedCase> import_ncu(const std::map<std::string, MeasuredCase>& cases, const ImportOptions& options);

}  // namespace tilesim
