// Regression: every committed result in results/ of a device this machine has, with the same name
// and driver, on a host CPU with the same arithmetic features, is audited afresh with the same suite,
// tier and seed, and must come out the same; a difference fails with `gpuparanoia compare`'s account
// of it; and `gpuparanoia check` against it passes. Devices this machine lacks, or has with another driver, and results
// of a host CPU with other features (a CPU driver's arithmetic follows them, audit/host_cpu.hpp), are skipped with the
// reason.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "audit/report/compare.hpp"
#include "audit/host_cpu.hpp"
#include "audit/result.hpp"
#include "unittests/cli_run.hpp"

namespace gp {
namespace {

using nlohmann::json;

// A JSON file of results/ that declares another schema (the fits of results/matlab-tensor-core) is
// no audit; any other is taken for one, so that a damaged result still fails.
bool another_schema(const std::filesystem::path& p) {
  std::ifstream in(p);
  const json doc = json::parse(in, nullptr, false);
  return doc.is_object() && doc.contains("schema") && doc["schema"].is_string() &&
         doc["schema"].get<std::string>() != audit::kSchema;
}

std::vector<std::filesystem::path> committed_results() {
  std::vector<std::filesystem::path> v;
  if (!std::filesystem::is_directory(GPUPARANOIA_RESULTS_DIR)) return v;
  for (const auto& e : std::filesystem::recursive_directory_iterator(GPUPARANOIA_RESULTS_DIR))
    if (e.path().extension() == ".json" && !another_schema(e.path())) v.push_back(e.path());
  std::sort(v.begin(), v.end());
  return v;
}

class Regression : public ::testing::TestWithParam<std::filesystem::path> {
 protected:
  // The committed result, and the environment that gives this machine its device (same id, name
  // and driver, on a host of the same arithmetic features), or why there is none (`skip`).
  struct Here {
    json old;
    std::string env, skip;
  };
  Here device_here(const std::string& name) const {
    Here h;
    std::ifstream in(GetParam());
    h.old = json::parse(in, nullptr, false);
    if (!h.old.is_object() || !h.old.contains("device") || !h.old.contains("run")) {
      ADD_FAILURE() << GetParam() << " is no result";
      h.skip = "no result";
      return h;
    }
    const json& dev = h.old["device"];
    if (dev.value("backend", "") == "reference")
      return {h.old, "", "a reference device: the model's own tests cover it"};
    if (const std::string why = audit::host_differs(h.old.value("host", json())); !why.empty())
      return {h.old, "", why + ": not comparable on this host"};
    const std::string id = dev["id"];
    // A Vulkan result may be of the lavapipe fixture's driver (GPUPARANOIA_LAVAPIPE26_ICD, README).
    std::vector<std::string> envs = {""};
    if (const char* icd = std::getenv("GPUPARANOIA_LAVAPIPE26_ICD");
        icd && *icd && dev.value("backend", "") == "vulkan")
      envs.push_back(fmt::format("VK_DRIVER_FILES='{}'", icd));
    std::string seen;
    for (const std::string& e : envs) {
      const testing::CliRun devices = testing::run_cli("devices --all", name + "-devices", e);
      const std::string& out = devices.output;
      const std::size_t line = out.starts_with(id + " ") ? 0 : out.find("\n" + id + " ");
      if (line == std::string::npos) continue;
      const std::size_t at = line == 0 ? 0 : line + 1;
      const std::string here = out.substr(at, out.find('\n', out.find('\n', at) + 1) - at);
      seen += here + "\n";
      if (here.find(dev.value("name", "?")) != std::string::npos &&
          here.find(dev.value("driver", "?")) != std::string::npos)
        return {h.old, e, ""};
    }
    h.skip = fmt::format("the result is of {}, {}, driver {}; here: {}", id, dev["name"].dump(), dev["driver"].dump(),
                         seen.empty() ? "no such device" : seen);
    return h;
  }
  // Each test its own folders: ctest runs them side by side.
  std::string folder(const char* what) const {
    return fmt::format("regression-{}-{}-{}", what, GetParam().parent_path().filename().string(),
                       GetParam().stem().string());
  }
};

TEST_P(Regression, AFreshAuditIsTheSame) {
  const std::string name = folder("audit");
  const Here h = device_here(name);
  if (!h.skip.empty()) GTEST_SKIP() << h.skip;
  const json& old = h.old;
  const json& run = old["run"];
  const std::string tier = run.value("tier", "standard");
  const testing::CliRun now = testing::run_cli(
      fmt::format("run --device '{}' --suite {} --seed {} {} --json {{json}}", old["device"]["id"].get<std::string>(),
                  run.value("suite", "all"), run["seed"].get<std::uint64_t>(),
                  tier == "quick"  ? "--quick"
                  : tier == "full" ? "--full"
                                   : ""),
      name, h.env);
  ASSERT_TRUE(now.result.is_object()) << now.tail();
  const audit::Comparison c = audit::compare_results(old, now.result);
  EXPECT_TRUE(c.differences.empty()) << "gpuparanoia compare " << GetParam() << " <fresh run>:\n"
                                     << audit::comparison_text(c);
  EXPECT_GT(c.compared_findings, 0);
}

// `gpuparanoia check` against the committed result: the device still computes as recorded (a few
// seconds of random cases, a fixed seed); a unit whose recorded profile mispredicted it is not checked.
TEST_P(Regression, ACheckAgainstItPasses) {
  const std::string name = folder("check");
  const Here h = device_here(name);
  if (!h.skip.empty()) GTEST_SKIP() << h.skip;
  const testing::CliRun check = testing::run_cli(
      fmt::format("check --against '{}' --seconds 4 --seed 1 --json {{json}}", GetParam().string()), name, h.env);
  EXPECT_EQ(check.exit_status, 0) << check.tail();
  ASSERT_TRUE(check.result.is_object()) << check.tail();
  EXPECT_FALSE(check.result["findings"].empty());
}

INSTANTIATE_TEST_SUITE_P(Results, Regression, ::testing::ValuesIn(committed_results()), [](const auto& param_info) {
  const std::filesystem::path& p = param_info.param;
  std::string n = p.parent_path().filename().string() + "_" + p.stem().string();
  for (char& ch : n)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return n;
});
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(Regression);

}  // namespace
}  // namespace gp
