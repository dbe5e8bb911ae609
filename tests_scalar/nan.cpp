// NaN propagation and the default NaN (IEEE 754-2019 section 6.2): which operand's NaN comes out
// of an operation with NaN operands (the first, the last, the one with the larger payload as x87
// does, or always a canonical NaN), whether signalling NaNs are quieted, whether the payload and the
// sign survive, whether subtraction flips the sign of a NaN subtrahend; and which NaN an invalid
// operation (0 * inf, inf - inf, 0 / 0, sqrt(-1)) returns: the quiet NaN with no payload (IEEE's
// usual choice, the model's canonical NaN), x86's negative one, or NVIDIA's all-ones pattern.
#include <fmt/format.h>

#include "tests_scalar/daumas_support.hpp"
#include "tests_scalar/families.hpp"

namespace gp::scalar {
namespace {

enum class Choice { first, last, larger_payload, canonical };

struct Policy {
  Choice choice;
  bool quiet;             // signalling NaNs come out quiet
  bool sub_flips;         // a - NaN returns the NaN with its sign flipped
  std::uint64_t canonical;  // for Choice::canonical
};

// The NaN results a device might use for invalid operations and canonical NaNs.
std::vector<std::pair<std::string, std::uint64_t>> default_nans(const Format& f) {
  std::vector<std::pair<std::string, std::uint64_t>> v = {{"quiet NaN, no payload", model::canonical_nan(f)}};
  if (f.nan == model::NanStyle::ieee) {
    v.push_back({"negative quiet NaN, no payload (x86)", negate(f, model::canonical_nan(f))});
    v.push_back({"all-ones NaN (NVIDIA)", model::pack(f, false, f.magnitude_mask())});
    v.push_back({"negative all-ones NaN", model::pack(f, true, f.magnitude_mask())});
  } else if (f.nan == model::NanStyle::all_ones && f.has_sign()) {
    v.push_back({"negative NaN", model::pack(f, true, f.magnitude_mask())});
  }
  return v;
}

std::string name(const Format& f, const Policy& p) {
  if (p.choice == Choice::canonical) {
    for (const auto& [n, bits] : default_nans(f))
      if (bits == p.canonical) return fmt::format("canonical NaN: {} ({})", n, hex(f, bits));
  }
  static constexpr const char* choices[] = {"first NaN operand", "last NaN operand", "NaN with the larger payload"};
  return fmt::format("{}, {}{}", choices[int(p.choice)], p.quiet ? "quieted" : "unchanged",
                     p.sub_flips ? ", a - NaN flips its sign" : "");
}

std::vector<Policy> policies(const Format& f) {
  std::vector<Policy> v;
  for (Choice c : {Choice::first, Choice::last, Choice::larger_payload})
    for (bool q : {true, false})
      for (bool s : {false, true}) v.push_back({c, q, s, 0});
  for (const auto& d : default_nans(f)) v.push_back({Choice::canonical, true, false, d.second});
  return v;
}

// The result of expression e (one operation) on NaN operands under policy p.
std::uint64_t predict(const Expr& e, const Case& c, const Policy& p) {
  const Format& in = *e.input_format;
  const Format& out = *e.output_format;
  if (p.choice == Choice::canonical) return p.canonical;
  const backends::Instr& op = e.code.back();
  std::vector<std::uint64_t> nans;
  for (std::size_t k = 0; k < c.operands.size(); ++k) {
    std::uint64_t x = c.operands[k];
    if (!model::is_nan(model::classify(in, x))) continue;
    if (p.sub_flips && op.op == Node::sub && k == 1) x = negate(in, x);
    nans.push_back(x);
  }
  std::uint64_t chosen = nans.front();
  if (p.choice == Choice::last) chosen = nans.back();
  if (p.choice == Choice::larger_payload) {
    for (std::uint64_t x : nans)
      if ((model::magnitude_of(in, x) & in.man_mask()) > (model::magnitude_of(in, chosen) & in.man_mask())) chosen = x;
  }
  const model::Unpacked u = model::unpack(in, chosen);
  std::uint64_t r = model::propagate_nan(out, in, u, model::Options{}).bits;  // quieted, payload re-aligned
  if (!p.quiet && u.cls == model::Class::signaling_nan && out.nan == model::NanStyle::ieee) {
    const std::uint64_t unquiet = r & ~(out.quiet_bit() << out.pad_bits);
    if (model::classify(out, unquiet) == model::Class::signaling_nan) r = unquiet;
  }
  return r;
}

struct Values {
  std::uint64_t qa, qb, sc;  // +qNaN payload 1, -qNaN larger payload, +sNaN payload 2
};

Values nan_values(const Format& f) {
  if (f.nan != model::NanStyle::ieee || f.man_bits < 3) {
    const std::uint64_t n = model::canonical_nan(f);
    return {n, n, n};
  }
  const std::uint64_t q = f.quiet_bit();
  return {model::pack(f, false, f.inf_magnitude() | q | 1), model::pack(f, true, f.inf_magnitude() | q | (q >> 1) | 2),
          model::pack(f, false, f.inf_magnitude() | 2)};
}

std::vector<Group> propagation_groups(const Format& f, const Format* g) {
  const Values n = nan_values(f);
  const std::uint64_t one_ = one(f), two = pow2(f, 1);
  const bool ieee = f.nan == model::NanStyle::ieee && f.man_bits >= 3;
  std::vector<Group> v;
  std::vector<Case> add = {{{n.qa, one_}, "qNaN(1) + 1"}, {{one_, n.qa}, "1 + qNaN(1)"}, {{n.qa, n.qb}, "qNaN(1) + -qNaN(big)"},
                           {{n.qb, n.qa}, "-qNaN(big) + qNaN(1)"}};
  if (ieee) {
    add.push_back({{n.sc, one_}, "sNaN(2) + 1"});
    add.push_back({{one_, n.sc}, "1 + sNaN(2)"});
    add.push_back({{n.sc, n.qa}, "sNaN(2) + qNaN(1)"});
    add.push_back({{n.qa, n.sc}, "qNaN(1) + sNaN(2)"});
  }
  v.push_back({backends::binary(Node::add, f), add});
  v.push_back({backends::binary(Node::sub, f),
               {{{n.qa, one_}, "qNaN(1) - 1"}, {{one_, n.qa}, "1 - qNaN(1)"}, {{one_, n.qb}, "1 - -qNaN(big)"}}});
  v.push_back({backends::binary(Node::mul, f),
               {{{n.qa, two}, "qNaN(1) * 2"}, {{two, n.qb}, "2 * -qNaN(big)"}, {{n.qa, n.qb}, "qNaN(1) * -qNaN(big)"}}});
  v.push_back({backends::binary(Node::div, f), {{{n.qa, two}, "qNaN(1) / 2"}, {{two, n.qb}, "2 / -qNaN(big)"}}});
  v.push_back({backends::unary(Node::sqrt, f), {{{n.qa}, "sqrt(qNaN(1))"}, {{n.qb}, "sqrt(-qNaN(big))"}}});
  v.push_back({backends::ternary(Node::fma, f),
               {{{n.qa, one_, one_}, "fma(qNaN(1), 1, 1)"},
                {{one_, n.qa, one_}, "fma(1, qNaN(1), 1)"},
                {{one_, one_, n.qa}, "fma(1, 1, qNaN(1))"},
                {{n.qa, n.qb, one_}, "fma(qNaN(1), -qNaN(big), 1)"},
                {{one_, n.qb, n.qa}, "fma(1, -qNaN(big), qNaN(1))"}}});
  if (g) {
    std::vector<Case> cv = {{{n.qa}, fmt::format("{}(qNaN(1))", g->name)}, {{n.qb}, fmt::format("{}(-qNaN(big))", g->name)}};
    if (ieee) cv.push_back({{n.sc}, fmt::format("{}(sNaN(2))", g->name)});
    v.push_back({backends::conversion(f, *g), cv});
  }
  return v;
}

std::vector<Group> invalid_groups(const Format& f) {
  const std::uint64_t pz = model::zero(f, false).bits, one_ = one(f);
  std::vector<Group> v;
  v.push_back({backends::binary(Node::div, f), {{{pz, pz}, "0 / 0"}}});
  v.push_back({backends::unary(Node::sqrt, f), {{{negate(f, one_)}, "sqrt(-1)"}}});
  if (f.has_inf()) {
    const std::uint64_t inf = model::pack(f, false, f.inf_magnitude());
    v.push_back({backends::binary(Node::mul, f), {{{pz, inf}, "0 * inf"}}});
    v.push_back({backends::binary(Node::add, f), {{{inf, negate(f, inf)}, "inf + -inf"}}});
    v.push_back({backends::binary(Node::sub, f), {{{inf, inf}, "inf - inf"}}});
  }
  return v;
}

class NanProbe final : public audit::ScalarProbe {
 public:
  std::string_view id() const override { return "scalar.nan.propagation"; }
  std::string_view title() const override { return "NaN propagation and the default NaN"; }
  std::string_view source() const override { return "IEEE 754-2019 section 6.2"; }
  bool applies(const Format& f) const override { return f.has_nan() && f.man_bits >= 1; }

  audit::Finding run(backends::Device& device, const Format& f, const audit::ProbeContext&) const override {
    if (!computes_in(device, f)) return no_format(f);
    audit::Finding finding;
    const std::vector<Policy> pols = policies(f);
    const HypothesisFactory make = [&f, &pols](const Expr& e, const std::vector<Case>&) {
      std::vector<Hypothesis> h;
      for (const Policy& p : pols) h.push_back({name(f, p), [&e, p](const Case& c) { return predict(e, c, p); }});
      return h;
    };
    const std::vector<Group> prop = propagation_groups(f, wider_on(device, f));
    auto b = select_all(device, prop, make, finding);
    if (!b) return audit::failed(b.error().message);

    const std::vector<Group> inv = invalid_groups(f);
    const HypothesisFactory make_default = [&f](const Expr&, const std::vector<Case>&) {
      std::vector<Hypothesis> h;
      for (const auto& [n, bits] : default_nans(f)) h.push_back({fmt::format("{} ({})", n, hex(f, bits)), [bits](const Case&) { return bits; }});
      return h;
    };
    auto d = select_all(device, inv, make_default, finding);
    if (!d) return audit::failed(d.error().message);

    std::vector<std::string> parts;
    finding.parameters["propagation"] = b->consistent;
    // The profile's NaN policy: canonical results, or the first operand's NaN (the model's rule).
    if (b->consistent.size() == 1 && b->consistent.front().rfind("canonical NaN", 0) == 0)
      finding.profile["nan"]["canonical"] = true;
    else if (!b->consistent.empty() && b->consistent.front().rfind("first NaN operand, quieted", 0) == 0)
      finding.profile["nan"]["canonical"] = false;
    if (b->consistent.empty()) {
      parts.push_back("NaN operands give results no propagation rule explains (see the observations)");
    } else {
      parts.push_back(join(b->consistent, " or ") + " comes out");
    }
    std::vector<std::string> defaults;
    for (const auto& o : d->outputs)
      for (std::uint64_t x : o) defaults.push_back(model::is_nan(model::classify(f, x)) ? hex(f, x) : show(f, x));
    std::sort(defaults.begin(), defaults.end());
    defaults.erase(std::unique(defaults.begin(), defaults.end()), defaults.end());
    finding.parameters["default_nan"] = defaults;
    if (d->consistent.size() == 1) parts.push_back("invalid operations give the " + d->consistent.front());
    else parts.push_back("invalid operations give " + join(defaults, ", "));
    finding.verdict = "NaN: " + join(parts, "; ");
    return finding;
  }
};

}  // namespace

void add_nan_probes(std::vector<const audit::ScalarProbe*>& out) {
  static const NanProbe nan;
  out.push_back(&nan);
}

}  // namespace gp::scalar
