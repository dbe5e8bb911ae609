// The scalar suite, a library of its own (gpuparanoia_scalar_suite): its probes, registered one by
// one in registry.cpp in the order the report presents them.
#pragma once

#include <span>

#include "audit/probe.hpp"

namespace gp::scalar {

std::span<const audit::ScalarProbe* const> probes();

}  // namespace gp::scalar
