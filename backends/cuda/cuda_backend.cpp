#include "backends/cuda/cuda_backend.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>

#include "backends/driver_call.hpp"
#include "backends/kernel_source.hpp"
#include "backends/utf8.hpp"
#include "model/mma_instructions.hpp"

namespace gp::backends {

namespace {

constexpr unsigned kScalarThreads = 256;  // threads per block of the scalar kernels
constexpr std::uint64_t kDefaultLaunchBytes = std::uint64_t{1} << 28;
// Items (tuples, tiles) per launch at most: `count` is an unsigned int, and the blocks must stay
// within the grid's 2^31 - 1.
constexpr std::size_t kMaxLaunchItems = std::size_t{1} << 30;

[[nodiscard]] std::optional<Error> check(const cuda::DriverApi& api, const char* call, CUresult r) {
  if (r == CUDA_SUCCESS) return std::nullopt;
  return cuda::driver_error(api, call, r);
}

// The device's context, current on this thread for a scope.
class Current {
 public:
  Current(const cuda::DriverApi& api, CUcontext context) : api_(api), result_(api.cuCtxPushCurrent(context)) {}
  ~Current() {
    CUcontext popped = nullptr;
    if (result_ == CUDA_SUCCESS) api_.cuCtxPopCurrent(&popped);
  }
  Current(const Current&) = delete;
  Current& operator=(const Current&) = delete;
  [[nodiscard]] std::optional<Error> error() const { return check(api_, "cuCtxPushCurrent", result_); }

 private:
  const cuda::DriverApi& api_;
  CUresult result_;
};

// Device memory of one launch, freed with the scope.
class DeviceMemory {
 public:
  explicit DeviceMemory(const cuda::DriverApi& api) : api_(api) {}
  ~DeviceMemory() {
    for (const CUdeviceptr p : allocations_) api_.cuMemFree(p);
  }
  DeviceMemory(const DeviceMemory&) = delete;
  DeviceMemory& operator=(const DeviceMemory&) = delete;
  Expected<CUdeviceptr> allocate(std::size_t bytes) {
    CUdeviceptr p = 0;
    if (auto failed = check(api_, "cuMemAlloc", api_.cuMemAlloc(&p, bytes))) return *failed;
    allocations_.push_back(p);
    return p;
  }

 private:
  const cuda::DriverApi& api_;
  std::vector<CUdeviceptr> allocations_;
};

std::string version_name(int v) { return fmt::format("{}.{}", v / 1000, v % 1000 / 10); }

}  // namespace

std::vector<std::string> cuda::scalar_options(const std::string& fp16_include) {
  std::vector<std::string> options = {"-ftz=false", "-prec-div=true", "-prec-sqrt=true", "-fmad=true"};
  if (!fp16_include.empty()) options.push_back("--include-path=" + fp16_include);
  return options;
}

// A kernel over n items (tuples, tiles): `inputs` and `output` hold the whole batch, item-major;
// the kernel's parameters are the buffers' addresses, `leading`, then the count of the launch.
struct CudaDevice::Launch {
  CUfunction kernel = nullptr;
  std::vector<std::span<const std::byte>> inputs;
  std::span<std::byte> output;
  std::vector<unsigned> leading;
  unsigned threads = 0, items_per_block = 0;
};

Expected<std::unique_ptr<CudaDevice>> CudaDevice::create(const cuda::DriverApi& api, const cuda::Compiler& compiler,
                                                         int index, std::uint64_t max_launch_bytes,
                                                         const std::filesystem::path& code) {
  CUdevice device = 0;
  char name[256] = {};
  int major = 0, minor = 0, version = 0;
  std::size_t memory = 0;
  // In order; after a failure the later calls fail too, harmlessly.
  for (const auto& [call, r] :
       {std::pair{"cuDeviceGet", api.cuDeviceGet(&device, index)},
        {"cuDeviceGetName", api.cuDeviceGetName(name, int(sizeof name), device)},
        {"cuDeviceGetAttribute",
         api.cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device)},
        {"cuDeviceGetAttribute",
         api.cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, device)},
        {"cuDeviceTotalMem", api.cuDeviceTotalMem(&memory, device)},
        {"cuDriverGetVersion", api.cuDriverGetVersion(&version)}})
    if (auto failed = check(api, call, r)) return *failed;
  std::unique_ptr<CudaDevice> d(new CudaDevice(api, device, max_launch_bytes ? max_launch_bytes : kDefaultLaunchBytes));
  const int arch = major * 10 + minor;
  d->target_ = cuda::target_for(arch, compiler.archs);
  DeviceInfo& info = d->info_;
  info.id = fmt::format("cuda:{}", index);
  d->code_ = KernelCode(code, info.id);
  if (d->code_.on()) info.code = d->code_.folder().string();
  info.backend = "cuda";
  info.name = valid_utf8(name);
  info.vendor = "NVIDIA";
  info.driver = fmt::format("CUDA driver {}, NVRTC {}.{}", version_name(version), compiler.major, compiler.minor);
  info.api = fmt::format("CUDA {}, compute capability {}.{}", version_name(version), major, minor);
  // Its identity, where the driver gives it (nvidia-smi shows the same UUID with a "GPU-" prefix).
  if (CUuuid uuid{}; api.cuDeviceGetUuid(&uuid, device) == CUDA_SUCCESS)
    info.identity["device_uuid"] = uuid_text(
        std::span<const unsigned char, 16>(reinterpret_cast<const unsigned char*>(uuid.bytes), sizeof uuid.bytes));
  if (char bus[32] = {}; api.cuDeviceGetPCIBusId(bus, int(sizeof bus) - 1, device) == CUDA_SUCCESS)
    info.identity["pci_bus"] = valid_utf8(bus);
  const std::string architecture = cuda::nvidia_architecture(arch);
  std::vector<std::string> notes = {fmt::format(
      "{} (sm_{}), {:.1f} GiB", architecture.empty() ? "architecture unknown to the MMA tables" : architecture, arch,
      double(memory) / double(1ull << 30))};
  d->add_capabilities(compiler, arch, notes);
  info.description = fmt::format("{}", fmt::join(notes, "; "));
  return d;
}

// What NVRTC can compile for the architecture: the formats, and the MMA configurations the
// architecture has, those NVRTC cannot compile for named with the reason.
void CudaDevice::add_capabilities(const cuda::Compiler& compiler, int arch, std::vector<std::string>& notes) {
  std::string no_target;
  if (target_.arch == 0) {
    no_target = fmt::format("NVRTC {}.{} cannot compile for sm_{} (it has sm_{} to sm_{})", compiler.major,
                            compiler.minor, arch, compiler.archs.empty() ? 0 : compiler.archs.front(),
                            compiler.archs.empty() ? 0 : compiler.archs.back());
    notes.push_back(no_target + ": no kernel can run");
  } else {
    notes.push_back(
        fmt::format("kernels compiled by NVRTC {}.{} ({}) to {}", compiler.major, compiler.minor, compiler.path,
                    target_.cubin ? "CUBIN for " + target_.name()
                                  : "PTX for " + target_.name() + ", which the driver compiles on loading"));
    caps_.formats.push_back(&model::binary32);
    if (arch >= 53) {
      fp16_include_ = cuda::fp16_include_dir();
      if (!fp16_include_.empty()) caps_.formats.push_back(&model::binary16);
      notes.push_back(fp16_include_.empty() ? "binary16 left out: cuda_fp16.h not found (the toolkit's include folder, "
                                              "$CUDA_HOME/include, $CUDA_PATH/include)"
                                            : fmt::format("binary16 through {}/cuda_fp16.h", fp16_include_));
    }
    caps_.formats.push_back(&model::binary64);
    caps_.float_controls["build_options"] = fmt::format("{}", fmt::join(cuda::scalar_options(""), " "));
  }
  std::vector<std::string> left_out;
  for (cuda::MmaKernel& k : cuda::mma_kernels(arch)) {
    if (target_.arch == 0 || k.min_arch > target_.arch) {
      left_out.push_back(fmt::format("{} {}", k.config.name(), k.config.scope));
      if (target_.arch)
        left_out.back() += fmt::format(" ({} needs {}; NVRTC compiles for {} at most)", k.ptx,
                                       cuda::Target{k.min_arch, true, k.arch_specific}.name(), target_.name());
      continue;
    }
    caps_.mma.push_back(k.config);
    mma_.push_back(std::move(k));
  }
  std::vector<std::string> emulated;
  for (const MmaConfig& c : caps_.mma)
    if (const model::MmaInstruction* row = model::find_mma_instruction(c.instruction); row && row->emulated)
      emulated.push_back(c.instruction);
  if (!emulated.empty())
    notes.push_back(fmt::format("emulated, not native (identified against the composition the table models): {}",
                                fmt::join(emulated, ", ")));
  const bool wgmma = std::any_of(mma_.begin(), mma_.end(), [](const cuda::MmaKernel& k) { return k.warps > 1; });
  notes.push_back(
      fmt::format("tensor cores: {} configurations (mma.sync, wmma{})", caps_.mma.size(), wgmma ? ", wgmma" : ""));
  if (!left_out.empty()) {
    notes.push_back(fmt::format("left out: {}", fmt::join(left_out, "; ")));
    caps_.mma_unsupported = no_target.empty() ? notes.back() : no_target + "; " + notes.back();
  } else if (caps_.mma.empty()) {
    notes.push_back(fmt::format("sm_{} has no tensor cores (mma.sync needs sm_70)", arch));
    caps_.mma_unsupported = notes.back();
  }
}

CudaDevice::~CudaDevice() {
  if (!context_) return;
  {
    const Current current(api_, context_);
    for (const CUmodule m : modules_) api_.cuModuleUnload(m);
  }
  api_.cuDevicePrimaryCtxRelease(device_);
}

// The CUDA driver API's sticky errors: after one, every later call of the process fails with it (the
// context cannot be used again), as a Vulkan device after VK_ERROR_DEVICE_LOST.
bool sticky(CUresult r) {
  switch (r) {
    case CUDA_ERROR_ILLEGAL_ADDRESS:
    case CUDA_ERROR_LAUNCH_TIMEOUT:
    case CUDA_ERROR_ASSERT:
    case CUDA_ERROR_HARDWARE_STACK_ERROR:
    case CUDA_ERROR_ILLEGAL_INSTRUCTION:
    case CUDA_ERROR_MISALIGNED_ADDRESS:
    case CUDA_ERROR_INVALID_ADDRESS_SPACE:
    case CUDA_ERROR_INVALID_PC:
    case CUDA_ERROR_LAUNCH_FAILED: return true;
    default: return false;
  }
}

std::optional<Error> CudaDevice::checked(const char* call, CUresult r) {
  auto failed = check(api_, call, r);
  if (failed && sticky(r)) {
    failed->kind = ErrorKind::lost;
    context_error_ =
        failed->retold(fmt::format("{}: the context is lost ({}); no later batch runs", info_.id, failed->message));
  }
  return failed;
}

Expected<CUcontext> CudaDevice::context() {
  if (context_error_) return *context_error_;
  if (context_) return context_;
  CUcontext c = nullptr;
  if (auto failed = check(api_, "cuDevicePrimaryCtxRetain", api_.cuDevicePrimaryCtxRetain(&c, device_))) {
    context_error_ = failed->retold(fmt::format("{}: {}", info_.id, failed->message));
    return *context_error_;
  }
  context_ = c;
  return context_;
}

// Compiles and loads a kernel source once; the context is current.
Expected<CUfunction> CudaDevice::function(const std::string& source, const char* name,
                                          const std::vector<std::string>& options, const cuda::Target& target,
                                          std::string_view label) {
  if (const auto it = functions_.find(source); it != functions_.end()) return it->second;
  Expected<CUfunction> made = [&]() -> Expected<CUfunction> {
    auto image = cuda::compile(source, target, options);
    if (!image) return image.error();
    code_.keep(label, fmt::format(".{}.{}", target.name(), target.cubin ? "cubin" : "ptx"), image->bytes);
    // The driver's JIT log says why it rejects a PTX image.
    std::string log(8192, '\0');
    CUjit_option keys[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
    void* values[] = {log.data(), reinterpret_cast<void*>(log.size())};
    CUmodule module = nullptr;
    const DriverCall loading("cuModuleLoadDataEx");
    if (auto failed =
            check(api_, "cuModuleLoadDataEx", api_.cuModuleLoadDataEx(&module, image->bytes.data(), 2, keys, values)))
      return Error{fmt::format("{} ({}):\n{}", failed->message, target.name(), valid_utf8(log.c_str())),
                   ErrorKind::compile};
    modules_.push_back(module);
    CUfunction f = nullptr;
    if (auto failed = check(api_, "cuModuleGetFunction", api_.cuModuleGetFunction(&f, module, name))) return *failed;
    return f;
  }();
  functions_.emplace(source, made);
  return made;
}

// Launches within the byte limit: each copies its slices in, runs, waits, and copies its results
// out, so that a failing kernel is an Error of this batch.
std::optional<Error> CudaDevice::run(const Launch& l, std::size_t n) {
  std::vector<std::size_t> item;  // bytes per item of each buffer, the output last
  for (const auto& in : l.inputs) item.push_back(in.size() / n);
  item.push_back(l.output.size() / n);
  std::size_t per_item = 0;
  for (const std::size_t b : item) per_item += b;
  const std::size_t chunk = std::clamp<std::size_t>(std::size_t(max_launch_bytes_ / per_item), 1, kMaxLaunchItems);
  for (std::size_t start = 0; start < n; start += chunk) {
    const std::size_t m = std::min(chunk, n - start);
    DeviceMemory memory(api_);
    std::vector<CUdeviceptr> buffers;
    for (std::size_t k = 0; k < item.size(); ++k) {
      auto p = memory.allocate(item[k] * m);
      if (!p) return p.error();
      buffers.push_back(*p);
      if (k == l.inputs.size()) break;
      if (auto failed =
              checked("cuMemcpyHtoD", api_.cuMemcpyHtoD(*p, l.inputs[k].data() + start * item[k], item[k] * m)))
        return failed;
    }
    std::vector<unsigned> scalars = l.leading;
    scalars.push_back(unsigned(m));
    std::vector<void*> params;
    for (CUdeviceptr& p : buffers) params.push_back(&p);
    for (unsigned& s : scalars) params.push_back(&s);
    const unsigned blocks = unsigned((m + l.items_per_block - 1) / l.items_per_block);
    const DriverCall running("cuLaunchKernel");
    if (auto failed = checked("cuLaunchKernel", api_.cuLaunchKernel(l.kernel, blocks, 1, 1, l.threads, 1, 1, 0, nullptr,
                                                                    params.data(), nullptr)))
      return failed;
    if (auto failed = checked("cuCtxSynchronize", api_.cuCtxSynchronize())) return failed;
    if (auto failed = checked(
            "cuMemcpyDtoH", api_.cuMemcpyDtoH(l.output.data() + start * item.back(), buffers.back(), item.back() * m)))
      return failed;
  }
  return std::nullopt;
}

Expected<std::vector<std::uint64_t>> CudaDevice::scalar(const ScalarBatch& batch) {
  const Expr& e = *batch.expr;
  const auto n = tuples(batch, info_, caps_);
  if (!n) return n.error();
  if (*n == 0) return std::vector<std::uint64_t>{};
  auto source = kernel_source(e, Language::cuda, int(kScalarThreads));
  if (!source) return source.error();
  auto context = this->context();
  if (!context) return context.error();
  const Current current(api_, *context);
  if (auto failed = current.error()) return *failed;
  auto kernel = function(*source, "gp_eval", cuda::scalar_options(fp16_include_), target_, e.to_string());
  if (!kernel) return kernel.error().retold(fmt::format("{} (kernel {})", kernel.error().message, e.to_string()));
  const std::vector<std::uint32_t> in = to_words(*e.input_format, batch.operands);
  std::vector<std::uint32_t> out(*n * std::size_t(words_per_value(*e.output_format)));
  const Launch launch{
      *kernel,       {std::as_bytes(std::span(in))}, std::as_writable_bytes(std::span(out)), {0u}, kScalarThreads,
      kScalarThreads};
  if (auto failed = run(launch, *n))
    return failed->retold(fmt::format("{}: {} (kernel {})", info_.id, failed->message, e.to_string()));
  return from_words(*e.output_format, out);
}

Expected<std::vector<std::uint64_t>> CudaDevice::mma(const MmaBatch& batch) {
  const MmaConfig& cfg = *batch.config;
  const std::string name = cfg.name();
  const auto k =
      std::find_if(mma_.begin(), mma_.end(), [&](const cuda::MmaKernel& m) { return m.config.name() == name; });
  if (k == mma_.end())
    return Error{fmt::format("{} has no MMA configuration {}", info_.id, name), ErrorKind::unsupported};
  const auto n = tiles(batch);
  if (!n) return n.error();
  if (*n == 0) return std::vector<std::uint64_t>{};
  auto context = this->context();
  if (!context) return context.error();
  const Current current(api_, *context);
  if (auto failed = current.error()) return *failed;
  cuda::Target target = target_;
  target.arch_specific = k->arch_specific;
  auto kernel = function(cuda::mma_kernel_source(*k), "gp_mma", {}, target, name);
  if (!kernel) return kernel.error().retold(fmt::format("{} ({})", kernel.error().message, k->ptx));
  const std::vector<std::byte> a = to_bytes(*cfg.a, batch.a), b = to_bytes(*cfg.b, batch.b),
                               c = to_bytes(*cfg.c, batch.c);
  std::vector<std::byte> d(*n * std::size_t(cfg.m * cfg.n) * std::size_t(cfg.d->storage_bits / 8));
  const Launch launch{
      *kernel, {a, b, c}, d, {}, 32 * cuda::kMmaWarpsPerBlock, cuda::kMmaWarpsPerBlock / unsigned(k->warps)};
  if (auto failed = run(launch, *n))
    return failed->retold(fmt::format("{}: {} ({})", info_.id, failed->message, k->ptx));
  return from_bytes(*cfg.d, d);
}

Expected<std::vector<std::unique_ptr<Device>>> CudaBackend::enumerate() {
  auto api = cuda::driver_api();
  if (!api) return api.error();
  int count = 0;
  if (auto failed = check(**api, "cuDeviceGetCount", (*api)->cuDeviceGetCount(&count))) return *failed;
  if (count == 0) return Error{"the CUDA driver lists no device", ErrorKind::unsupported};
  auto compiler = cuda::compiler();
  if (!compiler) return compiler.error();
  std::vector<std::unique_ptr<Device>> devices;
  for (int i = 0; i < count; ++i) {
    auto d = CudaDevice::create(**api, *compiler, i, options_.max_launch_bytes, options_.code);
    if (!d) return d.error().retold(fmt::format("cuda:{}: {}", i, d.error().message));
    devices.push_back(std::move(*d));
  }
  return devices;
}

}  // namespace gp::backends
