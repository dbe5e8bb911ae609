// Profiles of the reference backend's virtual devices: scalar units per format and MMA
// configurations, built in or read from JSON files. The one module that reads and writes the
// profile schema, both parts: the scalar units (a result's profile.scalar) and the MMA entries
// (profile.mma[] {config, instruction, algorithm, parameters, validation}).
#pragma once

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "backends/device.hpp"
#include "model/mma_algorithms.hpp"
#include "model/scalar_unit.hpp"

namespace gp::backends {

struct Profile {
  std::string name;         // the device is "ref:" + name
  std::string device_name;  // "NVIDIA GeForce 7800 GTX (G70), pixel shader"
  std::string vendor;
  std::string description;                       // where the parameters come from
  std::vector<model::ScalarUnit> units;          // one per format the device computes in
  std::vector<MmaConfig> mma;                    // instructions of the model's table, or loaded entries
  std::map<std::string, std::string> published;  // DeviceInfo::published
  // The models of MMA configurations read from a file, by mma_model_key(); the others compute as
  // their instruction's row of the table.
  std::map<std::string, model::DotConfig> models;
};

// The key of an MMA configuration's model: its instruction, or its name where it has none.
std::string mma_model_key(const MmaConfig& config);
// The model an MMA configuration computes with: its entry in `models` (by mma_model_key), else its
// instruction's row of the table; null when it has neither.
const model::DotConfig* mma_model(const std::map<std::string, model::DotConfig>& models, const MmaConfig& config);
// The unit of a format as a program names it (its storage format: the unit may compute wider), or null.
const model::ScalarUnit* unit_for(const Profile& profile, const model::Format& storage);

// The built-in profiles: IEEE devices, the historical shader units, one device per MMA instruction.
std::vector<Profile> builtin_profiles();
// The built-in profile of that name (without "ref:"), or none.
std::optional<Profile> builtin_profile(std::string_view name);

// A profile file: {"name": ..., "description": ..., "scalar": {"<format>": {<the keys of
// a result's profile.scalar>}}, "mma": [<the entries of a result's profile.mma>], "published":
// {"<probe id> <format or config>": "what a source published"}} or a list of such objects. A single
// object's "name" defaults to the file's stem (`results/g70.json`: ref:g70); in a list it is required.
// A result JSON is read as its "profile" object, named after the file, with the published words of
// its findings: an inferred profile becomes a virtual device. MMA entries with no algorithm (nothing
// identified) are left out with a note in the description. Errors name the file and key.
Expected<std::vector<Profile>> load_profile_file(const std::filesystem::path& path);
Expected<std::vector<Profile>> parse_profiles(const nlohmann::json& doc, const std::string& where);
// A profile as a profile file writes it (parse_profiles reads it back to the same devices): name,
// device_name, vendor, description, scalar, mma (every configuration with its model), published.
nlohmann::json profile_json(const Profile& profile);

// What random tiles showed of an MMA entry's model (the identification's validation).
struct MmaValidation {
  std::uint64_t tiles = 0, mismatches = 0, elements = 0;
};
// An MMA entry as profiles and results write it: {config, instruction, algorithm, parameters,
// validation}, the model and the validation where there are.
nlohmann::json mma_entry_json(const MmaConfig& config, const model::DotConfig* model,
                              const MmaValidation* validation = nullptr);

// An adder as the keys of profile.scalar.<format>.add (and add_cascaded).
nlohmann::json adder_json(const model::AdderParams& adder);
// A scalar unit as the keys of a result's profile.scalar, and back.
nlohmann::json unit_to_json(const model::ScalarUnit& unit);
// Errors name the key path from `where` (from j itself when `where` is empty) and are
// ErrorKind::invalid; one within a key of j (an operation, "div") or about an unknown key names that
// key as Error::key, so that a caller may leave it out.
Expected<model::ScalarUnit> unit_from_json(const model::Format& f, const nlohmann::json& j, const std::string& where);

// An MMA entry's algorithm for K products: the chained variant (cofda, cofdrda, cogfdrda) when the
// fused block holds fewer than K products.
std::string algorithm_name(const model::DotConfig& cfg, int k);
// The parameters of a model as an MMA entry writes them.
nlohmann::json parameters_json(const model::DotConfig& cfg, int k);
// The model an MMA entry ({algorithm, parameters}) describes, for this configuration's formats.
Expected<model::DotConfig> config_from_entry(const MmaConfig& config, const nlohmann::json& entry);

}  // namespace gp::backends
