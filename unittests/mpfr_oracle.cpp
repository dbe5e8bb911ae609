#include "unittests/mpfr_oracle.hpp"

#include <algorithm>
#include <bit>
#include <climits>
#include <stdexcept>

namespace gp::oracle {

namespace {

using Kind = Decoded::Kind;
namespace Flag = model::Flag;

int msb(std::uint64_t x) { return 63 - std::countl_zero(x); }

bool is_signed(const Format& f) { return f.sign == model::Signedness::sign_bit; }

void check(bool ok, const char* what) {
  if (!ok) throw std::logic_error(std::string("mpfr oracle: ") + what);
}

// Storage bits of a sign and a magnitude (exponent and fraction fields at bit 0).
std::uint64_t pack(const Format& f, const Info& d, bool neg, std::uint64_t mag) {
  return (mag << f.pad_bits) | (neg ? d.sign_mask : 0);
}

std::uint64_t canonical_nan(const Format& f, const Info& d) {
  switch (f.nan) {
    case model::NanStyle::ieee: return pack(f, d, false, d.inf_mag | d.quiet);
    case model::NanStyle::all_ones: return pack(f, d, false, d.all_ones);
    case model::NanStyle::negative_zero: return d.sign_mask;
    case model::NanStyle::none: return pack(f, d, false, d.max_finite);
  }
  return 0;
}

// The NaN of sign neg that a format holds (one per sign, or the single FNUZ one).
std::uint64_t nan_of_sign(const Format& f, const Info& d, bool neg) {
  if (f.nan == model::NanStyle::all_ones) return pack(f, d, neg && is_signed(f), d.all_ones);
  return canonical_nan(f, d);
}

Expected zero_result(const Format& f, const Info& d, bool neg) {
  if (f.zero == model::Zero::none) return {pack(f, d, false, 0), Flag::underflow | Flag::inexact};
  const bool negative = neg && f.zero == model::Zero::signed_zero && is_signed(f);
  return {pack(f, d, negative, 0), 0};
}

// An exact infinite result (infinite operand, division by zero, cvt of an infinity).
Expected infinite_result(const Format& f, const Info& d, const Options& o, bool neg) {
  if (neg && !is_signed(f)) return {canonical_nan(f, d), Flag::invalid};
  if (f.inf == model::Infinity::ieee) return {pack(f, d, neg, d.inf_mag), 0};
  if (o.saturate || f.nan == model::NanStyle::none) return {pack(f, d, neg, d.max_finite), 0};
  return {nan_of_sign(f, d, neg), 0};
}

// A rounded result beyond the largest finite value.
Expected overflow_result(const Format& f, const Info& d, const Options& o, bool neg) {
  const Flags flags = Flag::overflow | Flag::inexact;
  const Rounding r = o.rounding;
  const bool toward_zero =
      r == Rounding::rz || r == Rounding::ro || (r == Rounding::ru && neg) || (r == Rounding::rd && !neg);
  if (toward_zero || o.saturate || f.nan == model::NanStyle::none) return {pack(f, d, neg, d.max_finite), flags};
  if (f.inf == model::Infinity::ieee) return {pack(f, d, neg, d.inf_mag), flags};
  return {nan_of_sign(f, d, neg), flags};
}

Expected nan_result(const Format& to, const Info& d, const Options& o, const Outcome& r) {
  if (to.nan == model::NanStyle::none) return {canonical_nan(to, d), Flag::invalid};
  const Flags flags = r.flags;
  if (o.canonical_nan || to.nan == model::NanStyle::negative_zero) return {canonical_nan(to, d), flags};
  if (to.nan == model::NanStyle::all_ones) return {nan_of_sign(to, d, r.neg), flags};
  std::uint64_t payload = 0;
  if (r.nan_from->nan == model::NanStyle::ieee) {
    const int fm = r.nan_from->man_bits, tm = to.man_bits;
    payload = fm >= tm ? r.frac >> (fm - tm) : r.frac << (tm - fm);
  }
  return {pack(to, d, r.neg && is_signed(to), d.inf_mag | d.quiet | payload), flags};
}

// Parity of the encoding of kept * 2^q. On the format's grid a value below 2^emin is a subnormal
// (its encoding is kept, q being qmin); on the unbounded grid every value is normal. A format
// without zero (ue8m0) continues its encodings below the smallest value with -1 (odd).
int parity(const Format& f, const Info& d, std::uint64_t kept, long q, bool unbounded) {
  if (kept == 0) return f.zero == model::Zero::none ? 1 : 0;
  const long e = q + msb(kept);
  if (d.m == 0) return int((e + d.bias) & 1);  // the encoding is the biased exponent
  if (!unbounded && d.gradual && e < d.emin) return int(kept & 1);
  const long shift = q - (e - d.m);  // significand with m fraction bits
  const std::uint64_t s = shift >= 0 ? kept << shift : kept >> -shift;
  return int(s & 1);
}

// Whether mode r moves from the lower neighbour (kept) to the upper one (kept + 1).
bool rounds_up(Rounding r, bool neg, const Split& s, int lower_parity, int upper_parity) {
  check(lower_parity != upper_parity, "neighbours of equal parity");
  if (!s.inexact) return false;
  const bool upper_even = upper_parity == 0;
  switch (r) {
    case Rounding::rne: return s.above || (s.tie && upper_even);
    case Rounding::rna: return s.above || s.tie;
    case Rounding::rnz: return s.above;
    case Rounding::rnu: return s.above || (s.tie && !neg);
    case Rounding::rnd: return s.above || (s.tie && neg);
    case Rounding::rno: return s.above || (s.tie && !upper_even);
    case Rounding::rz: return false;
    case Rounding::ru: return !neg;
    case Rounding::rd: return neg;
    case Rounding::ra: return true;
    case Rounding::ro: return !upper_even;
  }
  check(false, "unknown rounding");
  return false;
}

// Splits |z| * 2^k (+ a sticky part below 2^k when sticky) on the grid of quantum 2^q.
Split split_at(mpz_srcptr z, long k, bool sticky, long q, mpz_ptr tmp) {
  Split s{0, q, false, false, false};
  if (q <= k) {
    check(!sticky, "sticky bit above the rounding position");
    mpz_mul_2exp(tmp, z, static_cast<mp_bitcnt_t>(k - q));
    check(mpz_fits_ulong_p(tmp) != 0, "kept part too wide");
    s.kept = mpz_get_ui(tmp);
    return s;
  }
  const auto d = static_cast<mp_bitcnt_t>(q - k);
  mpz_tdiv_q_2exp(tmp, z, d);
  check(mpz_fits_ulong_p(tmp) != 0, "kept part too wide");
  s.kept = mpz_get_ui(tmp);
  const mp_bitcnt_t low = mpz_scan1(z, 0);
  const bool half_bit = mpz_tstbit(z, d - 1) != 0;
  s.inexact = low < d || sticky;
  s.tie = half_bit && low == d - 1 && !sticky;
  s.above = half_bit && (low < d - 1 || sticky);
  return s;
}

// The exponent span [lo, hi) of a finite nonzero operand's bits.
void widen(long& lo, long& hi, const Decoded& x) {
  if (x.kind != Kind::finite) return;
  lo = std::min(lo, x.exp);
  hi = std::max(hi, x.exp + msb(x.sig) + 1);
}

mpfr_prec_t span_precision(long lo, long hi) {
  if (hi < lo) return MPFR_PREC_MIN + 1;
  return std::max<mpfr_prec_t>(hi - lo + 2, 2);  // one bit for a carry
}

}  // namespace

std::string_view name(Op op) {
  constexpr std::string_view names[] = {"add", "sub", "mul", "div", "sqrt", "fma", "cvt"};
  return names[static_cast<int>(op)];
}

int arity(Op op) {
  constexpr int a[] = {2, 2, 2, 2, 1, 3, 1};
  return a[static_cast<int>(op)];
}

Info info(const Format& f) {
  Info d{};
  d.m = f.man_bits;
  d.bias = f.bias;
  d.gradual = f.subnormals == model::Subnormals::gradual;
  d.emin = (d.gradual ? 1 : 0) - d.bias;
  d.qmin = d.emin - d.m;
  const int width = f.exp_bits + f.man_bits;
  d.all_ones = (std::uint64_t{1} << width) - 1;
  d.inf_mag = ((std::uint64_t{1} << f.exp_bits) - 1) << d.m;
  d.quiet = d.m > 0 ? std::uint64_t{1} << (d.m - 1) : 0;
  d.sign_mask = is_signed(f) ? std::uint64_t{1} << (f.pad_bits + width) : 0;
  // The largest magnitude that decodes as a finite number: the top encoding, the one below it,
  // or the top of the binade below an all-ones exponent field (IEEE).
  d.max_finite = 0;
  for (std::uint64_t mag : {d.all_ones, d.all_ones - 1, d.inf_mag - 1}) {
    const Decoded x = decode(f, mag << f.pad_bits);
    if (x.kind == Kind::finite) {
      d.max_finite = mag;
      break;
    }
  }
  check(d.max_finite != 0, "no largest finite value");
  d.emax = long(d.max_finite >> d.m) - d.bias;
  return d;
}

Decoded decode(const Format& f, std::uint64_t bits, bool ftz_in) {
  const int width = f.exp_bits + f.man_bits;
  const std::uint64_t mag = (bits >> f.pad_bits) & ((std::uint64_t{1} << width) - 1);
  const bool neg = is_signed(f) && ((bits >> (f.pad_bits + width)) & 1) != 0;
  const std::uint64_t field = mag >> f.man_bits;
  const std::uint64_t frac = mag & ((std::uint64_t{1} << f.man_bits) - 1);
  const std::uint64_t field_max = (std::uint64_t{1} << f.exp_bits) - 1;
  Decoded x{Kind::finite, neg, 0, 0, frac};
  switch (f.nan) {
    case model::NanStyle::ieee:
      if (field == field_max && frac != 0) {
        x.kind = (frac >> (f.man_bits - 1)) & 1 ? Kind::quiet_nan : Kind::signaling_nan;
        return x;
      }
      break;
    case model::NanStyle::all_ones:
      if (mag == (std::uint64_t{1} << width) - 1) {
        x.kind = Kind::quiet_nan;
        return x;
      }
      break;
    case model::NanStyle::negative_zero:
      if (mag == 0 && neg) {
        x.kind = Kind::quiet_nan;
        return x;
      }
      break;
    case model::NanStyle::none: break;
  }
  if (f.inf == model::Infinity::ieee && field == field_max && frac == 0) {
    x.kind = Kind::infinite;
    return x;
  }
  if (f.subnormals == model::Subnormals::gradual && field == 0) {
    if (frac == 0 || ftz_in) {
      x.kind = Kind::zero;
      return x;
    }
    x.sig = frac;
    x.exp = 1 - long(f.bias) - f.man_bits;
    return x;
  }
  x.sig = frac | (std::uint64_t{1} << f.man_bits);
  x.exp = long(field) - f.bias - f.man_bits;
  return x;
}

bool is_subnormal(const Format& f, std::uint64_t bits) {
  const Decoded x = decode(f, bits);
  return x.kind == Kind::finite && f.subnormals == model::Subnormals::gradual && x.sig >> f.man_bits == 0;
}

std::optional<std::uint64_t> encode_exact(const Format& f, bool neg, std::uint64_t sig, long exp) {
  const Info d = info(f);
  if (neg && !is_signed(f)) return std::nullopt;
  if (sig == 0) {
    if (f.zero == model::Zero::none) return std::nullopt;
    if (neg && f.zero != model::Zero::signed_zero) return std::nullopt;
    return pack(f, d, neg, 0);
  }
  const int tz = std::countr_zero(sig);
  sig >>= tz;
  exp += tz;
  const long e = exp + msb(sig);
  if (e > d.emax) return std::nullopt;
  std::uint64_t mag;
  if (e < d.emin) {
    if (!d.gradual || exp < d.qmin) return std::nullopt;
    mag = sig << (exp - d.qmin);
  } else {
    if (exp < e - d.m) return std::nullopt;
    const std::uint64_t s = sig << (exp - (e - d.m));
    mag = (std::uint64_t(e + d.bias) << d.m) | (s - (std::uint64_t{1} << d.m));
  }
  if (mag > d.max_finite) return std::nullopt;
  const std::uint64_t bits = pack(f, d, neg, mag);
  const Decoded back = decode(f, bits);
  if (back.kind != Kind::finite) return std::nullopt;
  return bits;
}

Oracle::Oracle() {
  mpfr_inits2(64, a_, b_, c_, static_cast<mpfr_ptr>(nullptr));
  mpfr_init2(prod_, 130);
  mpfr_init2(res_, 64);
  mpz_inits(z_, t_, nullptr);
}

Oracle::~Oracle() {
  mpfr_clears(a_, b_, c_, prod_, res_, static_cast<mpfr_ptr>(nullptr));
  mpz_clears(z_, t_, nullptr);
}

void Oracle::load(mpfr_ptr dst, const Decoded& d) {
  if (d.kind == Kind::zero) {
    mpfr_set_zero(dst, d.neg ? -1 : 1);
    return;
  }
  const int t = mpfr_set_ui_2exp(dst, d.sig, d.exp, MPFR_RNDN);
  check(t == 0, "operand not exact");
  if (d.neg) mpfr_neg(dst, dst, MPFR_RNDN);
}

Outcome Oracle::value(const Format& f, mpfr_srcptr x, bool sticky) {
  const Info d = info(f);
  Outcome r;
  r.kind = Outcome::Kind::value;
  r.neg = mpfr_signbit(x) != 0;
  r.e = long(mpfr_get_exp(x)) - 1;  // MPFR significands lie in [1/2, 1)
  const long k = long(mpfr_get_z_2exp(z_, x));
  mpz_abs(z_, z_);
  r.grid = split_at(z_, k, sticky, std::max(r.e - d.m, d.qmin), t_);
  r.unbounded = r.e < d.emin ? split_at(z_, k, sticky, r.e - d.m, t_) : r.grid;
  return r;
}

Outcome Oracle::exact(Op op, const Format& f, const Format& from, bool ftz_in, std::span<const std::uint64_t> x) {
  check(x.size() == std::size_t(arity(op)), "operand count");
  const Format& src = op == Op::cvt ? from : f;
  Decoded v[3];
  for (std::size_t i = 0; i < x.size(); ++i) v[i] = decode(src, x[i], ftz_in);
  Outcome r;
  // A NaN operand: the first one propagates; a signalling one raises invalid.
  const Decoded* first = nullptr;
  Flags nan_flags = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    if (!is_nan(v[i].kind)) continue;
    if (!first) first = &v[i];
    if (v[i].kind == Kind::signaling_nan) nan_flags |= Flag::invalid;
  }
  if (first) {
    r.kind = Outcome::Kind::nan;
    r.neg = first->neg;
    r.frac = first->frac;
    r.nan_from = &src;
    r.flags = nan_flags;
    // fma: 0 * inf + NaN is invalid as well.
    if (op == Op::fma && !is_nan(v[0].kind) && !is_nan(v[1].kind)) {
      const bool zi = (v[0].kind == Kind::zero && v[1].kind == Kind::infinite) ||
                      (v[0].kind == Kind::infinite && v[1].kind == Kind::zero);
      if (zi) r.flags |= Flag::invalid;
    }
    return r;
  }
  auto special = [&](Outcome::Kind kind, bool neg, Flags flags = 0) {
    r.kind = kind;
    r.neg = neg;
    r.flags = flags;
    return r;
  };
  const Decoded &a = v[0], &b = v[1], &c = v[2];
  switch (op) {
    case Op::add:
    case Op::sub: {
      Decoded bb = b;
      if (op == Op::sub) bb.neg = !bb.neg;
      if (a.kind == Kind::infinite || bb.kind == Kind::infinite) {
        if (a.kind == Kind::infinite && bb.kind == Kind::infinite && a.neg != bb.neg)
          return special(Outcome::Kind::invalid, false);
        return special(Outcome::Kind::infinite, a.kind == Kind::infinite ? a.neg : bb.neg);
      }
      if (a.kind == Kind::zero && bb.kind == Kind::zero) {
        r.signs_agree = a.neg == bb.neg;
        return special(Outcome::Kind::zero_sum, a.neg);
      }
      long lo = LONG_MAX, hi = LONG_MIN;
      widen(lo, hi, a);
      widen(lo, hi, bb);
      load(a_, a);
      load(b_, bb);
      mpfr_set_prec(res_, span_precision(lo, hi));
      check(mpfr_add(res_, a_, b_, MPFR_RNDN) == 0, "inexact sum");
      if (mpfr_zero_p(res_)) {
        r.signs_agree = false;
        return special(Outcome::Kind::zero_sum, false);
      }
      return value(f, res_, false);
    }
    case Op::mul: {
      const bool neg = a.neg != b.neg;
      const bool inf = a.kind == Kind::infinite || b.kind == Kind::infinite;
      const bool zero = a.kind == Kind::zero || b.kind == Kind::zero;
      if (inf && zero) return special(Outcome::Kind::invalid, false);
      if (inf) return special(Outcome::Kind::infinite, neg);
      if (zero) return special(Outcome::Kind::zero, neg);
      load(a_, a);
      load(b_, b);
      check(mpfr_mul(prod_, a_, b_, MPFR_RNDN) == 0, "inexact product");
      return value(f, prod_, false);
    }
    case Op::div: {
      const bool neg = a.neg != b.neg;
      const bool ai = a.kind == Kind::infinite, bi = b.kind == Kind::infinite;
      const bool az = a.kind == Kind::zero, bz = b.kind == Kind::zero;
      if ((ai && bi) || (az && bz)) return special(Outcome::Kind::invalid, false);
      if (ai) return special(Outcome::Kind::infinite, neg);
      if (bz) return special(Outcome::Kind::infinite, neg, Flag::divbyzero);
      if (az || bi) return special(Outcome::Kind::zero, neg);
      load(a_, a);
      load(b_, b);
      mpfr_set_prec(res_, 2 * (f.man_bits + 1) + 20);
      const int t = mpfr_div(res_, a_, b_, MPFR_RNDZ);
      return value(f, res_, t != 0);
    }
    case Op::sqrt: {
      if (a.kind == Kind::zero) return special(Outcome::Kind::zero, a.neg);
      if (a.neg) return special(Outcome::Kind::invalid, false);
      if (a.kind == Kind::infinite) return special(Outcome::Kind::infinite, false);
      load(a_, a);
      mpfr_set_prec(res_, 2 * (f.man_bits + 1) + 20);
      const int t = mpfr_sqrt(res_, a_, MPFR_RNDZ);
      return value(f, res_, t != 0);
    }
    case Op::fma: {
      const bool pneg = a.neg != b.neg;
      const bool ai = a.kind == Kind::infinite, bi = b.kind == Kind::infinite;
      const bool az = a.kind == Kind::zero, bz = b.kind == Kind::zero;
      if ((ai && bz) || (az && bi)) return special(Outcome::Kind::invalid, false);
      if (ai || bi) {
        if (c.kind == Kind::infinite && c.neg != pneg) return special(Outcome::Kind::invalid, false);
        return special(Outcome::Kind::infinite, pneg);
      }
      if (c.kind == Kind::infinite) return special(Outcome::Kind::infinite, c.neg);
      if ((az || bz) && c.kind == Kind::zero) {
        r.signs_agree = pneg == c.neg;
        return special(Outcome::Kind::zero_sum, pneg);
      }
      long lo = LONG_MAX, hi = LONG_MIN;
      if (az || bz) {
        mpfr_set_zero(prod_, pneg ? -1 : 1);
      } else {
        load(a_, a);
        load(b_, b);
        check(mpfr_mul(prod_, a_, b_, MPFR_RNDN) == 0, "inexact product");
        lo = a.exp + b.exp;
        hi = lo + msb(a.sig) + msb(b.sig) + 2;
      }
      widen(lo, hi, c);
      load(c_, c);
      mpfr_set_prec(res_, span_precision(lo, hi));
      check(mpfr_add(res_, prod_, c_, MPFR_RNDN) == 0, "inexact fma");
      if (mpfr_zero_p(res_)) {
        r.signs_agree = false;
        return special(Outcome::Kind::zero_sum, false);
      }
      return value(f, res_, false);
    }
    case Op::cvt: {
      if (a.kind == Kind::infinite)
        return special(Outcome::Kind::infinite, a.neg, f.inf == model::Infinity::ieee ? 0 : Flag::invalid);
      if (a.kind == Kind::zero) return special(Outcome::Kind::zero, a.neg);
      load(a_, a);
      return value(f, a_, false);
    }
  }
  check(false, "unknown op");
  return r;
}

Expected Oracle::round(const Format& f, const Options& o, const Outcome& r) {
  const Info d = info(f);
  switch (r.kind) {
    case Outcome::Kind::invalid: return {canonical_nan(f, d), Flag::invalid | r.flags};
    case Outcome::Kind::nan: return nan_result(f, d, o, r);
    case Outcome::Kind::zero: return zero_result(f, d, r.neg);
    case Outcome::Kind::zero_sum: return zero_result(f, d, r.signs_agree ? r.neg : o.rounding == Rounding::rd);
    case Outcome::Kind::infinite: {
      Expected x = infinite_result(f, d, o, r.neg);
      x.flags |= r.flags;
      return x;
    }
    case Outcome::Kind::value: break;
  }
  // An unsigned format cannot hold a negative nonzero value.
  if (r.neg && !is_signed(f)) return {canonical_nan(f, d), Flag::invalid};
  const Split& g = r.grid;
  const bool up =
      rounds_up(o.rounding, r.neg, g, parity(f, d, g.kept, g.q, false), parity(f, d, g.kept + 1, g.q, false));
  const std::uint64_t kept = g.kept + (up ? 1 : 0);
  Flags flags = g.inexact ? Flag::inexact : 0;
  // Tininess after rounding: the value rounded at precision p with an unbounded exponent range
  // lies below 2^emin. Underflow is raised for a tiny inexact result; ftz_out flushes every tiny
  // result, exact or not (x86 MXCSR.FTZ), raising underflow and inexact.
  bool tiny = false;
  if (r.e < d.emin) {
    const Split& u = r.unbounded;
    const bool uup =
        rounds_up(o.rounding, r.neg, u, parity(f, d, u.kept, u.q, true), parity(f, d, u.kept + 1, u.q, true));
    const std::uint64_t ukept = u.kept + (uup ? 1 : 0);
    tiny = u.q + msb(ukept) < d.emin;
  }
  if (tiny && g.inexact) flags |= Flag::underflow;
  if (kept == 0 || (tiny && o.ftz_out)) {
    Expected z = zero_result(f, d, r.neg);
    z.flags |= flags | (tiny && o.ftz_out ? Flag::underflow | Flag::inexact : 0);
    return z;
  }
  // Encode kept * 2^q; the overflow test applies to the value rounded with an unbounded exponent,
  // which is this one whenever it can overflow (q is e - man_bits there).
  const long e = g.q + msb(kept);
  if (e > d.emax) return overflow_result(f, d, o, r.neg);
  std::uint64_t mag;
  if (d.gradual && e < d.emin) {
    check(g.q == d.qmin, "subnormal off the smallest quantum");
    mag = kept;
  } else {
    const long shift = g.q - (e - d.m);
    const std::uint64_t s = shift >= 0 ? kept << shift : kept >> -shift;
    check(s >> d.m == 1, "significand not normalised");
    check(e + d.bias >= 0, "negative biased exponent");
    mag = (std::uint64_t(e + d.bias) << d.m) | (s - (std::uint64_t{1} << d.m));
  }
  if (mag > d.max_finite) return overflow_result(f, d, o, r.neg);
  return {pack(f, d, r.neg, mag), flags};
}

std::string flag_names(Flags f) {
  std::string s;
  const std::pair<Flags, const char*> names[] = {{Flag::invalid, "invalid"},
                                                 {Flag::divbyzero, "divbyzero"},
                                                 {Flag::overflow, "overflow"},
                                                 {Flag::underflow, "underflow"},
                                                 {Flag::inexact, "inexact"}};
  for (const auto& [bit, n] : names) {
    if (!(f & bit)) continue;
    if (!s.empty()) s += '|';
    s += n;
  }
  return s.empty() ? "none" : s;
}

std::string describe(const Options& o) {
  std::string s(model::name(o.rounding));
  if (o.ftz_in) s += "+ftz_in";
  if (o.ftz_out) s += "+ftz_out";
  if (o.saturate) s += "+saturate";
  if (o.canonical_nan) s += "+canonical_nan";
  return s;
}

}  // namespace gp::oracle
