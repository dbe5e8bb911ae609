// The Vulkan objects behind the backend: the instance, what a physical device offers (queried
// once), and a logical device that runs one compute pipeline over host-visible storage buffers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "backends/expected.hpp"
#include "backends/vulkan/vulkan_api.hpp"
#include "backends/vulkan/vk_cooperative_matrix.hpp"

namespace gp::backends::vulkan {

// "VK_ERROR_DEVICE_LOST", for messages.
std::string result_name(VkResult r);
// "<call> failed: VK_ERROR_DEVICE_LOST".
Error call_failed(const char* call, VkResult r);

// The messages of the loader and the layers (VK_EXT_debug_utils), `error` for those of error severity.
using DebugMessages = std::function<void(bool error, std::string_view message)>;

class Instance {
 public:
  // The loader's instance, or why there is none (no loader, no driver, a loader older than Vulkan 1.1).
  // With `messages`, VK_EXT_debug_utils passes it every message, from vkCreateInstance to
  // vkDestroyInstance: the tests run the backend under the validation layers.
  static Expected<std::shared_ptr<Instance>> create(DebugMessages messages = {});
  Instance(const Instance&) = delete;
  Instance& operator=(const Instance&) = delete;
  ~Instance();
  VkInstance handle() const { return instance_; }
  // The instance's functions; tests replace some to inject a driver's faults.
  const Api& api() const { return api_; }
  Api& api() { return api_; }
  std::uint32_t api_version() const { return version_; }
  Expected<std::vector<VkPhysicalDevice>> physical_devices() const;

 private:
  Instance(VkInstance instance, std::uint32_t version, Api api)
      : instance_(instance), version_(version), api_(std::move(api)) {}
  VkInstance instance_;
  std::uint32_t version_;
  Api api_;
  std::unique_ptr<DebugMessages> messages_;  // where the messenger's user data points
  VkDebugUtilsMessengerEXT messenger_ = VK_NULL_HANDLE;
};

// The feature structs of a device, queried or to enable. link() chains them (again after a copy),
// an extension's struct only where the extension is offered: drivers need not know its type.
struct Features {
  VkPhysicalDeviceFeatures2 core{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, nullptr, {}};
  VkPhysicalDeviceVulkan11Features v11{};
  VkPhysicalDeviceVulkan12Features v12{};
  VkPhysicalDeviceVulkan13Features v13{};
  VkPhysicalDeviceCooperativeMatrixFeaturesKHR coopmat{};
  VkPhysicalDeviceShaderBfloat16FeaturesKHR bfloat16{};
  VkPhysicalDeviceShaderFloat8FeaturesEXT float8{};
  VkPhysicalDeviceSubgroupSizeControlFeatures subgroup_size_control{};  // before Vulkan 1.3: the extension's
  VkPhysicalDevicePipelineExecutablePropertiesFeaturesKHR executables{};
  // Which structs the device knows: Vulkan 1.2 and 1.3 core, and the extensions.
  bool has_v12 = false, has_v13 = false, has_coopmat = false, has_bfloat16 = false, has_float8 = false,
       has_subgroup_size_control = false, has_executables = false;
  VkPhysicalDeviceFeatures2* link();
};

// What a physical device offers, queried once when the backend enumerates.
struct DeviceFacts {
  VkPhysicalDevice physical = VK_NULL_HANDLE;
  std::uint32_t api_version = 0;  // the device's, capped by the instance's
  VkPhysicalDeviceProperties properties{};
  VkPhysicalDeviceDriverProperties driver{};                              // Vulkan 1.2
  VkPhysicalDeviceIDProperties id{};                                      // Vulkan 1.1: the UUIDs
  std::optional<VkPhysicalDevicePCIBusInfoPropertiesEXT> pci;             // VK_EXT_pci_bus_info
  std::optional<VkPhysicalDeviceFloatControlsProperties> float_controls;  // Vulkan 1.2
  std::uint32_t subgroup_size = 0;
  VkPhysicalDeviceSubgroupSizeControlProperties subgroup_size_control{};  // Vulkan 1.3 or VK_EXT_subgroup_size_control
  VkShaderStageFlags coopmat_stages = 0;
  std::vector<VkCooperativeMatrixPropertiesKHR> coopmat;
  Features features;
  std::vector<std::string> extensions;
  std::uint32_t queue_family = 0;  // one with compute

  bool has_extension(std::string_view name) const;
};

// The facts of a device, or why it cannot run compute shaders.
Expected<DeviceFacts> query_device(const Instance& instance, VkPhysicalDevice physical);

// A host-visible, coherent storage buffer, mapped for its lifetime.
class Buffer {
 public:
  Buffer(const Api& api, VkDevice device) : api_(&api), device_(device) {}
  Buffer(Buffer&& o) noexcept;
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  Buffer& operator=(Buffer&&) = delete;
  ~Buffer();
  VkBuffer handle() const { return buffer_; }
  std::byte* data() const { return data_; }
  // Gives up the buffer without destroying it: for a lost or hung device, which may still use it.
  void abandon() { buffer_ = VK_NULL_HANDLE, memory_ = VK_NULL_HANDLE; }

 private:
  friend class Context;
  const Api* api_;
  VkDevice device_;
  VkBuffer buffer_ = VK_NULL_HANDLE;
  VkDeviceMemory memory_ = VK_NULL_HANDLE;
  std::byte* data_ = nullptr;
};

// A compute pipeline over storage buffers at set 0, bindings 0..n-1, with 8 bytes of push
// constants {base, count}, and the one descriptor set it is run with.
struct PipelineOptions {
  std::uint32_t bindings = 2;
  std::uint32_t required_subgroup_size = 0;  // 0: the driver's choice
  bool full_subgroups = false;               // every subgroup of a workgroup complete
};

// A pipeline whose workgroup is one subgroup of facts.subgroup_size invocations (the module's
// LocalSize): that size required wherever the device lets a compute pipeline require one
// (subgroupSizeControl with compute among requiredSubgroupSizeStages, Vulkan 1.3 or
// VK_EXT_subgroup_size_control), even where its minimum and maximum agree, so that no driver picks
// another; full subgroups wherever computeFullSubgroups allows them for that LocalSize.
PipelineOptions one_subgroup_per_workgroup(const DeviceFacts& facts, std::uint32_t bindings);

struct Pipeline {
  Pipeline(const Api& a, VkDevice d) : api(&a), device(d) {}
  Pipeline(const Pipeline&) = delete;
  Pipeline& operator=(const Pipeline&) = delete;
  ~Pipeline();
  const Api* api;
  VkDevice device;
  VkShaderModule module = VK_NULL_HANDLE;
  VkDescriptorSetLayout set_layout = VK_NULL_HANDLE;
  VkPipelineLayout layout = VK_NULL_HANDLE;
  VkPipeline pipeline = VK_NULL_HANDLE;
  VkDescriptorPool pool = VK_NULL_HANDLE;
  VkDescriptorSet set = VK_NULL_HANDLE;
  std::uint32_t bindings = 0;
};

// One buffer of a run: `item_bytes` per item, uploaded from `input` or read back into `output`
// (each items * item_bytes long; the other one empty).
struct Binding {
  std::size_t item_bytes = 0;
  std::span<const std::byte> input;
  std::span<std::byte> output;
};

class Context {
 public:
  // A logical device with `enable` features and `extensions`, and its compute queue. Where `enable`
  // has pipelineExecutableInfo (VK_KHR_pipeline_executable_properties, in `extensions` too), every
  // pipeline captures its statistics and internal representations (pipeline_executables.hpp).
  static Expected<std::unique_ptr<Context>> create(std::shared_ptr<Instance> instance, const DeviceFacts& facts,
                                                   Features enable, const std::vector<const char*>& extensions);
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;
  ~Context();
  // Why the device refuses work, when it is lost.
  const std::optional<std::string>& lost() const { return lost_; }
  // Whether its pipelines capture their executables' statistics and internal representations.
  bool captures_executables() const { return captures_executables_; }

  // The pipeline cached under `key`, made from the module `spirv()` returns on first use.
  Expected<const Pipeline*> pipeline(const std::string& key,
                                     const std::function<Expected<std::vector<std::uint32_t>>()>& spirv,
                                     const PipelineOptions& options);

  // Runs `items` items, `per_group` per workgroup: binding i of the pipeline is bindings[i]. The
  // items go in chunks whose buffers fit maxStorageBufferRange, each chunk in dispatches within
  // maxComputeWorkGroupCount[0] (push constants: the dispatch's first item in the chunk, and its
  // item count). A driver error is an Error. A lost device (VK_ERROR_DEVICE_LOST) or a timeout (a
  // hung dispatch) marks the context lost: what the device may still use is never freed, and every
  // later call returns the Error at once, without touching the device.
  //
  // A lost context, when destroyed, destroys none of its Vulkan objects nor its instance: they are
  // kept, unreachable to the program but reachable to leak checkers, for the life of the process.
  [[nodiscard]] std::optional<Error> run(const Pipeline& pipeline, std::span<const Binding> bindings, std::size_t items,
                                         std::uint32_t per_group);

 private:
  Context(std::shared_ptr<Instance> instance, DeviceFacts facts)
      : instance_(std::move(instance)), facts_(std::move(facts)) {}
  Expected<Buffer> buffer(VkDeviceSize bytes);
  Expected<std::unique_ptr<Pipeline>> make_pipeline(std::span<const std::uint32_t> spirv,
                                                    const PipelineOptions& options);
  [[nodiscard]] std::optional<Error> submit(const Pipeline& pipeline, std::span<const Buffer> buffers,
                                            std::size_t items, std::uint32_t per_group);
  [[nodiscard]] std::optional<Error> failed(const char* call, VkResult r);

  std::shared_ptr<Instance> instance_;
  DeviceFacts facts_;
  VkDevice device_ = VK_NULL_HANDLE;
  VkQueue queue_ = VK_NULL_HANDLE;
  VkCommandPool command_pool_ = VK_NULL_HANDLE;
  VkCommandBuffer commands_ = VK_NULL_HANDLE;
  VkFence fence_ = VK_NULL_HANDLE;
  bool captures_executables_ = false;
  std::map<std::string, std::unique_ptr<Pipeline>> pipelines_;
  std::vector<Buffer> abandoned_;  // the buffers of the run the device was lost in
  // Why the device refuses work: "device lost: vkWaitForFences reported VK_ERROR_DEVICE_LOST".
  std::optional<std::string> lost_;
};

}  // namespace gp::backends::vulkan
