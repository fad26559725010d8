#pragma once
// Printing a validation report: a per-case table and the aggregates, as text or JSON.
#include <nlohmann/json.hpp>

#include <ostream>

#include "sim/tools/validate/validation.hpp"

namespace tilesim {

void write_validation_table(std::ostream& out, const ValidationReport& r);
nlohmann::json validation_json(const ValidationReport& r);

}  // namespace tilesim
