// The reference backend's devices for the tests, enumerated once per test program.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "backends/reference/reference_backend.hpp"

namespace gp::testing {

inline std::vector<std::unique_ptr<backends::Device>>& reference_devices() {
  static std::vector<std::unique_ptr<backends::Device>> d = [] {
    auto r = backends::ReferenceBackend().enumerate();
    EXPECT_TRUE(r.ok());
    return r.ok() ? std::move(*r) : std::vector<std::unique_ptr<backends::Device>>{};
  }();
  return d;
}

// The device `ref:<name>`: "nvidia-g70", "hopper:HMMA.16816.F32".
inline backends::Device& reference_device(std::string_view name) {
  for (auto& d : reference_devices())
    if (d->info().id == "ref:" + std::string(name)) return *d;
  throw std::runtime_error("no device ref:" + std::string(name));
}

}  // namespace gp::testing
