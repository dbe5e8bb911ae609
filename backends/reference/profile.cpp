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
  return {
      std::move(name), std::move(device_name), std::move(vendor), std::move(description), std::move(units), {}, {}, {}};
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
    if (!dot) return Error{fmt::format("{}: {}", here, dot.error().message), ErrorKind::invalid};
    const std::string key = mma_model_key(m);
    if (prof.models.count(key))
      return Error{fmt::format("{}.config: {} is listed twice", here, key), ErrorKind::invalid};
    prof.models.emplace(key, std::move(*dot));
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

json mma_entry_json(const MmaConfig& config, const model::DotConfig* model, const MmaValidation* validation) {
  json e = {{"config", config.name()}};
  if (!config.instruction.empty()) e["instruction"] = config.instruction;
  if (model) {
    e["algorithm"] = algorithm_name(*model, config.k);
    e["parameters"] = parameters_json(*model, config.k);
  }
  if (validation)
    e["validation"] = {
        {"tiles", validation->tiles}, {"mismatches", validation->mismatches}, {"elements", validation->elements}};
  return e;
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
        auto u = unit_from_json(**f, unit, at(scalar + "." + format));
        if (!u) return u.error();
        prof.units.push_back(*u);
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

namespace gp::backends {

namespace {

json rounding_json(const model::UnitRounding& r) { return std::string(model::name(r)); }
std::string flush_name(bool flush) { return flush ? "flush" : "preserve"; }

// Reads keys of one object with checks; every error names the key path (relative to the unit when
// `where` is empty) and, as Error::key, the unit's key it is under.
class Reader {
 public:
  Reader(const json& j, std::string where, std::string key = "")
      : j_(j), where_(std::move(where)), key_(std::move(key)) {}
  // The reader of `key`'s value v, under this reader's unit key or else under `key`.
  Reader child(const json& v, const char* key) const { return Reader(v, at(key), key_.empty() ? key : key_); }
  Error fail(std::string message) const { return Error{std::move(message), ErrorKind::invalid, key_}; }
  // An error of the object itself.
  Error fail_here(std::string_view what) const {
    return fail(where_.empty() ? std::string(what) : fmt::format("{}: {}", where_, what));
  }
  Expected<bool> check_object() const {
    if (!j_.is_object()) return fail_here("must be a JSON object");
    return true;
  }
  Expected<bool> only(std::initializer_list<std::string_view> keys) const {
    for (const auto& [k, v] : j_.items()) {
      if (std::find(keys.begin(), keys.end(), k) == keys.end()) {
        std::string known;
        for (std::string_view x : keys) known += (known.empty() ? "" : ", ") + std::string(x);
        Error e = fail(fmt::format("{}: unknown key (known: {})", at(input::key_text(k)), known));
        if (e.key.empty()) e.key = k;  // an unknown key of the unit is the key at fault
        return e;
      }
    }
    return true;
  }
  const json* find(const char* key) const { return j_.contains(key) ? &j_.at(key) : nullptr; }
  std::string at(std::string_view key) const {
    return where_.empty() ? std::string(key) : fmt::format("{}.{}", where_, key);
  }
  Expected<bool> boolean(const char* key, bool& out) const {
    if (const json* v = find(key)) {
      if (!v->is_boolean()) return fail(fmt::format("{}: must be true or false", at(key)));
      out = v->get<bool>();
    }
    return true;
  }
  Expected<bool> rounding(const char* key, model::UnitRounding& out) const {
    if (const json* v = find(key)) {
      const auto r = v->is_string() ? model::find_unit_rounding(v->get<std::string>()) : std::nullopt;
      if (!r)
        return fail(
            fmt::format("{}: must be chop or a rounding name (rne rna rnz rnu rnd rno rz ru rd ra ro)", at(key)));
      out = *r;
    }
    return true;
  }
  // "max_ulps": an approximate operation's bound (model/scalar_unit.hpp).
  Expected<bool> ulp_bound(std::optional<model::UlpBound>& out) const {
    if (const json* v = find("max_ulps")) {
      const auto b = v->is_number() ? model::ulp_bound(v->get<double>()) : std::nullopt;
      if (!b) return fail(fmt::format("{}: must be a number of ulps, 0 or more and below 2^23", at("max_ulps")));
      out = *b;
    }
    return true;
  }
  Expected<bool> optional_int(const char* key, std::optional<int>& out) const {
    if (const json* v = find(key)) {
      if (v->is_null()) {
        out.reset();
      } else if (v->is_number_integer() && v->get<long long>() >= 0 && v->get<long long>() <= 64) {
        out = v->get<int>();
      } else {
        return fail(fmt::format("{}: must be null or an integer from 0 to 64", at(key)));
      }
    }
    return true;
  }
  // A string among the names `lookup` knows; `names` lists them for the error.
  template <class T, class Lookup>
  Expected<bool> named(const char* key, Lookup lookup, std::string_view names, T& out) const {
    if (const json* v = find(key)) {
      const std::optional<T> x = v->is_string() ? lookup(v->get<std::string>()) : std::nullopt;
      if (!x) return fail(fmt::format("{}: must be {}, not {}", at(key), names, v->dump()));
      out = *x;
    }
    return true;
  }
  Expected<bool> flush(const char* key, bool& out) const {
    if (const json* v = find(key)) {
      if (!v->is_string() || (*v != "flush" && *v != "preserve"))
        return fail(fmt::format("{}: must be \"flush\" or \"preserve\"", at(key)));
      out = *v == "flush";
    }
    return true;
  }

 private:
  const json& j_;
  std::string where_, key_;
};

// Runs the checks in order, returning the first error.
#define GP_TRY(expr)                \
  do {                              \
    auto gp_r = (expr);             \
    if (!gp_r) return gp_r.error(); \
  } while (0)

}  // namespace

json adder_json(const model::AdderParams& a) {
  return {{"rounding", rounding_json(a.rounding)},
          {"guard_bits", a.guard_bits ? json(*a.guard_bits) : json(nullptr)},
          {"sticky", a.sticky}};
}

namespace {

Expected<bool> read_adder(const Reader& r, model::AdderParams& a) {
  GP_TRY(r.check_object());
  GP_TRY(r.only({"rounding", "guard_bits", "sticky", "subnormals"}));
  GP_TRY(r.rounding("rounding", a.rounding));
  GP_TRY(r.optional_int("guard_bits", a.guard_bits));
  GP_TRY(r.boolean("sticky", a.sticky));
  return true;
}

}  // namespace

json unit_to_json(const model::ScalarUnit& u) {
  json j = {{"add", adder_json(u.add)},
            {"mul",
             {{"rounding", rounding_json(u.mul.rounding)},
              {"truncated_columns", u.mul.truncated_columns ? json(*u.mul.truncated_columns) : json(nullptr)},
              {"correction", u.mul.correction}}},
            {"fma", {{"fused", u.fma_fused}}},
            {"mad", {{"fused", u.mad_fused}}},
            {"div", {{"method", model::name(u.div.method)}, {"rounding", rounding_json(u.div.rounding)}}},
            {"sqrt", {{"rounding", rounding_json(u.sqrt)}}},
            {"cvt", {{"rounding", rounding_json(u.convert)}}},
            {"subnormals",
             {{"input", flush_name(u.subnormals.flush_input)},
              {"output", flush_name(u.subnormals.flush_output)},
              {"transfer", flush_name(u.subnormals.flush_transfer)}}},
            {"nan", {{"canonical", u.nan.canonical}, {"quiet_on_transfer", u.nan.quiet_on_transfer}}}};
  // An approximate operation's bound (model/scalar_unit.hpp), only where it has one.
  if (u.div.method == model::DivMethod::approximate) j["div"]["max_ulps"] = model::ulps(u.div.max_error);
  if (u.sqrt_max_error) j["sqrt"]["max_ulps"] = model::ulps(*u.sqrt_max_error);
  // The NaN keys beyond those two only where they differ from the IEEE unit's.
  const model::NanPolicy ieee_nan;
  json& nan = j["nan"];
  if (u.nan.propagation != ieee_nan.propagation) nan["propagation"] = model::name(u.nan.propagation);
  if (u.nan.quiet != ieee_nan.quiet) nan["quiet"] = u.nan.quiet;
  if (u.nan.sub_flips != ieee_nan.sub_flips) nan["sub_flips"] = u.nan.sub_flips;
  if (u.nan.default_nan != ieee_nan.default_nan) nan["default"] = model::name(u.nan.default_nan);
  if (u.nan.fma_order) nan["fma_order"] = model::name(*u.nan.fma_order);
  if (u.storage && u.storage != u.format) j["registers"] = u.format->name;
  if (u.add_cascaded) j["add_cascaded"] = adder_json(*u.add_cascaded);
  if (u.fma_zero_addend != model::ZeroAddend::ieee) j["fma"]["zero_addend"] = model::name(u.fma_zero_addend);
  for (std::size_t i = 0; i < model::kFlushOps; ++i)
    if (const auto& of = u.op_flush[i])
      j[std::string(model::flush_op_names[i])]["subnormals"] = {{"input", flush_name(of->flush_input)},
                                                                {"output", flush_name(of->flush_output)}};
  return j;
}

Expected<model::ScalarUnit> unit_from_json(const model::Format& f, const json& j, const std::string& where) {
  model::ScalarUnit u = model::ieee_unit(f);
  u.name = "";
  const Reader top(j, where);
  GP_TRY(top.check_object());
  GP_TRY(top.only({"add", "add_cascaded", "sub", "mul", "div", "sqrt", "fma", "mad", "cvt", "subnormals", "nan",
                   "registers", "validation"}));
  if (const json* v = top.find("add")) GP_TRY(read_adder(top.child(*v, "add"), u.add));
  if (const json* v = top.find("add_cascaded")) {
    // The first of two dependent additions, where it runs on an adder of its own; unset: `add`.
    u.add_cascaded = u.add;
    GP_TRY(read_adder(top.child(*v, "add_cascaded"), *u.add_cascaded));
  }
  if (const json* v = top.find("sub")) {
    // One adder does both; what the rounding probe saw of subtraction is informational.
    const Reader r = top.child(*v, "sub");
    GP_TRY(r.check_object());
    GP_TRY(r.only({"rounding"}));
  }
  if (const json* v = top.find("mul")) {
    const Reader r = top.child(*v, "mul");
    GP_TRY(r.check_object());
    GP_TRY(r.only({"rounding", "truncated_columns", "correction", "subnormals"}));
    GP_TRY(r.rounding("rounding", u.mul.rounding));
    GP_TRY(r.optional_int("truncated_columns", u.mul.truncated_columns));
    if (const json* c = r.find("correction")) {
      if (c->is_null()) {
        u.mul.correction = 0;
      } else if (c->is_number_unsigned()) {
        u.mul.correction = c->get<std::uint64_t>();
      } else {
        return r.fail(fmt::format("{}: must be a non-negative integer", r.at("correction")));
      }
    }
  }
  for (const char* key : {"fma", "mad"}) {
    if (const json* v = top.find(key)) {
      const Reader r = top.child(*v, key);
      GP_TRY(r.check_object());
      // "rounding" is what the rounding probe saw; a unit's fused rounding is its adder's.
      const bool fma = std::string_view(key) == "fma";
      GP_TRY(fma ? r.only({"fused", "rounding", "subnormals", "zero_addend"})
                 : r.only({"fused", "rounding", "subnormals"}));
      GP_TRY(r.boolean("fused", fma ? u.fma_fused : u.mad_fused));
      if (const json* z = fma ? r.find("zero_addend") : nullptr) {
        const auto za = z->is_string() ? model::find_zero_addend(z->get<std::string>()) : std::nullopt;
        if (!za) return r.fail(fmt::format("{}: must be \"ieee\" or \"product\"", r.at("zero_addend")));
        u.fma_zero_addend = *za;
      }
    }
  }
  if (const json* v = top.find("div")) {
    const Reader r = top.child(*v, "div");
    GP_TRY(r.check_object());
    GP_TRY(r.only({"method", "rounding", "max_ulps", "subnormals"}));
    GP_TRY(r.rounding("rounding", u.div.rounding));
    if (const json* m = r.find("method")) {
      const auto method = m->is_string() ? model::find_div_method(m->get<std::string>()) : std::nullopt;
      if (!method)
        return r.fail(
            fmt::format("{}: must be \"correctly_rounded\", \"reciprocal\" or \"approximate\"", r.at("method")));
      u.div.method = *method;
    }
    std::optional<model::UlpBound> bound;
    GP_TRY(r.ulp_bound(bound));
    if (bound.has_value() != (u.div.method == model::DivMethod::approximate))
      return r.fail(fmt::format("{}: max_ulps goes with the method \"approximate\", and only there", top.at("div")));
    if (bound) u.div.max_error = *bound;
  }
  for (const char* key : {"sqrt", "cvt"}) {
    if (const json* v = top.find(key)) {
      const Reader r = top.child(*v, key);
      const bool is_sqrt = std::string_view(key) == "sqrt";
      GP_TRY(r.check_object());
      GP_TRY(is_sqrt ? r.only({"rounding", "max_ulps", "subnormals"}) : r.only({"rounding", "subnormals"}));
      GP_TRY(r.rounding("rounding", is_sqrt ? u.sqrt : u.convert));
      if (is_sqrt) GP_TRY(r.ulp_bound(u.sqrt_max_error));
    }
  }
  if (const json* v = top.find("subnormals")) {
    const Reader r = top.child(*v, "subnormals");
    GP_TRY(r.check_object());
    GP_TRY(r.only({"input", "output", "transfer"}));
    GP_TRY(r.flush("input", u.subnormals.flush_input));
    GP_TRY(r.flush("output", u.subnormals.flush_output));
    GP_TRY(r.flush("transfer", u.subnormals.flush_transfer));
  }
  // Per-operation flushing, where an operation differs from the unit's: "fma": {"subnormals":
  // {"input": "flush", "output": "preserve"}}; a key left out is the unit's.
  for (std::size_t i = 0; i < model::kFlushOps; ++i) {
    const std::string op(model::flush_op_names[i]);
    const json* v = top.find(op.c_str());
    const json* sv = v && v->is_object() && v->contains("subnormals") ? &(*v)["subnormals"] : nullptr;
    if (!sv) continue;
    const Reader r = top.child(*v, op.c_str()).child(*sv, "subnormals");
    GP_TRY(r.check_object());
    GP_TRY(r.only({"input", "output"}));
    model::OpFlush of{u.subnormals.flush_input, u.subnormals.flush_output};
    GP_TRY(r.flush("input", of.flush_input));
    GP_TRY(r.flush("output", of.flush_output));
    if (of != model::flushing(u, model::FlushOp(i))) u.op_flush[i] = of;
  }
  if (const json* v = top.find("nan")) {
    const Reader r = top.child(*v, "nan");
    GP_TRY(r.check_object());
    GP_TRY(r.only({"canonical", "quiet_on_transfer", "propagation", "quiet", "sub_flips", "default", "fma_order"}));
    GP_TRY(r.boolean("canonical", u.nan.canonical));
    GP_TRY(r.boolean("quiet_on_transfer", u.nan.quiet_on_transfer));
    GP_TRY(r.boolean("quiet", u.nan.quiet));
    GP_TRY(r.boolean("sub_flips", u.nan.sub_flips));
    GP_TRY(r.named("propagation", model::find_nan_propagation, "\"first\", \"last\" or \"larger_payload\"",
                   u.nan.propagation));
    GP_TRY(r.named("default", model::find_default_nan,
                   "\"quiet\", \"negative_quiet\", \"all_ones\" or \"negative_all_ones\"", u.nan.default_nan));
    if (r.find("fma_order")) {
      model::FmaNanOrder order{};
      GP_TRY(r.named("fma_order", model::find_fma_nan_order,
                     "a permutation of a, b, c (\"abc\", \"acb\", \"bac\", \"bca\", \"cab\" or \"cba\")", order));
      u.nan.fma_order = order;
    }
  }
  if (const json* v = top.find("registers")) {
    const auto rf = v->is_string() ? model::find_format(v->get<std::string>()) : std::nullopt;
    if (!rf) return top.child(*v, "registers").fail(fmt::format("{}: must be a format name", top.at("registers")));
    u.storage = &f;
    u.format = *rf;
  }
  if (const std::string why = model::check(u); !why.empty()) return top.fail_here(why);
  return u;
}

}  // namespace gp::backends

// The MMA entries' models.
namespace gp::backends {

namespace {

using model::MmaAlgorithm;
using model::unchained;

bool chained(const model::DotConfig& c, int k) { return model::effective_block(c, k) < k; }

}  // namespace

std::string algorithm_name(const model::DotConfig& cfg, int k) {
  switch (unchained(cfg.algorithm)) {
    case MmaAlgorithm::fda: return chained(cfg, k) ? "cofda" : "fda";
    case MmaAlgorithm::fdrda: return chained(cfg, k) ? "cofdrda" : "fdrda";
    case MmaAlgorithm::gfdrda: return chained(cfg, k) ? "cogfdrda" : "gfdrda";
    default: return std::string(model::name(cfg.algorithm));
  }
}

json parameters_json(const model::DotConfig& c, int k) {
  json p = json::object();
  for (const auto& [key, v] : model::dot_config_parameters(c, k))
    p[key] = std::visit(
        [](const auto& x) -> json {
          if constexpr (std::is_same_v<std::decay_t<decltype(x)>, std::monostate>)
            return nullptr;
          else
            return x;
        },
        v);
  return p;
}

Expected<model::DotConfig> config_from_entry(const MmaConfig& config, const json& entry) {
  if (!entry.is_object() || !entry.contains("algorithm") || !entry["algorithm"].is_string())
    return Error{"malformed profile entry: algorithm must be a string", ErrorKind::invalid};
  const auto alg = model::find_mma_algorithm(entry["algorithm"].get<std::string>());
  if (!alg) return Error{"unknown algorithm " + entry["algorithm"].dump(), ErrorKind::invalid};
  if (!entry.contains("parameters") || !entry["parameters"].is_object())
    return Error{"malformed profile entry: parameters must be an object", ErrorKind::invalid};
  model::DotParameters parameters;
  for (const auto& [key, v] : entry["parameters"].items()) {
    // Integers within int64's range as integers, other numbers as doubles: nlohmann converts a
    // float or a huge number to an integer with undefined behaviour (a fuzzer finding:
    // "out_fraction_bits": 2e116).
    if (v.is_null())
      parameters[key] = std::monostate{};
    else if (v.is_boolean())
      parameters[key] = v.get<bool>();
    else if (v.is_number_integer() && !(v.is_number_unsigned() && v.get<std::uint64_t>() > std::uint64_t(INT64_MAX)))
      parameters[key] = v.get<std::int64_t>();
    else if (v.is_number())
      parameters[key] = v.get<double>();
    else if (v.is_string())
      parameters[key] = v.get<std::string>();
    else if (v.is_array() && std::all_of(v.begin(), v.end(), [](const json& x) { return x.is_string(); }))
      parameters[key] = v.get<std::vector<std::string>>();
    else
      return Error{
          fmt::format("parameters.{}: must be null, a boolean, an integer, a string or a list of strings, not {}",
                      input::key_text(key), v.dump()),
          ErrorKind::invalid};
  }
  auto c = model::dot_config_from_parameters(*alg, *config.a, *config.b, *config.c, *config.d, config.k, parameters);
  if (!c.config) return Error{c.key.empty() ? c.error : "parameters." + c.error, ErrorKind::invalid};
  return *c.config;
}

}  // namespace gp::backends
