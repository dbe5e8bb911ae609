// Range and precision of the registers (Daumas, da Graca, Defour 2006, section 2.1): do
// intermediate results live in a wider format than memory, converted only on the store (x87,
// IA-64)? Both probes evaluate two operations in one expression and compare with the same two
// operations stored to memory one at a time, on the same device ("as stored"): equal outputs mean
// registers hold the storage format. The alternative hypotheses are registers with an extended
// exponent range, and registers of q significant bits rounded to nearest or chopped.
//
// Range: (MAX + MAX) - MAX (the paper), (MAX * 2) * 0.5, and at the other end of the range
// (2^emin * 2^-(p+1)) * 2^(p+1). Precision: (1.5 - 2^-i) + 2^-i for i = 1 .. p + 40 (the paper;
// it separates precisions only when the unit chops) and (1 + 2^-i) - 1, which returns 2^-i exactly
// as long as the register holds 1 + 2^-i (i < q) whatever the rounding. Values are scaled by 2^k
// where 2^-i would leave the format's range (binary16).
#include <fmt/format.h>

#include "tests_scalar/daumas_support.hpp"
#include "tests_scalar/families.hpp"

namespace gp::scalar {
namespace {

using model::Rounding;
using model::u128;

struct Shape {
  Node op1, op2;
  std::vector<Case> cases;
  std::vector<std::uint64_t> extended;  // the exact result, for the extended-range hypothesis
};

class RangeProbe final : public audit::ScalarProbe {
 public:
  std::string_view id() const override { return "scalar.register.range"; }
  std::string_view title() const override { return "Exponent range of the registers"; }
  std::string_view source() const override { return "Daumas, da Graca, Defour 2006, section 2.1"; }
  bool applies(const Format& f) const override { return f.has_sign() && f.man_bits >= 1 && f.has_zero(); }

  audit::Finding run(backends::Device& device, const Format& f, const audit::ProbeContext&) const override {
    if (!computes_in(device, f)) return no_format(f);
    const std::uint64_t max = largest(f), nmax = largest(f, true);
    const int p = f.precision();
    std::vector<Shape> shapes;
    shapes.push_back({Node::add, Node::sub,
                      {{{max, max, max}, "(MAX + MAX) - MAX"}, {{nmax, nmax, nmax}, "(-MAX + -MAX) - (-MAX)"}},
                      {max, nmax}});
    shapes.push_back({Node::mul, Node::mul,
                      {{{max, pow2(f, 1), pow2(f, -1)}, "(MAX * 2) * 0.5"}, {{nmax, pow2(f, 1), pow2(f, -1)}, "(-MAX * 2) * 0.5"}},
                      {max, nmax}});
    if (f.has_subnormals() && f.emin() + p + 1 <= f.emax()) {
      const std::uint64_t tiny = smallest_normal(f);
      shapes.push_back({Node::mul, Node::mul,
                        {{{tiny, pow2(f, -(p + 1)), pow2(f, p + 1)}, fmt::format("(2^{} * 2^-{}) * 2^{}", f.emin(), p + 1, p + 1)},
                         {{negate(f, tiny), pow2(f, -(p + 1)), pow2(f, p + 1)},
                          fmt::format("(-2^{} * 2^-{}) * 2^{}", f.emin(), p + 1, p + 1)}},
                        {tiny, negate(f, tiny)}});
    }
    audit::Finding finding;
    bool as_stored = true, extended = true;
    std::vector<std::string> seen;
    for (const Shape& s : shapes) {
      auto stored = stepwise(device, f, s.op1, s.op2, s.cases);
      if (!stored) return audit::failed(stored.error().message);
      const std::vector<Hypothesis> hyps = {tabled("as stored", s.cases, *stored),
                                            tabled("extended exponent range", s.cases, s.extended)};
      const Expr expr = compound(s.op1, s.op2, f);
      auto sel = select(device, expr, s.cases, hyps, finding);
      if (!sel) return audit::failed(sel.error().message);
      const auto has = [&](const char* h) {
        return std::find(sel->consistent.begin(), sel->consistent.end(), h) != sel->consistent.end();
      };
      as_stored = as_stored && has("as stored");
      extended = extended && has("extended exponent range");
      seen.push_back(fmt::format("{} = {}", s.cases[0].note, show(f, sel->outputs[0])));
    }
    finding.parameters["extended_range"] = extended && !as_stored;
    finding.parameters["as_stored"] = as_stored;
    if (as_stored && !extended) {
      finding.verdict = fmt::format("REGISTERS: no extended exponent range: {} (as with every step stored)", seen[0]);
    } else if (extended && !as_stored) {
      finding.verdict = fmt::format("REGISTERS: extended exponent range: {}", join(seen, ", "));
    } else if (extended) {
      finding.verdict = "REGISTERS: exponent range undecided (stored and extended agree)";
    } else {
      finding.verdict = fmt::format("REGISTERS: range neither as stored nor extended: {}", join(seen, ", "));
      finding.parameters["extended_range"] = nullptr;
    }
    return finding;
  }
};

// A q-bit register rounding with r, every step, and a store to f with r: the two sequences.
struct Register {
  int q;
  Rounding r;
};

// (1.5*2^k - 2^(k-i)) + 2^(k-i) in a q-bit register, stored in f.
std::uint64_t seq_paper(const Format& f, Register reg, int k, int i) {
  // In units of 2^(k-i): 1.5 * 2^i - 1, then + 1.
  const u128 a = (u128{3} << (i - 1)) - 1;
  const Wide t = round_to_bits(a, k - i, reg.q, reg.r);
  const u128 s = (t.sig << (t.exp - (k - i))) + 1;
  return pack_wide(f, reg.r, false, round_to_bits(s, k - i, reg.q, reg.r));
}

// (2^k + 2^(k-i)) - 2^k in a q-bit register, stored in f.
std::uint64_t seq_exact(const Format& f, Register reg, int k, int i) {
  const u128 a = (u128{1} << i) + 1;
  const Wide t = round_to_bits(a, k - i, reg.q, reg.r);
  const u128 d = (t.sig << (t.exp - (k - i))) - (u128{1} << i);
  if (d == 0) return model::zero(f, false).bits;
  return pack_wide(f, reg.r, false, round_to_bits(d, k - i, reg.q, reg.r));
}

class PrecisionProbe final : public audit::ScalarProbe {
 public:
  std::string_view id() const override { return "scalar.register.precision"; }
  std::string_view title() const override { return "Precision of the registers"; }
  std::string_view source() const override { return "Daumas, da Graca, Defour 2006, section 2.1"; }
  bool applies(const Format& f) const override { return f.has_sign() && f.man_bits >= 2 && f.has_zero(); }

  audit::Finding run(backends::Device& device, const Format& f, const audit::ProbeContext&) const override {
    if (!computes_in(device, f)) return no_format(f);
    const int p = f.precision();
    const AdderScale scale = adder_scale(f);
    const int k = scale.k, imax = scale.imax;
    std::vector<Case> paper, exact;
    for (int i = 1; i <= imax; ++i) {
      paper.push_back({{value(f, false, k - 1, 3), pow2(f, k - i), pow2(f, k - i)},
                       k ? fmt::format("(1.5 - 2^-{0}) + 2^-{0} (times 2^{1})", i, k) : fmt::format("(1.5 - 2^-{0}) + 2^-{0}", i)});
      exact.push_back({{pow2(f, k), pow2(f, k - i), pow2(f, k)},
                       k ? fmt::format("(1 + 2^-{0}) - 1 (times 2^{1})", i, k) : fmt::format("(1 + 2^-{0}) - 1", i)});
    }
    audit::Finding finding;
    std::vector<Register> regs;
    for (int q = p + 1; q <= std::min(p + 40, 64); ++q)
      for (Rounding r : {Rounding::rne, Rounding::rz}) regs.push_back({q, r});
    const auto name = [](Register g) { return fmt::format("{}-bit registers ({})", g.q, model::name(g.r)); };

    std::vector<std::string> consistent_all;
    bool first = true;
    std::vector<std::uint64_t> exact_out;
    for (int seq = 0; seq < 2; ++seq) {
      const std::vector<Case>& cases = seq == 0 ? paper : exact;
      const Node op1 = seq == 0 ? Node::sub : Node::add, op2 = seq == 0 ? Node::add : Node::sub;
      auto stored = stepwise(device, f, op1, op2, cases);
      if (!stored) return audit::failed(stored.error().message);
      std::vector<Hypothesis> hyps = {tabled("as stored", cases, *stored)};
      for (Register g : regs) {
        hyps.push_back({name(g), [&, g, seq](const Case& c) {
                          const int i = int(index_of(cases, c)) + 1;
                          return seq == 0 ? seq_paper(f, g, k, i) : seq_exact(f, g, k, i);
                        }});
      }
      auto sel = select(device, compound(op1, op2, f), cases, hyps, finding);
      if (!sel) return audit::failed(sel.error().message);
      if (seq == 1) exact_out = sel->outputs;
      if (first) {
        consistent_all = sel->consistent;
        first = false;
      } else {
        std::vector<std::string> both;
        for (const std::string& h : consistent_all)
          if (std::find(sel->consistent.begin(), sel->consistent.end(), h) != sel->consistent.end()) both.push_back(h);
        consistent_all = both;
      }
    }
    // (1 + 2^-i) - 1 == 2^-i for every i up to: the register holds at least that + 1 bits.
    int held = 0;
    for (int i = 1; i <= imax; ++i) {
      if (exact_out[std::size_t(i - 1)] != pow2(f, k - i)) break;
      held = i;
    }
    finding.parameters["exact_sums_up_to_i"] = held;
    finding.parameters["consistent"] = consistent_all;
    const bool stored = !consistent_all.empty() && consistent_all.front() == "as stored";
    if (stored) {
      finding.verdict = fmt::format("REGISTERS: no extra precision: {} bits as in memory (the sums equal those of steps stored one by one)", p);
      finding.parameters["extended_precision"] = false;
      finding.parameters["register_bits"] = p;
    } else if (!consistent_all.empty()) {
      const std::string& h = consistent_all.front();
      const int q = std::stoi(h);
      finding.parameters["extended_precision"] = true;
      finding.parameters["register_bits"] = q;
      finding.verdict = fmt::format("REGISTERS: extended precision, {} bits where memory holds {}", q, p);
      if (consistent_all.size() > 1) finding.verdict += fmt::format(" (ambiguous: {})", join(consistent_all, " or "));
      else finding.verdict += fmt::format(" ({})", h.substr(h.find('(')));
    } else if (held + 1 > p) {
      // Wider than memory, with an adder no correctly rounded register reproduces (guard bits):
      // (1 + 2^-i) - 1 still counts the bits held, whatever the rounding.
      finding.parameters["extended_precision"] = true;
      finding.parameters["register_bits"] = held + 1;
      finding.verdict = fmt::format(
          "REGISTERS: extended precision, {} bits where memory holds {}: (1 + 2^-i) - 1 is exact up to i = {} (the "
          "sums fit no correctly rounded register: the adder is not IEEE)",
          held + 1, p, held);
    } else {
      finding.parameters["extended_precision"] = nullptr;
      finding.parameters["register_bits"] = nullptr;
      finding.verdict = fmt::format(
          "REGISTERS: the sums differ from steps stored one by one and from every q-bit register; (1 + 2^-i) - 1 is exact up to i = {}",
          held);
    }
    return finding;
  }
};

}  // namespace

void add_register_probes(std::vector<const audit::ScalarProbe*>& out) {
  static const RangeProbe range;
  static const PrecisionProbe precision;
  out.push_back(&range);
  out.push_back(&precision);
}

}  // namespace gp::scalar
