#include "model/exact_sum.hpp"

#include <algorithm>
#include <bit>
#include <cstring>

#include "model/value.hpp"

namespace gp::model {

ExactSum::ExactSum(const Format& a, const Format& b, std::initializer_list<const Format*> values, long terms) {
  // A product's bits lie in [qa + qb, emax_a + emax_b + 2), a value's in [q, emax + 1); the sum of
  // n such terms needs log2(n) bits more, and the sign one.
  int lo = a.quantum_min() + b.quantum_min(), hi = a.emax() + b.emax() + 2;
  for (const Format* f : values) {
    lo = std::min(lo, f->quantum_min());
    hi = std::max(hi, f->emax() + 1);
  }
  const long n = terms * long(values.size() + 1) + 1;
  hi += int(std::bit_width(std::uint64_t(n))) + 1;
  lo_ = lo;
  limb_.assign(std::size_t((hi - lo) / 64 + 2), 0);
}

void ExactSum::clear() { std::fill(limb_.begin(), limb_.end(), 0); }

void ExactSum::add_at(u128 mag, int exp, bool negate) {
  if (mag == 0) return;
  const int pos = exp - lo_;
  std::size_t i = std::size_t(pos / 64);
  const int sh = pos % 64;
  // mag * 2^sh spans at most three limbs.
  std::uint64_t w[3] = {std::uint64_t(mag << sh), std::uint64_t(mag >> (64 - sh)), 0};
  if (sh == 0) w[1] = std::uint64_t(mag >> 64);
  if (sh > 0) w[2] = std::uint64_t((mag >> 64) >> (64 - sh));
  const std::size_t n = limb_.size();
  if (!negate) {
    std::uint64_t carry = 0;
    for (int j = 0; j < 3 && i < n; ++j, ++i) {
      const u128 s = u128(limb_[i]) + w[j] + carry;
      limb_[i] = std::uint64_t(s);
      carry = std::uint64_t(s >> 64);
    }
    for (; carry && i < n; ++i) carry = ++limb_[i] == 0;
  } else {
    std::uint64_t borrow = 0;
    for (int j = 0; j < 3 && i < n; ++j, ++i) {
      const std::uint64_t x = limb_[i];
      const std::uint64_t d = x - w[j] - borrow;
      borrow = (x < w[j] || (x == w[j] && borrow)) ? 1 : 0;
      limb_[i] = d;
    }
    for (; borrow && i < n; ++i) borrow = limb_[i]-- == 0;
  }
}

void ExactSum::add_product(const Format& af, std::uint64_t a, const Format& bf, std::uint64_t b, bool negate) {
  const Unpacked x = unpack(af, a), y = unpack(bf, b);
  add_at(u128(x.sig) * y.sig, x.exp + y.exp, negate != (x.neg != y.neg));
}

void ExactSum::add(const Format& f, std::uint64_t bits, bool negate, bool magnitude) {
  const Unpacked x = unpack(f, bits);
  add_at(x.sig, x.exp, negate != (x.neg && !magnitude));
}

Exact ExactSum::value() const {
  std::vector<std::uint64_t> m = limb_;
  const bool neg = (m.back() >> 63) != 0;
  if (neg) {  // two's complement negation
    std::uint64_t carry = 1;
    for (std::uint64_t& w : m) {
      w = ~w + carry;
      carry = carry && w == 0;
    }
  }
  std::size_t top = m.size();
  while (top > 0 && m[top - 1] == 0) --top;
  if (top == 0) return Exact{};
  // The 128 bits from the leading one down, the bits below them in sticky.
  const int lead_bit = int(top - 1) * 64 + (63 - std::countl_zero(m[top - 1]));
  const int low = std::max(0, lead_bit - 127);
  u128 sig = 0;
  for (int bit = lead_bit; bit >= low; --bit) sig = (sig << 1) | ((m[std::size_t(bit / 64)] >> (bit % 64)) & 1u);
  bool sticky = false;
  for (int l = 0; l < low / 64 && !sticky; ++l) sticky = m[std::size_t(l)] != 0;
  if (!sticky && low % 64) sticky = (m[std::size_t(low / 64)] & ((std::uint64_t{1} << (low % 64)) - 1)) != 0;
  return Exact{neg, sig, lo_ + low, sticky};
}

std::uint64_t ExactSum::rounded(const Format& f, Rounding rounding) const {
  const Exact v = value();
  if (v.zero()) return pack(f, false, 0);
  Options o;
  o.rounding = rounding;
  return round_pack(f, o, v).bits;
}

double ExactSum::to_double() const { return std::bit_cast<double>(rounded(binary64)); }

}  // namespace gp::model
