// Extra precision of the MAD (Daumas, da Graca, Defour 2006, section 2.1): does a*b+c keep more
// bits of the product than the working precision? On random x, y the probe evaluates
// MAD(x, y, -x⊗y), x⊗y being the product rounded to nearest by the model: a fused MAD returns the
// exact rounding error of that product, a MAD that rounds the product to the working precision
// returns 0 (or the difference between its own product and x⊗y). Hypotheses: the product kept to q
// bits (rounded to nearest or chopped) for every q from p (unfused) to 2p (fused), and "as
// stored": the device's own product stored to memory, then added. The paper found no MAD of its
// GPUs keeping more than 24 bits.
#include <fmt/format.h>

#include <random>

#include "tests_scalar/daumas_support.hpp"
#include "tests_scalar/families.hpp"

namespace gp::scalar {
namespace {

using model::Rounding;
using model::u128;

// MAD(x, y, z) with the product x*y rounded to q bits with r and z = -RN(x*y): exact.
std::uint64_t predict(const Format& f, int q, Rounding r, const Case& c) {
  const model::Unpacked x = decode(f, c.operands[0]), y = decode(f, c.operands[1]), z = decode(f, c.operands[2]);
  const bool neg = x.neg != y.neg;
  const Wide w = round_to_bits(u128(x.sig) * y.sig, x.exp + y.exp, q, r);
  const int e0 = std::min(w.exp, z.exp);
  const u128 a = w.sig << (w.exp - e0), b = u128(z.sig) << (z.exp - e0);
  if (a == b) return model::zero(f, false).bits;
  // z has the opposite sign of the product.
  return a > b ? pack_wide(f, Rounding::rne, neg, {a - b, e0}) : pack_wide(f, Rounding::rne, !neg, {b - a, e0});
}

class MadProbe final : public audit::ScalarProbe {
 public:
  std::string_view id() const override { return "scalar.mad.extra_precision"; }
  std::string_view title() const override { return "Extra precision of the product in a MAD"; }
  std::string_view source() const override { return "Daumas, da Graca, Defour 2006, section 2.1"; }
  bool applies(const Format& f) const override { return f.has_sign() && f.man_bits >= 2 && f.has_subnormals(); }

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
    auto stored = stepwise(device, f, Node::mul, Node::add, cases);
    if (!stored) return audit::failed(stored.error().message);
    std::vector<Hypothesis> hyps = {tabled("as stored (product rounded by the device, stored, then added)", cases, *stored)};
    for (int q = p; q <= 2 * p; ++q)
      for (Rounding r : {Rounding::rne, Rounding::rz}) {
        if (q == 2 * p && r == Rounding::rz) continue;  // the exact product: one hypothesis
        const std::string name = q == 2 * p ? "fused (exact product)"
                                            : fmt::format("product rounded to {} bits ({})", q, model::name(r));
        hyps.push_back({name, [&f, q, r](const Case& c) { return predict(f, q, r, c); }});
      }
    audit::Finding finding;
    auto sel = select(device, backends::ternary(Node::mad, f), cases, hyps, finding);
    if (!sel) return audit::failed(sel.error().message);
    const auto& cs = sel->consistent;
    const auto has = [&](std::string_view h) {
      return std::any_of(cs.begin(), cs.end(), [&](const std::string& s) { return s.starts_with(h); });
    };
    finding.parameters["consistent"] = cs;
    int zeros = 0;
    for (std::uint64_t o : sel->outputs) zeros += model::classify(f, o) == model::Class::zero;
    finding.parameters["zero_results"] = zeros;
    if (has("fused")) {
      finding.parameters["fused"] = true;
      finding.parameters["product_bits"] = 2 * p;
      finding.verdict = fmt::format("MAD: fused: MAD(x, y, -x*y) returns the exact error of the product ({} bits kept)", 2 * p);
    } else if (has("as stored") || has(fmt::format("product rounded to {} bits", p))) {
      finding.parameters["fused"] = false;
      finding.parameters["product_bits"] = p;
      finding.verdict = fmt::format("MAD: not fused: the product is rounded to {} bits before the addition", p);
      if (!has("as stored")) finding.verdict += " (but not as the device's own product: see the observations)";
    } else if (!cs.empty()) {
      const int q = std::stoi(cs.front().substr(std::string_view("product rounded to ").size()));
      finding.parameters["fused"] = false;
      finding.parameters["product_bits"] = q;
      finding.verdict = fmt::format("MAD: the product keeps {} bits before the addition ({}), not {} nor {}", q,
                                    join(cs, " or "), p, 2 * p);
    } else {
      finding.parameters["fused"] = nullptr;
      finding.parameters["product_bits"] = nullptr;
      finding.verdict = fmt::format(
          "MAD: MAD(x, y, -x*y) fits no hypothesis (neither fused, nor a product of q bits, nor the device's own product); {} of {} results are 0",
          zeros, cases.size());
    }
    return finding;
  }
};

}  // namespace

void add_mad_probes(std::vector<const audit::ScalarProbe*>& out) {
  static const MadProbe mad;
  out.push_back(&mad);
}

}  // namespace gp::scalar
