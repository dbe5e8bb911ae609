#include "cli/audit_command.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <map>
#include <random>

#include "audit/report/compare.hpp"
#include "audit/report/graphviz.hpp"
#include "audit/report/report.hpp"
#include "audit/runner.hpp"
#include "backends/device.hpp"
#include "backends/reference/reference_backend.hpp"
#include "cli/contained_run.hpp"
#include "cli/exit_codes.hpp"
#include "cli/stop_signal.hpp"
#include "input/input_error.hpp"

namespace gp::cli {

namespace {

namespace fs = std::filesystem;

struct RunArgs {
  std::vector<std::string> devices, probes, configs, profile_files;
  std::string suite = "all", out_dir, json_file, code_dir, shard;
  bool quick = false, full = false;
  std::uint64_t seed = 0;
  bool seed_set = false;
};

}  // namespace

Expected<Found> find_devices(const std::vector<std::string>& profile_files, const std::string& code) {
  Found found;
  backends::BackendOptions options;
  for (const std::string& f : profile_files) options.profile_files.emplace_back(f);
  options.code = code;
  auto backends = backends::all_backends(options);
  if (!backends) return backends.error();
  for (auto& b : *backends) {
    auto devices = b->enumerate();
    if (!devices) {
      // A user profile that does not load is the user's error; a missing driver is a fact.
      if (b->name() == "reference") return devices.error();
      found.unavailable.push_back({b->name(), devices.error().message});
      continue;
    }
    for (auto& d : *devices) found.devices.push_back(std::move(d));
  }
  return found;
}

namespace {

bool is_reference(const backends::Device& d) { return d.info().backend == "reference"; }

// "ref:hopper:HMMA.16816.F32" -> "ref:hopper:*"; "" for the scalar units (ref:<profile>).
std::string instruction_family(std::string_view id) {
  const std::size_t colon = id.find(':', 4);
  return colon == std::string_view::npos ? "" : std::string(id.substr(0, colon + 1)) + "*";
}

// With no --device, every device but the reference backend's 320 instruction devices
// (ref:<arch>:<instruction>), which run when named: they are the model's own instructions.
bool matches(const std::vector<std::string>& selectors, std::string_view id) {
  if (selectors.empty()) return !(id.rfind("ref:", 0) == 0 && !instruction_family(id).empty());
  return std::any_of(selectors.begin(), selectors.end(),
                     [&](const std::string& s) { return audit::glob_match(s, id); });
}

// Every device with its capabilities (devices --all).
void print_detailed(const Found& found) {
  for (const auto& d : found.devices) {
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
  for (const Unavailable& u : found.unavailable) fmt::print("{}: not available: {}\n", u.backend, u.reason);
}

// Like `vulkaninfo --summary`: real devices one line each, backends without devices and why, then
// the reference devices by family, a count each.
void print_summary(const Found& found) {
  std::vector<std::string> units, families;
  std::map<std::string, int> count;
  std::size_t width = std::string_view("ref:<profile>").size();
  for (const auto& d : found.devices) {
    const std::string& id = d->info().id;
    const std::string family = instruction_family(id);
    if (!is_reference(*d))
      width = std::max(width, id.size());
    else if (family.empty())
      units.push_back(id);
    else if (count[family]++ == 0)
      families.push_back(family);
  }
  for (const auto& d : found.devices) {
    if (is_reference(*d)) continue;
    const auto& i = d->info();
    fmt::print("{:<10} {:<{}} {}{}\n", i.backend, i.id, width, i.name, i.driver.empty() ? "" : ", driver " + i.driver);
  }
  for (const Unavailable& u : found.unavailable) fmt::print("{:<10} not available: {}\n", u.backend, u.reason);
  std::string names;
  for (const std::string& u : units) names += (names.empty() ? "" : " ") + u;
  fmt::print("{:<10} {:<{}} {} scalar units: {}\n", "reference", "ref:<profile>", width, units.size(), names);
  for (const std::string& f : families)
    fmt::print("{:<10} {:<{}} {} MMA instructions\n", "reference", f, width, count[f]);
}

void print_json(const Found& found) {
  nlohmann::json doc = {{"devices", nlohmann::json::array()}, {"unavailable", nlohmann::json::array()}};
  for (const auto& d : found.devices) doc["devices"].push_back(audit::to_json(d->info(), d->caps()));
  for (const Unavailable& u : found.unavailable)
    doc["unavailable"].push_back({{"backend", u.backend}, {"reason", u.reason}});
  fmt::print("{}", audit::dump(doc));
}

enum class Listing { summary, all, json };

int list_devices(const std::vector<std::string>& profile_files, Listing listing) {
  auto found = find_devices(profile_files);
  if (!found) {
    fmt::print(stderr, "{}", input::error_line(found.error().message));
    return kExitBadInput;
  }
  switch (listing) {
    case Listing::summary: print_summary(*found); break;
    case Listing::all: print_detailed(*found); break;
    case Listing::json: print_json(*found); break;
  }
  return kExitOk;
}

// Claims <slug>.json, .md and .txt in dir exclusively, or <slug>-2.*, <slug>-3.*, ... where a
// name is taken (an earlier run, a concurrent one, two devices of one slug): the stem used.
Expected<std::string> claim_outputs(const fs::path& dir, const std::string& slug) {
  for (int n = 1; n <= 1000; ++n) {
    const std::string stem = n == 1 ? slug : fmt::format("{}-{}", slug, n);
    std::vector<fs::path> claimed;
    for (const char* ext : {".json", ".md", ".txt"}) {
      const fs::path p = dir / (stem + ext);
      auto claim = audit::claim_file(p);
      if (!claim) {
        for (const fs::path& c : claimed) fs::remove(c);
        return claim.error();
      }
      if (!*claim) break;
      claimed.push_back(p);
    }
    if (claimed.size() == 3) return stem;
    for (const fs::path& c : claimed) fs::remove(c);
  }
  return Error{fmt::format("cannot write into {}: {}.json to {}-1000.json are taken", dir.string(), slug, slug),
               ErrorKind::io};
}

// --out DIR and --code DIR exist or are created; --json FILE's folder exists.
Expected<bool> check_output_folders(const RunArgs& a) {
  std::error_code ec;
  for (const std::string& dir : {a.out_dir, a.code_dir}) {
    if (dir.empty()) continue;
    fs::create_directories(dir, ec);
    if (ec || !fs::is_directory(dir))
      return Error{fmt::format("cannot write into {}: {}", dir, ec ? ec.message() : "not a folder"), ErrorKind::io};
  }
  if (!a.json_file.empty()) {
    const fs::path parent = fs::path(a.json_file).parent_path();
    if (!parent.empty() && !fs::is_directory(parent, ec))
      return Error{fmt::format("cannot write {}: {} is not a folder", a.json_file, parent.string()), ErrorKind::io};
  }
  return true;
}

// The whole command line, checked before any work: an error names the argument at fault.
Expected<std::vector<backends::Device*>> choose_devices(const RunArgs& a, const Found& found) {
  const std::vector<std::string_view> ids = audit::finding_ids();
  for (const std::string& g : a.probes)
    if (std::none_of(ids.begin(), ids.end(), [&](std::string_view id) { return audit::glob_match(g, id); }))
      return Error{fmt::format("--probe '{}' matches no probe (ids such as {}, {})", g, ids.front(), ids.back()),
                   ErrorKind::invalid};
  auto selected = selected_devices(a.devices, found);
  if (!selected) return selected.error();
  const std::vector<backends::Device*>& chosen = *selected;
  if (chosen.empty()) return Error{"no device found", ErrorKind::unsupported};
  for (const std::string& g : a.configs)
    if (std::none_of(chosen.begin(), chosen.end(), [&](const backends::Device* d) {
          return std::any_of(d->caps().mma.begin(), d->caps().mma.end(),
                             [&](const backends::MmaConfig& c) { return audit::config_matches(g, c); });
        }))
      return Error{fmt::format("--config '{}' matches no MMA configuration of the devices selected", g),
                   ErrorKind::invalid};
  if (!a.json_file.empty() && chosen.size() != 1)
    return Error{
        fmt::format("--json writes one device's result; {} devices are selected (use --out DIR)", chosen.size()),
        ErrorKind::invalid};
  return chosen;
}

// One device's outputs, each written before its first probe: --json FILE, and under --out DIR the
// claimed <stem>.json. Returns the stem (folder and name, no extension) of its .json, .md and .txt
// under --out, "" without; failures go to `failed`.
std::string open_outputs(const RunArgs& a, const backends::Device& d, audit::ResultDocument& doc,
                         const std::function<void(const Error&)>& failed) {
  std::string out_stem;
  std::vector<fs::path> targets;
  if (!a.json_file.empty()) targets.emplace_back(a.json_file);
  if (!a.out_dir.empty()) {
    const std::string slug = audit::slug(d.info().id);
    if (auto stem = claim_outputs(a.out_dir, slug); !stem) {
      failed(stem.error());
    } else {
      out_stem = (fs::path(a.out_dir) / *stem).string();
      if (*stem != slug)
        fmt::print(stderr, "gpuparanoia: {} is taken: writing {}.json, .md and .txt\n",
                   (fs::path(a.out_dir) / (slug + ".json")).string(), out_stem);
      targets.emplace_back(out_stem + ".json");
    }
  }
  for (const fs::path& target : targets)
    if (auto ok = doc.write_to(target); !ok) failed(ok.error());
  return out_stem;
}

audit::RunSettings audit_settings(const RunArgs& a) {
  audit::RunSettings settings;
  settings.probes = a.probes;
  settings.configs = a.configs;
  settings.suite = a.suite;
  settings.tier = a.quick ? audit::Tier::quick : a.full ? audit::Tier::full : audit::Tier::standard;
  settings.seed = a.seed_set ? a.seed : std::random_device{}();
  settings.stop = [] { return stop_signal() != 0; };
  if (!a.shard.empty()) settings.shard = *audit::Shard::parse(a.shard);  // checked by the option
  return settings;
}

// One device's run into doc, its progress shown on a terminal; doc finished, or interrupted by a
// stop signal.
audit::Tally audit_one_device(const RunArgs& a, const audit::RunSettings& settings, backends::Device& d,
                              audit::ResultDocument& doc, bool tty) {
  const auto progress = [&](std::string_view probe, std::string_view format, std::size_t i, std::size_t n) {
    if (tty) fmt::print(stderr, "\r\033[K{} [{}/{}] {} {}", d.info().id, i + 1, n, probe, format);
  };
  // A real device runs in a child process, so that a driver crash ends only the probe it hit.
  audit::Tally t;
  if (is_reference(d)) {
    t = audit::run_scalar_suite(d, settings, doc, progress);
    const audit::Tally m = audit::run_mma_suite(d, settings, doc, progress);
    t.ok += m.ok;
    t.unsupported += m.unsupported;
    t.error += m.error;
  } else {
    t = run_contained({d.info().id, d.info().backend, settings, a.profile_files, a.code_dir}, doc, progress);
  }
  if (stop_signal())
    doc.interrupt(signal_name(stop_signal()));
  else
    doc.finish();
  if (tty) fmt::print(stderr, "\r\033[K");
  return t;
}

// A device's text and Markdown reports, and for a variant the summary's line on what it changed.
struct DeviceReports {
  std::string text, markdown, against;
};

// `bases`: the real devices' results so far, for their variants' account of what the float mode
// changed; a real device's own result is added. A variant (vulkan:0+rte) is its device's unit
// compiled in another float mode: what differs from the device's own run is the compiler's, said in
// its reports and the summary.
DeviceReports device_reports(const backends::Device& d, const audit::ResultDocument& doc,
                             std::map<std::string, nlohmann::json, std::less<>>& bases,
                             const audit::TreeDrawings* drawings) {
  const std::string& id = d.info().id;
  const std::size_t plus = id.find('+');
  DeviceReports r{audit::text_report(doc.json()), audit::markdown_report(doc.json(), drawings), ""};
  if (plus == std::string::npos) {
    if (!is_reference(d)) bases[id] = doc.json();
  } else if (const auto base = bases.find(std::string_view(id).substr(0, plus)); base != bases.end()) {
    const auto changed = audit::changed_findings(base->second, doc.json());
    r.text += "\n" + audit::variant_text(base->first, id.substr(plus), changed, false);
    r.markdown += "\n" + audit::variant_text(base->first, id.substr(plus), changed, true);
    r.against = changed.empty()
                    ? fmt::format("{} changes no finding of {}", id.substr(plus), base->first)
                    : fmt::format("{} changes {} finding{} of {}: the compiler's float mode", id.substr(plus),
                                  changed.size(), changed.size() == 1 ? "" : "s", base->first);
  }
  return r;
}

// The result's summation trees beside its reports (<stem>-tree1.dot ...), each as DOT and, where
// Graphviz is installed, as SVG: a drawing that fails is a note in the Markdown, never the run's end.
template <class OnWriteError>
audit::TreeDrawings draw_trees(const nlohmann::json& doc, const std::string& out_stem,
                               const OnWriteError& write_error) {
  audit::TreeDrawings drawn{fs::path(out_stem).filename().string(), {}};
  const std::vector<model::SummationTree> trees = audit::result_trees(doc);
  for (std::size_t i = 0; i < trees.size(); ++i) {
    const std::string file = fmt::format("{}-tree{}", out_stem, i + 1);
    if (auto ok = audit::write_atomically(file + ".dot", trees[i].dot()); !ok) {
      write_error(ok.error());
      drawn.notes.push_back("the DOT file could not be written");
      continue;
    }
    drawn.notes.push_back(audit::draw_svg(file + ".dot", file + ".svg"));
  }
  return drawn;
}

// The summary's lines of one device: its tally, its headlines, what a variant changed.
void add_summary_lines(std::vector<std::string>& lines, const backends::Device& d, const audit::Tally& t,
                       const audit::ResultDocument& doc, const std::string& against) {
  lines.push_back(
      fmt::format("{:<40} {:>4} ok {:>4} unsupported {:>4} error", d.info().id, t.ok, t.unsupported, t.error));
  for (const std::string& h : audit::headline_lines(doc.json())) lines.push_back("    " + h);
  if (!against.empty()) lines.push_back("    " + against);
}

// The run's summary, and its exit code.
int finish_audit(std::uint64_t seed, const std::vector<std::string>& summary, const std::vector<std::string>& reference,
                 const std::vector<Unavailable>& unavailable, bool write_failed, int errors) {
  fmt::print("Summary (seed {}):\n", seed);
  for (const std::string& s : summary) fmt::print("  {}\n", s);
  if (!reference.empty()) fmt::print("{}", summary.empty() ? "" : "Reference devices (the model):\n");
  for (const std::string& s : reference) fmt::print("  {}\n", s);
  for (const Unavailable& u : unavailable) fmt::print("  not audited: {}: {}\n", u.backend, u.reason);
  if (stop_signal()) {
    fmt::print(stderr, "gpuparanoia: stopped by {}; the results hold what was done (\"complete\": false)\n",
               signal_name(stop_signal()));
    return kExitSignalBase + stop_signal();
  }
  return write_failed ? kExitWriteFailed : errors ? kExitDifferences : kExitOk;
}

int run_audit(const RunArgs& a) {
  auto found = find_devices(a.profile_files, a.code_dir);
  if (!found) {
    fmt::print(stderr, "{}", input::error_line(found.error().message));
    return kExitBadInput;
  }
  const auto chosen = choose_devices(a, *found);
  if (!chosen) {
    fmt::print(stderr, "{}", input::error_line(chosen.error().message));
    return kExitUsage;
  }
  if (auto ok = check_output_folders(a); !ok) {
    fmt::print(stderr, "{}", input::error_line(ok.error().message));
    return kExitWriteFailed;
  }
  const audit::RunSettings settings = audit_settings(a);
  catch_stop_signals();
  const bool tty = isatty(STDERR_FILENO) != 0;
  int errors = 0;
  bool write_failed = false;
  const auto write_error = [&](const Error& e) {
    fmt::print(stderr, "{}", input::error_line(e.message));
    write_failed = true;
  };
  // Real devices first, the reference backend's virtual ones apart: they audit the model itself.
  std::vector<std::string> summary, reference;
  // Real devices' results, for their variants' account of what the float mode changed.
  std::map<std::string, nlohmann::json, std::less<>> bases;
  for (backends::Device* d : *chosen) {
    audit::ResultDocument doc(*d, GPUPARANOIA_VERSION_STRING, settings.to_json());
    const bool first = d == chosen->front();
    // A run that cannot write its first device's results refuses to start, leaving nothing behind;
    // a later device's failure is remembered, and the run goes on.
    const std::string out_stem = open_outputs(a, *d, doc, write_error);
    if (write_failed && first) {
      for (const char* ext : {".json", ".md", ".txt"})
        if (!out_stem.empty()) fs::remove(out_stem + ext);
      return kExitWriteFailed;
    }
    const audit::Tally t = audit_one_device(a, settings, *d, doc, tty);
    if (doc.write_error()) write_error(*doc.write_error());
    const audit::TreeDrawings drawings =
        out_stem.empty() ? audit::TreeDrawings{} : draw_trees(doc.json(), out_stem, write_error);
    const DeviceReports r = device_reports(*d, doc, bases, out_stem.empty() ? nullptr : &drawings);
    fmt::print("{}\n", r.text);
    if (!out_stem.empty()) {
      for (const auto& [ext, content] : {std::pair{".md", r.markdown}, std::pair{".txt", r.text}})
        if (auto ok = audit::write_atomically(out_stem + ext, content); !ok) write_error(ok.error());
    }
    errors += t.error;
    add_summary_lines(is_reference(*d) ? reference : summary, *d, t, doc, r.against);
    if (stop_signal()) break;
  }
  return finish_audit(settings.seed, summary, reference, found->unavailable, write_failed, errors);
}

}  // namespace

Expected<std::vector<backends::Device*>> selected_devices(const std::vector<std::string>& selectors,
                                                          const Found& found) {
  for (const std::string& s : selectors)
    if (std::none_of(found.devices.begin(), found.devices.end(),
                     [&](const auto& d) { return audit::glob_match(s, d->info().id); }))
      return Error{fmt::format("--device '{}' matches no device (gpuparanoia devices lists them)", s),
                   ErrorKind::invalid};
  std::vector<backends::Device*> chosen;
  for (const auto& d : found.devices)
    if (matches(selectors, d->info().id)) chosen.push_back(d.get());
  return chosen;
}

CLI::Validator shard_check() {
  return CLI::Validator(
      [](std::string& s) {
        return audit::Shard::parse(s) ? std::string() : std::string("must be I/N with 0 <= I < N");
      },
      "I/N");
}

void add_audit_commands(CLI::App& app, int& exit_code) {
  auto profile_files = std::make_shared<std::vector<std::string>>();
  auto listing = std::make_shared<Listing>(Listing::summary);
  CLI::App* devices =
      app.add_subcommand("devices", "List the devices found: real ones one a line, the reference devices by family");
  devices->add_option("--profile-file", *profile_files,
                      "Add the virtual devices of a profile file or result JSON (ref:<file stem>)");
  CLI::Option* all = devices->add_flag_callback(
      "--all", [listing] { *listing = Listing::all; }, "Every device with its capabilities");
  devices
      ->add_flag_callback(
          "--json", [listing] { *listing = Listing::json; }, "Every device, as JSON for scripts")
      ->excludes(all);
  devices->callback([profile_files, listing, &exit_code] { exit_code = list_devices(*profile_files, *listing); });

  auto a = std::make_shared<RunArgs>();
  CLI::App* run = app.add_subcommand("run", "Audit the devices found (all of them by default)");
  run->add_option("--device", a->devices, "Device id or glob (ref:*, vulkan:0); repeatable");
  run->add_option("--suite", a->suite, "scalar, mma or all")
      ->capture_default_str()
      ->check(CLI::IsMember({"scalar", "mma", "all"}));
  run->add_option("--probe", a->probes, "Probe id glob (scalar.add.*); repeatable");
  run->add_option("--config", a->configs,
                  "MMA configuration glob, on its name or instruction (*:binary16,*, hopper:HGMMA.*); repeatable");
  run->add_option("--out", a->out_dir,
                  "Write <device>.json, .md and .txt into this folder (<device>-2.* where a name is taken)");
  run->add_option("--json", a->json_file, "Write the JSON result of the (single) device here");
  run->add_option("--code", a->code_dir,
                  "Keep the compiled code of each kernel (SPIR-V, driver binaries, CUBIN) in this folder, one "
                  "folder per device, where the driver gives it");
  CLI::Option* quick = run->add_flag("--quick", a->quick, "Fewer random cases");
  run->add_flag("--full", a->full, "Exhaustive where a probe can be")->excludes(quick);
  CLI::Option* seed = run->add_option("--seed", a->seed, "Seed of the random cases")->each([a](const std::string&) {
    a->seed_set = true;
  });
  run->add_option("--shard", a->shard,
                  "I/N: this job's share of a campaign's random validation (0 <= I < N), the same --seed in every "
                  "shard; `merge` combines the shards' results")
      ->check(shard_check())
      ->needs(seed);
  run->add_option("--profile-file", a->profile_files,
                  "Add the virtual devices of a profile file or result JSON (ref:<file stem>)");
  run->callback([a, &exit_code] { exit_code = run_audit(*a); });
}

}  // namespace gp::cli
