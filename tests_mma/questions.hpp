// The question each MMA probe asks, answered by a candidate model from its parameters alone
// (audit/verdict.hpp). The candidates are the identification's: the model's algorithms with every
// parameter free, kept when they reproduce every output bit of the configuration's observations
// (all its probes' cases, and the inputs the identification drew to separate them). A probe's
// verdict is what the survivors' answers imply, so on a device the model describes it cannot state
// a parameter the device lacks; a question that concerns another kind of unit (the carry-out bits
// of a fixed-point accumulator, asked of an FMA chain) is "not applicable".
//
// Each answer is a value of the question's own type (audit/answer.hpp) holding the model's values;
// its answer_fields are the record a finding writes.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <utility>

#include "audit/verdict.hpp"
#include "tests_mma/support.hpp"

namespace gp::mma {

using audit::MmaQuestion;

// Answers several probes share (each probe states its question beside its inputs).

// The rounding of what the unit delivers, at its fraction bits: {rounding, fraction_bits}.
struct RoundingAnswer {
  model::Rounding rounding = model::Rounding::rne;
  int fraction_bits = 0;
};
nlohmann::json answer_fields(const RoundingAnswer& a);
RoundingAnswer rounding_answer(const MmaConfig& cfg, const DotConfig& c);

// How c joins a fused sum: {c_alignment} in words.
enum class CAlignment {
  with_products,                  // aligned with the products and truncated (fda, gdfs)
  toward_zero,                    // aligned with the dot product, truncated toward zero
  rounded_down,                   // aligned with the dot product, rounding down (CDNA3)
  rounded_down_unless_far_below,  // the same, but toward zero when far below it (gfdrda)
};
std::string_view describe(CAlignment how);
struct CAlignmentAnswer {
  CAlignment how = CAlignment::with_products;
};
nlohmann::json answer_fields(const CAlignmentAnswer& a);
// A fused algorithm's (fused_only asks it of those alone).
CAlignmentAnswer c_alignment_answer(const DotConfig& c);

// A fused algorithm's answer, none for the others.
template <class T>
audit::Answer fused_only(const DotConfig& c, T answer) {
  return model::is_fused(c.algorithm) ? audit::Answer(std::move(answer)) : audit::Answer();
}

// The shape of the accumulation, which the order and the roundings questions word.
struct Accumulation {
  MmaAlgorithm algorithm = MmaAlgorithm::fda;  // unchained: a chained algorithm's chain is its blocks
  int k = 0;                                   // the products
  int group = 0;                               // gps, gdfs: the products of a group (at most k)
  int block = 0;                               // the fused algorithms: the products of a block (k: one)
  std::shared_ptr<const model::SummationTree> tree;
};
Accumulation accumulation(const MmaConfig& cfg, const DotConfig& c);

// The questions two probes ask alike: the kept fraction bits F of a fused sum (its head differs),
// the carry-out bits, the normalization of a fused sum's partial sums, the rounding.
MmaQuestion kept_bits_question(std::string head);
MmaQuestion carries_question();
MmaQuestion normalization_question(std::string head);
// The rounding of the accumulation or of the output, said "<rounding> at <n> fraction bits".
MmaQuestion rounding_question(std::string head, std::string about);

}  // namespace gp::mma
