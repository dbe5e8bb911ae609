// How division is done: correctly rounded, or as the dividend times a reciprocal (Daumas et al.
// section 1.3: "the division error suggests that division is implemented by multiplying the
// dividend by an approximation of the divisor's inverse"). Observed, not assumed: the device
// computes x / y, 1 / y and x * (1 / y); a reciprocal unit gives x / y == x * (1 / y) on every
// case, and its 1 / y is then compared with the reciprocal rounded in each mode.
#include <fmt/format.h>

#include <random>

#include "tests_scalar/families.hpp"
#include "tests_scalar/probe_support.hpp"

namespace gp::scalar {
namespace {

using model::Rounding;

class DivisionMethodProbe final : public audit::ScalarProbe {
 public:
  std::string_view id() const override { return "scalar.div.method"; }
  std::string_view title() const override { return "Division: correctly rounded or by a reciprocal"; }
  std::string_view source() const override {
    return "Daumas, da Graca, Defour 2006, section 1.3; appendix A (division lacks a guard digit)";
  }

  audit::Finding run(backends::Device& device, const Format& f, const audit::ProbeContext& ctx) const override {
    if (!computes_in(device, f)) return no_format(f);
    // x / y, and x * (1 / y) with 1 read from a buffer like every operand.
    backends::ExprBuilder q(f, 2), p(f, 3), r(f, 2);
    q.op(Node::div, q.in(0), q.in(1));
    const int px = p.in(0), py = p.in(1), one = p.in(2);
    p.op(Node::mul, px, p.op(Node::div, one, py));
    r.op(Node::div, r.in(0), r.in(1));
    const Expr quotient = q.done(), via_reciprocal = p.done(), reciprocal = r.done();

    std::mt19937_64 rng(ctx.seed ^ 0xd1f1d1f1ULL);
    const std::size_t n = std::size_t(ctx.cases(256, 2048, 16384));
    std::vector<Case> pairs, triples, ones;
    const auto near_one = [&] {
      const int e = int(rng() % 5) - 2;
      return value(f, rng() & 1, e - f.man_bits, (std::uint64_t{1} << f.man_bits) | (rng() & f.man_mask()));
    };
    for (std::size_t i = 0; i < n; ++i) {
      const std::uint64_t x = near_one(), y = near_one();
      pairs.push_back({{x, y}, ""});
      triples.push_back({{x, y, one_of(f)}, ""});
      ones.push_back({{one_of(f), y}, ""});
    }
    auto got_q = run_cases(device, quotient, pairs);
    auto got_p = run_cases(device, via_reciprocal, triples);
    auto got_r = run_cases(device, reciprocal, ones);
    if (!got_q) return audit::failed(got_q.error().message);
    if (!got_p) return audit::failed(got_p.error().message);
    if (!got_r) return audit::failed(got_r.error().message);

    audit::Finding out;
    std::vector<std::string> quotient_modes, reciprocal_modes;
    for (Rounding m : model::all_roundings) {
      model::Options o;
      o.rounding = m;
      bool q_ok = true, r_ok = true;
      for (std::size_t i = 0; i < n; ++i) {
        q_ok = q_ok && model::div(f, o, pairs[i].operands[0], pairs[i].operands[1]).bits == (*got_q)[i];
        r_ok = r_ok && model::div(f, o, one_of(f), pairs[i].operands[1]).bits == (*got_r)[i];
      }
      if (q_ok) quotient_modes.emplace_back(model::name(m));
      if (r_ok) reciprocal_modes.emplace_back(model::name(m));
    }
    std::size_t same = 0;
    for (std::size_t i = 0; i < n; ++i) same += (*got_q)[i] == (*got_p)[i];
    for (std::size_t i = 0; i < std::min<std::size_t>(n, 16); ++i) {
      audit::Observation o;
      o.inputs = pairs[i].operands;
      o.output = (*got_q)[i];
      o.predictions = {{"x * (1/y) on the device", (*got_p)[i]}};
      model::Options rne;
      o.predictions.emplace_back("correctly rounded (rne)", model::div(f, rne, o.inputs[0], o.inputs[1]).bits);
      o.input_bits = o.output_bits = f.storage_bits;
      out.observations.push_back(std::move(o));
    }
    const auto list = [](const std::vector<std::string>& v) {
      std::string s;
      for (const auto& x : v) s += (s.empty() ? "" : " or ") + x;
      return s;
    };
    out.parameters = {{"cases", n},
                      {"quotient_equals_product_by_reciprocal", same},
                      {"quotient_correctly_rounded_in", quotient_modes},
                      {"reciprocal_correctly_rounded_in", reciprocal_modes}};
    if (!quotient_modes.empty()) {
      out.verdict = fmt::format("DIVISION: correctly rounded ({})", list(quotient_modes));
      out.profile["div"] = {{"method", "correctly_rounded"}, {"rounding", quotient_modes.front()}};
    } else if (same == n && !reciprocal_modes.empty()) {
      out.verdict = fmt::format("DIVISION: x * (1/y), the reciprocal correctly rounded ({}), then the multiplier",
                                list(reciprocal_modes));
      out.profile["div"] = {{"method", "reciprocal"}, {"rounding", reciprocal_modes.front()}};
    } else if (same == n) {
      out.verdict = "DIVISION: x * (1/y), the reciprocal rounded by no IEEE mode (an approximation)";
      out.profile["div"] = {{"method", "reciprocal"}, {"rounding", "none"}};
    } else {
      out.verdict = fmt::format("DIVISION: neither correctly rounded nor x * (1/y) ({} of {} quotients equal x * (1/y))",
                                same, n);
      out.profile["div"] = {{"method", "unknown"}, {"rounding", "none"}};
    }
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
