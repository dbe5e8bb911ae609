#include "tests_scalar/daumas_support.hpp"

#include <fmt/format.h>

#include <memory>

namespace gp::scalar {

Expr single(Node op, const Format& f) {
  switch (op) {
    case Node::sqrt:
    case Node::neg: return backends::unary(op, f);
    case Node::fma:
    case Node::mad: return backends::ternary(op, f);
    default: return backends::binary(op, f);
  }
}

Expr compound(Node op1, Node op2, const Format& f) {
  backends::ExprBuilder b(f, 3);
  const int x = b.in(0), y = b.in(1), z = b.in(2);
  b.op(op2, b.op(op1, x, y), z);
  return b.done();
}

Expected<std::vector<std::uint64_t>> stepwise(backends::Device& device, const Format& f, Node op1, Node op2,
                                              const std::vector<Case>& cases) {
  std::vector<Case> first, second;
  for (const Case& c : cases) first.push_back({{c.operands.at(0), c.operands.at(1)}, c.note});
  auto t = run_cases(device, single(op1, f), first);
  if (!t) return t.error();
  for (std::size_t i = 0; i < cases.size(); ++i) second.push_back({{(*t)[i], cases[i].operands.at(2)}, cases[i].note});
  return run_cases(device, single(op2, f), second);
}

std::string describe_adder(const model::AdderParams& a) {
  if (!a.guard_bits) return fmt::format("correctly rounded ({})", model::name(a.rounding.mode));
  const int g = *a.guard_bits;
  return fmt::format("{}, {} guard bit{}, {}",
                     a.rounding.chop ? std::string("chopped") : "rounded " + std::string(model::name(a.rounding.mode)),
                     g, g == 1 ? "" : "s", a.sticky ? "sticky bit" : "no sticky bit");
}

std::vector<model::AdderParams> adder_hypotheses(int gmax) {
  using model::Rounding;
  using model::UnitRounding;
  std::vector<model::AdderParams> v = {{UnitRounding::ieee(Rounding::rne), std::nullopt, false},
                                       {UnitRounding::chopped(), 2, false},
                                       {UnitRounding::chopped(), 1, false},
                                       {UnitRounding::chopped(), 0, false}};
  const auto add = [&](const model::AdderParams& a) {
    if (std::find(v.begin(), v.end(), a) == v.end()) v.push_back(a);
  };
  for (Rounding r : model::all_roundings) add({UnitRounding::ieee(r), std::nullopt, false});
  std::vector<UnitRounding> rs = {UnitRounding::chopped()};
  for (Rounding r : model::all_roundings)
    if (r != Rounding::rz) rs.push_back(UnitRounding::ieee(r));
  for (const UnitRounding& r : rs)
    for (int g = 0; g <= gmax; ++g)
      for (bool sticky : {false, true}) add({r, g, sticky});
  return v;
}

Expected<std::vector<model::ScalarUnit>> fusion_candidates(backends::Device& device, const Format& f,
                                                           const audit::ProbeContext& ctx) {
  auto adders = reproducing_adders(device, f, ctx);
  if (!adders) return adders.error();
  auto multipliers = reproducing_multipliers(device, f, ctx);
  if (!multipliers) return multipliers.error();
  const std::vector<model::MultiplierParams> exact = {
      {model::UnitRounding::ieee(model::Rounding::rne), std::nullopt, 0},
      {model::UnitRounding::chopped(), std::nullopt, 0}};
  std::vector<model::ScalarUnit> out;
  for (const model::ScalarUnit& a : *adders)
    for (bool fma_fused : {true, false}) {
      model::ScalarUnit u = a;
      u.fma_fused = fma_fused;
      u.mad_fused = true;
      out.push_back(u);
      u.mad_fused = false;
      for (const model::MultiplierParams& m : u.format == &f ? *multipliers : exact) {
        u.mul = m;
        out.push_back(u);
      }
    }
  return out;
}

Expected<std::vector<model::ScalarUnit>> division_candidates(backends::Device& device, const Format& f,
                                                             const audit::ProbeContext& ctx) {
  std::vector<model::DivParams> divisions;
  for (const model::UnitRounding& ur : unit_roundings())
    for (model::DivMethod m : {model::DivMethod::correctly_rounded, model::DivMethod::reciprocal})
      divisions.push_back({m, ur, {}});
  return with_reproducing_multipliers(device,
                                      candidates(
                                          device, f,
                                          [&](const Format&) {
                                            Space s;
                                            s.divisions = divisions;
                                            return s;
                                          },
                                          unit_roundings()),
                                      ctx);
}

nlohmann::json answer_fields(const FusionAnswer& a) {
  nlohmann::json j = {{"fused", a.fused}};
  if (a.registers) j["registers"] = a.registers->name;
  return j;
}

FusionAnswer fusion_answer(const model::ScalarUnit& u, bool fused) {
  const Format& f = u.storage_format();
  if (u.format == &f) return {fused, nullptr};
  using model::Rounding;
  const Rounding r = u.add.rounding.effective(), s = u.convert.effective();
  const bool exact_product = u.format->precision() >= 2 * f.precision() && !u.mul.truncated_columns;
  const bool correctly_rounded = !u.add.guard_bits || (u.add.sticky && *u.add.guard_bits >= 2);
  const bool directed = s == Rounding::rz || s == Rounding::ru || s == Rounding::rd || s == Rounding::ra;
  if ((fused || exact_product) && correctly_rounded && (r == Rounding::ro || (r == s && directed)))
    return {true, nullptr};
  return {fused, u.format};
}

std::string in_registers(const Format* registers) {
  return registers ? fmt::format(" (in {} registers)", registers->name) : "";
}

std::vector<Case> double_rounding_cases(const Format& f) {
  const int p = f.precision();
  const std::uint64_t half = std::uint64_t{1} << (p - 1);
  std::uint64_t k = 0;
  while ((k + 1) * (k + 2) < half) ++k;  // the largest k with k (k + 1) < 2^(p-1)
  const std::uint64_t a = value(f, false, 1 - 2 * p, half + k + 1), b = value(f, false, 1 - p, half - k);
  // And just below a tie whose even neighbour is above: (2^(p-1) + 1)(2^(p-1) - 1) 2^(2-3p) + 1 + u,
  // which registers rounding up or away (or to nearest) lift onto the tie.
  const std::uint64_t a2 = value(f, false, 1 - 2 * p, half + 1), b2 = value(f, false, 1 - p, half - 1),
                      c2 = value(f, false, 1 - p, half + 1);
  std::vector<Case> v;
  for (bool neg : {false, true}) {
    const auto sg = [&](std::uint64_t x) { return neg ? negate(f, x) : x; };
    v.push_back({{sg(a), b, sg(one(f))},
                 fmt::format("{} * {} + {} (just off a tie)", show(f, sg(a)), show(f, b), show(f, sg(one(f))))});
    v.push_back({{sg(a2), b2, sg(c2)},
                 fmt::format("{} * {} + {} (just off a tie)", show(f, sg(a2)), show(f, b2), show(f, sg(c2)))});
  }
  return v;
}

int max_guard(const Format& f) { return std::min(2 * f.precision() + 4, model::max_guard_bits); }

AdderScale adder_scale(const Format& f) {
  const int imax = std::min(f.precision() + max_guard(f) + 2, f.emax() - 1 - f.emin());
  return {f.emin() + imax <= 0 ? 0 : f.emin() + imax, imax};
}

std::string times(int k) { return k ? fmt::format(" (times 2^{})", k) : std::string(); }

std::string hex(const Format& f, std::uint64_t bits) { return fmt::format("{:0{}x}", bits, (f.storage_bits + 3) / 4); }

std::string show(const Format& f, std::uint64_t bits) {
  const model::Unpacked u = model::unpack(f, bits);
  const char* s = u.neg ? "-" : "";
  switch (u.cls) {
    case model::Class::zero: return fmt::format("{}0", s);
    case model::Class::infinite: return fmt::format("{}inf", s);
    case model::Class::quiet_nan: return fmt::format("{}qNaN({})", s, hex(f, bits));
    case model::Class::signaling_nan: return fmt::format("{}sNaN({})", s, hex(f, bits));
    default: break;
  }
  if (model::magnitude_of(f, bits) == f.max_finite_magnitude()) return fmt::format("{}MAX", s);
  std::uint64_t sig = u.sig;
  int exp = u.exp;
  while (!(sig & 1)) {
    sig >>= 1;
    ++exp;
  }
  if (sig == 1) return fmt::format("{}2^{}", s, exp);
  return fmt::format("{}{}*2^{}", s, sig, exp);
}

model::Unpacked decode(const Format& f, std::uint64_t bits) { return model::unpack(f, bits); }

std::uint64_t random_normal(const Format& f, std::uint64_t r_sig, std::uint64_t r_exp, bool neg, int lo, int hi) {
  const int e = lo + int(r_exp % std::uint64_t(hi - lo + 1));
  return value(f, neg, e - f.man_bits, (std::uint64_t{1} << f.man_bits) | (r_sig & f.man_mask()));
}

const Format* wider_on(const backends::Device& device, const Format& f) {
  // The narrowest format the device has that holds every value of f exactly.
  const Format* best = nullptr;
  for (const Format* g : device.caps().formats) {
    if (g == &f || !g->has_sign() || g->man_bits < f.man_bits || g->emax() < f.emax() ||
        g->quantum_min() > f.quantum_min() || (f.has_inf() && !g->has_inf()) ||
        (f.has_nan() && g->nan != model::NanStyle::ieee))
      continue;
    if (g->man_bits == f.man_bits && g->exp_bits == f.exp_bits) continue;
    if (!best || g->storage_bits < best->storage_bits) best = g;
  }
  return best;
}

}  // namespace gp::scalar
