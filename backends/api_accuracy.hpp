// What a device's API lets its compiler do with x / y and sqrt: the accuracy the specification
// requires of the operation as written in a kernel. A driver may compile these to reciprocal and
// inverse-square-root sequences, so a finding about them describes the compiled operation, and its
// report states the measured error beside this allowance.
#pragma once

#include <optional>
#include <string>

#include "backends/device.hpp"
#include "model/ops.hpp"

namespace gp::backends {

struct Allowance {
  std::string api;             // "OpenCL", "Vulkan", "OpenGL", "CUDA"
  std::optional<double> ulps;  // the bound, where the specification gives one number (0: correctly rounded)
  std::string text;            // "2.5 ulp", "correctly rounded", "inherited from 1.0 / inversesqrt() (2 ulp)"
};

// The allowance of op (div or sqrt) in format f on the device (its backend, and for OpenCL its build
// options), or nullopt where no specification is known for it (reference devices, other ops).
std::optional<Allowance> api_allowance(const DeviceInfo& info, const Capabilities& caps, const model::Format& f,
                                       model::Op op);

// The message of a division or square root finding on a driver: "describes x / y as the driver
// compiles it; OpenCL's allowance in binary32: 2.5 ulp". Empty for reference devices and other ops.
std::string compiled_operation_note(const DeviceInfo& info, const Capabilities& caps, const model::Format& f,
                                    model::Op op);

}  // namespace gp::backends
