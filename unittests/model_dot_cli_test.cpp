// `gpuparanoia model dot`: both forms, the line format, errors naming line and field, and batches
// split across threads keeping their order.
#include <gtest/gtest.h>

#include <random>
#include <sstream>

#include "cli/exit_codes.hpp"
#include "cli/model_dot.hpp"
#include "model/mma_instructions.hpp"

namespace gp::cli {
namespace {

struct Outcome {
  int rc;
  std::string out, err;
};

Outcome run(const DotArgs& args, const std::string& input) {
  std::istringstream in(input);
  std::ostringstream out, err;
  const int rc = run_model_dot(args, in, out, err);
  return {rc, out.str(), err.str()};
}

DotArgs instruction(const char* id) {
  DotArgs a;
  a.instruction = id;
  return a;
}

DotArgs algorithm(const char* alg, const char* ab, const char* cd) {
  DotArgs a;
  a.algorithm = alg;
  a.a_format = a.b_format = ab;
  a.c_format = a.d_format = cd;
  return a;
}

TEST(ModelDotCli, InstructionForm) {
  // Volta: 1 + 4 * (1 * 1) = 5; 1 + 2^-24 * 4 ones rounds toward zero to 1 (F = 23).
  const Outcome r = run(instruction("volta:HMMA.884.F32.F32"),
                        "3f800000 3c00 3c00 3c00 3c00 3c00 3c00 3c00 3c00\n"
                        "3f800000 3c00 3c00 3c00 3c00 0001 0001 0001 0001\n");
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, "40a00000\n3f800000\n");
  // Binary16 output: four hex digits.
  const Outcome h = run(instruction("volta:HMMA.884.F16.F16"), "3c00 3c00 0 0 0 3c00 0 0 0\n");
  EXPECT_EQ(h.out, "4000\n");
}

TEST(ModelDotCli, AlgorithmFormInfersK) {
  DotArgs a = algorithm("fda", "binary16", "binary32");
  a.F = 23;
  const Outcome r = run(a, "3f800000 3c00 3c00\n3f800000 3c00 3c00 3c00 3c00\n3f800000\n");
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, "40000000\n40400000\n3f800000\n");
  // cofda without --block chains halves. With F = 0, four products 0.5: fused, they are aligned to
  // 2^-1 and sum to 2; chained, the first half gives c = 1, which then truncates the others away.
  DotArgs co = algorithm("cofda", "binary16", "binary32");
  co.F = 0;
  const std::string halves = "0 3800 3800 3800 3800 3c00 3c00 3c00 3c00\n";
  EXPECT_EQ(run(co, halves).out, "3f800000\n");
  DotArgs fd = algorithm("fda", "binary16", "binary32");
  fd.F = 0;
  EXPECT_EQ(run(fd, halves).out, "40000000\n");
  fd.block = 2;
  EXPECT_EQ(run(fd, halves).out, "3f800000\n");
}

// --carry-bits: c = 1 and four products 1.875^2 (leading bit 1) sum to 15.0625, which needs 2 carry
// bits above 2^1; with 1 it wraps to 15.0625 - 16.
TEST(ModelDotCli, CarryBitsWrapTheSum) {
  const std::string line = "3f800000 3f80 3f80 3f80 3f80 3f80 3f80 3f80 3f80\n";
  DotArgs a = algorithm("fda", "binary16", "binary32");
  EXPECT_EQ(run(a, line).out, "41710000\n");
  a.carry_bits = 2;
  EXPECT_EQ(run(a, line).out, "41710000\n");
  a.carry_bits = 1;
  EXPECT_EQ(run(a, line).out, "bf700000\n");
  DotArgs g = algorithm("gps", "binary16", "binary32");
  g.carry_bits = 1;
  const Outcome r = run(g, line);
  EXPECT_EQ(r.rc, kExitUsage);
  EXPECT_NE(r.err.find("--carry-bits: not a parameter of gps"), std::string::npos) << r.err;
}

TEST(ModelDotCli, SummationTreeForm) {
  // c = 1 and two products 2^-11 (0x1000 * 0x3c00), a third 0. Summed first, they make 2^-10,
  // which 1 keeps: 1 + 2^-10. Added to c one at a time, each is a tie that rounds to even: 1.
  const std::string line = "3c00 1000 1000 0000 3c00 3c00 3c00\n";
  DotArgs first = algorithm("tree", "binary16", "binary16");
  first.tree = "((p0+p1)+p2)+c";
  Outcome r = run(first, line);
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, "3c01\n");
  DotArgs from_c = first;
  from_c.tree = "((c+p0)+p1)+p2";
  r = run(from_c, line);
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, "3c00\n");
  // Rounded up instead, each addition of 2^-11 to 1 gives 1 + 2^-10, the second 1 + 2^-9.
  from_c.rounding = "ru";
  EXPECT_EQ(run(from_c, line).out, "3c02\n");
  // One fused node: the exact sum rounds once.
  DotArgs fused = first;
  fused.tree = "c+p0+p1+p2";
  EXPECT_EQ(run(fused, line).out, "3c01\n");
  // Products rounded to bfloat16 first: (1 + 2^-10) * 1 keeps 8 bits, 1.
  DotArgs rounded = first;
  rounded.tree = "(p0+p1)+c";
  rounded.products = "bfloat16";
  EXPECT_EQ(run(rounded, "0000 0000 3c01 3c00 3c00\n").out, "3c00\n");
  rounded.products = "exact";
  EXPECT_EQ(run(rounded, "0000 0000 3c01 3c00 3c00\n").out, "3c01\n");
  // Subnormal c flushed.
  DotArgs flush = first;
  flush.tree = "p0+c";
  flush.flush = {"c"};
  EXPECT_EQ(run(flush, "0001 0000 3c00\n").out, "0000\n");
  flush.flush.clear();
  EXPECT_EQ(run(flush, "0001 0000 3c00\n").out, "0001\n");
  // Errors: a line of another K, a tree option without the tree algorithm, malformed trees.
  r = run(first, "3c00 3c00 3c00 3c00 3c00\n");
  EXPECT_EQ(r.rc, kExitBadInput);
  EXPECT_EQ(r.err, "gpuparanoia: <stdin>:1: the tree sums 3 products, the line has 2\n");
  DotArgs misplaced = algorithm("fda", "binary16", "binary32");
  misplaced.tree = "p0+c";
  EXPECT_NE(run(misplaced, line).err.find("--tree: not a parameter of fda"), std::string::npos);
  DotArgs bad = first;
  bad.tree = "p0+p0+c";
  r = run(bad, line);
  EXPECT_EQ(r.rc, kExitBadInput);
  EXPECT_EQ(r.err, "gpuparanoia: --tree: p0 appears twice at character 6 of 'p0+p0+c'\n");
  bad.tree = "";
  EXPECT_NE(run(bad, line).err.find("a tree is required"), std::string::npos);
  bad = first;
  bad.flush = {"outputs"};
  EXPECT_NE(run(bad, line).err.find("unknown flush"), std::string::npos);
}

TEST(ModelDotCli, ScaleFactorsFollowTheBFields) {
  // NVFP4 on RTX Blackwell: 64 e2m1 values each for a and b, then 4 ue4m3 scales each.
  std::string line = "3f800000";
  for (int i = 0; i < 64; ++i) line += i == 0 ? " 2" : " 0";  // a0 = 1 (e2m1 0x2)
  for (int i = 0; i < 64; ++i) line += i == 0 ? " 4" : " 0";  // b0 = 2 (e2m1 0x4)
  line += " 40 38 38 38 38 38 38 38\n";                       // sa0 = 2 (ue4m3 0x40), the rest 1
  const Outcome r = run(instruction("rtx-blackwell:OMMA.SF.16864.F32.E2M1.E2M1.UE4M3.4X"), line);
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, "40a00000\n");  // 1 + 1 * 2 * 2 = 5
  DotArgs a = algorithm("gdfs", "e2m1", "binary32");
  a.scale_format = "ue4m3";
  EXPECT_EQ(run(a, line).out, "40a00000\n");
}

TEST(ModelDotCli, ErrorsNameLineAndField) {
  const DotArgs v = instruction("volta:HMMA.884.F32.F32");
  Outcome r = run(v, "3f800000 3c00 3c00 3c00 3c00 3c00 3c00 3c00 3c00\n3f800000 3c00 3c00\n");
  EXPECT_EQ(r.rc, kExitBadInput);
  EXPECT_EQ(r.out, "40a00000\n");  // the lines before the error are answered
  EXPECT_EQ(r.err.rfind("gpuparanoia: <stdin>:2: volta:HMMA.884.F32.F32 needs 9 fields", 0), 0u) << r.err;
  r = run(v, "3f800000 3c00 3c00 3c00 3c00 3c00 3c00 3c00 xyz\n");
  EXPECT_EQ(r.rc, kExitBadInput);
  EXPECT_EQ(r.err, "gpuparanoia: <stdin>:1: field 9: 'xyz' is not a hex bit pattern\n");
  r = run(v, "3f800000 3c00 3c00 3c00 3c00 3c00 3c00 3c00 13c00\n");
  EXPECT_EQ(r.err,
            "gpuparanoia: <stdin>:1: field 9: '13c00' is not a binary16 bit pattern (16 bits, 4 hex digits at most)\n");
  r = run(v, "\n");
  EXPECT_EQ(r.rc, kExitBadInput);
  r = run(algorithm("fda", "binary16", "binary32"), "3f800000 3c00\n");
  EXPECT_EQ(r.rc, kExitBadInput);
  EXPECT_EQ(r.err.rfind("gpuparanoia: <stdin>:1: expected c, K values", 0), 0u) << r.err;
  EXPECT_EQ(run(instruction("hopper:HMMA.1234"), "").rc, 2);
  EXPECT_EQ(run(algorithm("fdx", "binary16", "binary32"), "").rc, 2);
  EXPECT_EQ(run(algorithm("fda", "binary17", "binary32"), "").rc, 2);
  DotArgs both = instruction("volta:HMMA.884.F32.F32");
  both.F = 3;
  EXPECT_EQ(run(both, "").rc, 2);
  // gdfs: e4m3 beside fp4 runs; two e4m3 operands are refused, and the message says so.
  DotArgs mixed = algorithm("gdfs", "e4m3", "binary32");
  mixed.b_format = "e2m1";
  EXPECT_EQ(run(mixed, "").rc, 0);
  r = run(algorithm("gdfs", "e4m3", "binary32"), "");
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("fp4 and fp6, or e4m3 with one of them"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("e4m3 x e4m3 needs 43"), std::string::npos) << r.err;
  DotArgs wide = algorithm("fda", "binary64", "binary32");
  EXPECT_EQ(run(wide, "").rc, 2);  // products too wide for the fused algorithms
}

TEST(ModelDotCli, ThreadsKeepTheOrder) {
  // 100000 random lines (more than one chunk): 4 threads and 1 thread answer identically.
  std::mt19937_64 rng(7);
  std::string input;
  char buf[16];
  for (int i = 0; i < 100000; ++i) {
    std::snprintf(buf, sizeof buf, "%08x", unsigned(rng()));
    input += buf;
    for (int k = 0; k < 32; ++k) {
      std::snprintf(buf, sizeof buf, " %04x", unsigned(rng() & 0xFFFF));
      input += buf;
    }
    input += '\n';
  }
  DotArgs a = instruction("hopper:HMMA.16816.F32");
  a.threads = 4;
  const Outcome many = run(a, input);
  a.threads = 1;
  const Outcome one = run(a, input);
  EXPECT_EQ(many.rc, 0) << many.err;
  EXPECT_EQ(many.out.size(), 100000u * 9);
  EXPECT_EQ(many.out, one.out);
}

TEST(ModelDotCli, AnErrorInAParallelChunkStopsAtItsLine) {
  std::string input;
  for (int i = 1; i <= 10000; ++i)
    input += i == 5000 ? "3f800000 3c00 zz 3c00 3c00 3c00 3c00 3c00 3c00\n"
                       : "3f800000 3c00 3c00 3c00 3c00 3c00 3c00 3c00 3c00\n";
  DotArgs a = instruction("volta:HMMA.884.F32.F32");
  a.threads = 4;
  const Outcome r = run(a, input);
  EXPECT_EQ(r.rc, kExitBadInput);
  EXPECT_EQ(r.out.size(), 4999u * 9);
  EXPECT_EQ(r.err, "gpuparanoia: <stdin>:5000: field 3: 'zz' is not a hex bit pattern\n");
}

TEST(ModelDotCli, ListsEveryInstruction) {
  DotArgs a;
  a.list = true;
  const Outcome r = run(a, "");
  EXPECT_EQ(r.rc, 0);
  std::size_t lines = 0;
  for (char c : r.out) lines += c == '\n';
  EXPECT_EQ(lines, model::all_mma_instructions().size());
  EXPECT_NE(r.out.find("cdna3:v_mfma_f32_32x32x8_f16"), std::string::npos);
}

}  // namespace
}  // namespace gp::cli
