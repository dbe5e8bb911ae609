// Validation of an inferred scalar profile: the unit the probes described, built from the profile
// keys, must predict the device bit for bit on random operands (an approximate division or square
// root: every result within its bound, model/scalar_unit.hpp).
#pragma once

#include <nlohmann/json.hpp>

#include "audit/probe.hpp"

namespace gp::audit {

// Normalises the profile the probes assembled for one format: a truncating unit with guard bits
// (or truncated columns) is "chop", not "rz".
void normalise_scalar_profile(nlohmann::json& profile);

// A format whose register probes found registers wider than its storage, registers that are
// another format the device computes in (the same precision, an exponent range at least as wide),
// computes in that format's unit: its profile takes that unit's arithmetic keys (add, sub, mul,
// div, sqrt, fma, mad, subnormal flushing of operations) with "registers": <format>, and keeps
// what it measured itself of its storage (cvt: the rounding of stores, transfers, NaN transfers).
// `profiles` is the result's profile.scalar, `findings` its findings; before normalisation.
void assemble_register_profiles(nlohmann::json& profiles, const nlohmann::json& findings,
                                const std::vector<const model::Format*>& formats);

inline constexpr std::string_view kValidationTitle = "Validation of the inferred profile";

// Runs random cases of every operation through the device and through the unit of `profile`;
// sets profile["validation"] = {cases, mismatches} and returns the finding that reports them.
Finding validate_scalar_profile(backends::Device& device, const model::Format& format, nlohmann::json& profile,
                                const ProbeContext& ctx);

}  // namespace gp::audit
