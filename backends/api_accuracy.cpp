#include "backends/api_accuracy.hpp"

#include <fmt/format.h>

namespace gp::backends {

namespace {

Allowance bound(std::string api, double ulps, std::string text) { return {std::move(api), ulps, std::move(text)}; }
Allowance correctly_rounded(std::string api) { return {std::move(api), 0.0, "correctly rounded"}; }

// OpenCL C 3.0, section 7.4 (relative error as ulps, full profile): binary32 x / y 2.5 ulp and sqrt
// 3 ulp unless built with -cl-fp32-correctly-rounded-divide-sqrt, relaxed further under
// -cl-fast-relaxed-math; binary64 correctly rounded; binary16 (cl_khr_fp16) 1 ulp.
std::optional<Allowance> opencl(const Capabilities& caps, const model::Format& f, model::Op op) {
  const auto it = caps.float_controls.find("build_options");
  const std::string options = it == caps.float_controls.end() ? "" : it->second;
  if (&f == &model::binary64) return correctly_rounded("OpenCL");
  if (&f == &model::binary16) return bound("OpenCL", 1, "1 ulp");
  if (&f != &model::binary32) return std::nullopt;
  if (options.find("-cl-fp32-correctly-rounded-divide-sqrt") != std::string::npos) return correctly_rounded("OpenCL");
  if (options.find("-cl-fast-relaxed-math") != std::string::npos)
    return Allowance{"OpenCL", std::nullopt, "the relaxed-math accuracy (-cl-fast-relaxed-math)"};
  return op == model::Op::div ? bound("OpenCL", 2.5, "2.5 ulp") : bound("OpenCL", 3, "3 ulp");
}

// Vulkan's "Precision and Operation of SPIR-V Instructions" and GLSL 4.60 section 4.7.1 agree:
// x / y 2.5 ulp for |y| in [2^-126, 2^126] (binary16: [2^-14, 2^14]), sqrt inherited from
// 1.0 / inversesqrt() (inversesqrt 2 ulp). binary64: no figure of its own is given here.
std::optional<Allowance> shading(std::string api, const model::Format& f, model::Op op) {
  if (&f != &model::binary32 && &f != &model::binary16) return std::nullopt;
  if (op == model::Op::sqrt)
    return Allowance{std::move(api), std::nullopt, "the error inherited from 1.0 / inversesqrt() (inversesqrt: 2 ulp)"};
  const int e = &f == &model::binary32 ? 126 : 14;
  return bound(std::move(api), 2.5, fmt::format("2.5 ulp for |y| in [2^-{0}, 2^{0}]", e));
}

}  // namespace

std::optional<Allowance> api_allowance(const DeviceInfo& info, const Capabilities& caps, const model::Format& f,
                                       model::Op op) {
  if (op != model::Op::div && op != model::Op::sqrt) return std::nullopt;
  if (info.backend == "opencl") return opencl(caps, f, op);
  if (info.backend == "vulkan") return shading("Vulkan", f, op);
  if (info.backend == "opengl") return shading("OpenGL", f, op);
  // CUDA C++ Programming Guide: x / y and sqrt are IEEE-compliant (correctly rounded) in binary32
  // by default (-prec-div=true, -prec-sqrt=true) and always in binary64.
  if (info.backend == "cuda" && (&f == &model::binary32 || &f == &model::binary64)) return correctly_rounded("CUDA");
  return std::nullopt;
}

std::string compiled_operation_note(const DeviceInfo& info, const Capabilities& caps, const model::Format& f,
                                    model::Op op) {
  const auto a = api_allowance(info, caps, f, op);
  if (!a) return "";
  const char* what = op == model::Op::div ? "x / y" : "sqrt(x)";
  return fmt::format("describes {} as the driver compiles it; {}'s allowance in {}: {}", what, a->api, f.name, a->text);
}

}  // namespace gp::backends
