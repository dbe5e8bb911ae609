#include "backends/opengl/egl_context.hpp"

#include <fmt/format.h>

#include <cstdio>
#include <set>
#include <string_view>
#include <utility>

#include "backends/utf8.hpp"

namespace gp::backends {

namespace {

std::string egl_error() {
  static constexpr const char* names[] = {"EGL_SUCCESS",       "EGL_NOT_INITIALIZED",     "EGL_BAD_ACCESS",
                                          "EGL_BAD_ALLOC",     "EGL_BAD_ATTRIBUTE",       "EGL_BAD_CONFIG",
                                          "EGL_BAD_CONTEXT",   "EGL_BAD_CURRENT_SURFACE", "EGL_BAD_DISPLAY",
                                          "EGL_BAD_MATCH",     "EGL_BAD_NATIVE_PIXMAP",   "EGL_BAD_NATIVE_WINDOW",
                                          "EGL_BAD_PARAMETER", "EGL_BAD_SURFACE",         "EGL_CONTEXT_LOST"};
  const EGLint e = gl().eglGetError();
  if (e >= EGL_SUCCESS && e <= EGL_CONTEXT_LOST) return names[e - EGL_SUCCESS];
  return fmt::format("EGL error {:#x}", e);
}

// Whether a space-separated extension list holds `name` as a whole word.
bool has_word(const char* list, std::string_view name) {
  std::string_view s = list ? list : "";
  for (std::size_t at = s.find(name); at != std::string_view::npos; at = s.find(name, at + 1)) {
    const std::size_t end = at + name.size();
    if ((at == 0 || s[at - 1] == ' ') && (end == s.size() || s[end] == ' ')) return true;
  }
  return false;
}

// Whether the display's EGL extensions (the client extensions for EGL_NO_DISPLAY) include `name`.
bool has_egl_extension(EGLDisplay display, std::string_view name) {
  return has_word(gl().eglQueryString(display, EGL_EXTENSIONS), name);
}

// What tells one EGL device from another: its DRM node, its CUDA ordinal (NVIDIA without the DRM
// module), or Mesa's software device. Two identical GPUs have the same GL_RENDERER, so this is what
// keeps them apart while one device is not listed twice.
std::string device_identity(EGLDeviceEXT d) {
  const char* ext = gl().eglQueryDeviceStringEXT(d, EGL_EXTENSIONS);
  if (has_word(ext, "EGL_EXT_device_drm"))
    if (const char* file = gl().eglQueryDeviceStringEXT(d, EGL_DRM_DEVICE_FILE_EXT)) return file;
  EGLAttrib cuda = 0;
  if (has_word(ext, "EGL_NV_device_cuda") && gl().eglQueryDeviceAttribEXT(d, EGL_CUDA_DEVICE_NV, &cuda))
    return fmt::format("CUDA device {}", cuda);
  if (has_word(ext, "EGL_MESA_device_software")) return "software";
  return ext ? ext : "";
}

// A GL 4.3 core context without a surface on an EGL display, checked by making it current.
Expected<std::unique_ptr<EglContext>> create_context(EGLDisplay display, const std::string& route) {
  if (display == EGL_NO_DISPLAY)
    return Error{fmt::format("{}: no display ({})", route, egl_error()), ErrorKind::unsupported};
  // Displays are never terminated: eglGetPlatformDisplay gives every caller the same display for a
  // device, and eglTerminate would destroy the contexts of every device built on it.
  EGLint major = 0, minor = 0;
  if (!gl().eglInitialize(display, &major, &minor))
    return Error{fmt::format("{}: eglInitialize: {}", route, egl_error())};
  const auto has = [&](const char* ext) { return has_egl_extension(display, ext); };
  if (!has("EGL_KHR_surfaceless_context"))
    return Error{route + ": no EGL_KHR_surfaceless_context", ErrorKind::unsupported};
  if (major * 10 + minor < 15 && !has("EGL_KHR_create_context"))
    return Error{fmt::format("{}: EGL {}.{} without EGL_KHR_create_context", route, major, minor),
                 ErrorKind::unsupported};
  if (!gl().eglBindAPI(EGL_OPENGL_API))
    return Error{route + ": no desktop OpenGL (eglBindAPI: " + egl_error() + ")", ErrorKind::unsupported};
  EGLConfig config = EGL_NO_CONFIG_KHR;
  if (!has("EGL_KHR_no_config_context")) {
    const EGLint want[] = {EGL_RENDERABLE_TYPE, EGL_OPENGL_BIT, EGL_NONE};
    EGLint n = 0;
    if (!gl().eglChooseConfig(display, want, &config, 1, &n) || n < 1)
      return Error{route + ": no config renders OpenGL", ErrorKind::unsupported};
  }
  const EGLint attributes[] = {
      EGL_CONTEXT_MAJOR_VERSION,           4,       EGL_CONTEXT_MINOR_VERSION, 3, EGL_CONTEXT_OPENGL_PROFILE_MASK,
      EGL_CONTEXT_OPENGL_CORE_PROFILE_BIT, EGL_NONE};
  const EGLContext context = gl().eglCreateContext(display, config, EGL_NO_CONTEXT, attributes);
  if (context == EGL_NO_CONTEXT)
    return Error{fmt::format("{}: no OpenGL 4.3 core context ({})", route, egl_error()), ErrorKind::unsupported};
  auto c = std::make_unique<EglContext>(display, context, route);
  const CurrentContext current(*c);
  if (!current.error().empty()) return Error{route + ": " + current.error()};
  if (const int version = gl_version(); version < 43)
    return Error{fmt::format("{}: OpenGL {}.{} only", route, version / 10, version % 10), ErrorKind::unsupported};
  return c;
}

std::string renderer_of(const EglContext& c) {
  const CurrentContext current(c);
  const GLubyte* s = current.error().empty() ? gl().glGetString(GL_RENDERER) : nullptr;
  return s ? valid_utf8(reinterpret_cast<const char*>(s)) : "";
}

}  // namespace

int gl_version() {
  const auto* s = reinterpret_cast<const char*>(gl().glGetString(GL_VERSION));
  int major = 0, minor = 0;
  if (!s || std::sscanf(s, "%d.%d", &major, &minor) != 2) return 0;
  return major * 10 + minor;
}

EglContext::EglContext(EGLDisplay display, EGLContext context, std::string route)
    : display_(display), context_(context), route_(std::move(route)) {}

EglContext::~EglContext() { gl().eglDestroyContext(display_, context_); }

CurrentContext::CurrentContext(const EglContext& c) : display_(c.display()) {
  // The bound API is per thread, and eglMakeCurrent acts on the context of the bound API.
  if (!gl().eglBindAPI(EGL_OPENGL_API) || !gl().eglMakeCurrent(display_, EGL_NO_SURFACE, EGL_NO_SURFACE, c.context()))
    error_ = "eglMakeCurrent: " + egl_error();
}

CurrentContext::~CurrentContext() {
  if (error_.empty()) gl().eglMakeCurrent(display_, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
}

Expected<std::vector<std::unique_ptr<EglContext>>> device_platform_contexts() {
  if (auto api = load_gl(); !api) return api.error();
  if (!has_egl_extension(EGL_NO_DISPLAY, "EGL_EXT_device_enumeration") ||
      !has_egl_extension(EGL_NO_DISPLAY, "EGL_EXT_platform_device") || !gl().eglQueryDevicesEXT ||
      !gl().eglQueryDeviceStringEXT || !gl().eglQueryDeviceAttribEXT || !gl().eglGetPlatformDisplayEXT)
    return Error{"EGL device platform: EGL_EXT_device_enumeration or EGL_EXT_platform_device missing",
                 ErrorKind::unsupported};
  EGLint n = 0;
  std::vector<EGLDeviceEXT> devices;
  if (gl().eglQueryDevicesEXT(0, nullptr, &n) && n > 0) {
    devices.resize(std::size_t(n));
    if (!gl().eglQueryDevicesEXT(n, devices.data(), &n)) n = 0;
    devices.resize(std::size_t(n));
  }
  if (devices.empty()) return Error{"EGL device platform: no device", ErrorKind::unsupported};
  std::vector<std::unique_ptr<EglContext>> found;
  std::string why;
  std::set<std::string> seen;  // renderer and device identity
  for (std::size_t i = 0; i < devices.size(); ++i) {
    const std::string identity = valid_utf8(device_identity(devices[i]));
    auto c = create_context(gl().eglGetPlatformDisplayEXT(EGL_PLATFORM_DEVICE_EXT, devices[i], nullptr),
                            fmt::format("EGL device {} ({})", i, identity));
    if (!c)
      why += (why.empty() ? "" : "; ") + c.error().message;
    else if (seen.insert(renderer_of(**c) + "\n" + identity).second)
      found.push_back(std::move(*c));
  }
  if (found.empty()) return Error{why, ErrorKind::unsupported};
  return found;
}

Expected<std::unique_ptr<EglContext>> surfaceless_context() {
  if (auto api = load_gl(); !api) return api.error();
  if (!has_egl_extension(EGL_NO_DISPLAY, "EGL_MESA_platform_surfaceless") || !gl().eglGetPlatformDisplayEXT)
    return Error{"EGL surfaceless: EGL_MESA_platform_surfaceless missing", ErrorKind::unsupported};
  return create_context(gl().eglGetPlatformDisplayEXT(EGL_PLATFORM_SURFACELESS_MESA, EGL_DEFAULT_DISPLAY, nullptr),
                        "EGL surfaceless (Mesa)");
}

Expected<std::vector<std::unique_ptr<EglContext>>> headless_contexts() {
  if (auto api = load_gl(); !api) return api.error();
  auto devices = device_platform_contexts();
  if (devices) return devices;
  auto surfaceless = surfaceless_context();
  if (!surfaceless)
    return Error{"no headless OpenGL 4.3 core context; " + devices.error().message + "; " + surfaceless.error().message,
                 ErrorKind::unsupported};
  std::vector<std::unique_ptr<EglContext>> found;
  found.push_back(std::move(*surfaceless));
  return found;
}

}  // namespace gp::backends
