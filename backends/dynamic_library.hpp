// GPU APIs opened at run time (dlopen), so that the program has no load-time dependency on a driver
// and starts where there is none: what is missing becomes an Error naming the library. Libraries are
// never closed: drivers keep state past their last call, and leak reports need their modules mapped.
#pragma once

#include <initializer_list>
#include <string>

#include "backends/expected.hpp"

namespace gp::backends {

struct DynamicLibrary {
  void* handle = nullptr;
  std::string path;  // the file the dynamic linker opened: "/usr/lib/x86_64-linux-gnu/libvulkan.so.1"

  // The address of `symbol`, or null.
  void* symbol(const char* name) const;
};

// Opens a library: the file the environment variable `variable` names when it is set (and nothing
// else then, so that a bundle's choice is never silently replaced), else the first of `names` the
// dynamic linker finds. The Error says what was tried and why each failed: "libvulkan.so.1 not
// found: ...", "GPUPARANOIA_VULKAN_LIBRARY=/x/libvulkan.so.1: ...".
Expected<DynamicLibrary> open_library(const char* variable, std::initializer_list<const char*> names);

}  // namespace gp::backends
