// The MMA suite, a library of its own (gpuparanoia_mma_suite): its probes, registered one by one in
// registry.cpp in the order the report presents them (the identification that judges them is
// tests_mma/identify/, gpuparanoia_identify).
#pragma once

#include <span>
#include <string_view>

#include "audit/probe.hpp"

namespace gp::mma {

std::span<const audit::MmaProbe* const> probes();
// The suite's probe of that id, or null (a result document names probes by id).
const audit::MmaProbe* probe(std::string_view id);

}  // namespace gp::mma
