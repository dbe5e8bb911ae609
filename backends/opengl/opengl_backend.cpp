#include "backends/opengl/opengl_backend.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "backends/driver_call.hpp"
#include "backends/kernel_source.hpp"
#include "backends/opengl/egl_context.hpp"
#include "backends/utf8.hpp"

namespace gp::backends {

namespace {

std::string gl_string(GLenum name) {
  const GLubyte* s = gl().glGetString(name);
  return s ? valid_utf8(reinterpret_cast<const char*>(s)) : "";
}

std::string gl_error_name(GLenum e) {
  switch (e) {
    case GL_INVALID_ENUM: return "GL_INVALID_ENUM";
    case GL_INVALID_VALUE: return "GL_INVALID_VALUE";
    case GL_INVALID_OPERATION: return "GL_INVALID_OPERATION";
    case GL_OUT_OF_MEMORY: return "GL_OUT_OF_MEMORY";
    case GL_CONTEXT_LOST: return "GL_CONTEXT_LOST";
    default: return fmt::format("GL error {:#x}", e);
  }
}

// The info log of a shader or a program.
template <class GetIv, class GetLog>
std::string info_log(GLuint object, GetIv get_iv, GetLog get_log) {
  GLint size = 0;
  get_iv(object, GL_INFO_LOG_LENGTH, &size);
  std::string log(std::size_t(std::max(size, 1)), '\0');
  GLsizei written = 0;
  get_log(object, GLsizei(log.size()), &written, log.data());
  log.resize(std::size_t(std::max(written, 0)));
  return valid_utf8(log);
}

}  // namespace

OpenGLDevice::OpenGLDevice(std::string id, std::unique_ptr<EglContext> context, const std::filesystem::path& code)
    : context_(std::move(context)), code_(code, id) {
  info_.id = std::move(id);
  if (code_.on()) info_.code = code_.folder().string();
  info_.backend = "opengl";
  info_.description = fmt::format("{}; EGL library {}", context_->route(), gl().library);
  const CurrentContext current(*context_);
  if (!current.error().empty()) {
    info_.description += "; " + current.error();  // no formats: every probe reports unsupported with this
    return;
  }
  info_.name = gl_string(GL_RENDERER);
  info_.vendor = gl_string(GL_VENDOR);
  info_.driver = gl_string(GL_VERSION);
  const int version = gl_version();
  info_.api =
      fmt::format("OpenGL {}.{} core, GLSL {}", version / 10, version % 10, gl_string(GL_SHADING_LANGUAGE_VERSION));
  caps_.formats.push_back(&model::binary32);
  // Doubles are core since GL 4.0, and every context here is 4.3 or later (create_context).
  if (language_has(Language::glsl_opengl, model::binary64)) caps_.formats.push_back(&model::binary64);
  GLint size = 0, invocations = 0, groups = 0;
  GLint64 block = 0;
  gl().glGetIntegeri_v(GL_MAX_COMPUTE_WORK_GROUP_SIZE, 0, &size);
  gl().glGetIntegerv(GL_MAX_COMPUTE_WORK_GROUP_INVOCATIONS, &invocations);
  gl().glGetIntegeri_v(GL_MAX_COMPUTE_WORK_GROUP_COUNT, 0, &groups);
  gl().glGetInteger64v(GL_MAX_SHADER_STORAGE_BLOCK_SIZE, &block);
  local_size_ = std::max(1, std::min({64, size, invocations}));
  max_groups_ = std::uint64_t(std::max(groups, 1));
  max_block_bytes_ = std::uint64_t(std::max<GLint64>(block, 8));
  gl().glGenBuffers(2, buffers_);
}

// The context's programs and buffers go with it.
OpenGLDevice::~OpenGLDevice() = default;

std::size_t OpenGLDevice::max_dispatch_tuples(const Expr& e) const {
  const std::uint64_t in_bytes = 4u * std::uint64_t(e.inputs) * std::uint64_t(words_per_value(*e.input_format));
  const std::uint64_t out_bytes = 4u * std::uint64_t(words_per_value(*e.output_format));
  const std::uint64_t n = std::min({max_groups_ * std::uint64_t(local_size_), max_block_bytes_ / in_bytes,
                                    max_block_bytes_ / out_bytes, std::uint64_t(std::numeric_limits<GLuint>::max())});
  return std::size_t(std::max<std::uint64_t>(n, 1));
}

Expected<std::vector<std::uint64_t>> OpenGLDevice::scalar(const ScalarBatch& batch) {
  const Expr& e = *batch.expr;
  if (const std::string why = e.check(); !why.empty()) return Error{why, ErrorKind::invalid};
  for (const model::Format* f : e.formats())
    if (!caps_.has(*f))
      return Error{fmt::format("{} does not compute in {}", info_.id, f->name), ErrorKind::unsupported};
  auto source = kernel_source(e, Language::glsl_opengl, local_size_);
  if (!source) return source.error();
  return run_kernel(*source, batch);
}

Expected<std::vector<std::uint64_t>> OpenGLDevice::run_kernel(const std::string& source, const ScalarBatch& batch) {
  const Expr& e = *batch.expr;
  if (const std::string why = e.check(); !why.empty()) return Error{why, ErrorKind::invalid};
  const std::size_t inputs = std::size_t(e.inputs);
  if (batch.operands.size() % inputs != 0)
    return Error{"operand count is not a multiple of the inputs", ErrorKind::invalid};
  const std::size_t n = batch.operands.size() / inputs;
  if (n == 0) return std::vector<std::uint64_t>{};
  const CurrentContext current(*context_);
  if (!current.error().empty()) return Error{info_.id + ": " + current.error()};
  // An error left by an earlier failed call is not this call's (GL_CONTEXT_LOST may repeat: bounded).
  for (int i = 0; i < 8 && gl().glGetError() != GL_NO_ERROR; ++i) {
  }
  auto program_id = program(source, e.to_string());
  if (!program_id)
    return program_id.error().retold(
        fmt::format("{}: the kernel of '{}': {}", info_.id, e.to_string(), program_id.error().message));
  const std::size_t in_words = inputs * std::size_t(words_per_value(*e.input_format));
  const std::size_t out_words = std::size_t(words_per_value(*e.output_format));
  const std::vector<std::uint32_t> words = to_words(*e.input_format, batch.operands);
  std::vector<std::uint32_t> results(n * out_words);
  const std::size_t chunk = max_dispatch_tuples(e), local = std::size_t(local_size_);
  gl().glUseProgram(*program_id);
  // One upload, dispatch and read-back per chunk, so base stays 0 and each chunk fits both limits.
  gl().glUniform1ui(0, 0);
  for (std::size_t first = 0; first < n; first += chunk) {
    const std::size_t m = std::min(chunk, n - first);
    gl().glBindBuffer(GL_SHADER_STORAGE_BUFFER, buffers_[0]);
    gl().glBufferData(GL_SHADER_STORAGE_BUFFER, GLsizeiptr(m * in_words * 4), &words[first * in_words], GL_STREAM_DRAW);
    gl().glBindBuffer(GL_SHADER_STORAGE_BUFFER, buffers_[1]);
    gl().glBufferData(GL_SHADER_STORAGE_BUFFER, GLsizeiptr(m * out_words * 4), nullptr, GL_STREAM_READ);
    gl().glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 0, buffers_[0]);
    gl().glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 1, buffers_[1]);
    gl().glUniform1ui(1, GLuint(m));
    const DriverCall running("glDispatchCompute");
    gl().glDispatchCompute(GLuint((m + local - 1) / local), 1, 1);
    gl().glMemoryBarrier(GL_BUFFER_UPDATE_BARRIER_BIT);
    gl().glGetBufferSubData(GL_SHADER_STORAGE_BUFFER, 0, GLsizeiptr(m * out_words * 4), &results[first * out_words]);
    if (const GLenum error = gl().glGetError(); error != GL_NO_ERROR)
      return Error{fmt::format("{}: {} running '{}' on tuples {} to {}", info_.id, gl_error_name(error), e.to_string(),
                               first, first + m - 1),
                   error == GL_CONTEXT_LOST ? ErrorKind::lost : ErrorKind::failed};
  }
  return from_words(*e.output_format, results);
}

Expected<std::uint32_t> OpenGLDevice::program(const std::string& source, const std::string& label) {
  if (const auto it = programs_.find(source); it != programs_.end()) return it->second;
  code_.keep(label, ".comp", source);  // before the compilation: a compiler that crashes leaves it too
  const GLuint shader = gl().glCreateShader(GL_COMPUTE_SHADER);
  const char* text = source.c_str();
  gl().glShaderSource(shader, 1, &text, nullptr);
  const DriverCall compiling("glCompileShader");
  gl().glCompileShader(shader);
  GLint ok = 0;
  gl().glGetShaderiv(shader, GL_COMPILE_STATUS, &ok);
  if (!ok) {
    const std::string log = info_log(shader, gl().glGetShaderiv, gl().glGetShaderInfoLog);
    gl().glDeleteShader(shader);
    return Error{"GLSL compilation failed: " + log, ErrorKind::compile};
  }
  const GLuint p = gl().glCreateProgram();
  gl().glAttachShader(p, shader);
  if (code_.on() && gl().glProgramParameteri) gl().glProgramParameteri(p, GL_PROGRAM_BINARY_RETRIEVABLE_HINT, GL_TRUE);
  const DriverCall linking("glLinkProgram");
  gl().glLinkProgram(p);
  gl().glDeleteShader(shader);
  gl().glGetProgramiv(p, GL_LINK_STATUS, &ok);
  if (!ok) {
    const std::string log = info_log(p, gl().glGetProgramiv, gl().glGetProgramInfoLog);
    gl().glDeleteProgram(p);
    return Error{"GLSL link failed: " + log, ErrorKind::compile};
  }
  if (code_.on()) keep_binary(p, label);
  programs_.emplace(source, p);
  return p;
}

// The program's binary in the driver's own format, where it has one (GL_NUM_PROGRAM_BINARY_FORMATS).
void OpenGLDevice::keep_binary(GLuint program, const std::string& label) const {
  GLint formats = 0, length = 0;
  gl().glGetIntegerv(GL_NUM_PROGRAM_BINARY_FORMATS, &formats);
  if (!gl().glGetProgramBinary || formats <= 0) return;  // the source alone
  gl().glGetProgramiv(program, GL_PROGRAM_BINARY_LENGTH, &length);
  std::string binary(std::size_t(std::max(length, 0)), '\0');
  GLsizei written = 0;
  GLenum format = 0;
  const DriverCall getting("glGetProgramBinary");
  if (length > 0) gl().glGetProgramBinary(program, length, &written, &format, binary.data());
  binary.resize(std::size_t(std::max(written, 0)));
  if (const GLenum error = gl().glGetError(); error != GL_NO_ERROR || binary.empty()) {
    fmt::print(stderr, "gpuparanoia: warning: {} gives no program binary of '{}'{}\n", info_.id, label,
               error != GL_NO_ERROR ? " (" + gl_error_name(error) + ")" : "");
    return;
  }
  code_.keep(label, ".bin", binary);
}

Expected<std::vector<std::uint64_t>> OpenGLDevice::mma(const MmaBatch&) {
  return Error{"OpenGL has no cooperative-matrix operations", ErrorKind::unsupported};
}

Expected<std::vector<std::unique_ptr<Device>>> OpenGLBackend::enumerate() {
  auto contexts = headless_contexts();
  if (!contexts) return contexts.error();
  std::vector<std::unique_ptr<Device>> devices;
  for (auto& c : *contexts)
    devices.push_back(
        std::make_unique<OpenGLDevice>("opengl:" + std::to_string(devices.size()), std::move(c), options_.code));
  return devices;
}

}  // namespace gp::backends
