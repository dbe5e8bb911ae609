// SPIR-V modules of cooperative-matrix MMA kernels (SPV_KHR_cooperative_matrix), emitted directly:
// glslang 12 has no GL_KHR_cooperative_matrix. Needs no Vulkan loader, only the SPIR-V headers.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "backends/device.hpp"
#include "backends/expected.hpp"
#include "backends/vulkan/spirv_builder.hpp"
#include "model/format.hpp"

namespace gp::backends::vulkan {

// SPIR-V 1.5, the version of Vulkan 1.2: 16- and 8-bit storage, the StorageBuffer storage class and
// the Vulkan memory model are core there, so the modules declare only the cooperative-matrix,
// bfloat16 and float8 extensions. The device needs Vulkan 1.2 and the vulkanMemoryModel feature.
inline constexpr Word kCoopmatSpirvVersion = 0x00010500;

// One compute shader for one configuration: workgroup = one subgroup (LocalSize subgroup_size,1,1);
// workgroup WorkgroupId.x handles tile base + WorkgroupId.x when it is < count (else returns);
// push constants {uint base; uint count;} (Block, offsets 0 and 4);
// storage buffers (StorageBuffer storage class, Block-decorated structs with a runtime array,
// ArrayStride = element size) set 0 bindings 0,1,2,3 = A, B, C, D, arrays of the component type of
// each matrix; each tile row-major and contiguous: A tile t at element t*M*K with row stride K,
// B at t*K*N stride N, C and D at t*M*N stride N. Loads/stores with the RowMajorKHR layout.
// D = MulAdd(A, B, C) with D's matrix type as its result type (the configuration's ResultType, which
// SPV_KHR_cooperative_matrix lets differ from C's: no conversion after the unit), stored as it is.
// Formats: binary16, binary32, binary64, bfloat16 (SPV_KHR_bfloat16), e4m3 and e5m2 (SPV_EXT_float8);
// only subgroup scope. Anything else, or M, N, K or subgroup_size not positive: an Error.
Expected<std::vector<std::uint32_t>> coopmat_module(const MmaConfig& config, std::uint32_t subgroup_size);

// The SPIR-V scalar type of a format's elements, declaring the capabilities and extensions that
// the type and its storage in buffers need; an Error for a format without a SPIR-V type.
Expected<Id> spirv_element_type(SpirvBuilder& b, const model::Format& format);

// The frame of coopmat_module's kernels: the buffers A, B, C, D, the push constants, one tile per
// workgroup and the bounds check, as documented above, with the body left to the caller. Public so
// that the tests can validate the frame with spirv-val inside an ordinary compute shader, since the
// installed SPIRV-Tools may not know the cooperative-matrix instructions.
class TileKernel {
 public:
  enum Matrix { A, B, C, D };

  // Declares the capabilities Shader and VulkanMemoryModel, the memory model, the element types,
  // the interface and the entry point "main", and opens main's body inside the bounds check.
  static Expected<TileKernel> begin(SpirvBuilder& b, const std::array<const model::Format*, 4>& formats,
                                    std::uint32_t local_size);
  Id element_type(Matrix m) const { return element_[m]; }
  Id tile() const { return tile_; }  // base + WorkgroupId.x, a 32-bit unsigned integer
  // A pointer to element `index` of matrix m's buffer.
  Id element_pointer(Matrix m, Id index) const;
  // Closes the bounds check and main.
  void end() const;

 private:
  explicit TileKernel(SpirvBuilder& b) : b_(&b) {}
  SpirvBuilder* b_;
  std::array<Id, 4> element_{}, element_pointer_type_{}, buffer_{};
  Id tile_ = 0, end_ = 0;
};

}  // namespace gp::backends::vulkan
