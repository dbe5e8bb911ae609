// The one interface through which probes reach a device.
//
// Lifecycle: a Backend enumerates its Devices once; a Device is queried for info() and caps()
// (cheap, no side effects), then evaluates any number of batches. A batch that the device cannot
// run returns an Error (the probe reports `error`, the run goes on); what it does not support is
// known beforehand from caps(), so that probes report `unsupported` without trying.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "backends/expected.hpp"
#include "backends/expr.hpp"
#include "model/format.hpp"

namespace gp::backends {

struct DeviceInfo {
  std::string id;       // "ref:nvidia-g70", "vulkan:0", "opencl:0:1"
  std::string backend;  // "reference", "vulkan", "opengl", "opencl", "cuda"
  std::string name;
  std::string vendor;
  std::string driver;
  std::string api;
  std::string description;  // one line on what the device is (reference profiles: their source)
  // What a source published of the device, by "<probe id> <format or config>" (the 7800GTX log's
  // error bounds): reports show it beside the probe's own finding.
  std::map<std::string, std::string> published;
  // The folder its kernels' compiled code is kept in (kernel_code.hpp), "" when none is kept.
  std::string code;
  // What tells this device from others of its model, where the API gives it (a fleet's results are
  // grouped by it): device_uuid, driver_uuid, pci_bus ("0000:65:00.0"), vendor_id, device_id.
  std::map<std::string, std::string> identity;
};

// An MMA configuration: D (MxN, d format) = A (MxK, a) * B (KxN, b) + C (MxN, c).
struct MmaConfig {
  int m = 0, n = 0, k = 0;
  const model::Format *a = nullptr, *b = nullptr, *c = nullptr, *d = nullptr;
  std::string scope = "subgroup";
  std::string instruction;  // the instruction the configuration runs, where known ("hopper:HMMA.16816.F32")
  // "16x16x16:binary16,binary16,binary32,binary32", the `config` key of the JSON (section 7).
  // Inline: the profile library, which the Python module links alone, writes and reads it too.
  std::string name() const {
    return std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k) + ":" + std::string(a->name) + "," +
           std::string(b->name) + "," + std::string(c->name) + "," + std::string(d->name);
  }
};

struct Capabilities {
  std::vector<const model::Format*> formats;  // formats the device computes in
  // Float-controls the device claims (VK_KHR_shader_float_controls, OpenCL denorm flags), as
  // "key": "value" pairs for the report; probes compare them with what it does.
  std::map<std::string, std::string> float_controls;
  std::vector<MmaConfig> mma;
  // Why `mma` is empty on a device that could have cooperative matrices (no extension, a missing
  // feature): the MMA suite reports it as `unsupported`. Empty where the question does not arise.
  // Where `mma` is not empty, the configurations the device has but the backend cannot run, and why
  // (CUDA: a compiler that cannot target them).
  std::string mma_unsupported;

  bool has(const model::Format& f) const;
};

// n tuples of expr.inputs operands (raw bits of expr.input_format), operand-major per tuple.
struct ScalarBatch {
  const Expr* expr;
  std::span<const std::uint64_t> operands;  // size n * expr->inputs
};

// n independent tiles of one configuration, row-major: A (MxK), B (KxN), C (MxN) per tile.
struct MmaBatch {
  const MmaConfig* config;
  std::span<const std::uint64_t> a, b, c;
};

// The checks every backend makes before it runs a batch.
// n, or why a device cannot run the batch: a malformed expression, operands that are not whole
// tuples, a format the device does not compute in.
Expected<std::size_t> tuples(const ScalarBatch& batch, const DeviceInfo& info, const Capabilities& caps);
// n, or an Error when A, B and C hold different numbers of tiles.
Expected<std::size_t> tiles(const MmaBatch& batch);

// A 16-byte UUID as DeviceInfo::identity writes it: "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx".
std::string uuid_text(std::span<const unsigned char, 16> bytes);

class Device {
 public:
  virtual ~Device() = default;
  virtual const DeviceInfo& info() const = 0;
  virtual const Capabilities& caps() const = 0;
  // The raw result bits of the expression for each tuple.
  virtual Expected<std::vector<std::uint64_t>> scalar(const ScalarBatch& batch) = 0;
  // D's raw bits, row-major per tile.
  virtual Expected<std::vector<std::uint64_t>> mma(const MmaBatch& batch) = 0;
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string name() const = 0;
  // The devices found, or why none can be (no library, no driver): an Error is not a failure of
  // the run, it is reported by `gpuparanoia devices`.
  virtual Expected<std::vector<std::unique_ptr<Device>>> enumerate() = 0;
};

struct BackendOptions {
  std::vector<std::filesystem::path> profile_files;  // user profiles for the reference backend
  // Where the API backends keep their kernels' compiled code (kernel_code.hpp); empty: nowhere.
  std::filesystem::path code;
};

// Every backend compiled in, the reference backend first.
Expected<std::vector<std::unique_ptr<Backend>>> all_backends(const BackendOptions& options);

}  // namespace gp::backends
