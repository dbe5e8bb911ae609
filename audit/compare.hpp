// What differs between two result documents (`gpuparanoia compare`): two
// devices, or two runs of one device (a driver update, a regression). Findings are matched by probe
// and target (format or MMA configuration); the inferred profiles key by key; parameters leaf by
// leaf. What changes from run to run by nature (times, durations, observations, tool version) is
// not a difference.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace gp::audit {

struct Difference {
  std::string where;  // "profile.scalar.binary32.add.guard_bits", "scalar.add.guard_bits [binary32] verdict"
  std::string a, b;   // the values, rendered; "(absent)" where one side has none
};

struct Comparison {
  std::string a_name, b_name;  // "vulkan:0 (llvmpipe ..., driver ...)"
  std::vector<Difference> differences;
  int compared_findings = 0;
};

Comparison compare_results(const nlohmann::json& a, const nlohmann::json& b);
std::string comparison_text(const Comparison& c);
std::string comparison_markdown(const Comparison& c);

}  // namespace gp::audit
