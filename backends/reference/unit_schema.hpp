// The scalar units of the profile schema: a unit as the keys of a result's profile.scalar.<format>
// (model/scalar_unit.hpp names each key beside its parameter), written and read back with checks.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "backends/expected.hpp"
#include "model/scalar_unit.hpp"

namespace gp::backends {

// An adder as the keys of profile.scalar.<format>.add (and add_cascaded).
nlohmann::json adder_json(const model::AdderParams& adder);
// A scalar unit as the keys of a result's profile.scalar, and back.
nlohmann::json unit_to_json(const model::ScalarUnit& unit);
// Errors name the key path from `where` (from j itself when `where` is empty) and are
// ErrorKind::invalid; one within a key of j (an operation, "div") or about an unknown key names that
// key as Error::key, so that a caller may leave it out.
Expected<model::ScalarUnit> unit_from_json(const model::Format& f, const nlohmann::json& j, const std::string& where);

}  // namespace gp::backends
