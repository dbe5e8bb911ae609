// The host fast path of add, sub and mul (model/ops.hpp: binary16 and binary32 in round to nearest
// even by the host's arithmetic in a wider format) against the general path of the same operation:
// bits and flags alike, for every option that reaches the fast path, under every host rounding mode
// and, on x86-64, with MXCSR's DAZ and FTZ set, which the fast path must not depend on. Operands:
// every b for a set of edge a (binary16), every binary16 product near the subnormal range, every
// binary16 infinity and NaN under every NaN option, products at the overflow and underflow
// thresholds, all pairs of edge values, sums whose exponents are near the limit of exact sums in
// the wider format, and random patterns weighted to the subnormal, underflow, overflow and
// cancellation cases; through the per-call functions and the batched evaluate() (whose vector loop
// is a third form of the fast path), which is also checked against evaluate() per call for the
// other formats and operations.
#include <gtest/gtest.h>

#include <bit>
#include <cfenv>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "model/ops.hpp"
#include "unittests/drawn_seed.hpp"
#if defined(__x86_64__)
#include <xmmintrin.h>
#endif

namespace gp::model {
namespace {

constexpr Op kOps[] = {Op::add, Op::sub, Op::mul};

Result fast(Op op, const Format& f, const Options& o, std::uint64_t a, std::uint64_t b) {
  return op == Op::add ? add(f, o, a, b) : op == Op::sub ? sub(f, o, a, b) : mul(f, o, a, b);
}
Result general(Op op, const Format& f, const Options& o, std::uint64_t a, std::uint64_t b) {
  return op == Op::add   ? detail::general<Op::add>(f, o, a, b)
         : op == Op::sub ? detail::general<Op::sub>(f, o, a, b)
                         : detail::general<Op::mul>(f, o, a, b);
}

// The options that reach the fast path (rne with every combination of the options it reads or
// passes on), and options of the NaN results, which it hands to the general path.
std::vector<Options> fast_options() {
  std::vector<Options> v;
  for (int i = 0; i < 8; ++i) {
    Options o;
    o.ftz_in = i & 1;
    o.ftz_out = i & 2;
    o.saturate = i & 4;
    v.push_back(o);
  }
  Options nan;
  nan.canonical_nan = true;
  nan.nan_default = DefaultNan::negative_quiet;
  v.push_back(nan);
  nan = {};
  nan.nan_propagation = NanPropagation::last;
  nan.nan_keep_signaling = nan.nan_sub_flips = true;
  v.push_back(nan);
  return v;
}

// The host's rounding mode and (x86-64) flush settings for the duration of a scope.
class HostEnvironment {
 public:
  HostEnvironment(int mode, bool flush) {
    std::fesetround(mode);
#if defined(__x86_64__)
    if (flush) _mm_setcsr(saved_ | 0x8040u);
#else
    (void)flush;
#endif
  }
  ~HostEnvironment() {
    std::fesetround(FE_TONEAREST);
#if defined(__x86_64__)
    _mm_setcsr(saved_);
#endif
  }

 private:
#if defined(__x86_64__)
  unsigned saved_ = _mm_getcsr();
#endif
};

struct Environment {
  int mode;
  bool flush;
  std::string name;
};
std::vector<Environment> environments() {
  const std::pair<int, const char*> modes[] = {
      {FE_TONEAREST, "to nearest"}, {FE_UPWARD, "upward"}, {FE_DOWNWARD, "downward"}, {FE_TOWARDZERO, "toward zero"}};
  std::vector<Environment> v;
  for (const auto& [mode, name] : modes)
    for (bool flush : {false, true})
      v.push_back({mode, flush, std::string("host ") + name + (flush ? ", DAZ FTZ" : "")});
  return v;
}

// Zeros, subnormal and normal boundaries, values near 1, the largest finite value, infinities,
// quiet and signalling NaNs, square roots of the underflow and overflow thresholds (products near
// them), both signs.
std::vector<std::uint64_t> edges(const Format& f) {
  const std::uint64_t q = f.quiet_bit(), one = std::uint64_t(f.bias) << f.man_bits, top = f.max_finite_magnitude();
  const std::uint64_t root_tiny = std::uint64_t(f.bias + f.quantum_min() / 2) << f.man_bits;
  const std::uint64_t root_huge = std::uint64_t(f.bias + (f.emax() + 1) / 2) << f.man_bits;
  std::vector<std::uint64_t> mags = {0,
                                     1,
                                     2,
                                     3,
                                     f.man_mask() >> 1,
                                     f.man_mask(),
                                     f.man_mask() + 1,
                                     f.man_mask() + 2,
                                     one - 1,
                                     one,
                                     one + 1,
                                     one + (f.man_mask() >> 1),
                                     root_tiny - 1,
                                     root_tiny,
                                     root_tiny + 1,
                                     root_huge - 1,
                                     root_huge,
                                     root_huge + 1,
                                     top - 1,
                                     top,
                                     f.inf_magnitude(),
                                     f.inf_magnitude() | q,
                                     f.inf_magnitude() | q | 1,
                                     f.inf_magnitude() | 1};
  std::vector<std::uint64_t> v;
  for (std::uint64_t m : mags) {
    v.push_back(m);
    v.push_back(m | f.sign_mask());
  }
  return v;
}

// Uniform patterns, operands of close exponents, near the subnormal range, near the square roots
// of the underflow and overflow thresholds.
std::uint64_t operand(std::mt19937_64& rng, const Format& f) {
  const std::uint64_t man = rng() & f.man_mask(), sign = rng() & 1 ? f.sign_mask() : 0;
  const auto field = [&](int e) {
    return sign | (std::uint64_t(std::clamp(e, 0, int(f.exp_field_max()))) << f.man_bits) | man;
  };
  switch (rng() % 5) {
    case 0: return rng() & f.storage_mask();
    case 1: return field(f.bias + int(rng() % 5) - 2);
    case 2: return field(int(rng() % 4));
    case 3: return field(f.bias + f.quantum_min() / 2 + int(rng() % 9) - 4);
    default: return field(f.bias + (f.emax() + 1) / 2 + int(rng() % 5) - 2);
  }
}

// Pairs whose exponent fields are 8 below to 12 beyond the limit of exact sums in the host's wider
// format (12 apart for binary16, 28 for binary32), the larger often a power of two (below which
// the grid is twice as fine), of either sign.
std::pair<std::uint64_t, std::uint64_t> far_apart(std::mt19937_64& rng, const Format& f) {
  const int limit = &f == &binary16 ? 12 : 28, d = limit - 8 + int(rng() % 21);
  const int e = d + 1 + int(rng() % std::uint64_t(int(f.exp_field_max()) - 1 - d));
  const std::uint64_t big = (std::uint64_t(e) << f.man_bits) | (rng() & 1 ? 0 : rng() & f.man_mask());
  const std::uint64_t small = (std::uint64_t(e - d) << f.man_bits) | (rng() & f.man_mask());
  const std::uint64_t sa = rng() & 1 ? f.sign_mask() : 0, sb = rng() & 1 ? f.sign_mask() : 0;
  return rng() & 1 ? std::pair{big | sa, small | sb} : std::pair{small | sa, big | sb};
}

class HostFastPath : public ::testing::TestWithParam<const Format*> {};

// Every comparison of a run, its mismatches counted and the first few reported. The pairs of one
// operation and options are collected, then checked through the per-call functions (add, sub,
// mul) and the batched evaluate() (its vector loop and its lanes left to the per-call path), the
// batch whole and shifted by one pair (other lanes, a tail).
struct Tally {
  const Format& f;
  std::uint64_t mismatches = 0;
  std::vector<std::uint64_t> operands = {};

  void add(std::uint64_t a, std::uint64_t b) {
    operands.push_back(a);
    operands.push_back(b);
  }
  void check(Op op, const Options& o, const char* where) {
    const std::size_t n = operands.size() / 2;
    std::vector<Result> whole(n), shifted(n > 0 ? n - 1 : 0);
    evaluate(op, f, o, operands, whole, f);
    if (n > 0) evaluate(op, f, o, std::span(operands).subspan(2), shifted, f);
    for (std::size_t i = 0; i < n; ++i) {
      const std::uint64_t a = operands[2 * i], b = operands[2 * i + 1];
      const Result y = general(op, f, o, a, b);
      compare(fast(op, f, o, a, b), y, op, o, a, b, where, "per call");
      compare(whole[i], y, op, o, a, b, where, "batched");
      if (i > 0) compare(shifted[i - 1], y, op, o, a, b, where, "batched, shifted");
    }
    operands.clear();
  }

 private:
  void compare(const Result& x, const Result& y, Op op, const Options& o, std::uint64_t a, std::uint64_t b,
               const char* where, const char* how) {
    if (x.bits == y.bits && x.flags == y.flags) return;
    if (++mismatches <= 10)
      ADD_FAILURE() << f.name << " " << name(op) << " " << where << std::hex << " operands " << a << " " << b
                    << ": fast path (" << how << ") " << x.bits << " flags " << x.flags << ", general " << y.bits
                    << " flags " << y.flags << std::dec << " (rne, ftz_in " << o.ftz_in << ", ftz_out " << o.ftz_out
                    << ", saturate " << o.saturate << ", canonical_nan " << o.canonical_nan << ")";
  }
};

TEST_P(HostFastPath, MatchesTheGeneralPathInEveryHostEnvironment) {
  const Format& f = *GetParam();
  ASSERT_TRUE(detail::host_arithmetic) << "the fast path is compiled out on this host";
  const std::uint64_t seed = testing::drawn_seed(0x686f7374);
  std::mt19937_64 rng(seed);
  const std::vector<std::uint64_t> edge = edges(f);
  Tally t{f};
  for (const Environment& env : environments()) {
    const HostEnvironment scope(env.mode, env.flush);
    const char* where = env.name.c_str();
    for (const Options& o : fast_options())
      for (Op op : kOps) {
        for (std::uint64_t a : edge)
          for (std::uint64_t b : edge) t.add(a, b);
        for (int i = 0; i < 10000; ++i) t.add(operand(rng, f), operand(rng, f));
        for (int i = 0; i < 5000; ++i) {
          const auto [a, b] = far_apart(rng, f);
          t.add(a, b);
        }
        t.check(op, o, where);
      }
  }
  EXPECT_EQ(t.mismatches, 0u) << "seed " << seed;
}

// The encoding of the normal value s * 2^e (s below 2^precision).
std::uint64_t encode(const Format& f, std::uint64_t s, int e) {
  const int top = msb(s);
  return (std::uint64_t(e + top + f.bias) << f.man_bits) | ((s << (f.man_bits - top)) & f.man_mask());
}

// The normal operands a (near 2^h) and b of the products (2^(p+1) - 1) * 2^e: every factorisation
// 2^(p+1) - 1 = d * q into two significands.
std::vector<std::pair<std::uint64_t, std::uint64_t>> factor_pairs(const Format& f, int e, int h) {
  const std::uint64_t n = (std::uint64_t{2} << f.precision()) - 1, limit = std::uint64_t{1} << f.precision();
  std::vector<std::pair<std::uint64_t, std::uint64_t>> v;
  for (std::uint64_t d = 3; d < limit; d += 2)
    if (n % d == 0 && n / d < limit) v.emplace_back(encode(f, d, h - msb(d)), encode(f, n / d, e - h + msb(d)));
  return v;
}

// Products exactly at the overflow threshold, (2 - 2^-p) * 2^emax, the midpoint between the largest
// finite value and the next binade (to nearest even: an overflow), and at the underflow threshold,
// (1 - 2^-(p+1)) * 2^emin, the midpoint below the smallest normal value (to nearest even at F's
// precision that value: not tiny, so inexact without underflow), of either sign. The round_host
// checks compare with the thresholds themselves.
TEST_P(HostFastPath, ProductsAtTheOverflowAndUnderflowThresholds) {
  const Format& f = *GetParam();
  Tally t{f};
  for (const Options& o : fast_options()) {
    const auto over = factor_pairs(f, f.emax() - f.precision(), 0);
    const auto under = factor_pairs(f, f.emin() - 1 - f.precision(), f.emin() / 2);
    EXPECT_GT(over.size(), 0u);
    EXPECT_EQ(under.size(), over.size());
    for (const auto& [a, b] : over) {
      const Result r = general(Op::mul, f, o, a, b);
      EXPECT_EQ(r.flags, Flag::overflow | Flag::inexact) << std::hex << a << " * " << b;
      EXPECT_EQ(r.bits, o.saturate ? f.max_finite_magnitude() : f.inf_magnitude()) << std::hex << a << " * " << b;
    }
    for (const auto& [a, b] : under) {
      const Result r = general(Op::mul, f, o, a, b);
      if (o.ftz_out || o.ftz_in) continue;
      EXPECT_EQ(r.flags, Flag::inexact) << std::hex << a << " * " << b;
      EXPECT_EQ(r.bits, std::uint64_t{1} << f.man_bits) << std::hex << a << " * " << b;
    }
    for (const auto* pairs : {&over, &under})
      for (const auto& [a, b] : *pairs)
        for (std::uint64_t s : {std::uint64_t{0}, f.sign_mask()}) t.add(a ^ s, b);
    t.check(Op::mul, o, "host to nearest");
  }
  EXPECT_EQ(t.mismatches, 0u);
}

// Every binary16 product whose exact value lies in or near the subnormal range: all significands of
// a in [2^-2, 2) times all of b below 2^-12 (subnormal and the first two normal binades), b's sign
// alternating, so every rounding position, tie, carry into the smallest normal value, underflow
// to zero (the midpoint 2^-25 and above) and flush option meets the vector lanes. The bits of
// finite results also against the host's own binary16 rounding (_Float16: F16C or libgcc).
TEST(HostFastPath, Binary16SubnormalProducts) {
  Tally t{binary16};
  Options in, out;
  in.ftz_in = true;
  out.ftz_out = true;
  std::uint64_t host_mismatches = 0;
  for (const Environment& env : {environments().front(), environments().back()}) {
    const HostEnvironment scope(env.mode, env.flush);
    for (std::uint64_t a = 13 << 10; a < 16 << 10; ++a) {
      for (const Options& o : {Options{}, in, out}) {
        for (std::uint64_t b = 0; b < 3 << 10; ++b) t.add(a, b ^ (b & 1) << 15);
        t.check(Op::mul, o, env.name.c_str());
      }
#if defined(__FLT16_MANT_DIG__)
      if (env.mode != FE_TONEAREST) continue;
      for (std::uint64_t b = 0; b < 3 << 10; ++b) {
        const auto half = [](std::uint64_t x) { return float(std::bit_cast<_Float16>(std::uint16_t(x))); };
        const Result r = mul(binary16, {}, a, b);
        const std::uint16_t host = std::bit_cast<std::uint16_t>(_Float16(half(a) * half(b)));
        if (r.bits != host && ++host_mismatches <= 10)
          ADD_FAILURE() << std::hex << a << " * " << b << ": " << r.bits << ", host " << host;
      }
#endif
    }
  }
  EXPECT_EQ(t.mismatches, 0u);
  EXPECT_EQ(host_mismatches, 0u);
}

// Infinity and NaN operands (every binary16 one, against the edges, both orders) of add, sub and
// mul under every option of NaN results and ftz_in (inf * subnormal is invalid when the subnormal
// reads as zero), sub also with nan_sub_flips: NaN payloads, quieting, signs, the propagation
// rules, default NaNs, inf * 0, inf - inf, the infinities' signs.
TEST(HostFastPath, Binary16SpecialOperandsUnderEveryNanOption) {
  Tally t{binary16};
  std::vector<Options> options;
  for (NanPropagation p : {NanPropagation::first, NanPropagation::last, NanPropagation::larger_payload})
    for (bool keep : {false, true})
      for (bool ftz : {false, true})
        for (bool canonical : {false, true})
          for (DefaultNan d : all_default_nans) {
            Options o;
            o.nan_propagation = p;
            o.nan_keep_signaling = keep;
            o.ftz_in = ftz;
            o.canonical_nan = canonical;
            o.nan_default = d;
            options.push_back(o);
          }
  const std::vector<std::uint64_t> edge = edges(binary16);
  for (Op op : kOps)
    for (bool flips : {false, true}) {
      if (flips && op != Op::sub) continue;
      for (Options o : options) {
        o.nan_sub_flips = flips;
        for (std::uint64_t s = 0x7c00; s < 0x10000; s += s == 0x7fff ? 0x7c01 : 1)
          for (std::uint64_t e : edge) {
            t.add(s, e);
            t.add(e, s);
          }
        t.check(op, o, "host to nearest");
      }
    }
  EXPECT_EQ(t.mismatches, 0u);
}

// binary16: every b for each edge a, with the default options and with every flush option.
TEST(HostFastPath, Binary16EveryOperandAgainstEdges) {
  Tally t{binary16};
  Options flush;
  flush.ftz_in = flush.ftz_out = true;
  for (const Options& o : {Options{}, flush})
    for (Op op : kOps)
      for (std::uint64_t a : edges(binary16)) {
        for (std::uint64_t b = 0; b < 0x10000; ++b) t.add(a, b);
        t.check(op, o, "host to nearest");
      }
  EXPECT_EQ(t.mismatches, 0u);
}

// The batched evaluate() of every operation, format and rounding mode (the paths without a vector
// loop: a loop of the per-call functions) against evaluate() per call.
TEST(BatchedEvaluate, MatchesEvaluatePerCall) {
  const std::uint64_t seed = testing::drawn_seed(0x6261746368);
  std::mt19937_64 rng(seed);
  std::uint64_t mismatches = 0;
  for (const Format* f : {&binary16, &binary32, &binary64, &bfloat16, &e4m3, &e5m2})
    for (Rounding r : {Rounding::rne, Rounding::rz, Rounding::ru})
      for (Op op : all_ops) {
        Options o;
        o.rounding = r;
        const Format& from = op == Op::cvt ? (f == &binary64 ? binary32 : binary64) : *f;
        const std::size_t arity = std::size_t(model::arity(op)), n = 203;
        std::vector<std::uint64_t> x(arity * n);
        for (std::size_t i = 0; i < x.size(); ++i) x[i] = operand(rng, op == Op::cvt ? from : *f);
        std::vector<Result> out(n);
        evaluate(op, *f, o, x, out, from);
        for (std::size_t i = 0; i < n; ++i) {
          const Result y = evaluate(op, *f, o, std::span(x).subspan(arity * i, arity), from);
          if ((out[i].bits != y.bits || out[i].flags != y.flags) && ++mismatches <= 10)
            ADD_FAILURE() << f->name << " " << name(op) << " " << name(r) << " result " << i << ": batched "
                          << out[i].bits << " flags " << out[i].flags << ", per call " << y.bits << " flags "
                          << y.flags;
        }
      }
  EXPECT_EQ(mismatches, 0u) << "seed " << seed;
}

INSTANTIATE_TEST_SUITE_P(Formats, HostFastPath, ::testing::Values(&binary16, &binary32),
                         [](const auto& test) { return std::string(test.param->name); });

}  // namespace
}  // namespace gp::model
