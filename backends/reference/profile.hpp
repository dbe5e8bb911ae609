// Profiles of the reference backend's virtual devices: scalar units per format and MMA
// configurations, built in or read from JSON files. With unit_schema.hpp (a result's profile.scalar,
// the scalar units) and mma_entry.hpp (profile.mma[] {config, instruction, algorithm, parameters,
// validation}), the one module that reads and writes the profile schema (gpuparanoia_profile).
#pragma once

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "backends/device.hpp"
#include "backends/reference/mma_entry.hpp"
#include "backends/reference/unit_schema.hpp"
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
  // What a file states: its scalar keys by format (a result's, with their validation), and its MMA
  // entries' validations by mma_model_key().
  ScalarProfiles scalar = {};
  std::map<std::string, MmaValidation> validations = {};
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

}  // namespace gp::backends
