// Subnormal intermediates: a subnormal result used by the next operation of the same expression,
// never stored. Where loads and stores flush, single operations cannot show whether the unit
// itself flushes its results or its operands; two dependent operations can: (x * y) * z and
// (x * y) + z with x * y subnormal and x, y, z, and the exact result, normal.
#include <fmt/format.h>

#include "tests_scalar/families.hpp"
#include "tests_scalar/probe_support.hpp"

namespace gp::scalar {
namespace {

class IntermediateProbe final : public audit::ScalarProbe {
 public:
  std::string_view id() const override { return "scalar.subnormals.intermediate"; }
  std::string_view title() const override { return "Subnormal intermediate results"; }
  std::string_view source() const override {
    return "Daumas et al. 2006, section 2.1 (subnormals); MMA-Sim section III-F (flush after operations)";
  }
  bool applies(const Format& f) const override { return f.has_subnormals() && f.man_bits >= 4; }

  audit::Finding run(backends::Device& device, const Format& f, const audit::ProbeContext&) const override {
    if (!computes_in(device, f)) return no_format(f);
    // x * y = 1.5 * 2^(emin-3): subnormal and exact; x, y normal.
    const int a = f.emin() / 2, b = f.emin() - 3 - a;
    const std::uint64_t x = value(f, false, a - 1, 3), y = pow2(f, b);
    const std::uint64_t scale = pow2(f, 10), tiny_normal = smallest_normal(f);
    backends::ExprBuilder m(f, 3), s(f, 3);
    m.op(Node::mul, m.op(Node::mul, m.in(0), m.in(1)), m.in(2));
    s.op(Node::add, s.op(Node::mul, s.in(0), s.in(1)), s.in(2));
    const std::vector<Case> mc = {{{x, y, scale}, "(x * y) * 2^10"}, {{negate(f, x), y, scale}, "(-x * y) * 2^10"}};
    const std::vector<Case> sc = {{{x, y, tiny_normal}, "(x * y) + 2^emin"}};
    auto got_m = run_cases(device, m.done(), mc);
    auto got_s = run_cases(device, s.done(), sc);
    if (!got_m) return audit::failed(got_m.error().message);
    if (!got_s) return audit::failed(got_s.error().message);

    const model::Options exact;
    const std::uint64_t kept_m = value(f, false, f.emin() - 4 + 10, 3);
    const std::uint64_t kept_s = model::add(f, exact, tiny_normal, value(f, false, f.emin() - 4, 3)).bits;
    audit::Finding out;
    const auto observe = [&](const Case& c, std::uint64_t got, std::uint64_t kept, std::uint64_t flushed) {
      audit::Observation o;
      o.inputs = c.operands;
      o.output = got;
      o.predictions = {{"kept", kept}, {"flushed", flushed}};
      o.input_bits = o.output_bits = f.storage_bits;
      o.note = c.note;
      out.observations.push_back(std::move(o));
    };
    observe(mc[0], (*got_m)[0], kept_m, 0);
    observe(mc[1], (*got_m)[1], negate(f, kept_m), f.sign_mask());
    observe(sc[0], (*got_s)[0], kept_s, tiny_normal);
    // Zero or not is what tells: a unit that does not round exactly still keeps a nonzero value.
    const auto zero = [&](std::uint64_t v) { return model::classify(f, v) == model::Class::zero; };
    const bool flushed = zero((*got_m)[0]) && zero((*got_m)[1]) && (*got_s)[0] == tiny_normal;
    const bool kept = !zero((*got_m)[0]) && !zero((*got_m)[1]) && (*got_s)[0] != tiny_normal;
    out.parameters["flushed"] = flushed ? nlohmann::json(true) : kept ? nlohmann::json(false) : nlohmann::json(nullptr);
    // Only where loads and stores flush does this decide the profile: otherwise single operations
    // (scalar.subnormals.flush) tell a flushed result from a flushed operand, which this cannot.
    const std::vector<Case> tc = {{{smallest_subnormal(f)}, "transfer of the smallest subnormal"}};
    auto got_t = run_cases(device, backends::transfer(f), tc);
    if (!got_t) return audit::failed(got_t.error().message);
    const bool transfer_flushes = zero((*got_t)[0]);
    out.parameters["transfer_flushes"] = transfer_flushes;
    if (flushed) {
      out.verdict = "SUBNORMALS: a subnormal intermediate result is flushed to zero before the next operation";
      if (transfer_flushes) out.profile["subnormals"] = {{"output", "flush"}};
    } else if (kept) {
      out.verdict = "SUBNORMALS: a subnormal intermediate result reaches the next operation";
      if (transfer_flushes) out.profile["subnormals"] = {{"output", "preserve"}, {"input", "preserve"}};
    } else {
      out.verdict = "SUBNORMALS: subnormal intermediates are neither kept nor flushed consistently (see the observations)";
    }
    return out;
  }
};

}  // namespace

void add_subnormal_intermediate_probes(std::vector<const audit::ScalarProbe*>& out) {
  static const IntermediateProbe probe;
  out.push_back(&probe);
}

}  // namespace gp::scalar
