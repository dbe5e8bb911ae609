// The reference backend: virtual devices whose arithmetic is the model itself.
//   ref:<profile>             scalar units from a profile: built in (ieee-binary32, ieee-binary16,
//                             ieee-binary64, nvidia-g70, ati-r520, ati-r300) or from a JSON file
//                             (ref:<file stem>, or the profiles' names in a list), with the MMA
//                             configurations a loaded result identified
//   ref:<arch>:<instruction>  one MMA instruction of MMA-Sim's tables III and IV
// They are what the probes are tested against: every hidden parameter must be recovered blind.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "backends/device.hpp"
#include "backends/reference/profile.hpp"
#include "model/mma_algorithms.hpp"

namespace gp::backends {

class ReferenceDevice final : public Device {
 public:
  explicit ReferenceDevice(Profile profile);
  // A device whose MMA configurations compute with the given models as well as the profile's, looked
  // up by mma_model_key() before the instruction table: virtual devices with hidden parameters for
  // the blind tests and the benchmarks (the probes see only the MmaConfig).
  ReferenceDevice(Profile profile, std::map<std::string, model::DotConfig> models);
  const DeviceInfo& info() const override { return info_; }
  const Capabilities& caps() const override { return caps_; }
  Expected<std::vector<std::uint64_t>> scalar(const ScalarBatch& batch) override;
  Expected<std::vector<std::uint64_t>> mma(const MmaBatch& batch) override;
  const Profile& profile() const { return profile_; }

 private:
  Profile profile_;
  DeviceInfo info_;
  Capabilities caps_;
  std::map<std::string, model::DotConfig> models_;
};

class ReferenceBackend final : public Backend {
 public:
  explicit ReferenceBackend(std::vector<std::filesystem::path> profile_files = {});
  std::string name() const override { return "reference"; }
  Expected<std::vector<std::unique_ptr<Device>>> enumerate() override;

 private:
  std::vector<std::filesystem::path> files_;
};

}  // namespace gp::backends
