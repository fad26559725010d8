#pragma once
// The HTML report of a sweep (`tilesim report OUTDIR`): one self-contained page with the
// sweep's summary.json embedded as data and rendered in the browser into comparison tables and
// C3 charts (docs/report.md). The page's tables are formatted by sim/report/assets/report.js;
// report_cell() below formats the same numbers by the same rule, so that a test can check a
// rendered page against its summary cell by cell.
#include <nlohmann/json.hpp>
#include <string>

namespace tilesim {

/// Reads a sweep's summary: `path` is the output folder of `tilesim run SWEEP.yaml -o OUTDIR`
/// or a summary.json file. Checks every field the report reads (check_sweep_summary). Errors
/// are one-line InputErrors naming the file: a missing folder, a sweep that has not finished (no
/// summary.json yet; says how many points results.jsonl holds), malformed JSON (line, column,
/// byte), a missing or mistyped field (its path, e.g. points[3].result.total.duration_ns).
nlohmann::json load_sweep_summary(const std::string& path);

/// Throws InputError "`source`: FIELD: ..." when the summary lacks a field the report reads or
/// holds one of the wrong type, or when its point and group indices do not fit together.
void check_sweep_summary(const nlohmann::json& summary, const std::string& source);

/// The page: a checked summary (see check_sweep_summary) in, a complete HTML document out.
/// Deterministic: the same summary gives the same bytes.
std::string html_report(const nlohmann::json& summary);

/// `text` unchanged, for the body of an inline <script> or <style> (`tag`): it must not contain
/// its own end tag, or the page would be cut there. The bundled libraries and our assets do not
/// (tests check the pages); a future library version that did throws std::logic_error here
/// instead of truncating a page.
const std::string& inline_safe(const std::string& text, const std::string& tag);

/// Text for an HTML text node or a double-quoted attribute (& < > " escaped).
std::string html_escaped(const std::string& s);

/// `j` as JSON text that can sit inside <script type="application/json">: "</" is written
/// "<\/" and "<!--" as "\u003c!--", so the text can neither close the element nor open an
/// HTML comment; JSON.parse() reads back the same value.
std::string json_for_script(const nlohmann::json& j);

/// The report's number format: x·10^decimals rounded to the nearest integer, halves toward +∞
/// (JavaScript's Math.round), printed with `decimals` digits after the point ("1.250", "0",
/// "-3.5"; never "-0"). The multiplication is one IEEE double multiplication in C++ and in JS,
/// so both print the same digits; exact while |x|·10^decimals < 2^53. "—" for a non-number.
std::string report_fixed(double x, int decimals);

/// The text the page shows in table cell `field` of `point` (an element of summary.points).
/// Fields and their rules are listed in docs/report.md: "point", "label", "time_us",
/// "dram_mb", "bound_mb", "dram_over_bound", "l2_hit_pct", "waves", "tail_lost_us", "speedup",
/// "rank", "note". Throws std::invalid_argument for an unknown field.
std::string report_cell(const nlohmann::json& point, const std::string& field);

}  // namespace tilesim
