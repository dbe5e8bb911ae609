#include "backends/vulkan/glsl_compiler.hpp"

#include <glslang/Public/ResourceLimits.h>
#include <glslang/Public/ShaderLang.h>
#include <glslang/SPIRV/GlslangToSpv.h>

#include <mutex>

#include "backends/utf8.hpp"

namespace gp::backends::vulkan {

Expected<std::vector<std::uint32_t>> compile_compute_shader(const std::string& glsl) {
  // glslang's process-wide tables, built once and kept for the life of the program.
  static std::once_flag initialised;
  std::call_once(initialised, [] { glslang::InitializeProcess(); });

  glslang::TShader shader(EShLangCompute);
  const char* text = glsl.c_str();
  shader.setStrings(&text, 1);
  shader.setEnvInput(glslang::EShSourceGlsl, EShLangCompute, glslang::EShClientVulkan, 100);
  shader.setEnvClient(glslang::EShClientVulkan, glslang::EShTargetVulkan_1_1);
  shader.setEnvTarget(glslang::EShTargetSpv, glslang::EShTargetSpv_1_0);
  const auto messages = EShMessages(EShMsgSpvRules | EShMsgVulkanRules);
  if (!shader.parse(GetDefaultResources(), 450, false, messages))
    return Error{"GLSL compilation failed: " + valid_utf8(shader.getInfoLog()), ErrorKind::compile};
  glslang::TProgram program;
  program.addShader(&shader);
  if (!program.link(messages))
    return Error{"GLSL link failed: " + valid_utf8(program.getInfoLog()), ErrorKind::compile};
  std::vector<unsigned int> spirv;
  spv::SpvBuildLogger logger;
  glslang::SpvOptions options;
  options.disableOptimizer = true;
  glslang::GlslangToSpv(*program.getIntermediate(EShLangCompute), spirv, &logger, &options);
  if (spirv.empty())
    return Error{"SPIR-V generation failed: " + valid_utf8(logger.getAllMessages()), ErrorKind::compile};
  return std::vector<std::uint32_t>(spirv.begin(), spirv.end());
}

}  // namespace gp::backends::vulkan
