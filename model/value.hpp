// Decoding raw bits into classified exact values.
#pragma once

#include <cstdint>

#include "model/format.hpp"

namespace gp::model {

enum class Class : std::uint8_t { zero, subnormal, normal, infinite, quiet_nan, signaling_nan };

constexpr bool is_nan(Class c) { return c == Class::quiet_nan || c == Class::signaling_nan; }
constexpr bool is_finite_nonzero(Class c) { return c == Class::subnormal || c == Class::normal; }

// A decoded value. Finite: (-1)^neg * sig * 2^exp, exactly (sig is not normalised).
// NaN: sig holds the fraction field (the payload, quiet bit included).
struct Unpacked {
  Class cls;
  bool neg;
  int exp;
  std::uint64_t sig;
};

// Magnitude bits (exponent and fraction fields at bit 0) of an encoding.
constexpr std::uint64_t magnitude_of(const Format& f, std::uint64_t bits) {
  return (bits >> f.pad_bits) & f.magnitude_mask();
}
constexpr bool sign_of(const Format& f, std::uint64_t bits) { return (bits & f.sign_mask()) != 0; }

constexpr Class classify(const Format& f, std::uint64_t bits) {
  const std::uint64_t mag = magnitude_of(f, bits);
  const std::uint64_t field = mag >> f.man_bits;
  switch (f.nan) {
    case NanStyle::ieee:
      if (field == f.exp_field_max() && (mag & f.man_mask()) != 0)
        return (mag & f.quiet_bit()) ? Class::quiet_nan : Class::signaling_nan;
      break;
    case NanStyle::all_ones:
      if (mag == f.magnitude_mask()) return Class::quiet_nan;
      break;
    case NanStyle::negative_zero:
      if (mag == 0 && sign_of(f, bits)) return Class::quiet_nan;
      break;
    case NanStyle::none: break;
  }
  if (f.has_inf() && mag == f.inf_magnitude()) return Class::infinite;
  if (field == 0 && f.has_subnormals()) return mag == 0 ? Class::zero : Class::subnormal;
  return Class::normal;
}

// Decodes bits of format f. With flush_subnormals, subnormals read as zero of the same sign.
constexpr Unpacked unpack(const Format& f, std::uint64_t bits, bool flush_subnormals = false) {
  const std::uint64_t mag = magnitude_of(f, bits);
  const bool neg = sign_of(f, bits);
  const std::uint64_t frac = mag & f.man_mask();
  Class c = classify(f, bits);
  switch (c) {
    case Class::normal:
      return {c, neg, int(mag >> f.man_bits) - f.bias - f.man_bits, frac | (std::uint64_t{1} << f.man_bits)};
    case Class::subnormal:
      if (flush_subnormals) return {Class::zero, neg, 0, 0};
      return {c, neg, f.quantum_min(), frac};
    case Class::quiet_nan:
    case Class::signaling_nan: return {c, neg, 0, frac};
    default: return {c, neg, 0, 0};
  }
}

}  // namespace gp::model
