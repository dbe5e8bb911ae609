#include "backends/vulkan/float_controls.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "backends/vulkan/spirv_builder.hpp"

namespace gp::backends::vulkan {

namespace {

using P = VkPhysicalDeviceFloatControlsProperties;

constexpr FloatControlMode kModes[] = {
    {"rte",
     "rounding_rte",
     spv::ExecutionModeRoundingModeRTE,
     spv::CapabilityRoundingModeRTE,
     {&P::shaderRoundingModeRTEFloat16, &P::shaderRoundingModeRTEFloat32, &P::shaderRoundingModeRTEFloat64},
     &P::roundingModeIndependence},
    {"rtz",
     "rounding_rtz",
     spv::ExecutionModeRoundingModeRTZ,
     spv::CapabilityRoundingModeRTZ,
     {&P::shaderRoundingModeRTZFloat16, &P::shaderRoundingModeRTZFloat32, &P::shaderRoundingModeRTZFloat64},
     &P::roundingModeIndependence},
    {"denorm-preserve",
     "denorm_preserve",
     spv::ExecutionModeDenormPreserve,
     spv::CapabilityDenormPreserve,
     {&P::shaderDenormPreserveFloat16, &P::shaderDenormPreserveFloat32, &P::shaderDenormPreserveFloat64},
     &P::denormBehaviorIndependence},
    {"denorm-flush",
     "denorm_flush_to_zero",
     spv::ExecutionModeDenormFlushToZero,
     spv::CapabilityDenormFlushToZero,
     {&P::shaderDenormFlushToZeroFloat16, &P::shaderDenormFlushToZeroFloat32, &P::shaderDenormFlushToZeroFloat64},
     &P::denormBehaviorIndependence},
    {"signed-zero-inf-nan-preserve",
     "signed_zero_inf_nan_preserve",
     spv::ExecutionModeSignedZeroInfNanPreserve,
     spv::CapabilitySignedZeroInfNanPreserve,
     {&P::shaderSignedZeroInfNanPreserveFloat16, &P::shaderSignedZeroInfNanPreserveFloat32,
      &P::shaderSignedZeroInfNanPreserveFloat64},
     nullptr},
};

constexpr int kWidths[3] = {16, 32, 64};

int width_index(int width) { return width == 16 ? 0 : width == 32 ? 1 : 2; }

std::string independence_name(VkShaderFloatControlsIndependence i) {
  switch (i) {
    case VK_SHADER_FLOAT_CONTROLS_INDEPENDENCE_32_BIT_ONLY: return "32-bit only";
    case VK_SHADER_FLOAT_CONTROLS_INDEPENDENCE_ALL: return "all";
    case VK_SHADER_FLOAT_CONTROLS_INDEPENDENCE_NONE: return "none";
    default: return "unknown";
  }
}

// One instruction: the word count and opcode, then the operands.
std::vector<std::uint32_t> instruction(spv::Op op, const std::vector<std::uint32_t>& operands) {
  std::vector<std::uint32_t> w{std::uint32_t(operands.size() + 1) << 16 | std::uint32_t(op)};
  w.insert(w.end(), operands.begin(), operands.end());
  return w;
}

}  // namespace

std::span<const FloatControlMode> float_control_modes() { return kModes; }

bool claims(const P& p, const FloatControlMode& mode, int width) {
  return p.*mode.claim[width_index(width)] == VK_TRUE;
}

std::map<std::string, std::string> float_control_claims(const P& p) {
  std::map<std::string, std::string> m;
  for (const FloatControlMode& mode : kModes)
    for (const int w : kWidths)
      m["binary" + std::to_string(w) + "." + std::string(mode.key)] = claims(p, mode, w) ? "true" : "false";
  m["denorm_behavior_independence"] = independence_name(p.denormBehaviorIndependence);
  m["rounding_mode_independence"] = independence_name(p.roundingModeIndependence);
  return m;
}

std::string describe_claims(const P& p) {
  std::vector<std::string> claimed, not_claimed;
  for (const FloatControlMode& mode : kModes) {
    std::vector<std::string> formats;
    for (const int w : kWidths)
      if (claims(p, mode, w)) formats.push_back("binary" + std::to_string(w));
    if (formats.empty())
      not_claimed.emplace_back(mode.name);
    else
      claimed.push_back(fmt::format("{} for {}", mode.name, fmt::join(formats, ", ")));
  }
  return fmt::format("float controls claimed: {}; not claimed: {}",
                     claimed.empty() ? "none" : fmt::format("{}", fmt::join(claimed, "; ")),
                     not_claimed.empty() ? "none" : fmt::format("{}", fmt::join(not_claimed, ", ")));
}

Expected<std::vector<int>> mode_widths(const P& p, const FloatControlMode& mode, const std::vector<int>& widths) {
  std::vector<int> offered;
  for (const int w : widths)
    if (claims(p, mode, w)) offered.push_back(w);
  if (offered.size() == widths.size() || !mode.independence) return offered;
  const auto independence = p.*mode.independence;
  const auto has = [&](const std::vector<int>& v, int w) { return std::find(v.begin(), v.end(), w) != v.end(); };
  const bool mixed_16_64 = has(widths, 16) && has(widths, 64) && has(offered, 16) != has(offered, 64);
  if (independence == VK_SHADER_FLOAT_CONTROLS_INDEPENDENCE_NONE ||
      (independence == VK_SHADER_FLOAT_CONTROLS_INDEPENDENCE_32_BIT_ONLY && mixed_16_64))
    return Error{"float controls: the device cannot set " + std::string(mode.name) +
                     " on some of the widths this kernel computes in and not on the others (independence " +
                     independence_name(independence) + ")",
                 ErrorKind::unsupported};
  return offered;
}

Expected<std::vector<std::uint32_t>> request_mode(std::span<const std::uint32_t> spirv, const FloatControlMode& mode,
                                                  const std::vector<int>& widths) {
  if (spirv.size() < 5 || spirv[0] != spv::MagicNumber) return Error{"not a SPIR-V module", ErrorKind::invalid};
  // The logical layout: capabilities, extensions, imports, memory model, entry points, execution
  // modes, then the rest. New instructions go after the last of their kind.
  std::vector<std::uint32_t> out(spirv.begin(), spirv.begin() + 5);
  std::uint32_t entry = 0;
  bool capability_done = false, extension_done = false, modes_done = false;
  for (std::size_t i = 5; i < spirv.size();) {
    const auto op = spv::Op(spirv[i] & 0xffff);
    const std::size_t n = spirv[i] >> 16;
    if (n == 0 || i + n > spirv.size()) return Error{"malformed SPIR-V module", ErrorKind::invalid};
    if (!capability_done && op != spv::OpCapability) {
      const auto cap = instruction(spv::OpCapability, {mode.capability});
      out.insert(out.end(), cap.begin(), cap.end());
      capability_done = true;
    }
    if (!extension_done && op != spv::OpCapability && op != spv::OpExtension) {
      const auto ext = instruction(spv::OpExtension, spirv_string("SPV_KHR_float_controls"));
      out.insert(out.end(), ext.begin(), ext.end());
      extension_done = true;
    }
    if (entry && !modes_done && op != spv::OpEntryPoint && op != spv::OpExecutionMode) {
      for (const int w : widths) {
        const auto em = instruction(spv::OpExecutionMode, {entry, mode.execution_mode, std::uint32_t(w)});
        out.insert(out.end(), em.begin(), em.end());
      }
      modes_done = true;
    }
    if (op == spv::OpEntryPoint) {
      if (entry) return Error{"float controls: the module has more than one entry point", ErrorKind::invalid};
      entry = spirv[i + 2];
    }
    out.insert(out.end(), spirv.begin() + std::ptrdiff_t(i), spirv.begin() + std::ptrdiff_t(i + n));
    i += n;
  }
  if (!modes_done) return Error{"float controls: the module has no entry point", ErrorKind::invalid};
  return out;
}

}  // namespace gp::backends::vulkan
