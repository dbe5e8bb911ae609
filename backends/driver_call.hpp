// The driver call in progress, named so that a crash inside it can be reported as the driver's:
// a device's run in a child process (cli/contained_run.hpp) reads it from its fatal-signal handler.
// Backends name the calls that compile or run work, where a driver is known to crash.
#pragma once

#include <atomic>

namespace gp::backends {

class DriverCall {
 public:
  // name: a string literal ("vkCreateComputePipelines"). Test hook: a process whose environment
  // has GPUPARANOIA_CRASH_IN=<name> raises SIGSEGV in that call, as a crashing driver would
  // (<name>:<n>: in its n-th call only).
  explicit DriverCall(const char* name) noexcept;
  ~DriverCall() { current_.store(previous_); }
  DriverCall(const DriverCall&) = delete;
  DriverCall& operator=(const DriverCall&) = delete;
  // The innermost call in progress, nullptr outside any; async-signal-safe.
  static const char* in_progress() noexcept { return current_.load(); }

 private:
  static inline std::atomic<const char*> current_{nullptr};
  const char* previous_;
};

}  // namespace gp::backends
