// The runner: selected probes on one device, findings into the result document as they come,
// then the inferred profile validated on random inputs.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "audit/probe.hpp"
#include "audit/result.hpp"

namespace gp::audit {

struct RunSettings {
  std::vector<std::string> probes;  // globs on probe ids; empty: every probe
  // Globs on MMA configurations, each matched against the name and the instruction
  // ("16x8x16:binary16,binary16,binary32,binary32", "hopper:HMMA.16816.F32"); empty: every one.
  std::vector<std::string> configs;
  std::string suite = "all";  // scalar, mma or all
  Tier tier = Tier::standard;
  std::uint64_t seed = 1;
  std::uint64_t mma_validation_tiles = 0;  // 0: the tier's (ProbeContext::validation_tiles)
  Shard shard = {};                        // the random validations' share of a sharded campaign
  // Asked before each probe: true stops the run there (a signal), the findings so far kept.
  std::function<bool()> stop;
  nlohmann::json to_json() const;
  static RunSettings from_json(const nlohmann::json& j);  // to_json's keys; throws on others
  bool stopped() const { return stop && stop(); }
};

struct Tally {
  int ok = 0, unsupported = 0, error = 0;
  void add(Status s);
};

// The findings the runner makes itself, beside the probes'.
inline constexpr std::string_view kProfileValidation = "scalar.profile.validation", kMmaIdentify = "mma.identify",
                                  kMmaConfigurations = "mma.configurations", kDeviceRun = "device.run";
// An empty finding of a probe or of the runner's own ids, with its title and source.
Finding finding_of(std::string_view id);

// An MMA probe's verdict until the identification has judged it (a finding that is still pending
// when a run ends says so).
inline constexpr std::string_view kPending = "pending:";
// An MMA probe's finding once the identification ended without judging it: no reading of its own
// (a reading follows from no model).
void unjudged(nlohmann::json& finding, std::string_view why);
// Every pending finding of a configuration that a crash ended, unjudged, and why.
void end_configuration(ResultDocument& doc, std::string_view config, std::string_view why);

// Every id a finding can have: the probes' and the runner's own, what --probe globs select from.
std::vector<std::string_view> finding_ids();

// Called before each probe with (probe id, format, index, count): progress display.
using ProgressFn = std::function<void(std::string_view, std::string_view, std::size_t, std::size_t)>;

// Runs the scalar suite. A probe that throws or fails ends as an `error` finding; the run goes on.
Tally run_scalar_suite(backends::Device& device, const RunSettings& settings, ResultDocument& doc,
                       const ProgressFn& progress = {});

// Whether a glob matches the configuration's name or its instruction; whether the settings'
// configuration globs select it (no glob: every configuration).
bool config_matches(std::string_view glob, const backends::MmaConfig& config);
bool selected_config(const RunSettings& settings, const backends::MmaConfig& config);

// Runs the MMA suite on every (selected) configuration of the device, then identifies and validates each.
Tally run_mma_suite(backends::Device& device, const RunSettings& settings, ResultDocument& doc,
                    const ProgressFn& progress = {});

}  // namespace gp::audit
