#include "audit/runner.hpp"

#include "audit/json_access.hpp"
#include "audit/validation.hpp"
#include "backends/api_accuracy.hpp"
#include "tests_mma/identify/identify.hpp"
#include "tests_mma/layout.hpp"
#include "tests_mma/suite.hpp"
#include "tests_scalar/compiler.hpp"
#include "tests_scalar/suite.hpp"

#include <fmt/format.h>

#include <chrono>
#include <exception>
#include <string>

namespace gp::audit {

nlohmann::json RunSettings::to_json() const {
  nlohmann::json j = {{"probes", probes},
                      {"configs", configs},
                      {"suite", suite},
                      {"tier", tier == Tier::quick      ? "quick"
                               : tier == Tier::standard ? "standard"
                                                        : "full"},
                      {"seed", seed}};
  if (shard.on()) j["shard"] = {{"index", shard.index}, {"count", shard.count}};
  return j;
}

RunSettings RunSettings::from_json(const nlohmann::json& j) {
  RunSettings s;
  s.probes = j.at("probes").get<std::vector<std::string>>();
  s.configs = j.at("configs").get<std::vector<std::string>>();
  s.suite = j.at("suite").get<std::string>();
  const std::string tier = j.at("tier").get<std::string>();
  s.tier = tier == "quick" ? Tier::quick : tier == "full" ? Tier::full : Tier::standard;
  s.seed = j.at("seed").get<std::uint64_t>();
  if (j.contains("shard"))
    s.shard = {j["shard"].at("index").get<std::uint64_t>(), j["shard"].at("count").get<std::uint64_t>()};
  return s;
}

void Tally::add(Status s) { (s == Status::ok ? ok : s == Status::unsupported ? unsupported : error) += 1; }

std::vector<std::string_view> finding_ids() {
  std::vector<std::string_view> ids;
  for (const ScalarProbe* p : scalar::canaries()) ids.push_back(p->id());
  for (const ScalarProbe* p : scalar::probes()) ids.push_back(p->id());
  ids.push_back(mma::LayoutCheck().id());
  for (const MmaProbe* p : mma::probes()) ids.push_back(p->id());
  ids.insert(ids.end(), {kProfileValidation, kMmaIdentify, kMmaConfigurations, kDeviceRun});
  return ids;
}

Finding finding_of(std::string_view id) {
  Finding f;
  f.probe = id;
  for (const auto list : {scalar::canaries(), scalar::probes()})
    for (const ScalarProbe* p : list)
      if (p->id() == id) f.title = p->title(), f.source = p->source();
  if (const MmaProbe* p = mma::probe(id)) f.title = p->title(), f.source = p->source();
  if (id == mma::LayoutCheck().id()) f.title = mma::LayoutCheck().title(), f.source = mma::LayoutCheck().source();
  if (id == kMmaIdentify) f.title = mma::kIdentifyTitle;
  if (id == kProfileValidation) f.title = kValidationTitle;
  if (id == kDeviceRun) f.title = "The device's run";
  return f;
}

namespace {

bool selected(const RunSettings& s, std::string_view id) {
  if (s.probes.empty()) return true;
  for (const std::string& g : s.probes)
    if (glob_match(g, id)) return true;
  return false;
}

}  // namespace

namespace {

std::string_view target_name(const model::Format& f) { return f.name; }
std::string target_name(const backends::MmaConfig& c) { return c.name(); }

// What a source published for this probe on this device, if anything.
void add_published(const backends::Device& device, Finding& f, std::string_view target) {
  const auto& published = device.info().published;
  if (const auto it = published.find(fmt::format("{} {}", f.probe, target)); it != published.end())
    f.published = it->second;
}

// Runs one probe, turning an exception into an `error` finding, and stamps id, target and time.
template <class Probe, class Target>
Finding run_one(const Probe& probe, backends::Device& device, const Target& target, const ProbeContext& ctx) {
  const auto start = std::chrono::steady_clock::now();
  Finding f;
  try {
    f = probe.run(device, target, ctx);
  } catch (const std::exception& e) {
    f = failed(std::string("the probe stopped: ") + e.what());
  }
  f.probe = probe.id();
  if (f.title.empty()) f.title = probe.title();
  if (f.source.empty()) f.source = probe.source();
  f.duration_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  add_published(device, f, target_name(target));
  return f;
}

// The device as a probe sees it, noting the first expression whose compiled code the canaries
// found altered.
class Witness final : public backends::Device {
 public:
  Witness(backends::Device& inner, const scalar::CompiledCode& compiled) : inner_(&inner), compiled_(&compiled) {}
  const backends::DeviceInfo& info() const override { return inner_->info(); }
  const backends::Capabilities& caps() const override { return inner_->caps(); }
  Expected<std::vector<std::uint64_t>> scalar(const backends::ScalarBatch& b) override {
    if (altered_.empty() && b.expr) altered_ = compiled_->altered(*b.expr);
    return inner_->scalar(b);
  }
  Expected<std::vector<std::uint64_t>> mma(const backends::MmaBatch& b) override { return inner_->mma(b); }
  const std::string& altered() const { return altered_; }

 private:
  backends::Device* inner_;
  const scalar::CompiledCode* compiled_;
  std::string altered_;
};

// A finding whose expressions the compiler altered: its outputs are the compiled code's, so it
// states nothing of the unit (no profile), keeps what it measured, and says why.
void explained_by_compiler(Finding& f, const std::string& why) {
  if (f.status != Status::ok) return;
  f.parameters = {{"conclusion", "inconclusive"}, {"as_measured", f.verdict}};
  f.verdict = "inconclusive: " + why;
  f.profile = {};
  f.judgement.reset();
}

// The scalar suite's profiles as its findings state them, typed, and what the register probes read:
// a resumed run's held ones read back from its document first.
struct ScalarAssembly {
  backends::ScalarProfiles profiles;
  std::map<std::string, RegisterReading> registers;

  // Adds a finding to the document, the profile it states first.
  void add(ResultDocument& doc, const Finding& f) {
    if (!f.format.empty()) {
      scalar::read_registers(f, registers[f.format]);
      if (f.status == Status::ok && !f.profile.empty()) {
        backends::merge(profiles[f.format], f.profile);
        doc.set_scalar_profile(f.format, profiles[f.format]);
      }
    }
    doc.add(f);
  }
};

}  // namespace

Tally run_scalar_suite(backends::Device& device, const RunSettings& settings, ResultDocument& doc,
                       const ProgressFn& progress) {
  Tally tally;
  if (settings.suite == "mma") return tally;
  struct Job {
    const ScalarProbe* probe;
    const model::Format* format;
  };
  std::vector<Job> jobs;
  for (const model::Format* f : device.caps().formats)
    for (const ScalarProbe* p : scalar::probes())
      if (selected(settings, p->id()) && p->applies(*f) && !doc.holds(p->id(), f->name)) jobs.push_back({p, f});
  ProbeContext ctx{settings.tier, settings.seed};
  ctx.shard = settings.shard;
  ScalarAssembly assembly;
  if (auto held = doc.scalar_profiles()) {
    assembly.profiles = std::move(*held);
  } else {
    Finding unread = failed("the resumed document's profile cannot be read: " + held.error().message);
    unread.probe = kProfileValidation;
    tally.add(unread.status);
    doc.add(unread);
  }
  for (const nlohmann::json& held : doc.json()["findings"])
    if (const nlohmann::json& format = member(held, "format"); format.is_string())
      scalar::read_registers(held, assembly.registers[format.get<std::string>()]);
  // The canaries first, on every format, whatever the probes selected (reported where selected):
  // what they find the compiler alters, a probe's finding says instead of describing the unit. One
  // held by the document (a resumed run) is not run again.
  scalar::CompiledCode compiled;
  for (const model::Format* f : device.caps().formats)
    for (const ScalarProbe* canary : scalar::canaries()) {
      if (!canary->applies(*f) || settings.stopped()) continue;
      if (const nlohmann::json* held = doc.held(canary->id(), f->name)) {
        compiled.learn(*held);
        continue;
      }
      if (progress) progress(canary->id(), f->name, 0, jobs.size());
      Finding c = run_one(*canary, device, *f, ctx);
      c.format = f->name;
      compiled.learn(to_json(c));
      if (!selected(settings, canary->id())) continue;
      tally.add(c.status);
      assembly.add(doc, c);
    }
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    if (settings.stopped()) break;  // the profile of what was done is still assembled
    const auto [probe, format] = jobs[i];
    if (progress) progress(probe->id(), format->name, i, jobs.size());
    Witness witness(device, compiled);
    Finding f = run_one(*probe, compiled.empty() ? device : witness, *format, ctx);
    f.format = format->name;
    if (!witness.altered().empty()) explained_by_compiler(f, witness.altered());
    // A driver's x / y and sqrt are what its compiler made of them, within what its API allows.
    const std::string_view id = probe->id();
    if (f.status == Status::ok && f.message.empty() &&
        (id.starts_with("scalar.div.") || id.starts_with("scalar.sqrt.")))
      f.message = backends::compiled_operation_note(device.info(), device.caps(), *format,
                                                    id.starts_with("scalar.div.") ? model::Op::div : model::Op::sqrt);
    tally.add(f.status);
    assembly.add(doc, f);
  }
  // Each format's inferred profile, assembled and normalised (a partial run's too: a result is read
  // back as a profile file), then validated on random inputs.
  backends::ScalarProfiles& profiles = assembly.profiles;
  assemble_register_profiles(profiles, assembly.registers, device.caps().formats);
  for (auto& [format, p] : profiles) {
    normalise_scalar_profile(p);
    doc.set_scalar_profile(format, p);
  }
  if (!settings.probes.empty()) return tally;  // a partial run infers a partial profile: nothing to validate
  for (const model::Format* f : device.caps().formats) {
    if (settings.stopped()) return tally;
    if (doc.holds(kProfileValidation, f->name)) continue;
    backends::ScalarProfile& p = profiles[std::string(f->name)];
    if (progress) progress(kProfileValidation, f->name, jobs.size(), jobs.size() + 1);
    Finding v;
    try {
      v = validate_scalar_profile(device, *f, p, ctx);
    } catch (const std::exception& e) {
      v = failed(std::string("the validation stopped: ") + e.what());
      v.probe = kProfileValidation;
      v.format = f->name;
    }
    doc.set_scalar_profile(std::string(f->name), p);
    tally.add(v.status);
    doc.add(v);
  }
  return tally;
}

namespace {

// One MMA configuration's run: what its steps share.
struct ConfigRun {
  backends::Device& device;
  const RunSettings& settings;
  ResultDocument& doc;
  const ProgressFn& progress;
  const ProbeContext& ctx;
  const backends::MmaConfig& config;
  std::size_t index, count;  // the configuration's place among the device's, for the progress line
  Tally& tally;
  std::vector<mma::ProbeReading> readings = {};
  std::vector<std::size_t> slots = {};  // where each reading's finding sits in the document

  void at(std::string_view id) const {
    if (progress) progress(id, config.name(), index, count);
  }
  void add(const Finding& f) {
    tally.add(f.status);
    doc.add(f);
  }
};

// The layout check gates the configuration, whatever the probes selected: tiles that may not be
// where the unit reads them give no arithmetic verdict, only its error.
Finding check_layout(ConfigRun& r) {
  static const mma::LayoutCheck layout_check;
  r.at(layout_check.id());
  Finding layout = run_one(layout_check, r.device, r.config, r.ctx);
  layout.config = r.config.name();
  if (selected(r.settings, layout_check.id())) r.add(layout);
  return layout;
}

// The finding `id` would have given, replaced by the layout check's error.
void add_gated(ConfigRun& r, const Finding& layout, std::string_view id) {
  Finding f = finding_of(id);
  f.status = Status::error;
  f.verdict = "error: " + layout.message;
  f.message = layout.message;
  f.config = r.config.name();
  r.add(f);
}

// Runs the selected probes that apply. A probe's verdict follows from the candidate models the
// identification leaves: until then the document says so, and an interrupted run never shows an
// unjudged reading. False when the run was stopped.
bool run_probes(ConfigRun& r, const Finding& layout) {
  const bool misplaced = layout.status == Status::error;
  for (const MmaProbe* p : mma::probes()) {
    if (r.settings.stopped()) return false;
    if (!selected(r.settings, p->id()) || !p->applies(r.config)) continue;
    if (misplaced) {
      add_gated(r, layout, p->id());
      continue;
    }
    r.at(p->id());
    Finding f = run_one(*p, r.device, r.config, r.ctx);
    f.config = r.config.name();
    r.tally.add(f.status);
    Finding pending = f;
    if (pending.status == Status::ok) {
      pending.verdict =
          std::string(kPending) + " decided from the candidate models once the configuration is identified";
      pending.parameters = nlohmann::json::object();
    }
    r.slots.push_back(r.doc.findings());
    r.doc.add(pending);
    r.readings.push_back({p, std::move(f)});
  }
  return true;
}

// The identification judges the probes' findings, which replace their pending ones; its own
// finding and the model it states are added where selected (`report`).
void identify_configuration(ConfigRun& r, bool report) {
  r.at(kMmaIdentify);
  const auto start = std::chrono::steady_clock::now();
  mma::Identification identified;
  try {
    identified = mma::identify_mma(r.device, r.config, r.readings, r.ctx);
  } catch (const std::exception& e) {
    identified = {failed(std::string("the identification stopped: ") + e.what()), std::nullopt, {}};
  }
  Finding& id = identified.finding;
  // Every MMA probe asks a question of the model (MmaProbe::question, checked by mma_suite_test):
  // a finding the identification did not judge (it ended early: a device error, an unusable
  // configuration) keeps no reading of its own, which would follow from no model.
  for (std::size_t i = 0; i < r.readings.size(); ++i) {
    const Finding& x = r.readings[i].finding;
    nlohmann::json f = to_json(x);
    if (x.status == Status::ok && !x.judgement) unjudged(f, id.message.empty() ? id.verdict : id.message);
    r.doc.replace(r.slots[i], std::move(f));
  }
  if (!report) return;
  id.probe = kMmaIdentify;
  id.config = r.config.name();
  id.duration_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  add_published(r.device, id, id.config);
  r.tally.add(id.status);
  if (identified.model)
    r.doc.profile()["mma"].push_back(backends::mma_entry_json(r.config, &*identified.model, &identified.validation));
  r.doc.add(id);
}

// One configuration: the layout check, the probes, the identification. False when the run was
// stopped.
bool run_configuration(ConfigRun& r) {
  if (r.settings.stopped()) return false;
  const Finding layout = check_layout(r);
  if (!run_probes(r, layout)) return false;
  const bool report = selected(r.settings, kMmaIdentify);
  if (layout.status == Status::error) {
    if (report) add_gated(r, layout, kMmaIdentify);
    return true;
  }
  if ((!report && r.readings.empty()) || r.settings.stopped()) return true;
  identify_configuration(r, report);
  return true;
}

}  // namespace

Tally run_mma_suite(backends::Device& device, const RunSettings& settings, ResultDocument& doc,
                    const ProgressFn& progress) {
  Tally tally;
  if (settings.suite == "scalar" || settings.stopped()) return tally;
  ProbeContext ctx{settings.tier, settings.seed, settings.mma_validation_tiles};
  ctx.shard = settings.shard;
  const auto& configs = device.caps().mma;
  // Configurations the device has that the backend cannot run (all of them, or some: a CUDA
  // compiler without the architecture) are a finding of their own.
  if (!device.caps().mma_unsupported.empty() && selected(settings, kMmaConfigurations) &&
      !doc.holds(kMmaConfigurations, "")) {
    Finding f = unsupported(device.caps().mma_unsupported);
    f.probe = kMmaConfigurations;
    f.title = "Cooperative matrices";
    tally.add(f.status);
    doc.add(f);
  }
  for (std::size_t c = 0; c < configs.size(); ++c) {
    const backends::MmaConfig& config = configs[c];
    if (!selected_config(settings, config) || doc.holds("", config.name())) continue;  // not asked, or done
    ConfigRun run{device, settings, doc, progress, ctx, config, c, configs.size(), tally};
    if (!run_configuration(run)) return tally;
  }
  return tally;
}

void unjudged(nlohmann::json& finding, std::string_view why) {
  finding["verdict"] = fmt::format("inconclusive: no candidate model was judged, the identification ended{}{}",
                                   why.empty() ? "" : ": ", why);
  finding["parameters"] = {{"conclusion", "inconclusive"}, {"candidates", nlohmann::json::array()}, {"survivors", 0}};
}

void end_configuration(ResultDocument& doc, std::string_view config, std::string_view why) {
  for (std::size_t i = 0; i < doc.findings(); ++i) {
    nlohmann::json f = doc.json()["findings"][i];
    if (f.value("config", "") != config || f.value("status", "") != "ok" ||
        !f.value("verdict", "").starts_with(kPending))
      continue;
    unjudged(f, why);
    doc.replace(i, std::move(f));
  }
}

bool config_matches(std::string_view glob, const backends::MmaConfig& config) {
  return glob_match(glob, config.name()) || (!config.instruction.empty() && glob_match(glob, config.instruction));
}

bool selected_config(const RunSettings& settings, const backends::MmaConfig& config) {
  return settings.configs.empty() || std::any_of(settings.configs.begin(), settings.configs.end(),
                                                 [&](const std::string& g) { return config_matches(g, config); });
}

bool glob_match(std::string_view p, std::string_view t) {
  // Iterative wildcard matching with backtracking to the last '*'.
  std::size_t pi = 0, ti = 0, star = std::string_view::npos, mark = 0;
  while (ti < t.size()) {
    if (pi < p.size() && (p[pi] == '?' || p[pi] == t[ti])) {
      ++pi;
      ++ti;
    } else if (pi < p.size() && p[pi] == '*') {
      star = pi++;
      mark = ti;
    } else if (star != std::string_view::npos) {
      pi = star + 1;
      ti = ++mark;
    } else {
      return false;
    }
  }
  while (pi < p.size() && p[pi] == '*') ++pi;
  return pi == p.size();
}

}  // namespace gp::audit
