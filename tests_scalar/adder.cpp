// Guard bits of the adder and of cascaded adders (Daumas, da Graca, Defour 2006, section 2.3).
//
// scalar.add.guard_bits: 1.5 - 2^-i for i = 1 .. p + 2p + 6 (the paper went to p + 40; adder_scale), with sums and
// differences whose smaller operand has one, two or many bits beyond the precision, and random pairs. Every adder of
// model/scalar_unit.hpp is a hypothesis: g guard bits (0 .. p + 2) with or without a sticky bit under chop or any
// rounding mode, and the correctly rounded adder in every mode. The paper found 1.5 - 2^-i == 1.5 for i >= 26 on both
// its GPUs: chopped, two guard bits, no sticky. A correctly rounded adder and one with g >= 2 guard bits and a sticky
// bit give the same results (Coonen): the verdict then says "correctly rounded".
//
// scalar.add.cascaded: (1.5 - 2^-i) - 1.5 as one expression, two dependent additions issued
// together. The second subtraction is exact (Sterbenz), so the output is what the first adder made
// of 1.5 - 2^-i, minus 1.5: the paper found 0 for i >= 26 on NVIDIA (the same adder as a single
// addition) and for i >= 25 on ATI (one guard bit only, where a single addition has two).
#include <fmt/format.h>

#include <optional>
#include <random>
#include <set>

#include "model/scalar_unit.hpp"
#include "tests_scalar/daumas_support.hpp"
#include "tests_scalar/families.hpp"

namespace gp::scalar {
namespace {

using model::AdderParams;
using model::Rounding;
using model::UnitRounding;

// The adder's cases: the paper's 1.5 - 2^-i (a - b), then sums a + b: powers of two and small
// patterns at every distance, near ties, all mirrored, and random pairs at random distances.
struct AdderCases {
  std::vector<Case> paper, sums, random;
};

AdderCases adder_cases(const Format& f, const audit::ProbeContext& ctx) {
  const auto [k, imax] = adder_scale(f);
  const int p = f.precision();
  std::vector<Case> paper, sums;
  for (int i = 1; i <= imax; ++i) {
    paper.push_back({{value(f, false, k - 1, 3), pow2(f, k - i)}, fmt::format("1.5 - 2^-{}{}", i, times(k))});
    sums.push_back({{pow2(f, k), pow2(f, k - i)}, fmt::format("1 + 2^-{}{}", i, times(k))});
    if (i >= 2) {
      sums.push_back(
          {{value(f, false, k - 1, 3), value(f, false, k - i - 1, 3)}, fmt::format("1.5 + 1.5*2^-{}{}", i, times(k))});
      sums.push_back({{pow2(f, k), value(f, true, k - i - 1, 3)}, fmt::format("1 + -1.5*2^-{}{}", i, times(k))});
    }
    // A subtrahend with bits all the way down: 1 + 2^-(p-1) below the precision.
    sums.push_back({{value(f, false, k - 1, 3), value(f, true, k - i - p + 1, (std::uint64_t{1} << (p - 1)) | 1)},
                    fmt::format("1.5 + -(1 + 2^-{})*2^-{}{}", p - 1, i, times(k))});
    // The same from 1: the difference falls into the binade below, whose ties need one bit more.
    sums.push_back({{pow2(f, k), value(f, true, k - i - p + 1, (std::uint64_t{1} << (p - 1)) | 1)},
                    fmt::format("1 + -(1 + 2^-{})*2^-{}{}", p - 1, i, times(k))});
  }
  // Near ties: the smaller operand is half an ulp (or a quarter, or twice that) plus or minus 2^-m
  // of itself, so that a rest just above or below a tie, or exactly on it once bits beyond the
  // guard bits are dropped, tells how many there are, for the to-nearest modes too. a = 1 makes
  // a difference fall into the binade below, one more bit down.
  for (int m = 1; m <= std::min(p - 1, 10); ++m)
    for (int i = p - 1; i <= p + 1 && i <= imax; ++i)
      for (std::uint64_t a : {value(f, false, k - 1, 3), pow2(f, k)})
        for (bool neg : {false, true}) {
          const std::uint64_t sig = (std::uint64_t{1} << m) + (neg ? std::uint64_t(-1) : 1);  // 2^m +- 1
          const std::uint64_t b = value(f, true, k - i - m, sig);
          sums.push_back(
              {{a, b}, fmt::format("{} - (1 {} 2^-{})*2^-{}{}", show(f, a), neg ? "-" : "+", m, i, times(k))});
          sums.push_back({{a, negate(f, b)},
                          fmt::format("{} + (1 {} 2^-{})*2^-{}{}", show(f, a), neg ? "-" : "+", m, i, times(k))});
        }
  // An exact zero: its sign tells rounding down from the others.
  sums.push_back({{value(f, false, k - 1, 3), value(f, true, k - 1, 3)}, fmt::format("1.5 + -1.5{}", times(k))});
  // Sums that carry into the next binade, so that their last bit shifts out (the only rest an adder
  // without guard bits sees): kept parts odd and even, rests zero and half.
  for (std::uint64_t base : {std::uint64_t{2}, std::uint64_t{3}})  // 1.0 and 1.5
    for (std::uint64_t m = 0; m < 4; ++m)
      for (std::uint64_t n = 0; n < 4; ++n) {
        const std::uint64_t a = value(f, false, k - p + 1, (base << (p - 2)) + m),
                            b = value(f, false, k - p + 1, (base << (p - 2)) + n);
        sums.push_back({{a, b}, fmt::format("{} + {}", show(f, a), show(f, b))});
      }
  // Sums that carry out with many bits set below the precision (a significand of all ones plus one
  // ending in ...11, ...01, ...11 or ...01 again, up to three binades down): after the shift the
  // rest is above a tie, which tells a to-nearest mode from a directed one once a guard bit is kept.
  const std::uint64_t ones = (std::uint64_t{1} << p) - 1;
  for (int d = 0; d <= 3; ++d)
    for (std::uint64_t j = 0; j < 4; ++j) {
      const std::uint64_t a = value(f, false, k - p + 1, ones), b = value(f, false, k - p + 1 - d, ones - 2 * j);
      sums.push_back({{a, b}, fmt::format("{} + {}", show(f, a), show(f, b))});
    }
  // Overflow: MAX + MAX, and MAX plus half and a quarter of its ulp (a tie, and a rest below one, at
  // the threshold). With no guard bit it is what tells a nearest mode from the directed mode its
  // ties follow (rnz from chop, rnu from ru): the one overflows to infinity, the other need not.
  const std::uint64_t max = f.max_finite_magnitude();
  for (int e : {f.emax() - p, f.emax() - p - 1})
    if (e >= f.emin()) sums.push_back({{max, pow2(f, e)}, fmt::format("MAX + 2^{}", e)});
  sums.push_back({{max, max}, "MAX + MAX"});
  // Every structured sum mirrored: negative results show how ties and directed modes treat signs.
  for (std::size_t c = 0, n0 = sums.size(); c < n0; ++c) {
    Case m = sums[c];
    for (std::uint64_t& x : m.operands) x = negate(f, x);
    m.note = "-(" + m.note + ")";
    sums.push_back(std::move(m));
  }
  std::mt19937_64 rng(ctx.seed ^ 0x67756172642d6269ULL);
  std::vector<Case> random;
  const std::uint64_t n = ctx.cases(64, 256, 16384);
  for (std::uint64_t c = 0; c < n; ++c) {
    const int d = int(rng() % std::uint64_t(std::min(imax, p + 8) + 1));
    const std::uint64_t a = random_normal(f, rng(), 0, rng() & 1, k, k);
    const std::uint64_t b = random_normal(f, rng(), 0, rng() & 1, k - d, k - d);
    random.push_back({{a, b}, fmt::format("{} + {}", show(f, a), show(f, b))});
  }
  return {std::move(paper), std::move(sums), std::move(random)};
}

// The adder's answer, from its parameters: the adder of f that computes the same sums of values
// of f, where the model says which (adders no input tells apart answer alike, so that a verdict
// states what the outputs show):
//   - a sticky adder with enough guard bits is correctly rounded (two for the nearest modes, one
//     for the directed ones, Coonen's argument; none for round-to-odd); so is one of a nearest mode with
//     p + 1 guard bits: the smaller operand of a sum that can reach a tie is then kept whole, and a
//     smaller one is below a quarter of an ulp;
//   - with no guard bit the register's rest is 0 or a tie: a nearest mode breaks the tie as the
//     directed mode of its tie rule does (rnz as chop, rna as ra, rnu as ru, rno as ro; not rnd as
//     rd: x - x is -0 rounding down only), but a sum can overflow, where only rna and ra agree
//     (probe_support.hpp, rounding_class): rna alone adds as ra;
//   - chop is rz's arithmetic: named chop when bits were dropped, rz when correctly rounded;
//   - registers of p' = p + d bits stored to f: stores in the directed mode of an adder with g
//     guard bits (chopped stores of one that rounds to odd too) are an adder of f in that mode
//     with g + d guard bits: a sum whose smaller operand the register keeps whole is exact there,
//     one it keeps in part (or as a sticky bit) is less than an ulp of f off the larger operand on
//     the side the rest is, both rounded alike twice in one directed mode; a store to nearest is
//     correctly rounded when p' >= 2p + 2 and the register keeps the smaller operand of any sum
//     that can reach a tie (correctly rounded, or g + d >= p + 1): that sum is exact in the
//     register (and its exact zeros are +0: not an adder rounding down); a register sum correctly
//     rounded to odd with d >= 2 is stored as the exact sum would be in any mode (Boldo and
//     Melquiond), rd but for exact zeros again. Other register units answer with their registers'
//     format and adder;
//   - guard bits from the register's last bit at f's largest exponent down to f's smallest
//     subnormal bit keep every operand whole: correctly rounded (emax - emin of them in f).
bool directed(Rounding r) {
  return r == Rounding::rz || r == Rounding::ru || r == Rounding::rd || r == Rounding::ra || r == Rounding::ro;
}

// The guard bits a sticky adder needs to be correctly rounded in mode r. Round to odd needs none:
// it asks only whether a rest is there, which the sticky bit says, and the one bit of a difference
// that falls into the binade below (a rest of q/2 the register cannot hold) is the sticky bit's
// own weight, so the register's value is exact or inexact with the exact difference, and odd below
// a rest above q/2 as the exact one rounded to odd is.
int sticky_guard_bits(Rounding r) { return r == Rounding::ro ? 0 : directed(r) ? 1 : 2; }

// An adder computing in registers of `reg` on operands of `f`.
AdderParams canonical_adder(const Format& reg, const Format& f, AdderParams a) {
  const int p = reg.precision();
  Rounding r = a.rounding.effective();
  // Guard bits reaching from the last bit of a register holding f's largest exponent down to f's
  // smallest subnormal bit keep every operand whole: the register holds the exact sum.
  if (a.guard_bits &&
      ((a.sticky && *a.guard_bits >= sticky_guard_bits(r)) || (!directed(r) && *a.guard_bits >= p + 1) ||
       *a.guard_bits >= f.emax() - reg.man_bits - f.quantum_min()))
    a = {UnitRounding::ieee(r), std::nullopt, false};
  if (a.guard_bits && *a.guard_bits == 0 && r == Rounding::rna) r = Rounding::ra;
  a.rounding = a.guard_bits && r == Rounding::rz ? UnitRounding::chopped() : UnitRounding::ieee(r);
  return a;
}

AdderAnswer adder_answer(const model::ScalarUnit& u, const AdderParams& unit_adder) {
  const Format& f = u.storage_format();
  const int p = f.precision(), pr = u.format->precision(), d = pr - p;
  AdderParams a = canonical_adder(*u.format, f, unit_adder);
  bool registers = d > 0;
  if (registers) {
    // No guard bit and a sticky bit: the register's rest is nothing or a tie, rounded as the
    // directed mode the tie rule names (but after a carry-out, which drops no bit of a sum of values
    // of f when pr >= 2p - 1); it lands on a register value that is no value of f nor a midpoint
    // between two (d >= 2) unless the exact sum is one, which the store rounds as the exact sum in
    // that mode, and any (round to odd) or the same directed one (below) in other modes.
    if (a.guard_bits == 0 && a.sticky && d >= 2 && pr >= 2 * p - 1)
      if (const auto t = tie_directed(a.rounding.effective())) a = {UnitRounding::ieee(*t), std::nullopt, false};
    const Rounding s = u.convert.effective(), r = a.rounding.effective();
    if (s != Rounding::ro && directed(s) && (r == s || (s == Rounding::rz && r == Rounding::ro))) {
      a = a.guard_bits ? AdderParams{UnitRounding::ieee(s), *a.guard_bits + d, a.sticky}
                       : AdderParams{UnitRounding::ieee(s), std::nullopt, false};
      registers = false;
    } else if ((!directed(s) && r != Rounding::rd && pr >= 2 * p + 2 &&
                (!a.guard_bits || *a.guard_bits + d >= p + 1)) ||
               (!a.guard_bits && r == Rounding::ro && d >= 2 && s != Rounding::rd)) {
      a = {UnitRounding::ieee(s), std::nullopt, false};
      registers = false;
    }
    if (!registers) a = canonical_adder(f, f, a);
  }
  AdderAnswer answer{a, registers ? u.format : nullptr, {}};
  // With no guard bit, the class of roundings that add alike, overflow included (probe_support.hpp).
  if (a.guard_bits == 0)
    if (std::vector<std::string> names = rounding_class(model::name(a.rounding), true); names.size() > 1)
      answer.equivalent_roundings = std::move(names);
  return answer;
}

}  // namespace

nlohmann::json answer_fields(const AdderAnswer& a) {
  nlohmann::json j = nlohmann::json::object();
  if (a.registers) j["registers"] = a.registers->name;
  j["rounding"] = model::name(a.adder.rounding);
  j["guard_bits"] = a.adder.guard_bits ? nlohmann::json(*a.adder.guard_bits) : nlohmann::json(nullptr);
  j["sticky"] = a.adder.sticky;
  if (!a.equivalent_roundings.empty()) j["equivalent_roundings"] = a.equivalent_roundings;
  return j;
}

std::string say_adder(const AdderAnswer& a) {
  return describe_adder(a.adder) + or_equivalently(a.equivalent_roundings) + in_registers(a.registers);
}

namespace {

// The profile keys of an answer. With no guard bit a to-nearest mode adds as a directed one: the
// fused operations, which round with the adder's mode and see every rest, choose between the two
// when the profile is assembled (add.equivalent_roundings, audit/validation.cpp).
backends::ScalarProfile::Operation adder_keys(const AdderAnswer& a) {
  backends::ScalarProfile::Operation add;
  add.rounding = a.adder.rounding;
  add.guard_bits = a.adder.guard_bits;
  add.sticky = a.adder.sticky;
  if (!a.equivalent_roundings.empty()) add.equivalent_roundings = a.equivalent_roundings;
  return add;
}

backends::ScalarProfile adder_profile(const AdderAnswer& a) {
  backends::ScalarProfile p;
  p.op(backends::UnitOp::add) = adder_keys(a);
  return p;
}

// Every adder of the model for registers of format r, and the stores of a wider register into f.
SpaceOf adder_space() {
  return [](const Format& r) {
    Space s;
    s.adders = adder_hypotheses(max_guard(r));
    return s;
  };
}

std::vector<Group> adder_groups(const Format& f, const audit::ProbeContext& ctx) {
  auto [paper, sums, random] = adder_cases(f, ctx);
  return {{backends::binary(Node::sub, f), std::move(paper)},
          {backends::binary(Node::add, f), std::move(sums)},
          {backends::binary(Node::add, f), std::move(random)}};
}

}  // namespace

const UnitQuestion& adder_question() {
  static const UnitQuestion q{{"ADDITION", "the guard bits and rounding of the adder", audit::typed(say_adder)},
                              [](const model::ScalarUnit& u) { return audit::Answer(adder_answer(u, u.add)); },
                              audit::typed(adder_profile)};
  return q;
}

namespace {

class GuardBitsProbe final : public UnitProbe {
 public:
  std::string_view id() const override { return "scalar.add.guard_bits"; }
  std::string_view title() const override { return "Guard bits and sticky bit of the adder"; }
  std::string_view source() const override { return "Daumas, da Graca, Defour 2006, section 2.3"; }
  bool applies(const Format& f) const override { return f.has_sign() && f.man_bits >= 2 && f.has_zero(); }
  const UnitQuestion& question() const override { return adder_question(); }

  audit::Finding run(backends::Device& device, const Format& f, const audit::ProbeContext& ctx) const override {
    if (!computes_in(device, f)) return no_format(f);
    const std::vector<Group> groups = adder_groups(f, ctx);
    const int imax = int(groups[0].cases.size());
    audit::Finding finding;
    auto out = conclude(device, groups, candidates(device, f, adder_space(), unit_roundings()), question(), finding,
                        {keep_all(), keep_some(0, 16), keep_some(8, 8)});
    if (!out) return audit::failed(out.error());
    // The paper's reading, a measurement: from which i on is 1.5 - 2^-i exactly 1.5?
    const std::vector<std::uint64_t>& paper_out = (*out)[0];
    int from = 0;
    for (int i = imax; i >= 1; --i) {
      if (paper_out[std::size_t(i - 1)] != groups[0].cases[std::size_t(i - 1)].operands[0]) break;
      from = i;
    }
    finding.parameters["one_and_half_minus_2^-i_is_1.5_from_i"] = from ? nlohmann::json(from) : nlohmann::json(nullptr);
    if (from) finding.verdict += fmt::format("; 1.5 - 2^-i = 1.5 from i = {}", from);
    return finding;
  }
};

// The cascade's answer: the first adder's, and whether it is the single addition's.
struct CascadedAnswer {
  AdderAnswer first;
  bool same_as_single = true;
};

nlohmann::json answer_fields(const CascadedAnswer& a) {
  nlohmann::json j = answer_fields(a.first);
  j["same_as_single"] = a.same_as_single;
  return j;
}

audit::Answer cascaded_answer(const model::ScalarUnit& u) {
  const AdderAnswer first = adder_answer(u, u.add_cascaded.value_or(u.add));
  return audit::Answer(CascadedAnswer{first, answer_fields(first) == answer_fields(adder_answer(u, u.add))});
}

std::string say_cascaded(const CascadedAnswer& a) {
  return a.same_as_single ? "as a single addition: " + say_adder(a.first)
                          : "the first of two dependent additions differs from a single one: " + say_adder(a.first);
}

// The profile's adder for the first of two dependent additions, where it is not `add`.
backends::ScalarProfile cascaded_profile(const CascadedAnswer& a) {
  backends::ScalarProfile p;
  if (a.same_as_single) return p;
  backends::ScalarProfile::Operation& add = p.op(backends::UnitOp::add_cascaded).emplace(adder_keys(a.first));
  add.equivalent_roundings.reset();  // the single adder's question
  return p;
}

class CascadedProbe final : public UnitProbe {
 public:
  std::string_view id() const override { return "scalar.add.cascaded"; }
  std::string_view title() const override { return "Cascaded adders: the first of two dependent additions"; }
  std::string_view source() const override { return "Daumas, da Graca, Defour 2006, section 2.3"; }
  bool applies(const Format& f) const override { return f.has_sign() && f.man_bits >= 2 && f.has_zero(); }
  const UnitQuestion& question() const override {
    static const UnitQuestion q{
        {"CASCADED ADDITION", "the first of two dependent additions", audit::typed(say_cascaded)},
        cascaded_answer,
        audit::typed(cascaded_profile)};
    return q;
  }

  audit::Finding run(backends::Device& device, const Format& f, const audit::ProbeContext& ctx) const override {
    if (!computes_in(device, f)) return no_format(f);
    // (a - b) - a and (a + b) - a: the second operation is exact (Sterbenz) for most adders, so the
    // output shows what the first adder made of a -+ b; the single additions show the second adder.
    auto [paper, sums, random] = adder_cases(f, ctx);
    const auto cascade = [](const std::vector<Case>& v, const char* op) {
      std::vector<Case> out;
      for (const Case& c : v)
        out.push_back({{c.operands[0], c.operands[1], c.operands[0]}, fmt::format("({}) - {}", c.note, op)});
      return out;
    };
    // The candidates: the single adders that reproduce the single additions, each with every first
    // adder of the model.
    auto singles = reproducing_adders(device, f, ctx);
    if (!singles) return audit::failed(singles.error());
    std::vector<model::ScalarUnit> units;
    for (const model::ScalarUnit& u : *singles) {
      units.push_back(u);
      for (const AdderParams& a : adder_hypotheses(max_guard(*u.format))) {
        model::ScalarUnit c = u;
        c.add_cascaded = a;
        units.push_back(c);
      }
    }
    const std::vector<Group> groups = {{compound(Node::sub, Node::sub, f), cascade(paper, "1.5")},
                                       {compound(Node::add, Node::sub, f), cascade(sums, "a")},
                                       {compound(Node::add, Node::sub, f), cascade(random, "a")}};
    audit::Finding finding;
    if (units.empty()) {
      // No single adder fits: the cascade's question has no candidate either; say so the same way.
      units = candidates(device, f, adder_space(), unit_roundings());
    }
    auto out = conclude(device, groups, units, question(), finding, {keep_all(), keep_some(0, 16), keep_some(8, 8)});
    if (!out) return audit::failed(out.error());
    const std::vector<std::uint64_t>& paper_out = (*out)[0];
    int from = 0;
    for (int i = int(paper_out.size()); i >= 1; --i) {
      if (model::classify(f, paper_out[std::size_t(i - 1)]) != model::Class::zero) break;
      from = i;
    }
    finding.parameters["zero_from_i"] = from ? nlohmann::json(from) : nlohmann::json(nullptr);
    finding.verdict +=
        from ? fmt::format("; (1.5 - 2^-i) - 1.5 = 0 from i = {}", from) : std::string("; (1.5 - 2^-i) - 1.5 never 0");
    return finding;
  }
};

}  // namespace

static Expected<std::vector<model::ScalarUnit>> identify_adders(backends::Device& device, const Format& f,
                                                                const audit::ProbeContext& ctx) {
  auto all = survivors(device, adder_groups(f, ctx), candidates(device, f, adder_space(), unit_roundings()), false,
                       &adder_question());
  if (!all) return all.error();
  std::vector<model::ScalarUnit> out;
  std::set<std::string> seen;
  // One per answer and rounding: adders that add alike may still round a fused operation apart.
  for (const model::ScalarUnit& u : *all)
    if (seen.insert(std::string(u.format->name) + audit::Answer(adder_answer(u, u.add)).key() +
                    std::string(model::name(u.add.rounding.effective())))
            .second)
      out.push_back(u);
  return out;
}

Expected<std::vector<model::ScalarUnit>> reproducing_adders(backends::Device& device, const Format& f,
                                                            const audit::ProbeContext& ctx) {
  return remembered(ctx, &audit::ProbeMemo::adders, f, [&] { return identify_adders(device, f, ctx); });
}

void add_adder_probes(std::vector<const audit::ScalarProbe*>& out) {
  static const GuardBitsProbe guard;
  static const CascadedProbe cascaded;
  out.push_back(&guard);
  out.push_back(&cascaded);
}

}  // namespace gp::scalar
