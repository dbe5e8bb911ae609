#include "backends/opengl/gl_api.hpp"

#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>

#include "backends/dynamic_library.hpp"

namespace gp::backends {

namespace {

Expected<GlApi> load() {
  auto library = open_library("GPUPARANOIA_EGL_LIBRARY", {"libEGL.so.1"});
  if (!library) return library.error();
  const auto get = reinterpret_cast<PFNEGLGETPROCADDRESSPROC>(library->symbol("eglGetProcAddress"));
  if (!get)
    return Error{fmt::format("{} has no eglGetProcAddress: not an EGL library", library->path), ErrorKind::unsupported};
  GlApi api;
  api.library = library->path;
  // Core EGL functions are exported; eglGetProcAddress gives them too from EGL 1.5 on.
#define GP_GL_EGL(type, name)                                                                                      \
  if (!(api.name = reinterpret_cast<type>(library->symbol(#name)))) api.name = reinterpret_cast<type>(get(#name)); \
  if (!api.name) return Error{fmt::format("{} has no {}", api.library, #name), ErrorKind::unsupported};
  GP_EGL_FUNCTIONS(GP_GL_EGL)
#undef GP_GL_EGL
#define GP_GL_EXTENSION(type, name) api.name = reinterpret_cast<type>(get(#name));
  GP_EGL_EXTENSION_FUNCTIONS(GP_GL_EXTENSION)
  GP_GL_OPTIONAL_FUNCTIONS(GP_GL_EXTENSION)
#undef GP_GL_EXTENSION
#define GP_GL_GL(type, name)                                                                                         \
  if (!(api.name = reinterpret_cast<type>(get(#name))))                                                              \
    return Error{fmt::format("{}: eglGetProcAddress gives no {} (EGL 1.5 or EGL_KHR_get_all_proc_addresses needed)", \
                             api.library, #name),                                                                    \
                 ErrorKind::unsupported};
  GP_GL_FUNCTIONS(GP_GL_GL)
#undef GP_GL_GL
  return api;
}

const Expected<GlApi>& loaded() {
  static const Expected<GlApi> api = load();
  return api;
}

}  // namespace

Expected<const GlApi*> load_gl() {
  if (!loaded()) return loaded().error();
  return &*loaded();
}

const GlApi& gl() {
  if (!loaded()) {
    std::fprintf(stderr, "gpuparanoia: OpenGL called without its library: %s\n", loaded().error().message.c_str());
    std::abort();
  }
  return *loaded();
}

}  // namespace gp::backends
