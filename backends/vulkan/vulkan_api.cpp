#include "backends/vulkan/vulkan_api.hpp"

#include <fmt/format.h>

#include "backends/dynamic_library.hpp"

namespace gp::backends::vulkan {

namespace {

#define GP_VK_STRING(f) #f
// Looks each function of a list up: the name of the first one missing, or none.
#define GP_VK_RESOLVE(f)                                                                          \
  if (!(api.f = reinterpret_cast<PFN_##f>(api.vkGetInstanceProcAddr(instance, GP_VK_STRING(f))))) \
    return GP_VK_STRING(f);

const char* resolve_instance(Api& api, VkInstance instance) {
  GP_VK_INSTANCE_FUNCTIONS(GP_VK_RESOLVE)
  return nullptr;
}

#undef GP_VK_RESOLVE
#define GP_VK_RESOLVE_IF_ANY(f) api.f = reinterpret_cast<PFN_##f>(api.vkGetInstanceProcAddr(instance, GP_VK_STRING(f)));

void resolve_extensions(Api& api, VkInstance instance){GP_VK_EXTENSION_FUNCTIONS(GP_VK_RESOLVE_IF_ANY)}
#undef GP_VK_RESOLVE_IF_ANY

Expected<Api> load() {
  auto library = open_library("GPUPARANOIA_VULKAN_LIBRARY", {"libvulkan.so.1"});
  if (!library) return library.error();
  Api api;
  api.library = library->path;
  api.vkGetInstanceProcAddr = reinterpret_cast<PFN_vkGetInstanceProcAddr>(library->symbol("vkGetInstanceProcAddr"));
  if (!api.vkGetInstanceProcAddr)
    return Error{fmt::format("{} has no vkGetInstanceProcAddr: not a Vulkan loader", api.library),
                 ErrorKind::unsupported};
  api.vkCreateInstance = reinterpret_cast<PFN_vkCreateInstance>(api.vkGetInstanceProcAddr(nullptr, "vkCreateInstance"));
  if (!api.vkCreateInstance)
    return Error{fmt::format("{} gives no vkCreateInstance", api.library), ErrorKind::unsupported};
  api.vkEnumerateInstanceVersion = reinterpret_cast<PFN_vkEnumerateInstanceVersion>(
      api.vkGetInstanceProcAddr(nullptr, "vkEnumerateInstanceVersion"));
  return api;
}

}  // namespace

Expected<const Api*> loader() {
  static const Expected<Api> api = load();
  if (!api) return api.error();
  return &*api;
}

Expected<Api> instance_api(const Api& global, VkInstance instance) {
  Api api = global;
  if (const char* missing = resolve_instance(api, instance))
    return Error{fmt::format("{} gives no {} for the instance", api.library, missing), ErrorKind::unsupported};
  resolve_extensions(api, instance);
  return api;
}

}  // namespace gp::backends::vulkan
