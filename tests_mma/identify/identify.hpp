// Identification of an MMA unit's arithmetic: the algorithm of MMA-Sim's nine
// and the parameters that predict every probe observation, then random validation.
//
// Method: the candidates of tests_mma/identify/candidates.hpp, all of them searched every time: a probe's
// verdict is a claim about every candidate of the model (tests_mma/questions.hpp), so the search is
// never narrowed to the ranges the probes measured. Every candidate is evaluated with model::Dot on
// the inputs of every observation (all probes' cases) and kept only if it predicts each output bit
// for bit. The survivors then face inputs drawn to separate them (random bit patterns, normal
// values, cancellations, tiny sums, ties, overflow, specials): those where they disagree are run on
// the device, until one behaviour is left. Parameters that no input separates are reported as
// ambiguous, and one canonical value is chosen (candidates.hpp, rank_less). The chosen model is
// validated on random tiles: 10^4 (quick), 10^5 (standard) or 10^6 (full). The summation trees
// searched are the shape the summation-tree probe rebuilt (any tree, tests_mma/tree_shape.hpp) and
// the families `fit` searches (chains, blocked pairwise trees, chains of fused groups).
#pragma once

#include <optional>
#include <string>

#include "audit/probe.hpp"
#include "backends/reference/profile.hpp"
#include "model/mma_algorithms.hpp"
#include "tests_mma/identify/judgement.hpp"

namespace gp::mma {

inline constexpr std::string_view kIdentifyTitle =
    "Identification of the algorithm and its parameters, random validation";

// What the identification of one configuration states: its finding and, where a model of the
// nine fits, the model chosen with its validation (the result's profile.mma entry).
struct Identification {
  audit::Finding finding;
  std::optional<DotConfig> model;
  backends::MmaValidation validation;
};

// After the MMA probes of one configuration: the algorithm and parameters (of the model's nine)
// that predict every observation, validated on random tiles. The probes' findings get their
// verdicts from the candidates left (MmaProbe::question).
Identification identify_mma(backends::Device& device, const backends::MmaConfig& config,
                            std::span<ProbeReading> probe_readings, const audit::ProbeContext& ctx);

// Random tiles the validation draws at a tier: 10^4, 10^5, 10^6.
std::uint64_t validation_tiles(const audit::ProbeContext& ctx);
// How the identification's verdict ends: "10000 random tiles, 0 mismatches" (merge sums shards' counts).
std::string validation_words(std::uint64_t tiles, std::uint64_t mismatches);

}  // namespace gp::mma
