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
// The differences of two results' profiles alone (compare_results' first part): "profile.scalar.
// binary32.add.rounding", "profile.mma.<config>.parameters.F".
std::vector<Difference> compare_profiles(const nlohmann::json& a, const nlohmann::json& b);
// A result's identified arithmetic as one text, equal for equal profiles: the profile's leaves
// without the validations' counts (random cases differ from run to run, the arithmetic does not).
std::string arithmetic_of(const nlohmann::json& doc);
// The findings whose status or verdict differ between a device and one of its variants (the same
// unit, its kernels compiled in another float mode: every difference is the compiler's), and those
// one side lacks; their parameters and the profile follow from them.
std::vector<Difference> changed_findings(const nlohmann::json& base, const nlohmann::json& variant);
// The account of them in a variant's report ("## " heading in Markdown), after its own.
std::string variant_text(const std::string& base_id, const std::string& mode, const std::vector<Difference>& changed,
                         bool markdown);
std::string comparison_text(const Comparison& c);
std::string comparison_markdown(const Comparison& c);

}  // namespace gp::audit
