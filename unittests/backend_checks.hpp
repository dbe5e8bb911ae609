// Checks that every backend's tests make, whatever the device computes: failures as Error values,
// and for the MMA path (Vulkan's cooperative matrices, CUDA's mma.sync and wmma) exact tiles and the
// quick MMA suite from the command line.
//
// Tiles of small integers, whose products and sums are exact in every format, check the data path:
// every element of A, B and C read from its place, D written row-major, every tile its own. What the
// unit rounds is the MMA suite's business: the command line runs it on the device, and no probe may
// end in `error`.
#pragma once

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "backends/device.hpp"
#include "backends/kernel_code.hpp"
#include "model/ops.hpp"
#include "unittests/cli_run.hpp"

namespace gp::testing {

// What a device kept of a kernel's code (run --code, backends/kernel_code.hpp): the file
// <label's file stem><suffix> of its folder, "" when there is none.
inline std::string kept_code(const backends::Device& d, std::string_view label, std::string_view suffix) {
  std::ifstream in(std::filesystem::path(d.info().code) / (backends::file_stem(label) + std::string(suffix)),
                   std::ios::binary);
  return in ? std::string(std::istreambuf_iterator<char>(in), {}) : std::string();
}

// An integer as raw bits of f (exact: the tiles hold small integers only).
inline std::uint64_t integer(const model::Format& f, int v) {
  return model::cvt(f, model::binary64, model::Options{}, std::bit_cast<std::uint64_t>(double(v))).bits;
}

struct Tiles {
  std::vector<std::uint64_t> a, b, c, d;  // d: the exact D
};

// Random tiles of integers in [-r, r] (c too), r = 2 where K products of 4 and c fit d's precision
// exactly, else 1.
inline Tiles exact_tiles(const backends::MmaConfig& cfg, std::size_t tiles, std::uint64_t seed) {
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

inline void expect_exact(backends::Device& device, const backends::MmaConfig& cfg, std::size_t tiles,
                         std::uint64_t seed) {
  const Tiles t = exact_tiles(cfg, tiles, seed);
  auto d = device.mma({&cfg, t.a, t.b, t.c});
  ASSERT_TRUE(d) << device.info().id << " " << cfg.name() << ": " << d.error().message;
  ASSERT_EQ(d->size(), t.d.size());
  int shown = 0;
  for (std::size_t i = 0; i < t.d.size(); ++i)
    if ((*d)[i] != t.d[i] && ++shown <= 5)
      ADD_FAILURE() << fmt::format("{} {}: tile {} element ({}, {}): got {:x}, exact {:x}", device.info().id,
                                   cfg.name(), i / std::size_t(cfg.m * cfg.n),
                                   i % std::size_t(cfg.m * cfg.n) / std::size_t(cfg.n), i % std::size_t(cfg.n), (*d)[i],
                                   t.d[i]);
}

// A format the device lacks (unsupported) and a malformed batch (invalid) are Errors, an empty batch
// an empty result.
inline void expect_scalar_failures_are_errors(backends::Device& device) {
  using backends::Node;
  const std::vector<std::uint64_t> x = {0x3f800000, 0x40000000};
  for (const model::Format* f : {&model::binary16, &model::binary64, &model::bfloat16})
    if (!device.caps().has(*f)) {
      const backends::Expr g = backends::binary(Node::add, *f);
      auto missing = device.scalar({&g, x});
      ASSERT_FALSE(missing);
      EXPECT_NE(missing.error().message.find("does not compute in"), std::string::npos) << missing.error().message;
      EXPECT_EQ(missing.error().kind, ErrorKind::unsupported);
    }
  const backends::Expr e = backends::binary(Node::add, model::binary32);
  auto malformed = device.scalar({&e, std::vector<std::uint64_t>{1, 2, 3}});
  ASSERT_FALSE(malformed);
  EXPECT_EQ(malformed.error().kind, ErrorKind::invalid) << malformed.error().message;
  auto none = device.scalar({&e, {}});
  ASSERT_TRUE(none);
  EXPECT_TRUE(none->empty());
}

// A malformed batch is an Error, an empty one an empty result.
inline void expect_mma_failures_are_errors(backends::Device& device) {
  const backends::MmaConfig& cfg = device.caps().mma.front();
  const std::vector<std::uint64_t> a(std::size_t(cfg.m * cfg.k)), b(std::size_t(cfg.k * cfg.n)), c(1);
  auto r = device.mma({&cfg, a, b, c});  // C holds too few elements
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("different numbers of tiles"), std::string::npos) << r.error().message;
  EXPECT_EQ(r.error().kind, ErrorKind::invalid);
  auto none = device.mma({&cfg, {}, {}, {}});
  ASSERT_TRUE(none) << none.error().message;
  EXPECT_TRUE(none->empty());
}

// `gpuparanoia run --suite mma --quick` on the device: every configuration has findings, none `error`.
inline void expect_quick_mma_suite(const backends::Device& device, const std::string& folder) {
  const CliRun run =
      run_cli(fmt::format("run --device '{}' --suite mma --quick --seed 1 --json {{json}}", device.info().id), folder);
  EXPECT_EQ(run.exit_status, 0) << run.tail();
  ASSERT_TRUE(run.result.is_object()) << "no JSON result\n" << run.tail();
  for (const backends::MmaConfig& cfg : device.caps().mma) {
    std::size_t findings = 0;
    for (const auto& f : run.result["findings"]) {
      if (f["config"] != cfg.name()) continue;
      ++findings;
      EXPECT_NE(f["status"], "error") << f["probe"] << " " << cfg.name() << ": " << f.value("message", "");
    }
    EXPECT_GT(findings, 0u) << "no finding for " << cfg.name();
  }
  fmt::print("{}", run.output);
}

// A driver that crashes in the n-th `call` of each process (the DriverCall test hook): the run goes
// on in a new child after each crash and ends complete, each crash one `error` naming the call,
// that configuration's other findings never left pending, and every configuration reported.
inline void expect_mma_crashes_contained(const backends::Device& device, const std::string& call, int nth,
                                         const std::string& folder) {
  const CliRun run =
      run_cli(fmt::format("run --device '{}' --suite mma --quick --seed 1 --json {{json}}", device.info().id), folder,
              fmt::format("GPUPARANOIA_CRASH_IN={}:{}", call, nth));
  EXPECT_EQ(run.exit_status, 1) << run.tail();
  ASSERT_TRUE(run.result.is_object()) << "no JSON result\n" << run.tail();
  EXPECT_EQ(run.result["complete"], true);
  const std::string crashed = "the driver crashed (SIGSEGV) in " + call;
  for (const backends::MmaConfig& cfg : device.caps().mma) {
    std::size_t crashes = 0;
    for (const auto& f : run.result["findings"]) {
      if (f["config"] != cfg.name()) continue;
      crashes += f.value("message", "") == crashed;
      EXPECT_FALSE(f.value("verdict", "").starts_with("pending:")) << f.dump();
    }
    EXPECT_EQ(crashes, 1u) << cfg.name() << "\n" << run.tail();
  }
}

}  // namespace gp::testing
