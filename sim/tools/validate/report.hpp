#pragma once
// Printing a validation report: a per-case table and the aggregates, as text or JSON.
#include <nlohmann/json.hpp>

#include <ostream>
#include <string>

#include "sim/tools/validate/validation.hpp"

namespace tilesim {

void write_validation_table(std::ostream& out, const ValidationReport& r);
/// One aggregate as a line: "NAME (N cases): L2 hit MAE ..., DRAM read MAPE ..., ...".
void write_aggregate_line(std::ostream& out, const std::string& name, const Aggregate& a, double tie_tolerance);
nlohmann::json aggregate_json(const Aggregate& a);
nlohmann::json validation_json(const ValidationReport& r);
/// One case's figures, as an element of validation_json's "cases".
nlohmann::json case_json(const CaseComparison& c);
/// The case case_json wrote (throws nlohmann::json's exceptions on another shape).
CaseComparison case_from_json(const nlohmann::json& j);

}  // namespace tilesim
