// Format descriptors against the values their specifications publish (IEEE 754, OCP OFP8 1.0,
// OCP MX 1.0, NVIDIA TF32) and against the host's binary32/binary64.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>

#include "model/ops.hpp"

namespace gp::model {
namespace {

// The binary64 value of an encoding, through the model's conversion.
double value(const Format& f, std::uint64_t bits) {
  return std::bit_cast<double>(cvt(binary64, f, Options{}, bits).bits);
}

struct Published {
  const Format* f;
  double max_finite, min_normal, min_subnormal;
  int nans;  // NaN encodings
  int infs;
};

TEST(Format, PublishedExtremes) {
  const Published table[] = {
      {&binary16, 65504, 0x1p-14, 0x1p-24, 2 * 1023, 2},
      {&bfloat16, 0x1.fep127, 0x1p-126, 0x1p-133, 2 * 127, 2},
      {&e4m3, 448, 0x1p-6, 0x1p-9, 2, 0},
      {&e5m2, 57344, 0x1p-14, 0x1p-16, 6, 2},
      {&e4m3fnuz, 240, 0x1p-7, 0x1p-10, 1, 0},
      {&e5m2fnuz, 57344, 0x1p-15, 0x1p-17, 1, 0},
      {&e2m3, 7.5, 1, 0.125, 0, 0},
      {&e3m2, 28, 0.25, 0.0625, 0, 0},
      {&e2m1, 6, 1, 0.5, 0, 0},
      {&ue4m3, 448, 0x1p-6, 0x1p-9, 1, 0},
      {&fp24, 0x1.ffffp63, 0x1p-62, 0x1p-78, 2 * 65535, 2},
  };
  for (const Published& p : table) {
    const Format& f = *p.f;
    SCOPED_TRACE(f.name);
    EXPECT_EQ(value(f, pack(f, false, f.max_finite_magnitude())), p.max_finite);
    EXPECT_EQ(value(f, pack(f, false, f.man_mask() + 1)), p.min_normal);
    EXPECT_EQ(value(f, pack(f, false, 1)), p.min_subnormal);
    int nans = 0, infs = 0;
    for (std::uint64_t i = 0; i < (std::uint64_t{1} << f.value_bits()); ++i) {
      nans += is_nan(classify(f, i << f.pad_bits));
      infs += classify(f, i << f.pad_bits) == Class::infinite;
    }
    EXPECT_EQ(nans, p.nans);
    EXPECT_EQ(infs, p.infs);
  }
}

TEST(Format, Ue8m0IsEveryPowerOfTwoFromMinus127To127) {
  for (std::uint64_t e = 0; e < 255; ++e) EXPECT_EQ(value(ue8m0, e), std::ldexp(1.0, int(e) - 127));
  EXPECT_TRUE(is_nan(classify(ue8m0, 0xff)));
}

TEST(Format, Tf32IsBinary32WithTenFractionBits) {
  EXPECT_EQ(tf32.storage_bits, 32);
  EXPECT_EQ(value(tf32, 0x3f802000), 1 + 0x1p-10);
  EXPECT_EQ(value(tf32, 0x3f801fff), 1.0);  // the 13 low bits are not part of the number
  EXPECT_EQ(value(tf32, pack(tf32, false, tf32.max_finite_magnitude())), 0x1.ffcp127);
}

TEST(Format, HostBinary32AndBinary64) {
  EXPECT_EQ(binary32.precision(), std::numeric_limits<float>::digits);
  EXPECT_EQ(binary64.precision(), std::numeric_limits<double>::digits);
  EXPECT_EQ(binary32.emax(), std::numeric_limits<float>::max_exponent - 1);
  EXPECT_EQ(binary64.emin(), std::numeric_limits<double>::min_exponent - 1);
  EXPECT_EQ(pack(binary32, false, binary32.max_finite_magnitude()),
            std::bit_cast<std::uint32_t>(std::numeric_limits<float>::max()));
  EXPECT_EQ(canonical_nan(binary32), std::bit_cast<std::uint32_t>(std::numeric_limits<float>::quiet_NaN()));
  EXPECT_EQ(canonical_nan(binary64), std::bit_cast<std::uint64_t>(std::numeric_limits<double>::quiet_NaN()));
}

TEST(Format, NamesRoundTrip) {
  EXPECT_EQ(all_formats().size(), 15u);
  for (const Format* f : all_formats()) EXPECT_EQ(find_format(f->name), f);
  EXPECT_FALSE(find_format("binary128"));
  for (Rounding r : all_roundings) EXPECT_EQ(find_rounding(name(r)), r);
  for (Op op : all_ops) EXPECT_EQ(find_op(name(op)), op);
}

TEST(Format, CanonicalNans) {
  EXPECT_EQ(canonical_nan(binary16), 0x7e00u);
  EXPECT_EQ(canonical_nan(bfloat16), 0x7fc0u);
  EXPECT_EQ(canonical_nan(tf32), 0x7fc00000u);
  EXPECT_EQ(canonical_nan(e4m3), 0x7fu);
  EXPECT_EQ(canonical_nan(e5m2), 0x7eu);
  EXPECT_EQ(canonical_nan(e4m3fnuz), 0x80u);
  EXPECT_EQ(canonical_nan(ue8m0), 0xffu);
  EXPECT_EQ(canonical_nan(ue4m3), 0x7fu);
}

}  // namespace
}  // namespace gp::model
