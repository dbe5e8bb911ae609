// Range and precision of the registers (Daumas, da Graca, Defour 2006, section 2.1): do
// intermediate results live in a wider format than memory, converted only on the store (x87,
// IA-64)? Both probes evaluate two operations in one expression and compare with the same two
// operations stored to memory one at a time, on the same device ("as stored", a measurement beside
// the verdict). The candidates are units of the model: the adders that reproduce the device's
// additions (scalar.add.guard_bits: registers of f, or of a wider format the device computes in,
// stored with every rounding) with every adder for the first of two dependent additions, each
// with the multipliers that reproduce its products (for the range, each keeping or flushing
// subnormals); the answer
// is the candidate's register format, its exponent range or its precision.
//
// Range: (MAX + MAX) - MAX (the paper), (MAX * 2) * 0.5, and at the other end of the range
// (2^emin * 2^-(p+1)) * 2^(p+1). Precision: (1.5 - 2^-i) + 2^-i for i = 1 .. p + 40 (the paper;
// it separates precisions only when the unit chops) and (1 + 2^-i) - 1, which returns 2^-i exactly
// as long as the register holds 1 + 2^-i (i < q) whatever the rounding. Values are scaled by 2^k
// where 2^-i would leave the format's range (binary16).
#include <fmt/format.h>

#include "audit/json_access.hpp"
#include "tests_scalar/daumas_support.hpp"
#include "tests_scalar/families.hpp"
#include "tests_scalar/suite.hpp"

namespace gp::scalar {
namespace {

// The candidate units of both probes (see above); the IEEE unit where no adder fits.
Expected<std::vector<model::ScalarUnit>> register_candidates(backends::Device& device, const Format& f,
                                                             const audit::ProbeContext& ctx) {
  auto adders = reproducing_adders(device, f, ctx);
  if (!adders) return adders.error();
  // The first of two dependent additions may run on another adder (scalar.add.cascaded).
  std::vector<model::ScalarUnit> cascades;
  for (const model::ScalarUnit& u : *adders) {
    cascades.push_back(u);
    for (const model::AdderParams& a : adder_hypotheses(std::min(2 * u.format->precision() + 4, model::max_guard_bits)))
      if (a != u.add) {
        model::ScalarUnit c = u;
        c.add_cascaded = a;
        cascades.push_back(c);
      }
  }
  auto units = with_reproducing_multipliers(device, cascades, ctx);
  if (!units) return units.error();
  if (units->empty()) units->push_back(model::ieee_unit(f));  // nothing fits: no candidate reproduces, said so
  return units;
}

// Each unit keeping or flushing subnormals on input and output: (2^emin * 2^-(p+1)) * 2^(p+1) makes
// a tiny intermediate that a unit rounding up or away keeps as a subnormal and one that flushes
// subnormal results (or reads them as zeros) loses. The adders and multipliers were identified on
// normal results, which say nothing of flushing.
std::vector<model::ScalarUnit> keeping_or_flushing(const std::vector<model::ScalarUnit>& units) {
  std::vector<model::ScalarUnit> out;
  for (const model::ScalarUnit& u : units)
    for (int flush = 0; flush < 4; ++flush) {
      model::ScalarUnit v = u;
      v.subnormals.flush_input = flush & 1;
      v.subnormals.flush_output = flush & 2;
      out.push_back(v);
    }
  return out;
}

// Whether two stored operations equal the same two in one expression, for the verdict.
Expected<bool> as_stored(backends::Device& device, const Format& f, Node op1, Node op2, const std::vector<Case>& cases,
                         const std::vector<std::uint64_t>& outputs) {
  auto stored = stepwise(device, f, op1, op2, cases);
  if (!stored) return stored.error();
  return *stored == outputs;
}

constexpr std::string_view kRangeId = "scalar.register.range", kPrecisionId = "scalar.register.precision";

// The range probe's answer: the registers' format where its exponent range is wider than memory's.
struct RangeAnswer {
  const Format* registers = nullptr;  // none: no extended range
};

nlohmann::json answer_fields(const RangeAnswer& a) {
  nlohmann::json j = {{"extended_range", a.registers != nullptr}};
  if (a.registers) j["registers"] = a.registers->name;
  return j;
}

RangeAnswer range_answer(const model::ScalarUnit& u) {
  return {u.format->emax() > u.storage_format().emax() ? u.format : nullptr};
}

std::string say_range(const RangeAnswer& a) {
  return a.registers ? fmt::format("extended exponent range ({} registers)", a.registers->name)
                     : std::string("no extended exponent range");
}

// The precision probe's answer: the registers' format and whether it is more precise than memory's.
struct PrecisionAnswer {
  const Format* registers = nullptr;
  bool extended = false;
};

nlohmann::json answer_fields(const PrecisionAnswer& a) {
  nlohmann::json j = {{"extended_precision", a.extended}, {"register_bits", a.registers->precision()}};
  if (a.extended) j["registers"] = a.registers->name;
  return j;
}

PrecisionAnswer precision_answer(const model::ScalarUnit& u) {
  return {u.format, u.format->precision() > u.storage_format().precision()};
}

std::string say_precision(const PrecisionAnswer& a) {
  return a.extended
             ? fmt::format("extended precision, {} bits ({} registers)", a.registers->precision(), a.registers->name)
             : fmt::format("no extra precision: {} bits as in memory", a.registers->precision());
}

struct Shape {
  Node op1, op2;
  std::vector<Case> cases;
  std::vector<std::uint64_t> extended;  // the exact result, for the extended-range hypothesis
};

class RangeProbe final : public UnitProbe {
 public:
  std::string_view id() const override { return kRangeId; }
  std::string_view title() const override { return "Exponent range of the registers"; }
  std::string_view source() const override { return "Daumas, da Graca, Defour 2006, section 2.1"; }
  bool applies(const Format& f) const override { return f.has_sign() && f.man_bits >= 1 && f.has_zero(); }
  const UnitQuestion& question() const override {
    static const UnitQuestion q{{"REGISTERS", "the exponent range of the registers", audit::typed(say_range)},
                                [](const model::ScalarUnit& u) { return audit::Answer(range_answer(u)); }};
    return q;
  }

  audit::Finding run(backends::Device& device, const Format& f, const audit::ProbeContext& ctx) const override {
    if (!computes_in(device, f)) return no_format(f);
    const std::uint64_t max = largest(f), nmax = largest(f, true);
    const int p = f.precision();
    std::vector<Shape> shapes;
    shapes.push_back({Node::add,
                      Node::sub,
                      {{{max, max, max}, "(MAX + MAX) - MAX"}, {{nmax, nmax, nmax}, "(-MAX + -MAX) - (-MAX)"}},
                      {max, nmax}});
    shapes.push_back(
        {Node::mul,
         Node::mul,
         {{{max, pow2(f, 1), pow2(f, -1)}, "(MAX * 2) * 0.5"}, {{nmax, pow2(f, 1), pow2(f, -1)}, "(-MAX * 2) * 0.5"}},
         {max, nmax}});
    if (f.has_subnormals() && f.emin() + p + 1 <= f.emax()) {
      const std::uint64_t tiny = smallest_normal(f);
      shapes.push_back(
          {Node::mul,
           Node::mul,
           {{{tiny, pow2(f, -(p + 1)), pow2(f, p + 1)}, fmt::format("(2^{} * 2^-{}) * 2^{}", f.emin(), p + 1, p + 1)},
            {{negate(f, tiny), pow2(f, -(p + 1)), pow2(f, p + 1)},
             fmt::format("(-2^{} * 2^-{}) * 2^{}", f.emin(), p + 1, p + 1)}},
           {tiny, negate(f, tiny)}});
    }
    auto units = register_candidates(device, f, ctx);
    if (!units) return audit::failed(units.error());
    std::vector<Group> groups;
    for (const Shape& s : shapes) groups.push_back({compound(s.op1, s.op2, f), s.cases});
    audit::Finding finding;
    auto out = conclude(device, groups, shapes.size() > 2 ? keeping_or_flushing(*units) : *units, question(), finding);
    if (!out) return audit::failed(out.error());
    // Measurements beside the verdict: the outputs as stored step by step, and as the exact results.
    bool stored = true, exact = true;
    for (std::size_t i = 0; i < shapes.size(); ++i) {
      auto same = as_stored(device, f, shapes[i].op1, shapes[i].op2, shapes[i].cases, (*out)[i]);
      if (!same) return audit::failed(same.error());
      stored = stored && *same;
      exact = exact && (*out)[i] == shapes[i].extended;
    }
    finding.parameters["as_stored"] = stored;
    finding.parameters["exact_results"] = exact;
    finding.verdict += fmt::format("; {} = {}", shapes[0].cases[0].note, show(f, (*out)[0][0]));
    return finding;
  }
};

class PrecisionProbe final : public UnitProbe {
 public:
  std::string_view id() const override { return kPrecisionId; }
  std::string_view title() const override { return "Precision of the registers"; }
  std::string_view source() const override { return "Daumas, da Graca, Defour 2006, section 2.1"; }
  bool applies(const Format& f) const override { return f.has_sign() && f.man_bits >= 2 && f.has_zero(); }
  const UnitQuestion& question() const override {
    static const UnitQuestion q{{"REGISTERS", "the precision of the registers", audit::typed(say_precision)},
                                [](const model::ScalarUnit& u) { return audit::Answer(precision_answer(u)); }};
    return q;
  }

  audit::Finding run(backends::Device& device, const Format& f, const audit::ProbeContext& ctx) const override {
    if (!computes_in(device, f)) return no_format(f);
    const AdderScale scale = adder_scale(f);
    const int k = scale.k, imax = scale.imax;
    std::vector<Case> paper, exact;
    for (int i = 1; i <= imax; ++i) {
      paper.push_back(
          {{value(f, false, k - 1, 3), pow2(f, k - i), pow2(f, k - i)},
           k ? fmt::format("(1.5 - 2^-{0}) + 2^-{0} (times 2^{1})", i, k) : fmt::format("(1.5 - 2^-{0}) + 2^-{0}", i)});
      exact.push_back({{pow2(f, k), pow2(f, k - i), pow2(f, k)},
                       k ? fmt::format("(1 + 2^-{0}) - 1 (times 2^{1})", i, k) : fmt::format("(1 + 2^-{0}) - 1", i)});
    }
    auto units = register_candidates(device, f, ctx);
    if (!units) return audit::failed(units.error());
    audit::Finding finding;
    auto out =
        conclude(device, {{compound(Node::sub, Node::add, f), paper}, {compound(Node::add, Node::sub, f), exact}},
                 *units, question(), finding, {keep_some(8, 16), keep_some(8, 16)});
    if (!out) return audit::failed(out.error());
    // Measurements: (1 + 2^-i) - 1 == 2^-i for every i up to `held` (the register holds at least
    // held + 1 bits, whatever the rounding), and whether the sums equal steps stored one by one.
    int held = 0;
    for (int i = 1; i <= imax; ++i) {
      if ((*out)[1][std::size_t(i - 1)] != pow2(f, k - i)) break;
      held = i;
    }
    finding.parameters["exact_sums_up_to_i"] = held;
    auto a = as_stored(device, f, Node::sub, Node::add, paper, (*out)[0]);
    auto b = as_stored(device, f, Node::add, Node::sub, exact, (*out)[1]);
    if (!a) return audit::failed(a.error());
    if (!b) return audit::failed(b.error());
    finding.parameters["as_stored"] = *a && *b;
    finding.verdict += fmt::format("; (1 + 2^-i) - 1 is exact up to i = {}", held);
    return finding;
  }
};

}  // namespace

void read_registers(const audit::Finding& f, audit::RegisterReading& r) {
  if (f.status != audit::Status::ok || (f.probe != kRangeId && f.probe != kPrecisionId)) return;
  const bool stated = f.judgement && f.judgement->conclusion == audit::Conclusion::stated;
  if (f.probe == kRangeId) r.wider_range = stated && f.judgement->answer.as<RangeAnswer>().registers;
  if (const PrecisionAnswer* a =
          stated && f.probe == kPrecisionId ? &f.judgement->answer.as<PrecisionAnswer>() : nullptr;
      a && a->extended)
    r.bits = a->registers->precision();
}

void read_registers(const nlohmann::json& held, audit::RegisterReading& r) {
  using audit::member;
  if (member(held, "status") != "ok") return;
  const nlohmann::json& par = member(held, "parameters");  // an undecided answer's fields are null or absent
  if (member(held, "probe") == kPrecisionId && member(par, "extended_precision") == true &&
      member(par, "register_bits").is_number_integer())
    r.bits = member(par, "register_bits").get<int>();
  if (member(held, "probe") == kRangeId) r.wider_range = member(par, "extended_range") == true;
}

void add_register_probes(std::vector<const audit::ScalarProbe*>& out) {
  static const RangeProbe range;
  static const PrecisionProbe precision;
  out.push_back(&range);
  out.push_back(&precision);
}

}  // namespace gp::scalar
