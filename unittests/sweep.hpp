// Sweeps under the sanitizers. The asan preset looks for memory errors and undefined behaviour,
// which follow the code paths, not the device or unit a sweep is at: there a sweep over many
// devices or units takes every kSweepStride-th item, a fraction of the time for the same paths;
// the test preset (release) runs every item.
#pragma once

#include <cstddef>

namespace gp::testing {

#if defined(__SANITIZE_ADDRESS__)  // GCC and clang, -fsanitize=address
inline constexpr std::size_t kSweepStride = 4;
#else
inline constexpr std::size_t kSweepStride = 1;
#endif

// Whether the sweep's item `index` runs in this build.
constexpr bool in_sweep(std::size_t index) { return index % kSweepStride == 0; }

}  // namespace gp::testing
