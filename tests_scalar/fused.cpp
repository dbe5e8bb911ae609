// Fusedness of fma() and of a*b+c: one rounding or two. The operands make
// a*b carry bits below the working precision and c cancel its leading part, so that a fused unit
// returns exactly those low bits while a unit that rounds the product first returns a multiple of
// the product's last place (usually 0):
// - (1 + U2) * (1 + 2^-k) - (1 + 2^-k + U2) = 2^-(P+k) for k = 1..P: the largest k the device
//   gets right tells how many bits of the product it keeps beyond the precision;
// - random x, y with c = -RN(x*y): the exact error of the product (the MAD(x, y, -x*y) of Daumas
//   et al.), nonzero by choice of the operands.
// Node::fma is the fma() builtin; Node::mad is a*b+c as one source expression, which the compiler
// and the unit may contract. Profile keys: "fma": {"fused"} and "mad": {"fused"}.
#include <fmt/format.h>

#include <bit>
#include <random>

#include "tests_scalar/families.hpp"
#include "tests_scalar/paranoia_support.hpp"
#include "tests_scalar/probe_support.hpp"

namespace gp::scalar {
namespace paranoia {
namespace {

std::vector<Hyp> fused_hyps() {
  Hyp fused{"fused", {}};
  fused.fma_fused = fused.mad_fused = true;
  Hyp unfused{"unfused (product rounded to nearest first)", {}};
  unfused.fma_fused = unfused.mad_fused = false;
  Hyp chopped = unfused;
  chopped.name = "unfused, chopped";
  chopped.o.rounding = model::Rounding::rz;
  return {fused, unfused, chopped};
}

// Whether x is an integer multiple of 2^q (zeros are).
bool multiple_of(const Format& f, u64 x, int q) {
  const model::Unpacked u = model::unpack(f, x);
  if (u.cls == model::Class::zero) return true;
  if (!model::is_finite_nonzero(u.cls)) return false;
  return u.exp + std::countr_zero(u.sig) >= q;
}

class FusedProbe final : public audit::ScalarProbe {
 public:
  FusedProbe(Node op, std::string_view id, std::string_view title) : op_(op), id_(id), title_(title) {}
  std::string_view id() const override { return id_; }
  std::string_view title() const override { return title_; }
  std::string_view source() const override {
    return "Daumas, da Graca, Defour 2006, section 2.1 (MAD(x, y, -x*y))";
  }
  bool applies(const Format& f) const override { return paranoid_format(f); }
  audit::Finding run(backends::Device& device, const Format& f, const audit::ProbeContext& ctx) const override {
    if (!computes_in(device, f)) return no_format(f);
    return guarded([&] { return body(device, f, ctx); });
  }

 private:
  audit::Finding body(backends::Device& device, const Format& f, const audit::ProbeContext& ctx) const {
    const Consts c(f);
    const int P = c.P;
    audit::Finding fi;
    Bench b(device, f, fi, fused_hyps());
    const Expr& e = b.op(op_);
    const char* form = op_ == Node::fma ? "fma({}, {}, {})" : "{} * {} + {}";
    // Products scaled by 2^s so that the low bits (down to 2^(s - 2P - 1)) are normal numbers:
    // a subnormal result would show flushing, the underflow probe's finding, not fusion.
    const int s = std::min(std::max(0, f.emin() + 2 * P + 1), f.emax() - 2);
    std::vector<Item> items;
    for (int k = 1; k <= P; ++k) {
      const u64 x = c.v((std::int64_t{1} << P) + 1, s - P);
      const u64 y = c.v((std::int64_t{1} << k) + 1, -k);
      const u64 z = c.v(-((std::int64_t{1} << P) + (std::int64_t{1} << (P - k)) + 1), s - P);
      const std::string scale = s == 0 ? "" : fmt::format(" 2^{}", s);
      items.push_back({&e, {x, y, z},
                       fmt::format(fmt::runtime(form), "(1 + U2)" + scale, fmt::format("(1 + 2^-{})", k),
                                   fmt::format("-(1 + 2^-{} + U2)", k) + scale) +
                           fmt::format(" = 2^{} exactly", s - P - k)});
    }
    const std::size_t structured = items.size();
    std::mt19937_64 rng(ctx.seed ^ 0x66757365642121ULL);
    const std::size_t n = ctx.cases(16, 256, 4096);
    std::vector<Item> random;
    while (random.size() < n) {
      const auto draw = [&](int ex) {
        return model::round_pack(f, {}, rng() & 1, ex - P, (u64{1} << P) | (rng() & f.man_mask())).bits;
      };
      const u64 x = draw(s + int(rng() % 2)), y = draw(-int(rng() % 2));
      const model::Result p = model::mul(f, {}, x, y);
      if (!(p.flags & model::Flag::inexact)) continue;
      random.push_back({&e, {x, y, c.neg(p.bits)},
                        fmt::format(fmt::runtime(form), show(f, x), show(f, y), "-RN(x*y)")});
    }
    const std::vector<u64> o1 = b.run(items);
    const std::vector<u64> o2 = b.run(random, false);
    items.insert(items.end(), random.begin(), random.end());
    std::vector<u64> out = o1;
    out.insert(out.end(), o2.begin(), o2.end());

    int kept = 0;
    while (kept < P && out[std::size_t(kept)] == c.v(1, s - P - kept - 1)) ++kept;
    std::size_t fused_ok = 0, coarse = 0, recorded = 0;
    for (std::size_t i = 0; i < items.size(); ++i) {
      const u64 fp = b.predict("fused", items[i]);
      const bool ok = out[i] == fp;
      fused_ok += ok;
      // The last place of the rounded product: a unit that rounds the product first cannot go below.
      const model::Unpacked p = model::unpack(f, model::mul(f, {}, items[i].x[0], items[i].x[1]).bits);
      const int q = std::max(p.exp + model::msb(p.sig), f.emin()) - P;
      coarse += multiple_of(f, out[i], q);
      if (i >= structured && !ok && recorded++ < 8) {
        audit::Observation ob{items[i].x, out[i], {}, f.storage_bits, f.storage_bits, items[i].note};
        for (const Hyp& h : b.hyps()) ob.predictions.emplace_back(h.name, b.predict(h.name, items[i]));
        fi.observations.push_back(std::move(ob));
      }
    }
    const bool fused = fused_ok == items.size();
    const bool rounded_first = coarse == items.size() && kept == 0;
    fi.parameters["fused"] = fused;
    fi.parameters["extra_product_bits"] = kept;
    fi.parameters["product_bits"] = f.precision() + kept;
    fi.parameters["cases"] = items.size();
    fi.parameters["fused_results"] = fused_ok;
    fi.parameters["consistent"] = b.consistent();
    fi.parameters["seed"] = ctx.seed;
    fi.profile[op_ == Node::fma ? "fma" : "mad"]["fused"] = fused;
    const std::string what = op_ == Node::fma ? "FMA: fma(a, b, c)" : "MAD: a*b+c";
    if (fused)
      fi.verdict = fmt::format("{} is fused: one rounding, the exact error of the product comes back ({} bits kept)",
                               what, 2 * f.precision());
    else if (rounded_first)
      fi.verdict = fmt::format("{} is not fused: the product is rounded to {} bits before the addition", what,
                               f.precision());
    else
      fi.verdict = fmt::format("{} is not fused: the product keeps {} bits ({} of {} results fused)", what,
                               f.precision() + kept, fused_ok, items.size());
    return fi;
  }

  Node op_;
  std::string_view id_, title_;
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
