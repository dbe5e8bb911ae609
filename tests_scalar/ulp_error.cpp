// Error bounds in ulps of add, sub, mul, div and sqrt, as GPU Paranoia's error measurement
// reports them ("Error bound for mult= [-0.78125,0.625] ULPs" in the 7800GTX log): the error of
// each device result against the infinitely precise result, in ulps of that result, on
//  - an exhaustive set: every combination of positive values around 1 and powers of two (the
//    mantissas 1, 1 + U2, ..., 1.5 +- U2, ..., 2 - U2, RN(4/3), RN(5/3), times 2^-2 .. 2^2), so
//    that, as in the log, + is an effective addition and - an effective subtraction;
//  - random normal operands whose results are normal (the seed is reported): positive ones, as
//    the log's bounds are signed errors of positive results (a chopping unit shows [-1, 0]), and
//    the same with random signs (where chopping toward zero errs upward on negative results).
// Errors are computed with integers from the exact result (tests_scalar/ulp.hpp); mismatches are
// counted against the correctly rounded model.
#include <fmt/format.h>

#include <random>

#include "tests_scalar/families.hpp"
#include "tests_scalar/paranoia_support.hpp"
#include "tests_scalar/probe_support.hpp"
#include "tests_scalar/ulp.hpp"

namespace gp::scalar {
namespace paranoia {
namespace {

model::Result correctly_rounded(const Format& f, Node op, std::span<const u64> x) {
  switch (op) {
    case Node::add: return model::add(f, {}, x[0], x[1]);
    case Node::sub: return model::sub(f, {}, x[0], x[1]);
    case Node::mul: return model::mul(f, {}, x[0], x[1]);
    case Node::div: return model::div(f, {}, x[0], x[1]);
    default: return model::sqrt(f, {}, x[0]);
  }
}

struct Measured {
  ErrorRange range;
  std::size_t cases = 0;
};

class UlpErrorProbe final : public audit::ScalarProbe {
 public:
  UlpErrorProbe(Node op, std::string_view id)
      : op_(op), id_(id), title_(fmt::format("Error bound of {} in ulps", shout(op))) {}
  std::string_view id() const override { return id_; }
  std::string_view title() const override { return title_; }
  std::string_view source() const override {
    return "GPU Paranoia error measurement (Hillesland and Lastra 2004); 7800GTX log in Daumas et al. 2006, "
           "appendix A";
  }
  bool applies(const Format& f) const override { return paranoid_format(f); }
  audit::Finding run(backends::Device& device, const Format& f, const audit::ProbeContext& ctx) const override {
    if (!computes_in(device, f)) return no_format(f);
    return guarded([&] { return body(device, f, ctx); });
  }

 private:
  int arity() const { return op_ == Node::sqrt ? 1 : 2; }

  // Evaluates the tuples (flattened) in chunks and measures them; observations: the two ends of
  // the range and the first mismatches.
  Measured measure(backends::Device& device, const Format& f, const std::vector<u64>& tuples, const std::string& set,
                   audit::Finding& fi) const {
    const Expr e = op_ == Node::sqrt ? backends::unary(op_, f) : backends::binary(op_, f);
    const std::size_t k = std::size_t(arity());
    const std::size_t n = tuples.size() / k;
    constexpr std::size_t chunk = std::size_t{1} << 16;
    Measured m;
    m.cases = n;
    std::vector<u64> outputs(n);
    std::size_t recorded = 0;
    for (std::size_t start = 0; start < n; start += chunk) {
      const std::size_t count = std::min(chunk, n - start);
      const std::span<const u64> ops(tuples.data() + start * k, count * k);
      auto r = device.scalar({&e, ops});
      if (!r) throw DeviceFailure(r.error());
      if (r->size() != count) throw DeviceFailure("the device returned the wrong number of results");
      for (std::size_t i = 0; i < count; ++i) {
        const std::span<const u64> x(ops.data() + i * k, k);
        const u64 d = (*r)[i];
        outputs[start + i] = d;
        const model::Result cr = correctly_rounded(f, op_, x);
        const model::Class cc = model::classify(f, cr.bits);
        const auto exact = exact_result(f, op_, x);
        if (!exact || !(cc == model::Class::zero || model::is_finite_nonzero(cc))) {
          ++m.range.skipped;
          continue;
        }
        const bool mismatch = d != cr.bits && !(is_nan(f, d) && is_nan(f, cr.bits));
        m.range.mismatches += mismatch;
        const auto err = error_q64(f, *exact, d);
        if (err)
          m.range.add(*err, start + i);
        else
          ++m.range.nonfinite;
        if (mismatch && recorded++ < 6)
          fi.observations.push_back({std::vector<u64>(x.begin(), x.end()),
                                     d,
                                     {{"ieee", cr.bits}},
                                     f.storage_bits,
                                     f.storage_bits,
                                     fmt::format("{}: not correctly rounded, error {} ulps", set,
                                                 err ? fmt::format("{:.6g}", q64_to_double(*err)) : "infinite")});
      }
    }
    if (m.range.results > 0) {
      struct End {
        std::size_t index;
        const char* what;
        double ulps;
      };
      for (const End end :
           {End{m.range.argmin, "smallest", m.range.min_ulps()}, End{m.range.argmax, "largest", m.range.max_ulps()}}) {
        std::vector<u64> x(tuples.begin() + std::ptrdiff_t(end.index * k),
                           tuples.begin() + std::ptrdiff_t((end.index + 1) * k));
        const u64 cr = correctly_rounded(f, op_, x).bits;
        fi.observations.push_back({x,
                                   outputs[end.index],
                                   {{"ieee", cr}},
                                   f.storage_bits,
                                   f.storage_bits,
                                   fmt::format("{}: {} error, {:.6g} ulps", set, end.what, end.ulps)});
      }
    }
    return m;
  }

  std::vector<u64> exhaustive_set(const Format& f, std::size_t& values) const {
    const Consts c(f);
    std::vector<u64> mant = {c.one,
                             c.one_plus(1),
                             c.one_plus(2),
                             c.one_plus(3),
                             c.v(5, -2),
                             c.onehalf_plus(-2),
                             c.onehalf_plus(-1),
                             c.onehalf,
                             c.onehalf_plus(1),
                             c.onehalf_plus(2),
                             c.v(7, -2),
                             c.two_minus(3),
                             c.two_minus(2),
                             c.B9,
                             model::div(f, {}, c.v(4, 0), c.three).bits,
                             model::div(f, {}, c.v(5, 0), c.three).bits};
    std::vector<u64> v;
    for (int j = -2; j <= 2; ++j)
      for (u64 m : mant) v.push_back(model::mul(f, {}, m, c.v(1, j)).bits);
    values = v.size();
    std::vector<u64> tuples;
    if (arity() == 1) return v;
    for (u64 a : v)
      for (u64 b : v) tuples.insert(tuples.end(), {a, b});
    return tuples;
  }

  // Random operands; `signs`: of both signs, else positive (as the exhaustive set).
  std::vector<u64> random_set(const Format& f, std::size_t n, std::uint64_t seed, bool signs) const {
    std::mt19937_64 rng(seed ^ (0x756c7000ULL + std::uint64_t(op_) + (signs ? 0x100 : 0)));
    const int P = f.man_bits;
    const auto draw = [&](int e, bool neg) {
      return model::round_pack(f, {}, neg && signs, e - P, (u64{1} << P) | (rng() & f.man_mask())).bits;
    };
    const auto uniform = [&](int lo, int hi) { return lo + int(rng() % std::uint64_t(hi - lo + 1)); };
    std::vector<u64> tuples;
    tuples.reserve(n * std::size_t(arity()));
    if (op_ == Node::sqrt) {
      const int lo = std::max(f.emin() + 2, -30), hi = std::min(f.emax() - 2, 30);
      for (std::size_t i = 0; i < n; ++i) tuples.push_back(draw(uniform(lo, hi), false));
    } else if (op_ == Node::mul || op_ == Node::div) {
      const int s = std::min(f.emax() / 2 - 2, 30);
      for (std::size_t i = 0; i < n; ++i)
        tuples.insert(tuples.end(), {draw(uniform(-s, s), rng() & 1), draw(uniform(-s, s), rng() & 1)});
    } else {
      // Exponents close enough for the operands to interact, results normal even on cancellation.
      const int lo = std::max(f.emin() + f.precision() + 2, -30), hi = std::min(f.emax() - 2, 30);
      const int spread = f.precision() + 2;
      for (std::size_t i = 0; i < n; ++i) {
        const int ea = uniform(lo, hi);
        const int eb = std::clamp(ea + uniform(-spread, spread), lo, hi);
        tuples.insert(tuples.end(), {draw(ea, rng() & 1), draw(eb, rng() & 1)});
      }
    }
    return tuples;
  }

  audit::Finding body(backends::Device& device, const Format& f, const audit::ProbeContext& ctx) const {
    audit::Finding fi;
    std::size_t values = 0;
    const std::vector<u64> ex = exhaustive_set(f, values);
    const Measured a = measure(device, f, ex, "exhaustive set", fi);
    const std::size_t n = ctx.cases(std::uint64_t{1} << 10, std::uint64_t{1} << 16, std::uint64_t{1} << 20);
    const Measured r = measure(device, f, random_set(f, n, ctx.seed, false), "random", fi);
    const bool signed_set = op_ != Node::sqrt;
    const Measured s =
        signed_set ? measure(device, f, random_set(f, n, ctx.seed, true), "random signed", fi) : Measured{};
    nlohmann::json je = a.range.to_json();
    je["values"] = values;
    je["cases"] = a.cases;
    fi.parameters["exhaustive"] = je;
    for (const auto& [key, m] : {std::pair<const char*, const Measured&>{"random", r}, {"random_signed", s}}) {
      if (m.cases == 0) continue;
      nlohmann::json j = m.range.to_json();
      j["cases"] = m.cases;
      j["seed"] = ctx.seed;
      fi.parameters[key] = j;
    }
    const bool cr = a.range.correctly_rounded() && r.range.correctly_rounded() && s.range.correctly_rounded();
    const bool faithful = a.range.faithful() && r.range.faithful() && s.range.faithful();
    const std::uint64_t mismatches = a.range.mismatches + r.range.mismatches + s.range.mismatches;
    const std::uint64_t nonfinite = a.range.nonfinite + r.range.nonfinite + s.range.nonfinite;
    fi.parameters["correctly_rounded"] = cr;
    fi.parameters["faithful"] = faithful;
    std::string quality;
    if (cr)
      quality = "correctly rounded";
    else
      quality = fmt::format("{} ({} of {} differ)", faithful ? "faithful, not correctly rounded" : "not faithful",
                            mismatches, a.cases + r.cases + s.cases);
    if (nonfinite > 0) quality += fmt::format("; {} infinite or NaN where the exact result is finite", nonfinite);
    std::string sets = fmt::format("{} ULPs on {} combinations of {} values; random: {} positive", a.range.bounds(),
                                   a.cases, values, r.range.bounds());
    if (signed_set) sets += fmt::format(", {} signed", s.range.bounds());
    fi.verdict = fmt::format("{}: error bound {}; {}", shout(op_), sets, quality);
    return fi;
  }

  Node op_;
  std::string_view id_;
  std::string title_;
};

}  // namespace
}  // namespace paranoia

void add_ulp_error_probes(std::vector<const audit::ScalarProbe*>& out) {
  static const paranoia::UlpErrorProbe probes[] = {
      {Node::add, "scalar.add.ulp_error"}, {Node::sub, "scalar.sub.ulp_error"},   {Node::mul, "scalar.mul.ulp_error"},
      {Node::div, "scalar.div.ulp_error"}, {Node::sqrt, "scalar.sqrt.ulp_error"},
  };
  for (const auto& p : probes) out.push_back(&p);
}

}  // namespace gp::scalar
