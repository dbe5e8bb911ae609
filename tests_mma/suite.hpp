// The MMA suite, a library of its own (gpuparanoia_mma_suite): its probes, registered one by one in
// registry.cpp in the order the report presents them, and the identification that judges them.
#pragma once

#include <span>

#include "audit/probe.hpp"
#include "tests_mma/identify.hpp"

namespace gp::mma {

std::span<const audit::MmaProbe* const> probes();

}  // namespace gp::mma
