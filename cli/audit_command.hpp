// `gpuparanoia devices` and `gpuparanoia run`: the audit of the devices found.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "backends/device.hpp"

namespace CLI {
class App;  // <CLI/CLI.hpp>, included by the files that build the commands
class Validator;
}  // namespace CLI

namespace gp::cli {

void add_audit_commands(CLI::App& app, int& exit_code);

// The check of a --shard I/N option (audit::Shard::parse).
CLI::Validator shard_check();

struct Unavailable {
  std::string backend, reason;
};

struct Found {
  std::vector<std::unique_ptr<backends::Device>> devices;
  std::vector<Unavailable> unavailable;  // backends that found nothing, and why
};

// The devices of every backend, the profile files' virtual devices among them. `code`: where the
// devices keep their kernels' compiled code (run --code), "" for nowhere.
Expected<Found> find_devices(const std::vector<std::string>& profile_files, const std::string& code = "");

// The devices --device selectors name (globs on ids), in the order found; none: every device but the
// reference backend's instruction devices. An Error (ErrorKind::invalid) names a selector that
// matches no device.
Expected<std::vector<backends::Device*>> selected_devices(const std::vector<std::string>& selectors,
                                                          const Found& found);

}  // namespace gp::cli
