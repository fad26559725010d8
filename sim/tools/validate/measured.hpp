#pragma once
// Measured kernels, imported from Nsight Compute CSVs and CUDA-event timing tables.
//
// Two CSV forms are read, told apart by their header:
//  - Nsight Compute's raw page (`ncu --csv --page raw`): a header row with "ID" and
//    "Kernel Name", a units row, then one row per profiled kernel. The case name is the file's
//    stem without an `ncu_` prefix (ncu_gemm_8192_row.csv -> gemm_8192_row).
//  - A case table: a `case` column, one row per case (or per kernel of a case, in order), with
//    metric columns named as Nsight Compute names them and/or `median_us` (event timing).
//    Units come from a units row (a row whose `case` cell is empty) or from a `units` column
//    of `metric=unit;...` pairs; without either, base units (byte, sector, ns, %) are assumed.
// Values are converted to base units; an unknown unit, a missing column, a non-number or a
// truncated row is an error naming the file, line and column.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace tilesim {

/// One profiled kernel: metric name -> value in base units (byte, sector, ns, %, count).
struct MeasuredKernel {
  std::string name;
  std::map<std::string, double> metrics;
  std::optional<double> get(const std::string& metric) const {
    auto it = metrics.find(metric);
    if (it == metrics.end()) return std::nullopt;
    return it->second;
  }
};

/// The device a measurement was taken on, where the CSV says (raw pages do).
struct MeasuredDevice {
  std::string name;
  std::uint32_t sm_count = 0;
  std::uint64_t l2_bytes = 0;
};

struct MeasuredCase {
  std::string name;
  std::vector<std::string> files;       ///< where its rows came from
  std::vector<MeasuredKernel> kernels;  ///< in profiling order
  std::optional<double> event_ns;       ///< profiler-free timing of the whole case (median)
  std::optional<MeasuredDevice> device;
};

/// Reads every file (a folder: its *.csv files) and merges rows by case name (kernels from several files of one case are
/// appended in file order; a second event time for a case is an error).
std::map<std::string, MeasuredCase> load_measured(const std::vector<std::string>& paths);

/// A value with its unit converted to the metric's base unit; throws InputError (with `where`)
/// for a unit it does not know. Exposed for tests.
double to_base_unit(double value, const std::string& unit, const std::string& where);

/// Splits one CSV line (RFC 4180 quoting, no embedded newlines). Exposed for tests.
std::vector<std::string> split_csv_line(const std::string& line);

/// A CSV file's non-blank rows (Nsight Compute's "==" message lines left out), split, with the
/// line each came from.
struct CsvFile {
  std::string path;
  std::vector<std::vector<std::string>> rows;
  std::vector<std::size_t> lines;  ///< 1-based line number of each row
};
/// Reads `path` (within kMaxTextInputBytes); an empty file is an InputError naming it.
CsvFile read_csv(const std::string& path);
/// "path:line" of row `row`, for errors.
std::string at_line(const CsvFile& f, std::size_t row);

}  // namespace tilesim
