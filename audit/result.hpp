// The result document of one device's run (JSON schema gpuparanoia-result/1),
// kept up to date as the run goes and written atomically, so that a crash keeps what was done.
#pragma once

#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "audit/finding.hpp"
#include "backends/device.hpp"

namespace gp::audit {

inline constexpr std::string_view kSchema = "gpuparanoia-result/1";

nlohmann::json to_json(const Finding& f);
nlohmann::json to_json(const backends::DeviceInfo& info, const backends::Capabilities& caps);

class ResultDocument {
 public:
  ResultDocument(const backends::Device& device, std::string tool_version, nlohmann::json run_settings);
  // Appends a finding, merges its profile part, and rewrites the file if one is set.
  void add(const Finding& f);
  // Sets profile.scalar[format].validation (or any other profile key) after the probes.
  nlohmann::json& profile() { return doc_["profile"]; }
  // Stamps the duration and rewrites the file.
  void finish();
  // Writes to `path` now and after every change (write to a temporary, then rename).
  void write_to(std::filesystem::path path);
  const nlohmann::json& json() const { return doc_; }

 private:
  void flush() const;
  nlohmann::json doc_;
  std::chrono::steady_clock::time_point start_;
  std::optional<std::filesystem::path> path_;
};

// Writes text to path through a temporary file and a rename: readers never see half a file.
Expected<bool> write_atomically(const std::filesystem::path& path, const std::string& text);

// "ref:nvidia-g70" -> "ref-nvidia-g70": a name usable as a file name.
std::string slug(std::string_view id);

}  // namespace gp::audit
