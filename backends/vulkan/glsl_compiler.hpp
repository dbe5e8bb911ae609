// GLSL compute shaders to SPIR-V with the glslang library, at run time: the kernels depend on the
// expression a probe asks for, so they cannot be compiled when the project is built.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "backends/expected.hpp"

namespace gp::backends::vulkan {

// A SPIR-V 1.0 module for Vulkan 1.1 (no optimisation pass: the module is what the source says),
// or the compiler's log as the error.
Expected<std::vector<std::uint32_t>> compile_compute_shader(const std::string& glsl);

}  // namespace gp::backends::vulkan
