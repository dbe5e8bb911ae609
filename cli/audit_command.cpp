#include "cli/audit_command.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <random>

#include "audit/report.hpp"
#include "audit/runner.hpp"
#include "backends/device.hpp"
#include "backends/reference/reference_backend.hpp"

namespace gp::cli {

namespace {

struct RunArgs {
  std::vector<std::string> devices, probes, profile_files;
  std::string suite = "all", out_dir, json_file;
  bool quick = false, full = false;
  std::uint64_t seed = 0;
  bool seed_set = false;
};

struct Found {
  std::vector<std::unique_ptr<backends::Device>> devices;
  std::vector<std::string> problems;  // backends that found nothing, and why
};

Expected<Found> find_devices(const std::vector<std::string>& profile_files) {
  Found found;
  backends::BackendOptions options;
  for (const std::string& f : profile_files) options.profile_files.emplace_back(f);
  auto backends = backends::all_backends(options);
  if (!backends) return backends.error();
  for (auto& b : *backends) {
    auto devices = b->enumerate();
    if (!devices) {
      // A user profile that does not load is the user's error; a missing driver is a fact.
      if (b->name() == "reference") return devices.error();
      found.problems.push_back(fmt::format("{}: {}", b->name(), devices.error().message));
      continue;
    }
    for (auto& d : *devices) found.devices.push_back(std::move(d));
  }
  return found;
}

// With no --device, every device but the reference backend's 305 instruction devices
// (ref:<arch>:<instruction>), which run when named: they are the model's own instructions.
bool matches(const std::vector<std::string>& selectors, std::string_view id) {
  if (selectors.empty()) return !(id.rfind("ref:", 0) == 0 && id.find(':', 4) != std::string_view::npos);
  for (const std::string& s : selectors)
    if (audit::glob_match(s, id)) return true;
  return false;
}

int list_devices(const std::vector<std::string>& profile_files) {
  auto found = find_devices(profile_files);
  if (!found) {
    fmt::print(stderr, "gpuparanoia: {}\n", found.error().message);
    return 2;
  }
  for (const auto& d : found->devices) {
    const auto& i = d->info();
    const auto& c = d->caps();
    std::string formats;
    for (const model::Format* f : c.formats) formats += (formats.empty() ? "" : " ") + std::string(f->name);
    fmt::print("{:<36} {}\n", i.id, i.name);
    if (!i.driver.empty() || !i.api.empty()) fmt::print("{:<36} driver {}, api {}\n", "", i.driver, i.api);
    if (!i.description.empty()) fmt::print("{:<36} {}\n", "", i.description);
    if (!formats.empty()) fmt::print("{:<36} scalar: {}\n", "", formats);
    for (const auto& m : c.mma)
      fmt::print("{:<36} mma: {}{}\n", "", m.name(), m.instruction.empty() ? "" : " (" + m.instruction + ")");
  }
  for (const std::string& p : found->problems) fmt::print("{}\n", p);
  return 0;
}

int run_audit(const RunArgs& a) {
  if (a.quick && a.full) {
    fmt::print(stderr, "gpuparanoia: --quick and --full exclude each other\n");
    return 2;
  }
  if (a.suite != "scalar" && a.suite != "mma" && a.suite != "all") {
    fmt::print(stderr, "gpuparanoia: --suite takes scalar, mma or all, got '{}'\n", a.suite);
    return 2;
  }
  auto found = find_devices(a.profile_files);
  if (!found) {
    fmt::print(stderr, "gpuparanoia: {}\n", found.error().message);
    return 2;
  }
  std::vector<backends::Device*> chosen;
  for (auto& d : found->devices)
    if (matches(a.devices, d->info().id)) chosen.push_back(d.get());
  if (chosen.empty()) {
    fmt::print(stderr, "gpuparanoia: no device matches{}\n", a.devices.empty() ? "" : " --device");
    return 2;
  }
  if (!a.json_file.empty() && chosen.size() != 1) {
    fmt::print(stderr, "gpuparanoia: --json writes one device's result; {} devices are selected (use --out DIR)\n",
               chosen.size());
    return 2;
  }
  audit::RunSettings settings;
  settings.probes = a.probes;
  settings.suite = a.suite;
  settings.tier = a.quick ? audit::Tier::quick : a.full ? audit::Tier::full : audit::Tier::standard;
  settings.seed = a.seed_set ? a.seed : std::random_device{}();
  const bool tty = isatty(STDERR_FILENO) != 0;
  int errors = 0;
  // Real devices first, the reference backend's virtual ones apart: they audit the model itself.
  std::vector<std::string> summary, reference;
  for (backends::Device* d : chosen) {
    audit::ResultDocument doc(*d, GPUPARANOIA_VERSION_STRING, settings.to_json());
    const std::string slug = audit::slug(d->info().id);
    if (!a.json_file.empty()) doc.write_to(a.json_file);
    if (!a.out_dir.empty()) doc.write_to(std::filesystem::path(a.out_dir) / (slug + ".json"));
    const auto progress = [&](std::string_view probe, std::string_view format, std::size_t i, std::size_t n) {
      if (tty) fmt::print(stderr, "\r\033[K{} [{}/{}] {} {}", d->info().id, i + 1, n, probe, format);
    };
    audit::Tally t = audit::run_scalar_suite(*d, settings, doc, progress);
    const audit::Tally m = audit::run_mma_suite(*d, settings, doc, progress);
    t.ok += m.ok;
    t.unsupported += m.unsupported;
    t.error += m.error;
    doc.finish();
    if (tty) fmt::print(stderr, "\r\033[K");
    const std::string text = audit::text_report(doc.json());
    fmt::print("{}\n", text);
    if (!a.out_dir.empty()) {
      const std::filesystem::path dir(a.out_dir);
      (void)audit::write_atomically(dir / (slug + ".md"), audit::markdown_report(doc.json()));
      (void)audit::write_atomically(dir / (slug + ".txt"), text);
    }
    errors += t.error;
    auto& lines = d->info().backend == "reference" ? reference : summary;
    lines.push_back(fmt::format("{:<40} {:>4} ok {:>4} unsupported {:>4} error", d->info().id, t.ok, t.unsupported,
                                t.error));
    for (const std::string& h : audit::headline_lines(doc.json())) lines.push_back("    " + h);
  }
  fmt::print("Summary (seed {}):\n", settings.seed);
  for (const std::string& s : summary) fmt::print("  {}\n", s);
  if (!reference.empty()) fmt::print("{}", summary.empty() ? "" : "Reference devices (the model):\n");
  for (const std::string& s : reference) fmt::print("  {}\n", s);
  for (const std::string& p : found->problems) fmt::print("  not audited: {}\n", p);
  return errors ? 1 : 0;
}

}  // namespace

void add_audit_commands(CLI::App& app, int& exit_code) {
  auto profile_files = std::make_shared<std::vector<std::string>>();
  CLI::App* devices = app.add_subcommand("devices", "List the devices found and their capabilities");
  devices->add_option("--profile-file", *profile_files, "Add the virtual devices of a JSON profile file");
  devices->callback([profile_files, &exit_code] { exit_code = list_devices(*profile_files); });

  auto a = std::make_shared<RunArgs>();
  CLI::App* run = app.add_subcommand("run", "Audit the devices found (all of them by default)");
  run->add_option("--device", a->devices, "Device id or glob (ref:*, vulkan:0); repeatable");
  run->add_option("--suite", a->suite, "scalar, mma or all")->capture_default_str();
  run->add_option("--probe", a->probes, "Probe id glob (scalar.add.*); repeatable");
  run->add_option("--out", a->out_dir, "Write <device>.json, .md and .txt into this folder");
  run->add_option("--json", a->json_file, "Write the JSON result of the (single) device here");
  run->add_flag("--quick", a->quick, "Fewer random cases");
  run->add_flag("--full", a->full, "Exhaustive where a probe can be");
  run->add_option("--seed", a->seed, "Seed of the random cases")->each([a](const std::string&) { a->seed_set = true; });
  run->add_option("--profile-file", a->profile_files, "Add the virtual devices of a JSON profile file");
  run->callback([a, &exit_code] { exit_code = run_audit(*a); });
}

}  // namespace gp::cli
