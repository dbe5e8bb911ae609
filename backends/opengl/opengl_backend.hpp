// The OpenGL backend: GL 4.3+ core compute shaders generated from the
// expression IR (backends/kernel_source.hpp), on headless EGL contexts (egl_context.hpp).
//   opengl:<n>  one device per EGL device that gives a GL 4.3 core context (or Mesa's surfaceless
//               platform when none does): binary32, and binary64 where the context has doubles.
// OpenGL has no float-controls query and no cooperative-matrix operations: caps() names neither.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "backends/device.hpp"

namespace gp::backends {

class EglContext;

class OpenGLDevice final : public Device {
 public:
  OpenGLDevice(std::string id, std::unique_ptr<EglContext> context);
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
  Expected<std::uint32_t> program(const std::string& source);

  std::unique_ptr<EglContext> context_;
  DeviceInfo info_;
  Capabilities caps_;
  int local_size_ = 64;
  std::uint64_t max_groups_ = 0, max_block_bytes_ = 0;
  std::uint32_t buffers_[2] = {0, 0};                // operands, results
  std::map<std::string, std::uint32_t> programs_;  // linked programs by kernel source
};

class OpenGLBackend final : public Backend {
 public:
  std::string name() const override { return "opengl"; }
  Expected<std::vector<std::unique_ptr<Device>>> enumerate() override;
};

}  // namespace gp::backends
