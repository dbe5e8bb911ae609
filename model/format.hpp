// Number format descriptors: one constexpr Format per format, like LLVM's fltSemantics.
// Every format of the project is a sign-magnitude binary floating-point format stored in at
// most 64 bits; how it spends its encodings on infinities, NaNs and zeros is named by enums.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace gp::model {

// Which encodings are infinities.
enum class Infinity : std::uint8_t {
  ieee,  // exponent all ones, fraction zero
  none,  // no infinities: the top binade is finite
};

// Which encodings are NaNs.
enum class NanStyle : std::uint8_t {
  ieee,           // exponent all ones, fraction nonzero; fraction MSB set means quiet
  all_ones,       // only exponent and fraction all ones (OCP e4m3, ue4m3, ue8m0): one NaN per sign
  negative_zero,  // only the "-0" pattern, sign set and the rest zero (the FNUZ formats)
  none,           // no NaNs (fp6, fp4)
};

enum class Signedness : std::uint8_t { sign_bit, unsigned_only };
// gradual: exponent field 0 holds zero and the subnormals. none: exponent field 0 is an ordinary
// binade (ue8m0, whose 0x00 is 2^-127), so the format has neither subnormals nor zero.
enum class Subnormals : std::uint8_t { gradual, none };
enum class Zero : std::uint8_t { signed_zero, unsigned_zero, none };

struct Format {
  std::string_view name;
  int exp_bits;
  int man_bits;  // stored fraction bits
  int bias;
  int storage_bits;  // width of the container
  int pad_bits;      // low container bits not part of the number (tf32 in 32 bits: 13), ignored on decode
  Signedness sign;
  Infinity inf;
  NanStyle nan;
  Subnormals subnormals;
  Zero zero;

  constexpr int precision() const { return man_bits + 1; }
  constexpr bool has_sign() const { return sign == Signedness::sign_bit; }
  constexpr bool has_inf() const { return inf == Infinity::ieee; }
  constexpr bool has_nan() const { return nan != NanStyle::none; }
  constexpr bool has_zero() const { return zero != Zero::none; }
  constexpr bool has_negative_zero() const { return zero == Zero::signed_zero && has_sign(); }
  constexpr bool has_subnormals() const { return subnormals == Subnormals::gradual; }
  // Width of sign + exponent + fraction, before padding.
  constexpr int value_bits() const { return (has_sign() ? 1 : 0) + exp_bits + man_bits; }
  // The narrowest unsigned integer type that holds the container: its size in bytes (1, 2, 4, 8).
  constexpr int storage_bytes() const {
    return storage_bits <= 8 ? 1 : storage_bits <= 16 ? 2 : storage_bits <= 32 ? 4 : 8;
  }
  constexpr int sign_shift() const { return pad_bits + exp_bits + man_bits; }
  constexpr std::uint64_t sign_mask() const { return has_sign() ? std::uint64_t{1} << sign_shift() : 0; }
  constexpr std::uint64_t storage_mask() const {
    return storage_bits == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << storage_bits) - 1;
  }
  // Magnitude field (exponent and fraction) aligned at bit 0, as used in rounding arithmetic.
  constexpr std::uint64_t magnitude_mask() const { return (std::uint64_t{1} << (exp_bits + man_bits)) - 1; }
  constexpr std::uint64_t exp_field_max() const { return (std::uint64_t{1} << exp_bits) - 1; }
  constexpr std::uint64_t man_mask() const { return (std::uint64_t{1} << man_bits) - 1; }
  // Smallest exponent of a normal number (value 2^emin), and the exponent of its fraction LSB.
  constexpr int emin() const { return (has_subnormals() ? 1 : 0) - bias; }
  constexpr int quantum_min() const { return emin() - man_bits; }
  // Magnitude encodings (exponent and fraction, no sign, no padding) of special values.
  constexpr std::uint64_t inf_magnitude() const { return exp_field_max() << man_bits; }
  constexpr std::uint64_t max_finite_magnitude() const {
    if (inf == Infinity::ieee) return inf_magnitude() - 1;
    if (nan == NanStyle::all_ones) return magnitude_mask() - 1;
    return magnitude_mask();
  }
  // Exponent of the largest finite value's leading bit.
  constexpr int emax() const { return int(max_finite_magnitude() >> man_bits) - bias; }
  // Quiet-bit mask in magnitude terms (IEEE NaN style only).
  constexpr std::uint64_t quiet_bit() const { return man_bits > 0 ? std::uint64_t{1} << (man_bits - 1) : 0; }
};

// clang-format off
//                                         name       e   m   bias  bits pad  sign                     inf              nan                     subnormals           zero
inline constexpr Format binary64  {"binary64",  11, 52, 1023, 64, 0,  Signedness::sign_bit,      Infinity::ieee, NanStyle::ieee,          Subnormals::gradual, Zero::signed_zero};
inline constexpr Format binary32  {"binary32",   8, 23,  127, 32, 0,  Signedness::sign_bit,      Infinity::ieee, NanStyle::ieee,          Subnormals::gradual, Zero::signed_zero};
// NVIDIA TF32: binary32's layout with only 10 fraction bits; the 13 low container bits are ignored.
inline constexpr Format tf32      {"tf32",       8, 10,  127, 32, 13, Signedness::sign_bit,      Infinity::ieee, NanStyle::ieee,          Subnormals::gradual, Zero::signed_zero};
inline constexpr Format binary16  {"binary16",   5, 10,   15, 16, 0,  Signedness::sign_bit,      Infinity::ieee, NanStyle::ieee,          Subnormals::gradual, Zero::signed_zero};
inline constexpr Format bfloat16  {"bfloat16",   8,  7,  127, 16, 0,  Signedness::sign_bit,      Infinity::ieee, NanStyle::ieee,          Subnormals::gradual, Zero::signed_zero};
// ATI R300 fp24 (s1e7m16). Its specials are not documented: IEEE-style encodings are assumed.
inline constexpr Format fp24      {"fp24",       7, 16,   63, 24, 0,  Signedness::sign_bit,      Infinity::ieee, NanStyle::ieee,          Subnormals::gradual, Zero::signed_zero};
// OCP 8-bit formats (OFP8 1.0): e4m3 has no infinity and one NaN per sign, max 448.
inline constexpr Format e4m3      {"e4m3",       4,  3,    7,  8, 0,  Signedness::sign_bit,      Infinity::none, NanStyle::all_ones,      Subnormals::gradual, Zero::signed_zero};
inline constexpr Format e5m2      {"e5m2",       5,  2,   15,  8, 0,  Signedness::sign_bit,      Infinity::ieee, NanStyle::ieee,          Subnormals::gradual, Zero::signed_zero};
// The FNUZ variants (Graphcore, AMD CDNA3): no infinity, no -0, the single NaN is 0x80, bias one larger.
inline constexpr Format e4m3fnuz  {"e4m3fnuz",   4,  3,    8,  8, 0,  Signedness::sign_bit,      Infinity::none, NanStyle::negative_zero, Subnormals::gradual, Zero::unsigned_zero};
inline constexpr Format e5m2fnuz  {"e5m2fnuz",   5,  2,   16,  8, 0,  Signedness::sign_bit,      Infinity::none, NanStyle::negative_zero, Subnormals::gradual, Zero::unsigned_zero};
// OCP MX element formats: no infinity, no NaN.
inline constexpr Format e2m3      {"e2m3",       2,  3,    1,  8, 0,  Signedness::sign_bit,      Infinity::none, NanStyle::none,          Subnormals::gradual, Zero::signed_zero};
inline constexpr Format e3m2      {"e3m2",       3,  2,    3,  8, 0,  Signedness::sign_bit,      Infinity::none, NanStyle::none,          Subnormals::gradual, Zero::signed_zero};
inline constexpr Format e2m1      {"e2m1",       2,  1,    1,  8, 0,  Signedness::sign_bit,      Infinity::none, NanStyle::none,          Subnormals::gradual, Zero::signed_zero};
// Scale formats: MX's E8M0 (powers of two 2^-127..2^127, NaN 0xFF, no zero) and NVFP4's unsigned E4M3.
inline constexpr Format ue8m0     {"ue8m0",      8,  0,  127,  8, 0,  Signedness::unsigned_only, Infinity::none, NanStyle::all_ones,      Subnormals::none,    Zero::none};
inline constexpr Format ue4m3     {"ue4m3",      4,  3,    7,  8, 0,  Signedness::unsigned_only, Infinity::none, NanStyle::all_ones,      Subnormals::gradual, Zero::unsigned_zero};
// clang-format on

// Every format: binary64 binary32 tf32 binary16 bfloat16 fp24 e4m3 e5m2 e4m3fnuz e5m2fnuz e2m3 e3m2
// e2m1 ue8m0 ue4m3, in this order.
std::span<const Format* const> all_formats();
// Looks a format up by its command-line name.
std::optional<const Format*> find_format(std::string_view name);

}  // namespace gp::model
