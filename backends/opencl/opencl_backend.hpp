// The OpenCL backend: every device of every platform the ICD loader finds
// (PoCL, rusticl, Clover, vendor drivers), through the C++ bindings.
//
// Each device appears three or four times, as builds of its programs with different compiler
// options, so that the report of each shows what the flag changes:
//   opencl:<platform>:<n>                                  no build options
//   opencl:<platform>:<n>+denorms-are-zero                 -cl-denorms-are-zero
//   opencl:<platform>:<n>+fast-relaxed-math                -cl-fast-relaxed-math
//   opencl:<platform>:<n>+correctly-rounded-divide-sqrt    -cl-fp32-correctly-rounded-divide-sqrt,
//       where CL_DEVICE_SINGLE_FP_CONFIG has CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT: binary32 x/y and
//       sqrt correctly rounded, where the plain build may be 2.5 and 3 ulp off
// Kernels come from kernel_source() (backends/kernel_source.hpp), FP_CONTRACT OFF but for `mad`;
// each (device, variant, source) is built once. Every OpenCL error becomes an Error naming the call
// and the code; a build failure carries the build log. With `run --code DIR` (kernel_code.hpp), each
// program's OpenCL C source is kept before its build, and the device's binary
// (CL_PROGRAM_BINARIES: PoCL's, rusticl's, a vendor's) after it.
//
// rusticl lists its devices only when RUSTICL_ENABLE names its drivers: when the variable is unset,
// enumerate() sets it to "llvmpipe" before the first OpenCL call (a user's own value is kept).
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <CL/opencl.hpp>

#include "backends/device.hpp"
#include "backends/kernel_code.hpp"

namespace gp::backends {

// A build of a device's programs: the id suffix and the compiler options.
struct OpenClVariant {
  std::string suffix;   // "", "+denorms-are-zero", ... (see above)
  std::string options;  // "", "-cl-denorms-are-zero", ...
};

// What the variants of one device share: its context, queue and limits.
struct OpenClContext {
  // A context and an in-order queue on the device; `cap` (non-zero) lowers the buffer limit.
  // Throws cl::Error.
  static std::shared_ptr<const OpenClContext> create(const cl::Device& device, std::uint64_t cap = 0);

  cl::Device device;
  cl::Context context;
  cl::CommandQueue queue;
  std::uint64_t max_buffer_bytes = 0;  // CL_DEVICE_MAX_MEM_ALLOC_SIZE, or a lower cap
  int local_size = 0;                  // work-group size asked for (a kernel may allow less)
};

class OpenClDevice final : public Device {
 public:
  // Queries the device; throws cl::Error (enumerate() reports it).
  // Its kernels' code is kept under `code` unless empty.
  OpenClDevice(std::shared_ptr<const OpenClContext> cl, const cl::Platform& platform, std::size_t platform_index,
               std::size_t device_index, OpenClVariant variant, const std::filesystem::path& code = {});
  const DeviceInfo& info() const override { return info_; }
  const Capabilities& caps() const override { return caps_; }
  Expected<std::vector<std::uint64_t>> scalar(const ScalarBatch& batch) override;
  Expected<std::vector<std::uint64_t>> mma(const MmaBatch& batch) override;
  // Programs built so far (failed builds included): one per kernel source.
  std::size_t programs_built() const { return kernels_.size(); }

 private:
  Expected<cl::Kernel> kernel_for(const Expr& e);
  // Keeps the binary of a program built (kernel_code.hpp).
  void keep_binary(const cl::Program& program, const std::string& label) const;
  std::vector<std::uint64_t> run(cl::Kernel& kernel, const Expr& e, std::span<const std::uint64_t> operands);

  std::shared_ptr<const OpenClContext> cl_;
  OpenClVariant variant_;
  DeviceInfo info_;
  Capabilities caps_;
  KernelCode code_;
  std::map<std::string, Expected<cl::Kernel>> kernels_;  // by kernel source
};

class OpenClBackend final : public Backend {
 public:
  struct Options {
    // Caps the bytes of a batch's buffers below the device's limit (0: the device's), so that
    // tests can make a batch split.
    std::uint64_t max_buffer_bytes = 0;
    std::filesystem::path code = {};  // where the kernels' code is kept (kernel_code.hpp); empty: nowhere
  };
  explicit OpenClBackend(Options options);
  OpenClBackend() : OpenClBackend(Options{}) {}
  std::string name() const override { return "opencl"; }
  // Every device of every platform, in each variant. A platform or device that fails is noted in
  // problems(); an Error when no device at all is found, with every reason.
  Expected<std::vector<std::unique_ptr<Device>>> enumerate() override;
  // The platforms and devices the last enumerate() skipped, and why ("platform 2 (Clover): no device").
  const std::vector<std::string>& problems() const { return problems_; }

 private:
  Options options_;
  std::vector<std::string> problems_;
};

// The name of an OpenCL error code: "CL_BUILD_PROGRAM_FAILURE", or "error -9999" when unknown.
std::string opencl_error_name(cl_int code);

}  // namespace gp::backends
