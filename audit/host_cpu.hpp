// The host CPU as far as it decides a CPU driver's arithmetic: llvmpipe, lavapipe, PoCL and rusticl
// compile kernels for the CPU they run on, so that whether a*b+c contracts to an FMA, how binary16
// converts and how wide a reduction runs follow its instruction set. Results record it (the `host`
// key) and the regression test compares only results of a host with the same features.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace gp::audit {

struct HostCpu {
  std::string arch;   // "x86_64", "aarch64" (uname)
  std::string model;  // the CPU's model name, for the reader; not compared
  // The features that change the code an LLVM JIT generates for floating point (/proc/cpuinfo
  // names, sorted); the others (crypto, virtualisation...) are left out so that hosts alike in
  // arithmetic compare equal.
  std::vector<std::string> features;
};

// This machine's name (gethostname), "" when it has none.
std::string host_name();

// This machine's CPU (read once).
const HostCpu& host_cpu();
nlohmann::json to_json(const HostCpu& h);

// Whether a result's `host` object is of a CPU with this machine's arithmetic-relevant features;
// the reason when it is not ("" when it is).
std::string host_differs(const nlohmann::json& recorded);

}  // namespace gp::audit
