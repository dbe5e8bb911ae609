// The Vulkan backend's cooperative-matrix path, on a device that offers VK_KHR_cooperative_matrix:
// Mesa 26's lavapipe from scripts/lavapipe26-fixture (GPUPARANOIA_LAVAPIPE26_ICD names its ICD json,
// which this test process alone takes as VK_DRIVER_FILES), or a GPU driver that has the extension.
// Skipped, with the reason, where there is none: Debian 12's lavapipe (Mesa 22.3) has no cooperative
// matrices.
//
// Tiles of small integers, whose products and sums are exact in every format, check the data path
// whatever the unit rounds: every element of A, B and C read from its place, D written row-major,
// every tile its own, batches split over buffers and dispatches. What the unit rounds is the MMA
// suite's business: the command line runs it on the device, and no probe may end in `error`.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <bit>
#include <cstdlib>
#include <random>

#include "backends/vulkan/vulkan_backend.hpp"
#include "model/ops.hpp"
#include "unittests/cli_run.hpp"

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
  f.why += "scripts/lavapipe26-fixture installs a lavapipe with cooperative matrices; export its json path as "
           "GPUPARANOIA_LAVAPIPE26_ICD";
  return f;
}

Found& found() {
  static Found f = find({});
  return f;
}

// An integer as raw bits of f (exact: the tiles hold small integers only).
std::uint64_t integer(const model::Format& f, int v) {
  return model::cvt(f, model::binary64, model::Options{}, std::bit_cast<std::uint64_t>(double(v))).bits;
}

struct Tiles {
  std::vector<std::uint64_t> a, b, c, d;  // d: the exact D
};

// Random tiles of integers in [-r, r] (c too), r = 2 where K products of 4 and c fit d's precision
// exactly, else 1.
Tiles exact_tiles(const MmaConfig& cfg, std::size_t tiles, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  const int r = 4 * cfg.k + 2 <= (1 << std::min(cfg.d->precision(), 30)) ? 2 : 1;
  const auto draw = [&] { return int(rng() % std::uint64_t(2 * r + 1)) - r; };
  const std::size_t m = std::size_t(cfg.m), n = std::size_t(cfg.n), k = std::size_t(cfg.k);
  Tiles t;
  for (std::size_t tile = 0; tile < tiles; ++tile) {
    std::vector<int> a(m * k), b(k * n), c(m * n);
    for (int& v : a) v = draw();
    for (int& v : b) v = draw();
    for (int& v : c) v = draw();
    for (const int v : a) t.a.push_back(integer(*cfg.a, v));
    for (const int v : b) t.b.push_back(integer(*cfg.b, v));
    for (const int v : c) t.c.push_back(integer(*cfg.c, v));
    for (std::size_t i = 0; i < m; ++i)
      for (std::size_t j = 0; j < n; ++j) {
        int sum = c[i * n + j];
        for (std::size_t p = 0; p < k; ++p) sum += a[i * k + p] * b[p * n + j];
        t.d.push_back(integer(*cfg.d, sum));
      }
  }
  return t;
}

void expect_exact(Device& device, const MmaConfig& cfg, std::size_t tiles, std::uint64_t seed) {
  const Tiles t = exact_tiles(cfg, tiles, seed);
  auto d = device.mma({&cfg, t.a, t.b, t.c});
  ASSERT_TRUE(d) << device.info().id << " " << cfg.name() << ": " << d.error().message;
  ASSERT_EQ(d->size(), t.d.size());
  int shown = 0;
  for (std::size_t i = 0; i < t.d.size(); ++i)
    if ((*d)[i] != t.d[i] && ++shown <= 5)
      ADD_FAILURE() << fmt::format("{} {}: tile {} element ({}, {}): got {:x}, exact {:x}", device.info().id, cfg.name(),
                                   i / std::size_t(cfg.m * cfg.n), i % std::size_t(cfg.m * cfg.n) / std::size_t(cfg.n),
                                   i % std::size_t(cfg.n), (*d)[i], t.d[i]);
}

TEST(VulkanMma, ExactTilesComeBackExactly) {
  if (!found().mma) GTEST_SKIP() << found().why;
  Device& d = *found().mma;
  for (const MmaConfig& cfg : d.caps().mma) {
    fmt::print("{} ({}): {}\n", d.info().id, d.info().driver, cfg.name());
    expect_exact(d, cfg, 37, 1);
  }
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
  Device& d = *found().mma;
  const MmaConfig& cfg = d.caps().mma.front();
  const std::vector<std::uint64_t> a(std::size_t(cfg.m * cfg.k)), b(std::size_t(cfg.k * cfg.n)), c(1);
  auto r = d.mma({&cfg, a, b, c});  // C holds too few elements
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("different numbers of tiles"), std::string::npos) << r.error().message;
  auto none = d.mma({&cfg, {}, {}, {}});
  ASSERT_TRUE(none) << none.error().message;
  EXPECT_TRUE(none->empty());
}

TEST(VulkanMma, CommandLineRunsTheQuickMmaSuite) {
  if (!found().mma) GTEST_SKIP() << found().why;
  const std::string id = found().mma->info().id;
  const testing::CliRun run = testing::run_cli(fmt::format("run --device '{}' --suite mma --quick --seed 1 --json {{json}}", id),
                                                 "gpuparanoia-vulkan-mma");
  EXPECT_EQ(run.exit_status, 0) << run.tail();
  ASSERT_TRUE(run.result.is_object()) << "no JSON result\n" << run.tail();
  const nlohmann::json& doc = run.result;
  for (const MmaConfig& cfg : found().mma->caps().mma) {
    std::size_t findings = 0;
    for (const auto& f : doc["findings"]) {
      if (f["config"] != cfg.name()) continue;
      ++findings;
      EXPECT_NE(f["status"], "error") << f["probe"] << " " << cfg.name() << ": " << f.value("message", "");
    }
    EXPECT_GT(findings, 0u) << "no finding for " << cfg.name();
  }
  fmt::print("{}", run.output);
}

}  // namespace
}  // namespace gp::backends
