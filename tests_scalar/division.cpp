// How division is done: correctly rounded, or as the dividend times a reciprocal (Daumas et al.
// section 1.3: "the division error suggests that division is implemented by multiplying the
// dividend by an approximation of the divisor's inverse"). Observed, not assumed: the device
// computes x / y, 1 / y and x * (1 / y); the candidates are the units with every division method
// and rounding, each with the multipliers that reproduce the device's products; where none
// reproduces them, an approximate division of the bound the quotients show (approximate.hpp).
#include <fmt/format.h>

#include <random>

#include "tests_scalar/approximate.hpp"
#include "tests_scalar/families.hpp"
#include "tests_scalar/daumas_support.hpp"
#include "tests_scalar/probe_support.hpp"

namespace gp::scalar {
namespace {

using model::Rounding;

// The division's answer: its method and rounding (of the quotient, or of the reciprocal). A
// quotient or reciprocal of values of f is a tie only when exact, so the nearest modes divide
// alike (answered as rne); chop is rz. A unit of wider registers answers for its registers.
// An approximate division is known by its method alone: its bound is measured (approximate.hpp).
struct DivisionAnswer {
  model::DivMethod method = model::DivMethod::correctly_rounded;
  Rounding rounding = Rounding::rne;
  const Format* registers = nullptr;
};

nlohmann::json answer_fields(const DivisionAnswer& a) {
  if (a.method == model::DivMethod::approximate) return {{"method", model::name(a.method)}};
  nlohmann::json j = {{"method", model::name(a.method)}, {"rounding", model::name(a.rounding)}};
  if (a.registers) j["registers"] = a.registers->name;
  return j;
}

const DivisionAnswer approximate_division{model::DivMethod::approximate, Rounding::rne, nullptr};

audit::Answer division_answer(const model::ScalarUnit& u) {
  if (u.div.method == model::DivMethod::approximate) return audit::Answer(approximate_division);
  const Rounding r = u.div.rounding.effective();
  return audit::Answer(DivisionAnswer{u.div.method, model::name(r).starts_with("rn") ? Rounding::rne : r,
                                      u.format != &u.storage_format() ? u.format : nullptr});
}

std::string say_division(const DivisionAnswer& a) {
  if (a.method == model::DivMethod::approximate) return "approximate";
  const std::string regs = in_registers(a.registers);
  const std::string r = a.rounding == Rounding::rne ? std::string("to nearest") : std::string(model::name(a.rounding));
  return a.method == model::DivMethod::reciprocal
             ? fmt::format("x * (1/y), the reciprocal correctly rounded ({}), then the multiplier{}", r, regs)
             : fmt::format("correctly rounded ({}){}", r, regs);
}

// The profile's "div": the method, and the rounding of an exact one; none for registers' answers.
backends::ScalarProfile division_profile(const DivisionAnswer& a) {
  backends::ScalarProfile p;
  if (a.registers) return p;
  backends::ScalarProfile::Operation& div = p.stated(backends::UnitOp::div);
  div.method = a.method;
  if (a.method != model::DivMethod::approximate) div.rounding = model::UnitRounding::ieee(a.rounding);
  return p;
}

class DivisionMethodProbe final : public UnitProbe {
 public:
  std::string_view id() const override { return "scalar.div.method"; }
  std::string_view title() const override { return "Division: correctly rounded or by a reciprocal"; }
  std::string_view source() const override {
    return "Daumas, da Graca, Defour 2006, section 1.3; appendix A (division lacks a guard digit)";
  }
  const UnitQuestion& question() const override {
    static const UnitQuestion q{{"DIVISION", "the method of the division", audit::typed(say_division)},
                                division_answer,
                                audit::typed(division_profile)};
    return q;
  }

  audit::Finding run(backends::Device& device, const Format& f, const audit::ProbeContext& ctx) const override {
    if (!computes_in(device, f)) return no_format(f);
    // x / y, and x * (1 / y) with 1 read from a buffer like every operand.
    backends::ExprBuilder q(f, 2), p(f, 3), r(f, 2);
    q.op(Node::div, q.in(0), q.in(1));
    const int px = p.in(0), py = p.in(1), one = p.in(2);
    p.op(Node::mul, px, p.op(Node::div, one, py));
    r.op(Node::div, r.in(0), r.in(1));

    std::mt19937_64 rng(ctx.seed ^ 0xd1f1d1f1ULL);
    const std::size_t n = std::size_t(ctx.cases(256, 2048, 16384));
    std::vector<Case> pairs, triples, ones;
    const auto near_one = [&] {
      const int e = int(rng() % 5) - 2;
      return value(f, rng() & 1, e - f.man_bits, (std::uint64_t{1} << f.man_bits) | (rng() & f.man_mask()));
    };
    for (std::size_t i = 0; i < n; ++i) {
      const std::uint64_t x = near_one(), y = near_one();
      pairs.push_back({{x, y}, fmt::format("{} / {}", show(f, x), show(f, y))});
      triples.push_back({{x, y, one_of(f)}, fmt::format("{} * (1 / {})", show(f, x), show(f, y))});
      ones.push_back({{one_of(f), y}, fmt::format("1 / {}", show(f, y))});
    }
    auto reproducing = division_candidates(device, f, ctx);
    if (!reproducing) return audit::failed(reproducing.error());
    std::vector<model::ScalarUnit> units = std::move(*reproducing);
    if (units.empty()) units = {model::ieee_unit(f)};  // no multiplier fits: nothing reproduces, said so
    audit::Finding out;
    auto got = conclude(device, {{q.done(), pairs}, {p.done(), triples}, {r.done(), ones}}, units, question(), out,
                        {keep_some(16, 0), keep_some(0, 4), keep_some(0, 4)});
    if (!got) return audit::failed(got.error());
    // No bit-exact candidate: the compiled division may be a sequence known by its bound.
    std::vector<Case> quotients = pairs;
    quotients.insert(quotients.end(), ones.begin(), ones.end());
    std::vector<std::uint64_t> outputs = (*got)[0];
    outputs.insert(outputs.end(), (*got)[2].begin(), (*got)[2].end());
    if (const auto bound = conclude_approximate(device, f, ctx, model::Op::div, quotients, outputs, question().question,
                                                audit::Answer(approximate_division), out)) {
      out.profile = division_profile(approximate_division);
      out.profile.stated(backends::UnitOp::div).max_ulps = *bound;
    }
    // A measurement beside the verdict: how often x / y == x * (1 / y) on the device.
    std::size_t same = 0;
    for (std::size_t i = 0; i < n; ++i) same += (*got)[0][i] == (*got)[1][i];
    out.parameters["cases"] = n;
    out.parameters["quotient_equals_product_by_reciprocal"] = same;
    return out;
  }

 private:
  static std::uint64_t one_of(const Format& f) { return one(f); }
};

}  // namespace

void add_division_probes(std::vector<const audit::ScalarProbe*>& out) {
  static const DivisionMethodProbe probe;
  out.push_back(&probe);
}

}  // namespace gp::scalar
