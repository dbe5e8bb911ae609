// Profiles of the reference backend's virtual devices: scalar units per format and MMA
// configurations, built in or read from JSON files.
#pragma once

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "backends/device.hpp"
#include "model/scalar_unit.hpp"

namespace gp::backends {

struct Profile {
  std::string name;         // the device is "ref:" + name
  std::string device_name;  // "NVIDIA GeForce 7800 GTX (G70), pixel shader"
  std::string vendor;
  std::string description;  // where the parameters come from
  std::vector<model::ScalarUnit> units;  // one per format the device computes in
  std::vector<MmaConfig> mma;            // instructions of the model's table
  std::map<std::string, std::string> published;  // DeviceInfo::published
};

// The built-in profiles: IEEE devices, the historical shader units, one device per MMA instruction.
std::vector<Profile> builtin_profiles();

// A profile file: {"name": ..., "description": ..., "scalar": {"<format>": {<the keys of
// a result's profile.scalar>}}, "published": {"<probe id> <format>": "what a source published"}} or a
// list of such objects. The "profile" object of a result JSON is
// accepted as "scalar" is: an inferred profile becomes a virtual device. Errors name the file and key.
Expected<std::vector<Profile>> load_profile_file(const std::filesystem::path& path);
Expected<std::vector<Profile>> parse_profiles(const nlohmann::json& doc, const std::string& where);

// A scalar unit as the keys of a result's profile.scalar, and back.
nlohmann::json unit_to_json(const model::ScalarUnit& unit);
Expected<model::ScalarUnit> unit_from_json(const model::Format& f, const nlohmann::json& j, const std::string& where);

}  // namespace gp::backends
