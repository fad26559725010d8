#pragma once
// Canonical forms of configuration: YAML as JSON with sorted keys and typed scalars, so that
// two spellings of one configuration (key order, 4096 vs 4.096e3 stays distinct, flow or block
// style) compare and hash alike; and the fingerprint a finished sweep point is known by.
#include <nlohmann/json.hpp>
#include <string>

#include <yaml-cpp/yaml.h>

namespace tilesim::sweep {

/// YAML to JSON: unquoted scalars that read as integers, numbers, booleans or null become
/// those; quoted ones and everything else stay strings. Keys are sorted (nlohmann's map).
nlohmann::json yaml_to_json(const YAML::Node& n);

/// The canonical text of a YAML value (compact JSON of yaml_to_json).
std::string canonical_text(const YAML::Node& n);

/// A 128-bit FNV-1a digest as 32 hex digits: not cryptographic, but a collision between two
/// configurations of one sweep folder is out of reach.
std::string digest_hex(const std::string& data);

/// What invalidates finished points: the version and a digest of the running executable, so a
/// rebuilt simulator recomputes instead of mixing results of two models.
const std::string& simulator_fingerprint();

}  // namespace tilesim::sweep
