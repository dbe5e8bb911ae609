#include "audit/result.hpp"

#include "audit/host_cpu.hpp"

#include <fmt/chrono.h>
#include <fmt/format.h>

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
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

Status status_of(const Error& e) { return e.kind == ErrorKind::unsupported ? Status::unsupported : Status::error; }

Finding failed(const Error& e) {
  Finding f = failed(e.message);
  f.status = status_of(e);
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
      if ((value == o.output ? standing : refuted)++ < max_predictions / 2)
        predictions[hypothesis] = hex(value, o.output_bits);
    json item = {{"inputs", inputs}, {"output", hex(o.output, o.output_bits)}, {"predictions", predictions}};
    if (predictions.size() < o.predictions.size())
      item["predictions_omitted"] = o.predictions.size() - predictions.size();
    if (!o.note.empty()) item["note"] = o.note;
    obs.push_back(std::move(item));
  }
  json j = {{"probe", f.probe},     {"format", f.format},         {"config", f.config},   {"title", f.title},
            {"source", f.source},   {"status", name(f.status)},   {"verdict", f.verdict}, {"parameters", f.parameters},
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
  json j = {{"id", info.id},
            {"backend", info.backend},
            {"name", info.name},
            {"vendor", info.vendor},
            {"driver", info.driver},
            {"api", info.api},
            {"description", info.description},
            {"capabilities", {{"formats", formats}, {"float_controls", caps.float_controls}, {"mma", mma}}}};
  if (!info.code.empty()) j["code"] = info.code;  // run --code: where its kernels' compiled code is
  if (!info.identity.empty()) j["identity"] = info.identity;
  return j;
}

namespace {
// The host: its CPU (a CPU driver's arithmetic follows it) and its name (the node of a fleet).
json host_json() {
  json h = to_json(host_cpu());
  if (const std::string name = host_name(); !name.empty()) h["hostname"] = name;
  return h;
}
}  // namespace

ResultDocument::ResultDocument(const backends::Device& device, std::string tool_version, nlohmann::json run_settings)
    : start_(std::chrono::steady_clock::now()) {
  doc_ = {{"schema", kSchema},
          {"tool", {{"name", "gpuparanoia"}, {"version", tool_version}}},
          {"started", fmt::format("{:%Y-%m-%dT%H:%M:%SZ}", fmt::gmtime(std::time(nullptr)))},
          {"duration_s", 0.0},
          {"run", std::move(run_settings)},
          {"device", to_json(device.info(), device.caps())},
          {"host", host_json()},
          {"findings", json::array()},
          {"profile", {{"scalar", json::object()}, {"mma", json::array()}}}};
  doc_["complete"] = false;  // true once the run has ended; an interrupted run also says why
}

void ResultDocument::set_scalar_profile(const std::string& format, const backends::ScalarProfile& p) {
  doc_["profile"]["scalar"][format] = backends::to_json(p);
}

Expected<backends::ScalarProfiles> ResultDocument::scalar_profiles() const {
  backends::ScalarProfiles out;
  for (const auto& [format, keys] : doc_["profile"]["scalar"].items()) {
    auto p = backends::read_scalar_profile(keys, "profile.scalar." + format);
    if (!p) return p.error();
    out[format] = std::move(*p);
  }
  return out;
}

void ResultDocument::add(const Finding& f) {
  doc_["findings"].push_back(to_json(f));
  stamp_duration();
  if (listener_) changed({{"add", doc_["findings"].back()}});
  if (std::chrono::steady_clock::now() - last_write_ >= kRewriteInterval) write_outputs(false);
}

void ResultDocument::replace(std::size_t i, const Finding& f) { replace(i, to_json(f)); }

void ResultDocument::replace(std::size_t i, nlohmann::json finding) {
  doc_["findings"].at(i) = std::move(finding);
  stamp_duration();
  if (listener_) changed({{"replace", i}, {"finding", doc_["findings"].at(i)}});
}

const nlohmann::json* ResultDocument::held(std::string_view probe, std::string_view target) const {
  const auto field = [](const nlohmann::json& f, const char* key) {
    const auto it = f.find(key);
    return it != f.end() && it->is_string() ? it->get_ref<const std::string&>() : std::string();
  };
  for (const nlohmann::json& f : doc_["findings"]) {
    if (!probe.empty() && field(f, "probe") != probe) continue;
    const std::string format = field(f, "format"), config = field(f, "config");
    if (target.empty() ? format.empty() && config.empty() : format == target || config == target) return &f;
  }
  return nullptr;
}

void ResultDocument::changed(nlohmann::json event) {
  event["profile"] = doc_["profile"];
  listener_(event);
}

Expected<bool> ResultDocument::apply(const nlohmann::json& event) {
  if (!event.is_object() || !event.contains("profile") || !event["profile"].is_object())
    return Error{"not an event of a device's run: no profile", ErrorKind::invalid};
  nlohmann::json& findings = doc_["findings"];
  if (const auto add = event.find("add"); add != event.end()) {
    if (!add->is_object()) return Error{"an added finding is not an object", ErrorKind::invalid};
    findings.push_back(*add);
  } else if (const auto i = event.find("replace"); i != event.end()) {
    if (!i->is_number_unsigned() || i->get<std::size_t>() >= findings.size() || !event.contains("finding"))
      return Error{"a replaced finding that the document does not hold", ErrorKind::invalid};
    findings[i->get<std::size_t>()] = event["finding"];
  }
  doc_["profile"] = event["profile"];
  stamp_duration();
  if (std::chrono::steady_clock::now() - last_write_ >= kRewriteInterval) write_outputs(false);
  return true;
}

void ResultDocument::resume(const nlohmann::json& doc) {
  doc_["findings"] = doc.at("findings");
  doc_["profile"] = doc.at("profile");
}

void ResultDocument::stamp_duration() {
  doc_["duration_s"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

void ResultDocument::finish() {
  stamp_duration();
  if (listener_) changed(nlohmann::json::object());
  doc_["complete"] = true;
  write_outputs(true);
}

void ResultDocument::interrupt(std::string_view signal) {
  stamp_duration();
  doc_["complete"] = false;
  doc_["interrupted"] = signal;
  write_outputs(true);
}

Expected<bool> ResultDocument::write_to(std::filesystem::path path) {
  if (backends::is_special_file(path)) {
    const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) return backends::file_error(path, "open");
    ::close(fd);
    outputs_.push_back({std::move(path), true});
    return true;
  }
  auto written = write_atomically(path, dump(doc_));
  if (!written) return written.error();
  outputs_.push_back({std::move(path), false});
  last_write_ = std::chrono::steady_clock::now();
  return true;
}

void ResultDocument::write_outputs(bool at_end) {
  if (outputs_.empty()) return;
  const std::string text = dump(doc_);
  for (const Output& o : outputs_) {
    if (o.in_place && !at_end) continue;
    if (auto written = write_atomically(o.path, text); !written && !write_error_) write_error_ = written.error();
  }
  last_write_ = std::chrono::steady_clock::now();
}

std::string dump(const nlohmann::json& doc) {
  return doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

std::string slug(std::string_view id) {
  std::string s(id);
  for (char& c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.')) c = '-';
  return s;
}

}  // namespace gp::audit
