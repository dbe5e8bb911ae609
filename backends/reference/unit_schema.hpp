// The scalar units of the profile schema: a unit as the keys of a result's profile.scalar.<format>
// (model/scalar_unit.hpp names each key beside its parameter), typed (ScalarProfile), written and
// read back with checks.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

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

// The index of an operation's key in kUnitOperationKeys.
enum class UnitOp : std::uint8_t { add, add_cascaded, sub, mul, div, sqrt, fma, mad, cvt };
inline constexpr std::size_t kUnitOps = std::size(kUnitOperationKeys);
constexpr std::string_view key(UnitOp o) { return kUnitOperationKeys[std::size_t(o)].key; }
// The operation of a key ("div"), if one.
constexpr std::optional<UnitOp> find_unit_op(std::string_view key) {
  for (std::size_t i = 0; i < kUnitOps; ++i)
    if (kUnitOperationKeys[i].key == key) return UnitOp(i);
  return std::nullopt;
}

// The value of o, engaged (a default one) where it was not: a key stated from now on.
template <class T>
T& engaged(std::optional<T>& o) {
  return o ? *o : o.emplace();
}

// What the probes stated of one format's scalar unit, as profile.scalar.<format> holds it: every
// key optional (stated, or no probe stated it), merged key by key in the probes' order, then
// assembled (audit/validation.hpp). A unit's profile (profile_of) states every key; a file's
// states what it holds. JSON only in to_json and read_scalar_profile.
struct ScalarProfile {
  // One operation's keys, <op>.<key>; which keys an operation takes, read_scalar_profile checks.
  struct Operation {
    std::optional<model::UnitRounding> rounding;
    std::optional<std::optional<int>> guard_bits, truncated_columns;  // stated null: none dropped
    std::optional<bool> sticky, fused;
    std::optional<std::uint64_t> correction;
    std::optional<model::DivMethod> method;
    std::optional<model::UlpBound> max_ulps;
    std::optional<model::ZeroAddend> zero_addend;
    // The roundings no probe told apart, the representative's class (audit/validation.hpp
    // normalises them away).
    std::optional<std::vector<std::string>> equivalent_roundings;
    std::optional<bool> flush_input, flush_output;  // <op>.subnormals, where it differs from the unit's
  };
  struct Subnormals {
    std::optional<bool> flush_input, flush_output, flush_transfer;
  };
  struct Nan {
    std::optional<bool> canonical, quiet_on_transfer, quiet, sub_flips;
    std::optional<model::NanPropagation> propagation;
    std::optional<model::DefaultNan> default_nan;
    std::optional<model::FmaNanOrder> fma_order;
  };
  // The profile's random differential validation (audit/validation.hpp).
  struct Validation {
    std::uint64_t cases = 0, mismatches = 0;
    std::map<std::string, std::string> not_validated;  // operation -> why
  };

  std::array<std::optional<Operation>, kUnitOps> ops{};
  std::optional<Subnormals> subnormals;
  std::optional<Nan> nan;
  const model::Format* registers = nullptr;  // the unit computes in that format's registers
  std::optional<Validation> validation;

  std::optional<Operation>& op(UnitOp o) { return ops[std::size_t(o)]; }
  const std::optional<Operation>& op(UnitOp o) const { return ops[std::size_t(o)]; }
  // The operation's part, stated from now on.
  Operation& stated(UnitOp o) { return engaged(op(o)); }
  bool empty() const;
};

// profile.scalar: the profiles by format name.
using ScalarProfiles = std::map<std::string, ScalarProfile, std::less<>>;

// Each key `from` states replaces the one of `into`.
void merge(ScalarProfile& into, const ScalarProfile& from);
// Every key of a unit.
ScalarProfile profile_of(const model::ScalarUnit& unit);
// The unit a profile describes: the IEEE unit of f with the stated keys. Errors name the key path
// from `where` and are ErrorKind::invalid; one within an operation names its key as Error::key, so
// that a caller may leave it out.
Expected<model::ScalarUnit> unit_of(const model::Format& f, const ScalarProfile& p, const std::string& where);

// The keys of profile.scalar.<format>, and back, with checks: errors name the key path from `where`
// (from j itself when `where` is empty) and are ErrorKind::invalid; one within a key of j (an
// operation, "div") or about an unknown key names that key as Error::key.
nlohmann::json to_json(const ScalarProfile& p);
Expected<ScalarProfile> read_scalar_profile(const nlohmann::json& j, const std::string& where);
// A scalar unit as the keys of a result's profile.scalar, and back (the two steps above).
nlohmann::json unit_to_json(const model::ScalarUnit& unit);
Expected<model::ScalarUnit> unit_from_json(const model::Format& f, const nlohmann::json& j, const std::string& where);

}  // namespace gp::backends
