// EGL and OpenGL opened at run time: libEGL.so.1 (or the file GPUPARANOIA_EGL_LIBRARY names), its
// eglGetProcAddress, and through it the EGL extension and OpenGL functions the backend calls (EGL
// 1.5 or EGL_KHR_get_all_proc_addresses give core GL functions that way). The build uses the
// headers alone (EGL_EGL_PROTOTYPES=0, and glcorearb.h declares no prototypes).
#pragma once

#include <EGL/egl.h>
#include <EGL/eglext.h>
#include <GL/glcorearb.h>

#include <string>

#include "backends/expected.hpp"

namespace gp::backends {

// X(pointer type, name)
// clang-format off
#define GP_EGL_FUNCTIONS(X)                                                                              \
  X(PFNEGLGETERRORPROC, eglGetError) X(PFNEGLQUERYSTRINGPROC, eglQueryString)                          \
  X(PFNEGLINITIALIZEPROC, eglInitialize) X(PFNEGLBINDAPIPROC, eglBindAPI)                              \
  X(PFNEGLCHOOSECONFIGPROC, eglChooseConfig) X(PFNEGLCREATECONTEXTPROC, eglCreateContext)              \
  X(PFNEGLDESTROYCONTEXTPROC, eglDestroyContext) X(PFNEGLMAKECURRENTPROC, eglMakeCurrent)

// Those of extensions: null where the library has none (the backend checks the extension first).
#define GP_EGL_EXTENSION_FUNCTIONS(X)                                                                    \
  X(PFNEGLQUERYDEVICESEXTPROC, eglQueryDevicesEXT) X(PFNEGLQUERYDEVICESTRINGEXTPROC, eglQueryDeviceStringEXT) \
  X(PFNEGLQUERYDEVICEATTRIBEXTPROC, eglQueryDeviceAttribEXT)                                          \
  X(PFNEGLGETPLATFORMDISPLAYEXTPROC, eglGetPlatformDisplayEXT)

#define GP_GL_FUNCTIONS(X)                                                                               \
  X(PFNGLGETERRORPROC, glGetError) X(PFNGLGETSTRINGPROC, glGetString) X(PFNGLGETINTEGERVPROC, glGetIntegerv) \
  X(PFNGLGETINTEGERI_VPROC, glGetIntegeri_v) X(PFNGLGETINTEGER64VPROC, glGetInteger64v)                \
  X(PFNGLCREATESHADERPROC, glCreateShader) X(PFNGLSHADERSOURCEPROC, glShaderSource)                    \
  X(PFNGLCOMPILESHADERPROC, glCompileShader) X(PFNGLGETSHADERIVPROC, glGetShaderiv)                    \
  X(PFNGLGETSHADERINFOLOGPROC, glGetShaderInfoLog) X(PFNGLDELETESHADERPROC, glDeleteShader)            \
  X(PFNGLCREATEPROGRAMPROC, glCreateProgram) X(PFNGLATTACHSHADERPROC, glAttachShader)                  \
  X(PFNGLLINKPROGRAMPROC, glLinkProgram) X(PFNGLGETPROGRAMIVPROC, glGetProgramiv)                      \
  X(PFNGLGETPROGRAMINFOLOGPROC, glGetProgramInfoLog) X(PFNGLDELETEPROGRAMPROC, glDeleteProgram)        \
  X(PFNGLUSEPROGRAMPROC, glUseProgram) X(PFNGLUNIFORM1UIPROC, glUniform1ui)                            \
  X(PFNGLGENBUFFERSPROC, glGenBuffers) X(PFNGLBINDBUFFERPROC, glBindBuffer)                            \
  X(PFNGLBINDBUFFERBASEPROC, glBindBufferBase) X(PFNGLBUFFERDATAPROC, glBufferData)                    \
  X(PFNGLGETBUFFERSUBDATAPROC, glGetBufferSubData) X(PFNGLDISPATCHCOMPUTEPROC, glDispatchCompute)      \
  X(PFNGLMEMORYBARRIERPROC, glMemoryBarrier)

// Those the backend does without: null where eglGetProcAddress gives none (GL 4.1's program
// binaries, which only `run --code` asks for).
#define GP_GL_OPTIONAL_FUNCTIONS(X)                                                                      \
  X(PFNGLGETPROGRAMBINARYPROC, glGetProgramBinary) X(PFNGLPROGRAMPARAMETERIPROC, glProgramParameteri)
// clang-format on

#define GP_GL_POINTER(type, name) type name = nullptr;
struct GlApi {
  std::string library;  // libEGL's file, as opened
  GP_EGL_FUNCTIONS(GP_GL_POINTER)
  GP_EGL_EXTENSION_FUNCTIONS(GP_GL_POINTER)
  GP_GL_FUNCTIONS(GP_GL_POINTER)
  GP_GL_OPTIONAL_FUNCTIONS(GP_GL_POINTER)
};
#undef GP_GL_POINTER

// The functions, loaded once per process, or why not: "libEGL.so.1 not found ...", a function missing.
Expected<const GlApi*> load_gl();

// The functions, once load_gl() has succeeded: the backend calls EGL and GL only after that.
const GlApi& gl();

}  // namespace gp::backends
