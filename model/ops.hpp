// Correctly rounded operations: add, sub, mul, div, sqrt, fma and conversion, in any format and
// mode. Pure functions of (format, options, operand bits) -> (result bits, flags), integer
// arithmetic only. The special-value conventions are those of model/rounding.hpp.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "model/rounding.hpp"

namespace gp::model {

namespace detail {

// A NaN operand decides the result: the first one (or the one Options::nan_propagation picks),
// quieted; any signalling one raises invalid. Null when no operand is a NaN.
inline std::optional<Result> nan_operands(const Format& f, const Options& o,
                                          std::initializer_list<const Unpacked*> xs) {
  const Unpacked* first = nullptr;
  Flags flags = 0;
  for (const Unpacked* x : xs) {
    if (!is_nan(x->cls)) continue;
    if (!first || o.nan_propagation == NanPropagation::last ||
        (o.nan_propagation == NanPropagation::larger_payload && x->sig > first->sig))
      first = x;
    if (x->cls == Class::signaling_nan) flags |= Flag::invalid;
  }
  if (!first) return std::nullopt;
  Result r = propagate_nan(f, f, *first, o);
  r.flags |= flags;
  return r;
}

// The result of an fma with a NaN operand: the first NaN in Options::nan_fma_order where it has
// one, else as nan_operands; quieting, canonical NaNs and the invalid flag alike.
inline Result fma_nan_operands(const Format& f, const Options& o, const Unpacked& a, const Unpacked& b,
                               const Unpacked& c) {
  if (!o.nan_fma_order) return *nan_operands(f, o, {&a, &b, &c});
  const Unpacked* x[3] = {&a, &b, &c};
  const std::uint8_t* k = fma_nan_order_indices[std::size_t(*o.nan_fma_order)];
  Options in_order = o;
  in_order.nan_propagation = NanPropagation::first;
  return *nan_operands(f, in_order, {x[k[0]], x[k[1]], x[k[2]]});
}

// The sign of an exact zero sum of operands with signs a and b (IEEE 754 section 6.3).
constexpr bool zero_sum_sign(const Options& o, bool a, bool b) { return a == b ? a : o.rounding == Rounding::rd; }

// Whether every finite value of f, and the sum of two, fits a 63-bit integer of quanta.
constexpr bool small_exact_sums(const Format& f) { return f.emax() - f.quantum_min() + 2 <= 62; }

// A finite value decoded without branches (the hot path of exhaustive narrow-format runs):
// sig * 2^exp, with ftz reading subnormals as zero.
struct Finite {
  std::uint64_t sig;
  int exp;
};
[[gnu::always_inline]] inline Finite decode_finite(const Format& f, std::uint64_t bits, bool ftz) {
  const std::uint64_t mag = magnitude_of(f, bits);
  const std::uint64_t field = mag >> f.man_bits;
  const bool normal = field != 0 || !f.has_subnormals();
  std::uint64_t sig = (mag & f.man_mask()) | (std::uint64_t(normal) << f.man_bits);
  if (ftz && !normal) sig = 0;
  return {sig, int(normal ? field : 1) - f.bias - f.man_bits};
}

// A finite value of a small_exact_sums format as a signed integer number of its smallest quantum.
[[gnu::always_inline]] inline std::int64_t to_quanta(const Format& f, std::uint64_t bits, bool ftz) {
  const Finite x = decode_finite(f, bits, ftz);
  const std::int64_t v = std::int64_t(x.sig << (x.exp - f.quantum_min()));
  return sign_of(f, bits) ? -v : v;
}

// Rounds the sum of two such values; `a_neg`/`b_neg` give the sign of an exact zero sum.
[[gnu::always_inline]] inline Result round_quanta(const Format& f, const Options& o, std::int64_t sum, bool a_neg,
                                                  bool b_neg) {
  if (sum == 0) return zero(f, zero_sum_sign(o, a_neg, b_neg));
  return round_pack(f, o, sum < 0, f.quantum_min(), std::uint64_t(sum < 0 ? -sum : sum));
}

[[gnu::always_inline]] inline Result add_nonzero(const Format& f, const Options& o, const Unpacked& a,
                                                 const Unpacked& b);

// Sum of two finite values (zeros included), exactly, then rounded.
[[gnu::always_inline]] inline Result add_finite(const Format& f, const Options& o, const Unpacked& a,
                                                const Unpacked& b) {
  if (small_exact_sums(f)) {
    // Every value is an integer number of the smallest quantum: add them exactly.
    const std::int64_t va = std::int64_t(a.sig << (a.exp - f.quantum_min()));
    const std::int64_t vb = std::int64_t(b.sig << (b.exp - f.quantum_min()));
    return round_quanta(f, o, (a.neg ? -va : va) + (b.neg ? -vb : vb), a.neg, b.neg);
  }
  if (a.sig == 0 || b.sig == 0) {
    if (a.sig == 0 && b.sig == 0) return zero(f, zero_sum_sign(o, a.neg, b.neg));
    const Unpacked& x = a.sig == 0 ? b : a;
    return round_pack(f, o, x.neg, x.exp, x.sig);
  }
  return add_nonzero(f, o, a, b);
}

// Sum of two nonzero finite values of at most 53 significant bits each, at any exponents (not
// necessarily values of f), rounded once to f.
[[gnu::always_inline]] inline Result add_nonzero(const Format& f, const Options& o, const Unpacked& a,
                                                 const Unpacked& b) {
  // Leading bits to bit 61; the smaller operand's bits beyond 64 are jammed into bit 0, which
  // rounds correctly since both significands have at least 8 zero low bits (precision <= 53).
  // Written with selects rather than branches: random operands make these unpredictable.
  const int sa = 61 - msb(a.sig), sb = 61 - msb(b.sig);
  const std::uint64_t ma = a.sig << sa, mb = b.sig << sb;
  const int ea = a.exp - sa, eb = b.exp - sb;
  const bool swap = ea < eb;
  const std::uint64_t hi = swap ? mb : ma, lo_full = swap ? ma : mb;
  const int e = swap ? eb : ea, d = swap ? eb - ea : ea - eb;
  // A shift of 63 jams as well as any larger one, the leading bit being at 61.
  const std::uint64_t lo = shift_right_jam_below_64(lo_full, d < 63 ? d : 63);
  const bool hi_neg = swap ? b.neg : a.neg;
  std::int64_t sum = std::int64_t(hi) + (a.neg == b.neg ? std::int64_t(lo) : -std::int64_t(lo));
  if (sum == 0) return zero(f, zero_sum_sign(o, a.neg, b.neg));
  const bool neg = hi_neg != (sum < 0);
  return round_pack(f, o, neg, e, std::uint64_t(sum < 0 ? -sum : sum));
}

// Signed sum of two unpacked operands of f with every special case.
[[gnu::always_inline]] inline Result add_unpacked(const Format& f, const Options& o, const Unpacked& a,
                                                  const Unpacked& b) {
  if (is_finite_nonzero(a.cls) || a.cls == Class::zero) {
    if (is_finite_nonzero(b.cls) || b.cls == Class::zero) return add_finite(f, o, a, b);
  }
  if (auto n = nan_operands(f, o, {&a, &b})) return *n;
  if (a.cls == Class::infinite && b.cls == Class::infinite && a.neg != b.neg) return invalid_result(f, o);
  return infinity(f, o, a.cls == Class::infinite ? a.neg : b.neg);
}

}  // namespace detail

namespace detail {
// Whether neither operand is an infinity or NaN (for formats with IEEE specials, one compare each).
constexpr bool both_finite(const Format& f, std::uint64_t a, std::uint64_t b) {
  if (f.nan != NanStyle::ieee) return !is_nan(classify(f, a)) && !is_nan(classify(f, b));
  return magnitude_of(f, a) < f.inf_magnitude() && magnitude_of(f, b) < f.inf_magnitude();
}
}  // namespace detail

[[gnu::always_inline]] inline Result add(const Format& f, const Options& o, std::uint64_t a, std::uint64_t b) {
  if (detail::small_exact_sums(f) && detail::both_finite(f, a, b)) {
    return detail::round_quanta(f, o, detail::to_quanta(f, a, o.ftz_in) + detail::to_quanta(f, b, o.ftz_in),
                                sign_of(f, a), sign_of(f, b));
  }
  return detail::add_unpacked(f, o, unpack(f, a, o.ftz_in), unpack(f, b, o.ftz_in));
}

// a - b: b's sign is flipped unless b is a NaN (NaN operands propagate unchanged), or is flipped
// anyway with Options::nan_sub_flips.
[[gnu::always_inline]] inline Result sub(const Format& f, const Options& o, std::uint64_t a, std::uint64_t b) {
  if (detail::small_exact_sums(f) && detail::both_finite(f, a, b)) {
    return detail::round_quanta(f, o, detail::to_quanta(f, a, o.ftz_in) - detail::to_quanta(f, b, o.ftz_in),
                                sign_of(f, a), !sign_of(f, b));
  }
  Unpacked ub = unpack(f, b, o.ftz_in);
  if (!is_nan(ub.cls) || o.nan_sub_flips) ub.neg = !ub.neg;
  return detail::add_unpacked(f, o, unpack(f, a, o.ftz_in), ub);
}

[[gnu::always_inline]] inline Result mul(const Format& f, const Options& o, std::uint64_t a, std::uint64_t b) {
  if (2 * f.precision() <= 64 && detail::both_finite(f, a, b)) {
    const detail::Finite x = detail::decode_finite(f, a, o.ftz_in), y = detail::decode_finite(f, b, o.ftz_in);
    return round_pack(f, o, sign_of(f, a) != sign_of(f, b), x.exp + y.exp, x.sig * y.sig);
  }
  const Unpacked ua = unpack(f, a, o.ftz_in), ub = unpack(f, b, o.ftz_in);
  const bool neg = ua.neg != ub.neg;
  if (is_finite_nonzero(ua.cls) && is_finite_nonzero(ub.cls)) {
    if (2 * f.precision() <= 64) return round_pack(f, o, neg, ua.exp + ub.exp, ua.sig * ub.sig);
    int exp = ua.exp + ub.exp;
    const std::uint64_t p = narrow_jam(u128(ua.sig) * ub.sig, exp);
    return round_pack(f, o, neg, exp, p);
  }
  if (auto n = detail::nan_operands(f, o, {&ua, &ub})) return *n;
  const bool inf = ua.cls == Class::infinite || ub.cls == Class::infinite;
  const bool zero_operand = ua.cls == Class::zero || ub.cls == Class::zero;
  if (inf && zero_operand) return invalid_result(f, o);
  if (inf) return infinity(f, o, neg);
  return zero(f, neg);
}

Result div(const Format& f, const Options& o, std::uint64_t a, std::uint64_t b);
Result sqrt(const Format& f, const Options& o, std::uint64_t a);
// a * b + c with one rounding; NaN operands taken in Options::nan_fma_order where it has one.
Result fma(const Format& f, const Options& o, std::uint64_t a, std::uint64_t b, std::uint64_t c);
// Conversion of `bits` of format `from` to format `to`; ftz_in applies to the source.
Result cvt(const Format& to, const Format& from, const Options& o, std::uint64_t bits);

// The operations by name, for batch evaluation.
enum class Op : std::uint8_t { add, sub, mul, div, sqrt, fma, cvt };
inline constexpr Op all_ops[] = {Op::add, Op::sub, Op::mul, Op::div, Op::sqrt, Op::fma, Op::cvt};
std::string_view name(Op op);
std::optional<Op> find_op(std::string_view name);
int arity(Op op);
// Evaluates op in format f; `from` is the source format of cvt (ignored otherwise).
// operands.size() must equal arity(op).
Result evaluate(Op op, const Format& f, const Options& o, std::span<const std::uint64_t> operands, const Format& from);

}  // namespace gp::model
