// Integer helpers for the model's arithmetic: 128-bit words, leading-bit positions and
// right shifts that keep a sticky ("jam") bit, SoftFloat's shiftRightJam.
#pragma once

#include <bit>
#include <cstdint>

namespace gp::model {

__extension__ typedef unsigned __int128 u128;

// Position of the most significant set bit; x must be nonzero.
constexpr int msb(std::uint64_t x) { return 63 - std::countl_zero(x); }
constexpr int msb(u128 x) {
  auto hi = std::uint64_t(x >> 64);
  return hi ? 64 + msb(hi) : msb(std::uint64_t(x));
}

// x >> n with every shifted-out one ORed into bit 0; n >= 0, any size.
constexpr std::uint64_t shift_right_jam(std::uint64_t x, int n) {
  if (n == 0) return x;
  if (n >= 64) return x != 0;
  return (x >> n) | ((x & ((std::uint64_t{1} << n) - 1)) != 0);
}
// The same for 0 <= n < 64, without branches.
constexpr std::uint64_t shift_right_jam_below_64(std::uint64_t x, int n) {
  return (x >> n) | ((x & ((std::uint64_t{1} << n) - 1)) != 0);
}
constexpr u128 shift_right_jam(u128 x, int n) {
  if (n == 0) return x;
  if (n >= 128) return x != 0;
  return (x >> n) | ((x & ((u128{1} << n) - 1)) != 0);
}

// Narrows x to a 64-bit significand whose leading bit is at most bit 61, jamming the
// dropped bits; *exp (the exponent of bit 0) is raised by the shift.
constexpr std::uint64_t narrow_jam(u128 x, int& exp) {
  int shift = x == 0 ? 0 : msb(x) - 61;
  if (shift <= 0) return std::uint64_t(x);
  exp += shift;
  return std::uint64_t(shift_right_jam(x, shift));
}

}  // namespace gp::model
