// The scalar model (model/ops.hpp) against the MPFR oracle (unittests/mpfr_oracle.hpp): every
// format, op and rounding mode, with the ftz_in, ftz_out, saturate and canonical_nan options on a
// subset of modes, on edge operands (zeros, subnormal boundaries, largest finite, infinities, NaNs,
// halfway cases, cancellation, overflow and underflow boundaries) and random ones; conversions
// between every pair of formats.
//
// Tiers: 10^4 random operand tuples per (format, op), each checked in every mode, by default;
// formats of at most 8 bits take every operand pair (6 bits: every fma triple; 16 bits: every
// operand of sqrt and cvt). The `long` build (GPUPARANOIA_MPFR_LONG) takes 10^6 random tuples,
// every fma triple of the 8-bit formats, and runs the exhaustive binary32 -> binary16 / bfloat16 /
// e4m3 / e5m2 conversions. GPUPARANOIA_SEED sets the random seed (printed on failure),
// GPUPARANOIA_ORACLE_CASES the count; GPUPARANOIA_ORACLE_STATS=1 prints what the cases exercised.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <ostream>
#include <random>
#include <span>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "model/ops.hpp"
#include "unittests/mpfr_oracle.hpp"
#include "unittests/drawn_seed.hpp"

namespace gp {
namespace {

using model::Format;
using model::Options;
using model::Rounding;
using oracle::Decoded;
using oracle::Expected;
using oracle::Op;

// The two tiers are two executables: their tests take different names (Scalar/..., Long/...) so
// that ctest keeps them apart.
#ifdef GPUPARANOIA_MPFR_LONG
constexpr bool long_tier = true;
constexpr long tier_cases = 1000000;
#define GP_TIER Long
#else
constexpr bool long_tier = false;
constexpr long tier_cases = 10000;
#define GP_TIER Scalar
#endif
// Expands the tier name before gtest pastes it.
#define GP_INSTANTIATE(prefix, ...) INSTANTIATE_TEST_SUITE_P(prefix, __VA_ARGS__)

std::uint64_t base_seed() { return testing::drawn_seed(0x6770617261ull); }

long case_count() { return long(testing::count_from_env("GPUPARANOIA_ORACLE_CASES", tier_cases)); }

std::uint64_t seed_for(std::string_view test) {
  std::uint64_t h = 1469598103934665603ull;  // FNV-1a
  for (char c : test) h = (h ^ std::uint8_t(c)) * 1099511628211ull;
  return base_seed() ^ h;
}

std::string hex(const Format& f, std::uint64_t bits) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "%0*" PRIx64, (f.storage_bits + 3) / 4, bits);
  return buf;
}

int value_bits(const Format& f) { return (f.sign == model::Signedness::sign_bit ? 1 : 0) + f.exp_bits + f.man_bits; }

model::Op model_op(Op op) {
  switch (op) {
    case Op::add: return model::Op::add;
    case Op::sub: return model::Op::sub;
    case Op::mul: return model::Op::mul;
    case Op::div: return model::Op::div;
    case Op::sqrt: return model::Op::sqrt;
    case Op::fma: return model::Op::fma;
    case Op::cvt: return model::Op::cvt;
  }
  return model::Op::add;
}

Options with(Rounding r, bool ftz_in = false, bool ftz_out = false, bool saturate = false, bool canonical = false) {
  Options o;
  o.rounding = r;
  o.ftz_in = ftz_in;
  o.ftz_out = ftz_out;
  o.saturate = saturate;
  o.canonical_nan = canonical;
  return o;
}

// Every mode plainly; the output options on a subset of modes.
const std::vector<Options>& plain_options() {
  static const std::vector<Options> list = [] {
    std::vector<Options> v;
    for (Rounding r : model::all_roundings) v.push_back(with(r));
    for (Rounding r : {Rounding::rne, Rounding::rz, Rounding::ru, Rounding::rd, Rounding::ro})
      v.push_back(with(r, false, true));
    for (Rounding r : {Rounding::rne, Rounding::rna, Rounding::rz, Rounding::ru, Rounding::rd})
      v.push_back(with(r, false, false, true));
    v.push_back(with(Rounding::rne, false, false, false, true));
    return v;
  }();
  return list;
}

// Options with ftz_in (the exact outcome depends on it).
const std::vector<Options>& ftz_in_options() {
  static const std::vector<Options> list = {with(Rounding::rne, true), with(Rounding::rz, true),
                                            with(Rounding::ru, true), with(Rounding::rd, true),
                                            with(Rounding::rne, true, true)};
  return list;
}

// Compares the model with the oracle on operand tuples and reports mismatches with their inputs.
class Checker {
 public:
  explicit Checker(std::string test) : test_(std::move(test)), seed_(seed_for(test_)), rng_(seed_) {}
  ~Checker() {
    if (stats_)
      std::printf(
          "STATS %-24s tuples %8ld values %8ld ties %7ld exact %7ld uf %7ld of %7ld below_emin %7ld zero_sums %6ld "
          "nans %6ld\n",
          test_.c_str(), stat_[0], stat_[1], stat_[2], stat_[3], stat_[4], stat_[5], stat_[6], stat_[7], stat_[8]);
    EXPECT_EQ(failures_, 0) << test_ << ": " << failures_ << " mismatches in " << tuples_
                            << " operand tuples; GPUPARANOIA_SEED=" << base_seed() << " reproduces them";
  }
  std::mt19937_64& rng() { return rng_; }
  oracle::Oracle& oracle() { return oracle_; }
  long tuples() const { return tuples_; }

  void check(Op op, const Format& f, const Format& from, std::span<const std::uint64_t> x) {
    ++tuples_;
    const Format& src = op == Op::cvt ? from : f;
    try {
      const oracle::Outcome r = oracle_.exact(op, f, from, false, x);
      if (stats_) {
        const Expected e = oracle::Oracle::round(f, with(Rounding::rne), r);
        ++stat_[0];
        if (r.kind == oracle::Outcome::Kind::value) {
          ++stat_[1];
          if (r.grid.tie) ++stat_[2];
          if (!r.grid.inexact) ++stat_[3];
          if (e.flags & model::Flag::underflow) ++stat_[4];
          if (e.flags & model::Flag::overflow) ++stat_[5];
          if (r.e < oracle::info(f).emin) ++stat_[6];
        } else if (r.kind == oracle::Outcome::Kind::zero_sum) {
          ++stat_[7];
        } else if (r.kind == oracle::Outcome::Kind::nan) {
          ++stat_[8];
        }
      }
      for (const Options& o : plain_options()) compare(op, f, from, o, x, r);
      bool subnormal = false;
      for (std::uint64_t b : x) subnormal = subnormal || oracle::is_subnormal(src, b);
      const oracle::Outcome rf = subnormal ? oracle_.exact(op, f, from, true, x) : r;
      for (const Options& o : ftz_in_options()) compare(op, f, from, o, x, rf);
    } catch (const std::exception& e) {
      if (auto prefix = fail(op, f, from, with(Rounding::rne), x)) ADD_FAILURE() << *prefix << e.what();
    }
  }

  // Compares one mode against an expected result (exhaustive tests supply it).
  void compare_expected(Op op, const Format& f, const Format& from, const Options& o, std::span<const std::uint64_t> x,
                        const Expected& e, const model::Result& got) {
    if (got.bits == e.bits && got.flags == e.flags) return;
    if (auto prefix = fail(op, f, from, o, x))
      ADD_FAILURE() << *prefix << "expected " << hex(f, e.bits) << " " << oracle::flag_names(e.flags) << ", model "
                    << hex(f, got.bits) << " " << oracle::flag_names(got.flags);
  }
  void add_tuples(long n) { tuples_ += n; }

 private:
  void compare(Op op, const Format& f, const Format& from, const Options& o, std::span<const std::uint64_t> x,
               const oracle::Outcome& r) {
    const Expected e = oracle::Oracle::round(f, o, r);
    const model::Result got = model::evaluate(model_op(op), f, o, x, from);
    compare_expected(op, f, from, o, x, e, got);
  }

  // Counts a mismatch; the message prefix (what was computed, on which operands) for the first 20.
  std::optional<std::string> fail(Op op, const Format& f, const Format& from, const Options& o,
                                  std::span<const std::uint64_t> x) {
    if (++failures_ > 20) return std::nullopt;
    std::ostringstream s;
    if (op == Op::cvt)
      s << "cvt " << from.name << " -> " << f.name;
    else
      s << f.name << " " << oracle::name(op);
    s << " " << oracle::describe(o) << ", operands";
    for (std::uint64_t b : x) s << " " << hex(op == Op::cvt ? from : f, b);
    s << " [GPUPARANOIA_SEED=" << base_seed() << "]: ";
    return s.str();
  }

  std::string test_;
  std::uint64_t seed_;
  std::mt19937_64 rng_;
  oracle::Oracle oracle_;
  long failures_ = 0;
  long tuples_ = 0;
  bool stats_ = std::getenv("GPUPARANOIA_ORACLE_STATS") != nullptr;
  long stat_[9] = {};
};

// Operands of one format: uniform bit patterns, the edge set, and values built in value space.
class Gen {
 public:
  Gen(const Format& f, std::mt19937_64& rng) : f_(f), d_(oracle::info(f)), rng_(rng) {
    const std::uint64_t one = std::uint64_t(d_.bias) << d_.m;
    const std::uint64_t sub_max = (std::uint64_t{1} << d_.m) - 1;
    const std::uint64_t top = d_.max_finite & ~sub_max;  // first of the top binade
    auto biased = [&](long e) { return std::uint64_t(std::max(e + d_.bias, 0L)) << d_.m; };
    const std::uint64_t mags[] = {0,
                                  1,
                                  2,
                                  3,
                                  sub_max - 1,
                                  sub_max,
                                  sub_max + 1,
                                  sub_max + 2,
                                  2 * sub_max + 1,
                                  2 * sub_max + 2,
                                  one - 1,
                                  one,
                                  one + 1,
                                  one + d_.quiet,
                                  one + sub_max,
                                  one + sub_max + 1,
                                  d_.max_finite,
                                  d_.max_finite - 1,
                                  d_.max_finite - 2,
                                  top,
                                  top - 1,
                                  biased(d_.emax / 2),
                                  biased(d_.emax / 2) + 1,
                                  biased(d_.emin / 2),
                                  biased(d_.qmin / 2) + d_.quiet,
                                  biased(-d_.m - 1),
                                  biased(d_.m + 1) - 1,
                                  d_.inf_mag,
                                  d_.inf_mag | d_.quiet,
                                  d_.inf_mag | d_.quiet | 1,
                                  d_.inf_mag | 1,
                                  d_.inf_mag | (d_.quiet >> 1),
                                  d_.all_ones,
                                  d_.all_ones - 1};
    for (std::uint64_t mag : mags) {
      if (mag > d_.all_ones) continue;
      for (bool neg : {false, true}) {
        if (neg && d_.sign_mask == 0) continue;
        const std::uint64_t b = pack(neg, mag, false);
        if (std::find(edges_.begin(), edges_.end(), b) == edges_.end()) edges_.push_back(b);
      }
    }
  }

  const Format& format() const { return f_; }
  const oracle::Info& info() const { return d_; }
  const std::vector<std::uint64_t>& edges() const { return edges_; }

  std::uint64_t below(std::uint64_t n) { return rng_() % n; }
  long range(long lo, long hi) { return lo > hi ? lo : lo + long(below(std::uint64_t(hi - lo) + 1)); }
  bool coin() { return (rng_() & 1) != 0; }
  bool sign() { return d_.sign_mask != 0 && coin(); }
  long lowest() const { return d_.gradual ? d_.qmin : d_.emin; }

  // Storage bits; tf32's ignored low bits are random half of the time.
  std::uint64_t pack(bool neg, std::uint64_t mag, bool random_pad = true) {
    std::uint64_t b = (mag << f_.pad_bits) | (neg ? d_.sign_mask : 0);
    if (random_pad && f_.pad_bits > 0 && coin()) b |= rng_() & ((std::uint64_t{1} << f_.pad_bits) - 1);
    return b;
  }
  std::uint64_t uniform() { return pack(sign(), rng_() & d_.all_ones); }
  std::uint64_t edge() { return edges_[below(edges_.size())]; }
  std::uint64_t every(std::uint64_t i) {  // the i-th encoding of the value bits
    return pack(d_.sign_mask != 0 && (i >> (f_.exp_bits + f_.man_bits)) & 1, i & d_.all_ones, false);
  }

  // n bits, favouring the patterns that sit on rounding boundaries.
  std::uint64_t pattern(int n) {
    if (n <= 0) return 0;
    const std::uint64_t mask = n >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << n) - 1;
    const std::uint64_t half = std::uint64_t{1} << (n - 1);
    switch (below(10)) {
      case 0: return 0;
      case 1: return mask;
      case 2: return 1;
      case 3: return half;
      case 4: return half - 1;
      case 5: return (half + 1) & mask;
      default: return rng_() & mask;
    }
  }

  // A finite value with its leading bit at 2^e, if the format has one.
  std::optional<std::uint64_t> at(long e, bool neg) {
    if (e > d_.emax || e < lowest()) return std::nullopt;
    std::uint64_t mag;
    if (e >= d_.emin) {
      mag = (std::uint64_t(e + d_.bias) << d_.m) | pattern(d_.m);
      mag = std::min(mag, d_.max_finite);
    } else {
      const int j = int(e - d_.qmin);
      mag = (std::uint64_t{1} << j) | pattern(j);
    }
    return pack(neg, mag);
  }
  std::uint64_t finite(long lo, long hi, bool neg) {
    lo = std::max(lo, lowest());
    hi = std::min(hi, d_.emax);
    if (lo > hi) lo = lowest(), hi = d_.emax;
    return *at(range(lo, hi), neg);
  }
  std::uint64_t finite() { return finite(lowest(), d_.emax, sign()); }
  std::optional<std::uint64_t> exact(bool neg, std::uint64_t sig, long exp) {
    auto b = oracle::encode_exact(f_, neg, sig, exp);
    if (b && f_.pad_bits > 0 && coin()) *b |= rng_() & ((std::uint64_t{1} << f_.pad_bits) - 1);
    return b;
  }

 private:
  const Format& f_;
  oracle::Info d_;
  std::mt19937_64& rng_;
  std::vector<std::uint64_t> edges_;
};

__extension__ typedef unsigned __int128 u128;

long lead(const Decoded& x) { return x.exp + (63 - std::countl_zero(x.sig)); }
int msb(std::uint64_t x) { return 63 - std::countl_zero(x); }

// A random odd number of exactly n bits (n >= 1).
std::uint64_t odd_bits(Gen& g, int n) {
  if (n <= 1) return 1;
  return (std::uint64_t{1} << (n - 1)) | (g.below(std::uint64_t{1} << (n - 1)) | 1);
}

// A result exponent near the overflow or underflow boundary, or anywhere below emin.
long boundary_exponent(Gen& g) {
  const oracle::Info& d = g.info();
  const long picks[] = {d.emax - 1, d.emax,     d.emax + 1, d.emin - 1, d.emin,
                        d.emin + 1, d.qmin - 2, d.qmin - 1, d.qmin,     g.range(d.qmin - d.m - 3, d.emin)};
  return picks[g.below(std::size(picks))];
}

// Operands of a product whose exact significand is u * w and whose leading bit is at 2^target.
bool product_at(Gen& g, std::uint64_t u, std::uint64_t w, long target, bool neg, std::uint64_t* x) {
  const oracle::Info& d = g.info();
  const int lu = msb(u);
  const int lp = msb(u * w);  // u * w fits 64 bits: both have at most 27 significant bits here
  for (int attempt = 0; attempt < 8; ++attempt) {
    const long la = g.range(g.lowest(), d.emax);  // leading bit of a
    const long xa = la - lu;
    const long xb = target - lp - xa;
    const bool na = g.sign();
    auto a = g.exact(na, u, xa);
    auto b = g.exact(na != neg, w, xb);
    if (a && b) {
      x[0] = *a;
      x[1] = *b;
      return true;
    }
  }
  return false;
}

// One random operand tuple for op in g's format.
void random_case(Op op, Gen& g, std::uint64_t* x) {
  const oracle::Info& d = g.info();
  const int n = oracle::arity(op);
  const int p = d.m + 1;
  for (int i = 0; i < n; ++i) x[i] = g.uniform();
  switch (g.below(6)) {
    case 0: return;  // uniform bit patterns
    case 1: x[g.below(std::uint64_t(n))] = g.edge(); return;
    case 2:
      for (int i = 0; i < n; ++i) x[i] = g.coin() ? g.edge() : g.finite();
      return;
    case 3: {  // close exponents: carries and cancellation
      const long e = g.range(g.lowest(), d.emax);
      for (int i = 0; i < n; ++i) {
        x[i] = g.finite(e - p - 2, e + p + 2, g.sign());
        if (op == Op::sqrt && d.sign_mask != 0) x[i] &= ~d.sign_mask;
      }
      if (op == Op::fma) {  // product close to the addend
        const Decoded a = oracle::decode(g.format(), x[0]), b = oracle::decode(g.format(), x[1]);
        if (a.kind == Decoded::Kind::finite && b.kind == Decoded::Kind::finite)
          x[2] = g.finite(lead(a) + lead(b) - 2, lead(a) + lead(b) + 2, g.sign());
      }
      return;
    }
    case 4: break;  // constructions below
    case 5: {       // results near overflow or underflow
      const long t = boundary_exponent(g);
      switch (op) {
        case Op::add:
        case Op::sub: {
          const long e = g.coin() ? d.emax - long(g.below(2)) : d.emin + 1 - long(g.below(3));
          x[0] = g.finite(e, e, g.sign());
          x[1] = g.finite(e - long(g.below(2)), e, g.sign());
          return;
        }
        case Op::mul:
        case Op::div:
        case Op::fma: {
          for (int attempt = 0; attempt < 8; ++attempt) {
            const long ea = g.range(g.lowest(), d.emax);
            const long eb = op == Op::div ? ea - t : t - ea;
            if (auto b = g.at(eb, g.sign())) {
              x[0] = *g.at(ea, g.sign());
              x[1] = *b;
              break;
            }
          }
          if (op == Op::fma) x[2] = g.coin() ? g.finite(t - p - 2, t + 1, g.sign()) : g.edge();
          return;
        }
        case Op::sqrt: x[0] = g.finite(2 * t, 2 * t + 1, false); return;
        case Op::cvt: return;
      }
      return;
    }
  }
  // Op-specific constructions.
  switch (op) {
    case Op::add:
    case Op::sub: {
      const std::uint64_t a = g.finite();
      x[0] = a;
      const Decoded da = oracle::decode(g.format(), a);
      if (g.coin()) {
        // Half an ulp of a, or close to it: ties and near ties.
        if (auto b = g.at(lead(da) - p + long(g.below(3)) - 1, g.sign())) x[1] = *b;
      } else {
        // -a give or take a few ulps: massive cancellation (sub: a itself).
        const std::uint64_t mag = (a >> g.format().pad_bits) & d.all_ones;
        const std::uint64_t k = g.below(5);
        const std::uint64_t m2 = std::min(mag + k < 2 ? 0 : mag + k - 2, d.max_finite);
        const bool neg = (a & d.sign_mask) != 0;
        x[1] = g.pack(d.sign_mask != 0 && (op == Op::add ? !neg : neg), m2);
      }
      return;
    }
    case Op::mul: {
      // u * w odd with p + 1 bits: the product is a tie at p bits (give or take 2u).
      if (p < 3) return;
      const int nu = int(g.range(2, std::min(p - 1, 12)));
      const std::uint64_t u = odd_bits(g, nu);
      const std::uint64_t wlo = ((std::uint64_t{1} << p) + u - 1) / u, whi = ((std::uint64_t{2} << p) - 1) / u;
      std::uint64_t w = wlo + g.below(whi - wlo + 1);
      w |= 1;
      if (w > whi || w >= (std::uint64_t{1} << p) || msb(w) > 26) return;
      if (g.below(4) == 0) w += 2;
      if (w >= (std::uint64_t{1} << p)) return;
      product_at(g, u, w, g.coin() ? boundary_exponent(g) : g.range(d.qmin, d.emax), g.sign(), x);
      return;
    }
    case Op::div: {
      // An exact quotient: a = q * b.
      const int nb = int(g.range(1, std::max(1, std::min(p / 2, 12))));
      const std::uint64_t bs = odd_bits(g, nb);
      const std::uint64_t qmax = ((std::uint64_t{1} << std::min(p, 26)) - 1) / bs;
      const std::uint64_t q = 1 + g.below(qmax);
      const long target = g.coin() ? boundary_exponent(g) : g.range(d.qmin, d.emax);
      for (int attempt = 0; attempt < 8; ++attempt) {
        const long xb = g.range(g.lowest(), d.emax) - msb(bs);
        const long xa = target - msb(q) + xb;
        auto a = g.exact(g.sign(), q * bs, xa);
        auto b = g.exact(g.sign(), bs, xb);
        if (a && b) {
          x[0] = *a;
          x[1] = *b;
          return;
        }
      }
      return;
    }
    case Op::sqrt: {
      // A perfect square, or a random positive value.
      const std::uint64_t r = odd_bits(g, int(g.range(1, std::max(1, p / 2))));
      const long lo = g.lowest(), hi = d.emax;
      const long t = g.range((lo - 1) / 2, hi / 2);
      if (auto a = g.exact(false, r * r, 2 * t))
        x[0] = *a;
      else
        x[0] = g.finite(lo, hi, false);
      return;
    }
    case Op::fma: {
      const long target = g.range(g.lowest(), d.emax);
      const long ea = g.range(g.lowest(), d.emax);
      auto a = g.at(ea, g.sign());
      auto b = g.at(target - ea, g.sign());
      if (!a || !b) return;
      x[0] = *a;
      x[1] = *b;
      const Decoded da = oracle::decode(g.format(), *a), db = oracle::decode(g.format(), *b);
      const bool pneg = da.neg != db.neg;
      if (g.coin()) {
        // c = -(a * b truncated to p bits) give or take 2 ulps: cancellation.
        const u128 prod = static_cast<u128>(da.sig) * db.sig;
        const int lp = prod >> 64 ? 64 + msb(std::uint64_t(prod >> 64)) : msb(std::uint64_t(prod));
        const int shift = std::max(0, lp - d.m);
        std::uint64_t cs = std::uint64_t(prod >> shift);
        if (cs >= 2) cs = cs + g.below(5) - 2;
        if (auto c = g.exact(!pneg, cs, da.exp + db.exp + shift)) x[2] = *c;
      } else {
        // a * b half an ulp of c (both powers of two give an exact tie).
        const std::uint64_t c = g.finite();
        const Decoded dc = oracle::decode(g.format(), c);
        if (dc.kind != Decoded::Kind::finite) return;
        x[2] = c;
        const long half = lead(dc) - p + long(g.below(3)) - 1;
        const long la = g.range(g.lowest(), d.emax);
        auto pa = g.exact(g.sign(), g.coin() ? 1 : odd_bits(g, 2), la);
        auto pb = g.exact(g.sign(), 1, half - la);
        if (pa && pb) {
          x[0] = *pa;
          x[1] = *pb;
        }
      }
      return;
    }
    case Op::cvt: return;
  }
}

// ---------------------------------------------------------------------------------------------
// Arithmetic: one test per (format, op).

struct OpParam {
  const Format* f;
  Op op;
};
void PrintTo(const OpParam& p, std::ostream* os) { *os << p.f->name << " " << oracle::name(p.op); }

class MpfrOp : public ::testing::TestWithParam<OpParam> {};

TEST_P(MpfrOp, MatchesModel) {
  const Format& f = *GetParam().f;
  const Op op = GetParam().op;
  Checker ck(std::string(f.name) + "_" + std::string(oracle::name(op)));
  Gen g(f, ck.rng());
  const int n = oracle::arity(op);
  const int bits = value_bits(f);
  std::uint64_t x[3];
  const std::uint64_t count = bits < 64 ? std::uint64_t{1} << bits : 0;  // used for narrow formats only
  if (n == 1 && bits <= 16) {
    for (std::uint64_t i = 0; i < count; ++i) {
      x[0] = g.every(i);
      ck.check(op, f, f, std::span(x, 1));
    }
  } else if (n == 2 && bits <= 8) {
    for (std::uint64_t i = 0; i < count; ++i)
      for (std::uint64_t j = 0; j < count; ++j) {
        x[0] = g.every(i);
        x[1] = g.every(j);
        ck.check(op, f, f, std::span(x, 2));
      }
  } else if (n == 3 && (bits <= 6 || (long_tier && bits <= 8))) {
    for (std::uint64_t i = 0; i < count * count * count; ++i) {
      x[0] = g.every(i % count);
      x[1] = g.every(i / count % count);
      x[2] = g.every(i / count / count);
      ck.check(op, f, f, std::span(x, 3));
    }
  } else {
    // Every pair of edges (fma: with a random edge addend), then random tuples.
    const auto& e = g.edges();
    for (std::uint64_t a : e)
      for (std::uint64_t b : e) {
        x[0] = a;
        x[1] = b;
        x[2] = g.edge();
        ck.check(op, f, f, std::span(x, std::size_t(n)));
      }
  }
  for (long i = 0, cases = case_count(); i < cases; ++i) {
    random_case(op, g, x);
    ck.check(op, f, f, std::span(x, std::size_t(n)));
  }
}

std::vector<OpParam> op_params() {
  std::vector<OpParam> v;
  for (const Format* f : model::all_formats())
    for (Op op : {Op::add, Op::sub, Op::mul, Op::div, Op::sqrt, Op::fma}) v.push_back({f, op});
  return v;
}

GP_INSTANTIATE(GP_TIER, MpfrOp, ::testing::ValuesIn(op_params()), [](const ::testing::TestParamInfo<OpParam>& i) {
  return std::string(i.param.f->name) + "_" + std::string(oracle::name(i.param.op));
});

// ---------------------------------------------------------------------------------------------
// Conversions: one test per source format, into every format.

// A source value near the destination's grid: leading bit around the destination's range, the
// bits below the destination's quantum on a tie, just off it, or random.
std::optional<std::uint64_t> near_grid(Gen& src, const oracle::Info& dst) {
  const oracle::Info& s = src.info();
  const long picks[] = {dst.emax,     dst.emax + 1, dst.emax - 1, dst.emin,
                        dst.emin - 1, dst.qmin,     dst.qmin - 1, src.range(dst.qmin - 3, dst.emax + 2)};
  const long e = picks[src.below(std::size(picks))];
  if (e < src.lowest() || e > s.emax) return std::nullopt;
  const long l = std::max(e - s.m, s.qmin);      // exponent of the source's last bit
  const int nb = int(e - l + 1);                 // significant bits
  const long q = std::max(e - dst.m, dst.qmin);  // destination quantum
  const int low = int(std::clamp<long>(q - l, 0, nb));
  std::uint64_t sig = src.pattern(low);
  if (nb > low)
    sig |= ((std::uint64_t{1} << (nb - low - 1)) | src.pattern(nb - low - 1)) << low;
  else
    sig |= std::uint64_t{1} << (nb - 1);
  return src.exact(src.sign(), sig, l);
}

struct CvtParam {
  const Format* from;
};
void PrintTo(const CvtParam& p, std::ostream* os) { *os << "from " << p.from->name; }

class MpfrCvt : public ::testing::TestWithParam<CvtParam> {};

TEST_P(MpfrCvt, MatchesModel) {
  const Format& from = *GetParam().from;
  Checker ck("cvt_from_" + std::string(from.name));
  Gen src(from, ck.rng());
  const int bits = value_bits(from);
  std::uint64_t x[1];
  for (const Format* to : model::all_formats()) {
    Gen dst(*to, ck.rng());
    if (bits <= 16) {
      for (std::uint64_t i = 0; i < (std::uint64_t{1} << bits); ++i) {
        x[0] = src.every(i);
        ck.check(Op::cvt, *to, from, x);
      }
      continue;
    }
    for (std::uint64_t e : src.edges()) {
      x[0] = e;
      ck.check(Op::cvt, *to, from, x);
    }
    for (long i = 0, cases = case_count(); i < cases; ++i) {
      std::optional<std::uint64_t> v;
      switch (src.below(4)) {
        case 0: v = src.uniform(); break;
        case 1: v = src.edge(); break;
        case 2: v = near_grid(src, dst.info()); break;
        case 3: {  // a destination edge, exactly
          const Decoded d = oracle::decode(*to, dst.edge());
          if (d.kind == Decoded::Kind::finite) v = src.exact(d.neg, d.sig, d.exp);
          break;
        }
      }
      x[0] = v ? *v : src.uniform();
      ck.check(Op::cvt, *to, from, x);
    }
  }
}

std::vector<CvtParam> cvt_params() {
  std::vector<CvtParam> v;
  for (const Format* f : model::all_formats()) v.push_back({f});
  return v;
}

GP_INSTANTIATE(GP_TIER, MpfrCvt, ::testing::ValuesIn(cvt_params()),
               [](const ::testing::TestParamInfo<CvtParam>& i) { return "from_" + std::string(i.param.from->name); });

#ifndef GPUPARANOIA_MPFR_LONG
// ---------------------------------------------------------------------------------------------
// The oracle itself: against MPFR's own rounding (mpfr_subnormalize) in the five modes MPFR has,
// for the formats whose encodings are IEEE's, and against hand-checked cases.

TEST(MpfrOracle, AgreesWithMpfrRounding) {
  oracle::Oracle o;
  std::mt19937_64 rng(seed_for("oracle_vs_mpfr"));
  const std::pair<Rounding, mpfr_rnd_t> modes[] = {{Rounding::rne, MPFR_RNDN},
                                                   {Rounding::rz, MPFR_RNDZ},
                                                   {Rounding::ru, MPFR_RNDU},
                                                   {Rounding::rd, MPFR_RNDD},
                                                   {Rounding::ra, MPFR_RNDA}};
  const mpfr_exp_t saved_emin = mpfr_get_emin(), saved_emax = mpfr_get_emax();
  mpfr_t src, y;
  mpfr_init2(src, 64);
  mpfr_init2(y, 64);
  long mismatches = 0, checked = 0;
  for (const Format* f : {&model::binary64, &model::binary32, &model::tf32, &model::binary16, &model::bfloat16,
                          &model::fp24, &model::e5m2}) {
    const oracle::Info d = oracle::info(*f);
    Gen g(model::binary64, rng);
    for (int i = 0; i < 20000; ++i) {
      // A binary64 source near f's grid (or anywhere), converted.
      std::optional<std::uint64_t> v = i % 4 == 0 ? std::optional(g.uniform()) : near_grid(g, d);
      if (!v) continue;
      const Decoded s = oracle::decode(model::binary64, *v);
      if (s.kind != Decoded::Kind::finite) continue;
      const std::uint64_t in[1] = {*v};
      const oracle::Outcome r = o.exact(Op::cvt, *f, model::binary64, false, in);
      mpfr_set_ui_2exp(src, s.sig, s.exp, MPFR_RNDN);
      if (s.neg) mpfr_neg(src, src, MPFR_RNDN);
      for (const auto& [mode, rnd] : modes) {
        const Expected e = oracle::Oracle::round(*f, with(mode), r);
        mpfr_set_emin(d.qmin + 1);
        mpfr_set_emax(d.emax + 1);
        mpfr_set_prec(y, d.m + 1);
        mpfr_clear_flags();
        int t = mpfr_set(y, src, rnd);
        t = mpfr_check_range(y, t, rnd);
        t = mpfr_subnormalize(y, t, rnd);
        const bool overflow = mpfr_overflow_p() != 0;
        mpfr_set_emin(saved_emin);
        mpfr_set_emax(saved_emax);
        std::uint64_t bits;
        if (mpfr_inf_p(y)) {
          bits = (d.inf_mag << f->pad_bits) | (mpfr_signbit(y) ? d.sign_mask : 0);
        } else if (mpfr_zero_p(y)) {
          bits = mpfr_signbit(y) ? d.sign_mask : 0;
        } else {
          mpz_t z;
          mpz_init(z);
          const long k = long(mpfr_get_z_2exp(z, y));
          const bool neg = mpz_sgn(z) < 0;
          mpz_abs(z, z);
          bits = oracle::encode_exact(*f, neg, mpz_get_ui(z), k).value_or(~std::uint64_t{0});
          mpz_clear(z);
        }
        const bool inexact = t != 0;
        ++checked;
        const bool ok = bits == e.bits && inexact == ((e.flags & model::Flag::inexact) != 0) &&
                        overflow == ((e.flags & model::Flag::overflow) != 0);
        if (!ok && ++mismatches <= 20)
          ADD_FAILURE() << f->name << " " << model::name(mode) << " from binary64 " << hex(model::binary64, *v)
                        << ": oracle " << hex(*f, e.bits) << " " << oracle::flag_names(e.flags) << ", MPFR "
                        << hex(*f, bits) << (inexact ? " inexact" : "") << (overflow ? " overflow" : "");
      }
    }
  }
  mpfr_clears(src, y, static_cast<mpfr_ptr>(nullptr));
  EXPECT_EQ(mismatches, 0);
  EXPECT_GT(checked, 7 * 20000 * 5 / 2);
}

std::uint64_t b32(float x) { return std::bit_cast<std::uint32_t>(x); }

TEST(MpfrOracle, HandCheckedCases) {
  oracle::Oracle o;
  auto cvt32 = [&](const Format& to, float x, Options opt = {}) {
    const std::uint64_t in[1] = {b32(x)};
    return o.evaluate(Op::cvt, to, model::binary32, opt, in);
  };
  namespace F = model::Flag;
  // Ties in binary16 around 1 (u = 2^-10).
  const float u = 1.0f / 1024;
  EXPECT_EQ(cvt32(model::binary16, 1 + 0.5f * u).bits, 0x3c00u);
  EXPECT_EQ(cvt32(model::binary16, 1 + 1.5f * u).bits, 0x3c02u);
  EXPECT_EQ(cvt32(model::binary16, 1 + 0.5f * u, with(Rounding::rna)).bits, 0x3c01u);
  EXPECT_EQ(cvt32(model::binary16, -1 - 0.5f * u, with(Rounding::rnu)).bits, 0xbc00u);
  EXPECT_EQ(cvt32(model::binary16, -1 - 0.5f * u, with(Rounding::rnd)).bits, 0xbc01u);
  EXPECT_EQ(cvt32(model::binary16, 1 + 1.5f * u, with(Rounding::rno)).bits, 0x3c01u);
  EXPECT_EQ(cvt32(model::binary16, 1 + 0.25f * u, with(Rounding::ro)).bits, 0x3c01u);
  EXPECT_EQ(cvt32(model::binary16, 1 + 1.25f * u, with(Rounding::ro)).bits, 0x3c01u);
  // Overflow: 65520 ties to infinity in rne, stays at 65504 in rnz; e4m3's 464 ties to 448.
  EXPECT_EQ(cvt32(model::binary16, 65520.0f).bits, 0x7c00u);
  EXPECT_EQ(cvt32(model::binary16, 65520.0f).flags, F::overflow | F::inexact);
  EXPECT_EQ(cvt32(model::binary16, 65520.0f, with(Rounding::rnz)).bits, 0x7bffu);
  EXPECT_EQ(cvt32(model::binary16, 65520.0f, with(Rounding::rne, false, false, true)).bits, 0x7bffu);
  EXPECT_EQ(cvt32(model::e4m3, 464.0f).bits, 0x7eu);
  EXPECT_EQ(cvt32(model::e4m3, 465.0f).bits, 0x7fu);
  EXPECT_EQ(cvt32(model::e4m3, -465.0f).bits, 0xffu);
  EXPECT_EQ(cvt32(model::e4m3, 1e9f, with(Rounding::rne, false, false, true)).bits, 0x7eu);
  EXPECT_EQ(cvt32(model::e4m3fnuz, 1000.0f).bits, 0x80u);
  EXPECT_EQ(cvt32(model::e2m1, 100.0f).bits, 0x07u);
  // Underflow after rounding.
  EXPECT_EQ(cvt32(model::binary16, 0x1p-25f).bits, 0u);
  EXPECT_EQ(cvt32(model::binary16, 0x1p-25f).flags, F::underflow | F::inexact);
  EXPECT_EQ(cvt32(model::binary16, 0x1.ffep-15f).bits, 0x0400u);
  EXPECT_EQ(cvt32(model::binary16, 0x1.ffep-15f).flags, F::inexact);
  EXPECT_EQ(cvt32(model::binary16, 0x1.ffcp-15f).bits, 0x0400u);
  EXPECT_EQ(cvt32(model::binary16, 0x1.ffcp-15f).flags, F::inexact | F::underflow);
  EXPECT_EQ(cvt32(model::binary16, -0x1p-20f, with(Rounding::rne, false, true)).bits, 0x8000u);
  EXPECT_EQ(cvt32(model::binary16, -0x1p-20f, with(Rounding::rne, false, true)).flags, F::underflow | F::inexact);
  // ue8m0: powers of two, no zero; ties to the even encoding.
  EXPECT_EQ(cvt32(model::ue8m0, 1.5f).bits, 0x80u);
  EXPECT_EQ(cvt32(model::ue8m0, 0x1p-127f).bits, 0u);
  EXPECT_EQ(cvt32(model::ue8m0, 0.0f).bits, 0u);
  EXPECT_EQ(cvt32(model::ue8m0, 0.0f).flags, F::underflow | F::inexact);
  EXPECT_EQ(cvt32(model::ue8m0, -1.0f).bits, 0xffu);
  EXPECT_EQ(cvt32(model::ue8m0, -1.0f).flags, F::invalid);
  // Sums: exact zeros, NaN propagation.
  auto op32 = [&](Op op, std::initializer_list<std::uint64_t> in, Options opt = {}) {
    return o.evaluate(op, model::binary32, model::binary32, opt, std::span(in.begin(), in.size()));
  };
  EXPECT_EQ(op32(Op::add, {0x3f800000, 0xbf800000}).bits, 0u);
  EXPECT_EQ(op32(Op::add, {0x3f800000, 0xbf800000}, with(Rounding::rd)).bits, 0x80000000u);
  EXPECT_EQ(op32(Op::add, {0x80000000, 0x80000000}).bits, 0x80000000u);
  EXPECT_EQ(op32(Op::add, {0x7f800001, 0x7fc00002}).bits, 0x7fc00001u);
  EXPECT_EQ(op32(Op::add, {0x7f800001, 0x7fc00002}).flags, F::invalid);
  EXPECT_EQ(op32(Op::sub, {0x3f800000, 0xffc00123}).bits, 0xffc00123u);
  EXPECT_EQ(op32(Op::sub, {0x7f800000, 0x7f800000}).bits, 0x7fc00000u);
  EXPECT_EQ(op32(Op::fma, {0, 0x7f800000, 0x7fc00000}).flags, F::invalid);
  EXPECT_EQ(op32(Op::div, {0x3f800000, 0}).bits, 0x7f800000u);
  EXPECT_EQ(op32(Op::div, {0x3f800000, 0}).flags, F::divbyzero);
  EXPECT_EQ(op32(Op::sqrt, {0x40800000}).bits, 0x40000000u);
  EXPECT_EQ(op32(Op::sqrt, {0x80000000}).bits, 0x80000000u);
  // 1 + 2^-24: a tie in binary32 (even: 1), odd in ro.
  EXPECT_EQ(op32(Op::add, {0x3f800000, 0x33800000}).bits, 0x3f800000u);
  EXPECT_EQ(op32(Op::add, {0x3f800000, 0x33800000}, with(Rounding::ro)).bits, 0x3f800001u);
  // fma with total cancellation down to the last bit: (1 + 2^-23)^2 - (1 + 2^-22) = 2^-46.
  EXPECT_EQ(op32(Op::fma, {0x3f800001, 0x3f800001, 0xbf800002}).bits, 0x28800000u);
}
#endif

// ---------------------------------------------------------------------------------------------
// Exhaustive binary32 -> binary16 / bfloat16 / e4m3 / e5m2 (long tier).

#ifdef GPUPARANOIA_MPFR_LONG

struct ExhaustiveParam {
  const Format* to;
  Options o;
};
void PrintTo(const ExhaustiveParam& p, std::ostream* os) { *os << p.to->name << " " << oracle::describe(p.o); }

class MpfrExhaustiveCvt : public ::testing::TestWithParam<ExhaustiveParam> {};

// Every binary32 input. Within a binade of the input, the outcome of a conversion depends only on
// the input's block of the grid of quantum 2^(e - man_bits) (the finer of the destination's grid
// and its unbounded grid, to which both are aligned) and on whether the rest of the input is zero,
// below half a quantum, half, or above: the oracle runs on one input of each such class (and on a
// sampled input of every block, to check that claim), the model on every input.
TEST_P(MpfrExhaustiveCvt, EveryBinary32Input) {
  const Format& to = *GetParam().to;
  const Options& o = GetParam().o;
  const Format& from = model::binary32;
  Checker ck("exhaustive_" + std::string(to.name) + "_" + oracle::describe(o));
  std::mt19937_64& rng = ck.rng();
  oracle::Oracle& orc = ck.oracle();
  const oracle::Info d = oracle::info(to);
  auto expect = [&](std::uint64_t bits) {
    const std::uint64_t in[1] = {bits};
    return orc.evaluate(Op::cvt, to, from, o, in);
  };
  auto one = [&](std::uint64_t bits, const Expected& e) {
    const std::uint64_t in[1] = {bits};
    ck.add_tuples(1);
    ck.compare_expected(Op::cvt, to, from, o, in, e, model::cvt(to, from, o, bits));
  };
  for (std::uint64_t sign = 0; sign < 2; ++sign) {
    for (std::uint64_t field = 0; field < 256; ++field) {
      const std::uint64_t base = (sign << 31) | (field << 23);
      if (field == 255) {
        for (std::uint64_t frac = 0; frac < (1u << 23); ++frac) one(base | frac, expect(base | frac));
        continue;
      }
      one(base, expect(base));  // zero or the first of the binade
      // Binades of significands s in [2^b, 2^(b+1)): fraction s - 2^23 for normals, s for subnormals.
      for (int b = field == 0 ? 0 : 23; b <= (field == 0 ? 22 : 23); ++b) {
        const std::uint64_t off = field == 0 ? 0 : std::uint64_t{1} << 23;
        const int sh = b - d.m;  // input bits below the finest grid's quantum
        const std::uint64_t lo = std::uint64_t{1} << b, hi = std::uint64_t{2} << b;
        if (sh < 2) {
          for (std::uint64_t s = lo; s < hi; ++s) one(base | (s - off), expect(base | (s - off)));
          continue;
        }
        const std::uint64_t half = std::uint64_t{1} << (sh - 1), mask = (std::uint64_t{1} << sh) - 1;
        for (std::uint64_t block = lo; block < hi; block += mask + 1) {
          const std::uint64_t b0 = base | (block - off);
          const Expected e0 = expect(b0), e_below = expect(b0 + 1), e_tie = expect(b0 + half),
                         e_above = expect(b0 + half + 1);
          const std::uint64_t sample = rng() & mask;
          const Expected& es = sample == 0 ? e0 : sample < half ? e_below : sample == half ? e_tie : e_above;
          const Expected direct = expect(b0 + sample);
          if (direct.bits != es.bits || direct.flags != es.flags)
            ADD_FAILURE() << "oracle not constant on a class: " << hex(from, b0 + sample);
          // The four classes as four loops: rest zero, below half, half, above half.
          const std::pair<std::uint64_t, std::uint64_t> ranges[] = {
              {0, 1}, {1, half}, {half, half + 1}, {half + 1, mask + 1}};
          const Expected* classes[] = {&e0, &e_below, &e_tie, &e_above};
          for (int c = 0; c < 4; ++c) {
            const Expected e = *classes[c];
            for (std::uint64_t bits = b0 + ranges[c].first; bits < b0 + ranges[c].second; ++bits) {
              const model::Result got = model::cvt(to, from, o, bits);
              if (got.bits != e.bits || got.flags != e.flags) [[unlikely]] {
                const std::uint64_t in[1] = {bits};
                ck.compare_expected(Op::cvt, to, from, o, in, e, got);
              }
            }
          }
          ck.add_tuples(long(mask) + 1);
        }
      }
    }
  }
}

std::vector<ExhaustiveParam> exhaustive_params() {
  std::vector<ExhaustiveParam> v;
  for (const Format* f : {&model::binary16, &model::bfloat16, &model::e4m3, &model::e5m2}) {
    for (Rounding r : model::all_roundings) v.push_back({f, with(r)});
    if (f == &model::e4m3 || f == &model::e5m2) v.push_back({f, with(Rounding::rne, false, false, true)});
    if (f == &model::binary16 || f == &model::bfloat16) v.push_back({f, with(Rounding::rne, false, true)});
  }
  return v;
}

INSTANTIATE_TEST_SUITE_P(Binary32, MpfrExhaustiveCvt, ::testing::ValuesIn(exhaustive_params()),
                         [](const ::testing::TestParamInfo<ExhaustiveParam>& i) {
                           std::string s = std::string(i.param.to->name) + "_" + oracle::describe(i.param.o);
                           for (char& c : s)
                             if (c == '+') c = '_';
                           return s;
                         });

#endif

}  // namespace
}  // namespace gp
