// Correctly rounded operations: add, sub, mul, div, sqrt, fma and conversion, in any format and
// mode. Pure functions of (format, options, operand bits) -> (result bits, flags), integer
// arithmetic only but for the host fast path below (binary16 and binary32 add, sub and mul in round
// to nearest even, where the host's floating point is exact or provably as good). The
// special-value conventions are those of model/rounding.hpp.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cfloat>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string_view>
#include <type_traits>
#include <utility>

#include "model/rounding.hpp"

namespace gp::model {

// The operations by name, for batch evaluation.
enum class Op : std::uint8_t { add, sub, mul, div, sqrt, fma, cvt };

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
[[gnu::always_inline]] constexpr Finite decode_finite(const Format& f, std::uint64_t bits, bool ftz) {
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

// add, sub and mul for every format and option (the host fast path below takes the common case).
[[gnu::always_inline]] inline Result add_general(const Format& f, const Options& o, std::uint64_t a, std::uint64_t b) {
  if (small_exact_sums(f) && both_finite(f, a, b)) {
    return round_quanta(f, o, to_quanta(f, a, o.ftz_in) + to_quanta(f, b, o.ftz_in), sign_of(f, a), sign_of(f, b));
  }
  return add_unpacked(f, o, unpack(f, a, o.ftz_in), unpack(f, b, o.ftz_in));
}

[[gnu::always_inline]] inline Result sub_general(const Format& f, const Options& o, std::uint64_t a, std::uint64_t b) {
  if (small_exact_sums(f) && both_finite(f, a, b)) {
    return round_quanta(f, o, to_quanta(f, a, o.ftz_in) - to_quanta(f, b, o.ftz_in), sign_of(f, a), !sign_of(f, b));
  }
  Unpacked ub = unpack(f, b, o.ftz_in);
  if (!is_nan(ub.cls) || o.nan_sub_flips) ub.neg = !ub.neg;
  return add_unpacked(f, o, unpack(f, a, o.ftz_in), ub);
}

[[gnu::always_inline]] inline Result mul_general(const Format& f, const Options& o, std::uint64_t a, std::uint64_t b) {
  if (2 * f.precision() <= 64 && both_finite(f, a, b)) {
    const Finite x = decode_finite(f, a, o.ftz_in), y = decode_finite(f, b, o.ftz_in);
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
  if (auto n = nan_operands(f, o, {&ua, &ub})) return *n;
  const bool inf = ua.cls == Class::infinite || ub.cls == Class::infinite;
  const bool zero_operand = ua.cls == Class::zero || ub.cls == Class::zero;
  if (inf && zero_operand) return invalid_result(f, o);
  if (inf) return infinity(f, o, neg);
  return zero(f, neg);
}

template <Op op>
[[gnu::always_inline]] inline Result general(const Format& f, const Options& o, std::uint64_t a, std::uint64_t b) {
  static_assert(op == Op::add || op == Op::sub || op == Op::mul);
  if constexpr (op == Op::add) return add_general(f, o, a, b);
  if constexpr (op == Op::sub) return sub_general(f, o, a, b);
  if constexpr (op == Op::mul) return mul_general(f, o, a, b);
}

// The general path of a host format, out of line: the fast path's callers keep their loops small
// (and, the options taken by value, keep them in registers). Flattened: the special cases' helpers
// (unpack, nan_operands) inlined into it ran all 2^32 binary16 sums batched in 8.9 s instead of 11.2.
template <const Format& F, Op op>
[[gnu::noinline, gnu::flatten]] Result general_out_of_line(Options o, std::uint64_t a, std::uint64_t b) {
  return general<op>(F, o, a, b);
}

// The host fast path: add, sub and mul of binary16 and binary32 in round to nearest even, by the
// host's arithmetic in a wider format H (binary32 for binary16, binary64 for binary32). Products
// are exact in H (22 and 48 bits), and so are sums of exponents at most H.precision() -
// F.precision() - 1 apart (12 and 28). Otherwise the host returns one of the exact sum's two
// neighbours in H, which lie, as the sum does, strictly between the larger operand and its
// nearest midpoints in F (H.precision() >= 2 * F.precision() + 2): all three round to that
// operand. Integer code then rounds H's result to F. No operand or result of the host's
// arithmetic is subnormal and the exact ones do not depend on the rounding mode, so the host's
// rounding mode and flush settings (x86's MXCSR RC, FTZ, DAZ) never matter. The host's status
// flags may be raised (inexact, invalid on NaN operands); nothing reads them.
inline constexpr bool host_arithmetic =
    std::numeric_limits<double>::is_iec559 && std::numeric_limits<float>::is_iec559 && FLT_EVAL_METHOD == 0;
// Whether F is binary16 or binary32 (the host fast path's templates take those two only), told
// at compile time by name: GCC's sanitizers make a comparison of two objects' addresses no
// constant expression.
template <const Format& F>
inline constexpr bool is_binary16 = F.name == binary16.name;
template <const Format& F>
inline constexpr bool is_binary32 = F.name == binary32.name;
template <const Format& F>
using HostFloat = std::conditional_t<is_binary16<F>, float, double>;
template <const Format& F>
inline constexpr const Format& host_format = is_binary16<F> ? binary32 : binary64;

// Each binary16 encoding's value as a binary32 (subnormals are normal there); infinities and
// NaNs as a quiet NaN, whose results take the general path.
extern const std::array<float, 65536> binary16_host_values;

// Whether the fast path takes operand x: every binary16; a binary32 neither zero nor subnormal
// (which DAZ would flush).
template <const Format& F>
constexpr bool host_takes(std::uint64_t x) {
  return is_binary16<F> || (x & (F.exp_field_max() << F.man_bits)) != 0;
}

// x in H, exactly; ftz_in reads a binary16 subnormal as the zero of its sign.
template <const Format& F>
[[gnu::always_inline]] inline HostFloat<F> host_value(const Options& o, std::uint64_t x) {
  static_assert(is_binary16<F> || is_binary32<F>);
  if constexpr (is_binary16<F>) {
    if (o.ftz_in && (x & (F.exp_field_max() << F.man_bits)) == 0) x &= F.sign_mask();
    return binary16_host_values[x];
  } else {
    return std::bit_cast<float>(std::uint32_t(x));
  }
}

// x >> s rounded to nearest even; 0 < s < the width of E, x below its top bit. T and S may be
// vectors of lanes of E (scalars broadcast).
template <class E, class T = E, class S = int>
[[gnu::always_inline]] constexpr T shift_right_rne(T x, S s) {
  return (x + ((E{1} << (s - 1)) - 1) + ((x >> s) & 1)) >> s;
}

// All ones where c holds, else zero: c a bool, or a vector compare's lanes (B then their vector).
template <class B, class C>
[[gnu::always_inline]] constexpr B where(C c) {
  if constexpr (std::is_arithmetic_v<B>) {
    return c ? ~B{0} : B{0};
  } else {
    return std::bit_cast<B>(c);
  }
}

// A magnitude m in H below 2^emin (and not below half the smallest subnormal) rounded to nearest
// even on F's subnormal grid, with its flags; tiny unless it rounds to 2^emin at F's precision.
// B: H's unsigned integer, or a vector of lanes of it.
template <const Format& F, class Bits, class B>
[[gnu::always_inline]] constexpr std::pair<B, B> round_host_subnormal_magnitude(B m) {
  constexpr const Format& H = host_format<F>;
  constexpr Bits hidden = Bits{1} << H.man_bits;
  constexpr Bits normal = Bits(H.bias + F.emin()) << H.man_bits;
  const B s = Bits(H.man_bits - F.man_bits + F.emin() + H.bias) - (m >> H.man_bits);
  const B sig = (m & (hidden - 1)) | hidden;
  const B inexact = where<B>((sig & ((Bits{1} << s) - 1)) != 0),
          tiny = where<B>(m < normal - (hidden >> F.precision()));
  return {shift_right_rne<Bits>(sig, s), inexact & (Flag::inexact | (tiny & Flag::underflow))};
}

// The same for one result, packed with its sign. Out of line: rare.
template <const Format& F>
[[gnu::noinline]] Result round_host_subnormal(bool neg, std::uint64_t m) {
  const auto [magnitude, flags] = round_host_subnormal_magnitude<F, std::uint64_t>(m);
  return {pack(F, neg, magnitude), Flags(flags)};
}

// Rounding a result in H to F: H's encoding as an unsigned integer (Bits), its thresholds, and
// the rounding of a magnitude in F's normal range, which is H's shifted and rebiased, the carry of
// the rounding moving into the exponent. `Bits` may also be a vector of lanes of that width (the
// batched loop's).
template <const Format& F>
struct HostRounding {
  static constexpr const Format& H = host_format<F>;
  using Bits = std::conditional_t<H.storage_bits == 32, std::uint32_t, std::uint64_t>;
  static constexpr int shift = H.man_bits - F.man_bits, low = H.storage_bits - 32;
  static constexpr Bits rebias = Bits(H.bias - F.bias) << H.man_bits;
  // Magnitudes in H: 2^emin; 2^(quantum_min - 1), at most which rounds to zero; the least that
  // rounds past the largest finite value.
  static constexpr Bits normal = Bits(H.bias + F.emin()) << H.man_bits;
  static constexpr Bits vanish = Bits(H.bias + F.quantum_min() - 1) << H.man_bits;
  static constexpr Bits overflow = (Bits(F.max_finite_magnitude()) << shift) + rebias + (Bits{1} << (shift - 1));
  static constexpr Bits magnitude_mask = Bits(H.magnitude_mask()), low_bits = (Bits{1} << shift) - 1;
  // The branches compare high words (32 bits): 2^(quantum_min - 1) itself takes the subnormal
  // branch, a few sums just below the overflow the general path.
  static constexpr std::uint32_t high_word(Bits v) { return std::uint32_t(v >> low); }
  template <class B>
  [[gnu::always_inline]] static constexpr B magnitude(B m) {
    return shift_right_rne<Bits>(m, shift) - (rebias >> shift);
  }
};

// A result in H (exact, or as good, see above) rounded to nearest even into F with round_pack's
// flags; null where the general path decides: a NaN or infinity (a special operand, an invalid
// operation), a zero sum (its sign is the mode's), a sum that overflows (rare), a subnormal result
// under ftz_out. `products`: x may overflow (to infinity, or the largest finite value under
// saturate) or lie below F's subnormal range (vanishing: zero, exact where x is).
template <const Format& F, bool products>
[[gnu::always_inline]] inline std::optional<Result> round_host(const Options& o, HostFloat<F> x) {
  using R = HostRounding<F>;
  using Bits = typename R::Bits;
  const Bits bits = std::bit_cast<Bits>(x), m = bits & R::magnitude_mask;
  const std::uint32_t high = R::high_word(m);
  const bool neg = bits >> R::H.sign_shift();
  if (high >= R::high_word(products ? Bits(R::H.inf_magnitude()) : R::overflow)) return std::nullopt;
  constexpr std::uint32_t subnormal_from = products ? R::high_word(R::vanish) : 0;
  if (high - subnormal_from < R::high_word(R::normal) - subnormal_from) [[unlikely]] {
    if (m == 0 || o.ftz_out) return std::nullopt;
    return round_host_subnormal<F>(neg, m);
  }
  Flags flags = (m & R::low_bits) != 0 ? Flag::inexact : 0;
  Result r{pack(F, neg, R::magnitude(m)), flags};
  if constexpr (products) {
    static_assert(F.inf_magnitude() == F.max_finite_magnitude() + 1);
    if (m >= R::overflow) r = {pack(F, neg, F.max_finite_magnitude() + !o.saturate), Flag::overflow | Flag::inexact};
    if (high < R::high_word(R::vanish)) r = {pack(F, neg, 0), m != 0 ? Flag::underflow | Flag::inexact : 0};
  }
  return r;
}

// Exponents too far apart for an exact sum in H of nonzero values (see above): the host may have
// rounded, and the sum is inexact (the smaller lies below the larger's last digit).
template <const Format& F>
inline constexpr int host_exact_exponent_difference = host_format<F>.precision() - F.precision() - 1;

template <const Format& F, Op op>
[[gnu::always_inline]] inline Result host_op(const Options& o, std::uint64_t a, std::uint64_t b) {
  static_assert(host_format<F>.precision() >= 2 * F.precision() + 2);
  if (host_takes<F>(a) && host_takes<F>(b)) {
    const HostFloat<F> x = host_value<F>(o, a);
    if constexpr (op == Op::mul) {
      if (auto r = round_host<F, true>(o, x * host_value<F>(o, b))) return *r;
    } else {
      const HostFloat<F> y = host_value<F>(o, op == Op::sub ? b ^ F.sign_mask() : b);
      if (auto r = round_host<F, false>(o, x + y)) {
        constexpr int exact = host_exact_exponent_difference<F>;
        const int d = int(magnitude_of(F, a) >> F.man_bits) - int(magnitude_of(F, b) >> F.man_bits);
        if ((d > exact && y != 0) || (d < -exact && x != 0)) r->flags |= Flag::inexact;
        return *r;
      }
    }
  }
  return general_out_of_line<F, op>(o, a, b);
}

// Whether add, sub and mul of format f under options o take the host fast path.
constexpr bool host_path(const Format& f, const Options& o) {
  return host_arithmetic && o.rounding == Rounding::rne && (&f == &binary16 || &f == &binary32);
}

// add, sub or mul: the host fast path where it applies, else the general one.
template <Op op>
[[gnu::always_inline]] inline Result binary_op(const Format& f, const Options& o, std::uint64_t a, std::uint64_t b) {
  if (host_path(f, o)) return &f == &binary16 ? host_op<binary16, op>(o, a, b) : host_op<binary32, op>(o, a, b);
  return general<op>(f, o, a, b);
}

}  // namespace detail

[[gnu::always_inline]] inline Result add(const Format& f, const Options& o, std::uint64_t a, std::uint64_t b) {
  return detail::binary_op<Op::add>(f, o, a, b);
}
// a - b: b's sign is flipped unless b is a NaN (NaN operands propagate unchanged), or is flipped
// anyway with Options::nan_sub_flips.
[[gnu::always_inline]] inline Result sub(const Format& f, const Options& o, std::uint64_t a, std::uint64_t b) {
  return detail::binary_op<Op::sub>(f, o, a, b);
}
[[gnu::always_inline]] inline Result mul(const Format& f, const Options& o, std::uint64_t a, std::uint64_t b) {
  return detail::binary_op<Op::mul>(f, o, a, b);
}

Result div(const Format& f, const Options& o, std::uint64_t a, std::uint64_t b);
Result sqrt(const Format& f, const Options& o, std::uint64_t a);
// a * b + c with one rounding; NaN operands taken in Options::nan_fma_order where it has one.
Result fma(const Format& f, const Options& o, std::uint64_t a, std::uint64_t b, std::uint64_t c);
// Conversion of `bits` of format `from` to format `to`; ftz_in applies to the source.
Result cvt(const Format& to, const Format& from, const Options& o, std::uint64_t bits);

inline constexpr Op all_ops[] = {Op::add, Op::sub, Op::mul, Op::div, Op::sqrt, Op::fma, Op::cvt};
std::string_view name(Op op);
std::optional<Op> find_op(std::string_view name);
int arity(Op op);
// Evaluates op in format f; `from` is the source format of cvt (ignored otherwise).
// operands.size() must equal arity(op).
Result evaluate(Op op, const Format& f, const Options& o, std::span<const std::uint64_t> operands, const Format& from);
// The same over a batch: `operands` holds arity(op) operands per result, one result after another,
// and out.size() * arity(op) of them. The operation, format and options are dispatched once for the
// batch (the host fast path's loop runs with its format fixed at compile time); results are those
// of evaluate() on each.
void evaluate(Op op, const Format& f, const Options& o, std::span<const std::uint64_t> operands, std::span<Result> out,
              const Format& from);

}  // namespace gp::model
