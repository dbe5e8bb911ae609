#include "backends/vulkan/vulkan_context.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <iterator>

#include "backends/driver_call.hpp"
#include "backends/utf8.hpp"

namespace gp::backends::vulkan {

namespace {

// A dispatch still running after this long is taken for a hung device.
constexpr std::uint64_t kFenceTimeoutNs = 120'000'000'000ull;
// The largest buffer of a run: bigger batches go in several chunks, whatever the device allows.
constexpr VkDeviceSize kMaxBufferBytes = VkDeviceSize(256) << 20;

// A Vulkan struct with its type set and every other member zero.
template <class T>
T make(VkStructureType type) {
  T t{};
  t.sType = type;
  return t;
}

// Links s at the end of a pNext chain (`next` points at the last pNext) where `present`.
template <class T>
void append(void**& next, bool present, T& s) {
  if (!present) return;
  *next = &s;
  next = &s.pNext;
}

VKAPI_ATTR VkBool32 VKAPI_CALL pass_message(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                            VkDebugUtilsMessageTypeFlagsEXT,
                                            const VkDebugUtilsMessengerCallbackDataEXT* data, void* messages) {
  (*static_cast<const DebugMessages*>(messages))(severity >= VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT,
                                                 data && data->pMessage ? data->pMessage : "");
  return VK_FALSE;
}

}  // namespace

Error call_failed(const char* call, VkResult r) { return Error{std::string(call) + " failed: " + result_name(r)}; }

std::string result_name(VkResult r) {
  switch (r) {
    case VK_SUCCESS: return "VK_SUCCESS";
    case VK_TIMEOUT: return "VK_TIMEOUT";
    case VK_ERROR_OUT_OF_HOST_MEMORY: return "VK_ERROR_OUT_OF_HOST_MEMORY";
    case VK_ERROR_OUT_OF_DEVICE_MEMORY: return "VK_ERROR_OUT_OF_DEVICE_MEMORY";
    case VK_ERROR_INITIALIZATION_FAILED: return "VK_ERROR_INITIALIZATION_FAILED";
    case VK_ERROR_DEVICE_LOST: return "VK_ERROR_DEVICE_LOST";
    case VK_ERROR_MEMORY_MAP_FAILED: return "VK_ERROR_MEMORY_MAP_FAILED";
    case VK_ERROR_EXTENSION_NOT_PRESENT: return "VK_ERROR_EXTENSION_NOT_PRESENT";
    case VK_ERROR_FEATURE_NOT_PRESENT: return "VK_ERROR_FEATURE_NOT_PRESENT";
    case VK_ERROR_INCOMPATIBLE_DRIVER: return "VK_ERROR_INCOMPATIBLE_DRIVER";
    case VK_ERROR_TOO_MANY_OBJECTS: return "VK_ERROR_TOO_MANY_OBJECTS";
    case VK_ERROR_INVALID_SHADER_NV: return "VK_ERROR_INVALID_SHADER_NV";
    case VK_ERROR_OUT_OF_POOL_MEMORY: return "VK_ERROR_OUT_OF_POOL_MEMORY";
    default: return "VkResult " + std::to_string(int(r));
  }
}

// ---- Instance ----

Expected<std::shared_ptr<Instance>> Instance::create(DebugMessages messages) {
  const auto global = loader();
  if (!global) return global.error();
  const Api& vk = **global;
  std::uint32_t version = VK_API_VERSION_1_0;
  if (vk.vkEnumerateInstanceVersion)
    if (const VkResult r = vk.vkEnumerateInstanceVersion(&version); r != VK_SUCCESS)
      return call_failed("vkEnumerateInstanceVersion", r);
  if (version < VK_API_VERSION_1_1)
    return Error{fmt::format("the Vulkan loader {} offers only Vulkan 1.0; the backend needs 1.1", vk.library),
                 ErrorKind::unsupported};
  auto app = make<VkApplicationInfo>(VK_STRUCTURE_TYPE_APPLICATION_INFO);
  app.pApplicationName = "gpuparanoia";
  app.apiVersion = std::min<std::uint32_t>(version, VK_API_VERSION_1_3);
  auto info = make<VkInstanceCreateInfo>(VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO);
  info.pApplicationInfo = &app;
  auto messenger = make<VkDebugUtilsMessengerCreateInfoEXT>(VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT);
  std::unique_ptr<DebugMessages> sink;
  const char* const debug_utils = VK_EXT_DEBUG_UTILS_EXTENSION_NAME;
  if (messages) {
    sink = std::make_unique<DebugMessages>(std::move(messages));
    messenger.messageSeverity =
        VK_DEBUG_UTILS_MESSAGE_SEVERITY_VERBOSE_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_SEVERITY_INFO_BIT_EXT |
        VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
    messenger.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT |
                            VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                            VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT;
    messenger.pfnUserCallback = pass_message;
    messenger.pUserData = sink.get();
    info.pNext = &messenger;  // the messages of vkCreateInstance and vkDestroyInstance
    info.enabledExtensionCount = 1;
    info.ppEnabledExtensionNames = &debug_utils;
  }
  VkInstance instance = VK_NULL_HANDLE;
  if (const VkResult r = vk.vkCreateInstance(&info, nullptr, &instance); r != VK_SUCCESS) {
    if (r == VK_ERROR_INCOMPATIBLE_DRIVER)
      return Error{"no Vulkan driver is installed (vkCreateInstance: VK_ERROR_INCOMPATIBLE_DRIVER)",
                   ErrorKind::unsupported};
    return call_failed("vkCreateInstance", r);
  }
  auto api = instance_api(vk, instance);
  if (!api) {
    if (const auto destroy =
            reinterpret_cast<PFN_vkDestroyInstance>(vk.vkGetInstanceProcAddr(instance, "vkDestroyInstance")))
      destroy(instance, nullptr);
    return api.error();
  }
  std::shared_ptr<Instance> made(new Instance(instance, app.apiVersion, std::move(*api)));
  if (sink) {
    made->messages_ = std::move(sink);
    const auto create_messenger = reinterpret_cast<PFN_vkCreateDebugUtilsMessengerEXT>(
        vk.vkGetInstanceProcAddr(instance, "vkCreateDebugUtilsMessengerEXT"));
    if (!create_messenger)
      return Error{"VK_EXT_debug_utils is enabled but vkCreateDebugUtilsMessengerEXT is missing",
                   ErrorKind::unsupported};
    if (const VkResult r = create_messenger(instance, &messenger, nullptr, &made->messenger_); r != VK_SUCCESS)
      return call_failed("vkCreateDebugUtilsMessengerEXT", r);
  }
  return made;
}

Instance::~Instance() {
  if (messenger_)
    if (const auto destroy = reinterpret_cast<PFN_vkDestroyDebugUtilsMessengerEXT>(
            api_.vkGetInstanceProcAddr(instance_, "vkDestroyDebugUtilsMessengerEXT")))
      destroy(instance_, messenger_, nullptr);
  api_.vkDestroyInstance(instance_, nullptr);
}

Expected<std::vector<VkPhysicalDevice>> Instance::physical_devices() const {
  const Api& vk = api_;
  std::uint32_t n = 0;
  if (const VkResult r = vk.vkEnumeratePhysicalDevices(instance_, &n, nullptr); r != VK_SUCCESS)
    return call_failed("vkEnumeratePhysicalDevices", r);
  std::vector<VkPhysicalDevice> devices(n);
  if (const VkResult r = vk.vkEnumeratePhysicalDevices(instance_, &n, devices.data());
      r != VK_SUCCESS && r != VK_INCOMPLETE)
    return call_failed("vkEnumeratePhysicalDevices", r);
  devices.resize(n);
  if (devices.empty())
    return Error{"the Vulkan loader found no device (no driver installed, such as Mesa's lavapipe)",
                 ErrorKind::unsupported};
  return devices;
}

// ---- Device facts ----

VkPhysicalDeviceFeatures2* Features::link() {
  core.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2;
  v11.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES;
  v12.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES;
  v13.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES;
  coopmat.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_KHR;
  bfloat16.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_BFLOAT16_FEATURES_KHR;
  float8.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT8_FEATURES_EXT;
  subgroup_size_control.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_FEATURES;
  executables.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PIPELINE_EXECUTABLE_PROPERTIES_FEATURES_KHR;
  void** next = &core.pNext;
  append(next, has_v12, v11);  // the Vulkan11 struct exists from Vulkan 1.2 on
  append(next, has_v12, v12);
  append(next, has_v13, v13);
  append(next, has_coopmat, coopmat);
  append(next, has_bfloat16, bfloat16);
  append(next, has_float8, float8);
  append(next, has_subgroup_size_control, subgroup_size_control);
  append(next, has_executables, executables);
  *next = nullptr;
  return &core;
}

bool DeviceFacts::has_extension(std::string_view name) const {
  return std::find(extensions.begin(), extensions.end(), name) != extensions.end();
}

Expected<DeviceFacts> query_device(const Instance& instance, VkPhysicalDevice physical) {
  const Api& vk = instance.api();
  DeviceFacts f;
  f.physical = physical;
  vk.vkGetPhysicalDeviceProperties(physical, &f.properties);
  f.api_version = std::min(f.properties.apiVersion, instance.api_version());
  if (f.api_version < VK_API_VERSION_1_1)
    return Error{valid_utf8(f.properties.deviceName) + " offers only Vulkan 1.0; the backend needs 1.1",
                 ErrorKind::unsupported};

  std::uint32_t n = 0;
  if (const VkResult r = vk.vkEnumerateDeviceExtensionProperties(physical, nullptr, &n, nullptr); r != VK_SUCCESS)
    return call_failed("vkEnumerateDeviceExtensionProperties", r);
  std::vector<VkExtensionProperties> extensions(n);
  if (const VkResult r = vk.vkEnumerateDeviceExtensionProperties(physical, nullptr, &n, extensions.data());
      r != VK_SUCCESS && r != VK_INCOMPLETE)
    return call_failed("vkEnumerateDeviceExtensionProperties", r);
  for (std::uint32_t i = 0; i < n; ++i) f.extensions.emplace_back(extensions[i].extensionName);

  const bool v12 = f.api_version >= VK_API_VERSION_1_2, v13 = f.api_version >= VK_API_VERSION_1_3;
  f.features.has_v12 = v12;
  f.features.has_v13 = v13;
  f.features.has_coopmat = f.has_extension(VK_KHR_COOPERATIVE_MATRIX_EXTENSION_NAME);
  f.features.has_bfloat16 = f.has_extension(VK_KHR_SHADER_BFLOAT16_EXTENSION_NAME);
  f.features.has_float8 = f.has_extension(VK_EXT_SHADER_FLOAT8_EXTENSION_NAME);
  // Vulkan 1.3 has it in its own struct, which may not be chained beside the extension's.
  f.features.has_subgroup_size_control = !v13 && f.has_extension(VK_EXT_SUBGROUP_SIZE_CONTROL_EXTENSION_NAME);
  f.features.has_executables = f.has_extension(VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME);
  vk.vkGetPhysicalDeviceFeatures2(physical, f.features.link());

  auto properties = make<VkPhysicalDeviceProperties2>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2);
  auto subgroup = make<VkPhysicalDeviceSubgroupProperties>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES);
  auto float_controls =
      make<VkPhysicalDeviceFloatControlsProperties>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FLOAT_CONTROLS_PROPERTIES);
  auto coopmat = make<VkPhysicalDeviceCooperativeMatrixPropertiesKHR>(
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_PROPERTIES_KHR);
  f.driver.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES;
  f.id.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_ID_PROPERTIES;
  auto pci =
      make<VkPhysicalDevicePCIBusInfoPropertiesEXT>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PCI_BUS_INFO_PROPERTIES_EXT);
  const bool has_pci = f.has_extension(VK_EXT_PCI_BUS_INFO_EXTENSION_NAME);
  f.subgroup_size_control.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_PROPERTIES;
  void** next = &properties.pNext;
  append(next, true, subgroup);
  append(next, v12, f.driver);
  append(next, v12, float_controls);
  append(next, v13 || f.features.has_subgroup_size_control, f.subgroup_size_control);
  append(next, f.features.has_coopmat, coopmat);
  append(next, true, f.id);
  append(next, has_pci, pci);
  *next = nullptr;
  vk.vkGetPhysicalDeviceProperties2(physical, &properties);
  f.subgroup_size = subgroup.subgroupSize;
  if (v12) f.float_controls = float_controls;
  // The structs outlive the chain: no pointer into this frame is kept.
  if (f.float_controls) f.float_controls->pNext = nullptr;
  f.driver.pNext = f.subgroup_size_control.pNext = f.id.pNext = nullptr;
  if (has_pci) {
    pci.pNext = nullptr;
    f.pci = pci;
  }

  if (f.features.has_coopmat) {
    f.coopmat_stages = coopmat.cooperativeMatrixSupportedStages;
    const auto get = reinterpret_cast<PFN_vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR>(
        vk.vkGetInstanceProcAddr(instance.handle(), "vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR"));
    if (!get)
      return Error{
          "VK_KHR_cooperative_matrix is offered but vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR is missing",
          ErrorKind::unsupported};
    if (const VkResult r = get(physical, &n, nullptr); r != VK_SUCCESS)
      return call_failed("vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR", r);
    f.coopmat.assign(n, make<VkCooperativeMatrixPropertiesKHR>(VK_STRUCTURE_TYPE_COOPERATIVE_MATRIX_PROPERTIES_KHR));
    if (const VkResult r = get(physical, &n, f.coopmat.data()); r != VK_SUCCESS && r != VK_INCOMPLETE)
      return call_failed("vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR", r);
    f.coopmat.resize(n);
  }

  vk.vkGetPhysicalDeviceQueueFamilyProperties(physical, &n, nullptr);
  std::vector<VkQueueFamilyProperties> families(n);
  vk.vkGetPhysicalDeviceQueueFamilyProperties(physical, &n, families.data());
  const auto compute = std::find_if(families.begin(), families.end(), [](const VkQueueFamilyProperties& q) {
    return q.queueFlags & VK_QUEUE_COMPUTE_BIT;
  });
  if (compute == families.end())
    return Error{valid_utf8(f.properties.deviceName) + " has no compute queue", ErrorKind::unsupported};
  f.queue_family = std::uint32_t(compute - families.begin());
  return f;
}

// ---- Buffers and pipelines ----

Buffer::Buffer(Buffer&& o) noexcept
    : api_(o.api_), device_(o.device_), buffer_(o.buffer_), memory_(o.memory_), data_(o.data_) {
  o.abandon();
}

Buffer::~Buffer() {
  api_->vkDestroyBuffer(device_, buffer_, nullptr);
  api_->vkFreeMemory(device_, memory_, nullptr);
}

Pipeline::~Pipeline() {
  const Api& vk = *api;
  vk.vkDestroyDescriptorPool(device, pool, nullptr);
  vk.vkDestroyPipeline(device, pipeline, nullptr);
  vk.vkDestroyPipelineLayout(device, layout, nullptr);
  vk.vkDestroyDescriptorSetLayout(device, set_layout, nullptr);
  vk.vkDestroyShaderModule(device, module, nullptr);
}

PipelineOptions one_subgroup_per_workgroup(const DeviceFacts& f, std::uint32_t bindings) {
  const Features& s = f.features;
  PipelineOptions options{.bindings = bindings};
  if ((s.v13.subgroupSizeControl || s.subgroup_size_control.subgroupSizeControl) &&
      (f.subgroup_size_control.requiredSubgroupSizeStages & VK_SHADER_STAGE_COMPUTE_BIT))
    options.required_subgroup_size = f.subgroup_size;
  // Without a required size, full subgroups need LocalSize to be a multiple of maxSubgroupSize.
  options.full_subgroups =
      (s.v13.computeFullSubgroups || s.subgroup_size_control.computeFullSubgroups) &&
      (options.required_subgroup_size || f.subgroup_size == f.subgroup_size_control.maxSubgroupSize);
  return options;
}

// ---- Context ----

Expected<std::unique_ptr<Context>> Context::create(std::shared_ptr<Instance> instance, const DeviceFacts& facts,
                                                   Features enable, const std::vector<const char*>& extensions) {
  std::unique_ptr<Context> c(new Context(std::move(instance), facts));
  const Api& vk = c->instance_->api();
  const float priority = 1.0f;
  auto queue = make<VkDeviceQueueCreateInfo>(VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO);
  queue.queueFamilyIndex = facts.queue_family;
  queue.queueCount = 1;
  queue.pQueuePriorities = &priority;
  auto info = make<VkDeviceCreateInfo>(VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO);
  info.pNext = enable.link();
  info.queueCreateInfoCount = 1;
  info.pQueueCreateInfos = &queue;
  info.enabledExtensionCount = std::uint32_t(extensions.size());
  info.ppEnabledExtensionNames = extensions.data();
  if (const VkResult r = vk.vkCreateDevice(facts.physical, &info, nullptr, &c->device_); r != VK_SUCCESS)
    return call_failed("vkCreateDevice", r);
  c->captures_executables_ = enable.has_executables && enable.executables.pipelineExecutableInfo;
  vk.vkGetDeviceQueue(c->device_, facts.queue_family, 0, &c->queue_);
  auto pool = make<VkCommandPoolCreateInfo>(VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO);
  pool.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
  pool.queueFamilyIndex = facts.queue_family;
  if (const VkResult r = vk.vkCreateCommandPool(c->device_, &pool, nullptr, &c->command_pool_); r != VK_SUCCESS)
    return call_failed("vkCreateCommandPool", r);
  auto alloc = make<VkCommandBufferAllocateInfo>(VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO);
  alloc.commandPool = c->command_pool_;
  alloc.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  alloc.commandBufferCount = 1;
  if (const VkResult r = vk.vkAllocateCommandBuffers(c->device_, &alloc, &c->commands_); r != VK_SUCCESS)
    return call_failed("vkAllocateCommandBuffers", r);
  auto fence = make<VkFenceCreateInfo>(VK_STRUCTURE_TYPE_FENCE_CREATE_INFO);
  if (const VkResult r = vk.vkCreateFence(c->device_, &fence, nullptr, &c->fence_); r != VK_SUCCESS)
    return call_failed("vkCreateFence", r);
  return c;
}

Context::~Context() {
  if (!device_) return;
  if (lost_) {
    // Waiting for a hung device would never end, and what it still runs may use any of these: all
    // of it is kept, reachable from a list that is never freed.
    struct Remains {
      std::shared_ptr<Instance> instance;
      std::map<std::string, std::unique_ptr<Pipeline>> pipelines;
      std::vector<Buffer> buffers;
      VkDevice device;
      VkCommandPool command_pool;
      VkFence fence;
    };
    static auto* const kept = new std::vector<Remains*>;
    kept->push_back(new Remains{std::move(instance_), std::move(pipelines_), std::move(abandoned_), device_,
                                command_pool_, fence_});
    return;
  }
  const Api& vk = instance_->api();
  vk.vkDeviceWaitIdle(device_);
  pipelines_.clear();
  vk.vkDestroyFence(device_, fence_, nullptr);
  vk.vkDestroyCommandPool(device_, command_pool_, nullptr);
  vk.vkDestroyDevice(device_, nullptr);
}

std::optional<Error> Context::failed(const char* call, VkResult r) {
  Error e = call_failed(call, r);
  if (r == VK_ERROR_DEVICE_LOST || r == VK_TIMEOUT) {
    lost_ = "device lost: " + std::string(call) +
            (r == VK_TIMEOUT ? " timed out (the device hangs)" : " reported VK_ERROR_DEVICE_LOST");
    e.kind = ErrorKind::lost;
  }
  return e;
}

Expected<Buffer> Context::buffer(VkDeviceSize bytes) {
  const Api& vk = instance_->api();
  Buffer b(vk, device_);
  auto info = make<VkBufferCreateInfo>(VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO);
  info.size = bytes;
  info.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT;
  info.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  if (const VkResult r = vk.vkCreateBuffer(device_, &info, nullptr, &b.buffer_); r != VK_SUCCESS)
    return call_failed("vkCreateBuffer", r);
  VkMemoryRequirements req;
  vk.vkGetBufferMemoryRequirements(device_, b.buffer_, &req);
  VkPhysicalDeviceMemoryProperties mem;
  vk.vkGetPhysicalDeviceMemoryProperties(facts_.physical, &mem);
  // Host-visible and coherent, cached where offered: the host writes operands and reads results.
  const VkMemoryPropertyFlags need = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
  std::optional<std::uint32_t> type;
  for (std::uint32_t i = 0; i < mem.memoryTypeCount; ++i) {
    const VkMemoryPropertyFlags flags = mem.memoryTypes[i].propertyFlags;
    if (!(req.memoryTypeBits & (1u << i)) || (flags & need) != need) continue;
    const bool cached = flags & VK_MEMORY_PROPERTY_HOST_CACHED_BIT;
    if (!type || cached) type = i;
    if (cached) break;
  }
  if (!type) return Error{"the device has no host-visible coherent memory for storage buffers", ErrorKind::unsupported};
  auto alloc = make<VkMemoryAllocateInfo>(VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO);
  alloc.allocationSize = req.size;
  alloc.memoryTypeIndex = *type;
  if (const VkResult r = vk.vkAllocateMemory(device_, &alloc, nullptr, &b.memory_); r != VK_SUCCESS)
    return call_failed("vkAllocateMemory", r);
  if (const VkResult r = vk.vkBindBufferMemory(device_, b.buffer_, b.memory_, 0); r != VK_SUCCESS)
    return call_failed("vkBindBufferMemory", r);
  void* data = nullptr;
  if (const VkResult r = vk.vkMapMemory(device_, b.memory_, 0, VK_WHOLE_SIZE, 0, &data); r != VK_SUCCESS)
    return call_failed("vkMapMemory", r);
  b.data_ = static_cast<std::byte*>(data);
  return b;
}

Expected<std::unique_ptr<Pipeline>> Context::make_pipeline(std::span<const std::uint32_t> spirv,
                                                           const PipelineOptions& options) {
  const Api& vk = instance_->api();
  auto p = std::make_unique<Pipeline>(vk, device_);
  p->bindings = options.bindings;
  auto module = make<VkShaderModuleCreateInfo>(VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO);
  module.codeSize = spirv.size_bytes();
  module.pCode = spirv.data();
  const DriverCall vkCreateShaderModule_call("vkCreateShaderModule");
  if (const VkResult r = vk.vkCreateShaderModule(device_, &module, nullptr, &p->module); r != VK_SUCCESS)
    return call_failed("vkCreateShaderModule", r);
  std::vector<VkDescriptorSetLayoutBinding> bindings(options.bindings);
  for (std::uint32_t i = 0; i < options.bindings; ++i)
    bindings[i] = {i, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1, VK_SHADER_STAGE_COMPUTE_BIT, nullptr};
  auto set_layout = make<VkDescriptorSetLayoutCreateInfo>(VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO);
  set_layout.bindingCount = options.bindings;
  set_layout.pBindings = bindings.data();
  if (const VkResult r = vk.vkCreateDescriptorSetLayout(device_, &set_layout, nullptr, &p->set_layout); r != VK_SUCCESS)
    return call_failed("vkCreateDescriptorSetLayout", r);
  const VkPushConstantRange range{VK_SHADER_STAGE_COMPUTE_BIT, 0, 2 * sizeof(std::uint32_t)};
  auto layout = make<VkPipelineLayoutCreateInfo>(VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO);
  layout.setLayoutCount = 1;
  layout.pSetLayouts = &p->set_layout;
  layout.pushConstantRangeCount = 1;
  layout.pPushConstantRanges = &range;
  if (const VkResult r = vk.vkCreatePipelineLayout(device_, &layout, nullptr, &p->layout); r != VK_SUCCESS)
    return call_failed("vkCreatePipelineLayout", r);
  VkPipelineShaderStageRequiredSubgroupSizeCreateInfo subgroup{
      VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_REQUIRED_SUBGROUP_SIZE_CREATE_INFO, nullptr,
      options.required_subgroup_size};
  auto info = make<VkComputePipelineCreateInfo>(VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO);
  info.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
  info.stage.pNext = options.required_subgroup_size ? &subgroup : nullptr;
  info.stage.flags = options.full_subgroups ? VK_PIPELINE_SHADER_STAGE_CREATE_REQUIRE_FULL_SUBGROUPS_BIT : 0;
  info.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
  info.stage.module = p->module;
  info.stage.pName = "main";
  info.layout = p->layout;
  if (captures_executables_)
    info.flags =
        VK_PIPELINE_CREATE_CAPTURE_STATISTICS_BIT_KHR | VK_PIPELINE_CREATE_CAPTURE_INTERNAL_REPRESENTATIONS_BIT_KHR;
  const DriverCall vkCreateComputePipelines_call("vkCreateComputePipelines");
  if (const VkResult r = vk.vkCreateComputePipelines(device_, VK_NULL_HANDLE, 1, &info, nullptr, &p->pipeline);
      r != VK_SUCCESS)
    return call_failed("vkCreateComputePipelines", r);
  const VkDescriptorPoolSize size{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, options.bindings};
  auto pool = make<VkDescriptorPoolCreateInfo>(VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO);
  pool.maxSets = 1;
  pool.poolSizeCount = 1;
  pool.pPoolSizes = &size;
  if (const VkResult r = vk.vkCreateDescriptorPool(device_, &pool, nullptr, &p->pool); r != VK_SUCCESS)
    return call_failed("vkCreateDescriptorPool", r);
  auto set = make<VkDescriptorSetAllocateInfo>(VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO);
  set.descriptorPool = p->pool;
  set.descriptorSetCount = 1;
  set.pSetLayouts = &p->set_layout;
  if (const VkResult r = vk.vkAllocateDescriptorSets(device_, &set, &p->set); r != VK_SUCCESS)
    return call_failed("vkAllocateDescriptorSets", r);
  return p;
}

Expected<const Pipeline*> Context::pipeline(const std::string& key,
                                            const std::function<Expected<std::vector<std::uint32_t>>()>& spirv,
                                            const PipelineOptions& options) {
  if (lost_) return Error{*lost_, ErrorKind::lost};
  if (const auto it = pipelines_.find(key); it != pipelines_.end()) return it->second.get();
  auto module = spirv();
  if (!module) return module.error();
  auto p = make_pipeline(*module, options);
  if (!p) return p.error();
  return pipelines_.emplace(key, std::move(*p)).first->second.get();
}

std::optional<Error> Context::run(const Pipeline& pipeline, std::span<const Binding> bindings, std::size_t items,
                                  std::uint32_t per_group) {
  if (lost_) return Error{*lost_, ErrorKind::lost};
  if (bindings.size() != pipeline.bindings)
    return Error{"the run's buffers do not match the pipeline's bindings", ErrorKind::invalid};
  if (items == 0) return std::nullopt;
  const VkDeviceSize largest = std::min<VkDeviceSize>(facts_.properties.limits.maxStorageBufferRange, kMaxBufferBytes);
  std::size_t chunk = items;
  for (const Binding& b : bindings) chunk = std::min<std::size_t>(chunk, largest / b.item_bytes);
  if (chunk == 0)
    return Error{"one item needs more than the largest storage buffer of the device", ErrorKind::unsupported};
  std::vector<Buffer> buffers;
  buffers.reserve(bindings.size());
  for (const Binding& b : bindings) {
    auto made = buffer(chunk * b.item_bytes);
    if (!made) return made.error();
    buffers.push_back(std::move(*made));
  }
  for (std::size_t first = 0; first < items; first += chunk) {
    const std::size_t n = std::min(chunk, items - first);
    for (std::size_t i = 0; i < bindings.size(); ++i)
      if (!bindings[i].input.empty())
        std::memcpy(buffers[i].data(), bindings[i].input.data() + first * bindings[i].item_bytes,
                    n * bindings[i].item_bytes);
    if (auto e = submit(pipeline, buffers, n, per_group)) {
      if (lost_) std::move(buffers.begin(), buffers.end(), std::back_inserter(abandoned_));
      return e;
    }
    for (std::size_t i = 0; i < bindings.size(); ++i)
      if (!bindings[i].output.empty())
        std::memcpy(bindings[i].output.data() + first * bindings[i].item_bytes, buffers[i].data(),
                    n * bindings[i].item_bytes);
  }
  return std::nullopt;
}

std::optional<Error> Context::submit(const Pipeline& pipeline, std::span<const Buffer> buffers, std::size_t items,
                                     std::uint32_t per_group) {
  const Api& vk = instance_->api();
  std::vector<VkDescriptorBufferInfo> infos;
  std::vector<VkWriteDescriptorSet> writes;
  infos.reserve(buffers.size());
  for (const Buffer& b : buffers) infos.push_back({b.handle(), 0, VK_WHOLE_SIZE});
  for (std::uint32_t i = 0; i < infos.size(); ++i) {
    auto w = make<VkWriteDescriptorSet>(VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET);
    w.dstSet = pipeline.set;
    w.dstBinding = i;
    w.descriptorCount = 1;
    w.descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    w.pBufferInfo = &infos[i];
    writes.push_back(w);
  }
  vk.vkUpdateDescriptorSets(device_, std::uint32_t(writes.size()), writes.data(), 0, nullptr);

  if (const VkResult r = vk.vkResetCommandBuffer(commands_, 0); r != VK_SUCCESS)
    return failed("vkResetCommandBuffer", r);
  auto begin = make<VkCommandBufferBeginInfo>(VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO);
  begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  if (const VkResult r = vk.vkBeginCommandBuffer(commands_, &begin); r != VK_SUCCESS)
    return failed("vkBeginCommandBuffer", r);
  vk.vkCmdBindPipeline(commands_, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline.pipeline);
  vk.vkCmdBindDescriptorSets(commands_, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline.layout, 0, 1, &pipeline.set, 0,
                             nullptr);
  // Dispatches of at most maxComputeWorkGroupCount[0] workgroups; each writes its own items.
  const std::size_t per_dispatch = std::size_t(facts_.properties.limits.maxComputeWorkGroupCount[0]) * per_group;
  for (std::size_t base = 0; base < items; base += per_dispatch) {
    const std::uint32_t range[2] = {std::uint32_t(base), std::uint32_t(std::min(per_dispatch, items - base))};
    vk.vkCmdPushConstants(commands_, pipeline.layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof range, range);
    vk.vkCmdDispatch(commands_, (range[1] + per_group - 1) / per_group, 1, 1);
  }
  auto barrier = make<VkMemoryBarrier>(VK_STRUCTURE_TYPE_MEMORY_BARRIER);
  barrier.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT;
  barrier.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
  vk.vkCmdPipelineBarrier(commands_, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &barrier,
                          0, nullptr, 0, nullptr);
  if (const VkResult r = vk.vkEndCommandBuffer(commands_); r != VK_SUCCESS) return failed("vkEndCommandBuffer", r);

  if (const VkResult r = vk.vkResetFences(device_, 1, &fence_); r != VK_SUCCESS) return failed("vkResetFences", r);
  auto info = make<VkSubmitInfo>(VK_STRUCTURE_TYPE_SUBMIT_INFO);
  info.commandBufferCount = 1;
  info.pCommandBuffers = &commands_;
  const DriverCall vkQueueSubmit_call("vkQueueSubmit");
  if (const VkResult r = vk.vkQueueSubmit(queue_, 1, &info, fence_); r != VK_SUCCESS) return failed("vkQueueSubmit", r);
  const DriverCall vkWaitForFences_call("vkWaitForFences");
  if (const VkResult r = vk.vkWaitForFences(device_, 1, &fence_, VK_TRUE, kFenceTimeoutNs); r != VK_SUCCESS)
    return failed("vkWaitForFences", r);
  return std::nullopt;
}

}  // namespace gp::backends::vulkan
