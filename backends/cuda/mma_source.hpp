// The CUDA backend's MMA configurations and their kernels: the tensor-core instructions themselves,
// so that on one GPU the Vulkan cooperative matrices and the instructions can be compared.
//
// mma.sync (scope "warp (mma.sync)"): inline PTX with the fragment layouts of the PTX ISA
// ("Matrix fragments for mma.m16n8k*" and "mma.m8n8k4"): element i of a thread's fragment is read
// from, or written to, the row and column the ISA gives for its lane. wmma (scope "warp (wmma)"):
// wmma.load, wmma.mma and wmma.store PTX, whose fragments are opaque: the instruction reads and writes
// memory itself, row-major with the tile's stride.
//
// wgmma (scope "warpgroup (wgmma)", sm_90a alone): wgmma.mma_async with A in registers, in the
// layout of the PTX ISA ("Register Fragments and Shared Memory Matrix Layouts": each warp of the
// warpgroup holds 16 rows of A and D as mma.m16n8 does), and B in shared memory, read through a
// matrix descriptor (the layout is stated in mma_source.cpp).
//
// One tile per warp, or per warpgroup (4 warps, aligned within the block) for wgmma: tile w of a
// launch (blockIdx.x * tiles per block + tile in block) is computed by the w-th warp or warpgroup;
// A (MxK), B (KxN), C and D (MxN) are row-major per tile in buffers of the formats' storage
// width. The kernel is
//   extern "C" __global__ void gp_mma(const A* a, const B* b, const C* c, D* d, unsigned int count)
// with unsigned integer types of those widths; a warp (warpgroup) whose tile is >= count returns as a
// whole. m8n8k4 binary16 computes four independent products per warp, one per quad pair (lanes 0-3
// with 16-19, ...): each quad pair reads the warp's tile and the first one writes D.
#pragma once

#include <string>
#include <vector>

#include "backends/device.hpp"

namespace gp::backends::cuda {

struct MmaKernel {
  // scope "warp (mma.sync)", "warp (wmma)" or "warpgroup (wgmma)"; instruction where the table has one
  MmaConfig config;
  std::string ptx;   // "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32", "wmma.mma.sync.aligned..."
  int min_arch = 0;  // the architecture the PTX needs (80 for sm_80)
  // Compiled for the architecture's own target (sm_90a): wgmma, which runs on compute capability
  // 9.0 alone.
  bool arch_specific = false;
  int warps = 1;  // warps computing one tile: 4 (a warpgroup) for wgmma
};

// The MMA-Sim architecture of a compute capability (major * 10 + minor): volta, turing, ampere, ada,
// hopper, blackwell (10.x), rtx-blackwell (12.x); empty when it is none of them.
std::string nvidia_architecture(int arch);

// The configurations a compute capability has, each with the table's instruction name for its
// architecture where the table lists one (checked with find_mma_instruction()).
std::vector<MmaKernel> mma_kernels(int arch);

// The kernel's CUDA C++ source, for NVRTC (no header needed): shaders/cuda/mma.cu.in, filled.
std::string mma_kernel_source(const MmaKernel& k);

// Threads per block of the MMA kernels: whole warps, one tile each, or whole warpgroups.
constexpr unsigned kMmaWarpsPerBlock = 4;
static_assert(kMmaWarpsPerBlock % 4 == 0, "a wgmma tile needs a whole warpgroup within the block");

}  // namespace gp::backends::cuda
