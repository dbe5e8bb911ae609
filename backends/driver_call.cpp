#include "backends/driver_call.hpp"

#include <csignal>
#include <cstdlib>
#include <cstring>
#include <string>

namespace gp::backends {

namespace {

// GPUPARANOIA_CRASH_IN=<name>[:<n>]: the call that crashes, and on which of its calls (every one
// by default, the n-th of the process with :n).
struct CrashHook {
  std::string name;
  long nth = 0;
  std::atomic<long> calls{0};
  CrashHook() {
    const char* v = std::getenv("GPUPARANOIA_CRASH_IN");
    if (!v) return;
    name = v;
    if (const auto colon = name.find(':'); colon != std::string::npos) {
      nth = std::strtol(name.c_str() + colon + 1, nullptr, 10);
      name.resize(colon);
    }
  }
};

}  // namespace

DriverCall::DriverCall(const char* name) noexcept : previous_(current_.exchange(name)) {
  static CrashHook hook;
  if (!hook.name.empty() && hook.name == name && (hook.nth <= 0 || ++hook.calls == hook.nth)) std::raise(SIGSEGV);
}

}  // namespace gp::backends
