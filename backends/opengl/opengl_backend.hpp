// The OpenGL backend: GL 4.3+ core compute shaders generated from the
// expression IR (backends/kernel_source.hpp), on headless EGL contexts (egl_context.hpp).
//   opengl:<n>  one device per EGL device that gives a GL 4.3 core context (or Mesa's surfaceless
//               platform when none does): binary32, and binary64 where the context has doubles.
// OpenGL has no float-controls query and no cooperative-matrix operations: caps() names neither.
// With `run --code DIR` (kernel_code.hpp), each compute shader's source is kept before it compiles,
// and the linked program's binary (glGetProgramBinary, GL 4.1) where the driver has a binary format.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <string>

#include "backends/device.hpp"
#include "backends/kernel_code.hpp"

namespace gp::backends {

class EglContext;

class OpenGLDevice final : public Device {
 public:
  // Its kernels' code is kept under `code` unless empty.
  OpenGLDevice(std::string id, std::unique_ptr<EglContext> context, const std::filesystem::path& code = {});
  ~OpenGLDevice() override;
  const DeviceInfo& info() const override { return info_; }
  const Capabilities& caps() const override { return caps_; }
  Expected<std::vector<std::uint64_t>> scalar(const ScalarBatch& batch) override;
  Expected<std::vector<std::uint64_t>> mma(const MmaBatch& batch) override;

  // Runs GLSL source of kernel_source's glsl_opengl interface on the batch: what scalar() does with
  // the generated kernel. A source that does not compile is an Error carrying the info log.
  Expected<std::vector<std::uint64_t>> run_kernel(const std::string& source, const ScalarBatch& batch);
  // Tuples one dispatch takes at most (the workgroup count and storage block limits): larger batches
  // run as several dispatches.
  std::size_t max_dispatch_tuples(const Expr& e) const;

 private:
  // The linked program of a source, made once; `label` names its code kept.
  Expected<std::uint32_t> program(const std::string& source, const std::string& label);
  void keep_binary(std::uint32_t program, const std::string& label) const;

  std::unique_ptr<EglContext> context_;
  DeviceInfo info_;
  Capabilities caps_;
  KernelCode code_;
  int local_size_ = 64;
  std::uint64_t max_groups_ = 0, max_block_bytes_ = 0;
  std::uint32_t buffers_[2] = {0, 0};              // operands, results
  std::map<std::string, std::uint32_t> programs_;  // linked programs by kernel source
};

class OpenGLBackend final : public Backend {
 public:
  struct Options {
    std::filesystem::path code = {};  // where the kernels' code is kept (kernel_code.hpp); empty: nowhere
  };
  explicit OpenGLBackend(Options options) : options_(std::move(options)) {}
  OpenGLBackend() : OpenGLBackend(Options{}) {}
  std::string name() const override { return "opengl"; }
  Expected<std::vector<std::unique_ptr<Device>>> enumerate() override;

 private:
  Options options_;
};

}  // namespace gp::backends
