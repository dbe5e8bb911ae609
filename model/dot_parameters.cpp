#include "model/dot_parameters.hpp"

#include <array>
#include <charconv>
#include <climits>

#include "input/input_error.hpp"
#include "model/summation_tree.hpp"

namespace gp::model {

namespace {

constexpr std::array<std::string_view, 17> names = {
    "F",           "block",        "group",       "out_fraction_bits",
    "align_floor", "out_rounding", "nan",         "round_down_alignment",
    "carry_bits",  "scale_format", "scale_block", "tree",
    "sums",        "products",     "rounding",    "flush",
    "flush_inputs"};

std::string value_text(const DotParameterValue& v) {
  struct Text {
    std::string operator()(std::monostate) const { return "null"; }
    std::string operator()(bool b) const { return b ? "true" : "false"; }
    std::string operator()(std::int64_t i) const { return std::to_string(i); }
    std::string operator()(const std::string& s) const { return "\"" + input::escaped(s) + "\""; }
    std::string operator()(const std::vector<std::string>& l) const {
      std::string s;
      for (const std::string& x : l) s += (s.empty() ? "" : ",") + ("\"" + input::escaped(x) + "\"");
      return "[" + s + "]";
    }
    std::string operator()(double x) const {
      char buf[32];
      const auto r = std::to_chars(buf, buf + sizeof buf, x);
      return std::string(buf, r.ptr);
    }
  };
  return std::visit(Text{}, v);
}

// Which algorithms read a key.
bool reads(MmaAlgorithm alg, std::string_view key) {
  if (alg == MmaAlgorithm::tree)
    return key == "tree" || key == "sums" || key == "products" || key == "rounding" || key == "flush";
  if (alg == MmaAlgorithm::sfma) return key == "rounding";
  if (alg == MmaAlgorithm::gps) return key == "group";
  if (key == "group") return alg == MmaAlgorithm::gdfs;
  if (key == "round_down_alignment") return is_fdrda_family(alg);
  if (key == "carry_bits") return unchained(alg) == MmaAlgorithm::fda;
  if (key == "flush_inputs") return alg == MmaAlgorithm::ocfda;
  if (alg == MmaAlgorithm::ocfda && key.starts_with("scale")) return false;
  return key == "F" || key == "block" || key == "out_fraction_bits" || key == "align_floor" || key == "out_rounding" ||
         key == "nan" || key == "scale_format" || key == "scale_block";
}

constexpr std::int64_t kMaxAlignFloor = 100000;

}  // namespace

std::span<const std::string_view> dot_parameter_names() { return names; }

std::string spell(std::string_view key, ParameterSpelling s) {
  std::string out(key);
  if (s == ParameterSpelling::key) return out;
  for (char& ch : out)
    if (ch == '_') ch = '-';
  return "--" + out;
}

DotConfigOrError dot_config_from_parameters(MmaAlgorithm alg, const Format& a, const Format& b, const Format& c,
                                            const Format& d, int k, const DotParameters& parameters,
                                            ParameterSpelling spelling) {
  DotConfig cfg = default_dot_config(alg, a, b, c, d, k > 0 ? k : 0);
  const auto fail = [&](std::string_view key, std::string why) {
    return DotConfigOrError{std::nullopt, spell(input::key_text(key), spelling) + ": " + why, std::string(key)};
  };
  const auto wrong = [&](std::string_view key, const DotParameterValue& v, std::string_view expected) {
    return fail(key, "must be " + std::string(expected) + ", not " + value_text(v));
  };
  for (const auto& [key, value] : parameters) {
    bool known = false;
    for (std::string_view n : dot_parameter_names()) known = known || n == key;
    if (!known) {
      std::string list;
      for (std::string_view n : dot_parameter_names()) list += (list.empty() ? "" : ", ") + spell(n, spelling);
      return fail(key, "unknown parameter (known: " + list + ")");
    }
    if (!reads(alg, key))
      return fail(key, "not a parameter of " + std::string(name(alg)) +
                           (alg == MmaAlgorithm::tree   ? " (tree, sums, products, rounding, flush)"
                            : alg == MmaAlgorithm::sfma ? " (rounding 'rne' only)"
                            : alg == MmaAlgorithm::gps  ? " (group only)"
                                                        : ""));
  }
  const auto get = [&](std::string_view key) -> const DotParameterValue* {
    const auto it = parameters.find(key);
    return it == parameters.end() ? nullptr : &it->second;
  };
  const auto text = [&](std::string_view key, std::string& out) -> std::optional<DotConfigOrError> {
    const DotParameterValue* v = get(key);
    if (!v) return std::nullopt;
    if (!std::holds_alternative<std::string>(*v)) return wrong(key, *v, "a string");
    out = std::get<std::string>(*v);
    return std::nullopt;
  };
  for (auto [key, field] : {std::pair<std::string_view, int*>{"F", &cfg.F},
                            {"block", &cfg.block},
                            {"group", &cfg.group},
                            {"out_fraction_bits", &cfg.out_fraction_bits},
                            {"align_floor", &cfg.align_floor},
                            {"carry_bits", &cfg.carry_bits}}) {
    const DotParameterValue* v = get(key);
    if (!v) continue;
    if (key == "align_floor" && std::holds_alternative<std::monostate>(*v)) {
      *field = kNoAlignFloor;
      continue;
    }
    // Within int's range; check() bounds the others further. An alignment floor far beyond any
    // format's exponents would overflow the exponent arithmetic.
    const std::int64_t* i = std::get_if<std::int64_t>(v);
    if (!i || *i < INT_MIN || *i > INT_MAX)
      return wrong(key, *v, key == "align_floor" ? "null or an integer" : "an integer");
    if (key == "align_floor" && (*i < -kMaxAlignFloor || *i > kMaxAlignFloor))
      return fail(key, "must lie in -" + std::to_string(kMaxAlignFloor) + ".." + std::to_string(kMaxAlignFloor) +
                           ", not " + std::to_string(*i));
    *field = int(*i);
  }
  std::string s;
  if (auto e = text("out_rounding", s)) return *e;
  if (get("out_rounding")) {
    const auto r = find_rounding(s);
    if (!r) return fail("out_rounding", "unknown rounding '" + s + "' (rne, rz, ru, rd, ...)");
    cfg.out_rounding = *r;
  }
  if (auto e = text("nan", s)) return *e;
  if (get("nan")) {
    if (s != "nvidia" && s != "format") return fail("nan", "nvidia or format, not '" + s + "'");
    cfg.nan = s == "nvidia" ? MmaNan::nvidia : MmaNan::format;
  }
  for (auto [key, field] : {std::pair<std::string_view, bool*>{"round_down_alignment", &cfg.round_down_alignment},
                            {"flush_inputs", &cfg.flush_inputs}}) {
    const DotParameterValue* v = get(key);
    if (!v) continue;
    if (!std::holds_alternative<bool>(*v)) return wrong(key, *v, "true or false");
    *field = std::get<bool>(*v);
  }
  if (auto e = text("scale_format", s)) return *e;
  if (get("scale_format")) {
    const auto f = find_format(s);
    if (!f || (*f != &ue8m0 && *f != &ue4m3)) return fail("scale_format", "ue8m0 or ue4m3, not '" + s + "'");
    cfg.scale = *f;
    cfg.scale_block = cfg.scale == &ue4m3 ? 16 : 32;
  }
  if (const DotParameterValue* v = get("scale_block")) {
    if (!cfg.scale) return fail("scale_block", "needs " + spell("scale_format", spelling));
    const std::int64_t* i = std::get_if<std::int64_t>(v);
    if (!i || *i < 1 || *i > kMaxDotK) return wrong("scale_block", *v, "an integer in 1.." + std::to_string(kMaxDotK));
    cfg.scale_block = int(*i);
  }
  if (alg == MmaAlgorithm::sfma && get("rounding")) {
    if (auto e = text("rounding", s)) return *e;
    if (s != "rne") return fail("rounding", "an FMA chain rounds to nearest even: 'rne', not '" + s + "'");
  }
  if (alg == MmaAlgorithm::tree) {
    std::string tree_text, sums, products = "exact", rounding = "rne";
    if (!get("tree"))
      return {std::nullopt, spell("tree", spelling) + ": a tree is required, e.g. \"((p0+p1)+p2)+c\"", ""};
    for (auto [key, out] : {std::pair<std::string_view, std::string*>{"tree", &tree_text},
                            {"sums", &sums},
                            {"products", &products},
                            {"rounding", &rounding}})
      if (auto e = text(key, *out)) return *e;
    std::vector<std::string> flush;
    if (const DotParameterValue* v = get("flush")) {
      if (!std::holds_alternative<std::vector<std::string>>(*v)) return wrong("flush", *v, "a list of strings");
      flush = std::get<std::vector<std::string>>(*v);
    }
    auto parsed = parse_summation_tree(tree_text, k > 0 ? k : -1);
    if (!parsed.tree) return fail("tree", parsed.error);
    if (const std::string why = set_tree_options(*parsed.tree, d, sums, products, rounding, flush); !why.empty())
      return {std::nullopt, why, ""};
    cfg.tree = std::make_shared<const SummationTree>(std::move(*parsed.tree));
  }
  if (std::string why = check(cfg); !why.empty()) return {std::nullopt, std::move(why), ""};
  return {cfg, "", ""};
}

}  // namespace gp::model
