// The question each MMA probe asks, answered by a candidate model from its parameters alone
// (audit/verdict.hpp). The candidates are the identification's: the model's algorithms with every
// parameter free, kept when they reproduce every output bit of the configuration's observations
// (all its probes' cases, and the inputs the identification drew to separate them). A probe's
// verdict is what the survivors' answers imply, so on a device the model describes it cannot state
// a parameter the device lacks; a question that concerns another kind of unit (the carry-out bits
// of a fixed-point accumulator, asked of an FMA chain) is "not applicable".
#pragma once

#include <span>
#include <string>

#include "audit/verdict.hpp"
#include "tests_mma/support.hpp"

namespace gp::mma {

using audit::MmaQuestion;

// Answers several probes share (each probe states its question beside its inputs): the rounding of
// what the unit delivers; how c joins a fused sum; a fused algorithm's answer, null for the others;
// the carry-out bits of a fixed-point accumulator.
nlohmann::json rounding_answer(const MmaConfig& cfg, const DotConfig& c);
nlohmann::json c_alignment_answer(const MmaConfig& cfg, const DotConfig& c);
nlohmann::json fused_only(const DotConfig& c, nlohmann::json answer);
// The questions two probes ask alike: the kept fraction bits F of a fused sum (its head differs),
// the carry-out bits, the normalization of a fused sum's partial sums, the rounding.
MmaQuestion kept_bits_question(std::string head);
MmaQuestion carries_question();
MmaQuestion normalization_question(std::string head);
// The rounding of the accumulation or of the output, said "<rounding> at <n> fraction bits".
MmaQuestion rounding_question(std::string head, std::string about);

}  // namespace gp::mma
