#include "backends/vulkan/vulkan_backend.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <regex>

#include "backends/kernel_source.hpp"
#include "backends/utf8.hpp"
#include "backends/vulkan/coopmat_spirv.hpp"
#include "backends/vulkan/float_controls.hpp"
#include "backends/vulkan/glsl_compiler.hpp"
#include "backends/vulkan/pipeline_executables.hpp"
#include "backends/vulkan/vulkan_context.hpp"
#include "model/mma_instructions.hpp"

namespace gp::backends {

namespace vulkan {

// What a device and its float-control variants share: the facts, and the logical device, made on
// the first batch (enumerating creates none).
struct Gpu {
  std::shared_ptr<Instance> instance;
  DeviceFacts facts;
  std::unique_ptr<Context> context;
  std::optional<Error> context_error;
  bool keep_code = false;  // `run --code`: pipelines capture their executables where the device can

  Expected<Context*> get_context();
};

namespace {

constexpr int kLocalSize = 64;  // invocations per workgroup of the scalar kernels

struct ComponentType {
  VkComponentTypeKHR type;
  std::string_view name;
  const model::Format* format;  // none for the integer types: the model has no integer formats
};

constexpr ComponentType kComponentTypes[] = {
    {VK_COMPONENT_TYPE_FLOAT16_KHR, "float16", &model::binary16},
    {VK_COMPONENT_TYPE_FLOAT32_KHR, "float32", &model::binary32},
    {VK_COMPONENT_TYPE_FLOAT64_KHR, "float64", &model::binary64},
    {VK_COMPONENT_TYPE_BFLOAT16_KHR, "bfloat16", &model::bfloat16},
    {VK_COMPONENT_TYPE_FLOAT8_E4M3_EXT, "float8_e4m3", &model::e4m3},
    {VK_COMPONENT_TYPE_FLOAT8_E5M2_EXT, "float8_e5m2", &model::e5m2},
    {VK_COMPONENT_TYPE_SINT8_KHR, "sint8", nullptr},
    {VK_COMPONENT_TYPE_SINT16_KHR, "sint16", nullptr},
    {VK_COMPONENT_TYPE_SINT32_KHR, "sint32", nullptr},
    {VK_COMPONENT_TYPE_SINT64_KHR, "sint64", nullptr},
    {VK_COMPONENT_TYPE_UINT8_KHR, "uint8", nullptr},
    {VK_COMPONENT_TYPE_UINT16_KHR, "uint16", nullptr},
    {VK_COMPONENT_TYPE_UINT32_KHR, "uint32", nullptr},
    {VK_COMPONENT_TYPE_UINT64_KHR, "uint64", nullptr},
};

const ComponentType* component(VkComponentTypeKHR t) {
  for (const ComponentType& c : kComponentTypes)
    if (c.type == t) return &c;
  return nullptr;
}

std::string vendor_name(std::uint32_t id) {
  switch (id) {
    case 0x1002: return "AMD";
    case 0x1010: return "Imagination Technologies";
    case 0x106b: return "Apple";
    case 0x10de: return "NVIDIA";
    case 0x13b5: return "ARM";
    case 0x5143: return "Qualcomm";
    case 0x8086: return "Intel";
    case 0x10005: return "Mesa";
    default: return fmt::format("vendor 0x{:04x}", id);
  }
}

std::string version_name(std::uint32_t v) {
  return fmt::format("{}.{}.{}", VK_API_VERSION_MAJOR(v), VK_API_VERSION_MINOR(v), VK_API_VERSION_PATCH(v));
}

// The features the backend uses, of those the device offers; pipelineExecutableInfo only to keep
// the kernels' code, since capturing it may cost the driver time.
Features features_to_enable(const Features& offered, bool keep_code) {
  Features e;
  e.has_v12 = offered.has_v12;
  e.has_v13 = offered.has_v13;
  e.has_coopmat = offered.has_coopmat;
  e.has_bfloat16 = offered.has_bfloat16;
  e.has_float8 = offered.has_float8;
  e.has_subgroup_size_control = offered.has_subgroup_size_control;
  e.core.features.shaderFloat64 = offered.core.features.shaderFloat64;
  e.v11.storageBuffer16BitAccess = offered.v11.storageBuffer16BitAccess;
  e.v12.shaderFloat16 = offered.v12.shaderFloat16;
  e.v12.shaderInt8 = offered.v12.shaderInt8;
  e.v12.storageBuffer8BitAccess = offered.v12.storageBuffer8BitAccess;
  e.v12.vulkanMemoryModel = offered.v12.vulkanMemoryModel;
  e.v13.subgroupSizeControl = offered.v13.subgroupSizeControl;
  e.v13.computeFullSubgroups = offered.v13.computeFullSubgroups;
  e.subgroup_size_control.subgroupSizeControl = offered.subgroup_size_control.subgroupSizeControl;
  e.subgroup_size_control.computeFullSubgroups = offered.subgroup_size_control.computeFullSubgroups;
  e.coopmat.cooperativeMatrix = offered.coopmat.cooperativeMatrix;
  e.bfloat16.shaderBFloat16Type = offered.bfloat16.shaderBFloat16Type;
  e.bfloat16.shaderBFloat16CooperativeMatrix = offered.bfloat16.shaderBFloat16CooperativeMatrix;
  e.float8.shaderFloat8 = offered.float8.shaderFloat8;
  e.float8.shaderFloat8CooperativeMatrix = offered.float8.shaderFloat8CooperativeMatrix;
  e.has_executables = keep_code && offered.has_executables && offered.executables.pipelineExecutableInfo;
  e.executables.pipelineExecutableInfo = e.has_executables;
  return e;
}

std::vector<const model::Format*> scalar_formats(const DeviceFacts& f) {
  std::vector<const model::Format*> formats{&model::binary32};
  if (f.features.has_v12 && f.features.v12.shaderFloat16) formats.push_back(&model::binary16);
  if (f.features.core.features.shaderFloat64) formats.push_back(&model::binary64);
  return formats;
}

// Whether a variant requesting `mode` computes in `format`: an IEEE format whose width the device
// claims the mode for (the float-control properties name binary16, binary32 and binary64 only).
bool computes_with(const DeviceFacts& f, const FloatControlMode& mode, const model::Format& format) {
  const bool ieee = &format == &model::binary16 || &format == &model::binary32 || &format == &model::binary64;
  return ieee && f.float_controls && claims(*f.float_controls, mode, format.storage_bits);
}

// Why the device cannot run a configuration's types, or nothing.
std::optional<std::string> missing_for(const DeviceFacts& f, const model::Format& format) {
  const Features& s = f.features;
  if (&format == &model::binary16 && !(s.v12.shaderFloat16 && s.v11.storageBuffer16BitAccess))
    return "float16 needs shaderFloat16 and storageBuffer16BitAccess";
  if (&format == &model::binary64 && !s.core.features.shaderFloat64) return "float64 needs shaderFloat64";
  if (&format == &model::bfloat16 &&
      !(s.has_bfloat16 && s.bfloat16.shaderBFloat16CooperativeMatrix && s.v11.storageBuffer16BitAccess))
    return "bfloat16 needs VK_KHR_shader_bfloat16's shaderBFloat16CooperativeMatrix and storageBuffer16BitAccess";
  if ((&format == &model::e4m3 || &format == &model::e5m2) &&
      !(s.has_float8 && s.float8.shaderFloat8CooperativeMatrix && s.v12.storageBuffer8BitAccess))
    return "float8 needs VK_EXT_shader_float8's shaderFloat8CooperativeMatrix and storageBuffer8BitAccess";
  return std::nullopt;
}

// The configurations the MMA suite can run, and why the others are left out.
struct MmaOffer {
  std::vector<MmaConfig> configs;
  std::string unsupported;  // why there is none
  std::string description;  // what the device offers, for DeviceInfo
};

// The configurations of a device, or of its variant requesting `mode`.
MmaOffer mma_offer(const DeviceFacts& f, const FloatControlMode* mode) {
  const Features& s = f.features;
  const auto none = [](std::string why) { return MmaOffer{{}, why, "cooperative matrices: none: " + why}; };
  if (!s.has_coopmat) return none("the driver does not offer VK_KHR_cooperative_matrix");
  if (!s.has_v12 || !s.coopmat.cooperativeMatrix || !s.v12.vulkanMemoryModel)
    return none("the backend needs Vulkan 1.2 with the cooperativeMatrix and vulkanMemoryModel features");
  if (!(f.coopmat_stages & VK_SHADER_STAGE_COMPUTE_BIT)) return none("not offered in compute shaders");
  MmaOffer offer;
  std::vector<std::string> left_out;
  for (const VkCooperativeMatrixPropertiesKHR& p : f.coopmat) {
    const VkComponentTypeKHR raw[4] = {p.AType, p.BType, p.CType, p.ResultType};
    const ComponentType* types[4];
    std::string name = fmt::format("{}x{}x{}:", p.MSize, p.NSize, p.KSize);
    for (int i = 0; i < 4; ++i) {
      types[i] = component(raw[i]);
      name += (i ? "," : "") + (types[i] ? std::string(types[i]->name) : fmt::format("type {}", int(raw[i])));
    }
    if (p.scope != VK_SCOPE_SUBGROUP_KHR) name += fmt::format(", scope {}", int(p.scope));
    if (p.saturatingAccumulation) name += ", saturating";
    std::optional<std::string> why;
    if (p.scope != VK_SCOPE_SUBGROUP_KHR) why = "not subgroup scope";
    // The SaturatingAccumulation operand is for integer results, which the model does not have.
    if (!why && p.saturatingAccumulation) why = "saturating accumulation: the model has no saturating MMA";
    for (const ComponentType* t : types)
      if (!why && (!t || !t->format)) why = "integer or unknown types: the model has no integer formats";
    for (const ComponentType* t : types)
      if (!why) why = missing_for(f, *t->format);
    // lavapipe (Mesa 26.1) lowers a matrix to subgroupSize rows of subgroupSize components each
    // (lvp_nir_lower_cooperative_matrix.c: CMAT_LEN = lp_native_vector_width / 32), right for
    // subgroupSize x subgroupSize tiles only, yet lists 8x8x8 at every vector width: with
    // LP_NATIVE_VECTOR_WIDTH=512 (subgroups of 16) its compiler reads components an 8x8 matrix does
    // not have and crashes in vkCreateComputePipelines, whatever the (valid) module asks.
    if (const std::uint32_t n = f.subgroup_size;
        !why && f.driver.driverID == VK_DRIVER_ID_MESA_LLVMPIPE && !(p.MSize == n && p.NSize == n && p.KSize == n))
      why = fmt::format(
          "lavapipe computes only {0}x{0}x{0} tiles with subgroups of {0} (its compiler crashes on others)", n);
    for (const ComponentType* t : types)
      if (!why && mode && !computes_with(f, *mode, *t->format))
        why = fmt::format("{} is not claimed for {}", mode->name, t->name);
    if (why) {
      left_out.push_back(name + " (" + *why + ")");
      continue;
    }
    MmaConfig c;
    c.m = int(p.MSize);
    c.n = int(p.NSize);
    c.k = int(p.KSize);
    c.a = types[0]->format;
    c.b = types[1]->format;
    c.c = types[2]->format;
    c.d = types[3]->format;
    // Names are the configurations' keys (results, --config): a repeated entry is run once.
    if (std::any_of(offer.configs.begin(), offer.configs.end(),
                    [&](const MmaConfig& o) { return o.name() == c.name(); })) {
      left_out.push_back(name + " (listed twice)");
      continue;
    }
    c.instruction = emulated_instruction(f.properties.deviceName, f.properties.vendorID, c);
    offer.configs.push_back(c);
  }
  offer.description =
      fmt::format("cooperative matrices: {} of {} configurations audited", offer.configs.size(), f.coopmat.size());
  if (std::any_of(offer.configs.begin(), offer.configs.end(),
                  [](const MmaConfig& c) { return !c.instruction.empty(); }))
    offer.description +=
        "; fp8 configurations emulated by the driver (NVIDIA: conversions to binary16 and the binary16 "
        "tensor core), each named after the row that models it";
  if (!left_out.empty()) offer.description += fmt::format("; left out: {}", fmt::join(left_out, "; "));
  if (offer.configs.empty()) offer.unsupported = offer.description;
  return offer;
}

}  // namespace

std::string emulated_instruction(std::string_view device_name, std::uint32_t vendor_id, const MmaConfig& config) {
  static const std::regex hopper(R"(\bG?H(100|200|800|20)\b)");
  const auto fp8 = [](const model::Format* x) { return x == &model::e4m3 || x == &model::e5m2; };
  if (vendor_id != 0x10de || !fp8(config.a) || !fp8(config.b) || !std::regex_search(std::string(device_name), hopper))
    return "";
  for (const model::MmaInstruction& row : model::all_mma_instructions())
    if (row.emulated && row.arch == "hopper" && row.k == config.k && row.config.a == config.a &&
        row.config.b == config.b && row.config.c == config.c && row.config.d == config.d)
      return row.id();
  return "";
}

Expected<Context*> Gpu::get_context() {
  if (context) return context.get();
  if (context_error) return *context_error;
  std::vector<const char*> extensions;
  if (facts.features.has_coopmat) extensions.push_back(VK_KHR_COOPERATIVE_MATRIX_EXTENSION_NAME);
  if (facts.features.has_bfloat16) extensions.push_back(VK_KHR_SHADER_BFLOAT16_EXTENSION_NAME);
  if (facts.features.has_float8) extensions.push_back(VK_EXT_SHADER_FLOAT8_EXTENSION_NAME);
  if (facts.features.has_subgroup_size_control) extensions.push_back(VK_EXT_SUBGROUP_SIZE_CONTROL_EXTENSION_NAME);
  const Features enable = features_to_enable(facts.features, keep_code);
  if (enable.has_executables) extensions.push_back(VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME);
  auto made = Context::create(instance, facts, enable, extensions);
  if (!made) {
    context_error = made.error();
    return made.error();
  }
  context = std::move(*made);
  return context.get();
}

}  // namespace vulkan

using namespace vulkan;

VulkanDevice::VulkanDevice(std::shared_ptr<Gpu> gpu, std::size_t index, const FloatControlMode* mode,
                           const std::filesystem::path& code)
    : gpu_(std::move(gpu)), mode_(mode) {
  const DeviceFacts& f = gpu_->facts;
  info_.id = fmt::format("vulkan:{}{}", index, mode ? "+" + std::string(mode->name) : "");
  code_ = KernelCode(code, info_.id);
  if (code_.on()) info_.code = code_.folder().string();
  info_.backend = "vulkan";
  info_.name = valid_utf8(f.properties.deviceName);
  info_.vendor = vendor_name(f.properties.vendorID);
  info_.driver = f.features.has_v12 ? valid_utf8(fmt::format("{} {}", f.driver.driverName, f.driver.driverInfo))
                                    : fmt::format("driver version 0x{:x}", f.properties.driverVersion);
  info_.api = "Vulkan " + version_name(f.properties.apiVersion);
  info_.identity = {{"device_uuid", uuid_text(std::span<const unsigned char, 16>(f.id.deviceUUID))},
                    {"driver_uuid", uuid_text(std::span<const unsigned char, 16>(f.id.driverUUID))},
                    {"vendor_id", fmt::format("0x{:04x}", f.properties.vendorID)},
                    {"device_id", fmt::format("0x{:04x}", f.properties.deviceID)}};
  if (f.pci)
    info_.identity["pci_bus"] =
        fmt::format("{:04x}:{:02x}:{:02x}.{:x}", f.pci->pciDomain, f.pci->pciBus, f.pci->pciDevice, f.pci->pciFunction);
  caps_.formats = scalar_formats(f);
  if (f.float_controls) caps_.float_controls = float_control_claims(*f.float_controls);
  // A variant computes only in the formats whose width the mode is claimed for.
  if (mode_) std::erase_if(caps_.formats, [&](const model::Format* x) { return !computes_with(f, *mode_, *x); });
  MmaOffer offer = mma_offer(f, mode_);
  caps_.mma = std::move(offer.configs);
  caps_.mma_unsupported = std::move(offer.unsupported);
  if (!mode_) {
    info_.description = std::move(offer.description);
    if (f.float_controls) info_.description = describe_claims(*f.float_controls) + "; " + info_.description;
    info_.description = fmt::format("Vulkan loader {}; {}", gpu_->instance->api().library, info_.description);
    return;
  }
  std::string formats;
  for (const model::Format* x : caps_.formats) formats += (formats.empty() ? "" : ", ") + std::string(x->name);
  caps_.float_controls["requested"] = std::string(mode_->name);
  info_.description =
      fmt::format("every kernel requests the float-control mode {} (VK_KHR_shader_float_controls) for {}; {}",
                  mode_->name, formats, offer.description);
}

// The module requesting the variant's mode for the widths of `formats`; without a mode, as it is.
Expected<std::vector<std::uint32_t>> VulkanDevice::with_mode(Expected<std::vector<std::uint32_t>> spirv,
                                                             const std::vector<const model::Format*>& formats) const {
  if (!spirv || !mode_) return spirv;
  std::vector<int> widths;
  for (const model::Format* f : formats)
    if (std::find(widths.begin(), widths.end(), f->storage_bits) == widths.end()) widths.push_back(f->storage_bits);
  const auto offered = mode_widths(*gpu_->facts.float_controls, *mode_, widths);
  if (!offered) return offered.error();
  return request_mode(*spirv, *mode_, *offered);
}

// The pipeline cache's key of a kernel: the variant's mode, then what makes the module. A pipeline
// made here keeps its module, and what the driver made of it where the context captures that.
Expected<const Pipeline*> VulkanDevice::pipeline(Context& context, const std::string& kernel, std::string_view label,
                                                 const std::function<Expected<std::vector<std::uint32_t>>()>& spirv,
                                                 const PipelineOptions& options) {
  bool made = false;
  auto p = context.pipeline(
      std::string(mode_ ? mode_->name : "") + "\n" + kernel,
      [&] {
        auto module = spirv();
        made = true;
        if (module) code_.keep(label, ".spv", {reinterpret_cast<const char*>(module->data()), module->size() * 4});
        return module;
      },
      options);
  if (!p || !made || !code_.on() || !context.captures_executables()) return p;
  const auto executables = pipeline_executables(**p, file_stem(label));
  if (!executables) {
    fmt::print(stderr, "gpuparanoia: warning: {}: what the driver made of '{}' is not kept: {}\n", info_.id, label,
               executables.error().message);
    return p;
  }
  code_.keep(label, ".executables.txt", executables->text);
  for (const auto& [suffix, bytes] : executables->binaries) code_.keep(label, suffix, bytes);
  return p;
}

Expected<std::vector<std::uint64_t>> VulkanDevice::scalar(const ScalarBatch& batch) {
  const Expr& e = *batch.expr;
  const auto n = tuples(batch, info_, caps_);
  if (!n) return n.error();
  auto source = kernel_source(e, Language::glsl_vulkan, kLocalSize);
  if (!source) return source.error();
  auto context = gpu_->get_context();
  if (!context) return context.error();
  auto pipeline =
      this->pipeline(**context, *source, e.to_string(),
                     [&] { return with_mode(compile_compute_shader(*source), e.formats()); }, {.bindings = 2});
  if (!pipeline) return pipeline.error();

  const std::vector<std::uint32_t> operands = to_words(*e.input_format, batch.operands);
  std::vector<std::uint32_t> results(*n * std::size_t(words_per_value(*e.output_format)));
  const Binding bindings[2] = {{std::size_t(e.inputs * words_per_value(*e.input_format)) * sizeof(std::uint32_t),
                                std::as_bytes(std::span(operands)),
                                {}},
                               {std::size_t(words_per_value(*e.output_format)) * sizeof(std::uint32_t),
                                {},
                                std::as_writable_bytes(std::span(results))}};
  if (auto failed = (*context)->run(**pipeline, bindings, *n, kLocalSize)) return *failed;
  return from_words(*e.output_format, results);
}

Expected<std::vector<std::uint64_t>> VulkanDevice::mma(const MmaBatch& batch) {
  const MmaConfig& cfg = *batch.config;
  const std::string name = cfg.name();
  if (std::none_of(caps_.mma.begin(), caps_.mma.end(), [&](const MmaConfig& c) { return c.name() == name; }))
    return Error{fmt::format("{} has no MMA configuration {}", info_.id, name), ErrorKind::unsupported};
  const auto n = tiles(batch);
  if (!n) return n.error();
  const std::size_t sa = std::size_t(cfg.m) * cfg.k, sb = std::size_t(cfg.k) * cfg.n, sc = std::size_t(cfg.m) * cfg.n;
  auto context = gpu_->get_context();
  if (!context) return context.error();
  // One tile per workgroup of one full subgroup, the size the device lists its configurations for.
  const std::uint32_t subgroup = gpu_->facts.subgroup_size;
  auto pipeline = this->pipeline(
      **context, "mma\n" + name, name,
      [&] {
        return with_mode(coopmat_module(cfg, subgroup), {cfg.a, cfg.b, cfg.c, cfg.d});
      },
      one_subgroup_per_workgroup(gpu_->facts, 4));
  if (!pipeline) return pipeline.error();

  const auto bytes = [](const model::Format* x) { return std::size_t(x->storage_bits) / 8; };
  const std::vector<std::byte> a = to_bytes(*cfg.a, batch.a), b = to_bytes(*cfg.b, batch.b),
                               c = to_bytes(*cfg.c, batch.c);
  std::vector<std::byte> d(*n * sc * bytes(cfg.d));
  const Binding bindings[4] = {
      {sa * bytes(cfg.a), a, {}}, {sb * bytes(cfg.b), b, {}}, {sc * bytes(cfg.c), c, {}}, {sc * bytes(cfg.d), {}, d}};
  if (auto failed = (*context)->run(**pipeline, bindings, *n, 1)) return *failed;
  return from_bytes(*cfg.d, d);
}

Expected<std::vector<std::unique_ptr<Device>>> VulkanBackend::enumerate() {
  auto instance = Instance::create(options_.debug_messages);
  if (!instance) return instance.error();
  auto physical = (*instance)->physical_devices();
  if (!physical) return physical.error();
  std::vector<std::unique_ptr<Device>> devices;
  for (std::size_t i = 0; i < physical->size(); ++i) {
    auto facts = query_device(**instance, (*physical)[i]);
    if (!facts) return facts.error().retold(fmt::format("vulkan:{}: {}", i, facts.error().message));
    VkPhysicalDeviceLimits& limits = facts->properties.limits;
    if (options_.max_buffer_bytes)
      limits.maxStorageBufferRange =
          std::uint32_t(std::min<std::uint64_t>(limits.maxStorageBufferRange, options_.max_buffer_bytes));
    if (options_.max_workgroups)
      limits.maxComputeWorkGroupCount[0] = std::min(limits.maxComputeWorkGroupCount[0], options_.max_workgroups);
    auto gpu = std::make_shared<Gpu>(Gpu{*instance, std::move(*facts), nullptr, std::nullopt, !options_.code.empty()});
    devices.push_back(std::make_unique<VulkanDevice>(gpu, i, nullptr, options_.code));
    if (!gpu->facts.float_controls) continue;
    for (const FloatControlMode& mode : float_control_modes()) {
      auto variant = std::make_unique<VulkanDevice>(gpu, i, &mode, options_.code);
      if (!variant->caps().formats.empty()) devices.push_back(std::move(variant));
    }
  }
  return devices;
}

}  // namespace gp::backends
