// Properties of the MMA model over every instruction of the table, on random inputs:
// - exactness: when no rounding can occur (small integers), the model gives the exact sum,
//   computed with host binary64 arithmetic as the oracle;
// - sign symmetry where the algorithm is symmetric (everything but the fdrda family, which
//   rounds down): negating a and c negates d;
// - order independence inside a fused block (fda, fdrda: any permutation; gfdrda: within the even
//   and odd products; gdfs: within a group), and a <-> b exchange;
// - chaining: a chained algorithm equals its blocks evaluated one after the other.
// Random cases use a fixed seed, printed on failure.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <random>
#include <set>
#include <sstream>
#include <vector>

#include "model/dot_parameters.hpp"
#include "model/mma_config_name.hpp"
#include "model/mma_instructions.hpp"
#include "model/ops.hpp"

namespace gp::model {
namespace {

constexpr std::uint64_t kSeed = 20240611;
constexpr int kCases = 300;  // per instruction and property

std::uint64_t enc(const Format& f, double x) {
  const Result r = cvt(f, binary64, Options{}, std::bit_cast<std::uint64_t>(x));
  EXPECT_EQ(r.flags & Flag::inexact, 0u) << x << " in " << f.name;
  return r.bits;
}
double dec(const Format& f, std::uint64_t bits) {
  return std::bit_cast<double>(cvt(binary64, f, Options{}, bits).bits);
}

bool is_nan_bits(const Format& f, std::uint64_t bits) { return is_nan(classify(f, bits)); }
bool is_zero_bits(const Format& f, std::uint64_t bits) { return classify(f, bits) == Class::zero; }

// Random raw bits of f: half uniform bit patterns (specials and subnormals included), half
// values near 1.
std::uint64_t random_bits(const Format& f, std::mt19937_64& rng) {
  const std::uint64_t value_mask =
      f.value_bits() == 64 ? ~std::uint64_t{0} : ((std::uint64_t{1} << f.value_bits()) - 1) << f.pad_bits;
  if (rng() & 1) return rng() & value_mask;
  const int e = int(rng() % 7) - 3;
  std::uint64_t field = std::uint64_t(std::clamp(e + f.bias, 1, int(f.exp_field_max()) - 1));
  if (f.exp_bits == 2 || f.exp_bits == 3) field = rng() % (f.exp_field_max() + 1);  // fp6, fp4: anything
  const std::uint64_t mag = (field << f.man_bits) | (rng() & f.man_mask());
  return pack(f, f.has_sign() && (rng() & 1), mag);
}

struct Case {
  std::uint64_t c;
  std::vector<std::uint64_t> a, b, sa, sb;
};

Case random_case(const MmaInstruction& ins, std::mt19937_64& rng) {
  const DotConfig& cfg = ins.config;
  Case x;
  x.c = random_bits(*cfg.c, rng);
  for (int k = 0; k < ins.k; ++k) {
    x.a.push_back(random_bits(*cfg.a, rng));
    x.b.push_back(random_bits(*cfg.b, rng));
  }
  for (int i = 0; i < scale_count(cfg, ins.k); ++i) {
    // Scale factors near 1: ue8m0 2^-3..2^3, ue4m3 any mantissa around 1 (NaN now and then).
    x.sa.push_back(rng() % 64 == 0 ? 0xFF : cfg.scale == &ue8m0 ? 124 + rng() % 7 : 0x30 + rng() % 24);
    x.sb.push_back(cfg.scale == &ue8m0 ? 124 + rng() % 7 : 0x30 + rng() % 24);
  }
  return x;
}

std::uint64_t eval(const Dot& d, const Case& x) { return d(x.c, x.a, x.b, x.sa, x.sb); }

std::string describe(const MmaInstruction& ins, const Case& x) {
  std::ostringstream s;
  s << ins.id() << std::hex << " c " << x.c << " a";
  for (auto v : x.a) s << ' ' << v;
  s << " b";
  for (auto v : x.b) s << ' ' << v;
  return s.str();
}

bool symmetric(MmaAlgorithm a) {
  return a == MmaAlgorithm::sfma || a == MmaAlgorithm::gps || a == MmaAlgorithm::fda || a == MmaAlgorithm::cofda ||
         a == MmaAlgorithm::gdfs;
}

TEST(MmaTable, EveryInstructionIsValidAndNamedOnce) {
  std::set<std::string> ids;
  std::set<std::string> archs;
  for (const MmaInstruction& i : all_mma_instructions()) {
    EXPECT_EQ(check(i.config), "") << i.id();
    EXPECT_TRUE(ids.insert(i.id()).second) << "duplicate " << i.id();
    EXPECT_GT(i.k, 0) << i.id();
    EXPECT_FALSE(i.notes.empty()) << i.id();
    EXPECT_EQ(find_mma_instruction(i.id()), &i);
    archs.insert(i.arch);
  }
  EXPECT_EQ(archs.size(), mma_architectures().size());
  for (const char* id : {"hopper:HMMA.16816.F32", "ada:QMMA.16832.F32.E4M3.E4M3", "hopper:QGMMA.64x8x32.F32.E5M2.E5M2",
                         "cdna3:v_mfma_f32_32x32x8_f16", "volta:HMMA.884.F16.F16", "ampere:DMMA.884",
                         "blackwell:UTCOMMA.4X.F32.E2M1.E2M1.UE4M3", "rtx-blackwell:OMMA.SF.16864.F32.E2M1.E2M1.E8",
                         "cdna2:v_mfma_f32_32x32x4bf16", "cdna3:v_mfma_f32_16x16x32_bf8_fp8"})
    EXPECT_NE(find_mma_instruction(id), nullptr) << id;
  EXPECT_EQ(find_mma_instruction("hopper:HMMA.16816"), nullptr);
  // Shapes, algorithms and F of a few rows of Tables III and IV.
  const MmaInstruction* i = find_mma_instruction("ampere:HMMA.16816.F32");
  EXPECT_EQ(i->m * 1000000 + i->n * 1000 + i->k, 16008016);
  EXPECT_EQ(i->config.algorithm, MmaAlgorithm::cofda);
  EXPECT_EQ(i->config.block, 8);
  EXPECT_EQ(find_mma_instruction("hopper:HMMA.16816.F32")->config.algorithm, MmaAlgorithm::fda);
  EXPECT_EQ(find_mma_instruction("hopper:HMMA.16816.F32")->config.F, 25);
  EXPECT_EQ(find_mma_instruction("volta:HMMA.884.F32.F32")->config.F, 23);
  EXPECT_EQ(find_mma_instruction("ada:QMMA.16832.F32.E5M2.E4M3")->config.F, 13);
  EXPECT_EQ(find_mma_instruction("ada:QMMA.16832.F32.E5M2.E4M3")->config.b, &e4m3);
  EXPECT_EQ(find_mma_instruction("cdna3:v_mfma_f32_16x16x32_bf8_fp8")->config.algorithm, MmaAlgorithm::cogfdrda);
  EXPECT_EQ(find_mma_instruction("cdna3:v_mfma_f32_16x16x32_bf8_fp8")->config.a, &e5m2fnuz);
  EXPECT_EQ(find_mma_instruction("cdna2:v_mfma_f32_32x32x2bf16")->config.group, 2);
  EXPECT_EQ(find_mma_instruction("cdna2:v_mfma_f32_32x32x8_bf16")->config.group, 4);
  EXPECT_EQ(find_mma_instruction("cdna3:v_mfma_f32_16x16x16_f16")->config.block, 8);
  EXPECT_EQ(find_mma_instruction("cdna2:v_mfma_f64_16x16x4_f64")->config.algorithm, MmaAlgorithm::sfma);
}

// The one reader of configuration names: the shape alone, then whole names and their faults.
TEST(MmaConfigName, ReadsWhatMmaConfigWrites) {
  MmaShape s;
  EXPECT_EQ(read_mma_shape("16x8x16:binary16", s), 7u);
  EXPECT_EQ(s.m * 1000000 + s.n * 1000 + s.k, 16008016);
  EXPECT_EQ(read_mma_shape("32x32x2bf16", s), 7u);
  EXPECT_EQ(s.k, 2);
  for (const char* bad : {"", "16x8", "x8x16", "16x8x", "-16x8x16", "+16x8x16", "0x8x16", "16x8x0", "99999999999x1x1"})
    EXPECT_EQ(read_mma_shape(bad, s), 0u) << bad;
  const MmaConfigName n = parse_mma_config_name("16x8x16:binary16,bfloat16,binary32,e4m3");
  ASSERT_EQ(n.fault, MmaNameFault::none);
  EXPECT_EQ(n.shape.m * 1000000 + n.shape.n * 1000 + n.shape.k, 16008016);
  EXPECT_EQ(n.formats, (std::array<const Format*, 4>{&binary16, &bfloat16, &binary32, &e4m3}));
  const std::pair<const char*, MmaNameFault> faults[] = {
      {"16x8:binary16,binary16,binary32,binary32", MmaNameFault::shape},
      {"16x8x16x2:binary16,binary16,binary32,binary32", MmaNameFault::shape},
      {"257x8x16:binary16,binary16,binary32,binary32", MmaNameFault::size},
      {"16x8x1025:binary16", MmaNameFault::size},
      {"16x8x16", MmaNameFault::format_count},
      {"16x8x16:binary16,binary16,binary32", MmaNameFault::format_count},
      {"16x8x16:binary16,binary16,binary32,binary32,", MmaNameFault::format_count},
      {"16x8x16:binary16,binary16,fp99,binary32", MmaNameFault::unknown_format}};
  for (const auto& [text, fault] : faults) EXPECT_EQ(parse_mma_config_name(text).fault, fault) << text;
  EXPECT_EQ(parse_mma_config_name("16x8x16:binary16,binary16,fp99,binary32").bad, 2);
  EXPECT_EQ(parse_mma_config_name("256x256x1024:binary16,binary16,binary32,binary32").fault, MmaNameFault::none);
}

// The parameters the table writes of every instruction read back to a configuration that writes
// them again; every key the table writes is one its algorithm takes, within the table's range.
TEST(DotParameters, WrittenParametersReadBack) {
  for (const MmaInstruction& i : all_mma_instructions()) {
    const DotConfig& c = i.config;
    const DotParameters p = dot_config_parameters(c, i.k);
    for (const auto& [key, v] : p) {
      const DotParameter* d = find_dot_parameter(key);
      ASSERT_NE(d, nullptr) << key;
      EXPECT_TRUE(d->taken_by(c.algorithm)) << i.id() << " " << key;
      if (const auto* x = std::get_if<std::int64_t>(&v)) {
        EXPECT_GE(*x, d->min) << i.id() << " " << key;
        EXPECT_LE(*x, d->max_for(c.algorithm)) << i.id() << " " << key;
      }
    }
    const DotConfigOrError back = dot_config_from_parameters(c.algorithm, *c.a, *c.b, *c.c, *c.d, i.k, p);
    ASSERT_TRUE(back.config) << i.id() << ": " << back.error;
    EXPECT_TRUE(dot_config_parameters(*back.config, i.k) == p) << i.id();
  }
  EXPECT_EQ(find_dot_parameter("F")->max_for(MmaAlgorithm::fdrda), kFdrdaDotBits);
  EXPECT_EQ(find_dot_parameter("F")->max_for(MmaAlgorithm::fda), kMaxF);
  EXPECT_EQ(dot_parameter_names().size(), dot_parameters().size());
}

TEST(MmaTable, Cdna1Rows) {
  // MI100's 15 MFMA instructions: no f64, no _1k bf16. fp32: an FMA chain; fp16 and bf16: c and
  // groups of 4 (fp16) or 2 (bf16) products summed exactly, each group's result the next one's c,
  // in binary32 rounded to nearest, nothing flushed.
  int rows = 0;
  for (const MmaInstruction& i : all_mma_instructions()) rows += i.arch == "cdna1";
  EXPECT_EQ(rows, 15);
  struct Row {
    const char* name;
    int m, n, k;
    const Format* ab;
    const char* tree;  // nullptr: sfma
  };
  const Row expected[] = {
      {"v_mfma_f32_32x32x1f32", 32, 32, 1, &binary32, nullptr},
      {"v_mfma_f32_16x16x1f32", 16, 16, 1, &binary32, nullptr},
      {"v_mfma_f32_4x4x1f32", 4, 4, 1, &binary32, nullptr},
      {"v_mfma_f32_32x32x2f32", 32, 32, 2, &binary32, nullptr},
      {"v_mfma_f32_16x16x4f32", 16, 16, 4, &binary32, nullptr},
      {"v_mfma_f32_32x32x4f16", 32, 32, 4, &binary16, "p0+p1+p2+p3+c"},
      {"v_mfma_f32_16x16x4f16", 16, 16, 4, &binary16, "p0+p1+p2+p3+c"},
      {"v_mfma_f32_4x4x4f16", 4, 4, 4, &binary16, "p0+p1+p2+p3+c"},
      {"v_mfma_f32_32x32x8f16", 32, 32, 8, &binary16, "(p0+p1+p2+p3+c)+p4+p5+p6+p7"},
      {"v_mfma_f32_16x16x16f16", 16, 16, 16, &binary16,
       "(((p0+p1+p2+p3+c)+p4+p5+p6+p7)+p8+p9+p10+p11)+p12+p13+p14+p15"},
      {"v_mfma_f32_32x32x2bf16", 32, 32, 2, &bfloat16, "p0+p1+c"},
      {"v_mfma_f32_16x16x2bf16", 16, 16, 2, &bfloat16, "p0+p1+c"},
      {"v_mfma_f32_4x4x2bf16", 4, 4, 2, &bfloat16, "p0+p1+c"},
      {"v_mfma_f32_32x32x4bf16", 32, 32, 4, &bfloat16, "(p0+p1+c)+p2+p3"},
      {"v_mfma_f32_16x16x8bf16", 16, 16, 8, &bfloat16, "(((p0+p1+c)+p2+p3)+p4+p5)+p6+p7"},
  };
  for (const Row& r : expected) {
    const MmaInstruction* i = find_mma_instruction(std::string("cdna1:") + r.name);
    ASSERT_NE(i, nullptr) << r.name;
    EXPECT_EQ(i->m * 1000000 + i->n * 1000 + i->k, r.m * 1000000 + r.n * 1000 + r.k) << r.name;
    const DotConfig& c = i->config;
    EXPECT_EQ(c.a, r.ab) << r.name;
    EXPECT_EQ(c.b, r.ab) << r.name;
    EXPECT_EQ(c.c, &binary32) << r.name;
    EXPECT_EQ(c.d, &binary32) << r.name;
    if (!r.tree) {
      EXPECT_EQ(c.algorithm, MmaAlgorithm::sfma) << r.name;
      continue;
    }
    ASSERT_EQ(c.algorithm, MmaAlgorithm::tree) << r.name;
    const SummationTree& t = *c.tree;
    EXPECT_EQ(t.text(), r.tree) << r.name;
    EXPECT_EQ(t.sum_format, nullptr) << r.name;  // d's: binary32
    EXPECT_EQ(t.sum_rounding, Rounding::rne) << r.name;
    EXPECT_EQ(t.product_format, nullptr) << r.name;  // exact products
    EXPECT_TRUE(t.flushed().empty()) << r.name;
  }
  for (const char* id : {"cdna1:v_mfma_f64_16x16x4_f64", "cdna1:v_mfma_f64_16x16x4f64", "cdna1:v_mfma_f32_32x32x8_bf16",
                         "cdna1:v_mfma_f32_32x32x8bf16_1k", "cdna1:v_mfma_f32_32x32x8_f16"})
    EXPECT_EQ(find_mma_instruction(id), nullptr) << id;
}

TEST(MmaProperty, ExactWhenNoRoundingCanOccur) {
  std::mt19937_64 rng(kSeed);
  SCOPED_TRACE("seed " + std::to_string(kSeed));
  for (const MmaInstruction& ins : all_mma_instructions()) {
    const DotConfig& cfg = ins.config;
    const Dot d(cfg);
    // ocfda's summands that oppose c's sign land a grid unit off (one's complement): no negative ones.
    const int lowest = cfg.algorithm == MmaAlgorithm::ocfda ? 0 : 1;
    // c up to 63 where d is bfloat16, whose integers are exact up to 256 only.
    const int cmax = cfg.d->precision() < 11 ? 63 : 255;
    for (int n = 0; n < kCases; ++n) {
      // Integers -3..3 for a and b, -255..255 for c: every partial sum is an integer below 2^10,
      // exact in every output (binary16, binary32 cut to 13 fraction bits) and every accumulator.
      Case x;
      double exact = double(int(rng() % unsigned(cmax + 1 + cmax * lowest)) - cmax * lowest);
      x.c = enc(*cfg.c, exact);
      std::vector<double> av, bv;
      for (int k = 0; k < ins.k; ++k) {
        av.push_back(double(int(rng() % (4 + 3 * lowest)) - 3 * lowest));
        bv.push_back(double(int(rng() % (4 + 3 * lowest)) - 3 * lowest));
        x.a.push_back(enc(*cfg.a, av.back()));
        x.b.push_back(enc(*cfg.b, bv.back()));
      }
      std::vector<double> sav, sbv;
      for (int i = 0; i < scale_count(cfg, ins.k); ++i) {
        // Scales 1..3.75 (ue4m3) or 1, 2, 4 (ue8m0): the sum stays within binary32's precision.
        x.sa.push_back(cfg.scale == &ue8m0 ? 127 + rng() % 3 : 0x38 + rng() % 16);
        x.sb.push_back(cfg.scale == &ue8m0 ? 127 + rng() % 3 : 0x38 + rng() % 16);
        sav.push_back(dec(*cfg.scale, x.sa.back()));
        sbv.push_back(dec(*cfg.scale, x.sb.back()));
      }
      for (int k = 0; k < ins.k; ++k) {
        double p = av[std::size_t(k)] * bv[std::size_t(k)];
        if (cfg.scale) p *= sav[std::size_t(k / cfg.scale_block)] * sbv[std::size_t(k / cfg.scale_block)];
        exact += p;
      }
      const std::uint64_t got = eval(d, x);
      if (exact == 0) {
        EXPECT_TRUE(is_zero_bits(*cfg.d, got)) << describe(ins, x);
      } else {
        EXPECT_EQ(got, enc(*cfg.d, exact)) << describe(ins, x) << " exact " << exact;
      }
      if (::testing::Test::HasFailure()) return;
    }
  }
}

// Carry-out bits (Valpey et al. 4.3): an accumulator of enough bits for its block gives the exact
// sum on random inputs; one bit short, a sum of 2^(E + bits + 1) or more (E the largest summand's
// leading bit) wraps around as a two's-complement sum: against host arithmetic on sums of
// products of (2 - 2^-t)^2 and c = 2, every term on a grid the fixed-point sum keeps exactly.
TEST(MmaProperty, CarryOutBitsWrapTheSumAroundWhenTooFew) {
  std::mt19937_64 rng(kSeed);
  int checked = 0;
  for (const MmaInstruction& ins : all_mma_instructions()) {
    const DotConfig& row = ins.config;
    const int block = effective_block(row, ins.k);
    const int t = 1 + std::bit_width(unsigned(block - 1));  // 2 - 2^-t: block products reach 2^(E + bits)
    if (unchained(row.algorithm) != MmaAlgorithm::fda || row.scale || row.d != &binary32 || row.F < 2 * t + 2 ||
        row.a->man_bits < t || row.b->man_bits < t)
      continue;
    const int enough = std::bit_width(unsigned(block));  // block + 1 terms below 2^(E+1) each
    DotConfig wide = row, short_ = row;
    wide.carry_bits = enough;
    short_.carry_bits = enough - 1;
    ASSERT_EQ(check(wide), "") << ins.id();
    ASSERT_EQ(check(short_), "") << ins.id();
    const Dot exact(row), full(wide), cut(short_);
    for (int n = 0; n < kCases; ++n) {
      const Case x = random_case(ins, rng);
      ASSERT_EQ(eval(full, x), eval(exact, x)) << describe(ins, x);
    }
    const double near2 = 2 - std::ldexp(1.0, -t), p = near2 * near2;  // leading bit 1
    for (int products = 1; products <= block; ++products)
      for (double c : {2.0, -2.0}) {
        Case x;
        x.c = enc(*row.c, c);
        for (int k = 0; k < ins.k; ++k) {
          const bool on = k < products;
          x.a.push_back(enc(*row.a, on ? (c < 0 ? -near2 : near2) : 0));
          x.b.push_back(enc(*row.b, on ? near2 : 0));
        }
        const double sum = c + products * (c < 0 ? -p : p);
        const double w = std::ldexp(1.0, 1 + short_.carry_bits + 1);  // 2^(E + bits + 1), E = 1
        double wrapped = std::fmod(sum + w, 2 * w);
        if (wrapped < 0) wrapped += 2 * w;
        wrapped -= w;
        EXPECT_EQ(eval(exact, x), enc(binary32, sum)) << describe(ins, x);
        EXPECT_EQ(eval(cut, x), enc(binary32, wrapped)) << describe(ins, x) << " sum " << sum << " wrapped " << wrapped;
        checked += std::abs(sum) >= w;
      }
  }
  EXPECT_GT(checked, 20);  // sums that wrap were built
}

TEST(MmaProperty, SignSymmetry) {
  std::mt19937_64 rng(kSeed + 1);
  SCOPED_TRACE("seed " + std::to_string(kSeed + 1));
  for (const MmaInstruction& ins : all_mma_instructions()) {
    const DotConfig& cfg = ins.config;
    if (!symmetric(cfg.algorithm)) continue;
    const Dot d(cfg);
    for (int n = 0; n < kCases; ++n) {
      Case x = random_case(ins, rng);
      const std::uint64_t r = eval(d, x);
      Case y = x;
      y.c ^= cfg.c->sign_mask();
      for (auto& v : y.a) v ^= cfg.a->sign_mask();
      const std::uint64_t s = eval(d, y);
      const Format& f = *cfg.d;
      if (is_nan_bits(f, r)) {
        EXPECT_TRUE(is_nan_bits(f, s)) << describe(ins, x);
        if (cfg.algorithm != MmaAlgorithm::sfma && cfg.algorithm != MmaAlgorithm::gps) {
          EXPECT_EQ(s, r) << describe(ins, x);
        }
      } else if (is_zero_bits(f, r)) {
        EXPECT_TRUE(is_zero_bits(f, s)) << describe(ins, x);
      } else {
        EXPECT_EQ(s, r ^ f.sign_mask()) << describe(ins, x);
      }
      if (::testing::Test::HasFailure()) return;
    }
  }
}

TEST(MmaProperty, Cdna3RoundingDownIsAsymmetric) {
  // The fdrda family is not symmetric: somewhere in random inputs negation changes the magnitude.
  std::mt19937_64 rng(kSeed + 2);
  const MmaInstruction& ins = *find_mma_instruction("cdna3:v_mfma_f32_32x32x8_f16");
  const Dot d(ins.config);
  int asymmetric = 0;
  for (int n = 0; n < 2000; ++n) {
    Case x = random_case(ins, rng);
    Case y = x;
    y.c ^= binary32.sign_mask();
    for (auto& v : y.a) v ^= binary16.sign_mask();
    const std::uint64_t r = eval(d, x), s = eval(d, y);
    if (!is_nan_bits(binary32, r) && !is_zero_bits(binary32, r) && s != (r ^ binary32.sign_mask())) ++asymmetric;
  }
  EXPECT_GT(asymmetric, 0);
}

// Permutes the products of x within the classes the algorithm cannot tell apart.
void shuffle_within_blocks(const MmaInstruction& ins, Case& x, std::mt19937_64& rng) {
  const DotConfig& cfg = ins.config;
  int span = cfg.block > 0 ? cfg.block : ins.k;
  if (cfg.algorithm == MmaAlgorithm::gdfs) span = cfg.group;
  if (cfg.scale) span = std::min(span, cfg.scale_block);
  const int stride = cfg.algorithm == MmaAlgorithm::gfdrda || cfg.algorithm == MmaAlgorithm::cogfdrda ? 2 : 1;
  for (int start = 0; start < ins.k; start += span)
    for (int parity = 0; parity < stride; ++parity) {
      std::vector<int> idx;
      for (int k = start + parity; k < std::min(ins.k, start + span); k += stride) idx.push_back(k);
      std::vector<int> perm = idx;
      std::shuffle(perm.begin(), perm.end(), rng);
      const Case old = x;
      for (std::size_t i = 0; i < idx.size(); ++i) {
        x.a[std::size_t(idx[i])] = old.a[std::size_t(perm[i])];
        x.b[std::size_t(idx[i])] = old.b[std::size_t(perm[i])];
      }
    }
}

TEST(MmaProperty, OrderWithinAFusedBlockDoesNotMatter) {
  std::mt19937_64 rng(kSeed + 3);
  SCOPED_TRACE("seed " + std::to_string(kSeed + 3));
  for (const MmaInstruction& ins : all_mma_instructions()) {
    const DotConfig& cfg = ins.config;
    // Trees (CDNA1's fused groups): Cdna1GroupsAreFusedAndChained.
    if (cfg.algorithm == MmaAlgorithm::sfma || cfg.algorithm == MmaAlgorithm::gps ||
        cfg.algorithm == MmaAlgorithm::tree)
      continue;
    const Dot d(cfg);
    for (int n = 0; n < kCases; ++n) {
      Case x = random_case(ins, rng);
      const std::uint64_t r = eval(d, x);
      Case y = x;
      shuffle_within_blocks(ins, y, rng);
      EXPECT_EQ(eval(d, y), r) << describe(ins, x);
      if (cfg.a == cfg.b) {
        std::swap(y.a, y.b);
        std::swap(y.sa, y.sb);
        EXPECT_EQ(eval(d, y), r) << describe(ins, x) << " (a and b exchanged)";
      }
      if (::testing::Test::HasFailure()) return;
    }
  }
}

TEST(MmaProperty, ChainsAreBlocksInSequence) {
  std::mt19937_64 rng(kSeed + 4);
  SCOPED_TRACE("seed " + std::to_string(kSeed + 4));
  for (const MmaInstruction& ins : all_mma_instructions()) {
    const DotConfig& cfg = ins.config;
    if (cfg.block <= 0 || cfg.block >= ins.k || cfg.scale) continue;
    const Dot whole(cfg);
    DotConfig first = cfg, rest = cfg;
    first.block = rest.block = 0;
    rest.c = cfg.d;
    const Dot d1(first), d2(rest);
    const auto b = std::size_t(cfg.block);
    for (int n = 0; n < kCases; ++n) {
      Case x = random_case(ins, rng);
      std::uint64_t part = d1(x.c, std::span(x.a).first(b), std::span(x.b).first(b));
      for (std::size_t k0 = b; k0 < x.a.size(); k0 += b)
        part = d2(part, std::span(x.a).subspan(k0, b), std::span(x.b).subspan(k0, b));
      EXPECT_EQ(eval(whole, x), part) << describe(ins, x);
      if (::testing::Test::HasFailure()) return;
    }
  }
}

TEST(MmaProperty, Cdna1GroupsAreFusedAndChained) {
  // A CDNA1 fp16 or bf16 row on random bits (specials and subnormals included): the order of the
  // products within a group does not matter, nor a <-> b, and the row is its groups one after the
  // other, each group (a row with K = G) taking the previous result as c.
  std::mt19937_64 rng(kSeed + 7);
  SCOPED_TRACE("seed " + std::to_string(kSeed + 7));
  int rows = 0;
  for (const MmaInstruction& ins : all_mma_instructions()) {
    if (ins.arch != "cdna1" || ins.config.algorithm != MmaAlgorithm::tree) continue;
    ++rows;
    const bool f16 = ins.config.a == &binary16;
    const auto g = std::size_t(f16 ? 4 : 2);
    const Dot whole(ins.config);
    const Dot group(find_mma_instruction(f16 ? "cdna1:v_mfma_f32_4x4x4f16" : "cdna1:v_mfma_f32_4x4x2bf16")->config);
    for (int n = 0; n < kCases; ++n) {
      const Case x = random_case(ins, rng);
      const std::uint64_t r = eval(whole, x);
      std::uint64_t part = x.c;
      for (std::size_t k0 = 0; k0 < x.a.size(); k0 += g)
        part = group(part, std::span(x.a).subspan(k0, g), std::span(x.b).subspan(k0, g));
      // NaNs: which operand's payload survives may depend on the order.
      const auto same = [](std::uint64_t u, std::uint64_t v) {
        return u == v || (is_nan_bits(binary32, u) && is_nan_bits(binary32, v));
      };
      EXPECT_TRUE(same(part, r)) << describe(ins, x) << std::hex << ": " << r << " but in groups " << part;
      Case y = x;
      for (std::size_t k0 = 0; k0 < y.a.size(); k0 += g) {
        std::vector<std::size_t> perm(g);
        for (std::size_t i = 0; i < g; ++i) perm[i] = k0 + i;
        std::shuffle(perm.begin(), perm.end(), rng);
        for (std::size_t i = 0; i < g; ++i) {
          y.a[k0 + i] = x.a[perm[i]];
          y.b[k0 + i] = x.b[perm[i]];
        }
      }
      EXPECT_TRUE(same(eval(whole, y), r)) << describe(ins, x) << " (products permuted within their groups)";
      std::swap(y.a, y.b);
      EXPECT_TRUE(same(eval(whole, y), r)) << describe(ins, x) << " (a and b exchanged)";
      if (::testing::Test::HasFailure()) return;
    }
  }
  EXPECT_EQ(rows, 10);
}

TEST(MmaProperty, FastKernelsAgreeWithTheGenericOne) {
  // The FDA kernels specialised for binary16, bfloat16, tf32, e4m3 and e5m2 against the generic
  // kernel (reached through copies of the format descriptors), over F, blocks and floors, on
  // random bit patterns (specials and subnormals included).
  static const Format copies[] = {binary16, bfloat16, tf32, e4m3, e5m2};
  const Format* fixed[] = {&binary16, &bfloat16, &tf32, &e4m3, &e5m2};
  std::mt19937_64 rng(kSeed + 6);
  SCOPED_TRACE("seed " + std::to_string(kSeed + 6));
  for (std::size_t f = 0; f < std::size(copies); ++f) {
    for (const Format* out : {&binary32, &binary16}) {
      for (int F : {0, 3, 13, 23, 24, 25, 31, 40}) {
        for (int block : {0, 3, 8}) {
          for (int floor : {kNoAlignFloor, -133, -20, 0}) {
            DotConfig fast = default_dot_config(MmaAlgorithm::fda, *fixed[f], *fixed[f], *out, *out);
            fast.F = F;
            fast.block = block;
            fast.align_floor = floor;
            if (F == 13 && out == &binary32) fast.out_fraction_bits = 13;
            DotConfig slow = fast;
            slow.a = slow.b = &copies[f];
            ASSERT_EQ(check(fast), "");
            const Dot df(fast), ds(slow);
            for (int n = 0; n < 200; ++n) {
              const int k = 1 + int(rng() % 40);
              std::vector<std::uint64_t> a, b;
              for (int i = 0; i < k; ++i) {
                a.push_back(random_bits(*fixed[f], rng));
                b.push_back(random_bits(*fixed[f], rng));
              }
              const std::uint64_t c = random_bits(*out, rng);
              ASSERT_EQ(df(c, a, b), ds(c, a, b))
                  << fixed[f]->name << " F " << F << " block " << block << " floor " << floor << " K " << k;
            }
          }
        }
      }
    }
  }
}

TEST(MmaProperty, NvidiaNanIsCanonical) {
  // Any NaN input of a fused NVIDIA instruction gives 0x7FFFFFFF or 0x7FFF, whatever its payload.
  std::mt19937_64 rng(kSeed + 5);
  for (const MmaInstruction& ins : all_mma_instructions()) {
    const DotConfig& cfg = ins.config;
    if (cfg.nan != MmaNan::nvidia || !symmetric(cfg.algorithm) || cfg.algorithm == MmaAlgorithm::sfma ||
        cfg.algorithm == MmaAlgorithm::gps)
      continue;
    const Dot d(cfg);
    Case x = random_case(ins, rng);
    x.c = pack(*cfg.c, rng() & 1, cfg.c->inf_magnitude() | 1 | (rng() & cfg.c->man_mask()));
    EXPECT_EQ(eval(d, x), pack(*cfg.d, false, cfg.d->magnitude_mask())) << ins.id();
  }
}

}  // namespace
}  // namespace gp::model
