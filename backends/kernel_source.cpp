#include "backends/kernel_source.hpp"

#include <fmt/format.h>

#include "backends/kernel_template.hpp"
#include "shaders/cuda/scalar.cu.hpp"
#include "shaders/scalar.cl.hpp"
#include "shaders/scalar_opengl.comp.hpp"
#include "shaders/scalar_vulkan.comp.hpp"

namespace gp::backends {

namespace {

bool glsl(Language lang) { return lang == Language::glsl_vulkan || lang == Language::glsl_opengl; }

std::string_view language_name(Language lang) {
  switch (lang) {
    case Language::glsl_vulkan:
    case Language::glsl_opengl: return "GLSL";
    case Language::opencl_c: return "OpenCL C";
    case Language::cuda: return "CUDA C++";
  }
  return "";
}

// The GLSL, OpenCL C or CUDA spelling of a format string.
auto spelling(Language lang, const char* glsl_form, const char* opencl_form, const char* cuda_form) {
  return fmt::runtime(glsl(lang) ? glsl_form : lang == Language::opencl_c ? opencl_form : cuda_form);
}

const char* type_name(Language lang, const model::Format& f) {
  if (&f == &model::binary16) return glsl(lang) ? "float16_t" : lang == Language::opencl_c ? "half" : "__half";
  return &f == &model::binary64 ? "double" : "float";
}

// The value of word-buffer element `j` (an index expression) read as format f.
std::string load(Language lang, const model::Format& f, const std::string& j) {
  if (&f == &model::binary32)
    return fmt::format(
        spelling(lang, "uintBitsToFloat(operands[{}])", "as_float(operands[{}])", "__uint_as_float(operands[{}])"), j);
  if (&f == &model::binary16)
    return fmt::format(spelling(lang, "unpackFloat2x16(operands[{}]).x", "as_half2(operands[{}]).s0",
                                "__ushort_as_half((unsigned short)operands[{}])"),
                       j);
  return fmt::format(spelling(lang, "packDouble2x32(uvec2(operands[2u * ({0})], operands[2u * ({0}) + 1u]))",
                              "as_double((uint2)(operands[2u * ({0})], operands[2u * ({0}) + 1u]))",
                              "__hiloint2double((int)operands[2u * ({0}) + 1u], (int)operands[2u * ({0})])"),
                     j);
}

// Statements writing `v`, of format f, to result element i.
std::string store(Language lang, const model::Format& f, const std::string& v) {
  if (&f == &model::binary32)
    return fmt::format(spelling(lang, "results[i] = floatBitsToUint({});", "results[i] = as_uint({});",
                                "results[i] = __float_as_uint({});"),
                       v);
  if (&f == &model::binary16)
    return fmt::format(spelling(lang, "results[i] = packFloat2x16(f16vec2({}, float16_t(0.0)));",
                                "results[i] = as_uint((half2)({}, (half)0.0f));", "results[i] = __half_as_ushort({});"),
                       v);
  return fmt::format(
      spelling(lang, "uvec2 w = unpackDouble2x32({}); results[2u * i] = w.x; results[2u * i + 1u] = w.y;",
               "uint2 w = as_uint2({}); results[2u * i] = w.s0; results[2u * i + 1u] = w.s1;",
               "double w = {}; results[2u * i] = (unsigned int)__double2loint(w); "
               "results[2u * i + 1u] = (unsigned int)__double2hiint(w);"),
      v);
}

// The template of a language's kernel (shaders/).
std::string_view kernel_template(Language lang) {
  switch (lang) {
    case Language::glsl_vulkan: return shaders::scalar_vulkan_comp;
    case Language::glsl_opengl: return shaders::scalar_opengl_comp;
    case Language::opencl_c: return shaders::scalar_cl;
    case Language::cuda: return shaders::cuda_scalar_cu;
  }
  return "";
}

// The lines that enable the kernel's formats: binary16 arithmetic (GLSL's float16_t, cl_khr_fp16,
// cuda_fp16.h) and OpenCL C's binary64 (GLSL 4.30 and CUDA have double built in).
std::string extensions(Language lang, bool half, bool dbl) {
  std::string s;
  if (half)
    s += lang == Language::glsl_vulkan ? "#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require\n"
         : lang == Language::opencl_c  ? "#pragma OPENCL EXTENSION cl_khr_fp16 : enable\n"
         : lang == Language::cuda      ? "#include <cuda_fp16.h>\n"
                                       : "";
  if (dbl && lang == Language::opencl_c) s += "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n";
  return s;
}

// CUDA's correctly rounded intrinsics, which the compiler never contracts, by format (binary16,
// binary32, binary64). binary16 division and square root have no instruction: cuda_fp16.h's
// __hdiv and hsqrt compute them in binary32, approximately, and are what CUDA programs call.
struct CudaIntrinsic {
  Node op;
  const char* name[3];
};
constexpr CudaIntrinsic kCudaIntrinsics[] = {
    {Node::add, {"__hadd_rn", "__fadd_rn", "__dadd_rn"}}, {Node::sub, {"__hsub_rn", "__fsub_rn", "__dsub_rn"}},
    {Node::mul, {"__hmul_rn", "__fmul_rn", "__dmul_rn"}}, {Node::div, {"__hdiv", "__fdiv_rn", "__ddiv_rn"}},
    {Node::sqrt, {"hsqrt", "__fsqrt_rn", "__dsqrt_rn"}},  {Node::fma, {"__hfma", "__fmaf_rn", "__fma_rn"}},
};

const char* cuda_intrinsic(Node op, const model::Format& f) {
  const int column = &f == &model::binary16 ? 0 : &f == &model::binary32 ? 1 : 2;
  for (const CudaIntrinsic& c : kCudaIntrinsics)
    if (c.op == op) return c.name[column];
  return nullptr;
}

// A conversion of `x` from one format to another: CUDA names each rounding (binary32 and binary16 to
// binary64 are exact); GLSL and OpenCL C write a constructor or a cast.
std::string converted(Language lang, const model::Format& to, const model::Format& from, const std::string& x) {
  if (lang != Language::cuda) return fmt::format(spelling(lang, "{}({})", "({}){}", ""), type_name(lang, to), x);
  if (&to == &model::binary16)
    return fmt::format("{}({})", &from == &model::binary32 ? "__float2half_rn" : "__double2half", x);
  if (&from == &model::binary16) return fmt::format("{}__half2float({})", &to == &model::binary32 ? "" : "(double)", x);
  return &to == &model::binary32 ? fmt::format("__double2float_rn({})", x) : fmt::format("(double)({})", x);
}

// The value of an operation on its arguments' expressions.
std::string operation(Language lang, Node op, const model::Format& f, const std::string* x) {
  if (op == Node::mad) return fmt::format("{} * {} + {}", x[0], x[1], x[2]);
  if (op == Node::neg)
    return &f == &model::binary16 && lang == Language::cuda ? fmt::format("__hneg({})", x[0]) : "-" + x[0];
  if (lang == Language::cuda) {
    const char* name = cuda_intrinsic(op, f);
    return arity(op) == 1   ? fmt::format("{}({})", name, x[0])
           : arity(op) == 2 ? fmt::format("{}({}, {})", name, x[0], x[1])
                            : fmt::format("{}({}, {}, {})", name, x[0], x[1], x[2]);
  }
  switch (op) {
    case Node::add: return fmt::format("{} + {}", x[0], x[1]);
    case Node::sub: return fmt::format("{} - {}", x[0], x[1]);
    case Node::mul: return fmt::format("{} * {}", x[0], x[1]);
    case Node::div: return fmt::format("{} / {}", x[0], x[1]);
    case Node::sqrt: return fmt::format("sqrt({})", x[0]);
    case Node::fma: return fmt::format("fma({}, {}, {})", x[0], x[1], x[2]);
    default: return "";
  }
}

}  // namespace

bool language_has(Language lang, const model::Format& f) {
  if (&f == &model::binary32 || &f == &model::binary64) return true;
  return &f == &model::binary16 && lang != Language::glsl_opengl;
}

Expected<std::string> kernel_source(const Expr& e, Language lang, int local_size) {
  if (const std::string why = e.check(); !why.empty()) return Error{why, ErrorKind::invalid};
  bool half = false, dbl = false;
  for (const model::Format* f : e.formats()) {
    if (!language_has(lang, *f))
      return Error{fmt::format("{} has no {} arithmetic", language_name(lang), f->name), ErrorKind::unsupported};
    half |= f == &model::binary16;
    dbl |= f == &model::binary64;
  }
  // The kernel's body: a statement per node, then the store.
  std::string body;
  // has_mad[i]: instruction i depends on a mad (see the header on GLSL's precise).
  std::vector<bool> has_mad(e.code.size(), false);
  for (std::size_t i = 0; i < e.code.size(); ++i) {
    const Instr& in = e.code[i];
    const model::Format& f = *e.format_of(i);
    const char* type = type_name(lang, f);
    // An argument in another format is converted explicitly: no language's implicit rules apply.
    std::string args[3];
    for (int k = 0; k < arity(in.op); ++k) {
      const std::size_t j = in.arg[k];
      has_mad[i] = has_mad[i] || has_mad[j];
      args[k] = fmt::format("t{}", j);
      if (e.format_of(j) != &f) args[k] = converted(lang, f, *e.format_of(j), args[k]);
    }
    std::string value;
    if (in.op == Node::input)
      value = load(lang, f, fmt::format("i * {}u + {}u", e.inputs, in.arg[0]));
    else if (in.op == Node::cvt)
      value = args[0];  // converted above, as an argument in another format
    else
      value = operation(lang, in.op, f, args);
    has_mad[i] = has_mad[i] || in.op == Node::mad;
    if (in.op == Node::mad && lang == Language::opencl_c)
      body += fmt::format("  {} t{};\n  {{\n#pragma OPENCL FP_CONTRACT ON\n    t{} = {};\n  }}\n", type, i, i, value);
    else
      body += fmt::format("  {}{} t{} = {};\n", glsl(lang) && in.op != Node::input && !has_mad[i] ? "precise " : "",
                          type, i, value);
  }
  body += fmt::format("  {}\n", store(lang, *e.output_format, fmt::format("t{}", e.code.size() - 1)));
  return fill_template(
      kernel_template(lang),
      {{"EXTENSIONS", extensions(lang, half, dbl)}, {"LOCAL_SIZE", std::to_string(local_size)}, {"BODY", body}});
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

std::vector<std::byte> to_bytes(const model::Format& f, std::span<const std::uint64_t> bits) {
  const std::size_t width = std::size_t(f.storage_bits) / 8;
  std::vector<std::byte> bytes(bits.size() * width);
  for (std::size_t i = 0; i < bits.size(); ++i)
    for (std::size_t k = 0; k < width; ++k) bytes[i * width + k] = std::byte(bits[i] >> (8 * k));
  return bytes;
}

std::vector<std::uint64_t> from_bytes(const model::Format& f, std::span<const std::byte> bytes) {
  const std::size_t width = std::size_t(f.storage_bits) / 8;
  std::vector<std::uint64_t> bits(bytes.size() / width);
  for (std::size_t i = 0; i < bits.size(); ++i)
    for (std::size_t k = 0; k < width; ++k) bits[i] |= std::uint64_t(bytes[i * width + k]) << (8 * k);
  return bits;
}

}  // namespace gp::backends
