#include "backends/vulkan/pipeline_executables.hpp"

#include <fmt/format.h>

#include <cstring>

#include "backends/utf8.hpp"

namespace gp::backends::vulkan {

namespace {

// The items of a query, the two-call way: the count, then the array of structs of `type`.
template <class T, class Query>
Expected<std::vector<T>> items(VkStructureType type, const char* call, Query query) {
  std::uint32_t n = 0;
  if (const VkResult r = query(&n, nullptr); r != VK_SUCCESS) return call_failed(call, r);
  T blank{};
  blank.sType = type;
  std::vector<T> v(n, blank);
  if (const VkResult r = query(&n, v.data()); r != VK_SUCCESS && r != VK_INCOMPLETE) return call_failed(call, r);
  v.resize(n);
  return v;
}

std::string statistic_value(const VkPipelineExecutableStatisticKHR& s) {
  switch (s.format) {
    case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_BOOL32_KHR: return s.value.b32 ? "true" : "false";
    case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_INT64_KHR: return std::to_string(s.value.i64);
    case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_UINT64_KHR: return std::to_string(s.value.u64);
    case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_FLOAT64_KHR: return fmt::format("{}", s.value.f64);
    default: return fmt::format("(format {})", int(s.format));
  }
}

}  // namespace

Expected<PipelineExecutables> pipeline_executables(const Pipeline& p, std::string_view stem) {
  const Api& vk = *p.api;
  if (!vk.vkGetPipelineExecutablePropertiesKHR || !vk.vkGetPipelineExecutableStatisticsKHR ||
      !vk.vkGetPipelineExecutableInternalRepresentationsKHR)
    return Error{"the Vulkan loader gives no VK_KHR_pipeline_executable_properties functions", ErrorKind::unsupported};
  VkPipelineInfoKHR pipeline{VK_STRUCTURE_TYPE_PIPELINE_INFO_KHR, nullptr, p.pipeline};
  auto executables = items<VkPipelineExecutablePropertiesKHR>(
      VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_PROPERTIES_KHR, "vkGetPipelineExecutablePropertiesKHR",
      [&](std::uint32_t* n, VkPipelineExecutablePropertiesKHR* v) {
        return vk.vkGetPipelineExecutablePropertiesKHR(p.device, &pipeline, n, v);
      });
  if (!executables) return executables.error();
  PipelineExecutables out;
  for (std::uint32_t e = 0; e < executables->size(); ++e) {
    const VkPipelineExecutablePropertiesKHR& x = (*executables)[e];
    out.text += fmt::format("executable {}: {}\n  description: {}\n  stages: {:#x}\n  subgroup size: {}\n", e,
                            valid_utf8(x.name), valid_utf8(x.description), x.stages, x.subgroupSize);
    const VkPipelineExecutableInfoKHR executable{VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_INFO_KHR, nullptr, p.pipeline,
                                                 e};
    auto statistics = items<VkPipelineExecutableStatisticKHR>(
        VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_STATISTIC_KHR, "vkGetPipelineExecutableStatisticsKHR",
        [&](std::uint32_t* n, VkPipelineExecutableStatisticKHR* v) {
          return vk.vkGetPipelineExecutableStatisticsKHR(p.device, &executable, n, v);
        });
    if (!statistics) return statistics.error();
    for (const VkPipelineExecutableStatisticKHR& s : *statistics)
      out.text +=
          fmt::format("  statistic {}: {} ({})\n", valid_utf8(s.name), statistic_value(s), valid_utf8(s.description));
    // Three calls: the count, each representation's dataSize (pData null), then the data.
    const auto query = [&](std::uint32_t* n, VkPipelineExecutableInternalRepresentationKHR* v) {
      return vk.vkGetPipelineExecutableInternalRepresentationsKHR(p.device, &executable, n, v);
    };
    auto representations = items<VkPipelineExecutableInternalRepresentationKHR>(
        VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_INTERNAL_REPRESENTATION_KHR,
        "vkGetPipelineExecutableInternalRepresentationsKHR", query);
    if (!representations) return representations.error();
    std::vector<std::string> data(representations->size());
    for (std::size_t i = 0; i < data.size(); ++i) {
      data[i].resize((*representations)[i].dataSize);
      (*representations)[i].pData = data[i].data();
    }
    std::uint32_t n = std::uint32_t(representations->size());
    if (const VkResult r = query(&n, representations->data()); r != VK_SUCCESS && r != VK_INCOMPLETE)
      return call_failed("vkGetPipelineExecutableInternalRepresentationsKHR", r);
    for (std::uint32_t i = 0; i < n; ++i) {
      const VkPipelineExecutableInternalRepresentationKHR& ir = (*representations)[i];
      std::string& bytes = data[i];
      bytes.resize(std::min(bytes.size(), ir.dataSize));  // dataSize: the bytes written
      const std::string heading =
          fmt::format("  representation {}: {} ({})", i, valid_utf8(ir.name), valid_utf8(ir.description));
      if (ir.isText) {
        bytes.resize(std::strlen(bytes.c_str()));  // up to its null terminator
        out.text += fmt::format("{}\n{}\n", heading, valid_utf8(bytes));
      } else {
        const std::string suffix = fmt::format(".{}.{}.bin", e, i);
        out.text += fmt::format("{}: binary, {} bytes, in {}{}\n", heading, bytes.size(), stem, suffix);
        out.binaries.emplace_back(suffix, std::move(bytes));
      }
    }
  }
  return out;
}

}  // namespace gp::backends::vulkan
