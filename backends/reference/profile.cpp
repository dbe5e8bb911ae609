#include "backends/reference/profile.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <type_traits>
#include <variant>

#include "input/json_input.hpp"
#include "model/dot_parameters.hpp"
#include "model/mma_config_name.hpp"
#include "model/mma_instructions.hpp"
#include "model/summation_tree.hpp"

namespace gp::backends {

using nlohmann::json;

namespace {

Profile scalar_profile(std::string name, std::string device_name, std::string vendor, std::string description,
                       std::vector<model::ScalarUnit> units) {
  return {std::move(name),
          std::move(device_name),
          std::move(vendor),
          std::move(description),
          std::move(units),
          {},
          {},
          {},
          {},
          {}};
}

// What the papers say of the V100 (volta), T4 (turing) and A100 (ampere) tensor cores, word for
// word, by probe: the reports of those instructions' virtual devices show it beside the findings.
struct Words {
  std::string_view archs;  // the architectures whose HMMA F32 instructions the words are about
  std::string_view probe, words;
};
constexpr std::string_view fasi = "Fasi et al. 2021, section 4 (V100): ";
constexpr Words paper_words[] = {
    {"volta turing", "mma.fasi.exact_products",
     "The binary16 products in (2) are computed exactly, and the results are kept in full precision and not "
     "rounded to binary16 after the multiplication."},
    {"volta turing", "mma.fasi.rounding",
     "The additions in (2) are performed using binary32 arithmetic with round-towards-zero."},
    {"volta turing", "mma.subnormals", "Subnormal numbers in binary16 and binary32 are supported."},
    {"volta turing", "mma.fasi.order",
     "The five summands in (2) are accumulated starting with the largest in absolute value."},
    {"volta turing", "mma.fasi.normalization_add",
     "Only the final result of (2) is normalized; the partial sums are not, and the accumulator uses three extra bits "
     "for carries."},
    {"volta turing", "mma.fasi.normalization_sub",
     "Only the final result of (2) is normalized; the partial sums are not, and the accumulator uses three extra bits "
     "for carries."},
    {"volta turing", "mma.fasi.carry_bits",
     "Only the final result of (2) is normalized; the partial sums are not, and the accumulator uses three extra bits "
     "for carries."},
    {"volta turing", "mma.fasi.monotonicity", "The dot products in tensor cores are non-monotonic."},
    {"turing", "mma.fasi.alignment_bits",
     "Fasi et al. 2021, section 3.2 (T4): an additional extra bit of precision at the bottom of the significand of the "
     "internal accumulator of the 5-operand adder."},
    {"volta turing ampere", "mma.valpey.truncation",
     "Valpey et al. 2025, section 4: tensor cores do not adhere to any of the IEEE-754 rounding modes, including RTZ "
     "rounding [...] Instead, they truncate."},
    {"volta turing ampere", "mma.valpey.carry_bits",
     "Valpey et al. 2025, section 4: the hardware reports the value that would be the result if 3 bits were indeed "
     "used."},
};

// One virtual device per instruction of the table: ref:<arch>:<instruction>.
Profile instruction_profile(const model::MmaInstruction& inst) {
  const model::DotConfig& c = inst.config;
  MmaConfig m{inst.m, inst.n, inst.k, c.a, c.b, c.c, c.d, "subgroup", inst.id()};
  const bool nvidia = !inst.arch.starts_with("cdna") && !inst.arch.starts_with("rdna");
  // The table's row for the identification; the papers' words for the binary16 x binary16 + binary32
  // instructions they measured.
  std::map<std::string, std::string> published = {{"mma.identify " + m.name(), inst.notes}};
  const bool hmma_f32 = inst.name.starts_with("HMMA.") && inst.name.ends_with(".F32") && c.a == &model::binary16;
  for (const Words& w : paper_words) {
    if (!hmma_f32 || w.archs.find(inst.arch) == std::string_view::npos) continue;
    const bool quoted_alone = w.words.starts_with("Fasi") || w.words.starts_with("Valpey");
    published[fmt::format("{} {}", w.probe, m.name())] = fmt::format("{}{}", quoted_alone ? "" : fasi, w.words);
  }
  return {inst.id(),
          fmt::format("{} {} ({}, {}{})", nvidia ? "NVIDIA" : "AMD", inst.name, inst.arch,
                      inst.emulated ? "emulated: " : "", std::string(model::name(c.algorithm))),
          nvidia ? "NVIDIA" : "AMD",
          inst.notes,
          {},
          {m},
          std::move(published),
          {}};
}

// The built-in devices that are not an instruction's.
std::vector<Profile> scalar_builtins() {
  std::vector<Profile> v;
  v.push_back(scalar_profile("ieee-binary32", "IEEE 754 binary32 unit", "IEEE",
                             "correctly rounded binary32 arithmetic, round to nearest even, gradual underflow",
                             {model::ieee_unit(model::binary32)}));
  v.push_back(scalar_profile("ieee-binary16", "IEEE 754 binary16 unit", "IEEE",
                             "correctly rounded binary16 arithmetic with binary32 beside it",
                             {model::ieee_unit(model::binary32), model::ieee_unit(model::binary16)}));
  v.push_back(scalar_profile("ieee-binary64", "IEEE 754 binary64 unit", "IEEE",
                             "correctly rounded binary64 arithmetic with binary32 beside it",
                             {model::ieee_unit(model::binary32), model::ieee_unit(model::binary64)}));
  v.push_back(
      scalar_profile("nvidia-g70", "NVIDIA GeForce 7800 GTX (G70), pixel shader", "NVIDIA",
                     "Daumas, da Graca, Defour 2006 (sections 2.1-2.3, appendix A); unstated parameters assumed",
                     {model::nvidia_g70(), model::nvidia_g70_binary16()}));
  // The error bounds GPU Paranoia logged on the 7800GTX ([DGD] appendix A), word for word.
  for (const auto& [op, bound] :
       {std::pair{"mul", "mult= [-0.78125,0.625]"}, std::pair{"div", "div= [-1.19902,1.37442]"},
        std::pair{"sub", "sub= [-0.75,0.75]"}, std::pair{"add", "add= [-1,0]"}})
    v.back().published[fmt::format("scalar.{}.ulp_error binary32", op)] =
        fmt::format("7800GTX log (Daumas et al. 2006, appendix A): Error bound for {} ULPs", bound);
  v.push_back(scalar_profile("ati-r520", "ATI Radeon X1800 XL (R520), pixel shader", "ATI",
                             "Daumas, da Graca, Defour 2006 (sections 2.1-2.3); unstated parameters assumed",
                             {model::ati_r520()}));
  v.push_back(scalar_profile("ati-r300", "ATI Radeon 9700 (R300), fp24 pixel shader", "ATI",
                             "Daumas et al. 2006 table 1 and Hillesland and Lastra 2004; unstated parameters assumed",
                             {model::ati_r300()}));
  return v;
}

}  // namespace

std::vector<Profile> builtin_profiles() {
  std::vector<Profile> v = scalar_builtins();
  for (const model::MmaInstruction& inst : model::all_mma_instructions()) v.push_back(instruction_profile(inst));
  return v;
}

std::optional<Profile> builtin_profile(std::string_view name) {
  for (Profile& p : scalar_builtins())
    if (p.name == name) return std::move(p);
  for (const model::MmaInstruction& inst : model::all_mma_instructions())
    if (inst.id() == name) return instruction_profile(inst);
  return std::nullopt;
}

Expected<std::vector<Profile>> load_profile_file(const std::filesystem::path& path) {
  input::InputError err;
  const auto doc = input::read_json_file(path, err);
  if (!doc) return Error{err.text(), ErrorKind::invalid};
  return parse_profiles(*doc, path.string());
}

namespace {

// "16x16x16:binary16,binary16,binary32,binary32" (MmaConfig::name()) back to the configuration.
std::optional<MmaConfig> mma_config_from_name(std::string_view name) {
  const model::MmaConfigName parsed = model::parse_mma_config_name(name);
  if (parsed.fault != model::MmaNameFault::none) return std::nullopt;
  MmaConfig m;
  m.m = parsed.shape.m;
  m.n = parsed.shape.n;
  m.k = parsed.shape.k;
  m.a = parsed.formats[0];
  m.b = parsed.formats[1];
  m.c = parsed.formats[2];
  m.d = parsed.formats[3];
  return m;
}

// The MMA entries of a profile: configurations with their models; entries that name no algorithm
// become notes.
Expected<bool> read_mma_entries(const json& mma, const std::string& at, Profile& prof,
                                std::vector<std::string>& notes) {
  if (!mma.is_array()) return Error{fmt::format("{}: must be a list of entries", at), ErrorKind::invalid};
  for (std::size_t i = 0; i < mma.size(); ++i) {
    const json& e = mma[i];
    const std::string here = fmt::format("{}[{}]", at, i);
    if (!e.is_object()) return Error{fmt::format("{}: must be an object", here), ErrorKind::invalid};
    for (const auto& [key, value] : e.items())
      if (key != "config" && key != "instruction" && key != "algorithm" && key != "parameters" && key != "validation")
        return Error{fmt::format("{}.{}: unknown key (known: config, instruction, algorithm, parameters, validation)",
                                 here, input::key_text(key)),
                     ErrorKind::invalid};
    const auto config = e.contains("config") && e["config"].is_string()
                            ? mma_config_from_name(e["config"].get<std::string>())
                            : std::nullopt;
    if (!config)
      return Error{fmt::format("{}.config: must be \"MxNxK:a,b,c,d\" (format names; M and N at most {}, K at most {})",
                               here, model::kMaxMmaTile, model::kMaxDotK),
                   ErrorKind::invalid};
    MmaConfig m = *config;
    if (e.contains("instruction")) {
      if (!e["instruction"].is_string())
        return Error{fmt::format("{}.instruction: must be a string", here), ErrorKind::invalid};
      m.instruction = e["instruction"].get<std::string>();
    }
    if (!e.contains("algorithm") || e["algorithm"].is_null()) {
      notes.push_back(fmt::format("MMA {} left out, no algorithm identified", m.name()));
      continue;
    }
    auto dot = config_from_entry(m, e);
    if (!dot) return dot.error().retold(fmt::format("{}: {}", here, dot.error().message));
    const std::string key = mma_model_key(m);
    if (prof.models.count(key))
      return Error{fmt::format("{}.config: {} is listed twice", here, key), ErrorKind::invalid};
    prof.models.emplace(key, std::move(*dot));
    if (const auto v = read_mma_validation(e)) prof.validations.emplace(key, *v);
    prof.mma.push_back(std::move(m));
  }
  return true;
}

}  // namespace

std::string mma_model_key(const MmaConfig& config) {
  return config.instruction.empty() ? config.name() : config.instruction;
}

const model::DotConfig* mma_model(const std::map<std::string, model::DotConfig>& models, const MmaConfig& config) {
  if (const auto it = models.find(mma_model_key(config)); it != models.end()) return &it->second;
  const model::MmaInstruction* inst = model::find_mma_instruction(config.instruction);
  return inst ? &inst->config : nullptr;
}

const model::ScalarUnit* unit_for(const Profile& profile, const model::Format& storage) {
  for (const model::ScalarUnit& u : profile.units)
    if (&u.storage_format() == &storage) return &u;
  return nullptr;
}

json profile_json(const Profile& p) {
  json scalar = json::object();
  for (const model::ScalarUnit& u : p.units) scalar[std::string(u.storage_format().name)] = unit_to_json(u);
  json mma = json::array();
  for (const MmaConfig& m : p.mma) mma.push_back(mma_entry_json(m, mma_model(p.models, m)));
  json published = json::object();
  for (const auto& [key, words] : p.published) published[key] = words;
  return {{"name", p.name},        {"device_name", p.device_name},
          {"vendor", p.vendor},    {"description", p.description},
          {"scalar", scalar},      {"mma", mma},
          {"published", published}};
}

Expected<std::vector<Profile>> parse_profiles(const json& doc, const std::string& where) {
  std::vector<Profile> out;
  const json list = doc.is_array() ? doc : json::array({doc});
  for (std::size_t i = 0; i < list.size(); ++i) {
    const json& p = list[i];
    // Errors read "<file>: <key path>: <what>", the path starting with the index in a list.
    const std::string pre = doc.is_array() ? fmt::format("[{}]", i) : "";
    const auto error = [&](std::string_view key, std::string_view what) {
      return Error{fmt::format("{}: {}{}{}: {}", where, pre, pre.empty() || key.empty() ? "" : ".", key, what),
                   ErrorKind::invalid};
    };
    const auto at = [&](const std::string& key) {
      return fmt::format("{}: {}{}{}", where, pre, pre.empty() ? "" : ".", key);
    };
    if (!p.is_object())
      return Error{fmt::format("{}: {}{}a profile is a JSON object", where, pre, pre.empty() ? "" : ": "),
                   ErrorKind::invalid};
    // A result document: its device profile, named after the file.
    const bool result = p.contains("schema") && p.contains("profile");
    const json& body = result ? p["profile"] : p;
    if (!body.is_object()) return error("profile", "must be an object");
    Profile prof;
    for (const auto& [key, value] : p.items()) {
      if (key == "name" || key == "description" || key == "device_name" || key == "vendor") {
        if (!value.is_string()) return error(key, "must be a string");
      } else if (key == "published") {
        if (!value.is_object()) return error(key, "must be an object");
        for (const auto& [k, v] : value.items()) {
          if (!v.is_string()) return error("published." + input::key_text(k), "must be a string");
          prof.published[k] = v.get<std::string>();
        }
      } else if (key != "scalar" && key != "mma" && !result) {
        return error(input::key_text(key),
                     "unknown key (known: name, description, device_name, vendor, published, scalar, mma)");
      }
    }
    // The device the result measured, for the loaded device's name and description.
    std::string measured;
    if (result && p.contains("device")) {
      const json& d = p["device"];
      if (!d.is_object()) return error("device", "must be an object");
      for (const char* key : {"id", "name"})
        if (d.contains(key) && !d[key].is_string()) return error(fmt::format("device.{}", key), "must be a string");
      measured = d.value("id", "?");
      if (d.contains("name")) measured += fmt::format(" ({})", d["name"].get<std::string>());
    }
    // What sources published of the measured device stays beside the findings of its replay.
    if (result && p.contains("findings") && p["findings"].is_array())
      for (const json& f : p["findings"])
        if (f.is_object() && f.contains("published") && f["published"].is_string() && f.contains("probe") &&
            f["probe"].is_string()) {
          // The finding's target as the runner names it: the configuration, else the format.
          const auto text = [&](const char* key) {
            return f.contains(key) && f[key].is_string() ? f[key].get<std::string>() : "";
          };
          const std::string target = text("config").empty() ? text("format") : text("config");
          prof.published.emplace(fmt::format("{} {}", f["probe"].get<std::string>(), target),
                                 f["published"].get<std::string>());
        }
    prof.name = p.value("name", doc.is_array() ? "" : std::filesystem::path(where).stem().string());
    if (prof.name.empty()) return error("name", "missing");
    if (prof.name.rfind("ref:", 0) == 0) prof.name = prof.name.substr(4);
    for (std::size_t j = 0; j < out.size(); ++j)
      if (out[j].name == prof.name)
        return error("name", fmt::format("device ref:{} is also loaded from {} [{}]", prof.name, where, j));
    prof.device_name =
        p.value("device_name", measured.empty() ? "user profile " + prof.name : "inferred profile of " + measured);
    prof.vendor = p.value("vendor", "user");
    prof.description = p.value(
        "description", measured.empty() ? "from " + where : fmt::format("from {}, measured on {}", where, measured));
    const std::string prefix = result ? "profile." : "";
    if (!body.contains("scalar") && !body.contains("mma"))
      return error(prefix + "scalar", "missing (an object of formats)");
    if (body.contains("scalar")) {
      const std::string scalar = prefix + "scalar";
      if (!body["scalar"].is_object()) return error(scalar, "must be an object of formats");
      for (const auto& [format, unit] : body["scalar"].items()) {
        const auto f = model::find_format(format);
        if (!f) return error(scalar + "." + input::key_text(format), "unknown format");
        const std::string here = at(scalar + "." + format);
        auto keys = read_scalar_profile(unit, here);
        if (!keys) return keys.error();
        auto u = unit_of(**f, *keys, here);
        if (!u) return u.error();
        prof.units.push_back(*u);
        prof.scalar.emplace(format, std::move(*keys));
      }
    }
    if (body.contains("mma")) {
      std::vector<std::string> notes;
      if (auto ok = read_mma_entries(body["mma"], at(prefix + "mma"), prof, notes); !ok) return ok.error();
      for (const std::string& n : notes) prof.description += "; " + n;
    }
    out.push_back(std::move(prof));
  }
  return out;
}

}  // namespace gp::backends
