// The sign of zero (IEEE 754-2019 sections 6.3 and 5.4): -0 through a transfer and a conversion,
// products and quotients of signed zeros, sums of zeros and exact cancellations (x - x is +0 in
// every mode but rounding down, where it is -0), sqrt(-0) = -0, a negative product that underflows
// to zero, fma with zero terms. Hypotheses: IEEE signed zeros under each rounding mode (the modes
// only differ on cancellations and underflow), and unsigned zeros (every zero result is +0).
#include <fmt/format.h>

#include "tests_scalar/daumas_support.hpp"
#include "tests_scalar/families.hpp"

namespace gp::scalar {
namespace {

using model::Rounding;

const std::string kUnsigned = "unsigned zero (every zero is +0)";
std::string ieee(Rounding r) { return fmt::format("IEEE signed zero ({})", model::name(r)); }

std::vector<Hypothesis> hypotheses(const Expr& e, const std::vector<Case>&) {
  std::vector<Hypothesis> h;
  for (Rounding r : model::all_roundings) {
    ModelPolicy p;
    p.o.rounding = r;
    h.push_back({ieee(r), model_predictor(e, p)});
  }
  const Format& of = *e.output_format;
  h.push_back({kUnsigned, [&e, &of](const Case& c) {
                 const std::uint64_t x = model_eval(e, c.operands, ModelPolicy{});
                 return model::classify(of, x) == model::Class::zero ? model::zero(of, false).bits : x;
               }});
  return h;
}

std::vector<Group> build(const Format& f, const Format* g) {
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
               {{{nz, nz}, "-0 + -0"}, {{nz, pz}, "-0 + +0"}, {{pz, nz}, "+0 + -0"}, {{x, mx}, "1.5 + (-1.5)"},
                {{mx, x}, "-1.5 + 1.5"}, {{nz, one_}, "-0 + 1"}}});
  std::vector<Case> mul = {{{nz, pz}, "-0 * +0"}, {{pz, nz}, "+0 * -0"}, {{nz, nz}, "-0 * -0"},
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
                {{m1, pz, nz}, "fma(-1, +0, -0)"}}});
  if (g) {
    v.push_back({backends::conversion(f, *g), {{{nz}, fmt::format("{}(-0)", g->name)}}});
    v.push_back({backends::conversion(*g, f), {{{model::zero(*g, true).bits}, fmt::format("{}(-0)", f.name)}}});
  }
  return v;
}

class ZeroSignProbe final : public audit::ScalarProbe {
 public:
  std::string_view id() const override { return "scalar.zero.sign"; }
  std::string_view title() const override { return "Sign of zero"; }
  std::string_view source() const override { return "IEEE 754-2019 sections 6.3 and 5.4; Kahan's Paranoia"; }
  bool applies(const Format& f) const override { return f.has_negative_zero() && f.man_bits >= 2; }

  audit::Finding run(backends::Device& device, const Format& f, const audit::ProbeContext&) const override {
    if (!computes_in(device, f)) return no_format(f);
    const std::vector<Group> groups = build(f, wider_on(device, f));
    audit::Finding finding;
    auto b = select_all(device, groups, hypotheses, finding);
    if (!b) return audit::failed(b.error().message);
    const auto& cs = b->consistent;
    const auto has = [&](const std::string& h) { return std::find(cs.begin(), cs.end(), h) != cs.end(); };
    // x - x, from the sub group's first case.
    const std::uint64_t cancel = b->outputs[1][0];
    finding.parameters["x_minus_x"] = show(f, cancel);
    finding.parameters["consistent"] = cs;
    finding.parameters["ieee"] = !cs.empty() && !has(kUnsigned);
    if (has(ieee(Rounding::rne)) || has(ieee(Rounding::rz)) || has(ieee(Rounding::ru))) {
      finding.verdict = "SIGNED ZERO: as IEEE 754: -0 kept, (-0) * (+0) = -0, sqrt(-0) = -0, x - x = +0";
    } else if (has(ieee(Rounding::rd))) {
      finding.verdict = "SIGNED ZERO: as IEEE 754 rounding down: -0 kept, x - x = -0";
    } else if (has(kUnsigned)) {
      finding.verdict = "SIGNED ZERO: none: every zero result is +0";
    } else {
      const auto d = deviations(groups, *b, hypotheses, ieee(Rounding::rne), false);
      finding.verdict = fmt::format("SIGNED ZERO: differs from IEEE 754: {}", join(d, "; "));
    }
    return finding;
  }
};

}  // namespace

void add_zero_probes(std::vector<const audit::ScalarProbe*>& out) {
  static const ZeroSignProbe zero;
  out.push_back(&zero);
}

}  // namespace gp::scalar
