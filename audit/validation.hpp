// Validation of an inferred scalar profile: the unit the probes described, built from the profile
// keys, must predict the device bit for bit on random operands (an approximate division or square
// root: every result within its bound, model/scalar_unit.hpp).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "audit/probe.hpp"
#include "backends/reference/unit_schema.hpp"

namespace gp::audit {

// Normalises the profile the probes assembled for one format: a truncating unit with guard bits
// (or truncated columns) is "chop", not "rz".
void normalise_scalar_profile(backends::ScalarProfile& profile);

// What the register probes read of a format's registers (tests_scalar/suite.hpp, read_registers).
struct RegisterReading {
  int bits = 0;              // the registers' precision, where wider than the storage's; else 0
  bool wider_range = false;  // an exponent range wider than the storage's
};

// A format whose register probes found registers wider than its storage, registers that are
// another format the device computes in (the same precision, an exponent range at least as wide),
// computes in that format's unit: its profile takes that unit's arithmetic keys (add, sub, mul,
// div, sqrt, fma, mad, subnormal flushing of operations) with "registers": <format>, and keeps
// what it measured itself of its storage (cvt: the rounding of stores, transfers, NaN transfers).
// `profiles` is the result's profile.scalar, `readings` by format name; before normalisation.
void assemble_register_profiles(backends::ScalarProfiles& profiles,
                                const std::map<std::string, RegisterReading>& readings,
                                const std::vector<const model::Format*>& formats);

inline constexpr std::string_view kValidationTitle = "Validation of the inferred profile";
// The validation finding's verdict: all cases predicted, or how many differ; what was left out.
std::string validation_verdict(const backends::ScalarProfile::Validation& v);

// Runs random cases of every operation through the device and through the unit of `profile`;
// sets profile.validation and returns the finding that reports it.
Finding validate_scalar_profile(backends::Device& device, const model::Format& format, backends::ScalarProfile& profile,
                                const ProbeContext& ctx);

}  // namespace gp::audit
