// Validation of an inferred scalar profile: the unit the probes described, built from the profile
// keys, must predict the device bit for bit on random operands (DESIGN.md section 6).
#pragma once

#include <nlohmann/json.hpp>

#include "audit/probe.hpp"

namespace gp::audit {

// Normalises the profile the probes assembled for one format: a truncating unit with guard bits
// (or truncated columns) is "chop", not "rz" (DESIGN.md section 7).
void normalise_scalar_profile(nlohmann::json& profile);

// Runs random cases of every operation through the device and through the unit of `profile`;
// sets profile["validation"] = {cases, mismatches} and returns the finding that reports them.
Finding validate_scalar_profile(backends::Device& device, const model::Format& format, nlohmann::json& profile,
                                const ProbeContext& ctx);

}  // namespace gp::audit
