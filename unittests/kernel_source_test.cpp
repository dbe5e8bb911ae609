// The IR -> kernel source generator: contraction qualifiers, conversions, formats each language
// lacks, the filling of the templates of shaders/, the word packing of the buffers, and (where
// glslangValidator is installed) that every generated GLSL kernel compiles for its target. OpenCL C
// compiles in the OpenCL backend's tests, on real drivers, CUDA C++ in the CUDA backend's (NVRTC,
// with or without a GPU).
#include "backends/kernel_source.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "backends/kernel_template.hpp"

namespace gp::backends {
namespace {

using model::binary16;
using model::binary32;
using model::binary64;

std::string source(const Expr& e, Language lang) {
  auto s = kernel_source(e, lang, 64);
  EXPECT_TRUE(s) << (s ? "" : s.error().message);
  return s ? *s : "";
}

// a*b + c with the product separately rounded, then a mad of the sum: what precise may qualify.
Expr mixed_expression() {
  ExprBuilder b(binary32, 3);
  const int x = b.in(0), y = b.in(1), z = b.in(2);
  const int p = b.op(Node::mul, x, y);
  const int s = b.op(Node::add, p, z);
  b.op(Node::mad, s, x, y);
  return b.done();
}

TEST(KernelSource, EveryRoundingIsPreciseUpToTheMad) {
  const std::string s = source(mixed_expression(), Language::glsl_vulkan);
  EXPECT_NE(s.find("precise float t3 = t0 * t1;"), std::string::npos) << s;
  EXPECT_NE(s.find("precise float t4 = t3 + t2;"), std::string::npos) << s;
  // precise on the mad would forbid the contraction it observes.
  EXPECT_NE(s.find("  float t5 = t4 * t0 + t1;"), std::string::npos) << s;
  EXPECT_EQ(s.find("precise float t5"), std::string::npos) << s;
}

TEST(KernelSource, OpenClContractsOnlyTheMad) {
  const std::string s = source(mixed_expression(), Language::opencl_c);
  EXPECT_EQ(s.find("#pragma OPENCL FP_CONTRACT OFF"), 0u) << s;
  const std::size_t on = s.find("#pragma OPENCL FP_CONTRACT ON");
  ASSERT_NE(on, std::string::npos) << s;
  EXPECT_LT(s.find("t4 = t3 + t2;"), on) << s;
  EXPECT_GT(s.find("t5 = t4 * t0 + t1;"), on) << s;
  EXPECT_EQ(s.find("precise"), std::string::npos) << s;
}

TEST(KernelSource, ConversionsAndMixedFormatsAreExplicit) {
  ExprBuilder b(binary16, 2);
  b.cvt(b.in(0), binary32);
  b.in(1);
  Expr e = b.done();
  e.code.push_back({Node::add, {1, 2, 0}, &binary32});  // binary16 t2 enters a binary32 add
  e.output_format = &binary32;
  const std::string g = source(e, Language::glsl_vulkan);
  EXPECT_NE(g.find("GL_EXT_shader_explicit_arithmetic_types_float16"), std::string::npos) << g;
  EXPECT_NE(g.find("float16_t t0 = unpackFloat2x16(operands[i * 2u + 0u]).x;"), std::string::npos) << g;
  EXPECT_NE(g.find("precise float t1 = float(t0);"), std::string::npos) << g;
  EXPECT_NE(g.find("precise float t3 = t1 + float(t2);"), std::string::npos) << g;
  const std::string c = source(e, Language::opencl_c);
  EXPECT_NE(c.find("cl_khr_fp16"), std::string::npos) << c;
  EXPECT_NE(c.find("float t3 = t1 + (float)t2;"), std::string::npos) << c;
  EXPECT_EQ(c.find("cl_khr_fp64"), std::string::npos) << c;
}

TEST(KernelSource, FormatsALanguageLacksAreErrors) {
  EXPECT_FALSE(kernel_source(binary(Node::add, binary16), Language::glsl_opengl, 64));
  EXPECT_FALSE(kernel_source(binary(Node::add, model::bfloat16), Language::glsl_vulkan, 64));
  EXPECT_FALSE(kernel_source(binary(Node::add, model::fp24), Language::opencl_c, 64));
  EXPECT_TRUE(kernel_source(binary(Node::add, binary64), Language::glsl_opengl, 64));
  Expr bad = binary(Node::add, binary32);
  bad.code[2].arg[0] = 5;
  EXPECT_FALSE(kernel_source(bad, Language::opencl_c, 64));
}

// CUDA: every rounding through an intrinsic that names it, never contracted, but the mad; binary16
// through cuda_fp16.h. The kernels compile with NVRTC in the CUDA backend's tests.
TEST(KernelSource, CudaNamesEveryRoundingButTheMad) {
  const std::string s = source(mixed_expression(), Language::cuda);
  EXPECT_NE(s.find("float t3 = __fmul_rn(t0, t1);"), std::string::npos) << s;
  EXPECT_NE(s.find("float t4 = __fadd_rn(t3, t2);"), std::string::npos) << s;
  EXPECT_NE(s.find("float t5 = t4 * t0 + t1;"), std::string::npos) << s;
  EXPECT_EQ(s.find("cuda_fp16.h"), std::string::npos) << s;
  const std::string h = source(conversion(binary64, binary16), Language::cuda);
  EXPECT_NE(h.find("#include <cuda_fp16.h>"), std::string::npos) << h;
  EXPECT_NE(h.find("__half t1 = __double2half(t0);"), std::string::npos) << h;
  EXPECT_NE(h.find("__hiloint2double"), std::string::npos) << h;
  EXPECT_NE(source(ternary(Node::fma, binary16), Language::cuda).find("__hfma(t0, t1, t2)"), std::string::npos);
  EXPECT_FALSE(kernel_source(binary(Node::add, model::bfloat16), Language::cuda, 64));
}

// The templates of shaders/: a placeholder alone on its line stands for whole lines, none or several.
TEST(KernelSource, TemplatesFillWholeLinesAndInline) {
  const std::string_view t = "@HEAD@\nint x = @N@u;\n@BODY@\n}\n";
  EXPECT_EQ(fill_template(t, {{"HEAD", ""}, {"N", "64"}, {"BODY", "  a;\n  b;\n"}}), "int x = 64u;\n  a;\n  b;\n}\n");
  EXPECT_EQ(fill_template(t, {{"HEAD", "#a\n#b\n"}, {"N", "1"}, {"BODY", ""}, {"UNUSED", "x"}}),
            "#a\n#b\nint x = 1u;\n}\n");
  EXPECT_THROW(fill_template(t, {{"HEAD", ""}, {"BODY", ""}}), std::logic_error);                // no value for @N@
  EXPECT_THROW(fill_template(t, {{"HEAD", "#a"}, {"N", "1"}, {"BODY", ""}}), std::logic_error);  // a line without '\n'
  // Every kernel leaves none unfilled.
  for (const Language lang : {Language::glsl_vulkan, Language::glsl_opengl, Language::opencl_c, Language::cuda})
    EXPECT_EQ(source(mixed_expression(), lang).find('@'), std::string::npos);
}

TEST(KernelSource, WordsRoundTripEveryWidth) {
  const std::vector<std::uint64_t> h = {0x0001, 0x7c00, 0xfe01}, f = {0x80000001u, 0x7f800001u},
                                   d = {0x8000000000000001ull, 0x7ff0000000000001ull};
  EXPECT_EQ(words_per_value(binary16), 1);
  EXPECT_EQ(words_per_value(binary64), 2);
  EXPECT_EQ(from_words(binary16, to_words(binary16, h)), h);
  EXPECT_EQ(from_words(binary32, to_words(binary32, f)), f);
  const auto w = to_words(binary64, d);
  ASSERT_EQ(w.size(), 4u);
  EXPECT_EQ(w[0], 1u);  // low word first
  EXPECT_EQ(w[1], 0x80000000u);
  EXPECT_EQ(from_words(binary64, w), d);
}

// The MMA buffers: elements of the storage width, little-endian.
TEST(KernelSource, BytesRoundTripEveryWidth) {
  const std::vector<std::uint64_t> q = {0x01, 0xff}, h = {0x0001, 0xfe01}, t = {0x80002000u},
                                   d = {0x8000000000000001ull};
  EXPECT_EQ(to_bytes(model::e4m3, q).size(), 2u);
  EXPECT_EQ(from_bytes(model::e4m3, to_bytes(model::e4m3, q)), q);
  EXPECT_EQ(from_bytes(binary16, to_bytes(binary16, h)), h);
  EXPECT_EQ(from_bytes(model::tf32, to_bytes(model::tf32, t)), t);
  const auto b = to_bytes(binary64, d);
  ASSERT_EQ(b.size(), 8u);
  EXPECT_EQ(b[0], std::byte{1});
  EXPECT_EQ(b[7], std::byte{0x80});
  EXPECT_EQ(from_bytes(binary64, b), d);
}

#ifdef GPUPARANOIA_GLSLANG_VALIDATOR
// Every shape of expression, every format of each GLSL target, through the reference compiler.
TEST(KernelSource, GlslCompilesWithGlslang) {
  const auto dir = std::filesystem::temp_directory_path() / "gp_kernel_source_test";
  std::filesystem::create_directories(dir);
  int n = 0;
  for (const Language lang : {Language::glsl_vulkan, Language::glsl_opengl})
    for (const model::Format* f : {&binary16, &binary32, &binary64}) {
      if (!language_has(lang, *f)) continue;
      std::vector<Expr> exprs = {binary(Node::add, *f),  binary(Node::sub, *f),  binary(Node::mul, *f),
                                 binary(Node::div, *f),  unary(Node::sqrt, *f),  unary(Node::neg, *f),
                                 ternary(Node::fma, *f), ternary(Node::mad, *f), transfer(*f)};
      for (const model::Format* g : {&binary16, &binary32, &binary64})
        if (g != f && language_has(lang, *g)) exprs.push_back(conversion(*f, *g));
      if (f == &binary32) exprs.push_back(mixed_expression());
      for (const Expr& e : exprs) {
        const auto file = dir / fmt::format("k{}.comp", n++);
        std::ofstream(file) << source(e, lang);
        const std::string cmd = fmt::format("{} {} -o /dev/null {} > {}.log 2>&1", GPUPARANOIA_GLSLANG_VALIDATOR,
                                            lang == Language::glsl_vulkan ? "-V --target-env vulkan1.1" : "-G",
                                            file.string(), file.string());
        EXPECT_EQ(std::system(cmd.c_str()), 0) << e.to_string() << "\n" << source(e, lang) << "log: " << file << ".log";
      }
    }
  EXPECT_GT(n, 30);
}
#endif

}  // namespace
}  // namespace gp::backends
