#include "model/ulp_error.hpp"

#include "model/value.hpp"

namespace gp::model {

namespace {

constexpr int kLead = 120;  // leading bit of wide significands

Exact from(bool neg, u128 sig, int exp, bool sticky = false) {
  if (sig == 0 && !sticky) return Exact{neg, 0, 0, false};
  return Exact{neg, sig, exp, sticky};
}

// ±as*2^ae + ±bs*2^be: the operand with the larger leading bit is put at bit 120, the other one
// aligned to it, its bits beyond 128 jammed into a sticky bit (only when it lies more than 60
// bits below, so that the sum keeps its leading bit near 120 and the jam stays out of the way).
Exact exact_sum(bool an, int ae, u128 as, bool bn, int be, u128 bs) {
  if (as == 0 && bs == 0) return from(an && bn, 0, 0);
  if (as == 0) return from(bn, bs, be);
  if (bs == 0) return from(an, as, ae);
  if (be + msb(bs) > ae + msb(as)) {
    std::swap(an, bn);
    std::swap(ae, be);
    std::swap(as, bs);
  }
  const int sh = kLead - msb(as);
  const u128 A = as << sh;
  const int e = ae - sh;
  const int d = be - e;
  u128 B;
  bool st = false;
  if (d >= 0) {
    B = bs << d;
  } else if (-d >= 128) {
    B = 0;
    st = true;
  } else {
    B = bs >> -d;
    st = (bs << (128 + d)) != 0;
  }
  if (an == bn) return from(an, A + B, e, st);
  if (A > B) return from(an, A - B - (st ? 1 : 0), e, st);
  return from(bn, B - A, e);  // |B| >= |A|: no jam (the leading bits are equal)
}

// a / b on significands (nonzero), 121 quotient bits and a sticky bit.
Exact exact_quotient(bool neg, u128 a, int ea, u128 b, int eb) {
  int e = ea - eb;
  const int s = msb(b) - msb(a);
  if (s > 0) {
    a <<= s;
    e -= s;
  } else {
    b <<= -s;
    e -= s;
  }
  if (a < b) {
    a <<= 1;
    e -= 1;
  }
  u128 q = 0, r = a;
  for (int i = 0; i <= kLead; ++i) {
    const bool bit = r >= b;
    if (bit) r -= b;
    q = (q << 1) | u128(bit);
    r <<= 1;
  }
  return from(neg, q, e - kLead, r != 0);
}

// sqrt(a * 2^ea), a nonzero: the root of a * 2^(ea + 188) digit by digit (121 bits), sticky if inexact.
Exact exact_root(u128 a, int ea) {
  if (ea & 1) {
    a <<= 1;
    ea -= 1;
  }
  constexpr int m = 94;  // radicand a * 2^(2m): a root of about 121 bits
  u128 root = 0, rem = 0;
  const int top = msb(a) + 2 * m;  // highest radicand bit
  const int pairs = top / 2 + 1;
  for (int i = pairs - 1; i >= 0; --i) {
    const auto bit = [&](int pos) -> unsigned {
      const int k = pos - 2 * m;
      return k >= 0 && k < 128 ? unsigned((a >> k) & 1) : 0u;
    };
    rem = (rem << 2) | u128(bit(2 * i + 1) << 1 | bit(2 * i));
    const u128 trial = (root << 2) | 1;
    if (rem >= trial) {
      rem -= trial;
      root = (root << 1) | 1;
    } else {
      root <<= 1;
    }
  }
  return from(false, root, ea / 2 - m, rem != 0);
}

// sig * 2^k as an integer, toward zero, clamped at 2^124.
u128 scaled(u128 sig, int k) {
  if (sig == 0) return 0;
  constexpr u128 cap = u128{1} << 124;
  if (k >= 0) return msb(sig) + k >= 124 ? cap : sig << k;
  return -k >= 128 ? 0 : sig >> -k;
}

}  // namespace

std::optional<Exact> exact_result(const Format& f, Op op, std::span<const std::uint64_t> x) {
  if (op == Op::fma || op == Op::cvt) return std::nullopt;
  const Unpacked a = unpack(f, x[0]);
  const bool unary = op == Op::sqrt;
  const Unpacked b = unary ? a : unpack(f, x[1]);
  const auto finite = [](const Unpacked& u) { return u.cls == Class::zero || is_finite_nonzero(u.cls); };
  if (!finite(a) || !finite(b)) return std::nullopt;
  const bool az = a.cls == Class::zero, bz = b.cls == Class::zero;
  switch (op) {
    case Op::add: return exact_sum(a.neg, a.exp, az ? 0 : a.sig, b.neg, b.exp, bz ? 0 : b.sig);
    case Op::sub: return exact_sum(a.neg, a.exp, az ? 0 : a.sig, !b.neg, b.exp, bz ? 0 : b.sig);
    case Op::mul:
      if (az || bz) return from(a.neg != b.neg, 0, 0);
      return from(a.neg != b.neg, u128(a.sig) * b.sig, a.exp + b.exp);
    case Op::div:
      if (bz) return std::nullopt;
      if (az) return from(a.neg != b.neg, 0, 0);
      return exact_quotient(a.neg != b.neg, a.sig, a.exp, b.sig, b.exp);
    case Op::sqrt:
      if (az) return from(a.neg, 0, 0);
      if (a.neg) return std::nullopt;
      return exact_root(a.sig, a.exp);
    default: return std::nullopt;
  }
}

std::optional<i128> error_q64(const Format& f, const Exact& x, std::uint64_t d) {
  const Unpacked u = unpack(f, d);
  if (u.cls != Class::zero && !is_finite_nonzero(u.cls)) return std::nullopt;
  const int eu = x.zero() ? f.quantum_min() : std::max(x.exp + msb(x.sig), f.emin()) - f.man_bits;
  const int base = eu - 64;  // the unit of the fixed-point values
  const i128 xv = x.zero() ? 0 : i128(scaled(x.sig, x.exp - base));
  const i128 dv = u.cls == Class::zero ? 0 : i128(scaled(u.sig, u.exp - base));
  return (u.neg ? -dv : dv) - (x.neg ? -xv : xv);
}

}  // namespace gp::model
