// The compiled code of each kernel, kept beside the result (`gpuparanoia run --code DIR`), so that
// a reader of an audit can see which instructions the driver ran (a fused multiply-add, an
// approximate reciprocal): under DIR, one folder per device, and in it one or more files per kernel
// named after the kernel's label (a scalar expression's to_string(), an MMA configuration's name).
// What each backend keeps, where its driver gives it:
//   CUDA     <label>.<target>.cubin, or .ptx where the driver compiles the PTX
//   Vulkan   <label>.spv (the module submitted), and with VK_KHR_pipeline_executable_properties
//            <label>.executables.txt (each executable's properties, statistics and text
//            representations) and <label>.<executable>.<representation>.bin (binary ones)
//   OpenCL   <label>.cl (the source), <label>.bin (CL_PROGRAM_BINARIES)
//   OpenGL   <label>.comp (the source), <label>.bin (glGetProgramBinary)
// Each file is written once, when its kernel is compiled, atomically (file_write.hpp). A file that
// cannot be written is a warning on stderr, never an error of the batch: the audit goes on.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

namespace gp::backends {

// A label as a file name: characters outside [A-Za-z0-9.+-] become '_' (":" of device ids
// included: "vulkan:0+rte" -> "vulkan_0+rte"). Where that could make two labels meet (a character
// other than ':' replaced, or a '_' in the label) or the label is longer than 160 bytes, the name
// is cut at 160 bytes and ends with '-' and a hash of the whole label, so that names stay unique
// and within the 255 bytes of a file name.
std::string file_stem(std::string_view label);

// Where one device keeps its kernels' code: off by default (nothing written, no cost).
class KernelCode {
 public:
  KernelCode() = default;
  // The device's folder DIR/<file_stem(device id)>, made on the first write; off when `root` is empty.
  KernelCode(const std::filesystem::path& root, std::string_view device_id);
  bool on() const { return !folder_.empty(); }
  const std::filesystem::path& folder() const { return folder_; }
  // Writes `bytes` to <folder>/<file_stem(label)><suffix>; false, after a warning on stderr, when
  // that fails. Nothing when off.
  bool keep(std::string_view label, std::string_view suffix, std::string_view bytes) const;

 private:
  std::filesystem::path folder_;
};

}  // namespace gp::backends
