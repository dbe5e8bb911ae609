// Rounding an exact value to a format: modes, options, IEEE flags, and the special results.
//
// Conventions (the oracle tests hold the model to them):
// - Overflow is decided IEEE-style: the value is first rounded with an unbounded exponent; if
//   that exceeds the largest finite value, nearest modes, ra and the direction away from zero
//   of ru/rd give infinity, and rz, ro and the direction towards zero give the largest finite
//   value. A format without infinity gives its NaN instead of infinity (OCP's non-saturating
//   conversion); a format without NaN, or Options::saturate, gives the largest finite value.
// - Underflow: tininess is detected after rounding; the flag is raised when the result is tiny
//   and inexact. Options::ftz_out turns every tiny result (exact or not, the same tininess) into a
//   zero of the same sign and raises underflow and inexact, as x86's MXCSR.FTZ does: a value that
//   rounds up to the smallest normal on the subnormal grid is flushed when it is tiny.
//   Options::ftz_in reads subnormal operands as zeros (MXCSR.DAZ), raising nothing.
// - Formats without -0 (FNUZ, unsigned) deliver +0. An unsigned format cannot hold a negative
//   nonzero result: it gives NaN and raises invalid. A format without zero (ue8m0) gives its
//   smallest value for a zero result, raising underflow and inexact.
// - NaN results: an operation with a NaN operand returns the first NaN operand (a, b, c order),
//   quieted, sign kept, its payload the leading fraction bits of the source (truncated or
//   zero-extended to the destination's fraction). Invalid operations return the canonical NaN
//   (positive, quiet bit only). Options::canonical_nan makes every NaN result canonical.
//   Options' other nan_ fields model hardware that differs (model/scalar_unit.hpp's NanPolicy):
//   the last NaN operand or the one with the larger fraction field (x87) instead of the first,
//   signalling NaNs kept signalling, a - NaN flipping the NaN's sign, an fma that takes its NaN
//   operands in an order of its own, and another default NaN (x86's negative one, NVIDIA's
//   all-ones) for invalid operations and canonical results.
//   Signalling NaN operands raise invalid. Formats with one NaN encoding per sign keep the sign;
//   FNUZ has one NaN; a format without NaN gives its largest finite value, raising invalid.
#pragma once

#include <array>
#include <cstdint>
#include <iterator>
#include <optional>
#include <string_view>

#include "model/format.hpp"
#include "model/value.hpp"
#include "model/wide.hpp"

namespace gp::model {

enum class Rounding : std::uint8_t {
  rne,
  rna,
  rnz,
  rnu,
  rnd,
  rno,  // to nearest, ties to even, away, zero, up, down, odd
  rz,
  ru,
  rd,
  ra,  // directed: toward zero, up, down, away from zero
  ro,  // round to odd (von Neumann): truncate, then set LSB if inexact
};
inline constexpr Rounding all_roundings[] = {Rounding::rne, Rounding::rna, Rounding::rnz, Rounding::rnu,
                                             Rounding::rnd, Rounding::rno, Rounding::rz,  Rounding::ru,
                                             Rounding::rd,  Rounding::ra,  Rounding::ro};
std::string_view name(Rounding r);
std::optional<Rounding> find_rounding(std::string_view name);

// IEEE exception flags, with TestFloat's bit assignment.
using Flags = unsigned;
namespace Flag {
inline constexpr Flags inexact = 1, underflow = 2, overflow = 4, divbyzero = 8, invalid = 16;
}

// Which NaN operand an operation with several returns: the first (a, b, c order), the last, or the
// one whose fraction field (quiet bit included) is the larger, the first of equal ones (x87).
enum class NanPropagation : std::uint8_t { first, last, larger_payload };
// The order in which an fma takes its NaN operands where it has one of its own: the first NaN of
// that order comes out (bac: b's NaN if b is one, else a's, else c's). fma_nan_order_indices[order]
// lists the operands' indices (a = 0, b = 1, c = 2) in that order.
enum class FmaNanOrder : std::uint8_t { abc, acb, bac, bca, cab, cba };
inline constexpr FmaNanOrder all_fma_nan_orders[] = {FmaNanOrder::abc, FmaNanOrder::acb, FmaNanOrder::bac,
                                                     FmaNanOrder::bca, FmaNanOrder::cab, FmaNanOrder::cba};
inline constexpr std::uint8_t fma_nan_order_indices[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2},
                                                             {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
// The NaN of invalid operations and of canonical results: the quiet NaN without payload, its
// negative (x86 SSE), the all-ones pattern (NVIDIA), its negative. default_nan() gives the bits.
enum class DefaultNan : std::uint8_t { quiet, negative_quiet, all_ones, negative_all_ones };
inline constexpr DefaultNan all_default_nans[] = {DefaultNan::quiet, DefaultNan::negative_quiet, DefaultNan::all_ones,
                                                  DefaultNan::negative_all_ones};

struct Options {
  Rounding rounding = Rounding::rne;
  bool ftz_in = false;         // subnormal operands read as zeros of the same sign
  bool ftz_out = false;        // subnormal results become zeros of the same sign
  bool saturate = false;       // overflow gives the largest finite value, never inf or NaN
  bool canonical_nan = false;  // every NaN result is the canonical NaN
  // NaN results (special cases only: the finite paths never read these).
  NanPropagation nan_propagation = NanPropagation::first;
  bool nan_keep_signaling = false;  // a signalling NaN operand comes out unquieted
  bool nan_sub_flips = false;       // a - NaN returns the NaN with its sign flipped
  DefaultNan nan_default = DefaultNan::quiet;
  std::optional<FmaNanOrder> nan_fma_order = std::nullopt;  // fma's own NaN order; null: nan_propagation's rule
};

struct Result {
  std::uint64_t bits;
  Flags flags;
};

// Assembles sign and magnitude (exponent and fraction fields at bit 0) into storage bits.
constexpr std::uint64_t pack(const Format& f, bool neg, std::uint64_t magnitude) {
  return (magnitude << f.pad_bits) | (neg ? f.sign_mask() : 0);
}

constexpr std::uint64_t canonical_nan(const Format& f) {
  switch (f.nan) {
    case NanStyle::ieee: return pack(f, false, f.inf_magnitude() | f.quiet_bit());
    case NanStyle::all_ones: return pack(f, false, f.magnitude_mask());
    case NanStyle::negative_zero: return f.sign_mask();
    case NanStyle::none: break;
  }
  return pack(f, false, f.max_finite_magnitude());
}

// The bits of a default NaN in f: the canonical NaN, negated or all ones where f has those encodings.
constexpr std::uint64_t default_nan(const Format& f, DefaultNan d) {
  const bool neg = (d == DefaultNan::negative_quiet || d == DefaultNan::negative_all_ones) && f.has_sign();
  if (f.nan == NanStyle::ieee)
    return pack(f, neg,
                d == DefaultNan::quiet || d == DefaultNan::negative_quiet ? f.inf_magnitude() | f.quiet_bit()
                                                                          : f.magnitude_mask());
  if (f.nan == NanStyle::all_ones) return pack(f, neg, f.magnitude_mask());
  return canonical_nan(f);
}

// The NaN result for a NaN operand of format `from` (an Unpacked NaN), per the rule above.
constexpr Result propagate_nan(const Format& to, const Format& from, const Unpacked& nan, const Options& o) {
  const Flags flags = nan.cls == Class::signaling_nan ? Flag::invalid : 0;
  if (to.nan == NanStyle::none) return {canonical_nan(to), Flag::invalid};
  if (o.canonical_nan) return {default_nan(to, o.nan_default), flags};
  if (to.nan == NanStyle::negative_zero) return {canonical_nan(to), flags};
  if (to.nan == NanStyle::all_ones) return {pack(to, nan.neg && to.has_sign(), to.magnitude_mask()), flags};
  // IEEE destination: left-aligned payload.
  std::uint64_t payload = 0;
  if (from.nan == NanStyle::ieee) {
    payload = from.man_bits >= to.man_bits ? nan.sig >> (from.man_bits - to.man_bits)
                                           : nan.sig << (to.man_bits - from.man_bits);
  }
  // Kept signalling while the payload left of the quiet bit's place stays nonzero (else it would read
  // as an infinity).
  const bool signaling = o.nan_keep_signaling && nan.cls == Class::signaling_nan && (payload & ~to.quiet_bit()) != 0;
  const std::uint64_t fraction = signaling ? payload & ~to.quiet_bit() : payload | to.quiet_bit();
  return {pack(to, nan.neg && to.has_sign(), to.inf_magnitude() | fraction), flags};
}

constexpr Result invalid_result(const Format& f) { return {canonical_nan(f), Flag::invalid}; }
// An invalid operation's result with the options' default NaN.
constexpr Result invalid_result(const Format& f, const Options& o) {
  return {default_nan(f, o.nan_default), Flag::invalid};
}

// An infinite result. A format without infinity gives its NaN, or with Options::saturate (or no
// NaN) its largest finite value; the caller raises the flag the operation calls for.
constexpr Result infinity(const Format& f, const Options& o, bool neg) {
  if (neg && !f.has_sign()) return invalid_result(f);
  if (f.has_inf()) return {pack(f, neg, f.inf_magnitude()), 0};
  if (o.saturate || !f.has_nan()) return {pack(f, neg, f.max_finite_magnitude()), 0};
  return {f.nan == NanStyle::all_ones ? pack(f, neg, f.magnitude_mask()) : canonical_nan(f), 0};
}

// Zero of the requested sign, or the closest the format has (see the conventions above).
constexpr Result zero(const Format& f, bool neg) {
  if (!f.has_zero()) return {pack(f, false, 0), Flag::underflow | Flag::inexact};
  return {pack(f, neg && f.has_negative_zero(), 0), 0};
}

namespace detail {

// How the discarded part of a value compares with half a unit of the kept part.
enum Rest : unsigned { exact = 0, below_half = 1, half = 2, above_half = 3 };

// Whether a discarded part rounds the kept magnitude up; `odd` is the parity of the kept
// magnitude's encoding (so ties to even and round to odd also hold for one-bit significands).
constexpr bool round_up(Rounding r, bool neg, bool odd, Rest rest) {
  const bool inexact = rest != exact, tie = rest == half, above = rest == above_half;
  switch (r) {
    case Rounding::rne: return above || (tie && odd);
    case Rounding::rna: return above || tie;
    case Rounding::rnz: return above;
    case Rounding::rnu: return above || (tie && !neg);
    case Rounding::rnd: return above || (tie && neg);
    case Rounding::rno: return above || (tie && !odd);
    case Rounding::rz: return false;
    case Rounding::ru: return inexact && !neg;
    case Rounding::rd: return inexact && neg;
    case Rounding::ra: return inexact;
    case Rounding::ro: return inexact && !odd;
  }
  return false;
}

// round_up as one 16-entry truth table per mode, indexed by neg | odd << 1 | rest << 2: the hot
// path rounds without a branch on the mode.
inline constexpr auto round_up_tables = [] {
  std::array<std::uint16_t, std::size(all_roundings)> t{};
  for (Rounding r : all_roundings)
    for (unsigned i = 0; i < 16; ++i)
      if (round_up(r, i & 1, (i >> 1) & 1, Rest(i >> 2))) t[std::size_t(r)] |= std::uint16_t(1u << i);
  return t;
}();
constexpr unsigned increment(Rounding r, bool neg, std::uint64_t mag, Rest rest) {
  return (round_up_tables[std::size_t(r)] >> (unsigned(neg) | unsigned(mag & 1) << 1 | unsigned(rest) << 2)) & 1;
}

// The discarded bits left-aligned in a word (sticky in bit 0), classified against half (bit 63).
constexpr Rest classify_rest(std::uint64_t r) {
  constexpr std::uint64_t h = std::uint64_t{1} << 63;
  return Rest(unsigned(r != 0) + unsigned(r >= h) + unsigned(r > h));
}

// sig * 2^exp (+ sticky) cut at quantum 2^(exp + shift): the kept integer and the rest.
struct Split {
  std::uint64_t kept;
  Rest rest;
};
constexpr Split split(std::uint64_t sig, bool sticky, int shift) {
  if (shift <= 0) return {sig << -shift, sticky ? below_half : exact};
  if (shift > 64) return {0, sig != 0 || sticky ? below_half : exact};
  if (shift == 64) return {0, classify_rest(sig | sticky)};
  return {sig >> shift, classify_rest((sig << (64 - shift)) | sticky)};
}

constexpr Result overflow_result(const Format& f, const Options& o, bool neg) {
  bool to_max;
  switch (o.rounding) {
    case Rounding::rz:
    case Rounding::ro: to_max = true; break;
    case Rounding::ru: to_max = neg; break;
    case Rounding::rd: to_max = !neg; break;
    default: to_max = false; break;
  }
  const Flags flags = Flag::overflow | Flag::inexact;
  // Options::saturate: overflow gives the largest finite value in every format, e5m2 and the IEEE
  // ones included (OCP's saturating conversion, NVIDIA's .satfinite).
  if (to_max || o.saturate) return {pack(f, neg, f.max_finite_magnitude()), flags};
  Result r = infinity(f, o, neg);
  r.flags |= flags;
  return r;
}

// Tininess after rounding: would sig * 2^exp, rounded to the format's precision with an unbounded
// exponent range, lie below 2^emin? Called only for values below 2^emin before rounding.
constexpr bool tiny_after_rounding(const Format& f, const Options& o, bool neg, int exp, std::uint64_t sig, bool sticky,
                                   int lead) {
  if (lead < f.emin() - 1) return true;
  const Split s = split(sig, sticky, lead - f.man_bits - exp);
  return !(increment(o.rounding, neg, s.kept, s.rest) && s.kept + 1 == std::uint64_t{1} << f.precision());
}

Result round_slow(const Format& f, const Options& o, bool neg, int exp, std::uint64_t sig, bool sticky);

}  // namespace detail

// Rounds (-1)^neg * (sig + d) * 2^exp to f, where 0 < d < 1 when sticky is set and d = 0 otherwise.
// When sticky is set, sig must carry at least precision + 2 significant bits, so that the sticky
// part lies strictly below the rounding position.
[[gnu::always_inline]] constexpr Result round_pack(const Format& f, const Options& o, bool neg, int exp,
                                                   std::uint64_t sig, bool sticky = false) {
  if (sig == 0 && !sticky) return zero(f, neg);
  // Fast path: a normal, in-range result of a signed format with gradual underflow. The magnitude
  // is (biased exponent - 1) << man_bits plus the kept significand, so a carry moves into the exponent.
  if (sig != 0 && f.has_sign() && f.has_subnormals()) {
    const int top = msb(sig), lead = exp + top;
    if (lead >= f.emin() && lead <= f.emax()) {
      const std::uint64_t base = std::uint64_t(lead + f.bias - 1) << f.man_bits;
      const int shift = top - f.man_bits;
      if (shift <= 0) return {pack(f, neg, base + (sig << -shift)), 0};
      const std::uint64_t rest = (sig << (64 - shift)) | sticky, half = std::uint64_t{1} << 63;
      std::uint64_t mag = base + (sig >> shift);
      std::uint64_t ignored;
      if (o.rounding == Rounding::rne)  // the common mode spelled out: the carry of rest + half - 1 + odd
        mag += __builtin_add_overflow(rest, half - 1 + (mag & 1), &ignored);
      else
        mag += detail::increment(o.rounding, neg, mag, detail::classify_rest(rest));
      if (mag > f.max_finite_magnitude()) return detail::overflow_result(f, o, neg);
      return {pack(f, neg, mag), rest != 0 ? Flag::inexact : 0};
    }
  }
  return detail::round_slow(f, o, neg, exp, sig, sticky);
}

}  // namespace gp::model
