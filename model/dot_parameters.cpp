#include "model/dot_parameters.hpp"

#include <array>
#include <charconv>
#include <climits>

#include "input/input_error.hpp"
#include "model/summation_tree.hpp"

namespace gp::model {

namespace {

constexpr std::uint16_t bit(MmaAlgorithm a) { return std::uint16_t(1u << unsigned(a)); }
constexpr std::uint16_t kFdrdaFamily =
    bit(MmaAlgorithm::fdrda) | bit(MmaAlgorithm::cofdrda) | bit(MmaAlgorithm::gfdrda) | bit(MmaAlgorithm::cogfdrda);
// The fused algorithms that take scale factors, and with ocfda those that take the fused parameters.
constexpr std::uint16_t kScaled =
    bit(MmaAlgorithm::fda) | bit(MmaAlgorithm::cofda) | bit(MmaAlgorithm::gdfs) | kFdrdaFamily;
constexpr std::uint16_t kFused = kScaled | bit(MmaAlgorithm::ocfda);
constexpr std::uint16_t kTree = bit(MmaAlgorithm::tree);

constexpr int kMaxAlignFloor = 100000;

using Value = std::optional<DotParameterValue>;
std::string text_of(std::string_view s) { return std::string(s); }

// In the order of dot_parameter_names() (the order errors list them in).
const std::array<DotParameter, 17> table = {{
    {"F", DotParameterType::integer, 0, kMaxF, kFdrdaDotBits, kFused, "Fraction bits kept on alignment",
     [](const DotConfig& c, int) -> Value { return std::int64_t(c.F); }, &DotConfig::F},
    {"block", DotParameterType::integer, 0, kMaxDotK, 0, kFused,
     "Products fused before a partial result is rounded (chained beyond)",
     [](const DotConfig& c, int k) -> Value { return std::int64_t(effective_block(c, k) < k ? c.block : k); },
     &DotConfig::block},
    {"group", DotParameterType::integer, 1, kMaxDotK, 0, bit(MmaAlgorithm::gps) | bit(MmaAlgorithm::gdfs),
     "G of gps; the fixed-point group of gdfs", [](const DotConfig& c, int) -> Value { return std::int64_t(c.group); },
     &DotConfig::group},
    {"out_fraction_bits", DotParameterType::integer, 0, 52, 0, kFused,
     "Fused algorithms: fraction bits of the final rounding",
     [](const DotConfig& c, int) -> Value { return std::int64_t(c.out_fraction_bits); }, &DotConfig::out_fraction_bits},
    {"align_floor", DotParameterType::integer_or_null, -kMaxAlignFloor, kMaxAlignFloor, 0, kFused,
     "Fused algorithms: lowest alignment exponent, or none",
     [](const DotConfig& c, int) -> Value {
       if (c.align_floor == kNoAlignFloor) return std::monostate{};
       return std::int64_t(c.align_floor);
     },
     &DotConfig::align_floor},
    {"out_rounding", DotParameterType::text, 0, 0, 0, kFused,
     "Fused algorithms: the final rounding (default: the algorithm's)",
     [](const DotConfig& c, int) -> Value { return text_of(name(c.out_rounding)); }},
    {"nan", DotParameterType::text, 0, 0, 0, kFused,
     "Fused algorithms: the NaN delivered, nvidia (0x7fffffff) or format (quiet NaN)",
     [](const DotConfig& c, int) -> Value { return text_of(c.nan == MmaNan::nvidia ? "nvidia" : "format"); }},
    {"round_down_alignment", DotParameterType::boolean, 0, 0, 0, kFdrdaFamily,
     "fdrda algorithms: c and the dot product aligned rounding down (true) or toward zero (false)",
     [](const DotConfig& c, int) -> Value { return c.round_down_alignment; }, nullptr,
     &DotConfig::round_down_alignment},
    {"carry_bits", DotParameterType::integer, 0, kMaxCarryBits, 0, bit(MmaAlgorithm::fda) | bit(MmaAlgorithm::cofda),
     "fda, cofda: carry-out bits of the fixed-point sum above its largest summand (default 0: every carry kept)",
     [](const DotConfig& c, int) -> Value {
       if (c.carry_bits == 0) return std::nullopt;
       return std::int64_t(c.carry_bits);
     },
     &DotConfig::carry_bits},
    {"scale_format", DotParameterType::text, 0, 0, 0, kScaled,
     "Block scale factors: ue8m0 or ue4m3 (after the b fields)",
     [](const DotConfig& c, int) -> Value {
       if (!c.scale) return std::nullopt;
       return text_of(c.scale->name);
     }},
    {"scale_block", DotParameterType::integer, 1, kMaxDotK, 0, kScaled,
     "Products per scale factor (default 32 for ue8m0, 16 for ue4m3)",
     [](const DotConfig& c, int) -> Value {
       if (!c.scale) return std::nullopt;
       return std::int64_t(c.scale_block);
     }},
    {"tree", DotParameterType::text, 0, 0, 0, kTree,
     "The tree algorithm's shape, e.g. \"((p0+p1)+p2)+c\" (p<k> products, c)",
     [](const DotConfig& c, int) -> Value { return c.tree->text(); }},
    {"sums", DotParameterType::text, 0, 0, 0, kTree, "tree: the sums' format (default: d's)",
     [](const DotConfig& c, int) -> Value { return text_of((c.tree->sum_format ? c.tree->sum_format : c.d)->name); }},
    {"products", DotParameterType::text, 0, 0, 0, kTree, "tree: exact (default), or the format products are rounded to",
     [](const DotConfig& c, int) -> Value {
       return c.tree->product_format ? text_of(c.tree->product_format->name) : "exact";
     }},
    {"rounding", DotParameterType::text, 0, 0, 0, kTree | bit(MmaAlgorithm::sfma),
     "tree: rounding of sums and products (default rne)",
     // An FMA chain rounds to nearest even.
     [](const DotConfig& c, int) -> Value { return text_of(c.tree ? name(c.tree->sum_rounding) : "rne"); }},
    {"flush", DotParameterType::list, 0, 0, 0, kTree, "tree: subnormals flushed in inputs, c, sums",
     [](const DotConfig& c, int) -> Value { return c.tree->flushed(); }},
    {"flush_inputs", DotParameterType::boolean, 0, 0, 0, bit(MmaAlgorithm::ocfda),
     "ocfda: subnormal a and b read as zeros (true) or kept (false)",
     [](const DotConfig& c, int) -> Value { return c.flush_inputs; }, nullptr, &DotConfig::flush_inputs},
}};

const std::array<std::string_view, table.size()> names = [] {
  std::array<std::string_view, table.size()> n{};
  for (std::size_t i = 0; i < table.size(); ++i) n[i] = table[i].name;
  return n;
}();

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

}  // namespace

bool DotParameter::taken_by_fused() const { return (algorithms & kFused) != 0; }

std::span<const DotParameter> dot_parameters() { return table; }

const DotParameter* find_dot_parameter(std::string_view name) {
  for (const DotParameter& p : table)
    if (p.name == name) return &p;
  return nullptr;
}

std::span<const std::string_view> dot_parameter_names() { return names; }

DotParameters dot_config_parameters(const DotConfig& c, int k) {
  DotParameters out;
  for (const DotParameter& p : table)
    if (p.taken_by(c.algorithm))
      if (auto v = p.value(c, k)) out.emplace(p.name, std::move(*v));
  return out;
}

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
    const DotParameter* p = find_dot_parameter(key);
    if (!p) {
      std::string list;
      for (std::string_view n : dot_parameter_names()) list += (list.empty() ? "" : ", ") + spell(n, spelling);
      return fail(key, "unknown parameter (known: " + list + ")");
    }
    if (!p->taken_by(alg))
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
  for (const DotParameter& p : table) {
    const DotParameterValue* v = p.integer ? get(p.name) : nullptr;
    if (!v) continue;
    const bool nullable = p.type == DotParameterType::integer_or_null;
    if (nullable && std::holds_alternative<std::monostate>(*v)) {
      cfg.*p.integer = kNoAlignFloor;
      continue;
    }
    // Within int's range; check() bounds the others further. An alignment floor far beyond any
    // format's exponents would overflow the exponent arithmetic.
    const std::int64_t* i = std::get_if<std::int64_t>(v);
    if (!i || *i < INT_MIN || *i > INT_MAX) return wrong(p.name, *v, nullable ? "null or an integer" : "an integer");
    if (nullable && (*i < p.min || *i > p.max))
      return fail(p.name, "must lie in " + std::to_string(p.min) + ".." + std::to_string(p.max) + ", not " +
                              std::to_string(*i));
    cfg.*p.integer = int(*i);
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
  for (const DotParameter& p : table) {
    const DotParameterValue* v = p.boolean ? get(p.name) : nullptr;
    if (!v) continue;
    if (!std::holds_alternative<bool>(*v)) return wrong(p.name, *v, "true or false");
    cfg.*p.boolean = std::get<bool>(*v);
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
    const DotParameter& p = *find_dot_parameter("scale_block");
    const std::int64_t* i = std::get_if<std::int64_t>(v);
    if (!i || *i < p.min || *i > p.max)
      return wrong(p.name, *v, "an integer in " + std::to_string(p.min) + ".." + std::to_string(p.max));
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
