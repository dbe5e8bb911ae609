// The Vulkan backend: every physical device the loader finds, as `vulkan:<n>`
// in the loader's order.
//
// Scalar batches run the expression as a GLSL compute shader (kernel_source(), `precise` on every
// node so that SPIR-V carries NoContraction), compiled to SPIR-V by glslang at run time; each
// (kernel source, float-control mode) is compiled once per device. binary32 always; binary16 where
// the device offers shaderFloat16, binary64 where it offers shaderFloat64.
//
// Float controls (VK_KHR_shader_float_controls): caps().float_controls holds what the device claims.
// For each mode it claims for some width, a variant device `vulkan:<n>+<mode>` (rte, rtz,
// denorm-preserve, denorm-flush, signed-zero-inf-nan-preserve) requests that mode in every kernel,
// for each width the kernel computes in, and lists only the formats the mode is claimed for: its
// report shows what the mode does beside the claim. `vulkan:<n>` requests nothing.
//
// MMA batches (VK_KHR_cooperative_matrix) run the configurations that
// vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR lists with subgroup scope and floating-point
// types (float16, float32, float64, bfloat16, float8 e4m3/e5m2), one tile per workgroup of one full
// subgroup, the module from coopmat_module(). Integer configurations are named in the description
// only: the model has no integer formats, nor are saturating ones run. A variant runs the
// configurations whose formats it computes in, the module requesting its mode for their widths.
//
// With `run --code DIR` (kernel_code.hpp), each pipeline's SPIR-V module, as submitted, is kept as
// <label>.spv; where the device has VK_KHR_pipeline_executable_properties with
// pipelineExecutableInfo, the logical device enables it and every pipeline captures what the driver
// made of the module (pipeline_executables.hpp), kept as <label>.executables.txt and .bin files.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "backends/device.hpp"
#include "backends/kernel_code.hpp"

namespace gp::backends {

namespace vulkan {
struct Gpu;
struct FloatControlMode;
class Context;
struct Pipeline;
struct PipelineOptions;

// The model's row for a configuration that the driver runs as something else, by the device's name:
// fp8 on Hopper (H100, H200, H800, H20, GH200), which NVIDIA emulates with conversions to binary16
// and the binary16 tensor core (as its fp8 mma.sync): the emulated hopper row of the same K and
// formats ("hopper:QMMA.16832.F32.E4M3.E4M3"), whatever M and N (a tile of several instructions);
// "" for any other.
std::string emulated_instruction(std::string_view device_name, std::uint32_t vendor_id, const MmaConfig& config);
}  // namespace vulkan

class VulkanDevice final : public Device {
 public:
  // `mode`: the float-control mode every kernel requests, or none. Its kernels' code is kept under
  // `code` unless empty.
  VulkanDevice(std::shared_ptr<vulkan::Gpu> gpu, std::size_t index, const vulkan::FloatControlMode* mode,
               const std::filesystem::path& code = {});
  const DeviceInfo& info() const override { return info_; }
  const Capabilities& caps() const override { return caps_; }
  Expected<std::vector<std::uint64_t>> scalar(const ScalarBatch& batch) override;
  Expected<std::vector<std::uint64_t>> mma(const MmaBatch& batch) override;

 private:
  std::shared_ptr<vulkan::Gpu> gpu_;
  Expected<std::vector<std::uint32_t>> with_mode(Expected<std::vector<std::uint32_t>> spirv,
                                                 const std::vector<const model::Format*>& formats) const;
  // The pipeline of `kernel` (what makes the module), made from spirv() on first use, its code then
  // kept under `label`.
  Expected<const vulkan::Pipeline*> pipeline(vulkan::Context& context, const std::string& kernel,
                                             std::string_view label,
                                             const std::function<Expected<std::vector<std::uint32_t>>()>& spirv,
                                             const vulkan::PipelineOptions& options);

  const vulkan::FloatControlMode* mode_;
  DeviceInfo info_;
  Capabilities caps_;
  KernelCode code_;
};

class VulkanBackend final : public Backend {
 public:
  struct Options {
    // Lower the device's limits (0: the device's own), so that tests can make a batch split into
    // several buffers (maxStorageBufferRange) or dispatches (maxComputeWorkGroupCount[0]).
    std::uint64_t max_buffer_bytes = 0;
    std::uint32_t max_workgroups = 0;
    // Every message of the loader and the layers (VK_EXT_debug_utils), `error` for those of error
    // severity: the tests run the backend under the validation layers.
    std::function<void(bool error, std::string_view message)> debug_messages = {};
    std::filesystem::path code = {};  // where the kernels' code is kept (kernel_code.hpp); empty: nowhere
  };
  explicit VulkanBackend(Options options) : options_(options) {}
  VulkanBackend() : VulkanBackend(Options{}) {}
  std::string name() const override { return "vulkan"; }
  // Every device and its float-control variants; an Error when there is no loader, no driver or
  // no device, with the reason.
  Expected<std::vector<std::unique_ptr<Device>>> enumerate() override;

 private:
  Options options_;
};

}  // namespace gp::backends
