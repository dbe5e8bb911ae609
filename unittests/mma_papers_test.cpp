// Every numeric example of the MMA papers through the model, with the paper's output:
// Fasi et al. section 3 (V100 and T4), Valpey et al. tables 1, 3 and 5, MMA-Sim sections IV and VI;
// CDNA1 (MI100) as MMA-Sim's later code and Khattak and Mikaitis's MI100 model have it.
// Host floating point only builds inputs and states expected values (exactly representable).
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <deque>
#include <random>
#include <string>
#include <vector>

#include "model/mma_instructions.hpp"
#include "model/ops.hpp"

namespace gp::model {
namespace {

// Raw bits of the value x (exactly representable) in format f.
std::uint64_t enc(const Format& f, double x) {
  const Result r = cvt(f, binary64, Options{}, std::bit_cast<std::uint64_t>(x));
  EXPECT_EQ(r.flags & Flag::inexact, 0u) << x << " is not exact in " << f.name;
  return r.bits;
}
std::uint64_t h(double x) { return enc(binary16, x); }
std::uint64_t s(double x) { return enc(binary32, x); }
double p2(int e) { return std::ldexp(1.0, e); }

const Dot& instr(const char* id) {
  static std::deque<std::pair<std::string, Dot>> cache;  // references stay valid as it grows
  for (auto& [name, d] : cache)
    if (name == id) return d;
  const MmaInstruction* i = find_mma_instruction(id);
  EXPECT_NE(i, nullptr) << id;
  cache.emplace_back(id, Dot(i->config));
  return cache.back().second;
}

// d = c + sum a_k b_k with binary16 a, b given as values; c and d in the instruction's formats.
std::uint64_t run(const char* id, double c, std::vector<double> a, std::vector<double> b) {
  const Dot& d = instr(id);
  std::vector<std::uint64_t> ab, bb;
  for (double x : a) ab.push_back(enc(*d.config().a, x));
  for (double x : b) bb.push_back(enc(*d.config().b, x));
  return d(enc(*d.config().c, c), ab, bb);
}

constexpr const char* V100_32 = "volta:HMMA.884.F32.F32";
constexpr const char* V100_16 = "volta:HMMA.884.F16.F16";
constexpr const char* T4_32 = "turing:HMMA.884.F32.F32";
constexpr const char* T4_16 = "turing:HMMA.884.F16.F16";
constexpr const char* A100_32 = "ampere:HMMA.1688.F32";

// ---- Fasi, Higham, Mikaitis, Pranesh, "Numerical behavior of NVIDIA tensor cores", section 3.

TEST(Fasi, SubnormalInputsAndOutputs_3_1_1) {
  for (const char* id : {V100_32, V100_16, T4_32, T4_16}) {
    // a11 = 2^-24 (binary16 subnormal), b11 = 2^2: d = 2^-22 in both output formats.
    EXPECT_EQ(run(id, 0, {p2(-24), 0, 0, 0}, {4, 0, 0, 0}), enc(*instr(id).config().d, p2(-22))) << id;
    // a11 = 2^-14, b11 = 2^-1: the subnormal 2^-15 is produced.
    EXPECT_EQ(run(id, 0, {p2(-14), 0, 0, 0}, {0.5, 0, 0, 0}), enc(*instr(id).config().d, p2(-15))) << id;
    // a11 = 2^-14, b11 = 1, c = -2^-15: d = 2^-15.
    EXPECT_EQ(run(id, -p2(-15), {p2(-14), 0, 0, 0}, {1, 0, 0, 0}), enc(*instr(id).config().d, p2(-15))) << id;
  }
  // c = 2^-149 (binary32 subnormal), A = B = 0: c comes back unaltered.
  EXPECT_EQ(run(V100_32, p2(-149), {0, 0, 0, 0}, {0, 0, 0, 0}), 0x00000001u);
  EXPECT_EQ(run(T4_32, p2(-149), {0, 0, 0, 0}, {0, 0, 0, 0}), 0x00000001u);
  // a11 = a12 = 1, b11 = 2^-23 + 2^-24 (subnormal), b21 = 2: round toward zero inside the unit gives 2.
  EXPECT_EQ(run(V100_32, 0, {1, 1, 0, 0}, {p2(-23) + p2(-24), 2, 0, 0}), s(2));
}

TEST(Fasi, ExactProductsAndAccumulationPrecision_3_1_2) {
  const double x = 1 - p2(-11);
  // Products held exactly: 4 (1 - 2^-10 + 2^-22).
  EXPECT_EQ(run(V100_32, 0, {x, x, x, x}, {x, x, x, x}), s(4 * (1 - p2(-10) + p2(-22))));
  // a11 = b11 = a12 = 1 - 2^-11, b21 = 2^-11: 1 - 2^-10 + 2^-11 exactly, also with binary16 output.
  EXPECT_EQ(run(V100_32, 0, {x, x, 0, 0}, {x, p2(-11), 0, 0}), s(1 - p2(-10) + p2(-11)));
  EXPECT_EQ(run(V100_16, 0, {x, x, 0, 0}, {x, p2(-11), 0, 0}), h(1 - p2(-10) + p2(-11)));
  // One of the five addends 1, the others 2^-24: every position gives 1 on the V100.
  for (int one = 0; one < 5; ++one) {
    std::vector<double> b(4, p2(-24));
    double c = p2(-24);
    if (one < 4)
      b[std::size_t(one)] = 1;
    else
      c = 1;
    EXPECT_EQ(run(V100_32, c, {1, 1, 1, 1}, b), s(1)) << "1 at position " << one;
  }
}

TEST(Fasi, RoundingModes_3_1_3) {
  // b11 = 2, b21 = 3/4 * 2^-22: rounded toward zero (or down) gives 2; negated gives -2: RZ.
  for (const char* id : {V100_32, T4_32}) {
    EXPECT_EQ(run(id, 0, {1, 1, 1, 1}, {2, p2(-23) + p2(-24), 0, 0}), s(2)) << id;
    EXPECT_EQ(run(id, 0, {1, 1, 1, 1}, {-2, -(p2(-23) + p2(-24)), 0, 0}), s(-2)) << id;
  }
  // Binary16 output: 2^-25 + 2^-26 = 3/4 2^-24 rounds to nearest, 2^-24.
  EXPECT_EQ(run(V100_16, 0, {p2(-24), p2(-24), 0, 0}, {0.5, 0.25, 0, 0}), 0x0001u);
  EXPECT_EQ(run(T4_16, 0, {p2(-24), p2(-24), 0, 0}, {0.5, 0.25, 0, 0}), 0x0001u);
}

TEST(Fasi, FeaturesOfTheAccumulator_3_1_4) {
  // No guard digits: b11 = 1, c = -1 + 2^-24 gives 2^-23.
  EXPECT_EQ(run(V100_32, -1 + p2(-24), {1, 1, 1, 1}, {1, 0, 0, 0}), s(p2(-23)));
  // Normalization only at the end: c = 1 - 2^-24 and four 2^-24 give 1 + 2^-23 ...
  EXPECT_EQ(run(V100_32, 1 - p2(-24), {1, 1, 1, 1}, {p2(-24), p2(-24), p2(-24), p2(-24)}), s(1 + p2(-23)));
  // ... and, monotonicity lost, c = 1 with the same addends gives 1.
  EXPECT_EQ(run(V100_32, 1, {1, 1, 1, 1}, {p2(-24), p2(-24), p2(-24), p2(-24)}), s(1));
  // Normalization in subtraction: c = -1 + 2^-24, addends 1 and -2^-24 give 2^-23.
  EXPECT_EQ(run(V100_32, -1 + p2(-24), {1, 1, 1, 1}, {1, -p2(-24), 0, 0}), s(p2(-23)));
  // Two carry-out bits: c = 1 + 2^-22 + 2^-23 and every order of 1, 1, 1, 2^-23 give 4 + 2^-21.
  const double c = 1 + p2(-22) + p2(-23);
  for (int pos = 0; pos < 4; ++pos) {
    std::vector<double> b(4, 1.0);
    b[std::size_t(pos)] = p2(-23);
    EXPECT_EQ(run(V100_32, c, {1, 1, 1, 1}, b), s(4 + p2(-21))) << "2^-23 at position " << pos;
  }
  // The third carry bit: c = 1.875, b = 1, 1.5, 1.75, 1.875 gives 8.
  EXPECT_EQ(run(V100_32, 1.875, {1, 1, 1, 1}, {1, 1.5, 1.75, 1.875}), s(8));
}

TEST(Fasi, TuringHasOneMoreBottomBit_3_2) {
  // 1 + 2^-24 + 2^-24 is exact on the T4 (F = 24), rounded to 1 on the V100 (F = 23).
  EXPECT_EQ(run(T4_32, 1, {1, 1, 0, 0}, {p2(-24), p2(-24), 0, 0}), s(1 + p2(-23)));
  EXPECT_EQ(run(V100_32, 1, {1, 1, 0, 0}, {p2(-24), p2(-24), 0, 0}), s(1));
  // The V100 tests hold on the T4 with 2^-24 replaced by 2^-25 (here as products 2^-1 * 2^-24).
  for (int one = 0; one < 5; ++one) {
    std::vector<double> a(4, 0.5), b(4, p2(-24));
    double c = p2(-25);
    if (one < 4) {
      a[std::size_t(one)] = 1;
      b[std::size_t(one)] = 1;
    } else {
      c = 1;
    }
    EXPECT_EQ(run(T4_32, c, a, b), s(1)) << "1 at position " << one;
  }
  // With 2^-24 the T4 keeps every addend: 1 + 4 * 2^-24.
  EXPECT_EQ(run(T4_32, 1, {1, 1, 1, 1}, {p2(-24), p2(-24), p2(-24), p2(-24)}), s(1 + p2(-22)));
}

// ---- Valpey, Li, Pai, Gopalakrishnan, "An SMT formalization of mixed-precision matrix multiplication".

TEST(Valpey, Table1ProductsAreExact) {
  // The table prints binary16 subnormals as (1 + f/1024) * 2^-15: a = 1.2587890625 * 2^-15 is the
  // encoding 0x0109 (265 * 2^-24); b = 1.3681640625 * 2^-1. Hardware: the exact product
  // 1.4162635803222656 * 2^-17 (= 265 * 1401 * 2^-34), not its binary16 rounding.
  const double a = 265 * p2(-24), b = 1.3681640625 * p2(-1);
  EXPECT_EQ(h(a), 0x0109u);
  const double exact = 1.4162635803222656 * p2(-17);
  EXPECT_EQ(a * b, exact);
  for (const char* id : {V100_32, T4_32}) EXPECT_EQ(run(id, 0, {a, 0, 0, 0}, {b, 0, 0, 0}), s(exact)) << id;
  EXPECT_EQ(run(A100_32, 0, {a, 0, 0, 0, 0, 0, 0, 0}, {b, 0, 0, 0, 0, 0, 0, 0}), s(exact));
}

TEST(Valpey, Table3TruncationIsNotRoundTowardZero) {
  // a = 2^1, c = -2^-40, b = 1: IEEE RZ gives 2 - 2^-23, the tensor cores give 2 (the shifted-out
  // bits of c are dropped).
  Options rz;
  rz.rounding = Rounding::rz;
  EXPECT_EQ(add(binary32, rz, s(2), s(-p2(-40))).bits, s(2 - p2(-23)));
  for (const char* id : {V100_32, T4_32}) EXPECT_EQ(run(id, -p2(-40), {2, 0, 0, 0}, {1, 0, 0, 0}), s(2)) << id;
  EXPECT_EQ(run(A100_32, -p2(-40), {2, 0, 0, 0, 0, 0, 0, 0}, {1, 0, 0, 0, 0, 0, 0, 0}), s(2));
}

TEST(Valpey, Table5MarkidisBeatsOotomoYokota) {
  // Table 5 and its walk-through: the tensor core (Volta, 5-term adder) sums a1b1 = 1 - 2^-20,
  // a2b2 = 1.9154... * 2^-21 (truncated: 1 - 2^-24 so far), 2^-24, 2^-24. Markidis et al. add
  // c = 2^-24 inside the tensor core: 1 + 2^-23. Ootomo and Yokota add c outside, in binary32
  // with round to nearest, after the tensor core has rounded 1 + 2^-24 toward zero: 1.0.
  // (The transcription prints b1 = 1.998046875 * 2^-7; the walk-through's largest exponent -1
  // needs 2^7, as a1 = 1.0009765625 * 2^-8.)
  const std::vector<double> a = {1.0009765625 * p2(-8), 1.326171875 * p2(-14), p2(-12), p2(-12)};
  const std::vector<double> b = {1.998046875 * p2(7), 1.4443359375 * p2(-7), p2(-12), p2(-12)};
  const double c = p2(-24);
  double exact = c;
  for (std::size_t k = 0; k < 4; ++k) exact += a[k] * b[k];  // exact in binary64
  EXPECT_EQ(s(double(float(exact))), s(1 + p2(-23)));        // "True": 1 + 2^-23
  for (const char* id : {V100_32, T4_32}) {
    const std::uint64_t markidis = run(id, c, a, b);
    const std::uint64_t tc = run(id, 0, a, b);
    const std::uint64_t ootomo = add(binary32, Options{}, tc, s(c)).bits;
    EXPECT_EQ(markidis, s(1 + p2(-23))) << id;
    EXPECT_EQ(tc, s(1)) << id;
    EXPECT_EQ(ootomo, s(1)) << id;
  }
}

// ---- MMA-Sim (Xie et al.), sections IV and VI.

TEST(MmaSim, CanonicalNvidiaNanAndInfinities_IV_C) {
  const double inf = INFINITY, nan = NAN;
  EXPECT_EQ(run("hopper:HMMA.16816.F32", 0, {nan}, {1}), 0x7FFFFFFFu);
  EXPECT_EQ(run("hopper:HMMA.16816.F16", 0, {nan}, {1}), 0x7FFFu);
  EXPECT_EQ(run("hopper:HMMA.16816.F32", 0, {0}, {inf}), 0x7FFFFFFFu);         // 0 * inf
  EXPECT_EQ(run("hopper:HMMA.16816.F32", -inf, {1}, {inf}), 0x7FFFFFFFu);      // inf - inf
  EXPECT_EQ(run("hopper:HMMA.16816.F32", 1, {-1, 1}, {inf, 2}), 0xFF800000u);  // one infinity
  EXPECT_EQ(run("ampere:HMMA.16816.F32", nan, {1}, {1}), 0x7FFFFFFFu);         // NaN c
  // Products never overflow on NVIDIA: bf16 2^127 * 2^127 - 2^127 * 2^127 + 1 cancels to 0 (c is
  // aligned 254 binades up and truncated away), where CDNA3 gives NaN.
  EXPECT_EQ(run("hopper:HMMA.16816.F32.BF16", 1, {p2(127), p2(127)}, {p2(127), -p2(127)}), s(0));
  // A binary32 result of 2^128 or more is infinite even though the final rounding is RZ.
  EXPECT_EQ(run("hopper:HMMA.16816.F32.BF16", 0, {p2(127), p2(0)}, {p2(1), 0}), 0x7F800000u);
  EXPECT_EQ(run("hopper:HMMA.16816.F32", p2(127) * (2 - p2(-23)), {p2(15)}, {p2(15)}), 0x7F7FFFFFu);
}

TEST(MmaSim, Tf32LowBitsIgnored_IV_C) {
  // TF32 inputs keep 10 fraction bits of the 32-bit container: 0x7F800001 (a binary32 NaN) reads
  // as +inf, and 1 + 2^-23 reads as 1.
  const Dot& d = instr("hopper:HMMA.1688.F32.TF32");
  const std::vector<std::uint64_t> one(8, 0x3F800000u), zeros(8, 0);
  std::vector<std::uint64_t> a = zeros;
  a[0] = 0x7F800001u;
  EXPECT_EQ(d(0, a, one), 0x7F800000u);
  a[0] = 0x3F800001u;
  EXPECT_EQ(d(0, a, one), 0x3F800000u);
}

TEST(MmaSim, QgmmaKeepsThirteenFractionBits_IV_C) {
  // Hopper QGMMA (F = 13): 1 + 2^-13 survives, 1 + 2^-14 does not; the output is RZ at 13 bits.
  const char* id = "hopper:QGMMA.64x8x32.F32.E4M3.E4M3";
  EXPECT_EQ(run(id, 0, {1, p2(-7)}, {1, p2(-6)}), s(1 + p2(-13)));
  EXPECT_EQ(run(id, 0, {1, p2(-7)}, {1, p2(-7)}), s(1));
  EXPECT_EQ(run(id, 1 + p2(-14), {0}, {0}), s(1));  // binary32 c rounded to 13 fraction bits
}

TEST(MmaSim, MxScaleFactors_IV_C) {
  // RTX Blackwell QMMA.SF with ue8m0 scales: the scale exponents add to the product exponents.
  const MmaInstruction* i = find_mma_instruction("rtx-blackwell:QMMA.SF.16832.F32.E4M3.E4M3.E8");
  ASSERT_NE(i, nullptr);
  const Dot d(i->config);
  std::vector<std::uint64_t> a(32, 0), b(32, 0);
  a[0] = enc(e4m3, 1.5);
  b[0] = enc(e4m3, 2);
  const std::uint64_t sa[] = {127 + 3}, sb[] = {127 - 5};  // 2^3 * 2^-5
  EXPECT_EQ(d(0, a, b, sa, sb), s(3 * p2(-2)));
  const std::uint64_t nan[] = {0xFF};
  EXPECT_EQ(d(0, a, b, nan, sb), 0x7FFFFFFFu);  // NaN scale factor
}

TEST(MmaSim, GdfsNvfp4_IV_E) {
  const MmaInstruction* i = find_mma_instruction("rtx-blackwell:OMMA.SF.16864.F32.E2M1.E2M1.UE4M3.4X");
  ASSERT_NE(i, nullptr);
  const Dot d(i->config);
  std::vector<std::uint64_t> a(64, 0), b(64, 0);
  a[0] = enc(e2m1, 6);
  b[0] = enc(e2m1, 1.5);  // product 9 in group 0, scales 1.5 * 2: 27
  a[20] = enc(e2m1, 0.5);
  b[20] = enc(e2m1, -3);  // product -1.5 in group 1, scales 1 * 1: -1.5
  const std::uint64_t sa[] = {enc(ue4m3, 1.5), enc(ue4m3, 1), 0x38, 0x38};
  const std::uint64_t sb[] = {enc(ue4m3, 2), enc(ue4m3, 1), 0x38, 0x38};
  EXPECT_EQ(d(s(0.25), a, b, sa, sb), s(27 - 1.5 + 0.25));
  // The UE4M3 sign bit is ignored (UE4M3 truncation, step 0).
  const std::uint64_t sa_msb[] = {enc(ue4m3, 1.5) | 0x80, enc(ue4m3, 1) | 0x80, 0xB8, 0xB8};
  EXPECT_EQ(d(s(0.25), a, b, sa_msb, sb), s(27 - 1.5 + 0.25));
  // A NaN scale factor or c gives the canonical NaN; an infinite c is the result.
  const std::uint64_t sa_nan[] = {0x7F, 0x38, 0x38, 0x38};
  EXPECT_EQ(d(0, a, b, sa_nan, sb), 0x7FFFFFFFu);
  EXPECT_EQ(d(0xFF800000u, a, b, sa, sb), 0xFF800000u);
}

TEST(MmaSim, Cdna3RoundsDownOnAlignment_VI_C) {
  // v_mfma_f32_32x32x8_f16 with a0 = a1 = b0 = 2048, b1 = -2048, c = -0.000001: c is rounded down
  // to -2^-2 in step 6 of FDRDA, so the result is -0.25.
  const double c = double(-0.000001f);
  const std::vector<double> a = {2048, 2048, 0, 0, 0, 0, 0, 0}, b = {2048, -2048, 0, 0, 0, 0, 0, 0};
  EXPECT_EQ(run("cdna3:v_mfma_f32_32x32x8_f16", c, a, b), s(-0.25));
  // The hypothetical v_mfma_f32_32x32x8_f16_rz (RZ instead of RD) and instructions that round
  // toward zero or to nearest give 0.0.
  DotConfig rz = find_mma_instruction("cdna3:v_mfma_f32_32x32x8_f16")->config;
  rz.round_down_alignment = false;
  std::vector<std::uint64_t> ab, bb;
  for (double x : a) ab.push_back(h(x));
  for (double x : b) bb.push_back(h(x));
  EXPECT_EQ(dot(rz, s(c), ab, bb), s(0));
  EXPECT_EQ(run("hopper:HMMA.1688.F32", c, a, b), s(0));
  EXPECT_EQ(run("volta:HMMA.884.F32.F32", c, {2048, 2048, 0, 0}, {2048, -2048, 0, 0}), s(0));
  // FP8 (GFDRDA) has the patch: c far below the dot product (e_c < e_max - 25) is rounded toward
  // zero, so the same computation gives 0.0 (fp8 = e4m3fnuz: 16 * 16 - 16 * 16).
  const std::vector<double> a8 = {16, 16, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
  const std::vector<double> b8 = {16, -16, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
  EXPECT_EQ(run("cdna3:v_mfma_f32_32x32x16_fp8_fp8", c, a8, b8), s(0));
  // Within 25 binades c is rounded down at 24 fraction bits; beyond, toward zero.
  EXPECT_EQ(run("cdna3:v_mfma_f32_32x32x16_fp8_fp8", -(p2(-20) + p2(-30)), {1, 0}, {1, 0}), s(1 - p2(-20) - p2(-24)));
  EXPECT_EQ(run("cdna3:v_mfma_f32_32x32x16_fp8_fp8", -p2(-30), {1, 0}, {1, 0}), s(1));
  EXPECT_EQ(run("cdna3:v_mfma_f32_32x32x8_f16", -p2(-30), {1, 0}, {1, 0}), s(1 - p2(-24)));
}

TEST(MmaSim, Cdna3RoundingDownBiasesTheResult_VI_C_Figure2) {
  // Figure 2: C ~ N(0, 1), A and B ~ 1000 N(0, 1) through v_mfma_f32_32x32x8_f16 and through the
  // hypothetical RZ variant; the deviation from the binary64 result is biased negative with RD
  // and centred with RZ.
  const MmaInstruction& ins = *find_mma_instruction("cdna3:v_mfma_f32_32x32x8_f16");
  DotConfig rz_cfg = ins.config;
  rz_cfg.round_down_alignment = false;
  const Dot rd(ins.config), rz(rz_cfg);
  std::mt19937_64 rng(2025);
  std::normal_distribution<double> normal;
  double sum_rd = 0, sum_rz = 0;
  constexpr int kSamples = 20000;
  for (int n = 0; n < kSamples; ++n) {
    std::vector<std::uint64_t> a(8), b(8);
    const float c = float(normal(rng));
    double real = c;
    for (int k = 0; k < 8; ++k) {
      const auto x = _Float16(1000 * normal(rng)), y = _Float16(1000 * normal(rng));
      a[std::size_t(k)] = std::bit_cast<std::uint16_t>(x);
      b[std::size_t(k)] = std::bit_cast<std::uint16_t>(y);
      real += double(x) * double(y);
    }
    const std::uint64_t cb = std::bit_cast<std::uint32_t>(c);
    sum_rd += double(std::bit_cast<float>(std::uint32_t(rd(cb, a, b)))) - real;
    sum_rz += double(std::bit_cast<float>(std::uint32_t(rz(cb, a, b)))) - real;
  }
  const double mean_rd = sum_rd / kSamples, mean_rz = sum_rz / kSamples;
  EXPECT_LT(mean_rd, -0.005) << "mean deviation with RD " << mean_rd;
  EXPECT_LT(std::abs(mean_rz), std::abs(mean_rd) / 5) << "mean deviation with RZ " << mean_rz << ", RD " << mean_rd;
}

TEST(MmaSim, Cdna3ProductsOverflow_VI_B) {
  // bf16 2^127 * 2^127 overflows to infinity on CDNA3 (FDRDA step 2), not on NVIDIA.
  const std::vector<double> a = {p2(127), p2(127), 0, 0, 0, 0, 0, 0}, b = {p2(127), -p2(127), 0, 0, 0, 0, 0, 0};
  EXPECT_EQ(run("cdna3:v_mfma_f32_32x32x8_bf16", 1, a, b), 0x7FC00000u);  // +inf and -inf: NaN
  EXPECT_EQ(run("cdna3:v_mfma_f32_32x32x8_bf16", 1, {p2(127), 0}, {p2(127), 0}), 0x7F800000u);
  EXPECT_EQ(run("ampere:HMMA.16816.F32.BF16", 1, a, b), s(0));
}

TEST(MmaSim, Cdna2FlushesSubnormals_IV_B_and_VI_B) {
  const char* id = "cdna2:v_mfma_f32_32x32x8_f16";
  // Subnormal binary16 inputs are flushed: 2^-24 * 1 = 0.
  EXPECT_EQ(run(id, 0, {p2(-24), 0, 0, 0, 0, 0, 0, 0}, {1, 0, 0, 0, 0, 0, 0, 0}), s(0));
  // A subnormal binary32 c is flushed to +0; products below 2^-126 keep only their sign.
  EXPECT_EQ(run(id, p2(-130), {0, 0, 0, 0, 0, 0, 0, 0}, {0, 0, 0, 0, 0, 0, 0, 0}), s(0));
  EXPECT_EQ(run("cdna2:v_mfma_f32_32x32x8_bf16", -0.0, {-p2(-70)}, {p2(-60)}), 0x80000000u);
  // Pairwise sums within a group of 4, rounded to nearest in binary32: (2^-24 + 2^-24) + (1 + 0).
  EXPECT_EQ(run(id, 0, {p2(-12), p2(-12), 1, 0, 0, 0, 0, 0}, {p2(-12), p2(-12), 1, 0, 0, 0, 0, 0}), s(1 + p2(-23)));
  EXPECT_EQ(run(id, 0, {1, p2(-12), p2(-12), 0, 0, 0, 0, 0}, {1, p2(-12), p2(-12), 0, 0, 0, 0, 0}), s(1));
  // ... but added to c one group sum at a time: c = 1, then 2^-24 + 2^-24 and 0.
  EXPECT_EQ(run(id, 1, {p2(-12), p2(-12), 0, 0, 0, 0, 0, 0}, {p2(-12), p2(-12), 0, 0, 0, 0, 0, 0}), s(1 + p2(-23)));
  EXPECT_EQ(run(id, 1, {p2(-12), 0, 0, 0, p2(-12), 0, 0, 0}, {p2(-12), 0, 0, 0, p2(-12), 0, 0, 0}), s(1));
}

// ---- CDNA1 (MI100): MMA-Sim's later code and Khattak and Mikaitis's MI100 model.

TEST(MmaSim, Cdna1KeepsSubnormalsAndSumsEachGroupExactly) {
  const char* f16 = "cdna1:v_mfma_f32_32x32x8f16";
  const char* cdna2 = "cdna2:v_mfma_f32_32x32x8_f16";
  const std::vector<double> one = {1, 0, 0, 0, 0, 0, 0, 0};
  // A subnormal binary16 input: 2^-24 * 1 = 2^-24 (0x33800000) on CDNA1, flushed to 0 on CDNA2.
  EXPECT_EQ(run(f16, 0, {p2(-24), 0, 0, 0, 0, 0, 0, 0}, one), 0x33800000u);
  EXPECT_EQ(run(cdna2, 0, {p2(-24), 0, 0, 0, 0, 0, 0, 0}, one), 0u);
  // Two: 2^-24 * 2^-24 = 2^-48 (0x27800000).
  EXPECT_EQ(run(f16, 0, {p2(-24), 0, 0, 0, 0, 0, 0, 0}, {p2(-24), 0, 0, 0, 0, 0, 0, 0}), 0x27800000u);
  // A bf16 product below 2^-126: -2^-70 * 2^-60 = -2^-130, the binary32 subnormal 0x80080000;
  // CDNA2 flushes it (to -0, which the +0 product beside it makes +0).
  EXPECT_EQ(run("cdna1:v_mfma_f32_32x32x4bf16", -0.0, {-p2(-70), 0, 0, 0}, {p2(-60), 0, 0, 0}), 0x80080000u);
  EXPECT_EQ(run("cdna2:v_mfma_f32_32x32x4bf16", -0.0, {-p2(-70), 0, 0, 0}, {p2(-60), 0, 0, 0}), 0u);
  // A subnormal c (2^-130, 0x00080000) is kept; CDNA2 flushes it.
  EXPECT_EQ(run(f16, p2(-130), std::vector<double>(8, 0), std::vector<double>(8, 0)), 0x00080000u);
  EXPECT_EQ(run(cdna2, p2(-130), std::vector<double>(8, 0), std::vector<double>(8, 0)), 0u);
  // A subnormal result: 2^-126 - 2^-127 * 1 = 2^-127 (0x00400000), the bf16 subnormal 2^-127 kept;
  // CDNA2 flushes the input, leaving 2^-126 (0x00800000).
  EXPECT_EQ(run("cdna1:v_mfma_f32_32x32x2bf16", p2(-126), {-p2(-127), 0}, {1, 0}), 0x00400000u);
  EXPECT_EQ(run("cdna2:v_mfma_f32_32x32x2bf16", p2(-126), {-p2(-127), 0}, {1, 0}), 0x00800000u);
  // A group of 4 is summed exactly and rounded once: 1 + 2^-24 + 2^-24 = 1 + 2^-23 (0x3F800001),
  // where CDNA2's pairwise sums round 1 + 2^-24 to 1 (a tie, to even) first.
  const std::vector<double> x = {1, p2(-12), p2(-12), 0, 0, 0, 0, 0};
  EXPECT_EQ(run(f16, 0, x, x), 0x3F800001u);
  EXPECT_EQ(run(cdna2, 0, x, x), 0x3F800000u);
  // c joins the first group; the groups follow one another, each rounded: 2^-24 in one group
  // and in the next meets 1 twice and is lost twice (0x3F800000); in one group, 0x3F800001.
  const std::vector<double> apart = {p2(-12), 0, 0, 0, p2(-12), 0, 0, 0};
  const std::vector<double> together = {p2(-12), p2(-12), 0, 0, 0, 0, 0, 0};
  EXPECT_EQ(run(f16, 1, apart, apart), 0x3F800000u);
  EXPECT_EQ(run(f16, 1, together, together), 0x3F800001u);
  // bf16: groups of 2.
  const char* bf16 = "cdna1:v_mfma_f32_16x16x8bf16";
  const std::vector<double> pair = {p2(-12), p2(-12), 0, 0, 0, 0, 0, 0}, split = {p2(-12), 0, p2(-12), 0, 0, 0, 0, 0};
  EXPECT_EQ(run(bf16, 1, pair, pair), 0x3F800001u);
  EXPECT_EQ(run(bf16, 1, split, split), 0x3F800000u);
}

TEST(MmaSim, Cdna1Fp32IsAnFmaChain) {
  // (1 + 2^-12)^2 - 1 = 2^-11 + 2^-24 exactly (0x3A000400): the product is not rounded (rounded
  // first, 1 + 2^-11 + 2^-24 is a tie that goes to 1 + 2^-11, leaving 2^-11).
  EXPECT_EQ(run("cdna1:v_mfma_f32_32x32x2f32", -1, {1 + p2(-12), 0}, {1 + p2(-12), 0}), 0x3A000400u);
  EXPECT_EQ(run("cdna1:v_mfma_f32_4x4x1f32", -1, {1 + p2(-12)}, {1 + p2(-12)}), 0x3A000400u);
  // One product after the other: 1 + 2^-24 rounds to 1 before the second 2^-24 comes (0x3F800000;
  // summed at once, 1 + 2^-23).
  EXPECT_EQ(run("cdna1:v_mfma_f32_32x32x2f32", 1, {p2(-12), p2(-12)}, {p2(-12), p2(-12)}), 0x3F800000u);
  EXPECT_EQ(run("cdna1:v_mfma_f32_16x16x4f32", 1, {p2(-12), p2(-12), 0, 0}, {p2(-12), p2(-12), 0, 0}), 0x3F800000u);
}

// NVIDIA (cutlass issue 1986): Hopper runs fp8 mma.sync by converting the inputs to binary16 and
// running HMMA.16816, twice for K = 32. The table's emulated rows are that composition, checked
// here by composing it: random fp8 inputs over their whole finite range (subnormals and zeros
// included), converted, through HMMA.16816's row, the first result the second's c.
TEST(Nvidia, HopperFp8MmaSyncIsHmmaOnConvertedInputs) {
  std::mt19937_64 rng(1986);
  int rows = 0;
  for (const MmaInstruction& row : all_mma_instructions()) {
    if (!row.emulated) continue;
    ++rows;
    const DotConfig& cfg = row.config;
    const Dot& hmma = instr(cfg.d == &binary32 ? "hopper:HMMA.16816.F32" : "hopper:HMMA.16816.F16");
    const Dot emulated(cfg);
    const auto finite = [&](const Format& f) {  // any encoding but NaN and infinity
      for (;;)
        if (const std::uint64_t x = rng() & f.storage_mask(); (cvt(binary16, f, Options{}, x).bits & 0x7c00) != 0x7c00)
          return x;
    };
    for (int t = 0; t < 2000; ++t) {
      std::vector<std::uint64_t> a(std::size_t(row.k)), b(std::size_t(row.k)), a16, b16;
      for (auto& x : a) x = finite(*cfg.a);
      for (auto& x : b) x = finite(*cfg.b);
      for (const std::uint64_t x : a) a16.push_back(cvt(binary16, *cfg.a, Options{}, x).bits);
      for (const std::uint64_t x : b) b16.push_back(cvt(binary16, *cfg.b, Options{}, x).bits);
      const std::uint64_t c =
          cvt(*cfg.c, binary64, Options{},
              std::bit_cast<std::uint64_t>(std::ldexp(double(rng() % 2000) - 1000.0, int(rng() % 20) - 14)))
              .bits;
      std::uint64_t d = c;
      for (int k0 = 0; k0 < row.k; k0 += 16)
        d = hmma(d, std::span(a16).subspan(std::size_t(k0), 16), std::span(b16).subspan(std::size_t(k0), 16));
      ASSERT_EQ(emulated(c, a, b), d) << row.id() << " tile " << t;
    }
  }
  EXPECT_EQ(rows, 16);
}

}  // namespace
}  // namespace gp::model
