// Arithmetic with infinities and overflow (IEEE 754-2019 sections 6.1, 7.2 to 7.4): inf + x,
// inf - inf, 0 * inf, x / 0 and its sign, 0 / 0, inf / inf, x / inf, sqrt(inf), sqrt(-inf),
// fma with infinite terms, conversions of infinities and of values too large for the format, and
// overflow of a sum, a product, a quotient and fma(x, y, 0). Any NaN is accepted where IEEE gives a
// NaN (which one is scalar.nan.propagation's business). The model's infinities are IEEE's; what its
// parameters vary is the rounding that decides an overflow (infinity, MAX, or by sign): the
// adder's, the multiplier's, the division's and the conversions'. Candidates: each of those four
// overflow behaviours for each, fma() fused or not; a device that saturates every overflow
// (to MAX in every rounding) is none of them.
#include <fmt/format.h>

#include <utility>

#include "tests_scalar/daumas_support.hpp"
#include "tests_scalar/families.hpp"
#include "tests_scalar/probe_support.hpp"

namespace gp::scalar {
namespace {

using model::Rounding;

// Where a rounding takes an overflow (model/rounding.hpp): infinity, MAX, or one of each by sign.
enum class Overflow { infinity, max, infinity_up, infinity_down };

Overflow overflow_of(const model::UnitRounding& r) {
  switch (r.effective()) {
    case Rounding::rz:
    case Rounding::ro: return Overflow::max;
    case Rounding::ru: return Overflow::infinity_up;
    case Rounding::rd: return Overflow::infinity_down;
    default: return Overflow::infinity;
  }
}

std::string_view overflow_words(Overflow o) {
  switch (o) {
    case Overflow::max: return "MAX";
    case Overflow::infinity_up: return "infinity up, MAX down";
    case Overflow::infinity_down: return "MAX up, infinity down";
    default: return "infinity";
  }
}

// The overflow of each operation the probe overflows: a sum (the adder), a product (the
// multiplier), a quotient (its rounding, or the multiplier's for x * (1/y)) and fma(x, y, 0) (the
// adder's rounding when fused, the multiplier's when it returns the product or is an unfused MAD).
// Registers wider in range than the storage overflow in the store (its rounding) instead.
struct OverflowAnswer {
  Overflow add, mul, div, fma;
  bool alike() const { return mul == add && div == add && fma == add; }
};

// The operations as the answer names them, in the record's (alphabetical) order.
constexpr std::pair<const char*, Overflow OverflowAnswer::*> kOverflowOps[] = {{"add", &OverflowAnswer::add},
                                                                               {"div", &OverflowAnswer::div},
                                                                               {"fma", &OverflowAnswer::fma},
                                                                               {"mul", &OverflowAnswer::mul}};

nlohmann::json answer_fields(const OverflowAnswer& a) {
  if (a.alike()) return {{"overflow", overflow_words(a.add)}};
  nlohmann::json per = nlohmann::json::object();
  for (const auto& [op, o] : kOverflowOps) per[op] = overflow_words(a.*o);
  return {{"overflow", per}};
}

audit::Answer overflow_answer(const model::ScalarUnit& u) {
  const Format& f = u.storage_format();
  if (u.format != &f) {
    if (u.format->emax() <= 2 * f.emax() + 1) return audit::Answer();  // MAX * MAX may overflow either
    const Overflow store = overflow_of(u.convert);
    return audit::Answer(OverflowAnswer{store, store, store, store});
  }
  const bool fused = u.fma_zero_addend == model::ZeroAddend::ieee && (u.fma_fused || u.mad_fused);
  return audit::Answer(
      OverflowAnswer{overflow_of(u.add.rounding), overflow_of(u.mul.rounding),
                     overflow_of(u.div.method == model::DivMethod::reciprocal ? u.mul.rounding : u.div.rounding),
                     overflow_of(fused ? u.add.rounding : u.mul.rounding)});
}

std::string say_overflow(const OverflowAnswer& a) {
  if (a.alike()) {
    if (a.add == Overflow::infinity)
      return "as IEEE 754: inf - inf, 0 * inf, 0 / 0 are NaN, x / 0 is a signed infinity, overflow gives infinity";
    if (a.add == Overflow::max)
      return "as IEEE 754 rounding toward zero: infinities propagate, overflow gives MAX (chopped)";
    return fmt::format("infinities as IEEE 754; overflow gives {}", overflow_words(a.add));
  }
  std::vector<std::string> each;
  for (const auto& [op, o] : kOverflowOps) each.push_back(fmt::format("{} {}", op, overflow_words(a.*o)));
  return fmt::format("infinities as IEEE 754; overflow: {}", join(each, ", "));
}

std::vector<Group> infinity_groups(const Format& f, const Format* g) {
  const std::uint64_t inf = model::pack(f, false, f.inf_magnitude()), ninf = negate(f, inf),
                      pz = model::zero(f, false).bits, nz = negate(f, pz), one_ = one(f), m1 = negate(f, one_),
                      two = pow2(f, 1), m2 = negate(f, two), max = largest(f), nmax = largest(f, true),
                      half = pow2(f, -1);
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
               {{{inf, inf}, "inf - inf"},
                {{inf, ninf}, "inf - (-inf)"},
                {{one_, inf}, "1 - inf"},
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
                {{max, half}, "MAX / 0.5 (overflow)"},
                {{nmax, half}, "-MAX / 0.5 (overflow)"}}});
  v.push_back({backends::unary(Node::sqrt, f), {{{inf}, "sqrt(inf)"}, {{ninf}, "sqrt(-inf)"}, {{m1}, "sqrt(-1)"}}});
  v.push_back({backends::ternary(Node::fma, f),
               {{{inf, pz, one_}, "fma(inf, 0, 1)"},
                {{inf, one_, ninf}, "fma(inf, 1, -inf)"},
                {{inf, two, one_}, "fma(inf, 2, 1)"},
                {{one_, one_, ninf}, "fma(1, 1, -inf)"},
                {{max, two, pz}, "fma(MAX, 2, 0) (overflow)"},
                {{nmax, two, pz}, "fma(-MAX, 2, 0) (overflow)"}}});
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

class InfinityProbe final : public UnitProbe {
 public:
  std::string_view id() const override { return "scalar.inf.arithmetic"; }
  std::string_view title() const override { return "Arithmetic with infinities, and overflow"; }
  std::string_view source() const override { return "IEEE 754-2019 sections 6.1 and 7.2 to 7.4; Kahan's Paranoia"; }
  bool applies(const Format& f) const override { return f.has_inf() && f.has_nan() && f.has_sign() && f.man_bits >= 1; }
  const UnitQuestion& question() const override {
    static const UnitQuestion q{
        {"INFINITY", "arithmetic with infinities and overflow", audit::typed(say_overflow)}, overflow_answer, nullptr};
    return q;
  }

  audit::Finding run(backends::Device& device, const Format& f, const audit::ProbeContext&) const override {
    if (!computes_in(device, f)) return no_format(f);
    const Format* g = wider_on(device, f);
    const std::vector<Group> groups = infinity_groups(f, g);
    // One rounding per overflow behaviour (the cases round nothing else).
    const std::vector<model::UnitRounding> rs = {
        model::UnitRounding::ieee(Rounding::rne), model::UnitRounding::chopped(),
        model::UnitRounding::ieee(Rounding::ru), model::UnitRounding::ieee(Rounding::rd)};
    const SpaceOf space = [&rs](const Format&) {
      Space s;
      for (const model::UnitRounding& r : rs) {
        s.adders.push_back({r, std::nullopt, false});
        s.multipliers.push_back({r, std::nullopt, 0});
        s.divisions.push_back({model::DivMethod::correctly_rounded, r, {}});
      }
      s.fma_fused = {true, false};
      return s;
    };
    std::vector<model::ScalarUnit> units;
    // Conversions from g overflow with the conversion's rounding: vary it where there are some.
    for (const model::ScalarUnit& u : candidates(device, f, space))
      for (const model::UnitRounding& r : g ? rs : std::vector<model::UnitRounding>{u.convert}) {
        units.push_back(u);
        units.back().convert = r;
      }
    audit::Finding finding;
    auto out = conclude(device, groups, units, question(), finding, {}, true);
    if (!out) return audit::failed(out.error());
    return finding;
  }
};

}  // namespace

void add_infinity_probes(std::vector<const audit::ScalarProbe*>& out) {
  static const InfinityProbe inf;
  out.push_back(&inf);
}

}  // namespace gp::scalar
