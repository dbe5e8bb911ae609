// The MMA suite's claims, tested where the truth is known (unittests/mma_checks.hpp): on every
// instruction device of the tables (ref:<arch>:<instruction>), one run of the suite each, its
// verdicts and its identification; on random parameter sets (unittests/random_mma.hpp) as devices
// with a hidden model, its verdicts (mma_identify_test identifies such sets from a fixed seed).
//
// The identification's random validation is cut to a few hundred tiles here. Each run takes a sample
// of each architecture's instructions (kSample, drawn from the seed; all of them on architectures
// with fewer: 4 in the test tier, 6 in the hunt tier), the long build every instruction
// (GPUPARANOIA_VERDICTS_LONG); and 10 random parameter sets (20 in the hunt tier, 50 in the long).
// The inputs and random sets come from unittests/drawn_seed.hpp: a fixed seed in the test tier, a
// new one each run in the hunt tier.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "backends/reference/reference_backend.hpp"
#include "model/mma_instructions.hpp"
#include "unittests/drawn_seed.hpp"
#include "unittests/mma_checks.hpp"
#include "unittests/random_mma.hpp"
#include "unittests/reference_devices.hpp"

namespace gp {
namespace {

constexpr std::uint64_t kValidationTiles = 256;
#ifdef GPUPARANOIA_VERDICTS_LONG
const std::size_t kSample = SIZE_MAX;
const int kRandomSets = 10;
#else
const std::size_t kSample = std::size_t(testing::drawn_count(4, 6));
const int kRandomSets = testing::drawn_count(2, 4);
#endif

std::uint64_t seed() {
  static const std::uint64_t s = testing::drawn_seed(20261128);
  return s;
}

// One test per architecture, so that ctest runs them side by side.
class EveryInstruction : public ::testing::TestWithParam<std::string_view> {};

TEST_P(EveryInstruction, VerdictsAreTrue) {
  std::vector<const model::MmaInstruction*> chosen;
  for (const model::MmaInstruction& inst : model::all_mma_instructions())
    if (inst.arch == GetParam()) chosen.push_back(&inst);
  if (chosen.size() > kSample) {
    std::mt19937_64 rng(seed());
    std::shuffle(chosen.begin(), chosen.end(), rng);
    chosen.resize(kSample);
  }
  int n = 0;
  for (const model::MmaInstruction* inst : chosen) {
    std::printf("  %s\n", inst->id().c_str());
    backends::Device& d = testing::reference_device(inst->id());
    ASSERT_EQ(d.caps().mma.size(), 1u);
    const backends::MmaConfig& mc = d.caps().mma.front();
    const testing::MmaRun run = testing::run_mma(d, seed(), kValidationTiles);
    testing::expect_true_verdicts(run, mc, inst->config, inst->id());
    testing::expect_identified(run, mc, inst->config, inst->id());
    ++n;
  }
  EXPECT_GT(n, 0);
}

INSTANTIATE_TEST_SUITE_P(Tables, EveryInstruction, ::testing::ValuesIn(model::mma_architectures()),
                         [](const auto& param) {
                           std::string n(param.param);  // "rtx-blackwell", "rdna3.5": rtx_blackwell, rdna3_5
                           std::replace_if(
                               n.begin(), n.end(), [](char ch) { return ch == '-' || ch == '.'; }, '_');
                           return n;
                         });

// Random parameter sets, in five tests of kRandomSets.
class RandomSets : public ::testing::TestWithParam<int> {};

TEST_P(RandomSets, VerdictsAreTrue) {
  std::mt19937_64 rng(seed() * 31 + std::uint64_t(GetParam()));
  for (int i = 0; i < kRandomSets; ++i) {
    const int index = GetParam() * kRandomSets + i;
    const testing::Drawn x = testing::draw(rng, index);
    backends::ReferenceDevice dev = testing::device_of(x, index);
    testing::expect_true_verdicts(testing::run_mma(dev, seed(), kValidationTiles), x.mc, x.cfg, x.label);
  }
}

INSTANTIATE_TEST_SUITE_P(Drawn, RandomSets, ::testing::Range(0, 5));

}  // namespace
}  // namespace gp
