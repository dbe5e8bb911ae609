// The scalar suite, a library of its own (gpuparanoia_scalar_suite): its probes, registered one by
// one in registry.cpp in the order the report presents them.
#pragma once

#include <nlohmann/json.hpp>
#include <span>

#include "audit/probe.hpp"
#include "audit/validation.hpp"

namespace gp::scalar {

std::span<const audit::ScalarProbe* const> probes();

// What a register probe's finding read of its format's registers, into r (the profile's assembly,
// audit/validation.hpp): this run's from its typed answer, a resumed run's held finding from its
// parameters as the document holds them (the answer's fields). Other findings leave r as it is.
void read_registers(const audit::Finding& f, audit::RegisterReading& r);
void read_registers(const nlohmann::json& held, audit::RegisterReading& r);

}  // namespace gp::scalar
