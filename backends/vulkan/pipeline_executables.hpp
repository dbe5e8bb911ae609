// What the driver made of a pipeline, where it says (VK_KHR_pipeline_executable_properties): for
// each executable its name, description and subgroup size, its statistics, and its internal
// representations (the driver's IR, the final shader assembly), kept with the result by
// `run --code` (kernel_code.hpp). The pipeline must come from a Context that captures executables.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "backends/expected.hpp"
#include "backends/vulkan/vulkan_context.hpp"

namespace gp::backends::vulkan {

struct PipelineExecutables {
  // The whole, as text: each executable, its statistics, its text representations inline.
  std::string text;
  // The binary representations: a file suffix (".<executable>.<representation>.bin") and the bytes;
  // the text names each.
  std::vector<std::pair<std::string, std::string>> binaries;
};

// An Error naming the query that failed. `stem`: the file name the binaries' suffixes follow.
Expected<PipelineExecutables> pipeline_executables(const Pipeline& pipeline, std::string_view stem);

}  // namespace gp::backends::vulkan
