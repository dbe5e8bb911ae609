#include "tests_mma/questions.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace gp::mma {

using model::is_fdrda_family;
using model::is_fused;
using model::unchained;
using nlohmann::json;

namespace {

const Format& sums_format(const MmaConfig& cfg, const DotConfig& c) {
  if (c.algorithm == MmaAlgorithm::tree && c.tree->sum_format) return *c.tree->sum_format;
  if (c.algorithm == MmaAlgorithm::gps) return model::binary32;
  return *cfg.d;
}

}  // namespace

json answer_fields(const RoundingAnswer& a) {
  return {{"rounding", std::string(model::name(a.rounding))}, {"fraction_bits", a.fraction_bits}};
}

// The rounding of what the unit delivers: the fused algorithms' final rounding, the FMA chain's
// and GPS's round to nearest even (MMA-Sim IV-A, IV-B), a tree's sums' rounding.
RoundingAnswer rounding_answer(const MmaConfig& cfg, const DotConfig& c) {
  switch (unchained(c.algorithm)) {
    case MmaAlgorithm::sfma:
    case MmaAlgorithm::gps: return {model::Rounding::rne, sums_format(cfg, c).man_bits};
    case MmaAlgorithm::tree: return {c.tree->sum_rounding, sums_format(cfg, c).man_bits};
    default: return {c.out_rounding, c.out_fraction_bits};
  }
}

std::string_view describe(CAlignment how) {
  switch (how) {
    case CAlignment::with_products: return "truncated with the products";
    case CAlignment::toward_zero: return "toward zero";
    case CAlignment::rounded_down: return "rounded down";
    case CAlignment::rounded_down_unless_far_below: return "rounded down, toward zero when far below the dot product";
  }
  return "?";
}

json answer_fields(const CAlignmentAnswer& a) { return {{"c_alignment", std::string(describe(a.how))}}; }

// How c joins the fused sum: aligned with the products and truncated (fda, gdfs), or with the
// dot product rounding down or toward zero (the fdrda family; gfdrda truncates a c far below).
CAlignmentAnswer c_alignment_answer(const DotConfig& c) {
  if (!is_fdrda_family(c.algorithm)) return {CAlignment::with_products};
  if (!c.round_down_alignment) return {CAlignment::toward_zero};
  return {unchained(c.algorithm) == MmaAlgorithm::gfdrda ? CAlignment::rounded_down_unless_far_below
                                                         : CAlignment::rounded_down};
}

Accumulation accumulation(const MmaConfig& cfg, const DotConfig& c) {
  return {unchained(c.algorithm), cfg.k, std::min(c.group, cfg.k), model::effective_block(c, cfg.k), c.tree};
}

namespace {

// The kept fraction bits F of a fused sum.
struct KeptBits {
  int F = 0;
};
json answer_fields(const KeptBits& a) { return {{"F", a.F}}; }
std::string say_kept_bits(const KeptBits& a) {
  return fmt::format("F = {} fraction bits kept below the largest summand's leading bit", a.F);
}

// The carry-out bits of a fixed-point accumulator (0: every carry kept).
struct Carries {
  int carry_bits = 0;
};
std::string say_carries(const Carries& a) {
  if (a.carry_bits == 0) return "every carry kept (an exact fixed-point sum)";
  return fmt::format("{} carry-out bits above the largest summand's leading bit: larger sums wrap around",
                     a.carry_bits);
}
json answer_fields(const Carries& a) { return {{"carries", say_carries(a)}}; }

audit::Answer carries_answer(const MmaConfig&, const DotConfig& c) {
  if (c.carry_bits == 0) return fused_only(c, Carries{0});
  return audit::Answer(Carries{c.carry_bits});
}

// A fused sum's partial sums are normalized once, the exact sum's: the model's only answer.
struct NormalizedOnce {};
std::string say_normalized(const NormalizedOnce&) { return "once, of the exact fixed-point sum"; }
json answer_fields(const NormalizedOnce& a) { return {{"normalization", say_normalized(a)}}; }

std::string say_rounding(const RoundingAnswer& a) {
  return fmt::format("{} at {} fraction bits", model::name(a.rounding), a.fraction_bits);
}

}  // namespace

MmaQuestion kept_bits_question(std::string head) {
  return {
      {std::move(head), "the fraction bits a fused sum keeps below its largest summand", audit::typed(say_kept_bits)},
      [](const MmaConfig&, const DotConfig& c) { return fused_only(c, KeptBits{c.F}); }};
}

MmaQuestion carries_question() {
  return {{"CARRIES", "the carry-out bits of a fixed-point accumulator", audit::typed(say_carries)}, carries_answer};
}

MmaQuestion rounding_question(std::string head, std::string about) {
  return {{std::move(head), std::move(about), audit::typed(say_rounding)},
          [](const MmaConfig& cfg, const DotConfig& c) { return audit::Answer(rounding_answer(cfg, c)); }};
}

MmaQuestion normalization_question(std::string head) {
  return {{std::move(head), "the normalization of a fused sum's partial sums", audit::typed(say_normalized)},
          [](const MmaConfig&, const DotConfig& c) { return fused_only(c, NormalizedOnce{}); }};
}

}  // namespace gp::mma
