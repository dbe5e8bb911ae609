// The expression IR as the source of a compute kernel, for the backends that compile one: GLSL for
// Vulkan and OpenGL, OpenCL C, CUDA C++.
// The fixed text of each language's kernel is a template in shaders/ (shaders/README.md), embedded
// at build time; what depends on the expression is written here into its placeholders.
//
// The kernel evaluates tuples [base, base + count) of one batch: tuple t reads operands
// t*inputs .. t*inputs+inputs-1 of the operand buffer and writes result t.
// Buffers hold 32-bit words, so that no 8- or 16-bit storage feature is needed to move bits:
// a binary16 value sits in the low half of one word, binary32 in one word, binary64 in two
// (low word first); to_words/from_words pack the raw bits of the Device interface.
//
// The interface of each language's kernel:
//   glsl_vulkan  #version 450; set 0 binding 0 operands, binding 1 results (std430 uint[]);
//                push constants {uint base; uint count;} (8 bytes); local_size_x = local_size.
//   glsl_opengl  #version 430; SSBO bindings 0 and 1 as above; uniforms base (location 0) and
//                count (location 1).
//   opencl_c     __kernel void gp_eval(__global const uint* operands, __global uint* results,
//                uint base, uint count).
//   cuda         extern "C" __global__ void gp_eval(const unsigned int* operands,
//                unsigned int* results, unsigned int base, unsigned int count), for NVRTC; binary16
//                includes cuda_fp16.h (NVRTC needs the toolkit's include folder).
// Every invocation with gl_GlobalInvocationID.x (get_global_id(0), blockIdx.x * blockDim.x +
// threadIdx.x) >= count returns at once, so the host rounds the dispatch up to whole workgroups and
// splits a batch within its limits.
//
// Contraction: every node is a separate rounding (GLSL `precise`, SPIR-V NoContraction; OpenCL
// FP_CONTRACT OFF; CUDA's intrinsics with a named rounding, __fadd_rn, __dmul_rn, __hadd_rn, which
// are never contracted) except `mad`, written as a*b+c that the compiler may contract (FP_CONTRACT ON
// in its own block; CUDA's operators, under -fmad=true). CUDA conversions name their rounding too
// (__float2half_rn, __double2float_rn). GLSL's precise reaches back through every operation that feeds a precise
// value, so a node that depends on a mad is left unqualified: precise there would forbid the
// contraction the mad exists to observe. fma is the builtin: under precise GLSL promises only that
// it is one operation computed alike wherever it appears (invariant), not that it is fused, so the
// fma probes read whether it is, never assume it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "backends/expected.hpp"
#include "backends/expr.hpp"
#include "model/format.hpp"

namespace gp::backends {

enum class Language { glsl_vulkan, glsl_opengl, opencl_c, cuda };

// Whether a language can compute in a format (binary16 only in GLSL for Vulkan, OpenCL C and CUDA,
// where the device must also offer it: shaderFloat16, cl_khr_fp16, compute capability 5.3).
bool language_has(Language lang, const model::Format& f);

// The kernel's source, or why the expression cannot be written in the language (a format it lacks,
// a malformed expression).
Expected<std::string> kernel_source(const Expr& e, Language lang, int local_size);

// 32-bit words per value of a format in the buffers: 1, or 2 for binary64.
int words_per_value(const model::Format& f);
std::vector<std::uint32_t> to_words(const model::Format& f, std::span<const std::uint64_t> bits);
std::vector<std::uint64_t> from_words(const model::Format& f, std::span<const std::uint32_t> words);
// Raw bits as buffer elements of the format's storage width (1, 2, 4 or 8 bytes), little-endian:
// the MMA buffers of Vulkan and CUDA.
std::vector<std::byte> to_bytes(const model::Format& f, std::span<const std::uint64_t> bits);
std::vector<std::uint64_t> from_bytes(const model::Format& f, std::span<const std::byte> bytes);

}  // namespace gp::backends
