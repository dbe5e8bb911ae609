#include "backends/device.hpp"

#include <algorithm>

#include "backends/reference/reference_backend.hpp"

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
  return v;
}

}  // namespace gp::backends
