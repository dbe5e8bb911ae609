// Hand-checked rounding cases: the modes of MMA-Sim's tables I and II, overflow and underflow edges.
#include <gtest/gtest.h>

#include "model/ops.hpp"

namespace gp::model {
namespace {

// binary16: 1 = 0x3c00, u = 2^-10. Values 1 + k*u/4 are exact in binary32, converted to binary16.
std::uint64_t b32(float x) { return std::bit_cast<std::uint32_t>(x); }

std::uint64_t to_b16(float x, Rounding r) {
  Options o;
  o.rounding = r;
  return cvt(binary16, binary32, o, b32(x)).bits;
}

TEST(Rounding, TableOneAndTwoOfMmaSim) {
  const float u = 1.0f / 1024;
  struct Row {
    Rounding r;
    std::uint64_t out[8];  // 1+.75u, 1+.25u, -1-.75u, -1-.25u, 1+.5u, 1+1.5u, -1-.5u, -1-1.5u
  };
  const std::uint64_t one = 0x3c00, one_u = 0x3c01, one_2u = 0x3c02, m1 = 0xbc00, m1_u = 0xbc01, m1_2u = 0xbc02;
  const Row rows[] = {
      {Rounding::ru, {one_u, one_u, m1, m1, one_u, one_2u, m1, m1_u}},
      {Rounding::rd, {one, one, m1_u, m1_u, one, one_u, m1_u, m1_2u}},
      {Rounding::rz, {one, one, m1, m1, one, one_u, m1, m1_u}},
      {Rounding::ra, {one_u, one_u, m1_u, m1_u, one_u, one_2u, m1_u, m1_2u}},
      {Rounding::rnu, {one_u, one, m1_u, m1, one_u, one_2u, m1, m1_u}},
      {Rounding::rnd, {one_u, one, m1_u, m1, one, one_u, m1_u, m1_2u}},
      {Rounding::rnz, {one_u, one, m1_u, m1, one, one_u, m1, m1_u}},
      {Rounding::rna, {one_u, one, m1_u, m1, one_u, one_2u, m1_u, m1_2u}},
      {Rounding::rne, {one_u, one, m1_u, m1, one, one_2u, m1, m1_2u}},
      {Rounding::rno, {one_u, one, m1_u, m1, one_u, one_u, m1_u, m1_u}},
      {Rounding::ro, {one_u, one_u, m1_u, m1_u, one_u, one_u, m1_u, m1_u}},
  };
  const float in[8] = {1 + 0.75f * u, 1 + 0.25f * u, -1 - 0.75f * u, -1 - 0.25f * u,
                       1 + 0.5f * u,  1 + 1.5f * u,  -1 - 0.5f * u,  -1 - 1.5f * u};
  for (const Row& row : rows)
    for (int i = 0; i < 8; ++i) EXPECT_EQ(to_b16(in[i], row.r), row.out[i]) << name(row.r) << " input " << i;
}

TEST(Rounding, OverflowPerModeAndFormat) {
  Options o;
  // 65520 = binary16 max (65504) + half an ulp: a tie that goes to infinity in rne, stays in rnz.
  EXPECT_EQ(cvt(binary16, binary32, o, b32(65520.0f)).bits, 0x7c00u);
  EXPECT_EQ(cvt(binary16, binary32, o, b32(65520.0f)).flags, Flag::overflow | Flag::inexact);
  o.rounding = Rounding::rnz;
  EXPECT_EQ(cvt(binary16, binary32, o, b32(65520.0f)).bits, 0x7bffu);
  o.rounding = Rounding::rz;
  EXPECT_EQ(cvt(binary16, binary32, o, b32(1e9f)).bits, 0x7bffu);
  o.rounding = Rounding::rd;
  EXPECT_EQ(cvt(binary16, binary32, o, b32(-1e9f)).bits, 0xfc00u);
  EXPECT_EQ(cvt(binary16, binary32, o, b32(1e9f)).bits, 0x7bffu);
  // e4m3 has no infinity: overflow gives NaN, or 448 when saturating; 464 is a tie to 448.
  o.rounding = Rounding::rne;
  EXPECT_EQ(cvt(e4m3, binary32, o, b32(464.0f)).bits, 0x7eu);
  EXPECT_EQ(cvt(e4m3, binary32, o, b32(465.0f)).bits, 0x7fu);
  EXPECT_EQ(cvt(e4m3, binary32, o, b32(-465.0f)).bits, 0xffu);
  o.saturate = true;
  EXPECT_EQ(cvt(e4m3, binary32, o, b32(1e9f)).bits, 0x7eu);
  // e2m1 has no NaN: always saturates to 6.
  o.saturate = false;
  EXPECT_EQ(cvt(e2m1, binary32, o, b32(100.0f)).bits, 0x07u);
  // FNUZ: the NaN is 0x80.
  EXPECT_EQ(cvt(e4m3fnuz, binary32, o, b32(1000.0f)).bits, 0x80u);
}

TEST(Rounding, UnderflowAfterRoundingAndFlush) {
  Options o;
  // Smallest binary16 subnormal 2^-24; 2^-25 is a tie to 0 (rne) with underflow and inexact.
  EXPECT_EQ(cvt(binary16, binary32, o, b32(0x1p-25f)).bits, 0u);
  EXPECT_EQ(cvt(binary16, binary32, o, b32(0x1p-25f)).flags, Flag::underflow | Flag::inexact);
  EXPECT_EQ(cvt(binary16, binary32, o, b32(-0x1.8p-25f)).bits, 0x8001u);
  // Exact subnormals raise nothing (0x1.ff8p-15 is the largest). Tininess after rounding:
  // 2^-14 - 2^-26 rounds to 2^-14 at 11 bits, so it is not tiny; 2^-14 - 2^-25 is tiny at 11
  // bits, yet the subnormal grid rounds it up to 2^-14: underflow with a normal result.
  EXPECT_EQ(cvt(binary16, binary32, o, b32(0x1p-20f)).flags, 0u);
  EXPECT_EQ(cvt(binary16, binary32, o, b32(0x1.ff8p-15f)).bits, 0x03ffu);
  EXPECT_EQ(cvt(binary16, binary32, o, b32(0x1.ff8p-15f)).flags, 0u);
  EXPECT_EQ(cvt(binary16, binary32, o, b32(0x1.ffep-15f)).bits, 0x0400u);
  EXPECT_EQ(cvt(binary16, binary32, o, b32(0x1.ffep-15f)).flags, Flag::inexact);
  EXPECT_EQ(cvt(binary16, binary32, o, b32(0x1.ffcp-15f)).bits, 0x0400u);
  EXPECT_EQ(cvt(binary16, binary32, o, b32(0x1.ffcp-15f)).flags, Flag::inexact | Flag::underflow);
  o.ftz_out = true;
  EXPECT_EQ(cvt(binary16, binary32, o, b32(-0x1p-20f)).bits, 0x8000u);
  EXPECT_EQ(cvt(binary16, binary32, o, b32(-0x1p-20f)).flags, Flag::underflow | Flag::inexact);
  // ftz_out flushes every tiny result, as x86's MXCSR.FTZ does: (1 - 2^-24) * 2^-126 would round
  // up to 2^-126 on the subnormal grid but is tiny, so it becomes zero; exact tiny results too.
  EXPECT_EQ(mul(binary32, o, 0x3f7fffff, 0x00800000).bits, 0u);
  EXPECT_EQ(mul(binary32, o, 0x3f7fffff, 0x00800000).flags, Flag::underflow | Flag::inexact);
  EXPECT_EQ(mul(binary32, o, 0x1c800000, 0x1c800000).bits, 0u);           // 2^-70 * 2^-70
  EXPECT_EQ(mul(binary32, o, 0x3f800001, 0x007fffff).bits, 0x00800000u);  // 2^-126 - 2^-172: not tiny
  o = {};
  o.ftz_in = true;
  EXPECT_EQ(add(binary16, o, 0x0001, 0x0001).bits, 0u);
}

TEST(Rounding, SignOfExactZeroSums) {
  Options o;
  EXPECT_EQ(add(binary32, o, 0x3f800000, 0xbf800000).bits, 0u);
  EXPECT_EQ(add(binary32, o, 0x80000000, 0x80000000).bits, 0x80000000u);
  o.rounding = Rounding::rd;
  EXPECT_EQ(add(binary32, o, 0x3f800000, 0xbf800000).bits, 0x80000000u);
  EXPECT_EQ(sub(binary16, o, 0x3c00, 0x3c00).bits, 0x8000u);
  // FNUZ has no -0.
  EXPECT_EQ(sub(e4m3fnuz, o, 0x40, 0x40).bits, 0u);
}

TEST(Rounding, Ue8m0IsPowersOfTwoWithoutZero) {
  Options o;
  EXPECT_EQ(cvt(ue8m0, binary32, o, b32(1.0f)).bits, 127u);
  EXPECT_EQ(cvt(ue8m0, binary32, o, b32(0x1p-127f)).bits, 0u);
  EXPECT_EQ(cvt(ue8m0, binary32, o, b32(0x1p-127f)).flags, 0u);
  EXPECT_EQ(cvt(ue8m0, binary32, o, b32(0x1p127f)).bits, 254u);
  EXPECT_EQ(cvt(ue8m0, binary32, o, b32(0.0f)).bits, 0u);  // no zero: the smallest value
  EXPECT_EQ(cvt(ue8m0, binary32, o, b32(-1.0f)).bits, 0xffu);
  EXPECT_EQ(cvt(ue8m0, binary32, o, b32(-1.0f)).flags, Flag::invalid);
  // 1.5 is a tie between 1 (0x7f) and 2 (0x80): ties to even take the even encoding.
  EXPECT_EQ(cvt(ue8m0, binary32, o, b32(1.5f)).bits, 0x80u);
  EXPECT_EQ(cvt(binary32, ue8m0, o, 0).bits, b32(0x1p-127f));
}

TEST(Rounding, Tf32DropsLowBitsOnInput) {
  Options o;
  EXPECT_EQ(cvt(binary32, tf32, o, 0x3f801fff).bits, 0x3f800000u);
  EXPECT_EQ(cvt(tf32, binary32, o, 0x3f801000).bits, 0x3f800000u);  // tie, even
  EXPECT_EQ(cvt(tf32, binary32, o, 0x3f803000).bits, 0x3f804000u);
}

TEST(Rounding, NanPropagationAndPayload) {
  Options o;
  // First NaN operand wins, quieted; a signalling one raises invalid.
  EXPECT_EQ(add(binary32, o, 0x7f800001, 0x7fc00002).bits, 0x7fc00001u);
  EXPECT_EQ(add(binary32, o, 0x7f800001, 0x7fc00002).flags, Flag::invalid);
  EXPECT_EQ(mul(binary32, o, 0x3f800000, 0xffc00123).bits, 0xffc00123u);
  EXPECT_EQ(sub(binary32, o, 0x3f800000, 0xffc00123).bits, 0xffc00123u);
  // Narrowing keeps the leading payload bits.
  EXPECT_EQ(cvt(binary16, binary32, o, 0x7fd00000).bits, 0x7e80u);
  EXPECT_EQ(cvt(binary32, binary16, o, 0xfd01).bits, 0xffe02000u);  // signalling: quieted
  // Invalid operations give the canonical NaN.
  EXPECT_EQ(sub(binary32, o, 0x7f800000, 0x7f800000).bits, 0x7fc00000u);
  EXPECT_EQ(sqrt(binary16, o, 0xbc00).bits, 0x7e00u);
  o.canonical_nan = true;
  EXPECT_EQ(mul(binary32, o, 0x3f800000, 0xffc00123).bits, 0x7fc00000u);
}

}  // namespace
}  // namespace gp::model
