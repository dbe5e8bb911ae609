#include "cli/check_command.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <charconv>
#include <filesystem>
#include <algorithm>
#include <memory>
#include <random>
#include <set>

#include "audit/health_check.hpp"
#include "audit/json_access.hpp"
#include "audit/probe.hpp"
#include "audit/report/result_check.hpp"
#include "audit/result.hpp"
#include "cli/audit_command.hpp"
#include "cli/exit_codes.hpp"
#include "input/input_error.hpp"

namespace gp::cli {

namespace {

struct CheckArgs {
  std::string against, json_file, out_dir, shard;
  std::vector<std::string> devices, profile_files;
  double seconds = 20;
  std::uint64_t seed = 0;
  bool seed_set = false;
};

// A mismatching case in one line, as the result document writes it (hex bit patterns): what ran, its
// inputs, the device's output and the recorded model's.
std::string case_line(const nlohmann::json& o) {
  std::string inputs;
  for (const nlohmann::json& x : audit::member(o, "inputs"))
    inputs += (inputs.empty() ? "" : " ") + x.get<std::string>();
  std::string predicted;
  for (const auto& [who, v] : audit::member(o, "predictions", audit::empty_object()).items())
    predicted += fmt::format(", {} {}", who, v.get<std::string>());
  return fmt::format("{}: inputs {}: device {}{}", audit::string_member(o, "note"), inputs,
                     audit::string_member(o, "output"), predicted);
}

int run_check(const CheckArgs& a) {
  audit::CheckSettings settings;
  settings.seconds = a.seconds;
  if (!a.shard.empty()) settings.shard = *audit::Shard::parse(a.shard);  // checked by the option
  input::InputError err;
  const auto doc = audit::read_result(a.against, err);
  if (!doc) {
    fmt::print(stderr, "{}", input::error_line(err.text()));
    return kExitBadInput;
  }
  auto found = find_devices(a.profile_files);
  if (!found) {
    fmt::print(stderr, "gpuparanoia: {}\n", found.error().message);
    return kExitBadInput;
  }
  // The recorded device by default: the same id on this machine.
  const std::string recorded_id = (*doc)["device"].value("id", "");
  const auto selected = selected_devices(a.devices.empty() ? std::vector{recorded_id} : a.devices, *found);
  if (!selected) {
    if (a.devices.empty())
      fmt::print(stderr,
                 "gpuparanoia: the result's device {} is not here (gpuparanoia devices lists them; name one "
                 "with --device)\n",
                 recorded_id);
    else
      fmt::print(stderr, "{}", input::error_line(selected.error().message));
    return kExitUsage;
  }
  const std::vector<backends::Device*>& chosen = *selected;
  if (!a.json_file.empty() && chosen.size() != 1) {
    fmt::print(stderr, "gpuparanoia: --json writes one device's check; {} devices are selected\n", chosen.size());
    return kExitUsage;
  }
  settings.seed = a.seed_set ? a.seed : std::random_device{}() | (std::uint64_t(std::random_device{}()) << 32);
  fmt::print("check against {} (seed {}{}, {} s a device)\n", a.against, settings.seed,
             settings.shard.on() ? fmt::format(", shard {}/{}", settings.shard.index, settings.shard.count) : "",
             a.seconds);
  int exit_code = kExitOk;
  for (backends::Device* d : chosen) {
    const nlohmann::json run = {{"check",
                                 {{"against", a.against},
                                  {"seconds", a.seconds},
                                  {"seed", settings.seed},
                                  {"shard", settings.shard.index},
                                  {"shards", settings.shard.count}}}};
    audit::ResultDocument out(*d, GPUPARANOIA_VERSION_STRING, run);
    // Each device's check in its own file: --json, or <device>.json under --out (a periodic check
    // replaces its last one).
    std::string path = a.json_file;
    if (!a.out_dir.empty()) {
      std::error_code ec;
      std::filesystem::create_directories(a.out_dir, ec);
      path = (std::filesystem::path(a.out_dir) / (audit::slug(d->info().id) + ".json")).string();
    }
    if (!path.empty())
      if (auto w = out.write_to(path); !w) {
        fmt::print(stderr, "gpuparanoia: {}\n", w.error().message);
        return kExitWriteFailed;
      }
    auto findings = audit::check_against(*d, *doc, a.against, settings, [&](std::string_view target) {
      fmt::print(stderr, "{} {}...\r", d->info().id, target);
    });
    if (!findings) {
      fmt::print(stderr, "gpuparanoia: {}\n", findings.error().message);
      return kExitBadInput;
    }
    for (const audit::Finding& f : *findings) {
      out.add(f);
      fmt::print("{} {}: {}\n", d->info().id, f.format.empty() ? f.config : f.format, f.verdict);
      if (!f.message.empty() && f.status == audit::Status::error) fmt::print("  {}\n", f.message);
      // The first mismatches, one of each operation (the JSON keeps them all).
      std::set<std::string> shown;
      for (const nlohmann::json& o : out.json()["findings"].back()["observations"])
        if (shown.insert(audit::string_member(o, "note")).second && shown.size() <= 4)
          fmt::print("  first: {}\n", case_line(o));
    }
    out.finish();
    const bool passed = audit::check_passed(*findings);
    const bool any = std::any_of(findings->begin(), findings->end(),
                                 [](const audit::Finding& f) { return f.status != audit::Status::unsupported; });
    fmt::print("{}: {}\n", d->info().id,
               passed ? "computes as recorded"
               : any  ? "DOES NOT compute as recorded"
                      : "nothing could be checked: the result records nothing this device computes");
    if (!passed) exit_code = kExitDifferences;
    if (out.write_error()) exit_code = kExitWriteFailed;
  }
  return exit_code;
}

}  // namespace

void add_check_command(CLI::App& app, int& exit_code) {
  auto a = std::make_shared<CheckArgs>();
  CLI::App* cmd = app.add_subcommand(
      "check", "Check that a device still computes as a result recorded: its profile's validation, in bounded time");
  cmd->add_option("--against", a->against, "The recorded result JSON (gpuparanoia run --json or --out)")->required();
  cmd->add_option("--device", a->devices, "Device id or glob (default: the result's device); repeatable");
  cmd->add_option("--seconds", a->seconds, "Time a device, shared by its units and configurations")
      ->capture_default_str()
      ->check(CLI::Range(0.01, 86400.0));
  cmd->add_option("--seed", a->seed, "Seed of the random cases (default: drawn, and printed)")
      ->each([a](const std::string&) { a->seed_set = true; });
  cmd->add_option("--shard", a->shard,
                  "I/N: this job's share of a campaign (0 <= I < N), its cases disjoint from the other shards'")
      ->check(shard_check());
  CLI::Option* json =
      cmd->add_option("--json", a->json_file, "Write the check of the (single) device as a result JSON here");
  cmd->add_option("--out", a->out_dir, "Write each device's check as <device>.json into this folder")->excludes(json);
  cmd->add_option("--profile-file", a->profile_files,
                  "Add the virtual devices of a profile file or result JSON (ref:<file stem>)");
  cmd->callback([a, &exit_code] { exit_code = run_check(*a); });
}

}  // namespace gp::cli
