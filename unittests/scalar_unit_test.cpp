// The scalar unit models: Daumas, da Graca and Defour's experiments reproduced on the built-in
// historical units ([DGD] = Daumas, da Graca and Defour, SympA 2006; App. A its GPU Paranoia log of the
// 7800GTX), the paper's multiplier tests separating the parameters, IEEE units equal to
// model/ops.hpp, and the subnormal, NaN and transfer policies.
// Random cases use a fixed seed (GPUPARANOIA_SEED overrides it), printed on failure.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdlib>
#include <map>
#include <random>
#include <set>
#include <span>
#include <vector>

#include "model/scalar_unit.hpp"
#include "unittests/drawn_seed.hpp"

namespace gp::model {
namespace {

std::uint64_t seed() { return testing::drawn_seed(20260611); }

std::uint64_t f32(float x) { return std::bit_cast<std::uint32_t>(x); }
float as_float(std::uint64_t b) { return std::bit_cast<float>(std::uint32_t(b)); }
std::uint64_t neg32(std::uint64_t b) { return b ^ 0x80000000u; }

const float U2 = std::ldexp(1.0f, -23), U1 = std::ldexp(1.0f, -24);  // Paranoia's ulps above and below 1

// A binary32 multiplier with chop and the given truncation, on its own.
std::uint64_t tmul(int t, std::uint64_t correction, std::uint64_t a, std::uint64_t b) {
  return multiplier_mul(binary32, {UnitRounding::chopped(), t, correction}, Options{}, a, b).bits;
}

// --- [DGD] 2.3: the adders ------------------------------------------------------------------

// The smallest i in 1..64 from which `pred(i)` holds for every larger i, or 0 if it never does.
template <class P>
int threshold(P pred) {
  int from = 0;
  for (int i = 64; i >= 1 && pred(i); --i) from = i;
  return from;
}

TEST(ScalarUnitPaper, AdderGuardBitsOnOnePointFive) {
  const std::uint64_t x = f32(1.5f);
  auto first = [&](const ScalarUnit& u, Adder which) {
    return threshold([&](int i) { return unit_sub(u, x, f32(std::ldexp(1.0f, -i)), which).bits == x; });
  };
  auto cascade = [&](const ScalarUnit& u) {
    return threshold([&](int i) {
      const std::uint64_t y = unit_sub(u, x, f32(std::ldexp(1.0f, -i)), Adder::cascaded_first).bits;
      return unit_sub(u, y, x).bits == 0;
    });
  };
  // NVIDIA: 1.5 - 2^-i == 1.5 for i >= 26, and (1.5 - 2^-i) - 1.5 == 0 for i >= 26.
  EXPECT_EQ(first(nvidia_g70(), Adder::single), 26);
  EXPECT_EQ(cascade(nvidia_g70()), 26);
  // ATI: a lone subtraction as NVIDIA's, the cascaded pair from i >= 25 (one guard bit).
  EXPECT_EQ(first(ati_r520(), Adder::single), 26);
  EXPECT_EQ(cascade(ati_r520()), 25);
  // A correctly rounded unit: 1.5 - 2^-24 is a tie, to even 1.5; from i = 25 the sum is 1.5.
  EXPECT_EQ(first(ieee_unit(binary32), Adder::single), 24);

  // The threshold as a function of the parameters: chop without sticky gives 24 + g; a sticky bit
  // makes the chopped subtraction round toward zero, never 1.5; rne sees the tie at i = 24.
  for (int g = 0; g <= 6; ++g) {
    const AdderParams chop{UnitRounding::chopped(), g, false}, chop_sticky{UnitRounding::chopped(), g, true};
    const AdderParams rne{UnitRounding::ieee(Rounding::rne), g, false};
    auto t = [&](const AdderParams& p) {
      return threshold(
          [&](int i) { return adder_sub(binary32, p, Options{}, x, f32(std::ldexp(1.0f, -i))).bits == x; });
    };
    EXPECT_EQ(t(chop), 24 + g) << "g " << g;
    EXPECT_EQ(t(chop_sticky), 0) << "g " << g;
    EXPECT_EQ(t(rne), 24) << "g " << g;
  }
  // With a sticky bit the chopped result is 1.5 - 2^-23, an ulp below, for every i >= 24.
  const AdderParams sticky2{UnitRounding::chopped(), 2, true};
  for (int i = 24; i <= 64; ++i)
    EXPECT_EQ(adder_sub(binary32, sticky2, Options{}, x, f32(std::ldexp(1.0f, -i))).bits, f32(1.5f - U2)) << i;
}

TEST(ScalarUnitPaper, AdderGuardBitsAndCancellation) {
  const ScalarUnit g70 = nvidia_g70();
  // One guard bit at least: a difference of neighbours across a binade is exact.
  EXPECT_EQ(unit_sub(g70, f32(1.0f), f32(1.0f - U1)).bits, f32(U1));
  // Without a guard bit (R300-style, binary32 here) the subtrahend loses its last bit.
  const AdderParams g0{UnitRounding::chopped(), 0, false};
  EXPECT_EQ(adder_sub(binary32, g0, Options{}, f32(1.0f), f32(1.0f - U1)).bits, f32(U2));
  // Addition is chopped: error in [-1, 0] ulp (App. A), 1 + 0.75 ulp -> 1.
  EXPECT_EQ(unit_add(g70, f32(1.0f), f32(0.75f * U2)).bits, f32(1.0f));
  EXPECT_EQ(unit_add(g70, f32(-1.0f), f32(-0.75f * U2)).bits, f32(-1.0f));
  // App. A "EXTRA ADDITION/SUBTRACTION TESTS": 1-U1 < 1, 1-F9*U1 = F9, 1-F9*0.5*U1 = 1.
  const float F9 = 1.0f - U1;
  EXPECT_EQ(unit_sub(g70, f32(1.0f), f32(U1)).bits, f32(F9));
  EXPECT_EQ(unit_sub(g70, f32(1.0f), f32(F9 * U1)).bits, f32(F9));
  EXPECT_EQ(unit_sub(g70, f32(1.0f), f32(F9 * 0.5f * U1)).bits, f32(1.0f));
  // (App. A also prints 1-0.5*U1 = 1, where two guard bits give F9: see nvidia_g70().)
  EXPECT_EQ(unit_sub(g70, f32(1.0f), f32(0.5f * U1)).bits, f32(F9));
}

TEST(ScalarUnitPaper, RegisterPrecisionAndRange) {
  // [DGD] 2.1: (MAX + MAX) - MAX and (1.5 - 2^-i) + 2^-i through the registers, on the G70 and on
  // a G70 whose registers had 8 more fraction bits and 3 more exponent bits than its storage.
  static constexpr Format reg{
      "binary32-ext",   11, 31, 1023, 64, 0, Signedness::sign_bit, Infinity::ieee, NanStyle::ieee, Subnormals::gradual,
      Zero::signed_zero};
  const ScalarUnit plain = nvidia_g70();
  ScalarUnit wide = plain;
  wide.format = &reg;
  wide.storage = &binary32;
  ASSERT_EQ(check(wide), "");
  auto range = [](const ScalarUnit& u) {
    const std::uint64_t m = unit_load(u, 0x7f7fffff).bits;
    return unit_store(u, unit_sub(u, unit_add(u, m, m).bits, m).bits).bits;
  };
  EXPECT_EQ(range(plain), 0u);                         // chopped, MAX + MAX overflows to MAX; minus MAX is 0
  EXPECT_EQ(range(ieee_unit(binary32)), 0x7f800000u);  // rounded to nearest, to infinity
  EXPECT_EQ(range(wide), 0x7f7fffffu);                 // the register holds 2 MAX
  // The i for which (1.5 - 2^-i) + 2^-i is not 1.5: those where 1.5 - 2^-i is neither exact nor
  // dropped, the two guard bits just below the register's precision.
  auto inexact = [](const ScalarUnit& u) {
    std::vector<int> is;
    for (int i = 1; i <= 64; ++i) {
      const std::uint64_t x = unit_load(u, f32(1.5f)).bits, p = unit_load(u, f32(std::ldexp(1.0f, -i))).bits;
      if (unit_store(u, unit_add(u, unit_sub(u, x, p).bits, p).bits).bits != f32(1.5f)) is.push_back(i);
    }
    return is;
  };
  EXPECT_EQ(inexact(plain), (std::vector<int>{24, 25}));
  EXPECT_EQ(inexact(wide), (std::vector<int>{32, 33}));
}

// --- [DGD] 2.2: the multipliers -------------------------------------------------------------

TEST(ScalarUnitPaper, ParanoiaMultiplicationResultsOfTheG70) {
  // App. A, "MULTIPLICATION ROUNDING TESTS": operands and the result the 7800GTX gave.
  const float h = 1.5f;
  struct Row {
    float a, b, out;
  };
  const Row rows[] = {
      {h - U2, 1 + U2, h + U2},          // "-> 1.5 test: failed": rounds up
      {h + 2 * U2, 1 - U2, h},           // passed
      {h - 2 * U2, 1 + U2, h},           // "-> 1.5-U2 test: failed": rounds up
      {h + U2, 1 - U2, h - U2},          // passed
      {h + U2, 1 + U2, h + 3 * U2},      // "up to 1.5+3*U2"
      {h - 2 * U2, 1 - U2, h - 4 * U2},  // "Rounded to 1.5-4*U2"
      {h + 2 * U2, 1 + U2, h + 4 * U2},  // "up to 1.5+4*U2"
      {h - U2, 1 - U2, h - 3 * U2},      // "Rounded to 1.5-3*U2"
      {1 + 2 * U2, 1 - U2, 1 + U2},      // "Rounded to 1.0+1*U2"
      {1 + U2, 1 - U2, 1.0f},            // "up to 1"
  };
  const ScalarUnit g70 = nvidia_g70();
  for (const Row& r : rows) {
    EXPECT_EQ(unit_mul(g70, f32(r.a), f32(r.b)).bits, f32(r.out)) << r.a << " * " << r.b;
    EXPECT_EQ(unit_mul(g70, f32(r.b), f32(r.a)).bits, f32(r.out)) << r.b << " * " << r.a;
  }
  // With 6 columns, exactly the corrections 33..64 reproduce all ten: more than half an ulp.
  auto all_hold = [&](std::uint64_t c) {
    for (const Row& r : rows)
      if (tmul(6, c, f32(r.a), f32(r.b)) != f32(r.out)) return false;
    return true;
  };
  EXPECT_FALSE(all_hold(32));
  EXPECT_TRUE(all_hold(33));
  EXPECT_TRUE(all_hold(64));
  EXPECT_FALSE(all_hold(65));
  // Chopped exact products (correction 0, every column) fail the rounded-up rows.
  EXPECT_FALSE(all_hold(0));
  // App. A's measured maximum error, +0.625 ulp, is reached by 1.375 * (1+U2) with correction 40.
  const double err = (double(as_float(unit_mul(g70, f32(1.375f), f32(1 + U2)).bits)) - 1.375 * (1 + double(U2))) / U2;
  EXPECT_EQ(err, 0.625);
}

// The sequence of [DGD] 2.2: y1 = 1, y2i = y2i-1 + 1, y2i+1 = 4 y2i-1 + 2 (24 values, all < 2^23).
std::vector<float> column_sequence() {
  std::vector<std::uint32_t> y = {1};
  while (y.size() < 24) y.push_back(y.size() % 2 == 1 ? y.back() + 1 : 4 * y[y.size() - 2] + 2);
  return {y.begin(), y.end()};
}

std::vector<std::uint64_t> column_test(int t, std::uint64_t correction) {
  std::vector<std::uint64_t> out;
  for (float y : column_sequence()) out.push_back(tmul(t, correction, f32(8388611.0f), f32(y)));  // 2^23 + 3
  return out;
}

TEST(ScalarUnitPaper, MultiplierColumnTestSeparatesTruncatedColumns) {
  const std::vector<float> y = column_sequence();
  EXPECT_EQ(y[1], 2.0f);
  EXPECT_EQ(y[2], 6.0f);
  EXPECT_EQ(y[3], 7.0f);
  EXPECT_EQ(y[23], 6990507.0f);
  // Without a correction, the 24 products separate t = 0..22 into {0}, {1,2}, {3,4}, ..., {21,22}:
  // the sequence moves its lowest bits down two columns per pair of values.
  std::map<std::vector<std::uint64_t>, std::vector<int>> classes;
  for (int t = 0; t <= 22; ++t) classes[column_test(t, 0)].push_back(t);
  ASSERT_EQ(classes.size(), 12u);
  for (const auto& [sig, ts] : classes) {
    ASSERT_LE(ts.size(), 2u);
    if (ts.size() == 2) {
      EXPECT_TRUE(ts[0] % 2 == 1 && ts[1] == ts[0] + 1) << ts[0];
    }
  }
  // Every generated column is the exact product: t = 23 (all columns) equals model::mul (rz).
  for (float v : y)
    EXPECT_EQ(tmul(23, 0, f32(8388611.0f), f32(v)), mul(binary32, Options{Rounding::rz}, f32(8388611.0f), f32(v)).bits);
  // A correction of one unit of the lowest column or more restores the carry the test looks for:
  // with the G70's constant (0.625 ulp) every t >= 1 gives the same products, so the column test
  // alone cannot see t there (random products can: MultiplierRandomProductsSeparateColumns).
  auto g70_constant = [](int t) { return (std::uint64_t{5} << 20) >> (23 - t); };  // 0.625 ulp
  for (int t = 2; t <= 22; ++t) EXPECT_EQ(column_test(t, g70_constant(t)), column_test(1, g70_constant(1))) << t;
  // The two historical units differ on it.
  std::vector<std::uint64_t> g70, r520;
  for (float v : y) {
    g70.push_back(unit_mul(nvidia_g70(), f32(8388611.0f), f32(v)).bits);
    r520.push_back(unit_mul(ati_r520(), f32(8388611.0f), f32(v)).bits);
  }
  EXPECT_NE(g70, r520);
}

// (2^23 + 1) * (2i + 1) for 0 < i < 2^23, sampled every `stride` values of i.
std::vector<std::uint64_t> constant_test(int t, std::uint64_t correction, int stride) {
  std::vector<std::uint64_t> out;
  for (int i = 1; i < (1 << 23); i += stride)
    out.push_back(tmul(t, correction, f32(8388609.0f), f32(float(2 * i + 1))));
  return out;
}

TEST(ScalarUnitPaper, MultiplierConstantTestRevealsTheCorrection) {
  // t = 6 (NVIDIA): every correction 0..128 gives its own products; t = 9 (ATI): 0..1024.
  for (int t : {6, 9}) {
    std::set<std::vector<std::uint64_t>> seen;
    const std::uint64_t top = std::uint64_t{2} << t;
    for (std::uint64_t c = 0; c <= top; ++c) seen.insert(constant_test(t, c, 1 << (20 - t)));
    EXPECT_EQ(seen.size(), top + 1) << "t " << t;
  }
  // The exact product (2i+1)(2^23+1) = (2i+1) 2^23 + (2i+1) never carries into the result: chopped,
  // it is the 24 high bits. A correction makes the largest low parts carry: the number of i that
  // do (over a full scan) is the constant in units of 2^-t ulp, times 2^(22-t).
  const ScalarUnit g70 = nvidia_g70();
  int carried = 0;
  for (int i = 1 << 22; i < (1 << 23); ++i) {
    const std::uint64_t b = f32(float(2 * i + 1));
    carried += unit_mul(g70, f32(8388609.0f), b).bits != mul(binary32, Options{Rounding::rz}, f32(8388609.0f), b).bits;
  }
  // (B = 2^24 - 1 carries out of the top instead, where chopping hides the constant.)
  EXPECT_EQ(carried, (40 << (22 - 6)) - 1);
  // The test sees the constant's value, 2^-t ulp units times the constant: (t, c) and (t+1, 2c)
  // give the same products, and the truncation is found apart (column test, random products).
  EXPECT_EQ(constant_test(6, 40, 1 << 10), constant_test(7, 80, 1 << 10));
}

TEST(ScalarUnitPaper, MultiplierRandomProductsSeparateColumns) {
  // [DGD] 2.2 confirms the columns with random products. With the G70's constant value (0.625
  // ulp, 40 units of column 6) fixed, t = 3..11 each give their own products on 4000 random pairs.
  const std::uint64_t s = seed();
  SCOPED_TRACE("seed " + std::to_string(s));
  std::mt19937_64 rng(s);
  std::vector<std::pair<std::uint64_t, std::uint64_t>> pairs;
  for (int k = 0; k < 4000; ++k) pairs.emplace_back(0x3f800000u | (rng() & 0x7fffff), 0x3f800000u | (rng() & 0x7fffff));
  std::set<std::vector<std::uint64_t>> seen;
  for (int t = 3; t <= 11; ++t) {
    std::vector<std::uint64_t> out;
    for (auto [a, b] : pairs) out.push_back(tmul(t, 5ull << (t - 3), a, b));
    seen.insert(out);
  }
  EXPECT_EQ(seen.size(), 9u);
}

TEST(ScalarUnitPaper, MultiplierSignSymmetry) {
  // [DGD] 2.2: A*B, (-A)*(-B) and -(A*(-B)) are equal, and (-A)*B == A*(-B): sign-magnitude.
  const std::uint64_t s = seed();
  SCOPED_TRACE("seed " + std::to_string(s));
  std::mt19937_64 rng(s);
  for (const ScalarUnit& u : {nvidia_g70(), ati_r520()}) {
    for (int k = 0; k < 20000; ++k) {
      const std::uint64_t a = rng() & 0xffffffffu, b = rng() & 0xffffffffu;
      if (is_nan(classify(binary32, a)) || is_nan(classify(binary32, b))) continue;
      const std::uint64_t ab = unit_mul(u, a, b).bits;
      ASSERT_EQ(unit_mul(u, neg32(a), neg32(b)).bits, ab) << std::hex << a << " " << b;
      ASSERT_EQ(neg32(unit_mul(u, a, neg32(b)).bits), ab) << std::hex << a << " " << b;
      ASSERT_EQ(unit_mul(u, neg32(a), b).bits, unit_mul(u, a, neg32(b)).bits) << std::hex << a << " " << b;
    }
  }
}

TEST(ScalarUnitPaper, MadExtraPrecision) {
  // [DGD] 2.1: MAD(x, y, -x (*) y) with x (*) y the CPU's rounded-to-nearest product. A fused
  // MAD gives the product's rounding error exactly; an unfused one gives multiples of the ulp.
  const std::uint64_t s = seed();
  SCOPED_TRACE("seed " + std::to_string(s));
  std::mt19937_64 rng(s);
  ScalarUnit fused = ieee_unit(binary32);
  fused.mad_fused = true;
  const ScalarUnit unfused = ieee_unit(binary32), g70 = nvidia_g70();
  ScalarUnit g70_fused = g70;
  g70_fused.mad_fused = true;
  int nonzero_fused = 0, g70_nonzero = 0;
  for (int k = 0; k < 20000; ++k) {
    const float x = std::ldexp(float(rng() % (1u << 24)), -23), y = std::ldexp(float(rng() % (1u << 24)), -23);
    if (x == 0 || y == 0) continue;
    const float p = x * y;
    const float err = float(double(x) * double(y) - double(p));  // exact in binary32
    const std::uint64_t c = f32(-p);
    EXPECT_EQ(unit_mad(fused, f32(x), f32(y), c).bits, f32(err)) << x << " " << y;
    EXPECT_EQ(unit_mad(g70_fused, f32(x), f32(y), c).bits, f32(err)) << x << " " << y;
    EXPECT_EQ(as_float(unit_mad(unfused, f32(x), f32(y), c).bits), 0.0f) << x << " " << y;
    const float g = as_float(unit_mad(g70, f32(x), f32(y), c).bits);
    const float ulp = std::nextafter(std::fabs(p), INFINITY) - std::fabs(p);
    EXPECT_TRUE(g == 0 || std::fabs(g) == ulp || std::fabs(g) == ulp / 2) << x << " " << y << " -> " << g;
    nonzero_fused += err != 0;
    g70_nonzero += g != 0;
  }
  EXPECT_GT(nonzero_fused, 10000);
  EXPECT_GT(g70_nonzero, 1000);  // the G70's multiplier differs from the CPU's often
  // fma() of a unit without one is its MAD.
  EXPECT_EQ(unit_fma(g70, f32(1 + U2), f32(1 - U2), f32(-1.0f)).bits,
            unit_mad(g70, f32(1 + U2), f32(1 - U2), f32(-1.0f)).bits);
  EXPECT_EQ(unit_fma(unfused, f32(1 + U2), f32(1 - U2), f32(-1.0f)).bits, f32(-U2 * U2));
}

TEST(ScalarUnitPaper, DivisionByReciprocalOfTheG70) {
  // App. A's division results that x * RU(1/y) through the G70 multiplier reproduces (12 of 16;
  // the other four, 1.5/(1-U2), (1.5-U2)/(1-U2), (1.5-2U2)/(1-U2) <= 1.5-U2 and
  // (1+2U2)/(1+U2) < 1+U2, it does not: see nvidia_g70()).
  const ScalarUnit g = nvidia_g70();
  auto d = [&](float a, float b) { return as_float(unit_div(g, f32(a), f32(b)).bits); };
  const float h = 1.5f, F9 = 1 - U1;
  EXPECT_NE(d(1, 1 - U2), 1 + U2);  // "1/(1-U2) - (1+U2) == 0 test: failed"
  EXPECT_EQ(d(1, 3), d(3, 9));
  EXPECT_EQ(d(3, 9), d(9, 27));
  EXPECT_EQ(d(F9, 1), F9);
  EXPECT_EQ(d(1 + U2, 1), 1 + U2);
  EXPECT_LT(d(1, 1 + U2), 1.0f);
  EXPECT_EQ(f32(d(h + 2 * U2, 1 + U2)), 0x3fc00001u);  // "mantisa = 400001"
  EXPECT_GT(d(h - 3 * U2, 1 - U2), h - 2 * U2);
  EXPECT_GT(d(h + 3 * U2, 1 + U2), h + U2);
  EXPECT_EQ(d(h, 1 + U2), h - U2);
  EXPECT_EQ(d(h + U2, 1 + U2), h);
  EXPECT_GT(d(F9 - U1, F9), F9);  // "Neither exact nor chopped"
  // Special operands give IEEE's results whatever the method.
  const std::uint64_t inf = 0x7f800000, zero = 0;
  for (std::uint64_t a : {zero, inf, f32(2.0f), f32(-3.0f), std::uint64_t{0x7fc00001}})
    for (std::uint64_t b : {zero, inf, f32(2.0f), neg32(inf), std::uint64_t{0x7fa00000}})
      if (!is_finite_nonzero(classify(binary32, a)) || !is_finite_nonzero(classify(binary32, b))) {
        EXPECT_EQ(unit_div(g, a, b).bits,
                  div(binary32, unit_options(g, g.div.rounding, model::FlushOp::div), a, b).bits)
            << std::hex << a << " / " << b;
      }
}

// --- IEEE units are model/ops.hpp -----------------------------------------------------------

std::uint64_t operand(const Format& f, std::mt19937_64& rng) {
  const std::uint64_t sign = (rng() & 1) ? f.sign_mask() : 0;
  const std::uint64_t man = rng() & f.man_mask();
  switch (rng() % 6) {
    case 0: return rng() & f.storage_mask();
    case 1:
    case 2: return sign | (std::uint64_t(f.bias + int(rng() % 5) - 2) << f.man_bits) | man;
    case 3: return sign | (std::uint64_t(rng() % 3) << f.man_bits) | man;  // subnormal, tiny
    case 4: return sign | (std::uint64_t((f.bias >> 1) + int(rng() % 6)) << f.man_bits) | man;
    default: {
      const std::uint64_t specials[] = {0,
                                        1,
                                        f.man_mask(),
                                        f.inf_magnitude(),
                                        f.inf_magnitude() | 1,
                                        f.inf_magnitude() | f.quiet_bit(),
                                        f.max_finite_magnitude()};
      return sign | specials[rng() % 7];
    }
  }
}

void expect_same(const Result& a, const Result& b, const char* what, std::uint64_t x, std::uint64_t y,
                 std::uint64_t z = 0) {
  ASSERT_EQ(a.bits, b.bits) << what << std::hex << " " << x << " " << y << " " << z;
  ASSERT_EQ(a.flags, b.flags) << what << std::hex << " " << x << " " << y << " " << z;
}

TEST(ScalarUnitIeee, EqualsOpsOnRandomOperands) {
  const std::uint64_t s = seed();
  SCOPED_TRACE("seed " + std::to_string(s));
  std::mt19937_64 rng(s);
  for (const Format* f : {&binary32, &binary16, &binary64}) {
    for (Rounding r : all_roundings) {
      const ScalarUnit u = ieee_unit(*f, r);
      ASSERT_EQ(check(u), "");
      Options o;
      o.rounding = r;
      for (int k = 0; k < 3000; ++k) {
        const std::uint64_t a = operand(*f, rng), b = operand(*f, rng), c = operand(*f, rng);
        expect_same(unit_add(u, a, b), add(*f, o, a, b), "add", a, b);
        expect_same(unit_sub(u, a, b), sub(*f, o, a, b), "sub", a, b);
        expect_same(unit_mul(u, a, b), mul(*f, o, a, b), "mul", a, b);
        expect_same(unit_div(u, a, b), div(*f, o, a, b), "div", a, b);
        expect_same(unit_sqrt(u, a), sqrt(*f, o, a), "sqrt", a, 0);
        expect_same(unit_fma(u, a, b, c), fma(*f, o, a, b, c), "fma", a, b, c);
        const Result p = mul(*f, o, a, b);
        Result m = add(*f, o, p.bits, c);
        m.flags |= p.flags;
        expect_same(unit_mad(u, a, b, c), m, "mad", a, b, c);
        const std::uint64_t abc[] = {a, b, c};
        for (Op op : all_ops)
          expect_same(unit_evaluate(u, op, std::span(abc, std::size_t(arity(op))), *f),
                      evaluate(op, *f, o, std::span(abc, std::size_t(arity(op))), *f), "evaluate", a, b, c);
        expect_same(unit_load(u, a), Result{a, 0}, "load", a, 0);
        expect_same(unit_store(u, a), Result{a, 0}, "store", a, 0);
      }
    }
  }
}

TEST(ScalarUnitIeee, WideEnoughGuardBitsAndAllColumnsAreCorrectlyRounded) {
  // Two guard bits and a sticky bit round as the exact sum does in every mode (guard, round and
  // sticky); a multiplier generating every column without correction is the exact product. The
  // general paths of the adder and multiplier checked against model/ops.hpp.
  const std::uint64_t s = seed();
  SCOPED_TRACE("seed " + std::to_string(s));
  std::mt19937_64 rng(s + 1);
  for (const Format* f : {&binary32, &binary16, &binary64}) {
    for (Rounding r : all_roundings) {
      for (bool ftz : {false, true}) {
        Options o;
        o.rounding = r;
        o.ftz_in = o.ftz_out = ftz;
        const MultiplierParams all_columns{UnitRounding::ieee(r), f->precision() - 1, 0};
        for (int g : {2, 3, 9, max_guard_bits}) {
          const AdderParams p{UnitRounding::ieee(r), g, true};
          for (int k = 0; k < 1000; ++k) {
            const std::uint64_t a = operand(*f, rng), b = operand(*f, rng);
            expect_same(adder_add(*f, p, o, a, b), add(*f, o, a, b), "add", a, b);
            expect_same(adder_sub(*f, p, o, a, b), sub(*f, o, a, b), "sub", a, b);
            expect_same(multiplier_mul(*f, all_columns, o, a, b), mul(*f, o, a, b), "mul", a, b);
          }
        }
      }
    }
  }
}

TEST(ScalarUnitIeee, FlushOptionsFollowOps) {
  ScalarUnit u = ieee_unit(binary32);
  u.subnormals = {true, true, false};
  Options o;
  o.ftz_in = o.ftz_out = true;
  const std::uint64_t s = seed();
  SCOPED_TRACE("seed " + std::to_string(s));
  std::mt19937_64 rng(s + 2);
  for (int k = 0; k < 20000; ++k) {
    const std::uint64_t a = operand(binary32, rng), b = operand(binary32, rng);
    expect_same(unit_add(u, a, b), add(binary32, o, a, b), "add", a, b);
    expect_same(unit_mul(u, a, b), mul(binary32, o, a, b), "mul", a, b);
    expect_same(unit_div(u, a, b), div(binary32, o, a, b), "div", a, b);
  }
}

// --- Subnormals, NaNs, transfers ------------------------------------------------------------

TEST(ScalarUnitPolicy, TransferOfSpecialValues) {
  // [DGD] 2.1: subnormals replaced by 0 on transfer; infinities unchanged; NaNs unchanged on
  // NVIDIA; ATI turns signalling NaNs into quiet ones.
  const ScalarUnit g70 = nvidia_g70(), r520 = ati_r520(), ieee = ieee_unit(binary32);
  const std::uint64_t sub = 0x00000001, nsub = 0x807fffff, inf = 0x7f800000, ninf = 0xff800000, snan = 0x7f800001,
                      nsnan = 0xffa00000, qnan = 0x7fc00123;
  for (const ScalarUnit* u : {&g70, &r520}) {
    EXPECT_EQ(unit_load(*u, sub).bits, 0u);
    EXPECT_EQ(unit_load(*u, nsub).bits, 0x80000000u);
    EXPECT_EQ(unit_store(*u, nsub).bits, 0x80000000u);
    EXPECT_EQ(unit_load(*u, inf).bits, inf);
    EXPECT_EQ(unit_store(*u, ninf).bits, ninf);
    EXPECT_EQ(unit_load(*u, qnan).bits, qnan);
    EXPECT_EQ(unit_load(*u, f32(1.5f)).bits, f32(1.5f));
  }
  EXPECT_EQ(unit_load(g70, snan).bits, snan);
  EXPECT_EQ(unit_store(g70, nsnan).bits, nsnan);
  EXPECT_EQ(unit_load(r520, snan).bits, 0x7fc00001u);
  EXPECT_EQ(unit_store(r520, nsnan).bits, 0xffe00000u);
  EXPECT_EQ(unit_load(ieee, sub).bits, sub);
  EXPECT_EQ(unit_load(ieee, snan).bits, snan);
}

TEST(ScalarUnitPolicy, ArithmeticFlushAndNaNs) {
  const ScalarUnit g70 = nvidia_g70(), ieee = ieee_unit(binary32);
  const std::uint64_t tiny = 0x00000003, min_normal = 0x00800000;
  // Input flush: a subnormal operand reads as zero.
  EXPECT_EQ(unit_add(g70, tiny, 0).bits, 0u);
  EXPECT_EQ(unit_add(ieee, tiny, 0).bits, tiny);
  // Output flush: a subnormal result becomes zero of its sign.
  EXPECT_EQ(unit_mul(g70, min_normal, f32(-0.5f)).bits, 0x80000000u);
  EXPECT_EQ(unit_mul(ieee, min_normal, f32(-0.5f)).bits, 0x80400000u);
  // NaN propagation: the first NaN operand, quieted; a canonical unit gives the canonical NaN.
  const std::uint64_t snan = 0x7f800123, qnan = 0xffc00456;
  EXPECT_EQ(unit_add(g70, snan, qnan).bits, 0x7fc00123u);
  EXPECT_EQ(unit_mul(g70, f32(2.0f), qnan).bits, qnan);
  EXPECT_EQ(unit_mad(g70, f32(2.0f), f32(3.0f), snan).bits, 0x7fc00123u);
  EXPECT_EQ(unit_div(g70, qnan, f32(3.0f)).bits, qnan);
  ScalarUnit canon = g70;
  canon.nan.canonical = true;
  EXPECT_EQ(unit_add(canon, snan, qnan).bits, 0x7fc00000u);
  EXPECT_EQ(unit_mul(canon, f32(2.0f), qnan).bits, 0x7fc00000u);
  // Invalid operations.
  EXPECT_EQ(unit_sub(g70, 0x7f800000, 0x7f800000).bits, 0x7fc00000u);
  EXPECT_EQ(unit_mul(g70, 0, 0x7f800000).bits, 0x7fc00000u);
  // Overflow under chop gives the largest finite value.
  EXPECT_EQ(unit_add(g70, 0x7f7fffff, 0x7f7fffff).bits, 0x7f7fffffu);
  EXPECT_EQ(unit_mul(g70, 0x7f7fffff, f32(-2.0f)).bits, 0xff7fffffu);
}

TEST(ScalarUnitPolicy, Binary16StoresOfTheG70) {
  // [DGD] 2.3: binary16 additions computed at 26 bits and rounded to 11: 1.5 - 2^-i stored in
  // binary16 is 1.5 exactly from i = 26, and chopped to 1.5 - 2^-10 for 11 <= i <= 25.
  const ScalarUnit u = nvidia_g70_binary16();
  EXPECT_EQ(std::string(u.storage_format().name), "binary16");
  for (int i = 1; i <= 40; ++i) {
    const std::uint64_t r = unit_store(u, unit_sub(u, f32(1.5f), f32(std::ldexp(1.0f, -i))).bits).bits;
    if (i >= 11) {
      EXPECT_EQ(r, i >= 26 ? 0x3e00u : 0x3dffu) << i;
    }
  }
  // Loads of binary16 are exact; a binary16 subnormal is flushed on transfer (assumed).
  EXPECT_EQ(unit_load(u, 0x3c01).bits, f32(1 + std::ldexp(1.0f, -10)));
  EXPECT_EQ(unit_load(u, 0x0001).bits, 0u);
  EXPECT_EQ(unit_load(u, 0x7c01).bits, 0x7f802000u);  // signalling NaN kept, payload left-aligned
  EXPECT_EQ(unit_store(u, 0x7f802000).bits, 0x7c01u);
  EXPECT_EQ(unit_store(u, 0x7f800001).bits, 0x7c01u);  // a payload that does not survive stays a NaN
}

// --- Names, description, built-ins ----------------------------------------------------------

TEST(ScalarUnitNames, RoundingNamesAndDescription) {
  EXPECT_EQ(name(UnitRounding::chopped()), "chop");
  for (Rounding r : all_roundings) {
    EXPECT_EQ(find_unit_rounding(name(r)), UnitRounding::ieee(r));
    EXPECT_EQ(name(*find_unit_rounding(name(r))), name(r));
  }
  EXPECT_EQ(find_unit_rounding("chop"), UnitRounding::chopped());
  EXPECT_FALSE(find_unit_rounding("nearest"));
  EXPECT_TRUE(UnitRounding::chopped() == (UnitRounding{Rounding::rne, true}));

  const std::string g = describe(nvidia_g70());
  EXPECT_NE(g.find("ADDITION: chopped, 2 guard bits, no sticky bit\n"), std::string::npos) << g;
  EXPECT_NE(g.find("MULTIPLICATION: chopped, partial products generated down to column 6 below the LSB, "
                   "correction 40"),
            std::string::npos)
      << g;
  EXPECT_NE(g.find("MAD: not fused"), std::string::npos) << g;
  EXPECT_NE(g.find("DIVISION: x * (1/y rounded ru)"), std::string::npos) << g;
  EXPECT_NE(g.find("SUBNORMALS: flushed to zero on input, output, transfer"), std::string::npos) << g;
  const std::string a = describe(ati_r520());
  EXPECT_NE(a.find("ADDITION (first of two cascaded): chopped, 1 guard bit, no sticky bit"), std::string::npos) << a;
  EXPECT_NE(a.find("signalling NaNs quieted on transfer"), std::string::npos) << a;
  const std::string i = describe(ieee_unit(binary64));
  EXPECT_NE(i.find("ADDITION: correctly rounded rne\n"), std::string::npos) << i;
  EXPECT_NE(i.find("SUBNORMALS: preserved"), std::string::npos) << i;
}

TEST(ScalarUnitNames, BuiltinUnits) {
  std::set<std::string_view> names;
  for (const ScalarUnit& u : builtin_units()) {
    EXPECT_EQ(check(u), "") << u.name;
    EXPECT_TRUE(names.insert(u.name).second) << u.name;
    ASSERT_TRUE(find_builtin_unit(u.name));
    EXPECT_TRUE(*find_builtin_unit(u.name) == u) << u.name;
  }
  for (const char* n :
       {"ieee-binary32", "ieee-binary16", "ieee-binary64", "nvidia-g70", "nvidia-g70-binary16", "ati-r520", "ati-r300"})
    EXPECT_TRUE(names.count(n)) << n;
  EXPECT_FALSE(find_builtin_unit("nvidia-g80"));
  EXPECT_EQ(std::string(ati_r300().format->name), "fp24");
  EXPECT_EQ(expected_dropped_correction(24, 9), 3u);
  EXPECT_EQ(expected_dropped_correction(24, 6), 4u);
  EXPECT_EQ(expected_dropped_correction(24, 23), 0u);
  ScalarUnit bad = nvidia_g70();
  bad.add.guard_bits = max_guard_bits + 1;
  EXPECT_NE(check(bad), "");
  bad = nvidia_g70();
  bad.mul.truncated_columns = -1;
  EXPECT_NE(check(bad), "");
}

TEST(ScalarUnitR300, Fp24ChoppedWithoutGuardBit) {
  // fp24 (p = 17): 1 - (1 - 2^-17) without a guard bit loses the subtrahend's last bit.
  const ScalarUnit u = ati_r300();
  const std::uint64_t one = 0x3f0000, below = 0x3effff;  // 1 and 1 - 2^-17 in s1e7m16
  EXPECT_EQ(unit_sub(u, one, below).bits, 0x2f0000u);    // 2^-16 instead of 2^-17
  // Chopped multiplication: (1 + 2^-16)^2 = 1 + 2^-15 + 2^-32 -> 1 + 2^-15.
  EXPECT_EQ(unit_mul(u, 0x3f0001, 0x3f0001).bits, 0x3f0002u);
  // Division by a chopped reciprocal: 1/3 chopped, times 3 chopped, is below 1.
  const std::uint64_t three = 0x408000;
  EXPECT_LT(unit_div(u, three, three).bits, one);
}

// Flushing per operation: rusticl's binary32 fma reads subnormal operands as zeros and keeps
// subnormal results (a case its validation found), while add and mul keep both.
TEST(ScalarUnitFlush, PerOperation) {
  ScalarUnit u = ieee_unit(binary32);
  u.op_flush[std::size_t(FlushOp::fma)] = OpFlush{true, false};
  EXPECT_EQ(unit_fma(u, 0x24cf6494, 0x10febd34, 0x0044ae3a).bits, 0x00000006u);  // c read as +0
  EXPECT_EQ(unit_fma(ieee_unit(binary32), 0x24cf6494, 0x10febd34, 0x0044ae3a).bits, 0x0044ae40u);
  EXPECT_EQ(unit_add(u, 0x00000001, 0x00000001).bits, 0x00000002u);  // add keeps subnormals
  // The override wins over the unit's flushing, either way.
  u.subnormals.flush_input = u.subnormals.flush_output = true;
  EXPECT_EQ(unit_add(u, 0x00000001, 0x00000001).bits, 0x00000000u);
  EXPECT_EQ(unit_fma(u, 0x24cf6494, 0x10febd34, 0x00000000).bits, 0x00000006u);
  EXPECT_NE(describe(u).find("SUBNORMALS (fma): operands flushed, results kept"), std::string::npos) << describe(u);
}

// libclc's software fma (__clc_sw_fma), rusticl's on a device without subnormals: operands flushed,
// a zero addend returns the multiplier's product, else the exact sum rounded once and flushed when
// tiny. The five binary32 cases of rusticl's validation, and the cases that separate the parameter.
TEST(ScalarUnitFlush, ZeroAddendReturnsTheProduct) {
  ScalarUnit u = ieee_unit(binary32);
  u.op_flush[std::size_t(FlushOp::fma)] = OpFlush{true, true};
  u.fma_zero_addend = ZeroAddend::product;
  EXPECT_EQ(check(u), "");
  const std::uint64_t tiny = 0x00800000, half = f32(0.5f), one = f32(1.0f), zero = 0, nzero = 0x80000000;
  EXPECT_EQ(unit_fma(u, tiny, half, zero).bits, 0x00400000u);  // the product, kept although fma flushes
  EXPECT_EQ(unit_fma(u, f32(-1.0f), zero, zero).bits, nzero);  // the product's sign; IEEE: +0
  EXPECT_EQ(unit_fma(ieee_unit(binary32), f32(-1.0f), zero, zero).bits, zero);
  EXPECT_EQ(unit_fma(u, one, zero, nzero).bits, zero);
  EXPECT_EQ(unit_fma(u, 0x00c00000, one, 0x80800000).bits, zero);                // 2^-127 after rounding: flushed
  EXPECT_EQ(unit_fma(u, one, one, f32(-1.0f)).bits, zero);                       // an exact zero sum is +0
  EXPECT_EQ(unit_fma(u, 0x806eabeb, 0xc14bd3dd, 0x88d871c3).bits, 0x88d871c3u);  // a flushed: c
  EXPECT_EQ(unit_fma(u, 0xf9fe4e38, 0x8003c224, 0x0f74d69c).bits, 0x0f74d69cu);
  EXPECT_EQ(unit_fma(u, 0x803b5f9f, 0xf95286ae, 0xb829ccc2).bits, 0xb829ccc2u);
  EXPECT_EQ(unit_fma(u, 0x24cf6494, 0x10febd34, 0x0044ae3a).bits, 0x00000006u);  // c flushed: a*b
  EXPECT_EQ(unit_fma(u, 0x00df9d90, 0xb435dae0, 0x005cc4d1).bits, 0x80000002u);
  // Infinite and NaN operands: the fma's own results.
  const std::uint64_t inf = 0x7f800000;
  EXPECT_EQ(unit_fma(u, inf, f32(2.0f), zero).bits, inf);
  EXPECT_EQ(unit_fma(u, one, f32(2.0f), inf).bits, inf);
  EXPECT_TRUE(is_nan(classify(binary32, unit_fma(u, inf, zero, zero).bits)));
  // A nonzero addend: the IEEE fma with the fma's flushing, bit for bit.
  ScalarUnit flushing_fma = u;
  flushing_fma.fma_zero_addend = ZeroAddend::ieee;
  std::mt19937_64 rng(7);
  for (int i = 0; i < 100000; ++i) {
    const std::uint64_t a = rng() & 0xffffffff, b = rng() & 0xffffffff, c = rng() & 0xffffffff;
    if ((c & 0x7f800000) == 0) continue;
    EXPECT_EQ(unit_fma(u, a, b, c).bits, unit_fma(flushing_fma, a, b, c).bits) << std::hex << a << " " << b << " " << c;
  }
  EXPECT_NE(describe(u).find("a zero addend returns the multiplier's product"), std::string::npos) << describe(u);
  EXPECT_EQ(name(ZeroAddend::product), "product");
  EXPECT_EQ(find_zero_addend("ieee"), ZeroAddend::ieee);
  EXPECT_FALSE(find_zero_addend("zero"));
}

// --- NaN policies (NanPolicy beyond canonical and quiet_on_transfer) ------------------------

namespace nan_policy {

ScalarUnit with(NanPolicy p, const Format& f = binary32) {
  ScalarUnit u = ieee_unit(f);
  u.nan = p;
  return u;
}
NanPolicy policy(NanPropagation c, bool quiet = true, bool flips = false, DefaultNan d = DefaultNan::quiet) {
  NanPolicy p;
  p.propagation = c;
  p.quiet = quiet;
  p.sub_flips = flips;
  p.default_nan = d;
  return p;
}

const std::uint64_t qa = 0x7fc00001, qb = 0xffe00002, sa = 0x7f800002;  // +qNaN(1), -qNaN(big), +sNaN(2)

// The IEEE unit's NaNs are model/ops.hpp's: the first NaN operand, quieted, sign kept; the
// canonical NaN for invalid operations. No other default changes a bit.
TEST(ScalarUnitNan, IeeeDefaultsAreTheOpsResults) {
  const ScalarUnit u = ieee_unit(binary32);
  EXPECT_EQ(u.nan, NanPolicy{});
  for (auto [a, b] : {std::pair{qa, qb}, {qb, qa}, {sa, qa}, {qa, sa}, {f32(1.0f), qb}, {0x7f800000, 0xff800000}}) {
    EXPECT_EQ(unit_add(u, a, b).bits, add(binary32, Options{}, a, b).bits);
    EXPECT_EQ(unit_sub(u, a, b).bits, sub(binary32, Options{}, a, b).bits);
    EXPECT_EQ(unit_mul(u, a, b).bits, mul(binary32, Options{}, a, b).bits);
    EXPECT_EQ(unit_div(u, a, b).bits, div(binary32, Options{}, a, b).bits);
    EXPECT_EQ(unit_fma(u, a, b, qa).bits, fma(binary32, Options{}, a, b, qa).bits);
  }
  EXPECT_EQ(unit_add(u, qa, qb).bits, qa);
  EXPECT_EQ(unit_add(u, sa, qa).bits, 0x7fc00002u);
  EXPECT_EQ(unit_sub(u, f32(1.0f), qa).bits, qa);
  EXPECT_EQ(unit_mul(u, 0, 0x7f800000).bits, canonical_nan(binary32));
}

TEST(ScalarUnitNan, Propagation) {
  const ScalarUnit last = with(policy(NanPropagation::last)), larger = with(policy(NanPropagation::larger_payload));
  EXPECT_EQ(unit_add(last, qa, qb).bits, qb);
  EXPECT_EQ(unit_add(last, qb, qa).bits, qa);
  EXPECT_EQ(unit_add(last, qa, f32(1.0f)).bits, qa);  // the last NaN, not the last operand
  EXPECT_EQ(unit_fma(last, qa, qb, f32(1.0f)).bits, qb);
  EXPECT_EQ(unit_fma(last, f32(1.0f), qb, qa).bits, qa);
  // The larger fraction field, quiet bit included (x87); the first of equal ones.
  EXPECT_EQ(unit_add(larger, qa, qb).bits, qb);
  EXPECT_EQ(unit_add(larger, qb, qa).bits, qb);
  EXPECT_EQ(unit_mul(larger, sa, qa).bits, qa);  // a quiet NaN's fraction is the larger
  EXPECT_EQ(unit_add(larger, qa, qa ^ 0x80000000).bits, qa);
  // An unfused MAD propagates through its multiplier and adder alike.
  ScalarUnit mad = last;
  mad.fma_fused = false;
  EXPECT_EQ(unit_fma(mad, f32(1.0f), qb, qa).bits, qa);
}

// An fma's own order of its NaN operands (NanPolicy::fma_order): the first NaN of the order comes
// out, whatever the propagation rule of the other operations.
TEST(ScalarUnitNan, FmaOrder) {
  const std::uint64_t one = f32(1.0f), qc = 0x7fc00003;  // a third quiet NaN
  for (NanPropagation rule : {NanPropagation::first, NanPropagation::last, NanPropagation::larger_payload})
    for (FmaNanOrder o : all_fma_nan_orders) {
      SCOPED_TRACE(std::string(name(rule)) + " " + std::string(name(o)));
      NanPolicy p = policy(rule);
      p.fma_order = o;
      const ScalarUnit u = with(p);
      const std::uint64_t nans[3] = {qa, qb, qc};
      const std::uint8_t* k = fma_nan_order_indices[std::size_t(o)];
      const std::string named = {char('a' + k[0]), char('a' + k[1]), char('a' + k[2])};
      EXPECT_EQ(named, name(o));
      EXPECT_EQ(unit_fma(u, qa, qb, qc).bits, nans[k[0]]);
      // Two NaNs: the one earlier in the order; the non-NaN operand is skipped.
      for (int absent = 0; absent < 3; ++absent) {
        std::uint64_t x[3] = {qa, qb, qc};
        x[absent] = one;
        const int first = k[0] != absent ? k[0] : k[1];
        EXPECT_EQ(unit_fma(u, x[0], x[1], x[2]).bits, nans[first]) << "operand " << absent << " not a NaN";
      }
      // The other operations keep the rule.
      EXPECT_EQ(unit_add(u, qa, qb).bits, unit_add(with(policy(rule)), qa, qb).bits);
      // As the rule amounts to (fma_order_of), or instead of it.
      if (fma_order_of(rule) == o) {
        EXPECT_EQ(unit_fma(u, qb, qa, one).bits, unit_fma(with(policy(rule)), qb, qa, one).bits);
      }
    }
  NanPolicy bac = policy(NanPropagation::first, false);
  bac.fma_order = FmaNanOrder::bac;
  // rusticl's: b over a and over c, a over c; a signalling NaN raises invalid wherever it lies, and
  // comes out unquieted (quiet false) when it is the one taken.
  const ScalarUnit u = with(bac);
  EXPECT_EQ(unit_fma(u, qa, qb, one).bits, qb);
  EXPECT_EQ(unit_fma(u, qb, qa, one).bits, qa);
  EXPECT_EQ(unit_fma(u, one, qb, qa).bits, qb);
  EXPECT_EQ(unit_fma(u, qa, one, qb).bits, qa);
  EXPECT_EQ(unit_fma(u, sa, qb, one).bits, qb);
  EXPECT_EQ(unit_fma(u, sa, qb, one).flags, Flag::invalid);
  EXPECT_EQ(unit_fma(u, sa, one, qb).bits, sa);
  EXPECT_EQ(fma(binary32, Options{.nan_fma_order = FmaNanOrder::bac}, sa, one, qb).bits, 0x7fc00002u);
  EXPECT_EQ(unit_fma(u, 0, 0x7f800000, qb).flags, Flag::invalid);  // 0 * inf + NaN
  // The canonical NaN makes the order moot.
  NanPolicy canonical = bac;
  canonical.canonical = true;
  EXPECT_EQ(unit_fma(with(canonical), qa, qb, one).bits, canonical_nan(binary32));
  // The order is the fma operation's, fused or not, and a fused MAD's; an unfused MAD is its
  // multiplier then adder, with their rule.
  ScalarUnit unfused = u;
  unfused.fma_fused = false;
  EXPECT_EQ(unit_fma(unfused, qa, qb, one).bits, qb);
  EXPECT_EQ(unit_fma(unfused, 0, 0x7f800000, qb).bits, qb);
  EXPECT_EQ(unit_fma(unfused, f32(2.0f), f32(3.0f), one).bits, f32(7.0f));
  EXPECT_EQ(unit_mad(unfused, qa, qb, one).bits, qa);
  unfused.mad_fused = true;
  EXPECT_EQ(unit_mad(unfused, qa, qb, one).bits, qb);
}

TEST(ScalarUnitNan, SignallingNaNsKept) {
  const ScalarUnit u = with(policy(NanPropagation::first, false));
  EXPECT_EQ(unit_add(u, sa, f32(1.0f)).bits, sa);
  EXPECT_EQ(unit_sqrt(u, sa).bits, sa);
  EXPECT_EQ(unit_add(u, qa, sa).bits, qa);  // quiet NaNs stay quiet
  // Conversions keep it signalling while the payload survives, else quiet it (it stays a NaN).
  EXPECT_EQ(unit_cvt(u, binary64, binary32, sa).bits, 0x7ff0000040000000u);
  EXPECT_EQ(cvt(binary16, binary32, Options{.nan_keep_signaling = true}, 0x7f800001).bits, 0x7e00u);
  EXPECT_EQ(cvt(binary16, binary32, Options{.nan_keep_signaling = true}, 0x7fa00000).bits, 0x7d00u);
}

TEST(ScalarUnitNan, SubtractionFlipsTheNaN) {
  const ScalarUnit u = with(policy(NanPropagation::first, true, true));
  EXPECT_EQ(unit_sub(u, f32(1.0f), qa).bits, qa ^ 0x80000000);
  EXPECT_EQ(unit_sub(u, f32(1.0f), qb).bits, qb ^ 0x80000000);
  EXPECT_EQ(unit_sub(u, qa, f32(1.0f)).bits, qa);  // the minuend's NaN is kept
  EXPECT_EQ(unit_add(u, f32(1.0f), qb).bits, qb);
  // The guard-bit adder too.
  ScalarUnit g = u;
  g.add = {UnitRounding::chopped(), 2, false};
  EXPECT_EQ(unit_sub(g, f32(1.0f), qa).bits, qa ^ 0x80000000);
}

TEST(ScalarUnitNan, DefaultNaN) {
  const std::uint64_t inf = 0x7f800000;
  const std::pair<DefaultNan, std::uint64_t> cases[] = {{DefaultNan::quiet, 0x7fc00000},
                                                        {DefaultNan::negative_quiet, 0xffc00000},
                                                        {DefaultNan::all_ones, 0x7fffffff},
                                                        {DefaultNan::negative_all_ones, 0xffffffff}};
  for (auto [d, bits] : cases) {
    SCOPED_TRACE(std::string(name(d)));
    const ScalarUnit u = with(policy(NanPropagation::first, true, false, d));
    EXPECT_EQ(default_nan(binary32, d), bits);
    EXPECT_EQ(unit_mul(u, 0, inf).bits, bits);
    EXPECT_EQ(unit_add(u, inf, inf ^ 0x80000000).bits, bits);
    EXPECT_EQ(unit_sub(u, inf, inf).bits, bits);
    EXPECT_EQ(unit_div(u, 0, 0).bits, bits);
    EXPECT_EQ(unit_sqrt(u, f32(-1.0f)).bits, bits);
    EXPECT_EQ(unit_fma(u, 0, inf, f32(1.0f)).bits, bits);
    EXPECT_EQ(unit_add(u, qa, f32(1.0f)).bits, qa);  // propagation does not use it
    // A canonical unit's NaN results are its default NaN.
    NanPolicy c = u.nan;
    c.canonical = true;
    EXPECT_EQ(unit_add(with(c), qa, qb).bits, bits);
    EXPECT_EQ(unit_cvt(with(c), binary32, binary16, 0x7e01).bits, bits);
    EXPECT_EQ(find_default_nan(name(d)), d);
  }
  // A reciprocal division's special cases and the binary16 formats' bits.
  ScalarUnit r = with(policy(NanPropagation::first, true, false, DefaultNan::all_ones));
  r.div = {DivMethod::reciprocal, UnitRounding::chopped(), {}};
  EXPECT_EQ(unit_div(r, inf, inf).bits, 0x7fffffffu);
  EXPECT_EQ(default_nan(binary16, DefaultNan::negative_quiet), 0xfe00u);
  EXPECT_EQ(default_nan(e4m3, DefaultNan::all_ones), canonical_nan(e4m3));  // one NaN per sign
}

TEST(ScalarUnitNan, NamesAndDescription) {
  for (NanPropagation p : {NanPropagation::first, NanPropagation::last, NanPropagation::larger_payload})
    EXPECT_EQ(find_nan_propagation(name(p)), p);
  EXPECT_FALSE(find_nan_propagation("canonical"));
  EXPECT_FALSE(find_default_nan("nvidia"));
  for (FmaNanOrder o : all_fma_nan_orders) EXPECT_EQ(find_fma_nan_order(name(o)), o);
  EXPECT_FALSE(find_fma_nan_order("abd"));
  EXPECT_FALSE(find_fma_nan_order("ab"));
  EXPECT_EQ(words(FmaNanOrder::bac), "b, a, c");
  EXPECT_EQ(fma_order_of(NanPropagation::first), FmaNanOrder::abc);
  EXPECT_EQ(fma_order_of(NanPropagation::last), FmaNanOrder::cba);
  EXPECT_FALSE(fma_order_of(NanPropagation::larger_payload));
  NanPolicy p = policy(NanPropagation::last, false, true, DefaultNan::negative_quiet);
  EXPECT_NE(describe(with(p)).find("NaN: last NaN operand propagated, signalling ones kept, a - NaN flips its sign; "
                                   "default NaN negative_quiet"),
            std::string::npos)
      << describe(with(p));
  p.fma_order = FmaNanOrder::bac;
  EXPECT_NE(
      describe(with(p)).find("a - NaN flips its sign; fma takes its NaN operands in the order b, a, c; default NaN"),
      std::string::npos)
      << describe(with(p));
}

}  // namespace nan_policy

// --- Approximate division and square root (a bound, not an algorithm) --------------------------

// The stand-in keeps the bound on every result, is not correctly rounded, and gives the IEEE results
// of special operands; unit_accepts takes any result within the bound and nothing beyond it.
TEST(ScalarUnitApproximate, StandInKeepsTheBound) {
  ScalarUnit u = ieee_unit(binary32);
  u.div = {DivMethod::approximate, UnitRounding::ieee(Rounding::rne), {640}};  // 2.5 ulp
  u.sqrt_max_error = UlpBound{768};                                            // 3 ulp
  EXPECT_EQ(to_string(u.div.max_error), "2.5");
  EXPECT_EQ(ulp_bound(2.5), u.div.max_error);
  EXPECT_EQ(ulp_bound(1.0001)->units, 257u);  // rounded up: a bound never shrinks
  EXPECT_FALSE(ulp_bound(-1));
  EXPECT_TRUE(approximate(u, Op::div) && approximate(u, Op::sqrt) && !approximate(u, Op::mul));
  std::mt19937_64 rng(seed());
  int off = 0;
  for (int i = 0; i < 20000; ++i) {
    const std::uint64_t a = rng() & 0xffffffffu, b = rng() & 0xffffffffu;
    const std::uint64_t x[] = {a, b};
    const std::uint64_t q = unit_div(u, a, b).bits, r = unit_sqrt(u, a).bits;
    ASSERT_TRUE(unit_accepts(u, Op::div, x, q, binary32))
        << std::hex << a << " / " << b << " = " << q << " seed " << std::dec << seed();
    ASSERT_TRUE(unit_accepts(u, Op::sqrt, std::span(x, 1), r, binary32)) << std::hex << "sqrt " << a << " = " << r;
    off += q != div(binary32, {}, a, b).bits;
  }
  EXPECT_GT(off, 5000);  // most quotients are moved
  // Special operands: IEEE. Within the bound and beyond it.
  const std::uint64_t inf = 0x7f800000;
  EXPECT_EQ(unit_div(u, f32(1.0f), 0).bits, inf);
  EXPECT_EQ(unit_div(u, 0, f32(3.0f)).bits, 0u);
  const std::uint64_t third[] = {f32(1.0f), f32(3.0f)};
  const std::uint64_t cr = div(binary32, {}, third[0], third[1]).bits;
  EXPECT_TRUE(unit_accepts(u, Op::div, third, cr + 2, binary32));   // 2.33 ulp
  EXPECT_FALSE(unit_accepts(u, Op::div, third, cr + 3, binary32));  // 3.33 ulp
  EXPECT_TRUE(unit_accepts(u, Op::div, third, cr - 2, binary32));   // -1.67 ulp
  EXPECT_FALSE(unit_accepts(u, Op::div, third, inf, binary32));
  const std::uint64_t by_zero[] = {f32(1.0f), 0};
  EXPECT_FALSE(unit_accepts(u, Op::div, by_zero, f32(1e38f), binary32));  // specials are exact
  // A correctly rounded unit accepts its own bits only.
  const ScalarUnit ieee = ieee_unit(binary32);
  EXPECT_TRUE(unit_accepts(ieee, Op::div, third, cr, binary32));
  EXPECT_FALSE(unit_accepts(ieee, Op::div, third, cr + 1, binary32));
  EXPECT_NE(describe(u).find("DIVISION: approximate, within 2.5 ulp"), std::string::npos) << describe(u);
  EXPECT_NE(describe(u).find("SQUARE ROOT: approximate, within 3 ulp"), std::string::npos) << describe(u);
}

// Output flushing holds for the approximation too: no subnormal result where the operation flushes.
TEST(ScalarUnitApproximate, FlushedResultsStayFlushed) {
  ScalarUnit u = ieee_unit(binary32);
  u.div = {DivMethod::approximate, UnitRounding::ieee(Rounding::rne), {640}};
  u.subnormals.flush_output = true;
  std::mt19937_64 rng(seed());
  for (int i = 0; i < 2000; ++i) {
    const std::uint64_t a = 0x00800000u + (rng() & 0x7fffff), b = 0x3f800000u + (rng() & 0x7fffff);  // tiny / [1, 2)
    const std::uint64_t q = unit_div(u, a, b).bits;
    EXPECT_NE(classify(binary32, q), Class::subnormal) << std::hex << a << " / " << b;
  }
}

}  // namespace
}  // namespace gp::model
