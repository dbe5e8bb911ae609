#include "backends/device.hpp"

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

namespace gp::backends {

std::string MmaConfig::name() const {
  return std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k) + ":" + std::string(a->name) + "," +
         std::string(b->name) + "," + std::string(c->name) + "," + std::string(d->name);
}

bool Capabilities::has(const model::Format& f) const {
  return std::find(formats.begin(), formats.end(), &f) != formats.end();
}

Expected<std::vector<std::unique_ptr<Backend>>> all_backends(const BackendOptions& options) {
  std::vector<std::unique_ptr<Backend>> v;
  v.push_back(std::make_unique<ReferenceBackend>(options.profile_files));
#ifdef GPUPARANOIA_HAVE_OPENGL
  v.push_back(std::make_unique<OpenGLBackend>());
#endif
#ifdef GPUPARANOIA_HAVE_OPENCL
  v.push_back(std::make_unique<OpenClBackend>());
#endif
#ifdef GPUPARANOIA_HAVE_VULKAN
  v.push_back(std::make_unique<VulkanBackend>());
#endif
  return v;
}

}  // namespace gp::backends
