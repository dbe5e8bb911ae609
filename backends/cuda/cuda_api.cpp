#include "backends/cuda/cuda_api.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "backends/driver_call.hpp"
#include "backends/dynamic_library.hpp"
#include "backends/utf8.hpp"

namespace gp::backends::cuda {

namespace {

#define GP_CUDA_STRING(f) #f

// Looks every function of the list up in the library: the name of the first one missing, or none.
#define GP_CUDA_RESOLVE(f) \
  if (!(api.f = reinterpret_cast<decltype(api.f)>(library.symbol(GP_CUDA_STRING(f))))) return GP_CUDA_STRING(f);
const char* resolve(const DynamicLibrary& library, DriverApi& api) {
  GP_CUDA_DRIVER_FUNCTIONS(GP_CUDA_RESOLVE)
  return nullptr;
}
const char* resolve(const DynamicLibrary& library, NvrtcApi& api) {
  GP_NVRTC_FUNCTIONS(GP_CUDA_RESOLVE)
  return nullptr;
}
#undef GP_CUDA_RESOLVE

Expected<DriverApi> load_driver() {
  // The soname of the driver's library: the unversioned name belongs to the toolkit's link stub.
  const auto library = open_library("GPUPARANOIA_CUDA_LIBRARY", {"libcuda.so.1"});
  if (!library) return Error{"no NVIDIA driver: " + library.error().message, ErrorKind::unsupported};
  DriverApi api;
  if (const char* missing = resolve(*library, api))
    return Error{fmt::format("{} has no {} (a driver older than the CUDA {}.{} headers)", library->path, missing,
                             CUDA_VERSION / 1000, CUDA_VERSION % 1000 / 10),
                 ErrorKind::unsupported};
  if (const CUresult r = api.cuInit(0); r != CUDA_SUCCESS) return driver_error(api, "cuInit", r);
  return api;
}

Expected<NvrtcApi> load_nvrtc() {
  const std::string soname = GPUPARANOIA_NVRTC_SONAME, dir = GPUPARANOIA_CUDA_LIBRARY_DIR;
  const std::string in_dir = dir + "/" + soname, plain_in_dir = dir + "/libnvrtc.so";
  const auto library =
      open_library("GPUPARANOIA_NVRTC_LIBRARY", {soname.c_str(), "libnvrtc.so", in_dir.c_str(), plain_in_dir.c_str()});
  if (!library)
    return Error{"NVRTC (the CUDA toolkit's run-time compiler): " + library.error().message, ErrorKind::unsupported};
  NvrtcApi api;
  if (const char* missing = resolve(*library, api))
    return Error{fmt::format("{} has no {}", library->path, missing), ErrorKind::unsupported};
  api.path = library->path;
  return api;
}

std::string nvrtc_error(const NvrtcApi& api, const char* call, nvrtcResult r) {
  return fmt::format("{}: {}", call, api.nvrtcGetErrorString(r));
}

}  // namespace

Error driver_error(const DriverApi& api, const char* call, CUresult r) {
  const char *name = nullptr, *text = nullptr;
  // The toolkit's link stub, found as libcuda.so.1, names no error: not even its own.
  if (api.cuGetErrorName(r, &name) != CUDA_SUCCESS && r == CUDA_ERROR_STUB_LIBRARY)
    return Error{fmt::format("{}: CUDA_ERROR_STUB_LIBRARY (libcuda.so.1 is the toolkit's stub, not the driver)", call),
                 ErrorKind::unsupported};
  api.cuGetErrorString(r, &text);
  const bool absent = r == CUDA_ERROR_NO_DEVICE || r == CUDA_ERROR_STUB_LIBRARY || r == CUDA_ERROR_NOT_SUPPORTED;
  return Error{
      fmt::format("{}: {} ({})", call, name ? name : fmt::format("error {}", int(r)), text ? text : "no description"),
      absent ? ErrorKind::unsupported : ErrorKind::failed};
}

Expected<const DriverApi*> driver_api() {
  static const Expected<DriverApi> api = load_driver();
  if (!api) return api.error();
  return &*api;
}

Expected<const NvrtcApi*> nvrtc_api() {
  static const Expected<NvrtcApi> api = load_nvrtc();
  if (!api) return api.error();
  return &*api;
}

Expected<Compiler> compiler() {
  auto api = nvrtc_api();
  if (!api) return api.error();
  const NvrtcApi& nv = **api;
  Compiler c;
  c.path = nv.path;
  int n = 0;
  if (const nvrtcResult r = nv.nvrtcVersion(&c.major, &c.minor); r != NVRTC_SUCCESS)
    return Error{nvrtc_error(nv, "nvrtcVersion", r), ErrorKind::compile};
  if (const nvrtcResult r = nv.nvrtcGetNumSupportedArchs(&n); r != NVRTC_SUCCESS)
    return Error{nvrtc_error(nv, "nvrtcGetNumSupportedArchs", r), ErrorKind::compile};
  c.archs.resize(std::size_t(std::max(n, 0)));
  if (const nvrtcResult r = nv.nvrtcGetSupportedArchs(c.archs.data()); r != NVRTC_SUCCESS)
    return Error{nvrtc_error(nv, "nvrtcGetSupportedArchs", r), ErrorKind::compile};
  std::sort(c.archs.begin(), c.archs.end());
  return c;
}

std::string Target::name() const {
  return fmt::format("{}_{}{}", cubin ? "sm" : "compute", arch, arch_specific ? "a" : "");
}

Target target_for(int device_arch, std::span<const int> archs) {
  if (std::find(archs.begin(), archs.end(), device_arch) != archs.end()) return {device_arch, true};
  Target t;
  for (const int a : archs)
    if (a < device_arch) t.arch = std::max(t.arch, a);
  return t;
}

Expected<Image> compile(const std::string& source, const Target& target, const std::vector<std::string>& options) {
  auto api = nvrtc_api();
  if (!api) return api.error();
  const NvrtcApi& nv = **api;
  nvrtcProgram program = nullptr;
  if (const nvrtcResult r = nv.nvrtcCreateProgram(&program, source.c_str(), "gpuparanoia.cu", 0, nullptr, nullptr);
      r != NVRTC_SUCCESS)
    return Error{nvrtc_error(nv, "nvrtcCreateProgram", r), ErrorKind::compile};
  struct Owner {
    const NvrtcApi& nv;
    nvrtcProgram& program;
    ~Owner() { nv.nvrtcDestroyProgram(&program); }
  } owner{nv, program};
  std::vector<std::string> all = {"--gpu-architecture=" + target.name()};
  all.insert(all.end(), options.begin(), options.end());
  std::vector<const char*> argv;
  for (const std::string& o : all) argv.push_back(o.c_str());
  const DriverCall compiling("nvrtcCompileProgram");
  if (const nvrtcResult r = nv.nvrtcCompileProgram(program, int(argv.size()), argv.data()); r != NVRTC_SUCCESS) {
    std::size_t size = 0;
    std::string log = "(no log)";
    if (nv.nvrtcGetProgramLogSize(program, &size) == NVRTC_SUCCESS && size > 1) {
      log.assign(size, '\0');
      nv.nvrtcGetProgramLog(program, log.data());
      log.resize(std::strlen(log.c_str()));
    }
    // Logs can be long (a warning per line of a header): the head says what failed.
    constexpr std::size_t limit = 4000;
    if (log.size() > limit)
      log = log.substr(0, limit) + fmt::format("\n[... {} more bytes of log]", log.size() - limit);
    return Error{fmt::format("{} (NVRTC, {}):\n{}", nvrtc_error(nv, "nvrtcCompileProgram", r), fmt::join(all, " "),
                             valid_utf8(log)),
                 ErrorKind::compile};
  }
  Image image;
  image.cubin = target.cubin;
  std::size_t size = 0;
  const nvrtcResult sized = target.cubin ? nv.nvrtcGetCUBINSize(program, &size) : nv.nvrtcGetPTXSize(program, &size);
  if (sized != NVRTC_SUCCESS)
    return Error{nvrtc_error(nv, target.cubin ? "nvrtcGetCUBINSize" : "nvrtcGetPTXSize", sized), ErrorKind::compile};
  image.bytes.assign(size, '\0');
  const nvrtcResult got =
      target.cubin ? nv.nvrtcGetCUBIN(program, image.bytes.data()) : nv.nvrtcGetPTX(program, image.bytes.data());
  if (got != NVRTC_SUCCESS)
    return Error{nvrtc_error(nv, target.cubin ? "nvrtcGetCUBIN" : "nvrtcGetPTX", got), ErrorKind::compile};
  if (image.bytes.empty())
    return Error{fmt::format("NVRTC returned an empty image for {}", target.name()), ErrorKind::compile};
  return image;
}

std::string fp16_include_dir() {
  std::vector<std::filesystem::path> candidates = {GPUPARANOIA_CUDA_INCLUDE_DIR};
  for (const char* var : {"CUDA_HOME", "CUDA_PATH"})
    if (const char* v = std::getenv(var); v && *v) candidates.push_back(std::filesystem::path(v) / "include");
  std::error_code ec;
  for (const auto& dir : candidates)
    if (std::filesystem::exists(dir / "cuda_fp16.h", ec)) return dir.string();
  return "";
}

}  // namespace gp::backends::cuda
