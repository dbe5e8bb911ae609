// Fusedness of fma() and of a*b+c: one rounding or two. The operands make
// a*b carry bits below the working precision and c cancel its leading part, so that a fused unit
// returns exactly those low bits while a unit that rounds the product first returns a multiple of
// the product's last place (usually 0):
// - (1 + U2) * (1 + 2^-k) - (1 + 2^-k + U2) = 2^-(P+k) for k = 1..P: the largest k the device
//   gets right tells how many bits of the product it keeps beyond the precision;
// - random x, y with c = -RN(x*y): the exact error of the product (the MAD(x, y, -x*y) of Daumas
//   et al.), nonzero by choice of the operands.
// The candidates are the units whose adders and multipliers reproduce the device's sums and
// products, with fma() and a*b+c fused or not (fusion_candidates).
// Node::fma is the fma() builtin; Node::mad is a*b+c as one source expression, which the compiler
// and the unit may contract. Profile keys: "fma": {"fused"} and "mad": {"fused"}.
#include <fmt/format.h>

#include <random>

#include "tests_scalar/families.hpp"
#include "tests_scalar/paranoia_support.hpp"
#include "tests_scalar/daumas_support.hpp"
#include "tests_scalar/probe_support.hpp"

namespace gp::scalar {
namespace paranoia {
namespace {

std::string say_fused(Node op, const FusionAnswer& a) {
  const std::string what = op == Node::fma ? "fma(a, b, c)" : "a*b+c";
  return (a.fused ? fmt::format("{} is fused: one rounding, the exact error of the product comes back", what)
                  : fmt::format("{} is not fused: the product is rounded before the addition", what)) +
         in_registers(a.registers);
}

// The profile's "fma" or "mad": {"fused"}, unless the answer is its registers'.
backends::ScalarProfile fused_profile(Node op, const FusionAnswer& a) {
  backends::ScalarProfile p;
  if (!a.registers) p.stated(op == Node::fma ? backends::UnitOp::fma : backends::UnitOp::mad).fused = a.fused;
  return p;
}

class FusedProbe final : public UnitProbe {
 public:
  FusedProbe(Node op, std::string_view id, std::string_view title)
      : op_(op),
        id_(id),
        title_(title),
        q_{{op == Node::fma ? "FMA" : "MAD", op == Node::fma ? "the fusion of fma()" : "the fusion of a*b+c",
            [op](const audit::Answer& a) { return say_fused(op, a.as<FusionAnswer>()); }},
           // fma() of a unit without one is its MAD: fused either way when the MAD is.
           [op](const model::ScalarUnit& u) {
             return audit::Answer(fusion_answer(u, op == Node::fma ? u.fma_fused || u.mad_fused : u.mad_fused));
           },
           [op](const audit::Answer& a) { return fused_profile(op, a.as<FusionAnswer>()); }} {}
  std::string_view id() const override { return id_; }
  std::string_view title() const override { return title_; }
  std::string_view source() const override { return "Daumas, da Graca, Defour 2006, section 2.1 (MAD(x, y, -x*y))"; }
  bool applies(const Format& f) const override { return paranoid_format(f); }
  const UnitQuestion& question() const override { return q_; }
  audit::Finding run(backends::Device& device, const Format& f, const audit::ProbeContext& ctx) const override {
    if (!computes_in(device, f)) return no_format(f);
    return guarded([&] { return body(device, f, ctx); });
  }

 private:
  audit::Finding body(backends::Device& device, const Format& f, const audit::ProbeContext& ctx) const {
    const Consts c(f);
    const int P = c.P;
    const Expr e = backends::ternary(op_, f);
    const char* form = op_ == Node::fma ? "fma({}, {}, {})" : "{} * {} + {}";
    // Products scaled by 2^s so that the low bits (down to 2^(s - 2P - 1)) are normal numbers:
    // a subnormal result would show flushing, the underflow probe's finding, not fusion.
    const int s = std::min(std::max(0, f.emin() + 2 * P + 1), f.emax() - 2);
    std::vector<Case> items;
    for (int k = 1; k <= P; ++k) {
      const u64 x = c.v((std::int64_t{1} << P) + 1, s - P);
      const u64 y = c.v((std::int64_t{1} << k) + 1, -k);
      const u64 z = c.v(-((std::int64_t{1} << P) + (std::int64_t{1} << (P - k)) + 1), s - P);
      const std::string scale = s == 0 ? "" : fmt::format(" 2^{}", s);
      items.push_back({{x, y, z},
                       fmt::format(fmt::runtime(form), "(1 + U2)" + scale, fmt::format("(1 + 2^-{})", k),
                                   fmt::format("-(1 + 2^-{} + U2)", k) + scale) +
                           fmt::format(" = 2^{} exactly", s - P - k)});
    }
    for (Case& k : double_rounding_cases(f)) {
      k.note = op_ == Node::fma ? "fma: " + k.note : k.note;
      items.push_back(std::move(k));
    }
    std::mt19937_64 rng(ctx.seed ^ 0x66757365642121ULL);
    const std::size_t n = ctx.cases(16, 256, 4096);
    std::vector<Case> random;
    while (random.size() < n) {
      const auto draw = [&](int ex) {
        return model::round_pack(f, {}, rng() & 1, ex - P, (u64{1} << P) | (rng() & f.man_mask())).bits;
      };
      const u64 x = draw(s + int(rng() % 2)), y = draw(-int(rng() % 2));
      const model::Result p = model::mul(f, {}, x, y);
      if (!(p.flags & model::Flag::inexact)) continue;
      random.push_back({{x, y, c.neg(p.bits)}, fmt::format(fmt::runtime(form), show(f, x), show(f, y), "-RN(x*y)")});
    }
    auto units = fusion_candidates(device, f, ctx);
    if (!units) return audit::failed(units.error());
    audit::Finding fi;
    auto out = conclude(device, {{e, items}, {e, random}}, *units, question(), fi, {keep_all(), keep_some(0, 8)});
    if (!out) return audit::failed(out.error());
    // A measurement beside the verdict: how many bits below the precision the product keeps.
    int kept = 0;
    while (kept < P && (*out)[0][std::size_t(kept)] == c.v(1, s - P - kept - 1)) ++kept;  // the first P items
    fi.parameters["extra_product_bits"] = kept;
    fi.parameters["cases"] = items.size() + random.size();
    fi.parameters["seed"] = ctx.seed;
    return fi;
  }

  Node op_;
  std::string_view id_, title_;
  UnitQuestion q_;
};

}  // namespace
}  // namespace paranoia

void add_fused_probes(std::vector<const audit::ScalarProbe*>& out) {
  static const paranoia::FusedProbe fma(Node::fma, "scalar.fma.fused", "fma() fused or not (one rounding or two)");
  static const paranoia::FusedProbe mad(Node::mad, "scalar.mad.fused", "a*b+c contracted (fused) or not");
  out.push_back(&fma);
  out.push_back(&mad);
}

}  // namespace gp::scalar
