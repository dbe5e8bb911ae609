#include "audit/host_cpu.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string_view>

namespace gp::audit {

namespace {

// Features an LLVM JIT uses for floating-point code. x86: rounding instructions (SSE4.1), vector
// width (AVX, AVX2, AVX-512: reductions and contraction across lanes), FMA contraction, binary16
// conversions (F16C) and arithmetic (AVX512-FP16), bfloat16 conversions (AVX512-BF16, which flush
// subnormals), the 2^-28 reciprocal estimates of AVX512-ER. AArch64: binary16 arithmetic (fphp,
// asimdhp, asimdfhm), bfloat16 (bf16), scalable vectors (sve, sve2).
constexpr std::string_view kRelevant[] = {"sse4_1",   "avx",         "avx2",        "fma",      "fma4",
                                          "f16c",     "avx512f",     "avx512dq",    "avx512bw", "avx512vl",
                                          "avx512er", "avx512_bf16", "avx512_fp16", "fphp",     "asimdhp",
                                          "asimdfhm", "bf16",        "sve",         "sve2"};

HostCpu read_host_cpu() {
  HostCpu h;
  if (utsname u{}; uname(&u) == 0) h.arch = u.machine;
  // The first processor's block (up to the first empty line): "model name" (x86; AArch64 has none)
  // and "flags" (x86) or "Features" (AArch64).
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line) && !line.empty();) {
    const std::size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    const std::string key = line.substr(0, line.find_last_not_of(" \t", colon - 1) + 1);
    const std::string value = line.substr(std::min(colon + 2, line.size()));
    if (key == "model name") h.model = value;
    if (key != "flags" && key != "Features") continue;
    std::istringstream words(value);
    for (std::string w; words >> w;)
      if (std::find(std::begin(kRelevant), std::end(kRelevant), w) != std::end(kRelevant)) h.features.push_back(w);
  }
  std::sort(h.features.begin(), h.features.end());
  return h;
}

}  // namespace

std::string host_name() {
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0) return "";
  return name;
}

const HostCpu& host_cpu() {
  static const HostCpu h = read_host_cpu();
  return h;
}

nlohmann::json to_json(const HostCpu& h) { return {{"arch", h.arch}, {"cpu", h.model}, {"features", h.features}}; }

std::string host_differs(const nlohmann::json& recorded) {
  if (!recorded.is_object() || !recorded.contains("features") || !recorded["features"].is_array())
    return "the result does not record its host CPU's features";
  const HostCpu& here = host_cpu();
  const std::string arch = recorded.value("arch", "");
  if (arch != here.arch) return fmt::format("the result is of an {} host, this one is {}", arch, here.arch);
  std::vector<std::string> theirs;
  for (const auto& f : recorded["features"])
    if (f.is_string()) theirs.push_back(f.get<std::string>());
  std::sort(theirs.begin(), theirs.end());
  if (theirs == here.features) return "";
  std::vector<std::string> only_there, only_here;
  std::set_difference(theirs.begin(), theirs.end(), here.features.begin(), here.features.end(),
                      std::back_inserter(only_there));
  std::set_difference(here.features.begin(), here.features.end(), theirs.begin(), theirs.end(),
                      std::back_inserter(only_here));
  return fmt::format("the result's host CPU ({}) has other features: [{}] there only, [{}] here only",
                     recorded.value("cpu", "?"), fmt::join(only_there, " "), fmt::join(only_here, " "));
}

}  // namespace gp::audit
