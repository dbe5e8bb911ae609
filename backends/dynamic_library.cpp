#include "backends/dynamic_library.hpp"

#include <dlfcn.h>
#include <fmt/format.h>
#include <link.h>

#include <cstdlib>

namespace gp::backends {

namespace {

// The file behind a handle, as the dynamic linker resolved it; the name asked for when unknown.
std::string opened_path(void* handle, const char* asked) {
  link_map* map = nullptr;
  if (dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map && map->l_name && *map->l_name) return map->l_name;
  return asked;
}

}  // namespace

void* DynamicLibrary::symbol(const char* name) const { return dlsym(handle, name); }

Expected<DynamicLibrary> open_library(const char* variable, std::initializer_list<const char*> names) {
  if (const char* file = std::getenv(variable); file && *file) {
    if (void* handle = dlopen(file, RTLD_NOW | RTLD_LOCAL)) return DynamicLibrary{handle, opened_path(handle, file)};
    return Error{fmt::format("{}={} could not be opened: {}", variable, file, dlerror()), ErrorKind::unsupported};
  }
  std::string why;
  for (const char* name : names) {
    if (void* handle = dlopen(name, RTLD_NOW | RTLD_LOCAL)) return DynamicLibrary{handle, opened_path(handle, name)};
    why += fmt::format("{}{}", why.empty() ? "" : "; ", dlerror());
  }
  return Error{fmt::format("{} not found (set {} to its file): {}", fmt::join(names, " or "), variable, why),
               ErrorKind::unsupported};
}

}  // namespace gp::backends
