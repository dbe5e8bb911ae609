// VK_KHR_shader_float_controls: what a device claims, and the SPIR-V execution modes that request
// a mode from it. A variant device (`vulkan:0+rtz`) compiles every kernel with one mode, for every
// width its expression computes in, so that the probes observe what the mode changes.
#pragma once

#include <vulkan/vulkan.h>

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "backends/expected.hpp"

namespace gp::backends::vulkan {

struct FloatControlMode {
  std::string_view name;  // the device id's suffix: "rtz"
  std::string_view key;   // the report's key, after the format: "binary32.rounding_rtz"
  std::uint32_t execution_mode, capability;
  VkBool32 VkPhysicalDeviceFloatControlsProperties::*claim[3];  // for binary16, binary32, binary64
  // The rule on setting the mode for some widths and not others (none for signed-zero-inf-nan).
  VkShaderFloatControlsIndependence VkPhysicalDeviceFloatControlsProperties::*independence;
};

// rte, rtz, denorm-preserve, denorm-flush, signed-zero-inf-nan-preserve.
std::span<const FloatControlMode> float_control_modes();

// The claims as report entries: "binary32.rounding_rtz": "true", ..., "denorm_independence": "all".
std::map<std::string, std::string> float_control_claims(const VkPhysicalDeviceFloatControlsProperties& p);

// The claims in one line for the report's header: "float controls claimed: rte for binary16,
// binary32, binary64; ...; not claimed: rtz, denorm-preserve, denorm-flush".
std::string describe_claims(const VkPhysicalDeviceFloatControlsProperties& p);

// Whether the device claims the mode for a width (16, 32 or 64 bits).
bool claims(const VkPhysicalDeviceFloatControlsProperties& p, const FloatControlMode& mode, int width);

// The widths (of 16, 32, 64) a kernel computing in `widths` may request the mode for: those the
// device claims, or an Error when the device's independence rule forbids setting the mode on some
// widths only (INDEPENDENCE_NONE: all alike; 32_BIT_ONLY: 16 and 64 alike).
Expected<std::vector<int>> mode_widths(const VkPhysicalDeviceFloatControlsProperties& p, const FloatControlMode& mode,
                                       const std::vector<int>& widths);

// The module with the mode requested for each width: OpCapability, OpExtension
// "SPV_KHR_float_controls" and one OpExecutionMode per width on the entry point.
Expected<std::vector<std::uint32_t>> request_mode(std::span<const std::uint32_t> spirv, const FloatControlMode& mode,
                                                  const std::vector<int>& widths);

}  // namespace gp::backends::vulkan
