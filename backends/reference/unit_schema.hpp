// The scalar units of the profile schema: a unit as the keys of a result's profile.scalar.<format>
// (model/scalar_unit.hpp names each key beside its parameter), written and read back with checks.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "backends/expected.hpp"
#include "model/scalar_unit.hpp"

namespace gp::backends {

// The keys of profile.scalar.<format> that name an operation of the unit, in the schema's order
// (then come subnormals, nan, registers and validation), with what each is to a profile's assembly
// (audit/validation.hpp): `stated`, the validation runs it only where a probe stated its
// parameters (a missing key is no finding, and the model's default would be a guess); `arithmetic`,
// it computes in the unit's registers, so that a format computed in a wider one takes that one's key.
struct UnitOperationKey {
  std::string_view key;
  bool stated, arithmetic;
};
inline constexpr UnitOperationKey kUnitOperationKeys[] = {
    {"add", true, true}, {"add_cascaded", false, true}, {"sub", false, true},
    {"mul", true, true}, {"div", true, true},           {"sqrt", true, true},
    {"fma", true, true}, {"mad", true, true},           {"cvt", false, false}};

// An adder as the keys of profile.scalar.<format>.add (and add_cascaded).
nlohmann::json adder_json(const model::AdderParams& adder);
// A scalar unit as the keys of a result's profile.scalar, and back.
nlohmann::json unit_to_json(const model::ScalarUnit& unit);
// Errors name the key path from `where` (from j itself when `where` is empty) and are
// ErrorKind::invalid; one within a key of j (an operation, "div") or about an unknown key names that
// key as Error::key, so that a caller may leave it out.
Expected<model::ScalarUnit> unit_from_json(const model::Format& f, const nlohmann::json& j, const std::string& where);

}  // namespace gp::backends
