// The seed of the tests that draw hidden units, parameter sets or inputs at random. In the test tier
// each such test draws from its own fixed seed, so that two runs give the same results; the hunt
// tier runs the same tests (ctest's hunt.* copies, which set GPUPARANOIA_HUNT=1) from a new seed each
// run, taken from the clock; GPUPARANOIA_VERDICTS_SEED=N repeats a run with seed N in either tier.
// The seed is printed either way, and named in every failure that uses it.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

namespace gp::testing {

// Whether this is the hunt tier's run (GPUPARANOIA_HUNT, set by ctest for the hunt.* copies).
inline bool hunting() { return std::getenv("GPUPARANOIA_HUNT") != nullptr; }

// How many random items a test draws: the test tier's fixed sample, or the hunt tier's larger one.
// The first `test_tier` items of a seed are the same in both.
inline int drawn_count(int test_tier, int hunt_tier) { return hunting() ? hunt_tier : test_tier; }

// The seed of a run: GPUPARANOIA_VERDICTS_SEED, a new one in the hunt tier, else `fixed` (the test's
// own); printed each time a test asks.
inline std::uint64_t drawn_seed(std::uint64_t fixed) {
  static const std::uint64_t chosen = [] {
    if (const char* env = std::getenv("GPUPARANOIA_VERDICTS_SEED"))
      return std::uint64_t(std::strtoull(env, nullptr, 10));
    if (hunting()) return 1 + std::uint64_t(std::chrono::system_clock::now().time_since_epoch().count()) % 1000000007u;
    return std::uint64_t{0};
  }();
  const std::uint64_t s = chosen ? chosen : fixed;
  std::printf("  seed %llu (GPUPARANOIA_VERDICTS_SEED=%llu ctest --preset %s repeats it)\n", (unsigned long long)s,
              (unsigned long long)s, hunting() ? "hunt" : "test");
  return s;
}

}  // namespace gp::testing
