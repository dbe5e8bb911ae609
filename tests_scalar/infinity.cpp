// Arithmetic with infinities and overflow (IEEE 754-2019 sections 6.1, 7.2 to 7.4): inf + x,
// inf - inf, 0 * inf, x / 0 and its sign, 0 / 0, inf / inf, x / inf, sqrt(inf), sqrt(-inf),
// fma with infinite terms, conversions of infinities and of values too large for the format, and
// overflow of a sum, a product and a quotient. Any NaN is accepted where IEEE gives a NaN (which
// one is scalar.nan.propagation's business). Hypotheses: IEEE under each rounding mode (they
// differ on overflow: to infinity or to MAX), and a saturating unit (overflow gives MAX, an infinite
// operand still gives infinity).
#include <fmt/format.h>

#include "tests_scalar/daumas_support.hpp"
#include "tests_scalar/families.hpp"

namespace gp::scalar {
namespace {

using model::Rounding;

const std::string kSaturating = "IEEE, overflow saturates to MAX";
std::string ieee(Rounding r) { return fmt::format("IEEE ({})", model::name(r)); }

std::vector<Hypothesis> hypotheses(const Expr& e, const std::vector<Case>&) {
  std::vector<Hypothesis> h;
  for (Rounding r : model::all_roundings) {
    ModelPolicy p;
    p.o.rounding = r;
    h.push_back({ieee(r), model_predictor(e, p)});
  }
  ModelPolicy s;
  s.o.saturate = true;
  h.push_back({kSaturating, model_predictor(e, s)});
  return h;
}

std::vector<Group> build(const Format& f, const Format* g) {
  const std::uint64_t inf = model::pack(f, false, f.inf_magnitude()), ninf = negate(f, inf), pz = model::zero(f, false).bits,
                      nz = negate(f, pz), one_ = one(f), m1 = negate(f, one_), two = pow2(f, 1), m2 = negate(f, two),
                      max = largest(f), nmax = largest(f, true), half = pow2(f, -1);
  std::vector<Group> v;
  v.push_back({backends::transfer(f), {{{inf}, "transfer(inf)"}, {{ninf}, "transfer(-inf)"}}});
  v.push_back({backends::binary(Node::add, f),
               {{{inf, one_}, "inf + 1"},
                {{one_, ninf}, "1 + -inf"},
                {{inf, inf}, "inf + inf"},
                {{inf, ninf}, "inf + -inf"},
                {{ninf, nmax}, "-inf + -MAX"},
                {{max, max}, "MAX + MAX (overflow)"},
                {{nmax, nmax}, "-MAX + -MAX (overflow)"}}});
  v.push_back({backends::binary(Node::sub, f),
               {{{inf, inf}, "inf - inf"}, {{inf, ninf}, "inf - (-inf)"}, {{one_, inf}, "1 - inf"},
                {{nmax, max}, "-MAX - MAX (overflow)"}}});
  v.push_back({backends::binary(Node::mul, f),
               {{{inf, two}, "inf * 2"},
                {{inf, m2}, "inf * -2"},
                {{pz, inf}, "0 * inf"},
                {{ninf, nz}, "-inf * -0"},
                {{ninf, inf}, "-inf * inf"},
                {{max, two}, "MAX * 2 (overflow)"},
                {{max, m2}, "MAX * -2 (overflow)"},
                {{nmax, nmax}, "-MAX * -MAX (overflow)"}}});
  v.push_back({backends::binary(Node::div, f),
               {{{one_, pz}, "1 / 0"},
                {{m1, pz}, "-1 / 0"},
                {{one_, nz}, "1 / -0"},
                {{pz, pz}, "0 / 0"},
                {{inf, inf}, "inf / inf"},
                {{inf, two}, "inf / 2"},
                {{ninf, pz}, "-inf / 0"},
                {{two, inf}, "2 / inf"},
                {{max, half}, "MAX / 0.5 (overflow)"}}});
  v.push_back({backends::unary(Node::sqrt, f), {{{inf}, "sqrt(inf)"}, {{ninf}, "sqrt(-inf)"}, {{m1}, "sqrt(-1)"}}});
  v.push_back({backends::ternary(Node::fma, f),
               {{{inf, pz, one_}, "fma(inf, 0, 1)"},
                {{inf, one_, ninf}, "fma(inf, 1, -inf)"},
                {{inf, two, one_}, "fma(inf, 2, 1)"},
                {{one_, one_, ninf}, "fma(1, 1, -inf)"},
                {{max, two, pz}, "fma(MAX, 2, 0) (overflow)"}}});
  if (g) {
    const std::uint64_t ginf = model::pack(*g, false, g->inf_magnitude());
    v.push_back({backends::conversion(f, *g), {{{ninf}, fmt::format("{}(-inf)", g->name)}}});
    std::vector<Case> down = {{{ginf}, fmt::format("{}(inf)", f.name)}};
    if (g->emax() > f.emax() + 1) {
      down.push_back({{pow2(*g, f.emax() + 1)}, fmt::format("{}(2^{}) (overflow)", f.name, f.emax() + 1)});
      down.push_back({{pow2(*g, f.emax() + 1, true)}, fmt::format("{}(-2^{}) (overflow)", f.name, f.emax() + 1)});
    }
    v.push_back({backends::conversion(*g, f), down});
  }
  return v;
}

class InfinityProbe final : public audit::ScalarProbe {
 public:
  std::string_view id() const override { return "scalar.inf.arithmetic"; }
  std::string_view title() const override { return "Arithmetic with infinities, and overflow"; }
  std::string_view source() const override { return "IEEE 754-2019 sections 6.1 and 7.2 to 7.4; Kahan's Paranoia"; }
  bool applies(const Format& f) const override { return f.has_inf() && f.has_nan() && f.has_sign() && f.man_bits >= 1; }

  audit::Finding run(backends::Device& device, const Format& f, const audit::ProbeContext&) const override {
    if (!computes_in(device, f)) return no_format(f);
    const std::vector<Group> groups = build(f, wider_on(device, f));
    audit::Finding finding;
    auto b = select_all(device, groups, hypotheses, finding, true);
    if (!b) return audit::failed(b.error().message);
    const auto& cs = b->consistent;
    const auto has = [&](const std::string& h) { return std::find(cs.begin(), cs.end(), h) != cs.end(); };
    finding.parameters["consistent"] = cs;
    // MAX + MAX, from the add group.
    const std::uint64_t ovf = b->outputs[1][5];
    finding.parameters["overflow"] = model::classify(f, ovf) == model::Class::infinite ? "infinity" : show(f, ovf);
    const bool nearest = has(ieee(Rounding::rne)) || has(ieee(Rounding::rna));
    finding.parameters["ieee"] = !cs.empty();
    if (nearest) {
      finding.verdict = "INFINITY: as IEEE 754: inf - inf, 0 * inf, 0 / 0 are NaN, x / 0 is a signed infinity, overflow gives infinity";
    } else if (has(ieee(Rounding::rz))) {
      finding.verdict = "INFINITY: as IEEE 754 rounding toward zero: infinities propagate, overflow gives MAX (chopped)";
    } else if (has(kSaturating)) {
      finding.verdict = "INFINITY: infinities propagate, but overflow saturates to MAX in every direction";
    } else if (!cs.empty()) {
      finding.verdict = fmt::format("INFINITY: as IEEE 754 with overflow rounded {}", join(cs, " or "));
    } else {
      const auto d = deviations(groups, *b, hypotheses, ieee(Rounding::rne), true);
      finding.verdict = fmt::format("INFINITY: differs from IEEE 754: {}", join(d, "; "));
    }
    return finding;
  }
};

}  // namespace

void add_infinity_probes(std::vector<const audit::ScalarProbe*>& out) {
  static const InfinityProbe inf;
  out.push_back(&inf);
}

}  // namespace gp::scalar
