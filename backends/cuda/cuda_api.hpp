// The CUDA driver API (libcuda.so.1) and NVRTC (libnvrtc), opened at run time with dlopen, so that
// gpuparanoia starts on machines without the NVIDIA driver or the CUDA toolkit: the build uses only
// the toolkit's headers. Each library is opened once per process and never closed; what is missing
// becomes an Error saying which library or function, and where it was looked for. The variables
// GPUPARANOIA_CUDA_LIBRARY and GPUPARANOIA_NVRTC_LIBRARY name the files to open instead.
#pragma once

#include <cuda.h>
#include <nvrtc.h>

#include <span>
#include <string>
#include <vector>

#include "backends/expected.hpp"

namespace gp::backends::cuda {

// cuda.h maps several names to their current versions (cuMemAlloc to cuMemAlloc_v2): the members and
// the symbols looked up take the mapped names, so that each pointer has its symbol's type.
// clang-format off
#define GP_CUDA_DRIVER_FUNCTIONS(X)                                                                      \
  X(cuInit) X(cuDriverGetVersion) X(cuGetErrorName) X(cuGetErrorString) X(cuDeviceGetCount)            \
  X(cuDeviceGet) X(cuDeviceGetName) X(cuDeviceGetAttribute) X(cuDeviceTotalMem)                        \
  X(cuDevicePrimaryCtxRetain) X(cuDevicePrimaryCtxRelease) X(cuCtxPushCurrent) X(cuCtxPopCurrent)      \
  X(cuCtxSynchronize) X(cuModuleLoadDataEx) X(cuModuleUnload) X(cuModuleGetFunction) X(cuMemAlloc)     \
  X(cuMemFree) X(cuMemcpyHtoD) X(cuMemcpyDtoH) X(cuLaunchKernel) X(cuDeviceGetUuid) X(cuDeviceGetPCIBusId)

#define GP_NVRTC_FUNCTIONS(X)                                                                            \
  X(nvrtcVersion) X(nvrtcGetErrorString) X(nvrtcGetNumSupportedArchs) X(nvrtcGetSupportedArchs)        \
  X(nvrtcCreateProgram) X(nvrtcDestroyProgram) X(nvrtcCompileProgram) X(nvrtcGetProgramLogSize)        \
  X(nvrtcGetProgramLog) X(nvrtcGetPTXSize) X(nvrtcGetPTX) X(nvrtcGetCUBINSize) X(nvrtcGetCUBIN)
// clang-format on

#define GP_CUDA_POINTER(f) decltype(&::f) f = nullptr;

struct DriverApi {
  GP_CUDA_DRIVER_FUNCTIONS(GP_CUDA_POINTER)
};

struct NvrtcApi {
  GP_NVRTC_FUNCTIONS(GP_CUDA_POINTER)
  std::string path;  // the library file, as the dynamic linker resolved it
};

#undef GP_CUDA_POINTER

// The driver after cuInit(0), or why it cannot be used: libcuda.so.1 not found, a function missing
// (a driver older than the header), cuInit's error.
Expected<const DriverApi*> driver_api();
// NVRTC, or why not: the library is tried by the toolkit's soname, then by its plain name, then in
// the toolkit's library folder found at configure time.
Expected<const NvrtcApi*> nvrtc_api();

// "cuModuleLoadDataEx: CUDA_ERROR_INVALID_PTX (a PTX JIT compilation failed)".
Error driver_error(const DriverApi& api, const char* call, CUresult r);

// What NVRTC compiles for: its version and the real architectures it has (75 for sm_75, ...).
struct Compiler {
  int major = 0, minor = 0;
  std::vector<int> archs;
  std::string path;  // the NVRTC library's file
};
Expected<Compiler> compiler();

// What a device's kernels are compiled to: CUBIN for the device's own architecture when NVRTC has it,
// else PTX for the highest virtual architecture below it, which the driver compiles on loading; arch
// 0 when NVRTC has nothing at or below the device's. `arch_specific` compiles for the architecture's
// own features ("sm_90a": wgmma), whose code runs on that compute capability alone.
struct Target {
  int arch = 0;  // major * 10 + minor
  bool cubin = false;
  bool arch_specific = false;
  std::string name() const;  // "sm_90", "compute_87", "sm_90a"
};
Target target_for(int device_arch, std::span<const int> archs);

// A compiled kernel image: CUBIN, or PTX text.
struct Image {
  std::string bytes;
  bool cubin = false;
};
// Compiles CUDA C++ with NVRTC for the target, with the options; an Error with the log on failure.
Expected<Image> compile(const std::string& source, const Target& target, const std::vector<std::string>& options);

// The folder holding cuda_fp16.h, which binary16 kernels include: the toolkit's include folder found
// at configure time, else $CUDA_HOME/include or $CUDA_PATH/include; empty when none has it.
std::string fp16_include_dir();

}  // namespace gp::backends::cuda
