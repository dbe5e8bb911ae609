// The question each MMA probe asks, answered by a candidate model from its parameters alone
// (audit/verdict.hpp). The candidates are the identification's: the model's algorithms with every
// parameter free, kept when they reproduce every output bit of the configuration's observations
// (all its probes' cases, and the inputs the identification drew to separate them). A probe's
// verdict is what the survivors' answers imply, so on a device the model describes it cannot state
// a parameter the device lacks; a question that concerns another kind of unit (the carry-out bits
// of a fixed-point accumulator, asked of an FMA chain) is "not applicable".
#pragma once

#include <span>
#include <string_view>

#include "audit/verdict.hpp"
#include "tests_mma/support.hpp"

namespace gp::mma {

struct MmaQuestion {
  audit::Question question;
  // The answer of one candidate for K products (null: the question does not apply to it).
  nlohmann::json (*answer)(const MmaConfig& cfg, const DotConfig& candidate);
};

// The question of a probe, by id; null for an id without one.
const MmaQuestion* question_of(std::string_view probe);

// Replaces the verdicts of the configuration's probe findings (status ok) by the judgement of the
// survivors' answers. `closest`: the last candidates standing when none survived.
void judge_findings(const MmaConfig& cfg, std::span<const DotConfig> survivors, std::span<const DotConfig> closest,
                    std::span<audit::Finding> findings);

}  // namespace gp::mma
