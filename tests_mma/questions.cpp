#include "tests_mma/questions.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <set>

#include "backends/reference/profile.hpp"

namespace gp::mma {

using backends::algorithm_name;
using backends::parameters_json;
using model::is_fdrda_family;
using model::is_fused;
using model::MmaNan;
using model::unchained;
using nlohmann::json;

namespace {

const Format& sums_format(const MmaConfig& cfg, const DotConfig& c) {
  if (c.algorithm == MmaAlgorithm::tree && c.tree->sum_format) return *c.tree->sum_format;
  if (c.algorithm == MmaAlgorithm::gps) return model::binary32;
  return *cfg.d;
}

}  // namespace

// The rounding of what the unit delivers: the fused algorithms' final rounding, the FMA chain's
// and GPS's round to nearest even (MMA-Sim IV-A, IV-B), a tree's sums' rounding.
json rounding_answer(const MmaConfig& cfg, const DotConfig& c) {
  switch (unchained(c.algorithm)) {
    case MmaAlgorithm::sfma:
    case MmaAlgorithm::gps: return {{"rounding", "rne"}, {"fraction_bits", sums_format(cfg, c).man_bits}};
    case MmaAlgorithm::tree:
      return {{"rounding", std::string(model::name(c.tree->sum_rounding))},
              {"fraction_bits", sums_format(cfg, c).man_bits}};
    default: return {{"rounding", std::string(model::name(c.out_rounding))}, {"fraction_bits", c.out_fraction_bits}};
  }
}

// How c joins the fused sum: aligned with the products and truncated (fda, gdfs), or with the
// dot product rounding down or toward zero (the fdrda family; gfdrda truncates a c far below).
json c_alignment_answer(const MmaConfig&, const DotConfig& c) {
  if (!is_fused(c.algorithm)) return nullptr;
  if (!is_fdrda_family(c.algorithm)) return {{"c_alignment", "truncated with the products"}};
  if (!c.round_down_alignment) return {{"c_alignment", "toward zero"}};
  return {{"c_alignment", unchained(c.algorithm) == MmaAlgorithm::gfdrda
                              ? "rounded down, toward zero when far below the dot product"
                              : "rounded down"}};
}

json fused_only(const DotConfig& c, json answer) { return is_fused(c.algorithm) ? answer : json(nullptr); }

namespace {

json carries_answer(const MmaConfig&, const DotConfig& c) {
  if (c.carry_bits == 0) return fused_only(c, {{"carries", "every carry kept (an exact fixed-point sum)"}});
  return {{"carries", fmt::format("{} carry-out bits above the largest summand's leading bit: larger sums wrap around",
                                  c.carry_bits)}};
}

}  // namespace

MmaQuestion kept_bits_question(std::string head) {
  return {{std::move(head), "the fraction bits a fused sum keeps below its largest summand",
           [](const json& a) {
             return fmt::format("F = {} fraction bits kept below the largest summand's leading bit", a["F"].get<int>());
           }},
          [](const MmaConfig&, const DotConfig& c) {
            return fused_only(c, {{"F", c.F}});
          }};
}

MmaQuestion carries_question() {
  return {{"CARRIES", "the carry-out bits of a fixed-point accumulator",
           [](const json& a) { return a["carries"].get<std::string>(); }},
          carries_answer};
}

MmaQuestion rounding_question(std::string head, std::string about) {
  return {{std::move(head), std::move(about),
           [](const json& a) {
             return fmt::format("{} at {} fraction bits", a["rounding"].get<std::string>(),
                                a["fraction_bits"].get<int>());
           }},
          rounding_answer};
}

MmaQuestion normalization_question(std::string head) {
  return {{std::move(head), "the normalization of a fused sum's partial sums",
           [](const json& a) { return a["normalization"].get<std::string>(); }},
          [](const MmaConfig&, const DotConfig& c) {
            return fused_only(c, {{"normalization", "once, of the exact fixed-point sum"}});
          }};
}

}  // namespace gp::mma
