#include "sim/tools/validate/measured.hpp"

#include <sstream>
#include <cmath>
#include <filesystem>
#include <fstream>

#include "common/error.hpp"
#include "common/files.hpp"
#include "common/text.hpp"

namespace tilesim {

namespace {

// Nsight Compute prints numbers with thousands separators ("4,368,322,048").
std::optional<double> parse_number(const std::string& cell) {
  std::string s;
  for (char c : trim(cell))
    if (c != ',') s += c;
  if (s.empty() || s == "n/a" || s == "N/A") return std::nullopt;
  std::size_t used = 0;
  double v = 0;
  try {
    v = std::stod(s, &used);
  } catch (const std::exception&) {
    return std::nullopt;
  }
  if (used != s.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

}  // namespace

CsvFile read_csv(const std::string& path) {
  check_input_file(path, kMaxTextInputBytes);
  std::ifstream in(path);
  if (!in) throw InputError(path + ": cannot open file");
  CsvFile f{path, {}, {}};
  std::string line;
  std::size_t n = 0;
  while (std::getline(in, line)) {
    ++n;
    if (trim(line).empty()) continue;
    // ncu prefixes its own messages with "==PROF==" / "==WARNING=="; they are not data.
    if (line.rfind("==", 0) == 0) continue;
    f.rows.push_back(split_csv_line(line));
    f.lines.push_back(n);
  }
  if (f.rows.empty()) throw InputError(path + ": empty file (expected a CSV with a header row)");
  return f;
}

std::string at_line(const CsvFile& f, std::size_t row) { return f.path + ":" + std::to_string(f.lines[row]); }

namespace {

bool is_metric_name(const std::string& h) { return h.find("__") != std::string::npos; }

// The metrics tilesim compares: a unit it cannot convert for one of these is an error; any
// other metric with an unknown unit (ncu has dozens, "cluster", "warp/cycle", ...) is skipped.
bool is_compared(const std::string& h) {
  static const char* kCompared[] = {"lts__t_sector_hit_rate.pct", "lts__t_sectors_op_read.sum",
                                    "lts__t_sectors_op_read_lookup_hit.sum", "lts__t_sectors_op_write.sum",
                                    "lts__t_sectors_srcunit_ltcfabric.sum", "dram__bytes_read.sum",
                                    "dram__bytes_write.sum", "gpu__time_duration.sum",
                                    "launch__grid_size", "launch__waves_per_multiprocessor"};
  for (const char* m : kCompared)
    if (h == m) return true;
  return false;
}

// Converts one cell; nullopt for an uncompared metric whose unit is unknown. A compared metric
// must be a count, a time or a percentage that can be: not negative, a percentage at most 100.
std::optional<double> convert(double v, const std::string& unit, const std::string& metric, const std::string& where) {
  if (is_compared(metric)) {
    const double b = to_base_unit(v, unit, where);
    const bool pct = metric.size() > 4 && metric.compare(metric.size() - 4, 4, ".pct") == 0;
    if (b < 0 || (pct && b > 100)) {
      std::ostringstream o;
      o << where << ": expected " << (pct ? "a percentage in [0, 100]" : "a non-negative value") << ", got " << v;
      throw InputError(o.str());
    }
    return b;
  }
  try {
    return to_base_unit(v, unit, where);
  } catch (const InputError&) {
    return std::nullopt;
  }
}

std::optional<std::size_t> column(const std::vector<std::string>& header, const std::string& name) {
  for (std::size_t i = 0; i < header.size(); ++i)
    if (trim(header[i]) == name) return i;
  return std::nullopt;
}

// Device attributes, when the row carries them.
std::optional<MeasuredDevice> device_of(const std::vector<std::string>& header, const std::vector<std::string>& row,
                                        const std::string& where) {
  const auto name = column(header, "device__attribute_display_name");
  const auto sms = column(header, "device__attribute_multiprocessor_count");
  const auto l2 = column(header, "device__attribute_l2_cache_size");
  if (!name && !sms && !l2) return std::nullopt;
  MeasuredDevice d;
  if (name && *name < row.size()) d.name = trim(row[*name]);
  // A count read from outside: only a whole number in range becomes one (a value past the
  // type's range would be undefined behaviour to convert).
  const auto count = [&](std::size_t col, double max, const char* what) -> std::uint64_t {
    const auto v = parse_number(row[col]);
    if (!v) return 0;
    if (!(*v >= 0 && *v <= max && *v == static_cast<double>(static_cast<std::uint64_t>(*v))))
      throw InputError(where + ": " + what + " '" + trim(row[col]) + "' is not a whole number in [0, " +
                       std::to_string(static_cast<std::uint64_t>(max)) + "]");
    return static_cast<std::uint64_t>(*v);
  };
  if (sms && *sms < row.size())
    d.sm_count = static_cast<std::uint32_t>(count(*sms, 1e6, "device__attribute_multiprocessor_count"));
  if (l2 && *l2 < row.size()) d.l2_bytes = count(*l2, 1e15, "device__attribute_l2_cache_size");
  return d;
}

void add_case_data(std::map<std::string, MeasuredCase>& out, const std::string& case_name, const std::string& file,
                   std::optional<MeasuredKernel> kernel, std::optional<double> event_ns,
                   std::optional<MeasuredDevice> device, const std::string& where) {
  MeasuredCase& c = out[case_name];
  c.name = case_name;
  if (c.files.empty() || c.files.back() != file) c.files.push_back(file);
  if (kernel) c.kernels.push_back(std::move(*kernel));
  if (event_ns) {
    if (c.event_ns && *c.event_ns != *event_ns)
      throw InputError(where + ": case '" + case_name + "' has a second, different event time (" +
                       std::to_string(*event_ns / 1e3) + " us against " + std::to_string(*c.event_ns / 1e3) + " us)");
    c.event_ns = event_ns;
  }
  if (device) {
    if (c.device && (c.device->sm_count != device->sm_count || c.device->l2_bytes != device->l2_bytes))
      throw InputError(where + ": case '" + case_name + "' was measured on two different devices");
    c.device = device;
  }
}

// The raw page: header, units row, one row per kernel.
void read_raw_page(const CsvFile& f, std::map<std::string, MeasuredCase>& out) {
  const auto& header = f.rows[0];
  if (f.rows.size() < 3)
    throw InputError(f.path + ": an Nsight Compute raw page needs a header, a units row and at least one kernel row");
  std::string stem = std::filesystem::path(f.path).stem().string();
  if (stem.rfind("ncu_", 0) == 0) stem = stem.substr(4);
  const auto& units = f.rows[1];
  const auto kname = column(header, "Kernel Name");
  for (std::size_t r = 2; r < f.rows.size(); ++r) {
    const auto& row = f.rows[r];
    if (row.size() != header.size())
      throw InputError(at_line(f, r) + ": " + std::to_string(row.size()) + " cells, expected " +
                       std::to_string(header.size()) + " as in the header (truncated file?)");
    MeasuredKernel k;
    k.name = kname ? row[*kname] : "";
    for (std::size_t i = 0; i < header.size(); ++i) {
      const std::string h = trim(header[i]);
      if (!is_metric_name(h) || h.rfind("device__attribute", 0) == 0) continue;
      const auto v = parse_number(row[i]);
      if (!v && is_compared(h) && !trim(row[i]).empty() && trim(row[i]) != "n/a")
        throw InputError(at_line(f, r) + ": column '" + h + "': expected a number, got '" + trim(row[i]) + "'");
      if (!v) continue;  // text-valued or n/a metrics are not compared
      if (auto b = convert(*v, i < units.size() ? trim(units[i]) : "", h, at_line(f, r) + ": column '" + h + "'"))
        k.metrics[h] = *b;
    }
    add_case_data(out, stem, f.path, std::move(k), std::nullopt, device_of(header, row, at_line(f, r)), at_line(f, r));
  }
}

// "metric=unit;metric=unit" from a units column.
std::map<std::string, std::string> parse_units_cell(const std::string& cell) {
  std::map<std::string, std::string> u;
  std::size_t pos = 0;
  while (pos <= cell.size()) {
    const std::size_t end = std::min(cell.find(';', pos), cell.size());
    const std::string item = cell.substr(pos, end - pos);
    const auto eq = item.find('=');
    if (eq != std::string::npos) u[trim(item.substr(0, eq))] = trim(item.substr(eq + 1));
    pos = end + 1;
  }
  return u;
}

void read_case_table(const CsvFile& f, std::size_t case_col, std::map<std::string, MeasuredCase>& out) {
  const auto& header = f.rows[0];
  const auto units_col = column(header, "units");
  const auto median_col = column(header, "median_us");
  std::map<std::string, std::string> unit_row;  // from a row with an empty case cell
  for (std::size_t r = 1; r < f.rows.size(); ++r) {
    const auto& row = f.rows[r];
    if (row.size() != header.size())
      throw InputError(at_line(f, r) + ": " + std::to_string(row.size()) + " cells, expected " +
                       std::to_string(header.size()) + " as in the header (truncated file?)");
    const std::string case_name = trim(row[case_col]);
    if (case_name.empty()) {  // a units row
      for (std::size_t i = 0; i < header.size(); ++i) unit_row[trim(header[i])] = trim(row[i]);
      continue;
    }
    std::map<std::string, std::string> units = unit_row;
    if (units_col)
      for (auto& [m, u] : parse_units_cell(row[*units_col])) units[m] = u;
    MeasuredKernel k;
    if (auto kc = column(header, "kernel")) k.name = row[*kc];
    for (std::size_t i = 0; i < header.size(); ++i) {
      const std::string h = trim(header[i]);
      if (!is_metric_name(h) || h.rfind("device__attribute", 0) == 0) continue;
      const std::string cell = trim(row[i]);
      if (cell.empty()) continue;
      const auto v = parse_number(cell);
      if (!v) throw InputError(at_line(f, r) + ": column '" + h + "': expected a number, got '" + cell + "'");
      auto u = units.find(h);
      if (auto b = convert(*v, u == units.end() ? "" : u->second, h, at_line(f, r) + ": column '" + h + "'"))
        k.metrics[h] = *b;
    }
    std::optional<double> event_ns;
    if (median_col) {
      const std::string cell = trim(row[*median_col]);
      const auto v = parse_number(cell);
      if (!cell.empty() && !v && cell != "failed")
        throw InputError(at_line(f, r) + ": column 'median_us': expected a number of microseconds, got '" + cell + "'");
      if (v) {
        if (*v <= 0) throw InputError(at_line(f, r) + ": column 'median_us': expected a positive time, got " + cell);
        event_ns = *v * 1e3;
      }
    }
    std::optional<MeasuredKernel> kernel;
    if (!k.metrics.empty()) kernel = std::move(k);
    add_case_data(out, case_name, f.path, std::move(kernel), event_ns, device_of(header, row, at_line(f, r)), at_line(f, r));
  }
}

}  // namespace

std::vector<std::string> split_csv_line(const std::string& line) {
  std::vector<std::string> cells;
  std::string cur;
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        cur += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        cur += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      cells.push_back(cur);
      cur.clear();
    } else if (c != '\r') {
      cur += c;
    }
  }
  cells.push_back(cur);
  return cells;
}

double to_base_unit(double value, const std::string& unit, const std::string& where) {
  struct Scale {
    const char* unit;
    double factor;
  };
  // Base units are byte, sector, ns, %, cycle/second and plain counts; Nsight Compute scales
  // by powers of 1000 (Kbyte = 1e3 byte).
  static const Scale kScales[] = {
      {"", 1},          {"byte", 1},        {"Kbyte", 1e3},       {"Mbyte", 1e6},       {"Gbyte", 1e9},
      {"Tbyte", 1e12},  {"sector", 1},      {"Ksector", 1e3},     {"Msector", 1e6},     {"Gsector", 1e9},
      {"ns", 1},        {"nsecond", 1},     {"us", 1e3},          {"usecond", 1e3},     {"ms", 1e6},
      {"msecond", 1e6}, {"s", 1e9},         {"second", 1e9},      {"%", 1},             {"block", 1},
      {"warp", 1},      {"thread", 1},      {"register/thread", 1}, {"byte/block", 1},  {"Kbyte/block", 1e3},
      {"cycle", 1},     {"Kcycle", 1e3},    {"Mcycle", 1e6},      {"cycle/second", 1},  {"cycle/usecond", 1e6},
      {"cycle/nsecond", 1e9}, {"hz", 1},    {"Khz", 1e3},         {"Mhz", 1e6},         {"Ghz", 1e9},
      {"request", 1},   {"inst", 1},        {"Kinst", 1e3},       {"Minst", 1e6},       {"Ginst", 1e9},
  };
  for (const auto& s : kScales)
    if (unit == s.unit) return value * s.factor;
  throw InputError(where + ": unknown unit '" + unit + "' (expected byte, sector or ns units with K/M/G prefixes, or %)");
}

std::map<std::string, MeasuredCase> load_measured(const std::vector<std::string>& paths) {
  const std::vector<std::string> files = expand_folders(paths, {".csv"}, "*.csv files");
  std::map<std::string, MeasuredCase> out;
  for (const auto& path : files) {
    const CsvFile f = read_csv(path);
    const auto& header = f.rows[0];
    if (column(header, "Kernel Name") && column(header, "ID")) {
      read_raw_page(f, out);
    } else if (auto c = column(header, "case")) {
      read_case_table(f, *c, out);
    } else {
      throw InputError(path + ":" + std::to_string(f.lines[0]) +
                       ": not a measurement CSV: expected Nsight Compute's raw page (columns 'ID' and 'Kernel Name') "
                       "or a case table (a 'case' column)");
    }
  }
  return out;
}

}  // namespace tilesim
