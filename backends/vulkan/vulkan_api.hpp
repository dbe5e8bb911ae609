// The Vulkan functions the backend calls, taken at run time from the loader (libvulkan.so.1, or the
// file GPUPARANOIA_VULKAN_LIBRARY names) through vkGetInstanceProcAddr: the build uses the headers
// alone (VK_NO_PROTOTYPES, set for the whole backend, makes a direct call a compile error).
#pragma once

#include <vulkan/vulkan.h>

#include <string>

#include "backends/expected.hpp"

namespace gp::backends::vulkan {

// The functions vkGetInstanceProcAddr gives for an instance: the instance's, and the device
// functions (the loader's trampolines dispatch on the device handle).
// clang-format off
#define GP_VK_INSTANCE_FUNCTIONS(X)                                                                      \
  X(vkDestroyInstance) X(vkEnumeratePhysicalDevices) X(vkGetPhysicalDeviceProperties)                  \
  X(vkGetPhysicalDeviceProperties2) X(vkGetPhysicalDeviceFeatures2) X(vkEnumerateDeviceExtensionProperties) \
  X(vkGetPhysicalDeviceQueueFamilyProperties) X(vkGetPhysicalDeviceMemoryProperties) X(vkCreateDevice) \
  X(vkDestroyDevice) X(vkGetDeviceQueue) X(vkDeviceWaitIdle) X(vkCreateCommandPool)                    \
  X(vkDestroyCommandPool) X(vkAllocateCommandBuffers) X(vkResetCommandBuffer) X(vkBeginCommandBuffer)  \
  X(vkEndCommandBuffer) X(vkCreateFence) X(vkDestroyFence) X(vkResetFences) X(vkWaitForFences)        \
  X(vkQueueSubmit) X(vkCreateBuffer) X(vkDestroyBuffer) X(vkGetBufferMemoryRequirements)               \
  X(vkAllocateMemory) X(vkFreeMemory) X(vkBindBufferMemory) X(vkMapMemory) X(vkCreateShaderModule)     \
  X(vkDestroyShaderModule) X(vkCreateDescriptorSetLayout) X(vkDestroyDescriptorSetLayout)              \
  X(vkCreatePipelineLayout) X(vkDestroyPipelineLayout) X(vkCreateComputePipelines) X(vkDestroyPipeline) \
  X(vkCreateDescriptorPool) X(vkDestroyDescriptorPool) X(vkAllocateDescriptorSets)                     \
  X(vkUpdateDescriptorSets) X(vkCmdBindPipeline) X(vkCmdBindDescriptorSets) X(vkCmdPushConstants)      \
  X(vkCmdDispatch) X(vkCmdPipelineBarrier)

// Those of extensions the backend does without: null where the loader gives none. Callable only on
// a device that enabled the extension (VK_KHR_pipeline_executable_properties, for `run --code`).
#define GP_VK_EXTENSION_FUNCTIONS(X)                                                                     \
  X(vkGetPipelineExecutablePropertiesKHR) X(vkGetPipelineExecutableStatisticsKHR)                      \
  X(vkGetPipelineExecutableInternalRepresentationsKHR)
// clang-format on

#define GP_VK_POINTER(f) PFN_##f f = nullptr;

// One instance's dispatch table. Tests may replace an entry to inject a driver's fault.
struct Api {
  std::string library;  // the loader's file, as opened
  PFN_vkGetInstanceProcAddr vkGetInstanceProcAddr = nullptr;
  // Global functions, given without an instance; a Vulkan 1.0 loader has no vkEnumerateInstanceVersion.
  PFN_vkCreateInstance vkCreateInstance = nullptr;
  PFN_vkEnumerateInstanceVersion vkEnumerateInstanceVersion = nullptr;
  GP_VK_INSTANCE_FUNCTIONS(GP_VK_POINTER)
  GP_VK_EXTENSION_FUNCTIONS(GP_VK_POINTER)
};

#undef GP_VK_POINTER

// The loader and its global functions (the instance's left null), opened once per process; or why
// not: "libvulkan.so.1 not found ...".
Expected<const Api*> loader();

// The global table with every instance function of `instance` filled in, or the first one missing;
// the extensions' where the loader has them.
Expected<Api> instance_api(const Api& global, VkInstance instance);

}  // namespace gp::backends::vulkan
