// The CUDA backend: every device the driver lists, as `cuda:<n>` in the
// driver's order, through the driver API and NVRTC, both opened at run time (cuda_api.hpp).
//
// Scalar batches run the expression as CUDA C++ (kernel_source(), Language::cuda: every rounding an
// intrinsic that names it, __fadd_rn, __dmul_rn, __hadd_rn, __float2half_rn, which the compiler
// never contracts; `mad` as a*b+c under -fmad=true), compiled with NVRTC to CUBIN for the device's
// architecture when NVRTC has it, else to PTX for the highest architecture below, which the driver
// compiles on loading. binary32 and binary64 always; binary16 from compute capability 5.3, where
// cuda_fp16.h is found (fp16_include_dir()).
//
// MMA batches run the tensor-core instructions themselves (mma_source.hpp): mma.sync in the shapes
// of the device's architecture, and wmma. A configuration the architecture has but NVRTC cannot
// compile for (CUDA 13 has no sm_70) is left out and named, with the reason, in
// caps().mma_unsupported and the description.
//
// wgmma (sm_90a) is offered on compute capability 9.0 alone and compiled for sm_90a.
//
// Each kernel source is compiled and loaded once per device, in the device's primary context,
// retained on the first batch. Every CUDA and NVRTC error becomes an Error (a compilation failure
// carries NVRTC's log, a PTX that the driver rejects its JIT log); a batch larger than the launch
// limit runs as several launches.
//
// With `run --code DIR` (kernel_code.hpp), every image the backend loads, of an MMA configuration or
// a scalar expression, is kept as "<label>.<target>.cubin" (".ptx" where the driver compiles it), so
// that cuobjdump or nvdisasm can say which instructions ran.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "backends/cuda/cuda_api.hpp"
#include "backends/cuda/mma_source.hpp"
#include "backends/device.hpp"
#include "backends/kernel_code.hpp"

namespace gp::backends {

namespace cuda {
// NVRTC's options for the scalar kernels: subnormals kept, division and square root correctly
// rounded (the defaults, stated so that a new default cannot change an audit unseen), contraction
// allowed, which only `mad` can use (every other operation is an intrinsic); the folder of
// cuda_fp16.h where there is one.
std::vector<std::string> scalar_options(const std::string& fp16_include);

}  // namespace cuda

class CudaDevice final : public Device {
 public:
  // Queries device `index` of the driver; errors become an Error at the enumeration. Its kernels'
  // code is kept under `code` (kernel_code.hpp) unless empty.
  static Expected<std::unique_ptr<CudaDevice>> create(const cuda::DriverApi& api, const cuda::Compiler& compiler,
                                                      int index, std::uint64_t max_launch_bytes,
                                                      const std::filesystem::path& code = {});
  ~CudaDevice() override;
  CudaDevice(const CudaDevice&) = delete;
  CudaDevice& operator=(const CudaDevice&) = delete;

  const DeviceInfo& info() const override { return info_; }
  const Capabilities& caps() const override { return caps_; }
  Expected<std::vector<std::uint64_t>> scalar(const ScalarBatch& batch) override;
  Expected<std::vector<std::uint64_t>> mma(const MmaBatch& batch) override;
  // Modules compiled and loaded so far (failures included): one per kernel source.
  std::size_t modules_loaded() const { return functions_.size(); }

 private:
  CudaDevice(const cuda::DriverApi& api, CUdevice device, std::uint64_t max_launch_bytes)
      : api_(api), device_(device), max_launch_bytes_(max_launch_bytes) {}
  void add_capabilities(const cuda::Compiler& compiler, int arch, std::vector<std::string>& notes);
  Expected<CUcontext> context();
  // `label` names the image kept (kernel_code.hpp).
  Expected<CUfunction> function(const std::string& source, const char* name, const std::vector<std::string>& options,
                                const cuda::Target& target, std::string_view label);
  // One kernel over n items in launches within the byte limit (see the .cpp).
  struct Launch;
  [[nodiscard]] std::optional<Error> run(const Launch& launch, std::size_t n);
  // check() that marks the context lost after a sticky error (context_error_).
  [[nodiscard]] std::optional<Error> checked(const char* call, CUresult r);

  const cuda::DriverApi& api_;
  CUdevice device_;
  std::uint64_t max_launch_bytes_;
  cuda::Target target_;
  std::string fp16_include_;
  DeviceInfo info_;
  Capabilities caps_;
  std::vector<cuda::MmaKernel> mma_;  // the kernels of caps_.mma, in the same order
  KernelCode code_;
  CUcontext context_ = nullptr;
  std::optional<Error> context_error_;                     // no context, or the context lost: every batch fails with it
  std::map<std::string, Expected<CUfunction>> functions_;  // by kernel source
  std::vector<CUmodule> modules_;
};

class CudaBackend final : public Backend {
 public:
  struct Options {
    // Caps the bytes of one launch's buffers (0: 256 MiB), so that tests can make a batch split.
    std::uint64_t max_launch_bytes = 0;
    std::filesystem::path code = {};  // where the kernels' code is kept (kernel_code.hpp); empty: nowhere
  };
  explicit CudaBackend(Options options) : options_(options) {}
  CudaBackend() : CudaBackend(Options{}) {}
  std::string name() const override { return "cuda"; }
  // Every device; an Error saying why there is none: no driver (libcuda.so.1), cuInit's error, no
  // device, no NVRTC.
  Expected<std::vector<std::unique_ptr<Device>>> enumerate() override;

 private:
  Options options_;
};

}  // namespace gp::backends
