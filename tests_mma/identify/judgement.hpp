// The verdicts of an MMA configuration's probes, from the identification's survivors: each probe's
// question (audit::MmaProbe::question) asked of every candidate left, judged by audit::judge.
#pragma once

#include <span>

#include "audit/probe.hpp"
#include "tests_mma/support.hpp"

namespace gp::mma {

// A probe's finding, with the probe whose question judges it.
struct ProbeReading {
  const audit::MmaProbe* probe = nullptr;
  audit::Finding finding;
};

// Replaces the verdicts of the configuration's probe findings (status ok) by the judgement of the
// survivors' answers to each probe's question. `closest`: the last candidates standing when none
// survived.
void judge_findings(const MmaConfig& cfg, std::span<const DotConfig> survivors, std::span<const DotConfig> closest,
                    std::span<ProbeReading> readings);

}  // namespace gp::mma
