#include "model/ops.hpp"

#include "model/isa_versions.hpp"

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

// The batched loop of the host fast path: the AVX-512 vector loop where the target has it, else
// host_op a pair at a time; in a portable build also the vector loop for x86-64-v4, the processor
// choosing at run time (the preprocessor does not see the pragma's target: kVectorLoop says it).
#if GPUPARANOIA_ISA_VERSIONS
namespace v4 {
constexpr bool kVectorLoop = true;
#pragma GCC push_options
#pragma GCC target("arch=x86-64-v4")
#include "model/host_batch.inc"
#pragma GCC pop_options
}  // namespace v4
#endif
namespace base {
#if defined(__AVX512F__)
constexpr bool kVectorLoop = true;
#else
constexpr bool kVectorLoop = false;
#endif
#include "model/host_batch.inc"
}  // namespace base

template <const Format& F, Op op>
void host_batch(const Options& o, std::span<const std::uint64_t> x, std::span<Result> out) {
#if GPUPARANOIA_ISA_VERSIONS
  if (has_x86_64_v4()) return v4::host_batch<F, op>(o, x, out);
#endif
  base::host_batch<F, op>(o, x, out);
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
