// The MMA entries of the profile schema: profile.mma[] {config, instruction, algorithm, parameters,
// validation}, a configuration with the model it computes with (model/dot_parameters.hpp names the
// parameters).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "backends/device.hpp"
#include "model/mma_algorithms.hpp"

namespace gp::backends {

// What random tiles showed of an MMA entry's model (the identification's validation).
struct MmaValidation {
  std::uint64_t tiles = 0, mismatches = 0, elements = 0;
};
// An MMA entry as profiles and results write it: {config, instruction, algorithm, parameters,
// validation}, the model and the validation where there are.
nlohmann::json mma_entry_json(const MmaConfig& config, const model::DotConfig* model,
                              const MmaValidation* validation = nullptr);

// An entry's validation, where it holds a well-formed one.
std::optional<MmaValidation> read_mma_validation(const nlohmann::json& entry);

// An MMA entry's algorithm for K products: the chained variant (cofda, cofdrda, cogfdrda) when the
// fused block holds fewer than K products.
std::string algorithm_name(const model::DotConfig& cfg, int k);
// The parameters of a model as an MMA entry writes them.
nlohmann::json parameters_json(const model::DotConfig& cfg, int k);
// The model an MMA entry ({algorithm, parameters}) describes, for this configuration's formats.
Expected<model::DotConfig> config_from_entry(const MmaConfig& config, const nlohmann::json& entry);

}  // namespace gp::backends
