// The Vulkan backend's cooperative-matrix path, on a device that offers VK_KHR_cooperative_matrix:
// Mesa 26's lavapipe from scripts/lavapipe26-fixture (GPUPARANOIA_LAVAPIPE26_ICD names its ICD json,
// which this test process alone takes as VK_DRIVER_FILES), or a GPU driver that has the extension.
// Skipped, with the reason, where there is none: Debian 12's lavapipe (Mesa 22.3) has no cooperative
// matrices.
//
// The checks of unittests/backend_checks.hpp (exact integer tiles, errors, the quick MMA suite from the
// command line), on the device and its float-control variants, batches split over buffers and
// dispatches, and the validation layers' silence where scripts/vulkan-validation-fixture installed them.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <string_view>

#include "backends/vulkan/vulkan_backend.hpp"
#include "unittests/backend_checks.hpp"

namespace gp::backends {
namespace {

struct Found {
  std::vector<std::unique_ptr<Device>> devices;
  Device* mma = nullptr;  // the first device with cooperative matrices
  std::string why;        // why there is none
};

Found find(VulkanBackend::Options options) {
  if (const char* icd = std::getenv("GPUPARANOIA_LAVAPIPE26_ICD"); icd && *icd) setenv("VK_DRIVER_FILES", icd, 1);
  Found f;
  auto devices = VulkanBackend(options).enumerate();
  if (!devices) {
    f.why = "no Vulkan device: " + devices.error().message;
    return f;
  }
  f.devices = std::move(*devices);
  for (const auto& d : f.devices) {
    if (!d->caps().mma.empty() && !f.mma) f.mma = d.get();
    if (!d->caps().mma_unsupported.empty()) f.why += fmt::format("{}: {}; ", d->info().id, d->caps().mma_unsupported);
  }
  f.why +=
      "scripts/lavapipe26-fixture installs a lavapipe with cooperative matrices; export its json path as "
      "GPUPARANOIA_LAVAPIPE26_ICD";
  return f;
}

Found& found() {
  static Found f = find({});
  return f;
}

using testing::expect_exact;

TEST(VulkanMma, ExactTilesComeBackExactly) {
  if (!found().mma) GTEST_SKIP() << found().why;
  Device& d = *found().mma;
  for (const MmaConfig& cfg : d.caps().mma) {
    fmt::print("{} ({}): {}\n", d.info().id, d.info().driver, cfg.name());
    expect_exact(d, cfg, 37, 1);
  }
}

// The float-control variants (vulkan:0+rte, ...) run the configurations whose formats they compute
// in, the modules requesting their mode: lavapipe 26 claims rte and signed-zero-inf-nan-preserve.
std::vector<Device*> variants() {
  std::vector<Device*> v;
  for (const auto& d : found().devices)
    if (d->info().id.starts_with(found().mma->info().id + "+")) v.push_back(d.get());
  return v;
}

TEST(VulkanMma, VariantsRunTheConfigurationsOfTheirFormats) {
  if (!found().mma) GTEST_SKIP() << found().why;
  if (variants().empty()) GTEST_SKIP() << found().mma->info().id << " claims no float-control mode";
  for (Device* v : variants()) {
    std::vector<std::string> expected, got;
    for (const MmaConfig& cfg : found().mma->caps().mma)
      if (v->caps().has(*cfg.a) && v->caps().has(*cfg.b) && v->caps().has(*cfg.c) && v->caps().has(*cfg.d))
        expected.push_back(cfg.name());
    for (const MmaConfig& cfg : v->caps().mma) got.push_back(cfg.name());
    EXPECT_EQ(got, expected) << v->info().id << ": " << v->info().description;
    for (const MmaConfig& cfg : v->caps().mma) {
      fmt::print("{}: {}\n", v->info().id, cfg.name());
      expect_exact(*v, cfg, 37, 1);
    }
  }
}

TEST(VulkanMma, CommandLineRunsTheQuickMmaSuiteOnAVariant) {
  if (!found().mma) GTEST_SKIP() << found().why;
  for (Device* v : variants())
    if (!v->caps().mma.empty()) return testing::expect_quick_mma_suite(*v, "gpuparanoia-vulkan-mma-variant");
  GTEST_SKIP() << "no float-control variant with cooperative matrices";
}

// Under the Vulkan validation layers of scripts/vulkan-validation-fixture (GPUPARANOIA_VALIDATION_LAYER_PATH),
// which know VK_KHR_cooperative_matrix: every configuration of the device and of its variants runs,
// and the layers report no error through VK_EXT_debug_utils. The loader's messages show that the
// layer was inserted.
TEST(VulkanMma, ValidationLayersReportNoError) {
  const char* layers = std::getenv("GPUPARANOIA_VALIDATION_LAYER_PATH");
  if (!layers || !*layers)
    GTEST_SKIP() << "GPUPARANOIA_VALIDATION_LAYER_PATH is unset: scripts/vulkan-validation-fixture installs "
                    "validation layers that know VK_KHR_cooperative_matrix (README, Tests)";
  if (!found().mma) GTEST_SKIP() << found().why;
  std::vector<std::string> errors;
  bool inserted = false;
  {
    setenv("VK_LAYER_PATH", layers, 1);
    setenv("VK_INSTANCE_LAYERS", "VK_LAYER_KHRONOS_validation", 1);
    Found validated = find({.debug_messages = [&](bool error, std::string_view message) {
      if (error) errors.emplace_back(message);
      inserted |= message.find("Insert instance layer \"VK_LAYER_KHRONOS_validation\"") != std::string_view::npos;
    }});
    unsetenv("VK_INSTANCE_LAYERS");
    unsetenv("VK_LAYER_PATH");
    ASSERT_TRUE(validated.mma) << validated.why;
    for (const auto& d : validated.devices)
      for (const MmaConfig& cfg : d->caps().mma) {
        fmt::print("{} under the validation layers: {}\n", d->info().id, cfg.name());
        expect_exact(*d, cfg, 37, 1);
      }
  }  // the devices and the instance go: their messages too
  EXPECT_TRUE(inserted) << "the loader never inserted VK_LAYER_KHRONOS_validation from " << layers;
  EXPECT_TRUE(errors.empty()) << fmt::format("{}", fmt::join(errors, "\n"));
}

TEST(VulkanMma, BatchesSplitOverBuffersAndDispatches) {
  if (!found().mma) GTEST_SKIP() << found().why;
  // 1 KiB buffers and 2 workgroups (tiles) per dispatch: 37 tiles take many of each.
  static Found small = find({.max_buffer_bytes = 1024, .max_workgroups = 2});
  ASSERT_TRUE(small.mma) << small.why;
  for (const MmaConfig& cfg : small.mma->caps().mma) expect_exact(*small.mma, cfg, 37, 2);
}

TEST(VulkanMma, FailuresAreErrors) {
  if (!found().mma) GTEST_SKIP() << found().why;
  testing::expect_mma_failures_are_errors(*found().mma);
}

TEST(VulkanMma, CommandLineRunsTheQuickMmaSuite) {
  if (!found().mma) GTEST_SKIP() << found().why;
  testing::expect_quick_mma_suite(*found().mma, "gpuparanoia-vulkan-mma");
}

// The fourth submission of each child crashes, inside some probe of each configuration in turn.
TEST(VulkanMma, ADriverCrashEndsOnlyTheConfigurationItHit) {
  if (!found().mma) GTEST_SKIP() << found().why;
  testing::expect_mma_crashes_contained(*found().mma, "vkQueueSubmit", 4, "gpuparanoia-vulkan-mma-crash");
}

}  // namespace
}  // namespace gp::backends
