// The seeds and counts of the tests that draw at random: hidden units, parameter sets, oracle
// operands. In the test tier each such test draws from its own fixed seed, so that two runs give the
// same results; the hunt tier runs the tests registered for it (ctest's hunt.* copies, which set
// GPUPARANOIA_HUNT=1) from a new seed each run, taken from the clock; GPUPARANOIA_SEED=N repeats a run
// with seed N in either tier. The seed is printed once per process, and named in every failure that
// uses it. The one place a test reads its seed or a count from the environment.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <set>

namespace gp::testing {

// Whether this is the hunt tier's run (GPUPARANOIA_HUNT, set by ctest for the hunt.* copies).
inline bool hunting() { return std::getenv("GPUPARANOIA_HUNT") != nullptr; }

// How many random items a test draws: the test tier's fixed sample, or the hunt tier's larger one.
inline int drawn_count(int test_tier, int hunt_tier) { return hunting() ? hunt_tier : test_tier; }

// A count the environment variable `var` may raise for a longer run by hand, else `fallback`.
inline std::uint64_t count_from_env(const char* var, std::uint64_t fallback) {
  const char* s = std::getenv(var);
  return s && *s ? std::strtoull(s, nullptr, 0) : fallback;
}

// The seed of a run: GPUPARANOIA_SEED, a new one in the hunt tier, else `fixed` (the test's own).
inline std::uint64_t drawn_seed(std::uint64_t fixed) {
  static const std::uint64_t chosen = [] {
    if (const char* env = std::getenv("GPUPARANOIA_SEED")) return std::uint64_t(std::strtoull(env, nullptr, 0));
    if (hunting()) return 1 + std::uint64_t(std::chrono::system_clock::now().time_since_epoch().count()) % 1000000007u;
    return std::uint64_t{0};
  }();
  const std::uint64_t s = chosen ? chosen : fixed;
  static std::mutex lock;
  static std::set<std::uint64_t> printed;
  std::lock_guard<std::mutex> hold(lock);
  if (printed.insert(s).second)
    std::printf("  seed %llu (GPUPARANOIA_SEED=%llu ctest --preset %s repeats it)\n", (unsigned long long)s,
                (unsigned long long)s, hunting() ? "hunt" : "test");
  return s;
}

}  // namespace gp::testing
