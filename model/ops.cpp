#include "model/ops.hpp"

#include <array>
#include <cstddef>
#include <utility>

namespace gp::model {

namespace detail {
// Built at compile time (constant initialization: no static initializer can see it unset), a
// binade at a time (clang's constant evaluation allows a million steps): each finite value is its
// significand (the fraction with the hidden bit of normal binades) times its binade's quantum,
// exactly in binary32; the negative encodings hold the negated values.
constinit const std::array<float, 65536> binary16_host_values = [] {
  constexpr const Format& f = binary16;
  constexpr std::uint64_t hidden = std::uint64_t{1} << f.man_bits, sign = f.sign_mask(), top = f.exp_field_max();
  std::array<float, 65536> t{};
  float quantum = 1;  // 2^quantum_min: the subnormals' and the first normal binade's
  for (int e = f.quantum_min(); e < 0; ++e) quantum *= 0.5f;
  for (std::uint64_t field = 0; field <= top; ++field) {
    if (field > 1) quantum *= 2;
    for (std::uint64_t fraction = 0; fraction < hidden; ++fraction) {
      const std::uint64_t h = field << f.man_bits | fraction;
      const float v = field == top ? std::numeric_limits<float>::quiet_NaN()
                                   : float(fraction | (field != 0 ? hidden : 0)) * quantum;
      t[h] = v;
      t[h | sign] = -v;
    }
  }
  return t;
}();
}  // namespace detail

namespace {

// Integer square root of x and whether x was not a perfect square (digit by digit, base 4).
std::pair<std::uint64_t, bool> isqrt(u128 x) {
  u128 root = 0, rem = x;
  u128 bit = u128{1} << 126;
  while (bit > x) bit >>= 2;
  while (bit != 0) {
    if (rem >= root + bit) {
      rem -= root + bit;
      root = (root >> 1) + bit;
    } else {
      root >>= 1;
    }
    bit >>= 2;
  }
  return {std::uint64_t(root), rem != 0};
}

// Leading bit to position `to` of a 128-bit word; returns the shifted value and adjusts exp.
u128 normalize(u128 x, int to, int& exp) {
  const int s = to - msb(x);
  exp -= s;
  return x << s;
}

}  // namespace

Result div(const Format& f, const Options& o, std::uint64_t a, std::uint64_t b) {
  const Unpacked ua = unpack(f, a, o.ftz_in), ub = unpack(f, b, o.ftz_in);
  if (auto n = detail::nan_operands(f, o, {&ua, &ub})) return *n;
  const bool neg = ua.neg != ub.neg;
  const bool a_inf = ua.cls == Class::infinite, b_inf = ub.cls == Class::infinite;
  const bool a_zero = ua.cls == Class::zero, b_zero = ub.cls == Class::zero;
  if ((a_inf && b_inf) || (a_zero && b_zero)) return invalid_result(f, o);
  if (a_inf) return infinity(f, o, neg);
  if (b_zero) {
    Result r = infinity(f, o, neg);
    r.flags |= Flag::divbyzero;
    return r;
  }
  if (a_zero || b_inf) return zero(f, neg);
  // Quotient with its leading bit at 61 or 62, so that it carries precision + 2 bits and more.
  const int k = 62 + msb(ub.sig) - msb(ua.sig);
  const u128 num = u128(ua.sig) << k;
  const std::uint64_t q = std::uint64_t(num / ub.sig);
  const bool rem = num % ub.sig != 0;
  return round_pack(f, o, neg, ua.exp - ub.exp - k, q, rem);
}

Result sqrt(const Format& f, const Options& o, std::uint64_t a) {
  const Unpacked ua = unpack(f, a, o.ftz_in);
  if (auto n = detail::nan_operands(f, o, {&ua})) return *n;
  if (ua.cls == Class::zero) return zero(f, ua.neg);
  if (ua.neg) return invalid_result(f, o);
  if (ua.cls == Class::infinite) return infinity(f, o, false);
  // Radicand with its leading bit at 124 or 125 and an even exponent: a root of 62 or 63 bits.
  int k = 124 - msb(ua.sig);
  if ((ua.exp - k) & 1) ++k;
  const auto [root, inexact] = isqrt(u128(ua.sig) << k);
  return round_pack(f, o, false, (ua.exp - k) / 2, root, inexact);
}

Result fma(const Format& f, const Options& o, std::uint64_t a, std::uint64_t b, std::uint64_t c) {
  const Unpacked ua = unpack(f, a, o.ftz_in), ub = unpack(f, b, o.ftz_in), uc = unpack(f, c, o.ftz_in);
  const bool pneg = ua.neg != ub.neg;
  const bool a_inf = ua.cls == Class::infinite, b_inf = ub.cls == Class::infinite;
  const bool a_zero = ua.cls == Class::zero, b_zero = ub.cls == Class::zero;
  const bool zero_times_inf = (a_inf && b_zero) || (a_zero && b_inf);
  if (is_nan(ua.cls) || is_nan(ub.cls) || is_nan(uc.cls)) {
    Result n = detail::fma_nan_operands(f, o, ua, ub, uc);
    // 0 * inf + qNaN is invalid too (IEEE 754 leaves it to the implementation; x86 signals it).
    if (zero_times_inf) n.flags |= Flag::invalid;
    return n;
  }
  if (zero_times_inf) return invalid_result(f, o);
  if (a_inf || b_inf) {
    if (uc.cls == Class::infinite && uc.neg != pneg) return invalid_result(f, o);
    return infinity(f, o, pneg);
  }
  if (uc.cls == Class::infinite) return infinity(f, o, uc.neg);
  if (a_zero || b_zero) {
    if (uc.cls == Class::zero) return zero(f, detail::zero_sum_sign(o, pneg, uc.neg));
    return round_pack(f, o, uc.neg, uc.exp, uc.sig);
  }
  int ep = ua.exp + ub.exp;
  u128 p = u128(ua.sig) * ub.sig;
  if (uc.cls == Class::zero) {
    const std::uint64_t s = narrow_jam(p, ep);
    return round_pack(f, o, pneg, ep, s);
  }
  // Exact product and addend with leading bits at 125; the smaller one's bits past 128 are
  // jammed (both have at least 19 zero low bits, so the jam stays below the rounding position).
  int ec = uc.exp;
  u128 m = normalize(uc.sig, 125, ec);
  p = normalize(p, 125, ep);
  bool np = pneg, nc = uc.neg;
  if (ep < ec) {
    std::swap(p, m);
    std::swap(ep, ec);
    std::swap(np, nc);
  }
  m = shift_right_jam(m, ep - ec);
  u128 sum;
  bool neg = np;
  if (np == nc) {
    sum = p + m;
  } else if (p == m) {
    return zero(f, detail::zero_sum_sign(o, np, nc));
  } else if (p > m) {
    sum = p - m;
  } else {
    sum = m - p;
    neg = nc;
  }
  const std::uint64_t s = narrow_jam(sum, ep);
  return round_pack(f, o, neg, ep, s);
}

Result cvt(const Format& to, const Format& from, const Options& o, std::uint64_t bits) {
  const Unpacked u = unpack(from, bits, o.ftz_in);
  switch (u.cls) {
    case Class::quiet_nan:
    case Class::signaling_nan: return propagate_nan(to, from, u, o);
    case Class::infinite: {
      Result r = infinity(to, o, u.neg);
      if (!to.has_inf()) r.flags |= Flag::invalid;
      return r;
    }
    case Class::zero: return zero(to, u.neg);
    default: return round_pack(to, o, u.neg, u.exp, u.sig);
  }
}

namespace {
constexpr std::array<std::string_view, 7> op_names = {"add", "sub", "mul", "div", "sqrt", "fma", "cvt"};
constexpr std::array<int, 7> op_arity = {2, 2, 2, 2, 1, 3, 1};
}  // namespace

std::string_view name(Op op) { return op_names[std::size_t(op)]; }
int arity(Op op) { return op_arity[std::size_t(op)]; }

std::optional<Op> find_op(std::string_view n) {
  for (std::size_t i = 0; i < op_names.size(); ++i)
    if (op_names[i] == n) return Op(i);
  return std::nullopt;
}

namespace {
// The host fast path of add, sub and mul out of line: inlined into evaluate's switch, it made the
// function too large for GCC to inline the general paths' helpers (up to a fifth slower).
template <Op op>
[[gnu::noinline]] Result host(const Format& f, const Options& o, std::uint64_t a, std::uint64_t b) {
  return detail::binary_op<op>(f, o, a, b);
}
template <Op op>
Result binary(const Format& f, const Options& o, std::uint64_t a, std::uint64_t b) {
  return detail::host_path(f, o) ? host<op>(f, o, a, b) : detail::general<op>(f, o, a, b);
}
}  // namespace

Result evaluate(Op op, const Format& f, const Options& o, std::span<const std::uint64_t> x, const Format& from) {
  switch (op) {
    case Op::add: return binary<Op::add>(f, o, x[0], x[1]);
    case Op::sub: return binary<Op::sub>(f, o, x[0], x[1]);
    case Op::mul: return binary<Op::mul>(f, o, x[0], x[1]);
    case Op::div: return div(f, o, x[0], x[1]);
    case Op::sqrt: return sqrt(f, o, x[0]);
    case Op::fma: return fma(f, o, x[0], x[1], x[2]);
    case Op::cvt: return cvt(f, from, o, x[0]);
  }
  return invalid_result(f);
}

namespace {
// Result i from operands [arity * i, arity * (i + 1)), fn inlined into the loop.
template <std::size_t arity, class Fn>
[[gnu::always_inline]] inline void each(std::span<const std::uint64_t> x, std::span<Result> out, Fn fn) {
  const std::uint64_t* p = x.data();
  for (Result& r : out) {
    r = fn(p);
    p += arity;
  }
}

// The host fast path on N pairs at a time, in vectors (GCC's vector extensions, used where the
// target has AVX-512: kVectorLoop below): every lane computes host_op's common case, its result
// normal in F (for products also overflowing or vanishing; binary16's also subnormal unless
// flushed, and of infinity and NaN operands); the other lanes are recomputed by host_op itself.
// Same arithmetic, same exactness argument (see host_op); branches only around the rare cases.
constexpr std::size_t kLanes = 8;  // 512 bits of binary64 (8 lanes were faster than 4)
template <class T, std::size_t N>
struct Vector {
  typedef T type __attribute__((vector_size(N * sizeof(T))));
  // Read and written in place (operands, Results).
  typedef T unaligned __attribute__((vector_size(N * sizeof(T)), aligned(alignof(T)), may_alias));
};
template <class T, std::size_t N>
using Lanes = typename Vector<T, N>::type;

// Lanes of the indices f(i), i < N, of the concatenation of v and w.
template <std::size_t N, class V, class Index>
[[gnu::always_inline]] inline auto pick(V v, V w, Index f) {
  return [&]<std::size_t... i>(std::index_sequence<i...>) { return __builtin_shufflevector(v, w, f(i)...); }
  (std::make_index_sequence<N>());
}

// A vector compare's N lanes, a byte each (all ones where it holds), in one word.
template <std::size_t N, class Mask>
[[gnu::always_inline]] inline std::uint64_t lane_bytes(Mask m) {
  static_assert(N <= 8);
  return std::bit_cast<std::uint64_t>(__builtin_convertvector(m, Lanes<std::int8_t, N>));
}
template <std::size_t N, class Mask>
[[gnu::always_inline]] inline bool any(Mask m) {
  return lane_bytes<N>(m) != 0;
}

template <const Format& F, Op op, std::size_t N>
[[gnu::always_inline]] inline std::uint64_t host_lanes(const Options& o, const std::uint64_t* x, Result* out) {
  using R = detail::HostRounding<F>;
  using Bits = typename R::Bits;
  using B = Lanes<Bits, N>;
  using Host = Lanes<detail::HostFloat<F>, N>;
  constexpr bool products = op == Op::mul;
  // The operands' low words (their encodings: F is at most 32 bits wide), a's and b's apart.
  using Words = Lanes<std::uint32_t, 2 * N>;
  const auto* in = reinterpret_cast<const typename Vector<std::uint64_t, N>::unaligned*>(x);
  const Lanes<std::uint64_t, N> v0 = in[0], v1 = in[1];
  const Words w0 = std::bit_cast<Words>(v0), w1 = std::bit_cast<Words>(v1);
  constexpr std::size_t k = std::endian::native == std::endian::big;
  const Lanes<std::uint32_t, N> aw = pick<N>(
      w0, w1, [](std::size_t i) constexpr { return 4 * i + k; });
  Lanes<std::uint32_t, N> bw = pick<N>(
      w0, w1, [](std::size_t i) constexpr { return 4 * i + 2 + k; });
  if constexpr (op == Op::sub) bw ^= std::uint32_t(F.sign_mask());
  // As B: 64-bit lanes picked whole (a shuffle rather than widening conversions).
  B a, b;
  if constexpr (sizeof(Bits) == 8) {
    a = pick<N>(
        v0, v1, [](std::size_t i) constexpr { return 2 * i; });
    b = pick<N>(
        v0, v1, [](std::size_t i) constexpr { return 2 * i + 1; });
    if constexpr (op == Op::sub) b ^= F.sign_mask();
  } else {
    a = aw;
    b = bw;
  }
  constexpr Bits exponent = Bits(F.exp_field_max() << F.man_bits);
  Host xa, xb;
  if constexpr (&F == &binary16) {
    if (o.ftz_in) {
      a = (a & exponent) == 0 ? a & Bits(F.sign_mask()) : a;
      b = (b & exponent) == 0 ? b & Bits(F.sign_mask()) : b;
    }
    // Each value in binary32 (as binary16_host_values holds it): its significand times its
    // binade's quantum, a product of normal binary32 values that is exact and normal (2^-24 at
    // least), so that neither the rounding mode nor flushing applies. Infinities and NaNs come
    // out finite: host_op takes them from sums, products replace them (below).
    constexpr Bits hidden = Bits{1} << F.man_bits, sign = Bits(F.sign_mask());
    const auto value = [](B h) {
      const B field = (h & exponent) >> F.man_bits;
      const B sig = (h & Bits(F.man_mask())) | (std::bit_cast<B>(field != 0) & hidden);
      const B quantum = ((field == 0 ? Bits(1) : field) + Bits(binary32.bias - F.bias - F.man_bits))
                        << binary32.man_bits;
      const B v = std::bit_cast<B>(__builtin_convertvector(sig, Host) * std::bit_cast<Host>(quantum));
      return std::bit_cast<Host>(v | (h & sign) << (binary32.storage_bits - F.storage_bits));
    };
    xa = value(a);
    xb = value(b);
  } else {
    xa = __builtin_convertvector(std::bit_cast<Lanes<float, N>>(aw), Host);
    xb = __builtin_convertvector(std::bit_cast<Lanes<float, N>>(bw), Host);
  }
  const B bits = std::bit_cast<B>(products ? xa * xb : xa + xb), m = bits & R::magnitude_mask;
  const B high = m >> R::low;
  constexpr Bits subnormal_from = products ? R::high_word(R::vanish) : 0;
  const auto subnormal = high - subnormal_from < Bits(R::high_word(R::normal) - subnormal_from);
  auto general = high >= Bits(R::high_word(products ? Bits(R::H.inf_magnitude()) : R::overflow));
  // binary16's subnormal products rounded here unless flushed; subnormal (and zero) sums and
  // binary32's subnormal products go to host_op (in the lanes, binary32's sweep ran a tenth slower).
  constexpr bool subnormal_products = products && &F == &binary16;
  if (!subnormal_products || o.ftz_out) general |= subnormal;
  if constexpr (&F == &binary32) general |= ((a & exponent) == 0) | ((b & exponent) == 0);  // host_takes
  if constexpr (&F == &binary16 && !products) general |= ((a & exponent) == exponent) | ((b & exponent) == exponent);
  B magnitude = R::magnitude(m);
  B flags = std::bit_cast<B>((m & R::low_bits) != 0) & Flag::inexact;
  if constexpr (products) {
    const auto over = m >= R::overflow, vanish = high < Bits(R::high_word(R::vanish));
    magnitude = over ? Bits(F.max_finite_magnitude() + !o.saturate) : magnitude;
    flags = over ? Bits(Flag::overflow | Flag::inexact) : flags;
    magnitude = vanish ? Bits(0) : magnitude;
    // Products of binary32 operands the fast path takes are never zero.
    flags = vanish ? (&F == &binary32 || m != 0 ? Bits(Flag::underflow | Flag::inexact) : Bits(0)) : flags;
    // The other lanes' m in its place: no shift by more than the lanes' width.
    // Branches taken by whole blocks in an exhaustive sweep's order.
    if (subnormal_products && any<N>(subnormal)) {
      // The other lanes' m in its place: no shift by more than the lanes' width.
      const auto [tiny, tiny_flags] = detail::round_host_subnormal_magnitude<F, Bits>(subnormal ? m : R::normal);
      magnitude = subnormal ? tiny : magnitude;
      flags = subnormal ? tiny_flags : flags;
    }
  } else {
    constexpr Bits exact = detail::host_exact_exponent_difference<F>;
    const B ea = (a & exponent) >> F.man_bits, eb = (b & exponent) >> F.man_bits;
    // host_takes has left binary32's zeros to the general path.
    const auto far = &F == &binary16 ? ((ea > eb + exact) & (xb != 0)) | ((eb > ea + exact) & (xa != 0))
                                     : (ea > eb + exact) | (eb > ea + exact);
    flags |= std::bit_cast<B>(far) & Flag::inexact;
  }
  static_assert(F.pad_bits == 0);
  B result = magnitude | ((bits >> (R::H.storage_bits - F.storage_bits)) & Bits(F.sign_mask()));
  if constexpr (&F == &binary16 && products) {
    // Infinity and NaN operands as mul_general gives them (nan_operands, propagate_nan,
    // invalid_result, infinity); their lanes computed a finite product above.
    constexpr Bits inf = Bits(F.inf_magnitude()), quiet = Bits(F.quiet_bit()), sign = Bits(F.sign_mask());
    const auto special = ((a & exponent) == exponent) | ((b & exponent) == exponent);
    if (any<N>(special)) {
      const B ma = a & Bits(F.magnitude_mask()), mb = b & Bits(F.magnitude_mask());
      const auto a_nan = ma > inf, b_nan = mb > inf, nan = a_nan | b_nan;
      const auto take_b = o.nan_propagation == NanPropagation::first  ? b_nan & ~a_nan
                          : o.nan_propagation == NanPropagation::last ? b_nan
                                                                      : b_nan & (~a_nan | (mb > ma));
      const B propagated = take_b ? b : a, defaulted = B{} + Bits(default_nan(F, o.nan_default));
      const B nan_bits = o.canonical_nan ? defaulted : o.nan_keep_signaling ? propagated : propagated | quiet;
      const auto signaling = (a_nan & ((a & quiet) == 0)) | (b_nan & ((b & quiet) == 0));
      const auto invalid = ~nan & ((ma == 0) | (mb == 0));  // inf * 0
      const B special_bits = nan ? nan_bits : invalid ? defaulted : ((a ^ b) & sign) | inf;
      result = special ? special_bits : result;
      flags = special ? std::bit_cast<B>(signaling | invalid) & Flag::invalid : flags;
      general &= ~special;
    }
  }
  // Stored as Results (bits, then flags and padding), interleaved in vectors.
  static_assert(sizeof(Result) == 16 && offsetof(Result, flags) == 8 && sizeof(Flags) <= 8);
  using U = Lanes<std::uint64_t, N>;
  const U r = __builtin_convertvector(result, U), f = __builtin_convertvector(flags, U);
  auto* stored = reinterpret_cast<typename Vector<std::uint64_t, N>::unaligned*>(out);
  stored[0] = pick<N>(
      r, f, [](std::size_t i) constexpr { return i / 2 + i % 2 * N; });
  stored[1] = pick<N>(
      r, f, [](std::size_t i) constexpr { return N / 2 + i / 2 + i % 2 * N; });
  // The lanes left to host_op, a byte each.
  return lane_bytes<N>(general);
}

// The vector loop where the target's vectors hold 8 binary64 lanes with unsigned 64-bit compares
// (AVX-512); lowered to SSE2 it ran 3 to 5 times slower than host_op a pair at a time.
#if defined(__AVX512F__)
constexpr bool kVectorLoop = true;
#else
constexpr bool kVectorLoop = false;
#endif

// Blocks of kLanes pairs through host_lanes, then the lanes it left through host_op: apart, so
// that no call in the vector loop makes the compiler reload its constants on every block.
template <const Format& F, Op op>
void host_batch(const Options& o, std::span<const std::uint64_t> x, std::span<Result> out) {
  std::size_t i = 0;
  if constexpr (kVectorLoop) {
    constexpr std::size_t blocks = 64;
    for (std::uint64_t left[blocks]; i + kLanes <= out.size();) {
      const std::size_t n = std::min(blocks, (out.size() - i) / kLanes);
      for (std::size_t j = 0; j < n; ++j)
        left[j] = host_lanes<F, op, kLanes>(o, &x[2 * (i + j * kLanes)], &out[i + j * kLanes]);
      for (std::size_t j = 0; j < n; ++j, i += kLanes)
        for (std::size_t l = 0; left[j] != 0 && l < kLanes; ++l)
          if ((left[j] >> (8 * l)) & 0xff) out[i + l] = detail::host_op<F, op>(o, x[2 * (i + l)], x[2 * (i + l) + 1]);
    }
  }
  for (; i < out.size(); ++i) out[i] = detail::host_op<F, op>(o, x[2 * i], x[2 * i + 1]);
}

template <Op op>
void binary_batch(const Format& f, const Options& o, std::span<const std::uint64_t> x, std::span<Result> out) {
  if (detail::host_path(f, o))
    return &f == &binary16 ? host_batch<binary16, op>(o, x, out) : host_batch<binary32, op>(o, x, out);
  each<2>(x, out, [&f, o](const std::uint64_t* p) { return detail::general<op>(f, o, p[0], p[1]); });
}
}  // namespace

void evaluate(Op op, const Format& f, const Options& o, std::span<const std::uint64_t> x, std::span<Result> out,
              const Format& from) {
  switch (op) {
    case Op::add: return binary_batch<Op::add>(f, o, x, out);
    case Op::sub: return binary_batch<Op::sub>(f, o, x, out);
    case Op::mul: return binary_batch<Op::mul>(f, o, x, out);
    case Op::div: return each<2>(x, out, [&](const std::uint64_t* p) { return div(f, o, p[0], p[1]); });
    case Op::sqrt: return each<1>(x, out, [&](const std::uint64_t* p) { return sqrt(f, o, p[0]); });
    case Op::fma: return each<3>(x, out, [&](const std::uint64_t* p) { return fma(f, o, p[0], p[1], p[2]); });
    case Op::cvt: return each<1>(x, out, [&](const std::uint64_t* p) { return cvt(f, from, o, p[0]); });
  }
}

}  // namespace gp::model
