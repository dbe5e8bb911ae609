#include "backends/kernel_source.hpp"

#include <fmt/format.h>

namespace gp::backends {

namespace {

bool glsl(Language lang) { return lang != Language::opencl_c; }

// The GLSL or the OpenCL C spelling of a format string.
auto spelling(Language lang, const char* glsl_form, const char* opencl_form) {
  return fmt::runtime(glsl(lang) ? glsl_form : opencl_form);
}

const char* type_name(Language lang, const model::Format& f) {
  if (&f == &model::binary16) return glsl(lang) ? "float16_t" : "half";
  return &f == &model::binary64 ? "double" : "float";
}

// The value of word-buffer element `j` (an index expression) read as format f.
std::string load(Language lang, const model::Format& f, const std::string& j) {
  if (&f == &model::binary32) return fmt::format(spelling(lang, "uintBitsToFloat(operands[{}])", "as_float(operands[{}])"), j);
  if (&f == &model::binary16) return fmt::format(spelling(lang, "unpackFloat2x16(operands[{}]).x", "as_half2(operands[{}]).s0"), j);
  return fmt::format(spelling(lang, "packDouble2x32(uvec2(operands[2u * ({0})], operands[2u * ({0}) + 1u]))", "as_double((uint2)(operands[2u * ({0})], operands[2u * ({0}) + 1u]))"),
                     j);
}

// Statements writing `v`, of format f, to result element i.
std::string store(Language lang, const model::Format& f, const std::string& v) {
  if (&f == &model::binary32) return fmt::format(spelling(lang, "results[i] = floatBitsToUint({});", "results[i] = as_uint({});"), v);
  if (&f == &model::binary16)
    return fmt::format(spelling(lang, "results[i] = packFloat2x16(f16vec2({}, float16_t(0.0)));", "results[i] = as_uint((half2)({}, (half)0.0f));"),
                       v);
  return fmt::format(spelling(lang, "uvec2 w = unpackDouble2x32({}); results[2u * i] = w.x; results[2u * i + 1u] = w.y;", "uint2 w = as_uint2({}); results[2u * i] = w.s0; results[2u * i + 1u] = w.s1;"),
                     v);
}

std::string header(Language lang, bool half, bool dbl, int local_size) {
  switch (lang) {
    case Language::glsl_vulkan:
      return fmt::format(
          "#version 450\n{}"
          "layout(local_size_x = {}) in;\n"
          "layout(std430, set = 0, binding = 0) readonly buffer Operands {{ uint operands[]; }};\n"
          "layout(std430, set = 0, binding = 1) writeonly buffer Results {{ uint results[]; }};\n"
          "layout(push_constant) uniform Range {{ uint base; uint count; }} range;\n"
          "void main() {{\n"
          "  if (gl_GlobalInvocationID.x >= range.count) return;\n"
          "  uint i = range.base + gl_GlobalInvocationID.x;\n",
          half ? "#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require\n" : "", local_size);
    case Language::glsl_opengl:
      return fmt::format(
          "#version 430\n"
          "layout(local_size_x = {}) in;\n"
          "layout(std430, binding = 0) readonly buffer Operands {{ uint operands[]; }};\n"
          "layout(std430, binding = 1) writeonly buffer Results {{ uint results[]; }};\n"
          "layout(location = 0) uniform uint base;\n"
          "layout(location = 1) uniform uint count;\n"
          "void main() {{\n"
          "  if (gl_GlobalInvocationID.x >= count) return;\n"
          "  uint i = base + gl_GlobalInvocationID.x;\n",
          local_size);
    case Language::opencl_c:
      return fmt::format(
          "{}{}#pragma OPENCL FP_CONTRACT OFF\n"
          "__kernel void gp_eval(__global const uint* operands, __global uint* results, uint base, uint count) {{\n"
          "  if (get_global_id(0) >= count) return;\n"
          "  uint i = base + (uint)get_global_id(0);\n",
          half ? "#pragma OPENCL EXTENSION cl_khr_fp16 : enable\n" : "",
          dbl ? "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n" : "");
  }
  return "";
}

}  // namespace

bool language_has(Language lang, const model::Format& f) {
  if (&f == &model::binary32 || &f == &model::binary64) return true;
  return &f == &model::binary16 && lang != Language::glsl_opengl;
}

Expected<std::string> kernel_source(const Expr& e, Language lang, int local_size) {
  if (const std::string why = e.check(); !why.empty()) return Error{why};
  bool half = false, dbl = false;
  for (const model::Format* f : e.formats()) {
    if (!language_has(lang, *f))
      return Error{fmt::format("{} has no {} arithmetic", glsl(lang) ? "GLSL" : "OpenCL C", f->name)};
    half |= f == &model::binary16;
    dbl |= f == &model::binary64;
  }
  std::string s = header(lang, half, dbl, local_size);
  // has_mad[i]: instruction i depends on a mad (see the header on GLSL's precise).
  std::vector<bool> has_mad(e.code.size(), false);
  for (std::size_t i = 0; i < e.code.size(); ++i) {
    const Instr& in = e.code[i];
    const model::Format& f = *e.format_of(i);
    const char* type = type_name(lang, f);
    // An argument in another format is converted explicitly: no language's implicit rules apply.
    const auto a = [&](int k) {
      const std::size_t j = in.arg[k];
      has_mad[i] = has_mad[i] || has_mad[j];
      if (e.format_of(j) == &f) return fmt::format("t{}", j);
      return fmt::format(spelling(lang, "{}(t{})", "({})t{}"), type, j);
    };
    std::string value;
    switch (in.op) {
      case Node::input: value = load(lang, f, fmt::format("i * {}u + {}u", e.inputs, in.arg[0])); break;
      case Node::add: value = fmt::format("{} + {}", a(0), a(1)); break;
      case Node::sub: value = fmt::format("{} - {}", a(0), a(1)); break;
      case Node::mul: value = fmt::format("{} * {}", a(0), a(1)); break;
      case Node::div: value = fmt::format("{} / {}", a(0), a(1)); break;
      case Node::sqrt: value = fmt::format("sqrt({})", a(0)); break;
      case Node::fma: value = fmt::format("fma({}, {}, {})", a(0), a(1), a(2)); break;
      case Node::mad:
        value = fmt::format("{} * {} + {}", a(0), a(1), a(2));
        has_mad[i] = true;
        break;
      case Node::neg: value = fmt::format("-{}", a(0)); break;
      case Node::cvt: {
        const std::size_t j = in.arg[0];
        has_mad[i] = has_mad[j];
        value = fmt::format(spelling(lang, "{}(t{})", "({})t{}"), type, j);
        break;
      }
    }
    if (in.op == Node::mad && !glsl(lang))
      s += fmt::format("  {} t{};\n  {{\n#pragma OPENCL FP_CONTRACT ON\n    t{} = {};\n  }}\n", type, i, i, value);
    else
      s += fmt::format("  {}{} t{} = {};\n", glsl(lang) && in.op != Node::input && !has_mad[i] ? "precise " : "", type, i,
                       value);
  }
  s += fmt::format("  {}\n}}\n", store(lang, *e.output_format, fmt::format("t{}", e.code.size() - 1)));
  return s;
}

int words_per_value(const model::Format& f) { return f.storage_bits > 32 ? 2 : 1; }

std::vector<std::uint32_t> to_words(const model::Format& f, std::span<const std::uint64_t> bits) {
  std::vector<std::uint32_t> w;
  w.reserve(bits.size() * std::size_t(words_per_value(f)));
  for (const std::uint64_t b : bits) {
    w.push_back(std::uint32_t(b));
    if (words_per_value(f) == 2) w.push_back(std::uint32_t(b >> 32));
  }
  return w;
}

std::vector<std::uint64_t> from_words(const model::Format& f, std::span<const std::uint32_t> words) {
  const std::size_t per = std::size_t(words_per_value(f));
  std::vector<std::uint64_t> bits(words.size() / per);
  for (std::size_t i = 0; i < bits.size(); ++i)
    bits[i] = per == 2 ? words[2 * i] | std::uint64_t(words[2 * i + 1]) << 32 : words[i] & f.storage_mask();
  return bits;
}

}  // namespace gp::backends
