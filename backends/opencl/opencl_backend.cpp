#include "backends/opencl/opencl_backend.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <iterator>
#include <mutex>
#include <sstream>
#include <utility>

#include "backends/driver_call.hpp"
#include "backends/kernel_source.hpp"
#include "backends/opencl/opencl_api.hpp"
#include "backends/utf8.hpp"

namespace gp::backends {

std::string opencl_error_name(cl_int code) {
#define GP_CL_CODE(name) \
  case name: return #name;
  switch (code) {
    GP_CL_CODE(CL_SUCCESS)
    GP_CL_CODE(CL_DEVICE_NOT_FOUND)
    GP_CL_CODE(CL_DEVICE_NOT_AVAILABLE)
    GP_CL_CODE(CL_COMPILER_NOT_AVAILABLE)
    GP_CL_CODE(CL_MEM_OBJECT_ALLOCATION_FAILURE)
    GP_CL_CODE(CL_OUT_OF_RESOURCES)
    GP_CL_CODE(CL_OUT_OF_HOST_MEMORY)
    GP_CL_CODE(CL_PROFILING_INFO_NOT_AVAILABLE)
    GP_CL_CODE(CL_MEM_COPY_OVERLAP)
    GP_CL_CODE(CL_IMAGE_FORMAT_MISMATCH)
    GP_CL_CODE(CL_IMAGE_FORMAT_NOT_SUPPORTED)
    GP_CL_CODE(CL_BUILD_PROGRAM_FAILURE)
    GP_CL_CODE(CL_MAP_FAILURE)
    GP_CL_CODE(CL_MISALIGNED_SUB_BUFFER_OFFSET)
    GP_CL_CODE(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST)
    GP_CL_CODE(CL_COMPILE_PROGRAM_FAILURE)
    GP_CL_CODE(CL_LINKER_NOT_AVAILABLE)
    GP_CL_CODE(CL_LINK_PROGRAM_FAILURE)
    GP_CL_CODE(CL_DEVICE_PARTITION_FAILED)
    GP_CL_CODE(CL_KERNEL_ARG_INFO_NOT_AVAILABLE)
    GP_CL_CODE(CL_INVALID_VALUE)
    GP_CL_CODE(CL_INVALID_DEVICE_TYPE)
    GP_CL_CODE(CL_INVALID_PLATFORM)
    GP_CL_CODE(CL_INVALID_DEVICE)
    GP_CL_CODE(CL_INVALID_CONTEXT)
    GP_CL_CODE(CL_INVALID_QUEUE_PROPERTIES)
    GP_CL_CODE(CL_INVALID_COMMAND_QUEUE)
    GP_CL_CODE(CL_INVALID_HOST_PTR)
    GP_CL_CODE(CL_INVALID_MEM_OBJECT)
    GP_CL_CODE(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR)
    GP_CL_CODE(CL_INVALID_IMAGE_SIZE)
    GP_CL_CODE(CL_INVALID_SAMPLER)
    GP_CL_CODE(CL_INVALID_BINARY)
    GP_CL_CODE(CL_INVALID_BUILD_OPTIONS)
    GP_CL_CODE(CL_INVALID_PROGRAM)
    GP_CL_CODE(CL_INVALID_PROGRAM_EXECUTABLE)
    GP_CL_CODE(CL_INVALID_KERNEL_NAME)
    GP_CL_CODE(CL_INVALID_KERNEL_DEFINITION)
    GP_CL_CODE(CL_INVALID_KERNEL)
    GP_CL_CODE(CL_INVALID_ARG_INDEX)
    GP_CL_CODE(CL_INVALID_ARG_VALUE)
    GP_CL_CODE(CL_INVALID_ARG_SIZE)
    GP_CL_CODE(CL_INVALID_KERNEL_ARGS)
    GP_CL_CODE(CL_INVALID_WORK_DIMENSION)
    GP_CL_CODE(CL_INVALID_WORK_GROUP_SIZE)
    GP_CL_CODE(CL_INVALID_WORK_ITEM_SIZE)
    GP_CL_CODE(CL_INVALID_GLOBAL_OFFSET)
    GP_CL_CODE(CL_INVALID_EVENT_WAIT_LIST)
    GP_CL_CODE(CL_INVALID_EVENT)
    GP_CL_CODE(CL_INVALID_OPERATION)
    GP_CL_CODE(CL_INVALID_GL_OBJECT)
    GP_CL_CODE(CL_INVALID_BUFFER_SIZE)
    GP_CL_CODE(CL_INVALID_MIP_LEVEL)
    GP_CL_CODE(CL_INVALID_GLOBAL_WORK_SIZE)
    GP_CL_CODE(CL_INVALID_PROPERTY)
    GP_CL_CODE(CL_INVALID_IMAGE_DESCRIPTOR)
    GP_CL_CODE(CL_INVALID_COMPILER_OPTIONS)
    GP_CL_CODE(CL_INVALID_LINKER_OPTIONS)
    GP_CL_CODE(CL_INVALID_DEVICE_PARTITION_COUNT)
    GP_CL_CODE(CL_INVALID_PIPE_SIZE)
    GP_CL_CODE(CL_INVALID_DEVICE_QUEUE)
    GP_CL_CODE(CL_INVALID_SPEC_ID)
    GP_CL_CODE(CL_MAX_SIZE_RESTRICTION_EXCEEDED)
    GP_CL_CODE(CL_PLATFORM_NOT_FOUND_KHR)
    GP_CL_CODE(CL_CONTEXT_TERMINATED_KHR)
    default: return fmt::format("error {}", code);
  }
#undef GP_CL_CODE
}

namespace {

const OpenClVariant kVariants[] = {
    {"", ""},
    {"+denorms-are-zero", "-cl-denorms-are-zero"},
    {"+fast-relaxed-math", "-cl-fast-relaxed-math"},
};
// Only for devices that claim CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT: the option is invalid elsewhere.
// It concerns binary32 alone (binary64's x/y and sqrt are always correctly rounded).
const OpenClVariant kCorrectlyRoundedDivideSqrt = {"+correctly-rounded-divide-sqrt",
                                                   "-cl-fp32-correctly-rounded-divide-sqrt"};

// Work-group size of the kernels, where the device allows it: a small multiple of every SIMD width.
constexpr std::size_t kLocalSize = 64;
// Build logs are long on some drivers (every warning of every line): the head says what failed.
constexpr std::size_t kLogLimit = 4000;

Error cl_error(const cl::Error& e) { return Error{fmt::format("{}: {}", e.what(), opencl_error_name(e.err()))}; }

// A driver's string, without the padding and NULs some drivers leave, as valid UTF-8.
std::string trimmed(std::string s) {
  s = valid_utf8(s);
  const auto space = [](unsigned char c) { return std::isspace(c) != 0 || c == '\0'; };
  while (!s.empty() && space(static_cast<unsigned char>(s.back()))) s.pop_back();
  const auto first = std::find_if_not(s.begin(), s.end(), [&](char c) { return space(static_cast<unsigned char>(c)); });
  return std::string(first, s.end());
}

bool has_extension(const std::string& extensions, std::string_view name);

// The device's identity: its vendor id, and its UUIDs and PCI address where the driver has the
// extensions (cl_khr_device_uuid, cl_khr_pci_bus_info).
std::map<std::string, std::string> identity(const cl::Device& d, const std::string& extensions) {
  std::map<std::string, std::string> id = {{"vendor_id", fmt::format("0x{:04x}", d.getInfo<CL_DEVICE_VENDOR_ID>())}};
  if (has_extension(extensions, "cl_khr_device_uuid")) {
    unsigned char uuid[CL_UUID_SIZE_KHR] = {};
    if (clGetDeviceInfo(d(), CL_DEVICE_UUID_KHR, sizeof uuid, uuid, nullptr) == CL_SUCCESS)
      id["device_uuid"] = uuid_text(uuid);
    if (clGetDeviceInfo(d(), CL_DRIVER_UUID_KHR, sizeof uuid, uuid, nullptr) == CL_SUCCESS)
      id["driver_uuid"] = uuid_text(uuid);
  }
  cl_device_pci_bus_info_khr pci{};
  if (has_extension(extensions, "cl_khr_pci_bus_info") &&
      clGetDeviceInfo(d(), CL_DEVICE_PCI_BUS_INFO_KHR, sizeof pci, &pci, nullptr) == CL_SUCCESS)
    id["pci_bus"] =
        fmt::format("{:04x}:{:02x}:{:02x}.{:x}", pci.pci_domain, pci.pci_bus, pci.pci_device, pci.pci_function);
  return id;
}

bool has_extension(const std::string& extensions, std::string_view name) {
  std::istringstream words(extensions);
  for (std::string w; words >> w;)
    if (w == name) return true;
  return false;
}

// The floating-point configuration flags the device claims for a format, as float_controls entries.
void add_fp_config(Capabilities& caps, std::string_view format, cl_device_fp_config config) {
  static constexpr std::pair<cl_device_fp_config, const char*> kFlags[] = {
      {CL_FP_DENORM, "denorm"},
      {CL_FP_INF_NAN, "inf_nan"},
      {CL_FP_ROUND_TO_NEAREST, "round_to_nearest"},
      {CL_FP_ROUND_TO_ZERO, "round_to_zero"},
      {CL_FP_ROUND_TO_INF, "round_to_inf"},
      {CL_FP_FMA, "fma"},
      {CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT, "correctly_rounded_divide_sqrt"},
      {CL_FP_SOFT_FLOAT, "soft_float"},
  };
  for (const auto& [bit, name] : kFlags)
    caps.float_controls[fmt::format("{}.{}", format, name)] = (config & bit) != 0 ? "yes" : "no";
}

// CL_DEVICE_DOUBLE_FP_CONFIG is core from OpenCL 1.2 (0 without binary64); an OpenCL 1.1 device
// without cl_khr_fp64 may reject the query, which means the same.
cl_device_fp_config double_fp_config(const cl::Device& d) {
  try {
    return d.getInfo<CL_DEVICE_DOUBLE_FP_CONFIG>();
  } catch (const cl::Error&) {
    return 0;
  }
}

std::string trimmed_log(const std::string& log) {
  const std::string t = trimmed(log);
  if (t.size() <= kLogLimit) return t;
  std::size_t cut = kLogLimit;  // not inside a UTF-8 sequence
  while (cut > 0 && (static_cast<unsigned char>(t[cut]) & 0xc0) == 0x80) --cut;
  return t.substr(0, cut) + fmt::format("\n[... {} more bytes of build log]", t.size() - cut);
}

}  // namespace

std::shared_ptr<const OpenClContext> OpenClContext::create(const cl::Device& device, std::uint64_t cap) {
  auto c = std::make_shared<OpenClContext>();
  c->device = device;
  c->context = cl::Context(device);
  c->queue = cl::CommandQueue(c->context, device);
  c->max_buffer_bytes = device.getInfo<CL_DEVICE_MAX_MEM_ALLOC_SIZE>();
  if (cap != 0) c->max_buffer_bytes = std::min(c->max_buffer_bytes, cap);
  const std::vector<cl::size_type> item_sizes = device.getInfo<CL_DEVICE_MAX_WORK_ITEM_SIZES>();
  std::size_t local = std::min(kLocalSize, device.getInfo<CL_DEVICE_MAX_WORK_GROUP_SIZE>());
  if (!item_sizes.empty()) local = std::min(local, item_sizes[0]);
  c->local_size = int(std::max<std::size_t>(local, 1));
  return c;
}

OpenClDevice::OpenClDevice(std::shared_ptr<const OpenClContext> cl, const cl::Platform& platform,
                           std::size_t platform_index, std::size_t device_index, OpenClVariant variant,
                           const std::filesystem::path& code)
    : cl_(std::move(cl)), variant_(std::move(variant)) {
  const cl::Device& d = cl_->device;
  info_.id = fmt::format("opencl:{}:{}{}", platform_index, device_index, variant_.suffix);
  code_ = KernelCode(code, info_.id);
  if (code_.on()) info_.code = code_.folder().string();
  info_.backend = "opencl";
  info_.name = trimmed(d.getInfo<CL_DEVICE_NAME>());
  info_.vendor = trimmed(d.getInfo<CL_DEVICE_VENDOR>());
  info_.driver =
      fmt::format("{} ({}, {})", trimmed(d.getInfo<CL_DRIVER_VERSION>()), trimmed(platform.getInfo<CL_PLATFORM_NAME>()),
                  trimmed(platform.getInfo<CL_PLATFORM_VERSION>()));
  info_.api = trimmed(d.getInfo<CL_DEVICE_VERSION>());
  info_.description = variant_.options.empty()
                          ? "programs built with no options"
                          : fmt::format("programs built with {}: compare with the plain device", variant_.options);
  if (const auto loader = opencl::icd_loader()) info_.description += "; ICD loader " + *loader;

  const std::string extensions = d.getInfo<CL_DEVICE_EXTENSIONS>();
  info_.identity = identity(d, extensions);
  caps_.formats.push_back(&model::binary32);
  add_fp_config(caps_, "binary32", d.getInfo<CL_DEVICE_SINGLE_FP_CONFIG>());
  if (has_extension(extensions, "cl_khr_fp16")) {
    caps_.formats.push_back(&model::binary16);
    add_fp_config(caps_, "binary16", d.getInfo<CL_DEVICE_HALF_FP_CONFIG>());
  }
  if (const cl_device_fp_config dbl = double_fp_config(d); has_extension(extensions, "cl_khr_fp64") || dbl != 0) {
    caps_.formats.push_back(&model::binary64);
    add_fp_config(caps_, "binary64", dbl);
  }
  std::erase_if(caps_.formats, [](const model::Format* f) { return !language_has(Language::opencl_c, *f); });
  caps_.float_controls["build_options"] = variant_.options.empty() ? "none" : variant_.options;
}

Expected<cl::Kernel> OpenClDevice::kernel_for(const Expr& e) {
  auto source = kernel_source(e, Language::opencl_c, cl_->local_size);
  if (!source) return source.error();
  if (const auto it = kernels_.find(*source); it != kernels_.end()) return it->second;
  const std::string label = e.to_string();
  code_.keep(label, ".cl", *source);  // before the build: a compiler that crashes leaves it too
  cl::Program program(cl_->context, *source);
  Expected<cl::Kernel> built = [&]() -> Expected<cl::Kernel> {
    try {
      const DriverCall building("clBuildProgram");
      program.build(std::vector<cl::Device>{cl_->device}, variant_.options.c_str());
      if (code_.on()) keep_binary(program, label);
      return cl::Kernel(program, "gp_eval");
    } catch (const cl::Error& err) {
      std::string log;
      try {
        log = program.getBuildInfo<CL_PROGRAM_BUILD_LOG>(cl_->device);
      } catch (const cl::Error&) {
        log = "(no build log)";
      }
      return Error{fmt::format("{} (options '{}', kernel {}):\n{}", cl_error(err).message, variant_.options,
                               e.to_string(), trimmed_log(log)),
                   ErrorKind::compile};
    }
  }();
  kernels_.emplace(std::move(*source), built);
  return built;
}

void OpenClDevice::keep_binary(const cl::Program& program, const std::string& label) const {
  try {
    // The program has one device: one binary (CL_PROGRAM_BINARY_SIZES, then CL_PROGRAM_BINARIES).
    const DriverCall getting("clGetProgramInfo");
    const std::vector<std::vector<unsigned char>> binaries = program.getInfo<CL_PROGRAM_BINARIES>();
    if (binaries.empty() || binaries.front().empty()) {
      fmt::print(stderr, "gpuparanoia: warning: {} gives no binary of '{}'\n", info_.id, label);
      return;
    }
    const std::vector<unsigned char>& b = binaries.front();
    code_.keep(label, ".bin", std::string_view(reinterpret_cast<const char*>(b.data()), b.size()));
  } catch (const cl::Error& err) {
    fmt::print(stderr, "gpuparanoia: warning: the binary of '{}' on {}: {}\n", label, info_.id, cl_error(err).message);
  }
}

// Splits the batch so that its two buffers together stay within the device's allocation limit;
// each dispatch covers whole work-groups, the kernel skipping the invocations past `count`.
std::vector<std::uint64_t> OpenClDevice::run(cl::Kernel& kernel, const Expr& e,
                                             std::span<const std::uint64_t> operands) {
  const std::size_t in_words = std::size_t(e.inputs) * std::size_t(words_per_value(*e.input_format));
  const std::size_t out_words = std::size_t(words_per_value(*e.output_format));
  const std::size_t n = operands.size() / std::size_t(e.inputs);
  // A kernel may allow less than the device's work-group size (registers, local memory).
  const std::size_t local =
      std::min(std::size_t(cl_->local_size), kernel.getWorkGroupInfo<CL_KERNEL_WORK_GROUP_SIZE>(cl_->device));
  const std::size_t tuple_bytes = (in_words + out_words) * sizeof(std::uint32_t);
  const std::size_t limit = std::size_t{1} << 31;  // `count` is a uint
  const std::size_t chunk = std::clamp<std::size_t>(std::size_t(cl_->max_buffer_bytes / tuple_bytes), 1, limit);
  const std::vector<std::uint32_t> in = to_words(*e.input_format, operands);
  std::vector<std::uint32_t> out(n * out_words);
  for (std::size_t start = 0; start < n; start += chunk) {
    const std::size_t m = std::min(chunk, n - start);
    cl::Buffer a(cl_->context, CL_MEM_READ_ONLY, m * in_words * sizeof(std::uint32_t));
    cl::Buffer r(cl_->context, CL_MEM_WRITE_ONLY, m * out_words * sizeof(std::uint32_t));
    cl_->queue.enqueueWriteBuffer(a, CL_TRUE, 0, m * in_words * sizeof(std::uint32_t), &in[start * in_words]);
    kernel.setArg(0, a);
    kernel.setArg(1, r);
    kernel.setArg(2, cl_uint{0});
    kernel.setArg(3, cl_uint(m));
    const DriverCall running("clEnqueueNDRangeKernel");
    cl_->queue.enqueueNDRangeKernel(kernel, cl::NullRange, cl::NDRange((m + local - 1) / local * local),
                                    cl::NDRange(local));
    cl_->queue.enqueueReadBuffer(r, CL_TRUE, 0, m * out_words * sizeof(std::uint32_t), &out[start * out_words]);
  }
  return from_words(*e.output_format, out);
}

Expected<std::vector<std::uint64_t>> OpenClDevice::scalar(const ScalarBatch& batch) {
  const Expr& e = *batch.expr;
  const auto n = tuples(batch, info_, caps_);
  if (!n) return n.error();
  if (*n == 0) return std::vector<std::uint64_t>{};
  try {
    auto kernel = kernel_for(e);
    if (!kernel) return kernel.error();
    return run(*kernel, e, batch.operands);
  } catch (const cl::Error& err) {
    return Error{fmt::format("{} ({})", cl_error(err).message, e.to_string())};
  } catch (const std::exception& err) {
    return Error{fmt::format("{}: {}", info_.id, err.what())};
  }
}

Expected<std::vector<std::uint64_t>> OpenClDevice::mma(const MmaBatch&) {
  return Error{fmt::format("{} has no MMA configuration", info_.id), ErrorKind::unsupported};
}

OpenClBackend::OpenClBackend(Options options) : options_(options) {}

Expected<std::vector<std::unique_ptr<Device>>> OpenClBackend::enumerate() {
  // Before the ICD loader first loads rusticl, which reads the variable once.
  static std::once_flag rusticl;
  std::call_once(rusticl, [] { setenv("RUSTICL_ENABLE", "llvmpipe", 0); });
  problems_.clear();
  if (auto loader = opencl::icd_loader(); !loader) return loader.error();
  std::vector<cl::Platform> platforms;
  try {
    cl::Platform::get(&platforms);
  } catch (const cl::Error& err) {
    return Error{fmt::format("no OpenCL platform ({})", cl_error(err).message), ErrorKind::unsupported};
  }
  std::vector<std::unique_ptr<Device>> devices;
  for (std::size_t p = 0; p < platforms.size(); ++p) {
    std::string name = fmt::format("platform {}", p);
    try {
      name += fmt::format(" ({})", trimmed(platforms[p].getInfo<CL_PLATFORM_NAME>()));
      std::vector<cl::Device> found;
      platforms[p].getDevices(CL_DEVICE_TYPE_ALL, &found);
      if (found.empty()) problems_.push_back(name + ": no device");
      for (std::size_t d = 0; d < found.size(); ++d) {
        try {
          const auto context = OpenClContext::create(found[d], options_.max_buffer_bytes);
          std::vector<std::unique_ptr<Device>> variants;
          for (const OpenClVariant& v : kVariants)
            variants.push_back(std::make_unique<OpenClDevice>(context, platforms[p], p, d, v, options_.code));
          if ((found[d].getInfo<CL_DEVICE_SINGLE_FP_CONFIG>() & CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT) != 0)
            variants.push_back(std::make_unique<OpenClDevice>(context, platforms[p], p, d, kCorrectlyRoundedDivideSqrt,
                                                              options_.code));
          std::move(variants.begin(), variants.end(), std::back_inserter(devices));
        } catch (const cl::Error& err) {
          problems_.push_back(fmt::format("{}, device {}: {}", name, d, cl_error(err).message));
        }
      }
    } catch (const cl::Error& err) {
      problems_.push_back(fmt::format("{}: {}", name, cl_error(err).message));
    }
  }
  if (devices.empty()) {
    std::string why = "no OpenCL device";
    for (const std::string& p : problems_) why += "; " + p;
    return Error{why, ErrorKind::unsupported};
  }
  return devices;
}

}  // namespace gp::backends
