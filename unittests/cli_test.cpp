// The batch command line (README, Command line): hex parsing, widths, errors naming line and field.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <random>
#include <sstream>

#include "cli/batch.hpp"
#include "cli/exit_codes.hpp"
#include "cli/model_command.hpp"
#include "input/limits.hpp"

namespace gp::cli {
namespace {

struct Outcome {
  int code;
  std::string out, err;
};

Outcome run(ScalarArgs a, const std::string& input) {
  std::istringstream in(input);
  std::ostringstream out, err;
  const int code = run_model_scalar(a, in, out, err);
  return {code, out.str(), err.str()};
}

ScalarArgs args(std::string format, std::string op) {
  ScalarArgs a;
  a.format = std::move(format);
  a.op = std::move(op);
  return a;
}

TEST(ModelScalar, OneResultPerLineAtTheStorageWidth) {
  EXPECT_EQ(run(args("binary16", "add"), "3c00 3c00\n0 0\n").out, "4000\n0000\n");
  EXPECT_EQ(run(args("binary32", "sqrt"), "40800000\n").out, "40000000\n");
  EXPECT_EQ(run(args("binary64", "fma"), "3ff0000000000000 3ff0000000000000 0\n").out, "3ff0000000000000\n");
  EXPECT_EQ(run(args("e2m1", "mul"), "2 3\n").out, "03\n");  // 1 * 1.5
  ScalarArgs a = args("bfloat16", "cvt");
  a.from = "binary32";
  EXPECT_EQ(run(a, "3f808000\n3f818000\n").out, "3f80\n3f82\n");  // ties to even
  a.rounding = "ru";
  EXPECT_EQ(run(a, "3f808000\n").out, "3f81\n");
}

TEST(ModelScalar, UpperCaseHexTabsAndShortFieldsAreAccepted) {
  EXPECT_EQ(run(args("binary16", "add"), "3C00\t3c00\r\n0 01\n").out, "4000\n0001\n");
}

// A field has 1 to the storage width's hex digits: leading zeros beyond it are an error, as is a
// line beyond the length limit.
TEST(ModelScalar, FieldsAndLinesBeyondTheirWidthAreErrors) {
  Outcome r = run(args("binary16", "add"), "3c00 03c00\n");
  EXPECT_EQ(r.code, kExitBadInput);
  EXPECT_EQ(r.err,
            "gpuparanoia: <stdin>:1: field 2: '03c00' is not a binary16 bit pattern (16 bits, 4 hex digits at most)\n");
  r = run(args("fp24", "add"), "0 1000000\n");
  EXPECT_EQ(r.err,
            "gpuparanoia: <stdin>:1: field 2: '1000000' is not a fp24 bit pattern (24 bits, 6 hex digits at most)\n");
  r = run(args("binary16", "add"), "0 0\n" + std::string(input::kMaxLineBytes + 1, ' ') + "\n0 0\n");
  EXPECT_EQ(r.code, kExitBadInput);
  EXPECT_EQ(r.out, "0000\n");
  EXPECT_EQ(r.err, fmt::format("gpuparanoia: <stdin>:2: longer than {} bytes\n", input::kMaxLineBytes));
  EXPECT_EQ(run(args("binary16", "add"), "0 0\n" + std::string(input::kMaxLineBytes - 3, ' ') + "0 0").out,
            "0000\n0000\n");  // a line of the limit's length, without its newline
}

TEST(ModelScalar, OptionsReachTheModel) {
  ScalarArgs a = args("binary16", "add");
  a.ftz = {"in"};
  EXPECT_EQ(run(a, "0001 0001\n").out, "0000\n");
  a.ftz = {"in", "out"};
  a.flags = true;
  EXPECT_EQ(run(a, "0400 8001\n").out, "0400 00\n");
  a = args("e4m3", "mul");
  a.saturate = true;
  EXPECT_EQ(run(a, "7e 7e\n").out, "7e\n");
  a = args("binary32", "add");
  a.canonical_nan = true;
  EXPECT_EQ(run(a, "ffc00001 0\n").out, "7fc00000\n");
}

TEST(ModelScalar, ErrorsNameLineAndField) {
  Outcome r = run(args("binary16", "add"), "3c00 3c00\n3c00 xyz\n");
  EXPECT_EQ(r.code, kExitBadInput);
  EXPECT_EQ(r.out, "4000\n");  // results before the bad line are written
  EXPECT_EQ(r.err, "gpuparanoia: <stdin>:2: field 2: 'xyz' is not a hex bit pattern\n");
  r = run(args("binary16", "add"), "3c00\n");
  EXPECT_EQ(r.err, "gpuparanoia: <stdin>:1: expected 2 fields, found 1\n");
  r = run(args("binary16", "add"), "3c00 1 2\n");
  EXPECT_EQ(r.err, "gpuparanoia: <stdin>:1: field 3: expected 2 fields, found more\n");
  r = run(args("binary16", "add"), "3c00 10000\n");
  EXPECT_NE(r.err.find("is not a binary16 bit pattern (16 bits"), std::string::npos) << r.err;
  r = run(args("binary16", "add"), "3c00 \x01\n");
  EXPECT_EQ(r.err, "gpuparanoia: <stdin>:1: field 2: byte 0x01 is not a hex bit pattern\n");
  r = run(args("binary16", "add"), "\n");
  EXPECT_EQ(r.code, kExitBadInput);
  r = run(args("e2m1", "sqrt"), "f\n");
  EXPECT_EQ(r.code, 0);
  r = run(args("e2m1", "sqrt"), "ff\n");  // e2m1 is 4 bits in a byte: the value must fit the format
  EXPECT_EQ(r.code, kExitBadInput);
  EXPECT_EQ(r.err, "gpuparanoia: <stdin>:1: field 1: 'ff' is not a e2m1 bit pattern (4 bits, 2 hex digits at most)\n");
}

// Lines are evaluated in batches: over several of them (and a partial one before a bad line), each
// line's result is the host's own binary32 sum, and the results before the bad line are written.
TEST(ModelScalar, ManyLinesAreEvaluatedInBatches) {
  std::mt19937 rng(1);
  std::string in, want;
  const int lines = 10000;
  for (int i = 0; i < lines; ++i) {
    const auto a = std::uint32_t(rng()), b = std::uint32_t(rng());
    const float x = std::bit_cast<float>(a), y = std::bit_cast<float>(b);
    if (std::isnan(x) || std::isnan(y)) continue;  // NaN payloads are the model's convention
    in += fmt::format("{:08x} {:08x}\n", a, b);
    want += fmt::format("{:08x}\n", std::bit_cast<std::uint32_t>(x + y));
  }
  Outcome r = run(args("binary32", "add"), in);
  EXPECT_EQ(r.code, 0);
  EXPECT_TRUE(r.out == want) << "the results differ from the host's";
  const std::size_t n = std::size_t(std::count(in.begin(), in.end(), '\n'));
  r = run(args("binary32", "add"), in + "0 xyz\n0 0\n");
  EXPECT_EQ(r.code, kExitBadInput);
  EXPECT_TRUE(r.out == want);
  EXPECT_EQ(r.err, fmt::format("gpuparanoia: <stdin>:{}: field 2: 'xyz' is not a hex bit pattern\n", n + 1));
}

TEST(ModelScalar, UnknownNamesAreErrors) {
  EXPECT_EQ(run(args("binary17", "add"), "").code, 2);
  EXPECT_EQ(run(args("binary16", "pow"), "").code, 2);
  ScalarArgs a = args("binary16", "add");
  a.rounding = "nearest";
  EXPECT_NE(run(a, "").err.find("unknown rounding 'nearest'"), std::string::npos);
  a = args("binary16", "cvt");
  EXPECT_NE(run(a, "").err.find("--from"), std::string::npos);
  a = args("binary16", "add");
  a.from = "binary32";
  EXPECT_EQ(run(a, "").code, 2);
  a = args("binary16", "add");
  a.ftz = {"both"};
  EXPECT_EQ(run(a, "").code, 2);
}

TEST(HexLine, WidthsPerField) {
  std::vector<std::uint64_t> v;
  input::InputError e;
  const model::Format* widths[] = {&model::binary32, &model::binary16};
  EXPECT_TRUE(parse_hex_line("ffffffff ffff", 1, widths, 2, v, e));
  EXPECT_FALSE(parse_hex_line("ffffffff 1ffff", 1, widths, 2, v, e));
  const model::Format* w64[] = {&model::binary64};
  EXPECT_TRUE(parse_hex_line("ffffffffffffffff", 1, w64, 1, v, e));
  EXPECT_EQ(v[0], ~std::uint64_t{0});
  EXPECT_FALSE(parse_hex_line("0ffffffffffffffff", 1, w64, 1, v, e));
  EXPECT_FALSE(parse_hex_line("1ffffffffffffffff", 1, w64, 1, v, e));
  // The value fits the format, not only its container: e2m1 and e2m3 sit in the low bits of a byte.
  const model::Format* fp4[] = {&model::e2m1};
  EXPECT_TRUE(parse_hex_line("f", 1, fp4, 1, v, e));
  EXPECT_FALSE(parse_hex_line("1f", 1, fp4, 1, v, e));
  EXPECT_NE(e.what.find("e2m1"), std::string::npos) << e.what;
  const model::Format* fp6[] = {&model::e2m3};
  EXPECT_TRUE(parse_hex_line("3f", 1, fp6, 1, v, e));
  EXPECT_FALSE(parse_hex_line("40", 1, fp6, 1, v, e));
  // tf32's ignored low bits are part of its 32-bit pattern.
  const model::Format* tf32[] = {&model::tf32};
  EXPECT_TRUE(parse_hex_line("3f801fff", 1, tf32, 1, v, e));
  EXPECT_EQ(format_hex(0x7e, 8), "7e");
  EXPECT_EQ(format_hex(0x1, 32), "00000001");
  EXPECT_EQ(format_hex(0x1, 6), "01");
}

// Fuzzing by mutation: arbitrary bytes never crash the parser, and every rejection names its line.
TEST(HexLine, FuzzedLinesParseOrNameTheirLine) {
  std::mt19937_64 rng(12345);
  const std::string alphabet = "0123456789abcdefABCDEF \t\r xg-+.\x01\xff";
  std::vector<std::uint64_t> v;
  input::InputError e;
  const model::Format* widths[] = {&model::binary16, &model::binary32, &model::binary64};
  for (int i = 0; i < 200000; ++i) {
    std::string line(rng() % 40, ' ');
    for (char& c : line) c = alphabet[rng() % alphabet.size()];
    const std::size_t fields = 1 + rng() % 3;
    if (parse_hex_line(line, 7, widths, fields, v, e)) {
      ASSERT_EQ(v.size(), fields);
      EXPECT_LE(v[0], 0xffffu);
    } else {
      ASSERT_EQ(e.line, 7) << e.what;
      ASSERT_EQ(e.text().find('\n'), std::string::npos) << e.what;
    }
  }
}

}  // namespace
}  // namespace gp::cli
