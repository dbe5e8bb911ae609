// Extra precision of the MAD (Daumas, da Graca, Defour 2006, section 2.1): does a*b+c keep more
// bits of the product than the working precision? On random x, y the probe evaluates
// MAD(x, y, -x*y), x*y being the product rounded to nearest by the model: a fused MAD returns the
// exact rounding error of that product, a MAD that rounds the product first returns 0 (or the
// difference between its own product and x*y). The candidates are the units whose adders and
// multipliers reproduce the device's sums and products, with a fused MAD or not
// (fusion_candidates). The paper found no MAD of its GPUs keeping more than 24 bits.
#include <fmt/format.h>

#include <random>

#include "tests_scalar/daumas_support.hpp"
#include "tests_scalar/families.hpp"

namespace gp::scalar {
namespace {

std::string say_mad(const FusionAnswer& a) {
  return (a.fused ? "fused: MAD(x, y, -x*y) returns the exact error of the product"
                  : "not fused: the product is rounded by the multiplier before the addition") +
         in_registers(a.registers);
}

class MadProbe final : public UnitProbe {
 public:
  std::string_view id() const override { return "scalar.mad.extra_precision"; }
  std::string_view title() const override { return "Extra precision of the product in a MAD"; }
  std::string_view source() const override { return "Daumas, da Graca, Defour 2006, section 2.1"; }
  bool applies(const Format& f) const override { return f.has_sign() && f.man_bits >= 2 && f.has_subnormals(); }
  const UnitQuestion& question() const override {
    static const UnitQuestion q{{"MAD", "the fusion of the MAD", audit::typed(say_mad)},
                                [](const model::ScalarUnit& u) { return audit::Answer(fusion_answer(u, u.mad_fused)); },
                                nullptr};
    return q;
  }

  audit::Finding run(backends::Device& device, const Format& f, const audit::ProbeContext& ctx) const override {
    if (!computes_in(device, f)) return no_format(f);
    const int p = f.precision();
    std::mt19937_64 rng(ctx.seed ^ 0x6d61642d70726563ULL);
    const std::uint64_t n = ctx.cases(16, 128, 4096);
    // Exponents where the product's error (a multiple of ulp(x) * ulp(y)) is normal and the
    // product finite: binary16 needs them from 3 up.
    const int lo = std::max(-4, (f.emin() + 2 * (p - 1) + 1) / 2), hi = std::min(lo + 8, (f.emax() - 2) / 2);
    std::vector<Case> cases;
    model::Options rne;
    while (cases.size() < n) {
      const std::uint64_t x = random_normal(f, rng(), rng(), rng() & 1, lo, hi);
      const std::uint64_t y = random_normal(f, rng(), rng(), rng() & 1, lo, hi);
      const model::Result prod = model::mul(f, rne, x, y);
      if (!(prod.flags & model::Flag::inexact)) continue;  // an exact product has no error to show
      cases.push_back({{x, y, negate(f, prod.bits)}, fmt::format("MAD({}, {}, -x*y)", show(f, x), show(f, y))});
    }
    auto units = fusion_candidates(device, f, ctx);
    if (!units) return audit::failed(units.error());
    audit::Finding finding;
    // And sums just above a tie: wider registers round them twice.
    auto out = conclude(
        device, {{backends::ternary(Node::mad, f), cases}, {backends::ternary(Node::mad, f), double_rounding_cases(f)}},
        *units, question(), finding);
    if (!out) return audit::failed(out.error());
    int zeros = 0;
    for (std::uint64_t o : (*out)[0]) zeros += model::classify(f, o) == model::Class::zero;
    finding.parameters["zero_results"] = zeros;
    finding.verdict += fmt::format("; {} of {} results are 0", zeros, cases.size());
    return finding;
  }
};

}  // namespace

void add_mad_probes(std::vector<const audit::ScalarProbe*>& out) {
  static const MadProbe mad;
  out.push_back(&mad);
}

}  // namespace gp::scalar
