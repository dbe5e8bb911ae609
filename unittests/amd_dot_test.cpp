// AMD's dot units through the model: the published examples of ROCm/rocm-systems issue 12056
// (gfx1151, RDNA 3.5: V_DOT2_F32_F16, V_DOT2_F32_BF16) and of llvm-project pull request 205101
// (v_dot2_f32_f16 on gfx90a and gfx950), the grid width F they imply for the ocfda algorithm, and
// how ocfda generalises to WMMA's K = 16.
#include <gtest/gtest.h>

#include <random>
#include <span>
#include <vector>

#include "model/dot_parameters.hpp"
#include "model/mma_instructions.hpp"
#include "model/ops.hpp"

namespace gp::model {
namespace {

using Bits = std::vector<std::uint64_t>;

std::uint64_t run(const char* id, std::uint64_t c, const Bits& a, const Bits& b) {
  const MmaInstruction* i = find_mma_instruction(id);
  EXPECT_NE(i, nullptr) << id;
  return i ? Dot(i->config)(c, a, b) : 0;
}

// Small integers: binary16 3, 8, 4 and bfloat16 3, 8, 4; binary32 1 and -1.
const Bits h_a = {0x4200, 0x4800}, h_b = {0x4800, 0x4400};
const Bits bf_a = {0x4040, 0x4100}, bf_b = {0x4100, 0x4080};
constexpr std::uint64_t one = 0x3F800000, minus_one = 0xBF800000;

TEST(AmdDot, IssueExamplesOfRdna35) {
  for (const char* id : {"rdna3.5:v_dot2_f32_f16", "rdna3.5:v_dot2_f32_bf16"}) {
    const bool bf = std::string_view(id).ends_with("bf16");
    const Bits& a = bf ? bf_a : h_a;
    const Bits& b = bf ? bf_b : h_b;
    // 1 + 3*8 + 8*4: every summand has c's sign, the integer sum is exact.
    EXPECT_EQ(run(id, one, a, b), 0x42640000u) << id;  // 57
    // -1 + 3*8 + 8*4: both products oppose c's sign and are inverted without the +1: 55 + 2^-18.
    EXPECT_EQ(run(id, minus_one, a, b), 0x425C0001u) << id;
  }
  // bf16 subnormal inputs are flushed; products are not: 2^-133 x 2^20 gives 0, 2^-113 x 1 gives 2^-113.
  EXPECT_EQ(run("rdna3.5:v_dot2_f32_bf16", 0, {0x0001, 0}, {0x4980, 0}), 0u);
  EXPECT_EQ(run("rdna3.5:v_dot2_f32_bf16", 0, {0x0700, 0}, {0x3F80, 0}), 0x07000000u);
}

// The grid's LSB: the largest sum of operand exponents of -1 + 3*8 + 8*4 is 3 + 2 = 5 (8 x 4). Each
// inverted product lands one grid unit further from zero, so the result is 55 + 2 units: 2^-18
// (one binary32 ulp of 55) takes units of 2^-19, 24 bits below 2^5. With RNE output, F = 23
// gives 55 + 2^-17 and F = 25 a tie that rounds to 55: only F = 24 reproduces the silicon. (This
// reads the issue's integer sum literally, the result's magnitude that sum's absolute value; an
// adder that took a negative sum's magnitude by inverting it once more would be one unit closer,
// 55 + 1 unit, and need F = 23.)
TEST(AmdDot, TheIssueExampleImpliesTwentyFourGridBits) {
  const DotConfig base = find_mma_instruction("rdna3.5:v_dot2_f32_f16")->config;
  for (int F = 16; F <= 32; ++F) {
    DotConfig c = base;
    c.F = F;
    EXPECT_EQ(Dot(c)(minus_one, h_a, h_b) == 0x425C0001u, F == 24) << "F = " << F;
    EXPECT_EQ(Dot(c)(one, h_a, h_b), 0x42640000u) << "F = " << F;
  }
}

TEST(AmdDot, CdnaSubnormalInputs) {
  // -2^-24 x 2^-14 + 0: gfx90a flushes the f16 subnormal (+0), gfx950 keeps it (-2^-38).
  EXPECT_EQ(run("cdna2:v_dot2_f32_f16", 0, {0x8001, 0}, {0x0400, 0}), 0u);
  EXPECT_EQ(run("cdna4:v_dot2_f32_f16", 0, {0x8001, 0}, {0x0400, 0}), 0xAC800000u);
}

// The rows of the table evaluate, and WMMA is the dot2 unit chained over K/2 blocks in k order.
TEST(AmdDot, WmmaChainsTheDot2Unit) {
  std::mt19937_64 rng(12056);
  for (const char* arch : {"rdna3", "rdna3.5", "rdna4"})
    for (const char* in : {"f16", "bf16"}) {
      const std::string wmma = std::string(arch) + ":v_wmma_f32_16x16x16_" + in;
      const std::string dot2 = std::string(arch) + ":v_dot2_f32_" + in;
      const Dot w(find_mma_instruction(wmma)->config), d(find_mma_instruction(dot2)->config);
      for (int n = 0; n < 2000; ++n) {
        // Random signs and exponents near each other, so that products cancel and opposing signs abound.
        const auto draw = [&](const Format& f) {
          const std::uint64_t e = f.bias - 3 + rng() % 7;
          return pack(f, rng() & 1, (e << f.man_bits) | (rng() & f.man_mask()));
        };
        Bits a(16), b(16);
        for (int k = 0; k < 16; ++k) {
          a[std::size_t(k)] = draw(*w.config().a);
          b[std::size_t(k)] = draw(*w.config().b);
        }
        const std::uint64_t c = draw(binary32);
        std::uint64_t chained = c;
        for (std::size_t k = 0; k < 16; k += 2)
          chained = d(chained, std::span(a).subspan(k, 2), std::span(b).subspan(k, 2));
        ASSERT_EQ(w(c, a, b), chained) << wmma;
      }
    }
  for (const MmaInstruction& i : all_mma_instructions())
    if (i.arch.starts_with("rdna")) {
      EXPECT_EQ(i.config.algorithm, MmaAlgorithm::ocfda) << i.id();
      const Dot d(i.config);
      EXPECT_EQ(d(0, Bits(std::size_t(i.k), 0), Bits(std::size_t(i.k), 0)), 0u) << i.id();
    }
}

TEST(AmdDot, OcfdaParametersByName) {
  const auto r =
      dot_config_from_parameters(MmaAlgorithm::ocfda, binary16, binary16, binary32, binary32, 16,
                                 {{"F", std::int64_t(23)}, {"flush_inputs", true}, {"block", std::int64_t(0)}});
  ASSERT_TRUE(r.config) << r.error;
  EXPECT_EQ(r.config->F, 23);
  EXPECT_TRUE(r.config->flush_inputs);
  EXPECT_EQ(effective_block(*r.config, 16), 16);
  // Defaults: blocks of 2, F = 24, RNE; bf16 inputs flushed, f16 kept.
  const DotConfig bf = default_dot_config(MmaAlgorithm::ocfda, bfloat16, bfloat16, binary32, binary32, 16);
  EXPECT_EQ(bf.block, 2);
  EXPECT_EQ(bf.F, 24);
  EXPECT_EQ(bf.out_rounding, Rounding::rne);
  EXPECT_TRUE(bf.flush_inputs);
  EXPECT_FALSE(default_dot_config(MmaAlgorithm::ocfda, binary16, binary16, binary32, binary32, 16).flush_inputs);
  const auto wrong = dot_config_from_parameters(MmaAlgorithm::fda, binary16, binary16, binary32, binary32, 16,
                                                {{"flush_inputs", true}});
  EXPECT_FALSE(wrong.config);
  EXPECT_EQ(wrong.key, "flush_inputs");
  EXPECT_FALSE(dot_config_from_parameters(MmaAlgorithm::ocfda, binary16, binary16, binary32, binary32, 16,
                                          {{"scale_format", std::string("ue8m0")}})
                   .config);
}

// Specials as IEEE: a NaN or inf - inf gives the format's NaN, an infinity passes.
TEST(AmdDot, OcfdaSpecials) {
  const char* id = "rdna3.5:v_dot2_f32_f16";
  EXPECT_EQ(run(id, 0x7F800000, h_a, h_b), 0x7F800000u);
  EXPECT_EQ(run(id, 0xFF800000, {0x7C00, 0}, {0x3C00, 0}), 0x7FC00000u);
  EXPECT_EQ(run(id, 0, {0x7C00, 0}, {0x0000, 0}), 0x7FC00000u);
  EXPECT_EQ(run(id, 0x80000000, {0x8000, 0x8000}, {0x3C00, 0x3C00}), 0x80000000u);  // every summand -0
}

}  // namespace
}  // namespace gp::model
