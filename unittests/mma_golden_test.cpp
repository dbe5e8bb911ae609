// The MMA model against dot products captured on real NVIDIA V100, A100 and H100 tensor cores
// (tests_mma/golden/nvidia-tensor-cores, see its README): every output bit of every case.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "model/mma_instructions.hpp"
#include "unittests/golden_sets.hpp"
#include "model/ops.hpp"

#ifndef GPUPARANOIA_GOLDEN_DIR
#error "GPUPARANOIA_GOLDEN_DIR must name tests_mma/golden"
#endif

namespace gp::model {
namespace {

namespace fs = std::filesystem;

fs::path golden_root() { return fs::path(GPUPARANOIA_GOLDEN_DIR) / "nvidia-tensor-cores"; }

std::vector<std::string> read_lines(const fs::path& p) {
  std::ifstream in(p);
  std::vector<std::string> lines;
  std::string line;
  while (std::getline(in, line))
    if (line.find_first_not_of(" \t\r") != std::string::npos) lines.push_back(line);
  return lines;
}

std::uint64_t parse_binary(const std::string& s) {
  std::uint64_t v = 0;
  for (char ch : s)
    if (ch == '0' || ch == '1') v = (v << 1) | std::uint64_t(ch - '0');
  return v;
}

std::vector<std::uint64_t> parse_hex_words(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::uint64_t> v;
  std::string w;
  while (in >> w) v.push_back(std::stoull(w, nullptr, 16));
  return v;
}

// A binary32 bit pattern that holds a value of format f exactly, as f's raw bits.
std::uint64_t narrow_exactly(const Format& f, std::uint64_t b32) {
  if (&f == &binary32) return b32;
  if (&f == &tf32) return b32;  // tf32 is stored in 32 bits
  const Result r = cvt(f, binary32, Options{}, b32);
  EXPECT_EQ(r.flags & Flag::inexact, 0u) << "input " << std::hex << b32 << " is not exact in " << f.name;
  return r.bits;
}

std::string hex(std::uint64_t v) {
  std::ostringstream s;
  s << std::hex << v;
  return s.str();
}

// The cases of one set in the raw bits of the instruction's formats.
struct Cases {
  std::vector<std::vector<std::uint64_t>> a, b;
  std::vector<std::uint64_t> c, d;
  std::vector<std::string> a_text, b_text;
};

Cases load(const GoldenSet& set, const DotConfig& cfg) {
  Cases x;
  const fs::path dir = golden_root() / set.gpu / set.input;
  const std::string tag = std::string(set.gpu) + "_" + set.input;
  x.a_text = read_lines(dir / ("a_" + tag + ".txt"));
  x.b_text = read_lines(dir / ("b_" + tag + ".txt"));
  // Where c is zero the capture has no c file (golden README).
  const auto c_lines = set.c_is_zero ? std::vector<std::string>(x.a_text.size(), "0")
                                     : read_lines(dir / ("c_" + std::string(set.gpu) + "_fp32.txt"));
  const auto d_lines = read_lines(dir / ("d_" + std::string(set.gpu) + "_" + set.output + ".txt"));
  EXPECT_EQ(x.a_text.size(), 5000u);
  EXPECT_EQ(x.b_text.size(), x.a_text.size());
  EXPECT_EQ(c_lines.size(), x.a_text.size());
  EXPECT_EQ(d_lines.size(), x.a_text.size());
  const std::size_t n = std::min({x.a_text.size(), x.b_text.size(), c_lines.size(), d_lines.size()});
  for (std::size_t i = 0; i < n; ++i) {
    std::vector<std::uint64_t> a = parse_hex_words(x.a_text[i]), b = parse_hex_words(x.b_text[i]);
    EXPECT_EQ(a.size(), b.size()) << "line " << i + 1;
    for (auto& v : a) v = narrow_exactly(*cfg.a, v);
    for (auto& v : b) v = narrow_exactly(*cfg.b, v);
    std::uint64_t c = parse_binary(c_lines[i]);
    // A binary16 c was converted from the captured binary32 value with RNE (golden README).
    if (cfg.c != &binary32) c = cvt(*cfg.c, binary32, Options{}, c).bits;
    std::uint64_t d = parse_binary(d_lines[i]);
    if (cfg.d != &binary32) d = narrow_exactly(*cfg.d, d);
    x.a.push_back(std::move(a));
    x.b.push_back(std::move(b));
    x.c.push_back(c);
    x.d.push_back(d);
  }
  return x;
}

int mismatches(const Cases& x, const DotConfig& cfg) {
  const Dot dot(cfg);
  int n = 0;
  for (std::size_t i = 0; i < x.a.size(); ++i) n += dot(x.c[i], x.a[i], x.b[i]) != x.d[i];
  return n;
}

class Golden : public ::testing::TestWithParam<GoldenSet> {
 protected:
  void SetUp() override {
    const GoldenSet& set = GetParam();
    const fs::path dir = golden_root() / set.gpu / set.input;
    ASSERT_TRUE(fs::is_directory(dir)) << "captured tensor-core data missing: " << dir
                                       << " (part of the source tree: tests_mma/golden)";
    ins = find_mma_instruction(set.instruction);
    ASSERT_NE(ins, nullptr) << set.instruction;
    ASSERT_EQ(check(ins->config), "");
    cases = load(set, ins->config);
    ASSERT_FALSE(cases.a.empty());
  }
  const MmaInstruction* ins = nullptr;
  Cases cases;
};

TEST_P(Golden, EveryCaseBitForBit) {
  const GoldenSet& set = GetParam();
  const Dot dot(ins->config);
  int bad = 0;
  for (std::size_t i = 0; i < cases.a.size(); ++i) {
    const std::uint64_t got = dot(cases.c[i], cases.a[i], cases.b[i]);
    if (got != cases.d[i] && ++bad <= 10) {
      ADD_FAILURE() << set.instruction << " case " << i + 1 << ": c " << hex(cases.c[i]) << " a " << cases.a_text[i]
                    << " b " << cases.b_text[i] << ": hardware " << hex(cases.d[i]) << ", model " << hex(got);
    }
  }
  EXPECT_EQ(bad, 0) << set.gpu << " " << set.input << " -> " << set.output << " with " << set.instruction;
}

// The parameters the notes of the instruction say the data forces: each alternative mismatches.
TEST_P(Golden, DataForcesTheParameters) {
  const DotConfig& base = ins->config;
  const int k = int(cases.a.front().size());
  const int block = base.block > 0 ? std::min(base.block, k) : k;
  auto expect_mismatch = [&](DotConfig alt, const char* what) {
    EXPECT_GT(mismatches(cases, alt), 0) << ins->id() << ": the data does not rule out " << what;
  };
  DotConfig alt = base;
  alt.block = block / 2;
  expect_mismatch(alt, "a block of half the products");
  alt = base;
  alt.out_rounding = base.out_rounding == Rounding::rz ? Rounding::rne : Rounding::rz;
  expect_mismatch(alt, "the other output rounding (RZ / RNE)");
  if (base.d == &binary32) {
    for (int df : {-1, 1}) {
      alt = base;
      alt.F = base.F + df;
      expect_mismatch(alt, df < 0 ? "F - 1" : "F + 1");
    }
  }
  if (base.out_fraction_bits != base.d->man_bits) {
    for (int bits : {base.out_fraction_bits - 1, base.out_fraction_bits + 1, base.d->man_bits}) {
      alt = base;
      alt.out_fraction_bits = bits;
      expect_mismatch(alt, "another output precision");
    }
  }
  // The alignment floor is not exercised by the captures: any floor up to -10 fits.
  alt = base;
  alt.align_floor = -10;
  EXPECT_EQ(mismatches(cases, alt), 0) << ins->id();
  alt.align_floor = kNoAlignFloor;
  EXPECT_EQ(mismatches(cases, alt), 0) << ins->id();
}

INSTANTIATE_TEST_SUITE_P(NvidiaTensorCores, Golden, ::testing::ValuesIn(kGoldenSets),
                         [](const ::testing::TestParamInfo<GoldenSet>& p) {
                           return std::string(p.param.gpu) + "_" + p.param.input + "_to_" + p.param.output;
                         });

}  // namespace
}  // namespace gp::model
