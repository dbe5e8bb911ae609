// The steps of FDA's fast paths (fixed a and b formats among binary16, bfloat16, tf32, e4m3, e5m2,
// no scale factors, every carry kept), one definition each: Dot's per-element path
// (model/mma_algorithms.cpp, fda_fast_block) and the whole-matrix kernel (model/gemm.cpp) are both
// built from them. fda_block (model/mma_algorithms.cpp) is their specification; blocks with an
// infinity or a NaN, or a c that is not finite, go there. The final rounding is Dot::round_out,
// with FastRounding for its common case.
#pragma once

#include <algorithm>
#include <bit>
#include <climits>
#include <cstdint>
#include <limits>

#include "model/format.hpp"
#include "model/mma_algorithms.hpp"
#include "model/value.hpp"

namespace gp::model::fda_fast {

// sig * 2^shift, bits below 2^0 dropped (truncation of a magnitude: toward zero).
// (A zero significand may come with any shift: zero terms keep their operands' exponents.)
// Branch-free, so that loops over lanes vectorize.
[[gnu::always_inline]] inline std::uint64_t align_trunc(std::uint64_t sig, std::int64_t shift) {
  const std::uint64_t left = sig << std::clamp<std::int64_t>(shift, 0, 63),
                      right = sig >> std::clamp<std::int64_t>(-shift, 0, 63);
  const std::uint64_t in_range = std::uint64_t(0) - std::uint64_t(shift < 64 && shift > -64);
  return (shift >= 0 ? left : right) & in_range;
}

// Alignment exponent of a decoded finite value (the exponent of its leading binade; a subnormal
// takes the format's emin, as MMA-Sim's step 2 reads exponents from the encoding).
inline int align_exp(const Format& f, const Unpacked& u) { return u.exp + f.man_bits; }

inline bool finite(Class c) { return c == Class::zero || is_finite_nonzero(c); }

// Calls fn.template operator()<F>() with the a and b format F when the fast path applies to cfg (fda
// or cofda, a == b among the formats below, no scale factors, every carry kept, c with subnormals
// as decode_addend reads it); false otherwise.
template <class Fn>
bool with_format(const DotConfig& cfg, Fn&& fn) {
  if (unchained(cfg.algorithm) != MmaAlgorithm::fda || cfg.a != cfg.b || cfg.scale || cfg.carry_bits != 0 ||
      !cfg.c->has_subnormals())
    return false;
  if (cfg.a == &binary16)
    fn.template operator()<binary16>();
  else if (cfg.a == &bfloat16)
    fn.template operator()<bfloat16>();
  else if (cfg.a == &tf32)
    fn.template operator()<tf32>();
  else if (cfg.a == &e4m3)
    fn.template operator()<e4m3>();
  else if (cfg.a == &e5m2)
    fn.template operator()<e5m2>();
  else
    return false;
  return true;
}

// "No nonzero product" for the largest biased product exponent of a block.
inline constexpr std::int32_t kNoProduct = INT_MIN / 2;

// An operand decoded branch-free: significand with its hidden bit, biased exponent of its leading
// binade (a subnormal takes emin's, 1, as MMA-Sim reads exponents from the encoding), sign (0 or
// 1), and whether it is an infinity or a NaN (the block then takes fda_block).
struct Operand {
  std::uint32_t sig;
  std::int32_t exp;
  std::uint32_t neg;
  std::uint32_t special;
};

template <const Format& F>
[[gnu::always_inline]] inline Operand decode(std::uint64_t bits) {
  static_assert(F.has_sign() && F.has_subnormals() && F.value_bits() <= 32 && F.precision() <= 16);
  const auto x = std::uint32_t(bits >> F.pad_bits);
  const std::uint32_t mag = x & std::uint32_t(F.magnitude_mask());
  const std::uint32_t field = mag >> F.man_bits;
  Operand o;
  o.sig = (mag & std::uint32_t(F.man_mask())) | (std::uint32_t(field != 0) << F.man_bits);
  o.exp = std::int32_t(field + (field == 0));
  o.neg = (x >> (F.value_bits() - 1)) & 1;
  if constexpr (F.nan == NanStyle::ieee)
    o.special = field == std::uint32_t(F.exp_field_max());
  else if constexpr (F.nan == NanStyle::all_ones)
    o.special = mag == std::uint32_t(F.magnitude_mask());
  else
    o.special = 0;
  return o;
}

// The fixed a and b formats' constants. A product of decoded operands is (-1)^(neg) * sig *
// 2^(exp - bias - m), sig below 2^(A.precision() + B.precision()).
template <const Format& A, const Format& B>
struct Pair {
  static constexpr int m = A.man_bits + B.man_bits;
  static constexpr int bias = A.bias + B.bias;
  // Whether a block of n products is summed exactly in T after alignment with lp = max(F - m, 0)
  // left shifts: every aligned product below 2^(digits - 1) (so that fda_fast::aligned may clamp
  // its right shift at digits - 1) and the sum of n of them below 2^digits. Under check() (F <=
  // 40, n <= 1024) std::uint64_t always does: 2 + F + 10 <= 52 bits.
  template <class T>
  static constexpr bool fits(int lp, int n) {
    return A.precision() + B.precision() + lp + std::max(1, int(std::bit_width(unsigned(n - 1)))) <=
           std::numeric_limits<T>::digits;
  }
};

// A block's c decoded branch-free, for formats with subnormals (field 0: zero and subnormals), as
// unpack reads it where finite: (-1)^neg * sig * 2^exp. `special` is set for every infinity and
// NaN (and may be for other values: such a c only takes the exact path). 64-bit fields throughout,
// and the format's constants read once into AddendFormat: loops over lanes vectorize.
struct Addend {
  std::uint64_t sig;
  std::int64_t exp;   // of sig's LSB
  std::int64_t lead;  // of its leading binade (align_exp: a subnormal takes emin)
  std::uint64_t neg, zero, special;
};
struct AddendFormat {
  explicit AddendFormat(const Format& f)
      : pad(f.pad_bits),
        man_bits(f.man_bits),
        bias(f.bias),
        magnitude_mask(f.magnitude_mask()),
        man_mask(f.man_mask()),
        sign_mask(f.sign_mask()),
        nan_field(f.nan == NanStyle::ieee ? f.exp_field_max() : ~0ull),
        nan_magnitude(f.nan == NanStyle::all_ones ? f.magnitude_mask() : ~0ull),
        inf_magnitude(f.has_inf() ? f.inf_magnitude() : ~0ull),
        negative_zero_nan(f.nan == NanStyle::negative_zero) {}
  std::uint64_t pad, man_bits;
  std::int64_t bias;
  std::uint64_t magnitude_mask, man_mask, sign_mask;
  // The encodings of the specials: exponent field (IEEE NaN style), magnitude (all-ones NaN
  // style, infinity), -0 (negative-zero NaN style); ~0: none.
  std::uint64_t nan_field, nan_magnitude, inf_magnitude, negative_zero_nan;
};
[[gnu::always_inline]] inline Addend decode_addend(const AddendFormat& f, std::uint64_t bits) {
  const std::uint64_t mag = (bits >> f.pad) & f.magnitude_mask, field = mag >> f.man_bits;
  Addend c;
  c.sig = (mag & f.man_mask) | (std::uint64_t(field != 0) << f.man_bits);
  c.lead = std::int64_t(field + (field == 0)) - f.bias;
  c.exp = c.lead - std::int64_t(f.man_bits);
  c.neg = (bits & f.sign_mask) != 0;
  // (| and & rather than || and &&: no branches in a loop over lanes)
  c.special = std::uint64_t(field == f.nan_field) | std::uint64_t(mag == f.nan_magnitude) |
              std::uint64_t(mag == f.inf_magnitude) | (std::uint64_t(mag == 0) & c.neg & f.negative_zero_nan);
  c.zero = std::uint64_t(mag == 0) & (c.special ^ 1);
  return c;
}

// Where a block's terms are aligned. e_max = max(align_floor, the leading-binade exponents of c
// and of the nonzero products); the accumulator's LSB is 2^q, q = e_max - F. A product of biased
// exponent pe lands at (sig << lp) >> (top - pe) (top - pe >= 0 since e_max bounds it).
struct Alignment {
  int q;
  int top;
  int lp;
};
template <class P>
[[gnu::always_inline]] inline Alignment alignment(const DotConfig& cfg, const Addend& c, std::int32_t pmax) {
  const int l = cfg.F - P::m;
  const std::int64_t emax =
      std::max({std::int64_t(cfg.align_floor), std::int64_t(pmax - P::bias), c.zero ? kNoProduct : c.lead});
  return {int(emax) - cfg.F, int(emax) + P::bias + std::max(-l, 0), std::max(l, 0)};
}

// One product aligned to the accumulator, truncated.
template <class T>
[[gnu::always_inline]] inline T aligned(std::uint32_t sig, std::int32_t pe, int top, int lp) {
  return (T(sig) << lp) >> std::clamp(top - pe, 0, std::numeric_limits<T>::digits - 1);
}

// c aligned to the accumulator, truncated, signed. Its shift is below F - man_bits + 1 since e_max
// bounds c's leading binade, so |c| < 2^(F + 1) there.
[[gnu::always_inline]] inline std::int64_t c_term(const Addend& c, const Alignment& al) {
  const auto v = std::int64_t(align_trunc(c.sig, c.exp - al.q));
  return c.neg ? -v : v;
}

// The final rounding's common case, branch-free so that it vectorizes: a normal result, RZ or RNE,
// d without pad bits. round() gives Dot::round_out's bits there and returns false everywhere else
// (zero, subnormal, overflow, the other modes), where round_out, the one definition, applies.
class FastRounding {
 public:
  explicit FastRounding(const Dot& dot) {
    const DotConfig& cfg = dot.config();
    const Format& d = *cfg.d;
    enabled_ = (cfg.out_rounding == Rounding::rz || cfg.out_rounding == Rounding::rne) && d.pad_bits == 0;
    rne_ = cfg.out_rounding == Rounding::rne;
    fb_ = cfg.out_fraction_bits;
    widen_ = d.man_bits - fb_;
    man_bits_ = d.man_bits;
    sign_shift_ = d.sign_shift();
    bias_ = d.bias;
    emin_ = d.emin();
    emax_ = d.emax();
    fraction_mask_ = (std::uint64_t{1} << fb_) - 1;
    max_magnitude_ = (std::uint64_t(emax_ + bias_) << fb_) | fraction_mask_;
  }
  // (-1)^neg * mag * 2^exp. As round_pack does, the rounding works on the magnitude's encoding
  // (biased exponent - 1, then the significand with its leading bit): a carry moves into the
  // exponent, and RNE's "even" is the encoding's last bit. 64-bit throughout: the loops over lanes
  // vectorize when every step has one width.
  [[gnu::always_inline]] std::uint64_t round(std::uint64_t neg, std::uint64_t mag, std::int64_t exp,
                                             std::uint64_t& bits) const {
    const std::int64_t h = 63 - std::countl_zero(mag | 1);  // mag's leading bit
    const std::int64_t lead = exp + h;
    const std::int64_t s = h - fb_;  // bits rounded off (negative: none, widened)
    const std::int64_t sp = std::max<std::int64_t>(s, 0), sn = std::max<std::int64_t>(-s, 0);
    std::uint64_t m = (std::uint64_t(lead + bias_ - 1) << fb_) + ((mag >> sp) << sn);
    // The bits rounded off, at the top of a word (none: 0), against half an ulp.
    const std::uint64_t rest = (mag << (63 - sp)) << 1, half = std::uint64_t{1} << 63;
    m += rne_ & (std::uint64_t(rest > half) | (std::uint64_t(rest == half) & m));
    bits = (neg << sign_shift_) | ((m >> fb_) << man_bits_) | ((m & fraction_mask_) << widen_);
    return enabled_ & std::uint64_t(mag != 0) & std::uint64_t(lead >= emin_) & std::uint64_t(lead <= emax_) &
           std::uint64_t(m <= max_magnitude_);
  }

 private:
  std::uint64_t enabled_, rne_;
  std::int64_t fb_, widen_, man_bits_, sign_shift_, bias_, emin_, emax_;
  std::uint64_t fraction_mask_, max_magnitude_;  // of d narrowed to fb_ fraction bits
};

// The block's result from the exact sum of its aligned terms (acc * 2^q).
inline std::uint64_t result(const Dot& dot, const FastRounding& fr, std::int64_t acc, int q) {
  const bool neg = acc < 0;
  const auto mag = std::uint64_t(neg ? -acc : acc);
  std::uint64_t bits;
  if (fr.round(neg, mag, q, bits)) return bits;
  return dot.round_out(neg, mag, q);
}

// The result of a block without nonzero terms: a zero, negative when c and every product are.
inline std::uint64_t zero_result(const Dot& dot, bool c_neg, bool every_product_negative_zero) {
  return dot.round_out(every_product_negative_zero && c_neg, 0, 0);
}

}  // namespace gp::model::fda_fast
