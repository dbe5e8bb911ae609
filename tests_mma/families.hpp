// The MMA probe families; each file of tests_mma/ adds its probes to the registry.
#pragma once

#include <vector>

#include "audit/probe.hpp"

namespace gp::mma {

}  // namespace gp::mma
