// The numbers of the HTML report's tables, formatted exactly as sim/report/assets/report.js
// formats them (its `fixed` and `CELLS`): a test renders the page in a browser and compares
// every cell with report_cell(). Keep the two in step; docs/report.md lists the rules.
#include <cmath>
#include <cstdint>
#include <stdexcept>

#include "sim/report/html.hpp"

namespace tilesim {

namespace {

using nlohmann::json;

/// 10^d as a literal, not pow(): both languages then multiply by the very same double.
constexpr double kPow10[] = {1, 10, 100, 1000, 10000, 100000, 1000000};

/// A number field or NaN when it is absent or null (printed "—").
double number_or_nan(const json& obj, const char* key) {
  if (!obj.is_object()) return NAN;
  const auto it = obj.find(key);
  return it != obj.end() && it->is_number() ? it->get<double>() : NAN;
}

const json& comparison_of(const json& point) {
  static const json none;
  const auto it = point.find("comparison");
  return it != point.end() && it->is_object() ? *it : none;
}

/// Sums a number field over the point's kernels, in array order from 0 like JS's reduce.
double kernel_sum(const json& point, const char* key) {
  double sum = 0;
  for (const json& k : point.at("result").at("kernels")) sum += k.at(key).get<double>();
  return sum;
}

}  // namespace

std::string report_fixed(double x, int decimals) {
  if (!std::isfinite(x) || decimals < 0 || decimals > 6) return "\u2014";
  const double scaled = x * kPow10[decimals];
  // Math.round: the nearest integer, halves up. scaled - floor(scaled) is exact in doubles.
  double n = std::floor(scaled);
  if (scaled - n >= 0.5) n += 1;
  if (std::fabs(n) >= 9007199254740992.0) return "\u2014";  // 2^53: digits no longer exact
  const std::int64_t i = static_cast<std::int64_t>(n);
  std::string digits = std::to_string(i < 0 ? -i : i);
  if (decimals > 0) {
    if (digits.size() <= static_cast<std::size_t>(decimals))
      digits.insert(0, static_cast<std::size_t>(decimals) + 1 - digits.size(), '0');
    digits.insert(digits.size() - static_cast<std::size_t>(decimals), ".");
  }
  return (i < 0 ? "-" : "") + digits;
}

std::string report_cell(const json& point, const std::string& field) {
  const json& total = point.at("result").at("total");
  const json& cmp = comparison_of(point);
  if (field == "point") {
    // "" = the sweep compares nothing: name the point by its label instead.
    const std::string compared = cmp.is_object() ? cmp.at("compared").get<std::string>() : "";
    if (!compared.empty()) return compared;
    const std::string label = point.at("label").get<std::string>();  // "" for a run without a sweep
    return label.empty() ? "#" + std::to_string(point.at("index").get<std::uint64_t>()) : label;
  }
  if (field == "label") return point.at("label").get<std::string>();
  if (field == "time_us") return report_fixed(total.at("duration_ns").get<double>() / 1000, 2);
  if (field == "dram_mb")
    return report_fixed((total.at("dram_read_bytes").get<double>() + total.at("dram_write_bytes").get<double>()) / 1e6, 1);
  if (field == "bound_mb") {
    const auto b = total.find("bounds");
    if (b == total.end() || !b->is_object()) return report_fixed(NAN, 1);
    // chain_io_bound_bytes is absent from results written before it existed: fmax skips NaN.
    const double io = std::fmax(number_or_nan(*b, "io_bound_bytes"), number_or_nan(*b, "chain_io_bound_bytes"));
    return report_fixed(std::fmax(number_or_nan(*b, "compulsory_bytes"), io) / 1e6, 1);
  }
  if (field == "dram_over_bound") return report_fixed(number_or_nan(total, "dram_over_bound"), 2);
  if (field == "l2_hit_pct") return report_fixed(total.at("l2_hit_rate").get<double>() * 100, 1);
  if (field == "waves") return report_fixed(kernel_sum(point, "waves"), 0);
  if (field == "tail_lost_us") return report_fixed(kernel_sum(point, "tail_lost_ns") / 1000, 2);
  if (field == "speedup") return report_fixed(number_or_nan(cmp, "speedup"), 3);
  if (field == "dram_ratio") return report_fixed(number_or_nan(cmp, "dram_ratio"), 2);
  if (field == "rank") return report_fixed(number_or_nan(cmp, "rank"), 0);
  if (field == "note") {
    const auto b = cmp.is_object() ? cmp.find("baseline") : cmp.end();
    const bool is_base = cmp.is_object() && b != cmp.end() && b->is_number() && *b == point.at("index");
    return is_base ? "baseline" : "";
  }
  throw std::invalid_argument("report_cell: unknown field '" + field + "'");
}

}  // namespace tilesim
