// Square root as Paranoia tests it (milestones 70-85): sqrt of 0, -0 and 1; sqrt(X*X) == X on
// exact squares (X = Radix, 1/Radix, U1 and integers whose squares are exact); monotonicity on
// neighbouring operands; and whether sqrt is correctly rounded, chopped or neither, decided on
// operands whose roots lie just below and just above the midpoint between two neighbours (where
// Paranoia builds such operands with its SR3750 search, the model finds them directly), with the
// observed error range in ulps.
#include <fmt/format.h>

#include <random>

#include "tests_scalar/families.hpp"
#include "tests_scalar/paranoia_support.hpp"
#include "tests_scalar/probe_support.hpp"
#include "tests_scalar/ulp.hpp"

namespace gp::scalar {
namespace paranoia {
namespace {

class SqrtProbe final : public audit::ScalarProbe {
 public:
  std::string_view id() const override { return "scalar.sqrt.paranoia"; }
  std::string_view title() const override {
    return "Square root: exact squares, monotonicity, rounding (Paranoia 70-85)";
  }
  std::string_view source() const override { return "Paranoia (Kahan; Karpinski, Byte 1985), milestones 70-85"; }
  bool applies(const Format& f) const override { return paranoid_format(f); }
  audit::Finding run(backends::Device& device, const Format& f, const audit::ProbeContext& ctx) const override {
    if (!computes_in(device, f)) return no_format(f);
    return guarded([&] { return body(device, f, ctx); });
  }

 private:
  // What a check of several cases found: how many it tried, how many failed, the first failure.
  struct Tally {
    std::size_t tested = 0, failures = 0;
    std::string first;
  };

  static Item sqrt_item(const Expr& sq, u64 x, std::string note) { return Item{&sq, {x}, std::move(note)}; }

  audit::Finding body(backends::Device& device, const Format& f, const audit::ProbeContext& ctx) const {
    const Consts c(f);
    audit::Finding fi;
    Bench b(device, f, fi, ieee_and_chopped(f));
    const Expr& sq = b.op(Node::sqrt);

    // 0, -0, 1.
    const std::vector<u64> basic = b.run(
        {sqrt_item(sq, c.zero, "sqrt(0)"), sqrt_item(sq, c.neg(c.zero), "sqrt(-0)"), sqrt_item(sq, c.one, "sqrt(1)")});
    const bool basic_ok =
        same_value(f, basic[0], c.zero) && same_value(f, basic[1], c.zero) && same_value(f, basic[2], c.one);
    const Tally squares = exact_squares(b, c, sq);
    // One stream for the monotonicity's centres, then the rounding's operands.
    std::mt19937_64 rng(ctx.seed ^ 0x7371727421ULL);
    const std::size_t n = ctx.cases(32, 512, 16384);
    const Tally mono = monotonicity(b, c, sq, rng, n, fi);
    ErrorRange range;
    const std::string rounding = rounding_kind(b, c, sq, rng, n, range, fi);

    fi.parameters["basic"] = basic_ok;
    fi.parameters["sqrt_minus_zero"] = show(f, basic[1]) + (model::sign_of(f, basic[1]) ? " (negative)" : "");
    fi.parameters["exact_squares"] = {{"tested", squares.tested}, {"failures", squares.failures}};
    fi.parameters["monotonic"] = {{"tested", mono.tested}, {"failures", mono.failures}};
    fi.parameters["rounding"] = rounding;
    fi.parameters["error"] = range.to_json();
    fi.parameters["seed"] = ctx.seed;
    fi.verdict = verdict(rounding, range, basic_ok, squares, mono);
    return fi;
  }

  // sqrt(X*X) == X: Radix, 1/Radix, U1, and integers of at most p/2 bits above 2^(p/2 - 1).
  // (U1 only where U1^2 is normal: a flushed square is the underflow probe's finding.)
  static Tally exact_squares(Bench& b, const Consts& c, const Expr& sq) {
    const Format& f = c.f;
    std::vector<u64> roots = {c.two, c.half};
    if (-2 * (c.P + 1) >= f.emin()) roots.push_back(c.U1);
    const int h = f.precision() / 2;
    const std::int64_t trials = std::min<std::int64_t>(20, (std::int64_t{1} << (h - 1)) - 1);
    for (std::int64_t k = 1; k <= trials; ++k) roots.push_back(c.v((std::int64_t{1} << (h - 1)) + k, 0));
    std::vector<Item> items;
    for (u64 x : roots)
      items.push_back(sqrt_item(sq, model::mul(f, {}, x, x).bits, fmt::format("sqrt({0} * {0})", show_pow2(f, x))));
    const std::vector<u64> sq_out = b.run(items);
    Tally t;
    t.tested = roots.size();
    for (std::size_t i = 0; i < roots.size(); ++i)
      if (!same_value(f, sq_out[i], roots[i]) && t.failures++ == 0)
        t.first = fmt::format("{} = {}", items[i].note, show(f, sq_out[i]));
    return t;
  }

  // Monotonicity: sqrt(prev(x)) <= sqrt(x) <= sqrt(next(x)) around 1, the radix and random points.
  static Tally monotonicity(Bench& b, const Consts& c, const Expr& sq, std::mt19937_64& rng, std::size_t n,
                            audit::Finding& fi) {
    const Format& f = c.f;
    const int lo = std::max(f.emin() + 2, -16), hi = std::min(f.emax() - 2, 16);
    std::vector<u64> centres = {c.one, c.two, c.v(4, 0), c.onehalf};
    while (centres.size() < std::min<std::size_t>(n, 64)) {
      const int e = lo + int(rng() % std::uint64_t(hi - lo + 1));
      centres.push_back(model::round_pack(f, {}, false, e - c.P, (u64{1} << c.P) | (rng() & f.man_mask())).bits);
    }
    std::vector<Item> items;
    const u64 step = u64{1} << f.pad_bits;
    for (u64 x : centres) {
      items.push_back(sqrt_item(sq, x - step, fmt::format("sqrt(prev({}))", show(f, x))));
      items.push_back(sqrt_item(sq, x, fmt::format("sqrt({})", show(f, x))));
      items.push_back(sqrt_item(sq, x + step, fmt::format("sqrt(next({}))", show(f, x))));
    }
    const std::vector<u64> mono = b.run(items, false);
    Tally t;
    t.tested = centres.size();
    for (std::size_t i = 0; i + 2 < mono.size(); i += 3) {
      const bool ok = !is_nan(f, mono[i]) && !is_nan(f, mono[i + 1]) && !is_nan(f, mono[i + 2]) &&
                      compare(f, mono[i], mono[i + 1]) <= 0 && compare(f, mono[i + 1], mono[i + 2]) <= 0;
      if (ok) continue;
      if (t.failures++ == 0) t.first = show(f, centres[i / 3]);
      if (t.failures <= 4)
        for (std::size_t k = i; k < i + 3; ++k)
          fi.observations.push_back({items[k].x,
                                     mono[k],
                                     {{"ieee", b.predict("ieee", items[k])}},
                                     f.storage_bits,
                                     f.storage_bits,
                                     items[k].note});
    }
    return t;
  }

  // Paranoia's milestone 80 operands, then x = RZ(s^2) and RU(s^2) for n random midpoints
  // s = y + ulp(y)/2: roots just below and above s.
  static std::vector<Item> rounding_operands(const Consts& c, const Expr& sq, std::mt19937_64& rng, std::size_t n) {
    const Format& f = c.f;
    std::vector<Item> items;
    const int ylo = std::max(f.emin() / 2 + 2, -8), yhi = std::min(f.emax() / 2 - 2, 8);
    model::Options rz, ru;
    rz.rounding = model::Rounding::rz;
    ru.rounding = model::Rounding::ru;
    items.push_back(sqrt_item(sq, c.one_plus(1), "sqrt(1 + U2)"));
    items.push_back(sqrt_item(sq, c.F9, "sqrt(F9)"));
    items.push_back(sqrt_item(sq, c.one_plus(3), "sqrt(1 + 3 U2)"));
    items.push_back(sqrt_item(sq, c.one_minus(3), "sqrt(1 - 3 U1)"));
    for (std::size_t i = 0; i < n; ++i) {
      const int e = ylo + int(rng() % std::uint64_t(yhi - ylo + 1));
      const u64 ysig = (u64{1} << c.P) | (rng() & f.man_mask());
      const u128 s = (u128(ysig) << 1) | 1;  // the midpoint, in units of 2^(e - P - 1)
      int ex = 2 * (e - c.P - 1);
      const u64 s2 = model::narrow_jam(s * s, ex);
      const u64 below = model::round_pack(f, rz, false, ex, s2).bits;
      const u64 above = model::round_pack(f, ru, false, ex, s2).bits;
      const u64 y = model::round_pack(f, {}, false, e - c.P, ysig).bits;
      items.push_back(sqrt_item(sq, below, fmt::format("sqrt(RZ(s^2)), s = {} + ulp/2", show(f, y))));
      items.push_back(sqrt_item(sq, above, fmt::format("sqrt(RU(s^2)), s = {} + ulp/2", show(f, y))));
    }
    return items;
  }

  // Whether sqrt is "rounded", "chopped" or "neither" on the rounding operands, with its error range.
  static std::string rounding_kind(Bench& b, const Consts& c, const Expr& sq, std::mt19937_64& rng, std::size_t n,
                                   ErrorRange& range, audit::Finding& fi) {
    const Format& f = c.f;
    const std::vector<Item> items = rounding_operands(c, sq, rng, n);
    const std::vector<u64> rout = b.run(items, false);
    bool rounded = true, chopped = true;
    std::size_t recorded = 0;
    for (std::size_t i = 0; i < items.size(); ++i) {
      const u64 rn = b.predict("ieee", items[i]), z = b.predict("chopped", items[i]);
      rounded = rounded && rout[i] == rn;
      chopped = chopped && rout[i] == z;
      if (rout[i] != rn) ++range.mismatches;
      const auto x = exact_result(f, Node::sqrt, items[i].x);
      const auto err = x ? error_q64(f, *x, rout[i]) : std::nullopt;
      if (err)
        range.add(*err, i);
      else
        ++range.nonfinite;
      // Observations: Paranoia's four operands and the first cases that are not correctly rounded.
      if (i < 4 || (rout[i] != rn && recorded++ < 12))
        fi.observations.push_back(
            {items[i].x, rout[i], {{"ieee", rn}, {"chopped", z}}, f.storage_bits, f.storage_bits, items[i].note});
    }
    return rounded ? "rounded" : chopped ? "chopped" : "neither";
  }

  static std::string verdict(const std::string& rounding, const ErrorRange& range, bool basic_ok, const Tally& squares,
                             const Tally& mono) {
    std::vector<std::string> parts;
    if (rounding == "rounded")
      parts.push_back("rounds correctly");
    else if (rounding == "chopped")
      parts.push_back("appears to chop");
    else
      parts.push_back(
          fmt::format("Is neither chopped nor correctly rounded; observed errors run from {:.6g} to {:.6g} "
                      "ulps",
                      range.min_ulps(), range.max_ulps()));
    if (!basic_ok) parts.push_back("FAILURE: square root of 0.0, -0.0 or 1.0 wrong");
    parts.push_back(squares.failures == 0 ? fmt::format("sqrt(X*X) == X for {} values", squares.tested)
                                          : fmt::format("SERIOUS: sqrt(X*X) != X for {} of {} values (first: {})",
                                                        squares.failures, squares.tested, squares.first));
    parts.push_back(mono.failures == 0 ? "passed a test for monotonicity"
                                       : fmt::format("DEFECT: sqrt(X) is non-monotonic for X near {}", mono.first));
    return "SQUARE ROOT: " + join(parts, "; ");
  }
};

}  // namespace
}  // namespace paranoia

void add_paranoia_sqrt_probes(std::vector<const audit::ScalarProbe*>& out) {
  static const paranoia::SqrtProbe probe;
  out.push_back(&probe);
}

}  // namespace gp::scalar
