// The sign of zero (IEEE 754-2019 sections 6.3 and 5.4): -0 through a transfer and a conversion,
// products and quotients of signed zeros, sums of zeros and exact cancellations (x - x is +0 in
// every mode but rounding down, where it is -0), sqrt(-0) = -0, a negative product that underflows
// to zero, fma with zero terms. The model's zeros are IEEE's: what its parameters vary is the
// rounding (x - x, the underflowing product) and the fma that returns the product a*b for a zero
// addend (fma(1, -0, +0) = -0, and fma(1, +0, -0) = +0 where rounding down gives -0:
// model::ZeroAddend). Candidates: every rounding of the adder and of the
// multiplier, either zero addend; a device whose zeros follow another rule (every zero +0)
// reproduces none of them.
#include <fmt/format.h>

#include "tests_scalar/daumas_support.hpp"
#include "tests_scalar/families.hpp"
#include "tests_scalar/probe_support.hpp"

namespace gp::scalar {
namespace {

using model::Rounding;

// What a unit's parameters say about zeros: the sign of an exact cancellation (its adder's
// rounding) and whether fma(a, b, zero) is the product a*b.
struct ZeroAnswer {
  bool x_minus_x_negative = false;
  model::ZeroAddend zero_addend = model::ZeroAddend::ieee;
};

nlohmann::json answer_fields(const ZeroAnswer& a) {
  nlohmann::json j = {{"x_minus_x", a.x_minus_x_negative ? "-0" : "+0"}};
  if (a.zero_addend != model::ZeroAddend::ieee) j["fma.zero_addend"] = model::name(a.zero_addend);
  return j;
}

ZeroAnswer zero_answer(const model::ScalarUnit& u) {
  return {u.add.rounding.effective() == Rounding::rd, u.fma_zero_addend};
}

std::string say_zero(const ZeroAnswer& a) {
  std::string s = a.x_minus_x_negative ? "as IEEE 754 rounding down: -0 kept, x - x = -0"
                                       : "as IEEE 754: -0 kept, (-0) * (+0) = -0, sqrt(-0) = -0, x - x = +0";
  if (a.zero_addend != model::ZeroAddend::ieee) s += "; but fma(a, b, 0) is the product a*b: fma(1, -0, +0) = -0";
  return s;
}

backends::ScalarProfile zero_profile(const ZeroAnswer& a) {
  backends::ScalarProfile p;
  if (a.zero_addend != model::ZeroAddend::ieee) p.stated(backends::UnitOp::fma).zero_addend = a.zero_addend;
  return p;
}

std::vector<Group> zero_sign_groups(const Format& f, const Format* g) {
  const std::uint64_t pz = model::zero(f, false).bits, nz = model::zero(f, true).bits, one_ = one(f),
                      m1 = negate(f, one_), x = value(f, false, -1, 3), mx = negate(f, x);
  std::vector<Group> v;
  v.push_back({backends::transfer(f), {{{nz}, "transfer(-0)"}, {{pz}, "transfer(+0)"}}});
  v.push_back({backends::binary(Node::sub, f),
               {{{x, x}, "1.5 - 1.5"},
                {{mx, mx}, "-1.5 - (-1.5)"},
                {{nz, pz}, "-0 - +0"},
                {{pz, pz}, "+0 - +0"},
                {{nz, nz}, "-0 - (-0)"},
                {{pz, nz}, "+0 - (-0)"}}});
  v.push_back({backends::binary(Node::add, f),
               {{{nz, nz}, "-0 + -0"},
                {{nz, pz}, "-0 + +0"},
                {{pz, nz}, "+0 + -0"},
                {{x, mx}, "1.5 + (-1.5)"},
                {{mx, x}, "-1.5 + 1.5"},
                {{nz, one_}, "-0 + 1"}}});
  std::vector<Case> mul = {{{nz, pz}, "-0 * +0"},  {{pz, nz}, "+0 * -0"}, {{nz, nz}, "-0 * -0"},
                           {{one_, nz}, "1 * -0"}, {{m1, pz}, "-1 * +0"}, {{m1, nz}, "-1 * -0"}};
  if (-(f.precision() + 2) >= f.emin()) {  // a product far below the smallest subnormal
    const int e = -(f.precision() + 2);
    mul.push_back({{smallest_normal(f, true), pow2(f, e)}, fmt::format("-2^{} * 2^{} (underflows)", f.emin(), e)});
    mul.push_back({{smallest_normal(f), pow2(f, e, true)}, fmt::format("2^{} * -2^{} (underflows)", f.emin(), e)});
  }
  v.push_back({backends::binary(Node::mul, f), mul});
  std::vector<Case> div = {{{nz, one_}, "-0 / 1"}, {{pz, m1}, "+0 / -1"}, {{nz, m1}, "-0 / -1"}};
  if (f.has_inf()) {
    const std::uint64_t inf = model::pack(f, false, f.inf_magnitude());
    div.push_back({{one_, negate(f, inf)}, "1 / -inf"});
    div.push_back({{m1, inf}, "-1 / inf"});
  }
  v.push_back({backends::binary(Node::div, f), div});
  v.push_back({backends::unary(Node::sqrt, f), {{{nz}, "sqrt(-0)"}, {{pz}, "sqrt(+0)"}}});
  v.push_back({backends::ternary(Node::fma, f),
               {{{nz, one_, nz}, "fma(-0, 1, -0)"},
                {{one_, nz, pz}, "fma(1, -0, +0)"},
                {{x, x, negate(f, value(f, false, -2, 9))}, "fma(1.5, 1.5, -2.25)"},
                {{m1, pz, nz}, "fma(-1, +0, -0)"},
                {{one_, pz, nz}, "fma(1, +0, -0)"}}});
  if (g) {
    v.push_back({backends::conversion(f, *g), {{{nz}, fmt::format("{}(-0)", g->name)}}});
    v.push_back({backends::conversion(*g, f), {{{model::zero(*g, true).bits}, fmt::format("{}(-0)", f.name)}}});
  }
  return v;
}

class ZeroSignProbe final : public UnitProbe {
 public:
  std::string_view id() const override { return "scalar.zero.sign"; }
  std::string_view title() const override { return "Sign of zero"; }
  std::string_view source() const override { return "IEEE 754-2019 sections 6.3 and 5.4; Kahan's Paranoia"; }
  bool applies(const Format& f) const override { return f.has_negative_zero() && f.man_bits >= 2; }
  const UnitQuestion& question() const override {
    static const UnitQuestion q{{"SIGNED ZERO", "the sign of zero", audit::typed(say_zero)},
                                [](const model::ScalarUnit& u) { return audit::Answer(zero_answer(u)); },
                                audit::typed(zero_profile)};
    return q;
  }

  audit::Finding run(backends::Device& device, const Format& f, const audit::ProbeContext&) const override {
    if (!computes_in(device, f)) return no_format(f);
    const std::vector<Group> groups = zero_sign_groups(f, wider_on(device, f));
    // Zeros of sums and of fma follow the adder's rounding, the underflowing product the multiplier's.
    const SpaceOf space = [](const Format&) {
      Space s;
      for (const model::UnitRounding& r : unit_roundings()) {
        s.adders.push_back({r, std::nullopt, false});
        s.multipliers.push_back({r, std::nullopt, 0});
      }
      s.fma_zero_addends = {model::ZeroAddend::ieee, model::ZeroAddend::product};
      return s;
    };
    audit::Finding finding;
    auto out = conclude(device, groups, candidates(device, f, space), question(), finding);
    if (!out) return audit::failed(out.error());
    return finding;
  }
};

}  // namespace

void add_zero_probes(std::vector<const audit::ScalarProbe*>& out) {
  static const ZeroSignProbe zero;
  out.push_back(&zero);
}

}  // namespace gp::scalar
