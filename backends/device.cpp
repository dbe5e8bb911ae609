#include "backends/device.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "backends/reference/reference_backend.hpp"
#ifdef GPUPARANOIA_HAVE_OPENGL
#include "backends/opengl/opengl_backend.hpp"
#endif
#ifdef GPUPARANOIA_HAVE_OPENCL
#include "backends/opencl/opencl_backend.hpp"
#endif
#ifdef GPUPARANOIA_HAVE_VULKAN
#include "backends/vulkan/vulkan_backend.hpp"
#endif
#ifdef GPUPARANOIA_HAVE_CUDA
#include "backends/cuda/cuda_backend.hpp"
#endif

namespace gp::backends {

std::string uuid_text(std::span<const unsigned char, 16> b) {
  std::string s;
  for (std::size_t i = 0; i < b.size(); ++i)
    s += fmt::format("{}{:02x}", i == 4 || i == 6 || i == 8 || i == 10 ? "-" : "", b[i]);
  return s;
}

bool Capabilities::has(const model::Format& f) const {
  return std::find(formats.begin(), formats.end(), &f) != formats.end();
}

Expected<std::size_t> tuples(const ScalarBatch& batch, const DeviceInfo& info, const Capabilities& caps) {
  const Expr& e = *batch.expr;
  if (const std::string why = e.check(); !why.empty()) return Error{why, ErrorKind::invalid};
  if (batch.operands.size() % std::size_t(e.inputs) != 0)
    return Error{"operand count is not a multiple of the inputs", ErrorKind::invalid};
  for (const model::Format* f : e.formats())
    if (!caps.has(*f)) return Error{fmt::format("{} does not compute in {}", info.id, f->name), ErrorKind::unsupported};
  return batch.operands.size() / std::size_t(e.inputs);
}

Expected<std::size_t> tiles(const MmaBatch& batch) {
  const MmaConfig& cfg = *batch.config;
  const std::size_t sa = std::size_t(cfg.m) * cfg.k, sb = std::size_t(cfg.k) * cfg.n, sc = std::size_t(cfg.m) * cfg.n;
  if (batch.a.size() % sa || batch.b.size() != batch.a.size() / sa * sb || batch.c.size() != batch.a.size() / sa * sc)
    return Error{"A, B and C hold different numbers of tiles", ErrorKind::invalid};
  return batch.a.size() / sa;
}

Expected<std::vector<std::unique_ptr<Backend>>> all_backends(const BackendOptions& options) {
  std::vector<std::unique_ptr<Backend>> v;
  v.push_back(std::make_unique<ReferenceBackend>(options.profile_files));
#ifdef GPUPARANOIA_HAVE_OPENGL
  v.push_back(std::make_unique<OpenGLBackend>(OpenGLBackend::Options{.code = options.code}));
#endif
#ifdef GPUPARANOIA_HAVE_OPENCL
  v.push_back(std::make_unique<OpenClBackend>(OpenClBackend::Options{.code = options.code}));
#endif
#ifdef GPUPARANOIA_HAVE_VULKAN
  v.push_back(std::make_unique<VulkanBackend>(VulkanBackend::Options{.code = options.code}));
#endif
#ifdef GPUPARANOIA_HAVE_CUDA
  v.push_back(std::make_unique<CudaBackend>(CudaBackend::Options{.code = options.code}));
#endif
  return v;
}

}  // namespace gp::backends
