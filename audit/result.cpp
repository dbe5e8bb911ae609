#include "audit/result.hpp"

#include "audit/host_cpu.hpp"

#include <fmt/chrono.h>
#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <span>

namespace gp::audit {

using nlohmann::json;

std::string_view name(Status s) {
  switch (s) {
    case Status::ok: return "ok";
    case Status::unsupported: return "unsupported";
    case Status::error: return "error";
  }
  return "error";
}

Finding unsupported(std::string why) {
  Finding f;
  f.status = Status::unsupported;
  f.message = std::move(why);
  return f;
}

Finding failed(std::string why) {
  Finding f;
  f.status = Status::error;
  f.message = std::move(why);
  return f;
}

namespace {
std::string hex(std::uint64_t v, int bits) { return fmt::format("{:0{}x}", v, (bits + 3) / 4); }
}  // namespace

// Observations kept per finding in the document: enough to justify a verdict and to replay it;
// a K = 64 configuration's probes make hundreds of 130-operand cases (megabytes of hex).
constexpr std::size_t max_observations = 48, max_predictions = 16;

json to_json(const Finding& f) {
  json obs = json::array();
  for (const Observation& o : std::span(f.observations).first(std::min(f.observations.size(), max_observations))) {
    json inputs = json::array();
    for (std::uint64_t x : o.inputs) inputs.push_back(hex(x, o.input_bits));
    // The hypotheses that the case refutes and those it leaves standing, up to max_predictions/2 of
    // each: an adder probe weighs thousands of hypotheses on every case.
    json predictions = json::object();
    std::size_t refuted = 0, standing = 0;
    for (const auto& [hypothesis, value] : o.predictions)
      if ((value == o.output ? standing : refuted)++ < max_predictions / 2) predictions[hypothesis] = hex(value, o.output_bits);
    json item = {{"inputs", inputs}, {"output", hex(o.output, o.output_bits)}, {"predictions", predictions}};
    if (predictions.size() < o.predictions.size()) item["predictions_omitted"] = o.predictions.size() - predictions.size();
    if (!o.note.empty()) item["note"] = o.note;
    obs.push_back(std::move(item));
  }
  json j = {{"probe", f.probe},   {"format", f.format},   {"config", f.config},         {"title", f.title},
            {"source", f.source}, {"status", name(f.status)}, {"verdict", f.verdict},     {"parameters", f.parameters},
            {"message", f.message}, {"duration_s", f.duration_s}, {"observations", obs}};
  if (!f.published.empty()) j["published"] = f.published;
  if (f.observations.size() > max_observations) j["observations_omitted"] = f.observations.size() - max_observations;
  return j;
}

json to_json(const backends::DeviceInfo& info, const backends::Capabilities& caps) {
  json formats = json::array(), mma = json::array();
  for (const model::Format* f : caps.formats) formats.push_back(f->name);
  for (const backends::MmaConfig& c : caps.mma) {
    json item = {{"config", c.name()}, {"scope", c.scope}};
    if (!c.instruction.empty()) item["instruction"] = c.instruction;
    mma.push_back(item);
  }
  return {{"id", info.id},
          {"backend", info.backend},
          {"name", info.name},
          {"vendor", info.vendor},
          {"driver", info.driver},
          {"api", info.api},
          {"description", info.description},
          {"capabilities", {{"formats", formats}, {"float_controls", caps.float_controls}, {"mma", mma}}}};
}

ResultDocument::ResultDocument(const backends::Device& device, std::string tool_version,
                               nlohmann::json run_settings)
    : start_(std::chrono::steady_clock::now()) {
  doc_ = {{"schema", kSchema},
          {"tool", {{"name", "gpuparanoia"}, {"version", tool_version}}},
          {"started", fmt::format("{:%Y-%m-%dT%H:%M:%SZ}", fmt::gmtime(std::time(nullptr)))},
          {"duration_s", 0.0},
          {"run", std::move(run_settings)},
          {"device", to_json(device.info(), device.caps())},
          {"host", to_json(host_cpu())},
          {"findings", json::array()},
          {"profile", {{"scalar", json::object()}, {"mma", json::array()}}}};
}

namespace {
// Deep merge that keeps nulls (merge_patch would delete the keys: "guard_bits": null is a finding).
void merge(json& into, const json& from) {
  for (const auto& [k, v] : from.items()) {
    if (v.is_object() && into.contains(k) && into[k].is_object())
      merge(into[k], v);
    else
      into[k] = v;
  }
}
}  // namespace

void ResultDocument::add(const Finding& f) {
  doc_["findings"].push_back(to_json(f));
  if (f.status == Status::ok && !f.profile.empty() && !f.format.empty()) {
    nlohmann::json& p = doc_["profile"]["scalar"][f.format];
    if (p.is_null()) p = nlohmann::json::object();
    merge(p, f.profile);
  }
  doc_["duration_s"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  flush();
}

void ResultDocument::finish() {
  doc_["duration_s"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  flush();
}

void ResultDocument::write_to(std::filesystem::path path) {
  path_ = std::move(path);
  flush();
}

void ResultDocument::flush() const {
  if (path_) (void)write_atomically(*path_, doc_.dump(2) + "\n");
}

Expected<bool> write_atomically(const std::filesystem::path& path, const std::string& text) {
  std::error_code ec;
  if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path(), ec);
  const std::filesystem::path tmp = path.string() + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) return Error{fmt::format("cannot write {}", tmp.string())};
    out << text;
    if (!out.flush()) return Error{fmt::format("cannot write {}", tmp.string())};
  }
  std::filesystem::rename(tmp, path, ec);
  if (ec) return Error{fmt::format("cannot rename {} to {}: {}", tmp.string(), path.string(), ec.message())};
  return true;
}

std::string slug(std::string_view id) {
  std::string s(id);
  for (char& c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.')) c = '-';
  return s;
}

}  // namespace gp::audit
