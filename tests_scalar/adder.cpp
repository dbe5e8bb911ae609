// Guard bits of the adder and of cascaded adders (Daumas, da Graca, Defour 2006, section 2.3).
//
// scalar.add.guard_bits: 1.5 - 2^-i for i = 1 .. p + 40 (the paper), with sums and differences
// whose smaller operand has one, two or many bits beyond the precision, and random pairs. Every
// adder of model/scalar_unit.hpp is a hypothesis: g guard bits (0 .. p + 2) with or without a
// sticky bit under chop or any rounding mode, and the correctly rounded adder in every mode. The
// paper found 1.5 - 2^-i == 1.5 for i >= 26 on both its GPUs: chopped, two guard bits, no sticky.
// A correctly rounded adder and one with g >= 2 guard bits and a sticky bit give the same results
// (Coonen): the verdict then says "correctly rounded".
//
// scalar.add.cascaded: (1.5 - 2^-i) - 1.5 as one expression, two dependent additions issued
// together. The second subtraction is exact (Sterbenz), so the output is what the first adder made
// of 1.5 - 2^-i, minus 1.5: the paper found 0 for i >= 26 on NVIDIA (the same adder as a single
// addition) and for i >= 25 on ATI (one guard bit only, where a single addition has two).
#include <fmt/format.h>

#include <optional>

#include <random>

#include "backends/reference/profile.hpp"
#include "model/scalar_unit.hpp"
#include "tests_scalar/daumas_support.hpp"
#include "tests_scalar/families.hpp"

namespace gp::scalar {
namespace {

using model::AdderParams;
using model::Rounding;
using model::UnitRounding;

// Up to 2p + 4 guard bits: a unit computing in registers of up to twice the precision, with their
// own guard bits, then rounding to f, looks like an adder of f with that many (chopping twice is
// chopping once).
int max_guard(const Format& f) { return std::min(2 * f.precision() + 4, model::max_guard_bits); }

// What the consistent adders agree on, in the profile's terms.
struct AdderVerdict {
  std::string text;
  nlohmann::json guard_bits = nullptr, sticky = nullptr, rounding = nullptr;
  std::vector<std::string> roundings;  // when they agree on everything but the rounding
  bool decided = false;
  // One adder that fits, for the profile: where several fit, no input tells them apart.
  std::optional<AdderParams> representative;
};

AdderVerdict decide(const std::vector<std::string>& consistent, const std::vector<AdderParams>& adders) {
  AdderVerdict v;
  std::vector<AdderParams> cs;
  for (const AdderParams& a : adders)
    if (std::find(consistent.begin(), consistent.end(), describe_adder(a)) != consistent.end()) cs.push_back(a);
  if (cs.empty()) {
    v.text = "no adder model fits (neither correctly rounded nor g guard bits, chopped or rounded)";
    return v;
  }
  // A correctly rounded adder that fits is the simplest description.
  std::vector<AdderParams> cr;
  for (const AdderParams& a : cs)
    if (!a.guard_bits) cr.push_back(a);
  v.representative = cr.empty() ? cs.front() : cr.front();
  if (!cr.empty()) {
    std::vector<std::string> modes;
    for (const AdderParams& a : cr) modes.emplace_back(model::name(a.rounding.mode));
    v.text = fmt::format("correctly rounded ({})", join(modes, " or "));
    v.guard_bits = nullptr;
    v.sticky = false;
    v.rounding = modes.front();
    v.decided = cr.size() == 1;
    if (cs.size() > cr.size()) v.text += "; equivalently a sticky adder with enough guard bits";
    return v;
  }
  v.text = describe_adder(cs.front());
  const auto g = agreed<int>(consistent, [&](const std::string& h) {
    for (const AdderParams& a : cs)
      if (describe_adder(a) == h) return *a.guard_bits;
    return -1;
  });
  const auto s = agreed<bool>(consistent, [&](const std::string& h) {
    for (const AdderParams& a : cs)
      if (describe_adder(a) == h) return a.sticky;
    return false;
  });
  const auto r = agreed<std::string>(consistent, [&](const std::string& h) {
    for (const AdderParams& a : cs)
      if (describe_adder(a) == h) return std::string(model::name(a.rounding));
    return std::string();
  });
  if (g) v.guard_bits = *g;
  if (s) v.sticky = *s;
  if (r) v.rounding = *r;
  if (g && s && !r)
    for (const AdderParams& a : cs) v.roundings.emplace_back(model::name(a.rounding));
  v.decided = cs.size() == 1;
  if (cs.size() > 1) {
    std::vector<std::string> names;
    for (std::size_t i = 0; i < cs.size() && i < 6; ++i) names.push_back(describe_adder(cs[i]));
    v.text += fmt::format(" (ambiguous among {}: {}{})", cs.size(), join(names, "; "), cs.size() > 6 ? "; ..." : "");
  }
  return v;
}

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
      sums.push_back({{value(f, false, k - 1, 3), value(f, false, k - i - 1, 3)}, fmt::format("1.5 + 1.5*2^-{}{}", i, times(k))});
      sums.push_back({{pow2(f, k), value(f, true, k - i - 1, 3)}, fmt::format("1 + -1.5*2^-{}{}", i, times(k))});
    }
    // A subtrahend with bits all the way down: 1 + 2^-(p-1) below the precision.
    sums.push_back({{value(f, false, k - 1, 3), value(f, true, k - i - p + 1, (std::uint64_t{1} << (p - 1)) | 1)},
                    fmt::format("1.5 + -(1 + 2^-{})*2^-{}{}", p - 1, i, times(k))});
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
          sums.push_back({{a, b}, fmt::format("{} - (1 {} 2^-{})*2^-{}{}", show(f, a), neg ? "-" : "+", m, i, times(k))});
          sums.push_back({{a, negate(f, b)}, fmt::format("{} + (1 {} 2^-{})*2^-{}{}", show(f, a), neg ? "-" : "+", m, i, times(k))});
        }
  // Sums that carry into the next binade, so that their last bit shifts out (the only rest an adder
  // without guard bits sees): kept parts odd and even, rests zero and half.
  for (std::uint64_t base : {std::uint64_t{2}, std::uint64_t{3}})  // 1.0 and 1.5
    for (std::uint64_t m = 0; m < 4; ++m)
      for (std::uint64_t n = 0; n < 4; ++n) {
        const std::uint64_t a = value(f, false, k - p + 1, (base << (p - 2)) + m), b = value(f, false, k - p + 1, (base << (p - 2)) + n);
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

class GuardBitsProbe final : public audit::ScalarProbe {
 public:
  std::string_view id() const override { return "scalar.add.guard_bits"; }
  std::string_view title() const override { return "Guard bits and sticky bit of the adder"; }
  std::string_view source() const override { return "Daumas, da Graca, Defour 2006, section 2.3"; }
  bool applies(const Format& f) const override { return f.has_sign() && f.man_bits >= 2 && f.has_zero(); }

  audit::Finding run(backends::Device& device, const Format& f, const audit::ProbeContext& ctx) const override {
    if (!computes_in(device, f)) return no_format(f);
    const auto [paper, sums, random] = adder_cases(f, ctx);
    const int imax = int(paper.size());
    const std::vector<AdderParams> adders = adder_hypotheses(max_guard(f));
    const auto hyps = [&](Node op) {
      std::vector<Hypothesis> h;
      for (const AdderParams& a : adders)
        h.push_back({describe_adder(a), [&f, a, op](const Case& c) {
                       const model::Options o;
                       return (op == Node::sub ? model::adder_sub(f, a, o, c.operands[0], c.operands[1])
                                               : model::adder_add(f, a, o, c.operands[0], c.operands[1]))
                           .bits;
                     }});
      return h;
    };
    audit::Finding finding;
    std::vector<std::string> consistent;
    std::vector<std::uint64_t> paper_out;
    for (int g = 0; g < 3; ++g) {
      const std::vector<Case>& cases = g == 0 ? paper : g == 1 ? sums : random;
      const Node op = g == 0 ? Node::sub : Node::add;
      auto sel = select_some(device, backends::binary(op, f), cases, hyps(op), finding,
                             g == 2 ? keep_some(8, 8) : g == 1 ? keep_some(0, 16) : keep_all());
      if (!sel) return audit::failed(sel.error().message);
      if (g == 0) {
        consistent = sel->consistent;
        paper_out = sel->outputs;
      } else {
        std::vector<std::string> both;
        for (const std::string& h : consistent)
          if (std::find(sel->consistent.begin(), sel->consistent.end(), h) != sel->consistent.end()) both.push_back(h);
        consistent = both;
      }
    }
    // The paper's reading: from which i on is 1.5 - 2^-i exactly 1.5?
    int from = 0;
    for (int i = imax; i >= 1; --i) {
      if (paper_out[std::size_t(i - 1)] != paper[std::size_t(i - 1)].operands[0]) break;
      from = i;
    }
    finding.parameters["one_and_half_minus_2^-i_is_1.5_from_i"] = from ? nlohmann::json(from) : nlohmann::json(nullptr);
    const AdderVerdict v = decide(consistent, adders);
    finding.parameters["consistent"] = consistent;
    finding.parameters["guard_bits"] = v.guard_bits;
    finding.parameters["sticky"] = v.sticky;
    finding.parameters["rounding"] = v.rounding;
    finding.parameters["decided"] = v.decided;
    if (v.representative) {
      // The profile keys (guard_bits null: correctly rounded), from an adder that fits every case.
      finding.profile["add"] = backends::adder_json(*v.representative);
      // Adders that differ only in how they break ties when every rest is zero or a tie: the
      // fused operations, which round with the adder's mode and see other rests, choose among them
      // when the profile is assembled (normalise_scalar_profile).
      if (!v.decided && !v.guard_bits.is_null() && v.rounding.is_null())
        finding.profile["add"]["equivalent_roundings"] = v.roundings;
    }
    finding.verdict = "ADDITION: " + v.text;
    if (from) finding.verdict += fmt::format("; 1.5 - 2^-i = 1.5 from i = {}", from);
    return finding;
  }
};

class CascadedProbe final : public audit::ScalarProbe {
 public:
  std::string_view id() const override { return "scalar.add.cascaded"; }
  std::string_view title() const override { return "Cascaded adders: the first of two dependent additions"; }
  std::string_view source() const override { return "Daumas, da Graca, Defour 2006, section 2.3"; }
  bool applies(const Format& f) const override { return f.has_sign() && f.man_bits >= 2 && f.has_zero(); }

  audit::Finding run(backends::Device& device, const Format& f, const audit::ProbeContext& ctx) const override {
    if (!computes_in(device, f)) return no_format(f);
    // (a - b) - a and (a + b) - a: the second operation is exact (Sterbenz), so the output shows
    // what the first adder made of a -+ b.
    const AdderCases base = adder_cases(f, ctx);
    const auto cascade = [](const std::vector<Case>& v, const char* op) {
      std::vector<Case> out;
      for (const Case& c : v)
        out.push_back({{c.operands[0], c.operands[1], c.operands[0]}, fmt::format("({}) - {}", c.note, op)});
      return out;
    };
    std::vector<Case> paper;
    for (std::size_t i = 0; i < base.paper.size(); ++i) {
      const Case& c = base.paper[i];
      paper.push_back({{c.operands[0], c.operands[1], c.operands[0]}, fmt::format("({}) - 1.5", c.note)});
    }
    const std::vector<Case> sums = cascade(base.sums, "a"), random = cascade(base.random, "a");
    const std::vector<AdderParams> adders = adder_hypotheses(max_guard(f));
    const std::string single = "as a single addition (steps stored)";
    audit::Finding finding;
    std::vector<std::string> consistent;
    std::vector<std::uint64_t> paper_out;
    for (int g = 0; g < 3; ++g) {
      const std::vector<Case>& cases = g == 0 ? paper : g == 1 ? sums : random;
      const Node op1 = g == 0 ? Node::sub : Node::add;
      auto stored = stepwise(device, f, op1, Node::sub, cases);
      if (!stored) return audit::failed(stored.error().message);
      std::vector<Hypothesis> hyps = {tabled(single, cases, *stored)};
      for (const AdderParams& p : adders)
        hyps.push_back({describe_adder(p), [&f, p, op1](const Case& c) {
                          const model::Options o;
                          const std::uint64_t t = (op1 == Node::sub ? model::adder_sub(f, p, o, c.operands[0], c.operands[1])
                                                                    : model::adder_add(f, p, o, c.operands[0], c.operands[1]))
                                                      .bits;
                          return model::sub(f, o, t, c.operands[2]).bits;  // exact
                        }});
      auto sel = select_some(device, compound(op1, Node::sub, f), cases, hyps, finding,
                             g == 2 ? keep_some(8, 8) : g == 1 ? keep_some(0, 16) : keep_all());
      if (!sel) return audit::failed(sel.error().message);
      if (g == 0) {
        consistent = sel->consistent;
        paper_out = sel->outputs;
      } else {
        std::vector<std::string> both;
        for (const std::string& h : consistent)
          if (std::find(sel->consistent.begin(), sel->consistent.end(), h) != sel->consistent.end()) both.push_back(h);
        consistent = both;
      }
    }
    std::vector<std::string> adders_fit;
    for (const std::string& h : consistent)
      if (h != single) adders_fit.push_back(h);
    const bool same = std::find(consistent.begin(), consistent.end(), single) != consistent.end();
    const int imax = int(paper.size());
    int from = 0;
    for (int i = imax; i >= 1; --i) {
      if (model::classify(f, paper_out[std::size_t(i - 1)]) != model::Class::zero) break;
      from = i;
    }
    const AdderVerdict v = decide(adders_fit, adders);
    // The profile's adder for the first of two dependent additions, where it is not `add`.
    if (!same && v.representative) finding.profile["add_cascaded"] = backends::adder_json(*v.representative);
    finding.parameters["same_as_single"] = same;
    finding.parameters["zero_from_i"] = from ? nlohmann::json(from) : nlohmann::json(nullptr);
    finding.parameters["guard_bits"] = v.guard_bits;
    finding.parameters["sticky"] = v.sticky;
    finding.parameters["rounding"] = v.rounding;
    const std::string zero = from ? fmt::format("(1.5 - 2^-i) - 1.5 = 0 from i = {}", from) : std::string("(1.5 - 2^-i) - 1.5 never 0");
    if (same)
      finding.verdict = fmt::format("CASCADED ADDITION: as a single addition: {}", zero);
    else if (consistent.empty())
      finding.verdict = fmt::format(
          "CASCADED ADDITION: (a + b) - a fits neither the two steps stored one by one nor any adder of {} (the "
          "intermediate sum kept wider, in registers?); {}",
          f.name, zero);
    else
      finding.verdict = fmt::format("CASCADED ADDITION: the first of two dependent subtractions differs from a single one: {}; {}",
                                    v.text, zero);
    return finding;
  }
};

}  // namespace

void add_adder_probes(std::vector<const audit::ScalarProbe*>& out) {
  static const GuardBitsProbe guard;
  static const CascadedProbe cascaded;
  out.push_back(&guard);
  out.push_back(&cascaded);
}

}  // namespace gp::scalar
