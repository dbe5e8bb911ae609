// Headless OpenGL 4.3+ core contexts through EGL, for the OpenGL backend.
//
// Routes, in order: the EGL device platform (one context per EGL device: a GPU, or Mesa's software
// device), then, only when it gives none, Mesa's surfaceless platform. No window and no display
// server is needed. Entry points come from libEGL, opened at run time (gl_api.hpp).
//
// GL contexts are current per thread: a context is made current for each use (CurrentContext) and
// released after it, so that any thread may use it, one at a time.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "backends/expected.hpp"
#include "backends/opengl/gl_api.hpp"

namespace gp::backends {

class EglContext {
 public:
  EglContext(EGLDisplay display, EGLContext context, std::string route);
  ~EglContext();
  EglContext(const EglContext&) = delete;
  EglContext& operator=(const EglContext&) = delete;

  // How the context was made: "EGL device 0 (software)", "EGL device 1 (/dev/dri/card0)",
  // "EGL surfaceless (Mesa)".
  const std::string& route() const { return route_; }
  EGLDisplay display() const { return display_; }
  EGLContext context() const { return context_; }

 private:
  EGLDisplay display_;
  EGLContext context_;
  std::string route_;
};

// Makes a context current on the calling thread for the scope's lifetime.
class CurrentContext {
 public:
  explicit CurrentContext(const EglContext& c);
  ~CurrentContext();
  CurrentContext(const CurrentContext&) = delete;
  CurrentContext& operator=(const CurrentContext&) = delete;
  // Why the context could not be made current (lost, or current on another thread), or "".
  const std::string& error() const { return error_; }

 private:
  EGLDisplay display_;
  std::string error_;
};

// The OpenGL version of the current context as 10 * major + minor (43 for 4.3), read from GL_VERSION
// ("4.5 (Core Profile) Mesa 22.3.6"); 0 when it cannot be read.
int gl_version();

// The routes: a context per EGL device (a device listed twice, same renderer and same DRM node or
// CUDA ordinal, counts once), and Mesa's surfaceless platform (a render node with a driver, or
// llvmpipe). Each says why it gives nothing.
Expected<std::vector<std::unique_ptr<EglContext>>> device_platform_contexts();
Expected<std::unique_ptr<EglContext>> surfaceless_context();
// The contexts of the EGL device platform, or else the surfaceless one, or why there is none (no
// EGL library among them).
Expected<std::vector<std::unique_ptr<EglContext>>> headless_contexts();

}  // namespace gp::backends
