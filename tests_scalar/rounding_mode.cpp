// Rounding-mode identification (MMA-Sim section III-E, tables I and II) for add, sub, mul, div,
// sqrt, fma and conversions. Table I needs results a quarter and three quarters of an ulp above a
// representable value, on both signs; table II needs ties, on both signs and both parities of the
// kept part. Rather than fixing operands that only work for one format and op, the probe searches
// operands whose exact result falls in each of these twelve classes (the model classifies them),
// so the same probe serves every format and operation. The candidates are the units whose operation
// is correctly rounded in each mode (for fma, also unfused: the product and the sum rounded in one
// mode). Nearest modes square-root alike (a square root of a value of f is never a tie): one class,
// stated as rne. A quotient is a tie only below the smallest normal: those cases are built.
// Beside them the candidates hold the units of the device's kind that the other probes'
// measurements leave (an adder with guard bits, a truncated multiplier, a reciprocal
// division, wider registers): the question does not apply to them (the guard-bit, truncated-column,
// division and register probes say what they do), except where no input tells them from a
// correctly rounded operation (see rounding_answer). Without them, a mode that happens to fit the tables'
// cases would be stated of an operation that does not round that way: chopping with guard bits and
// no sticky bit is rz on these cases, not on 1.5 - 2^-30.
#include <fmt/format.h>

#include <algorithm>
#include <random>

#include "backends/reference/profile.hpp"
#include "tests_scalar/approximate.hpp"
#include "tests_scalar/daumas_support.hpp"
#include "tests_scalar/families.hpp"
#include "tests_scalar/probe_support.hpp"

namespace gp::scalar {
namespace {

using model::Rounding;

// Where an exact result lies relative to its truncation: the class of Tables I and II.
struct ResultClass {
  int rest;  // 1: below half, 2: half, 3: above half (0: exact)
  bool neg, odd;
  int index() const { return (rest - 1) * 4 + neg * 2 + odd; }  // 12 classes
};

// The rounding of an operation correctly rounded in f: its mode; for a square root the class of
// modes that give the same results (`equivalent_roundings`, stated by its first); for fma whether
// it is fused or the product and the sum each rounded in that mode. An approximate square root is
// known by that alone (its bound is measured: approximate.hpp).
struct RoundingAnswer {
  Rounding rounding = Rounding::rne;
  std::vector<std::string> equivalent_roundings;
  std::optional<bool> fused;
  bool approximate = false;
};

nlohmann::json answer_fields(const RoundingAnswer& a) {
  if (a.approximate) return {{"approximate", true}};
  nlohmann::json j = {{"rounding", model::name(a.rounding)}};
  if (!a.equivalent_roundings.empty()) j["equivalent_roundings"] = a.equivalent_roundings;
  if (a.fused) j["fused"] = *a.fused;
  return j;
}

const RoundingAnswer approximate_sqrt{Rounding::rne, {}, std::nullopt, true};

// The mode of an adder or multiplier answer that is correctly rounded in f: no registers' answer,
// no bits dropped (guard bits, truncated columns).
std::optional<Rounding> correctly_rounded_in_f(const Format* registers, std::optional<int> dropping,
                                               const model::UnitRounding& r) {
  if (registers || dropping) return std::nullopt;
  return r.effective();
}

std::optional<Rounding> adder_mode(const model::ScalarUnit& u) {
  const AdderAnswer a = adder_question().ask(u).as<AdderAnswer>();
  return correctly_rounded_in_f(a.registers, a.adder.guard_bits, a.adder.rounding);
}

std::optional<Rounding> multiplier_mode(const model::ScalarUnit& u) {
  const MultiplierAnswer m = truncation_answer(u);
  if (const auto r = correctly_rounded_in_f(m.registers, m.mul.truncated_columns, m.mul.rounding)) return r;
  // Registers of 2p bits and the range of every product of f hold it exactly: the store rounds it once.
  const Format &f = u.storage_format(), &reg = *u.format;
  if (&reg != &f && !m.mul.truncated_columns && reg.precision() >= 2 * f.precision() &&
      reg.emax() >= 2 * f.emax() + 1 && reg.emin() <= 2 * f.quantum_min())
    return u.convert.effective();
  return std::nullopt;
}

// The one rounding of a correctly rounded div or sqrt. Wider registers: a quotient or square root
// of values of f is never nearer to a value of f or a midpoint between two than about 2^-2p of
// itself, unless it is one exactly (Figueroa, "When is double rounding innocuous?", 1995):
// registers of p' >= 2p + 2 bits and the range of every such result round it, in any mode, to a
// value on the same side of each, and the store's rounding then gives what it gives of the exact
// result. Otherwise the question does not apply (nullopt).
std::optional<Rounding> once_through_registers(const model::ScalarUnit& u, const model::UnitRounding& op_rounding,
                                               bool quotient) {
  const Format& f = u.storage_format();
  if (u.format == &f) return op_rounding.effective();
  const Format& reg = *u.format;
  const int spread = quotient ? f.emax() - f.quantum_min() + 1 : 0;  // quotients reach 2^(emax - qmin + 1)
  if (reg.emax() < f.emax() + spread || reg.emin() > f.quantum_min() - spread) return std::nullopt;
  if (reg.precision() < 2 * f.precision() + 2) return std::nullopt;
  return u.convert.effective();
}

std::optional<Rounding> division_mode(const model::ScalarUnit& u) {
  if (u.div.method != model::DivMethod::correctly_rounded) return std::nullopt;
  return once_through_registers(u, u.div.rounding, true);
}

audit::Answer sqrt_mode_answer(const model::ScalarUnit& u) {
  if (u.sqrt_max_error) return audit::Answer(approximate_sqrt);
  const std::optional<Rounding> once = once_through_registers(u, u.sqrt, false);
  if (!once) return {};
  // A square root is never a tie (x = m^2 / 4 with m odd has more bits than f holds) nor
  // negative but -0 (exact): the nearest modes, rz and rd, ra and ru give the same results
  // on every input. Each class is stated by its first name.
  const Rounding r = *once;
  const std::vector<std::vector<Rounding>> classes = {
      {Rounding::rne, Rounding::rna, Rounding::rnz, Rounding::rnu, Rounding::rnd, Rounding::rno},
      {Rounding::rz, Rounding::rd},
      {Rounding::ra, Rounding::ru}};
  for (const auto& c : classes)
    if (std::find(c.begin(), c.end(), r) != c.end()) {
      std::vector<std::string> names;
      for (Rounding n : c) names.push_back(std::string(model::name(n)));
      return audit::Answer(RoundingAnswer{c[0], std::move(names), std::nullopt, false});
    }
  return audit::Answer(RoundingAnswer{r, {}, std::nullopt, false});
}

audit::Answer fma_mode_answer(const model::ScalarUnit& u) {
  const auto stated = [](Rounding r, bool fused) { return audit::Answer(RoundingAnswer{r, {}, fused, false}); };
  if (u.format != &u.storage_format()) {
    // Registers that round a*b+c once and then the store's rounding alone (the fusion probes'
    // answer: round to odd, Boldo and Melquiond) are a fused fma of f in the store's mode.
    if (fusion_answer(u, u.fma_fused || u.mad_fused).registers) return {};
    return stated(u.convert.effective(), true);
  }
  // A fused fma (or an unfused one that is the unit's fused MAD) is the exact a*b+c rounded
  // once in the adder's mode, whatever its guard bits.
  if (u.fma_fused || u.mad_fused) return stated(u.add.rounding.effective(), true);
  // Unfused: the product and the sum, each correctly rounded in one mode.
  if (const auto a = adder_mode(u); a && a == multiplier_mode(u)) return stated(*a, false);
  return {};
}

// The operation's rounding where the unit computes it correctly rounded in f, else none. The adder
// and the multiplier are read as the guard-bit and truncated-column probes read them: as the adder
// or multiplier of f that no input tells apart from the unit's (an adder with a sticky bit and
// enough guard bits is correctly rounded, tests_scalar/adder.cpp).
audit::Answer rounding_answer(Node op, const model::ScalarUnit& u) {
  const auto in_mode = [](std::optional<Rounding> r) {
    return r ? audit::Answer(RoundingAnswer{*r, {}, std::nullopt, false}) : audit::Answer();
  };
  switch (op) {
    // A conversion into the storage format rounds once, by the store's rounding, whatever the registers.
    case Node::cvt: return in_mode(u.convert.effective());
    case Node::add:
    case Node::sub: return in_mode(adder_mode(u));
    case Node::mul: return in_mode(multiplier_mode(u));
    case Node::div: return in_mode(division_mode(u));
    case Node::sqrt: return sqrt_mode_answer(u);
    case Node::fma: return fma_mode_answer(u);
    default: return {};
  }
}

std::string describe(Rounding mode) {
  switch (mode) {
    case Rounding::rne: return "to nearest, ties to even (IEEE default)";
    case Rounding::rna: return "to nearest, ties away from zero";
    case Rounding::rnz: return "to nearest, ties toward zero";
    case Rounding::rnu: return "to nearest, ties up";
    case Rounding::rnd: return "to nearest, ties down";
    case Rounding::rno: return "to nearest, ties to odd";
    case Rounding::rz: return "toward zero (chopped)";
    case Rounding::ru: return "up";
    case Rounding::rd: return "down";
    case Rounding::ra: return "away from zero";
    case Rounding::ro: return "to odd";
  }
  return std::string(model::name(mode));
}

std::string say_rounding(const RoundingAnswer& a) {
  if (a.approximate) return "approximate";
  const std::string how = !a.equivalent_roundings.empty() && a.rounding == Rounding::rne
                              ? "to nearest (ties never occur: " + join(a.equivalent_roundings, " or ") + ")"
                              : describe(a.rounding) + or_equivalently(a.equivalent_roundings);
  if (a.fused && !*a.fused) return "not fused: the product and the sum each rounded " + how;
  return "rounds " + how;
}

// The profile's fragment under `key`: the rounding (with its class); an approximate square root's
// special results are IEEE's (rne), and run() adds its bound.
backends::ScalarProfile rounding_profile(backends::UnitOp op, const RoundingAnswer& a) {
  backends::ScalarProfile p;
  backends::ScalarProfile::Operation& o = p.stated(op);
  o.rounding = model::UnitRounding::ieee(a.approximate ? Rounding::rne : a.rounding);
  if (!a.approximate && !a.equivalent_roundings.empty()) o.equivalent_roundings = a.equivalent_roundings;
  return p;
}

class RoundingProbe final : public UnitProbe {
 public:
  RoundingProbe(Node op, std::string id)
      : op_(op),
        id_(std::move(id)),
        q_{{std::string(shout(op)), fmt::format("the rounding of {}", shout(op)), audit::typed(say_rounding)},
           [op](const model::ScalarUnit& u) { return rounding_answer(op, u); },
           [op = *backends::find_unit_op(key())](const audit::Answer& a) {
             return rounding_profile(op, a.as<RoundingAnswer>());
           }} {}
  std::string_view id() const override { return id_; }
  std::string_view title() const override { return title_; }
  std::string_view source() const override { return "MMA-Sim (Xie et al.), section III-E, tables I and II"; }
  bool applies(const Format& f) const override {
    // A conversion needs a wider source the device also has; one-bit significands have no ties
    // of both parities in a binade.
    return f.man_bits >= 2 && (op_ != Node::cvt || wider(f));
  }
  const UnitQuestion& question() const override { return q_; }

  audit::Finding run(backends::Device& device, const Format& f, const audit::ProbeContext& ctx) const override {
    const Format* from = op_ == Node::cvt ? wider(f) : &f;
    if (!computes_in(device, f)) return no_format(f);
    if (!computes_in(device, *from)) return no_format(*from);
    const Expr expr = op_ == Node::cvt    ? backends::conversion(*from, f)
                      : op_ == Node::sqrt ? backends::unary(op_, f)
                      : op_ == Node::fma  ? backends::ternary(op_, f)
                                          : backends::binary(op_, f);
    std::vector<Case> cases = search(f, *from, expr.inputs, ctx.seed);
    if (cases.size() < reachable_count()) {
      return audit::failed(fmt::format("found operands for only {} of the {} classes of tables I and II in {}",
                                       cases.size(), reachable_count(), f.name));
    }
    if (op_ == Node::fma)
      for (Case& c : fma_fusion_cases(f)) cases.push_back(std::move(c));
    if (op_ == Node::div && f.has_subnormals() && f.man_bits + 2 <= f.emax())
      for (Case& c : quotient_tie_cases(f)) cases.push_back(std::move(c));
    auto units = mode_candidates(device, f, ctx);
    if (!units) return audit::failed(units.error());
    audit::Finding finding;
    finding.title = title_;
    auto out = conclude(device, {{expr, cases}}, *units, question(), finding);
    if (!out) return audit::failed(out.error());
    // No candidate: a compiled division or square root known by its bound (approximate.hpp). The
    // question does not apply to an approximate division (scalar.div.method says it); a square root
    // has no other probe of its method, and its profile fragment carries the bound.
    if (op_ == Node::div || op_ == Node::sqrt) {
      const bool is_sqrt = op_ == Node::sqrt;
      const auto bound = conclude_approximate(device, f, ctx, is_sqrt ? model::Op::sqrt : model::Op::div, cases,
                                              (*out)[0], question().question,
                                              is_sqrt ? audit::Answer(approximate_sqrt) : audit::Answer(), finding);
      if (bound && is_sqrt) {
        finding.profile = rounding_profile(backends::UnitOp::sqrt, approximate_sqrt);
        finding.profile.stated(backends::UnitOp::sqrt).max_ulps = *bound;
      }
    }
    return finding;
  }

 private:
  // (1 + u)^2 - (1 + 2u) = u^2 exactly when fused; a rounded product loses the u^2 (u = 2^(1-p)).
  // Scaled by 2^s so that u^2 is normal: a flushed result would show flushing, not rounding.
  static std::vector<Case> fma_fusion_cases(const Format& f) {
    std::vector<Case> cases;
    const int p = f.precision();
    const int s = std::min(std::max(0, f.emin() + 2 * p), f.emax() - 2);
    const std::uint64_t one_u = value(f, false, 1 - p, (std::uint64_t{1} << (p - 1)) + 1),
                        one_u_s = value(f, false, 1 - p + s, (std::uint64_t{1} << (p - 1)) + 1);
    const std::string scale = s == 0 ? "" : fmt::format(" 2^{}", s);
    for (bool neg : {false, true})
      cases.push_back(
          {{one_u_s, neg ? negate(f, one_u) : one_u, value(f, !neg, 1 - p + s, (std::uint64_t{1} << (p - 1)) + 2)},
           neg ? fmt::format("-(1 + u)^2{0} + (1 + 2u){0}", scale) : fmt::format("(1 + u)^2{0} - (1 + 2u){0}", scale)});
    // Sums just off a tie of f that wider registers round onto it: a fused fma of f rounds once.
    for (const Case& c : double_rounding_cases(f)) cases.push_back(c);
    return cases;
  }

  // A quotient of values of f is a tie only below the smallest normal's quantum, (2k + 1) / 2
  // quanta exactly; k = 1 and 2 give both parities of the kept part. Normal operands: a subnormal
  // one read as zero would show flushing, not rounding (a unit that flushes its subnormal
  // results shows no tie, and its nearest modes stay apart only where the tables part them).
  static std::vector<Case> quotient_tie_cases(const Format& f) {
    std::vector<Case> cases;
    const int m = f.man_bits + 2;
    const std::uint64_t y = value(f, false, m, 1);
    for (bool neg : {false, true})
      for (std::uint64_t odd : {3, 5}) {
        const std::uint64_t x = value(f, neg, f.quantum_min() - 1 + m, odd);
        cases.push_back({{x, y},
                         fmt::format("{} / {} (a tie below the smallest normal, kept part {})", show(f, x), show(f, y),
                                     odd == 3 ? "odd" : "even")});
      }
    return cases;
  }

  // The candidates: the operation correctly rounded in every mode (IEEE rne first), then the
  // units of the device's kind.
  Expected<std::vector<model::ScalarUnit>> mode_candidates(backends::Device& device, const Format& f,
                                                           const audit::ProbeContext& ctx) const {
    std::vector<model::ScalarUnit> units;
    for (Rounding r : model::all_roundings)
      for (bool fused : {true, false}) {
        if (!fused && op_ != Node::fma) continue;
        model::ScalarUnit u = model::ieee_unit(f);
        const model::UnitRounding ur = model::UnitRounding::ieee(r);
        u.add.rounding = u.mul.rounding = u.div.rounding = u.sqrt = u.convert = ur;
        u.fma_fused = fused;
        units.push_back(u);
      }
    auto kind = own_kind(device, f, ctx);
    if (!kind) return kind.error();
    std::vector<nlohmann::json> seen;
    for (const model::ScalarUnit& u : units) seen.push_back(backends::unit_to_json(u));
    const auto add = [&](const model::ScalarUnit& u) {  // the correctly rounded ones are there already
      nlohmann::json params = backends::unit_to_json(u);
      if (std::find(seen.begin(), seen.end(), params) != seen.end()) return;
      seen.push_back(std::move(params));
      units.push_back(u);
    };
    for (const model::ScalarUnit& u : *kind) add(u);
    // The quotient ties are subnormal results: each candidate also flushing them, in the operation
    // or in the store.
    if (op_ == Node::div)
      for (std::size_t i = 0, n = units.size(); i < n; ++i)
        for (bool output : {false, true})
          for (bool transfer : {false, true}) {
            model::ScalarUnit v = units[i];
            v.subnormals.flush_output = output;
            v.subnormals.flush_transfer = transfer;
            add(v);
          }
    return units;
  }

  // The units of the device's kind for the operation (see the file's comment).
  Expected<std::vector<model::ScalarUnit>> own_kind(backends::Device& device, const Format& f,
                                                    const audit::ProbeContext& ctx) const {
    switch (op_) {
      case Node::add:
      case Node::sub: return reproducing_adders(device, f, ctx);
      case Node::mul: return with_reproducing_multipliers(device, {model::ieee_unit(f)}, ctx);
      case Node::div: return division_candidates(device, f, ctx);
      case Node::fma: return fusion_candidates(device, f, ctx);
      default: return std::vector<model::ScalarUnit>{};
    }
  }

  static const Format* wider(const Format& f) {
    if (f.precision() < model::binary32.precision() && f.storage_bits <= 32) return &model::binary32;
    if (&f == &model::binary32) return &model::binary64;
    return nullptr;
  }

  std::string_view key() const {
    switch (op_) {
      case Node::add: return "add";
      case Node::sub: return "sub";
      case Node::mul: return "mul";
      case Node::div: return "div";
      case Node::sqrt: return "sqrt";
      case Node::fma: return "fma";
      default: return "cvt";
    }
  }

  model::Result exact_op(const Format& f, const Format& from, Rounding r, const std::vector<std::uint64_t>& x) const {
    model::Options o;
    o.rounding = r;
    switch (op_) {
      case Node::add: return model::add(f, o, x[0], x[1]);
      case Node::sub: return model::sub(f, o, x[0], x[1]);
      case Node::mul: return model::mul(f, o, x[0], x[1]);
      case Node::div: return model::div(f, o, x[0], x[1]);
      case Node::sqrt: return model::sqrt(f, o, x[0]);
      case Node::fma: return model::fma(f, o, x[0], x[1], x[2]);
      default: return model::cvt(f, from, o, x[0]);
    }
  }

  // The class of an operand tuple's exact result, from the model's roundings of it.
  std::optional<ResultClass> classify(const Format& f, const Format& from, const std::vector<std::uint64_t>& x) const {
    const model::Result z = exact_op(f, from, Rounding::rz, x);
    const model::Result a = exact_op(f, from, Rounding::ra, x);
    if (z.bits == a.bits || (z.flags & (model::Flag::overflow | model::Flag::underflow | model::Flag::invalid)))
      return std::nullopt;
    if (model::classify(f, z.bits) != model::Class::normal) return std::nullopt;
    const std::uint64_t na = exact_op(f, from, Rounding::rna, x).bits, nz = exact_op(f, from, Rounding::rnz, x).bits;
    const int rest = na != nz ? 2 : na == a.bits ? 3 : 1;
    return ResultClass{rest, model::sign_of(f, z.bits), (z.bits >> f.pad_bits & 1) != 0};
  }

  // Classes the search can reach: a quotient or a square root of p-bit numbers is never a tie of
  // normal results (quotient ties below the smallest normal are added in run), and a square root
  // is never negative.
  bool reachable(const ResultClass& c) const {
    if ((op_ == Node::div || op_ == Node::sqrt) && c.rest == 2) return false;
    return !(op_ == Node::sqrt && c.neg);
  }
  std::size_t reachable_count() const {
    std::size_t n = 0;
    for (int rest = 1; rest <= 3; ++rest)
      for (bool neg : {false, true})
        for (bool odd : {false, true}) n += reachable({rest, neg, odd});
    return n;
  }

  // Operands near 1, both signs, until every reachable class has a case. Half of the operands are
  // "short" (one to three significant bits), so that products and sums land on ties and quarters
  // often instead of once in 2^p draws.
  std::vector<Case> search(const Format& f, const Format& from, int inputs, std::uint64_t seed) const {
    std::mt19937_64 rng(seed ^ 0x9e3779b97f4a7c15ULL);
    const Format& in = op_ == Node::cvt ? from : f;
    std::vector<Case> found(12);
    std::vector<bool> have(12, false);
    std::size_t count = 0;
    const std::size_t want = reachable_count();
    const auto operand = [&](int exp_spread) {
      std::uint64_t frac = rng() & in.man_mask();
      if (op_ == Node::cvt) {
        // A conversion's source: random bits down to one or two below the destination's last
        // bit, so that ties and quarters occur.
        const int keep = f.man_bits + 1 + int(rng() % 2);
        if (in.man_bits > keep) frac &= ~((std::uint64_t{1} << (in.man_bits - keep)) - 1);
      } else if (rng() % 2) {
        const int keep = 1 + int(rng() % 3);
        if (in.man_bits > keep) frac &= ~((std::uint64_t{1} << (in.man_bits - keep)) - 1);
      }
      const int e = int(rng() % std::uint64_t(exp_spread)) - exp_spread / 2;
      return value(in, rng() & 1, e - in.man_bits, (std::uint64_t{1} << in.man_bits) | frac);
    };
    for (int trial = 0; trial < 200000 && count < want; ++trial) {
      std::vector<std::uint64_t> x(static_cast<std::size_t>(inputs));
      for (std::uint64_t& v : x) v = operand(3);
      if (op_ == Node::sqrt) x[0] &= ~in.sign_mask();
      // fma: an addend far below the product half of the time, so that its bits decide the rounding.
      if (op_ == Node::fma && rng() % 2)
        x[2] = operand(2) - (std::uint64_t(in.precision() / 2 + int(rng() % std::uint64_t(in.precision())))
                             << in.man_bits << in.pad_bits);
      // A normal addend: a zero one (or a subnormal one flushed) would show the product's rounding
      // where the fma returns it (model::ZeroAddend::product).
      if (op_ == Node::fma && model::classify(in, x[2]) != model::Class::normal) continue;
      const auto c = classify(f, from, x);
      if (!c || !reachable(*c) || have[std::size_t(c->index())]) continue;
      have[std::size_t(c->index())] = true;
      ++count;
      static constexpr const char* rests[] = {"", "below half", "tie", "above half"};
      found[std::size_t(c->index())] = {x, fmt::format("{} {}, kept part {}", c->neg ? "negative" : "positive",
                                                       rests[c->rest], c->odd ? "odd" : "even")};
    }
    std::vector<Case> cases;
    for (std::size_t i = 0; i < 12; ++i)
      if (have[i]) cases.push_back(found[i]);
    return cases;
  }

  Node op_;
  std::string id_;
  std::string title_ = fmt::format("Rounding of {}", std::string(shout(op_)));
  UnitQuestion q_;
};

}  // namespace

void add_rounding_probes(std::vector<const audit::ScalarProbe*>& out) {
  static const RoundingProbe probes[] = {
      {Node::add, "scalar.add.rounding"}, {Node::sub, "scalar.sub.rounding"},   {Node::mul, "scalar.mul.rounding"},
      {Node::div, "scalar.div.rounding"}, {Node::sqrt, "scalar.sqrt.rounding"}, {Node::fma, "scalar.fma.rounding"},
      {Node::cvt, "scalar.cvt.rounding"},
  };
  for (const RoundingProbe& p : probes) out.push_back(&p);
}

}  // namespace gp::scalar
