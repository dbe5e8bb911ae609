// The spirv-val of scripts/vulkan-validation-fixture, named by GPUPARANOIA_SPIRV_VAL: newer than the
// SPIRV-Tools library the tests link (Debian 12's 2023.1), it knows SPV_KHR_cooperative_matrix (not
// yet SPV_KHR_bfloat16 nor SPV_EXT_float8). A command, run on a module written to a temporary file.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <span>
#include <string>

namespace gp::testing {

// The tool, or null where GPUPARANOIA_SPIRV_VAL is unset or empty (the tests skip with this reason).
inline const char* newer_spirv_val() {
  const char* tool = std::getenv("GPUPARANOIA_SPIRV_VAL");
  return tool && *tool ? tool : nullptr;
}
inline constexpr const char* kNoNewerSpirvVal =
    "GPUPARANOIA_SPIRV_VAL is unset: scripts/vulkan-validation-fixture installs a spirv-val that knows "
    "SPV_KHR_cooperative_matrix (README, Tests)";

struct SpirvVal {
  bool ok;
  std::string messages;
};

// spirv-val --target-env `target_env` (vulkan1.2, spv1.5, ...) on the module.
inline SpirvVal run_spirv_val(const char* tool, std::span<const std::uint32_t> words, const char* target_env) {
  const std::filesystem::path file =
      std::filesystem::temp_directory_path() / ("gpuparanoia-spirv-val-" + std::to_string(::getpid()) + ".spv");
  std::ofstream(file, std::ios::binary)
      .write(reinterpret_cast<const char*>(words.data()), std::streamsize(words.size_bytes()));
  const std::string command =
      std::string("'") + tool + "' --target-env " + target_env + " '" + file.string() + "' 2>&1";
  SpirvVal r{false, ""};
  if (FILE* out = ::popen(command.c_str(), "r")) {
    char buffer[4096];
    for (std::size_t n; (n = std::fread(buffer, 1, sizeof buffer, out)) > 0;) r.messages.append(buffer, n);
    r.ok = ::pclose(out) == 0;
  }
  std::filesystem::remove(file);
  return r;
}

}  // namespace gp::testing
