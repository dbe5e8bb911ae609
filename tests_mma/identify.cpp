#include "audit/probe.hpp"

namespace gp::audit {

Finding identify_mma(backends::Device&, const backends::MmaConfig&, std::span<const Finding>, const ProbeContext&,
                     nlohmann::json&) {
  return unsupported("MMA identification is being written");
}

}  // namespace gp::audit
