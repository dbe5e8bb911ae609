#include "backends/reference/mma_entry.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <variant>

#include "input/json_input.hpp"
#include "model/dot_parameters.hpp"

namespace gp::backends {

using nlohmann::json;

namespace {

using model::MmaAlgorithm;
using model::unchained;

bool chained(const model::DotConfig& c, int k) { return model::effective_block(c, k) < k; }

}  // namespace

json mma_entry_json(const MmaConfig& config, const model::DotConfig* model, const MmaValidation* validation) {
  json e = {{"config", config.name()}};
  if (!config.instruction.empty()) e["instruction"] = config.instruction;
  if (model) {
    e["algorithm"] = algorithm_name(*model, config.k);
    e["parameters"] = parameters_json(*model, config.k);
  }
  if (validation)
    e["validation"] = {
        {"tiles", validation->tiles}, {"mismatches", validation->mismatches}, {"elements", validation->elements}};
  return e;
}

std::optional<MmaValidation> read_mma_validation(const json& entry) {
  const auto it = entry.find("validation");
  if (it == entry.end() || !it->is_object()) return std::nullopt;
  const auto count = [&](const char* key) -> std::optional<std::uint64_t> {
    const auto v = it->find(key);
    if (v == it->end() || !v->is_number_unsigned()) return std::nullopt;
    return v->get<std::uint64_t>();
  };
  const auto tiles = count("tiles"), mismatches = count("mismatches");
  if (!tiles || !mismatches) return std::nullopt;
  return MmaValidation{*tiles, *mismatches, count("elements").value_or(0)};
}

std::string algorithm_name(const model::DotConfig& cfg, int k) {
  switch (unchained(cfg.algorithm)) {
    case MmaAlgorithm::fda: return chained(cfg, k) ? "cofda" : "fda";
    case MmaAlgorithm::fdrda: return chained(cfg, k) ? "cofdrda" : "fdrda";
    case MmaAlgorithm::gfdrda: return chained(cfg, k) ? "cogfdrda" : "gfdrda";
    default: return std::string(model::name(cfg.algorithm));
  }
}

json parameters_json(const model::DotConfig& c, int k) {
  json p = json::object();
  for (const auto& [key, v] : model::dot_config_parameters(c, k))
    p[key] = std::visit(
        [](const auto& x) -> json {
          if constexpr (std::is_same_v<std::decay_t<decltype(x)>, std::monostate>)
            return nullptr;
          else
            return x;
        },
        v);
  return p;
}

Expected<model::DotConfig> config_from_entry(const MmaConfig& config, const json& entry) {
  if (!entry.is_object() || !entry.contains("algorithm") || !entry["algorithm"].is_string())
    return Error{"malformed profile entry: algorithm must be a string", ErrorKind::invalid};
  const auto alg = model::find_mma_algorithm(entry["algorithm"].get<std::string>());
  if (!alg) return Error{"unknown algorithm " + entry["algorithm"].dump(), ErrorKind::invalid};
  if (!entry.contains("parameters") || !entry["parameters"].is_object())
    return Error{"malformed profile entry: parameters must be an object", ErrorKind::invalid};
  model::DotParameters parameters;
  for (const auto& [key, v] : entry["parameters"].items()) {
    // Integers within int64's range as integers, other numbers as doubles: nlohmann converts a
    // float or a huge number to an integer with undefined behaviour (a fuzzer finding:
    // "out_fraction_bits": 2e116).
    if (v.is_null())
      parameters[key] = std::monostate{};
    else if (v.is_boolean())
      parameters[key] = v.get<bool>();
    else if (v.is_number_integer() && !(v.is_number_unsigned() && v.get<std::uint64_t>() > std::uint64_t(INT64_MAX)))
      parameters[key] = v.get<std::int64_t>();
    else if (v.is_number())
      parameters[key] = v.get<double>();
    else if (v.is_string())
      parameters[key] = v.get<std::string>();
    else if (v.is_array() && std::all_of(v.begin(), v.end(), [](const json& x) { return x.is_string(); }))
      parameters[key] = v.get<std::vector<std::string>>();
    else
      return Error{
          fmt::format("parameters.{}: must be null, a boolean, an integer, a string or a list of strings, not {}",
                      input::key_text(key), v.dump()),
          ErrorKind::invalid};
  }
  auto c = model::dot_config_from_parameters(*alg, *config.a, *config.b, *config.c, *config.d, config.k, parameters);
  if (!c.config) return Error{c.key.empty() ? c.error : "parameters." + c.error, ErrorKind::invalid};
  return *c.config;
}

}  // namespace gp::backends
