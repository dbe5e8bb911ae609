// NaN propagation and the default NaN (IEEE 754-2019 section 6.2): which operand's NaN comes out
// of an operation with NaN operands (the first, the last, the one with the larger payload as x87
// does, or always a canonical NaN), whether signalling NaNs are quieted, whether the payload and the
// sign survive, whether subtraction flips the sign of a NaN subtrahend, in which order an fma takes
// its NaN operands where it has an order of its own (rusticl's and lavapipe's b, a, c; PoCL's a, b, c
// under -cl-fast-relaxed-math, whose add and mul take the last); and which NaN an invalid
// operation (0 * inf, inf - inf, 0 / 0, sqrt(-1)) returns: the quiet NaN with no payload (IEEE's
// usual choice, the model's canonical NaN), x86's negative one, or NVIDIA's all-ones pattern.
// Candidates: units with every NaN policy of the model (model::NanPolicy), transfers quieting
// signalling NaNs or not; outputs compared bit for bit, since the bits are the point. A conversion
// to a wider format runs on that format's unit, whose policy the candidates do not vary: it is
// measured beside the verdict, against the IEEE conversion.
#include <fmt/format.h>

#include "tests_scalar/daumas_support.hpp"
#include "tests_scalar/families.hpp"

namespace gp::scalar {
namespace {

// Whether f's cases include signalling NaNs (and payloads that tell operands apart).
bool ieee_nans(const Format& f) { return f.nan == model::NanStyle::ieee && f.man_bits >= 3; }

// The first default NaN of f with d's bits: the name the answers use.
model::DefaultNan distinct(const Format& f, model::DefaultNan d) {
  for (model::DefaultNan e : default_nans(f))
    if (model::default_nan(f, e) == model::default_nan(f, d)) return e;
  return d;
}

std::string_view describe(model::DefaultNan d) {
  switch (d) {
    case model::DefaultNan::quiet: return "quiet NaN, no payload";
    case model::DefaultNan::negative_quiet: return "negative quiet NaN, no payload (x86)";
    case model::DefaultNan::all_ones: return "all-ones NaN (NVIDIA)";
    case model::DefaultNan::negative_all_ones: return "negative all-ones NaN";
  }
  return "?";
}

// The question's answer: {propagation, quiet, sub_flips, fma_order, default_nan, default_nan_bits}. A
// canonical unit has no propagation details; quiet is what comes out of arithmetic (a transfer that
// quiets signalling NaNs hides whether the operation would); it and fma_order are asked only where
// f has signalling NaNs (payloads that tell operands apart). fma_order is there only where the fma's
// order is not the propagation rule's (an order "abc" with first is the unit without one).
struct NanAnswer {
  const Format* format = nullptr;                    // the storage format: the default NaN's bits
  std::optional<model::NanPropagation> propagation;  // none: every NaN result is canonical
  std::optional<bool> quiet;
  bool sub_flips = false;
  std::optional<model::FmaNanOrder> fma_order;
  model::DefaultNan default_nan = model::DefaultNan::quiet;  // the first of f with its bits (distinct)
};

std::string default_nan_bits(const NanAnswer& a) {
  return hex(*a.format, model::default_nan(*a.format, a.default_nan));
}

nlohmann::json answer_fields(const NanAnswer& a) {
  nlohmann::json j = nlohmann::json::object();
  j["propagation"] = a.propagation ? std::string(model::name(*a.propagation)) : "canonical";
  if (a.propagation) {
    if (a.quiet) j["quiet"] = *a.quiet;
    j["sub_flips"] = a.sub_flips;
    if (a.fma_order) j["fma_order"] = model::name(*a.fma_order);
  }
  j["default_nan"] = model::name(a.default_nan);
  j["default_nan_bits"] = default_nan_bits(a);
  return j;
}

NanAnswer nan_answer(const model::ScalarUnit& u) {
  const Format& f = u.storage_format();
  const model::NanPolicy& p = u.nan;
  NanAnswer a;
  a.format = &f;
  if (!p.canonical) {
    a.propagation = p.propagation;
    if (ieee_nans(f)) a.quiet = p.quiet || p.quiet_on_transfer;
    a.sub_flips = p.sub_flips;
    if (ieee_nans(f) && p.fma_order && p.fma_order != model::fma_order_of(p.propagation)) a.fma_order = p.fma_order;
  }
  a.default_nan = distinct(f, p.default_nan);
  return a;
}

std::string say(const NanAnswer& a) {
  std::string s;
  if (!a.propagation) {
    s = "every NaN result is the canonical NaN";
  } else {
    s = *a.propagation == model::NanPropagation::first  ? "the first NaN operand comes out"
        : *a.propagation == model::NanPropagation::last ? "the last NaN operand comes out"
                                                        : "the NaN operand with the larger payload comes out";
    if (a.quiet) s += *a.quiet ? ", quieted" : ", signalling ones unchanged";
    s += a.sub_flips ? "; a - NaN flips the NaN's sign" : "; a - NaN keeps the NaN's sign";
    if (a.fma_order) s += "; fma takes its NaN operands in the order " + model::words(*a.fma_order);
  }
  return fmt::format("{}; invalid operations give the {} ({})", s, describe(a.default_nan), default_nan_bits(a));
}

// The answer's profile keys: those the IEEE unit does not have, and `canonical` always.
backends::ScalarProfile nan_profile(const NanAnswer& a) {
  backends::ScalarProfile p;
  backends::ScalarProfile::Nan& n = p.nan.emplace();
  n.canonical = !a.propagation;
  if (a.propagation) {
    if (*a.propagation != model::NanPropagation::first) n.propagation = *a.propagation;
    if (a.quiet == false) n.quiet = false;
    if (a.sub_flips) n.sub_flips = true;
    n.fma_order = a.fma_order;
  }
  if (a.default_nan != model::DefaultNan::quiet) n.default_nan = a.default_nan;
  return p;
}

// The fma orders of a propagation rule's units: none (the rule's own) and, where the cases tell
// them apart, every order the rule does not amount to.
std::vector<std::optional<model::FmaNanOrder>> fma_orders(const Format& f, model::NanPropagation c) {
  std::vector<std::optional<model::FmaNanOrder>> v = {std::nullopt};
  if (ieee_nans(f))
    for (model::FmaNanOrder o : model::all_fma_nan_orders)
      if (o != model::fma_order_of(c)) v.push_back(o);
  return v;
}

// Every NaN policy whose arithmetic the cases tell apart, transfers quieting or not.
std::vector<model::NanPolicy> nan_policies(const Format& f) {
  std::vector<model::NanPolicy> v;
  for (bool transfer : {false, true})
    for (model::DefaultNan d : default_nans(f)) {
      for (model::NanPropagation c :
           {model::NanPropagation::first, model::NanPropagation::last, model::NanPropagation::larger_payload})
        for (const std::optional<model::FmaNanOrder>& order : fma_orders(f, c))
          for (bool quiet : {true, false})
            for (bool flips : {false, true}) {
              model::NanPolicy p;
              p.quiet_on_transfer = transfer;
              p.propagation = c;
              p.quiet = quiet;
              p.sub_flips = flips;
              p.default_nan = d;
              p.fma_order = order;
              v.push_back(p);
            }
      model::NanPolicy p;
      p.canonical = true;
      p.quiet_on_transfer = transfer;
      p.default_nan = d;
      v.push_back(p);
    }
  return v;
}

struct Values {
  std::uint64_t qa, qb, sc;  // +qNaN payload 1, -qNaN larger payload, +sNaN payload 2
};

Values nan_values(const Format& f) {
  if (!ieee_nans(f)) {
    const std::uint64_t n = model::canonical_nan(f);
    return {n, n, n};
  }
  const std::uint64_t q = f.quiet_bit();
  return {model::pack(f, false, f.inf_magnitude() | q | 1), model::pack(f, true, f.inf_magnitude() | q | (q >> 1) | 2),
          model::pack(f, false, f.inf_magnitude() | 2)};
}

std::vector<Group> propagation_groups(const Format& f) {
  const Values n = nan_values(f);
  const std::uint64_t one_ = one(f), two = pow2(f, 1);
  std::vector<Group> v;
  std::vector<Case> add = {{{n.qa, one_}, "qNaN(1) + 1"},
                           {{one_, n.qa}, "1 + qNaN(1)"},
                           {{n.qa, n.qb}, "qNaN(1) + -qNaN(big)"},
                           {{n.qb, n.qa}, "-qNaN(big) + qNaN(1)"}};
  if (ieee_nans(f)) {
    add.push_back({{n.sc, one_}, "sNaN(2) + 1"});
    add.push_back({{one_, n.sc}, "1 + sNaN(2)"});
    add.push_back({{n.sc, n.qa}, "sNaN(2) + qNaN(1)"});
    add.push_back({{n.qa, n.sc}, "qNaN(1) + sNaN(2)"});
  }
  v.push_back({backends::binary(Node::add, f), add});
  v.push_back({backends::binary(Node::sub, f),
               {{{n.qa, one_}, "qNaN(1) - 1"}, {{one_, n.qa}, "1 - qNaN(1)"}, {{one_, n.qb}, "1 - -qNaN(big)"}}});
  v.push_back(
      {backends::binary(Node::mul, f),
       {{{n.qa, two}, "qNaN(1) * 2"}, {{two, n.qb}, "2 * -qNaN(big)"}, {{n.qa, n.qb}, "qNaN(1) * -qNaN(big)"}}});
  v.push_back({backends::binary(Node::div, f), {{{n.qa, two}, "qNaN(1) / 2"}, {{two, n.qb}, "2 / -qNaN(big)"}}});
  v.push_back({backends::unary(Node::sqrt, f), {{{n.qa}, "sqrt(qNaN(1))"}, {{n.qb}, "sqrt(-qNaN(big))"}}});
  // Every pair of NaN operands in both orders: which of the two wins decides the fma's order of
  // its own (three pairs, a total order), and the larger payload is not an operand order (x86's
  // FMA forms take their operands in the order the compiler chose).
  v.push_back({backends::ternary(Node::fma, f),
               {{{n.qa, one_, one_}, "fma(qNaN(1), 1, 1)"},
                {{one_, n.qa, one_}, "fma(1, qNaN(1), 1)"},
                {{one_, one_, n.qa}, "fma(1, 1, qNaN(1))"},
                {{n.qa, n.qb, one_}, "fma(qNaN(1), -qNaN(big), 1)"},
                {{n.qb, n.qa, one_}, "fma(-qNaN(big), qNaN(1), 1)"},
                {{one_, n.qb, n.qa}, "fma(1, -qNaN(big), qNaN(1))"},
                {{one_, n.qa, n.qb}, "fma(1, qNaN(1), -qNaN(big))"},
                {{n.qa, one_, n.qb}, "fma(qNaN(1), 1, -qNaN(big))"},
                {{n.qb, one_, n.qa}, "fma(-qNaN(big), 1, qNaN(1))"}}});
  return v;
}

// Conversions of f's NaNs to the wider format g.
Group conversion_group(const Format& f, const Format& g) {
  const Values n = nan_values(f);
  std::vector<Case> cv = {{{n.qa}, fmt::format("{}(qNaN(1))", g.name)},
                          {{n.qb}, fmt::format("{}(-qNaN(big))", g.name)}};
  if (ieee_nans(f)) cv.push_back({{n.sc}, fmt::format("{}(sNaN(2))", g.name)});
  return {backends::conversion(f, g), cv};
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

class NanProbe final : public UnitProbe {
 public:
  std::string_view id() const override { return "scalar.nan.propagation"; }
  std::string_view title() const override { return "NaN propagation and the default NaN"; }
  std::string_view source() const override { return "IEEE 754-2019 section 6.2"; }
  bool applies(const Format& f) const override { return f.has_nan() && f.man_bits >= 1; }
  const UnitQuestion& question() const override {
    static const UnitQuestion q{{"NaN", "the NaN results of arithmetic", audit::typed(say)},
                                [](const model::ScalarUnit& u) { return audit::Answer(nan_answer(u)); },
                                audit::typed(nan_profile)};
    return q;
  }

  audit::Finding run(backends::Device& device, const Format& f, const audit::ProbeContext&) const override {
    if (!computes_in(device, f)) return no_format(f);
    std::vector<Group> groups = propagation_groups(f);
    for (Group& g : invalid_groups(f)) groups.push_back(std::move(g));
    const SpaceOf space = [](const Format& registers) {
      Space s;
      s.nans = nan_policies(registers);
      return s;
    };
    audit::Finding finding;
    auto out = conclude(device, groups, candidates(device, f, space), question(), finding);
    if (!out) return audit::failed(out.error());
    // The conversion to a wider format: a measurement against the model's IEEE conversion (the
    // payload and sign kept, quieted), the conversion's NaN being no question of f's unit.
    if (const Format* g = wider_on(device, f)) {
      const Group c = conversion_group(f, *g);
      auto outs = run_cases(device, c.expr, c.cases);
      if (!outs) return audit::failed(outs.error());
      bool as_ieee = true;
      for (std::size_t i = 0; i < c.cases.size(); ++i) {
        const std::uint64_t ieee = model::cvt(*g, f, model::Options{}, c.cases[i].operands[0]).bits;
        as_ieee = as_ieee && ieee == (*outs)[i];
        audit::Observation o = observation(c.expr, c.cases[i], (*outs)[i]);
        o.predictions.emplace_back("IEEE conversion (payload kept, quieted)", ieee);
        finding.observations.push_back(std::move(o));
      }
      finding.parameters["conversion_as_ieee"] = as_ieee;
      finding.verdict +=
          fmt::format("; conversion to {}: {}", g->name,
                      as_ieee ? "payload and sign kept, quieted" : "other NaNs than IEEE's (see the observations)");
    }
    return finding;
  }
};

}  // namespace

void add_nan_probes(std::vector<const audit::ScalarProbe*>& out) {
  static const NanProbe nan;
  out.push_back(&nan);
}

}  // namespace gp::scalar
