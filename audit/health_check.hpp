// A device against the profile a result recorded (`gpuparanoia check --against`): the recorded
// profile's validation, each scalar unit and each identified MMA configuration on random cases drawn
// afresh, for a bounded time, so that a node that no longer computes as its model says is found in
// seconds (a Slurm prolog or health check). Its findings go into a result document of their own
// (probes kCheckScalar and kCheckMma), which `fleet` reads beside the audits.
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "audit/finding.hpp"
#include "audit/probe.hpp"
#include "backends/device.hpp"

namespace gp::audit {

inline constexpr std::string_view kCheckScalar = "check.scalar", kCheckMma = "check.mma";

struct CheckSettings {
  double seconds = 20;     // the whole device's time, shared evenly by its units and configurations
  std::uint64_t seed = 1;  // each unit's rounds draw from it (printed: a failure can be replayed)
  Shard shard = {};        // the rounds of one shard draw cases disjoint from the other shards' rounds
};

// Runs the check of `device` against the recorded profile of `result`: a finding per scalar format
// (kCheckScalar) and per MMA configuration (kCheckMma), their parameters {cases, mismatches, seed}
// (MMA: tiles, elements), the first mismatching case as an observation. A target whose recorded
// validation already differed from its device is not checked (unsupported: a profile that did not
// predict its device cannot tell a changed one); nor is one the device lacks. An Error for a result
// that is no profile.
using CheckProgress = std::function<void(std::string_view target)>;
Expected<std::vector<Finding>> check_against(backends::Device& device, const nlohmann::json& result,
                                             const std::string& where, const CheckSettings& settings,
                                             const CheckProgress& progress = {});

// Whether the findings say the device computes as recorded: every check ok and without mismatch
// (unsupported targets aside), and at least one target checked.
bool check_passed(const std::vector<Finding>& findings);

}  // namespace gp::audit
