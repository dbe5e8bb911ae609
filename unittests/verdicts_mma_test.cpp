// The rule of the MMA suite's verdicts, tested where the truth is known: every probe on every
// instruction device of the tables (ref:<arch>:<instruction>) and on random parameter sets
// (unittests/random_mma.hpp) as devices with a hidden model. For each finding that asks a
// question of the model (tests_mma/questions.hpp): the device's true model must be among the
// candidates left (its answer among theirs), a stated answer must be the true model's, "not
// applicable" must be true of the true model, and "no candidate reproduces" never happens.
//
// The identification's random validation is cut to a few hundred tiles here: it is tested in
// mma_identify_test; this test is about the verdicts. GPUPARANOIA_VERDICTS_SEED draws other
// random sets (by default a new seed each run, printed).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <random>

#include "audit/result.hpp"
#include "audit/runner.hpp"
#include "backends/reference/reference_backend.hpp"
#include "model/mma_instructions.hpp"
#include "tests_mma/questions.hpp"
#include "unittests/random_mma.hpp"
#include "unittests/reference_devices.hpp"

namespace gp {
namespace {

using nlohmann::json;

std::uint64_t seed() {
  static const std::uint64_t s = [] {
    const char* env = std::getenv("GPUPARANOIA_VERDICTS_SEED");
    return env ? std::strtoull(env, nullptr, 10)
               : std::uint64_t(std::chrono::system_clock::now().time_since_epoch().count()) % 1000000007u;
  }();
  return s;
}

// Runs the MMA suite on the device and checks every judged finding of configuration `mc`.
void expect_true_verdicts(backends::Device& dev, const backends::MmaConfig& mc, const model::DotConfig& truth,
                          const std::string& who) {
  audit::RunSettings s;
  s.suite = "mma";
  s.tier = audit::Tier::quick;
  s.seed = seed();
  s.mma_validation_tiles = 256;
  audit::ResultDocument doc(dev, "test", s.to_json());
  audit::run_mma_suite(dev, s, doc);
  int judged = 0;
  for (const json& f : doc.json()["findings"]) {
    if (f["config"] != mc.name() || f["status"] != "ok") continue;
    const mma::MmaQuestion* q = mma::question_of(f["probe"].get<std::string>());
    if (!q) continue;
    ++judged;
    const json& p = f["parameters"];
    const json t = q->answer(mc, truth);
    const std::string where = fmt::format("{} {} (seed {}): {}\n  true answer {}", who, f["probe"].get<std::string>(), seed(),
                                          f["verdict"].get<std::string>(), t.dump());
    ASSERT_TRUE(p.contains("conclusion")) << where;
    const std::string conclusion = p["conclusion"];
    EXPECT_NE(conclusion, "unexplained") << where;
    bool among = false;
    for (const json& c : p["candidates"]) among |= c["answer"] == t;
    EXPECT_TRUE(among) << where << "\n  candidates " << p["candidates"].dump();
    if (conclusion == "stated") {
      EXPECT_FALSE(t.is_null()) << where;
      if (t.is_object()) {
        for (const auto& [k, v] : t.items()) {
          EXPECT_EQ(p[k], v) << where << ": " << k;
        }
      }
    }
    if (conclusion == "not applicable") {
      EXPECT_TRUE(t.is_null()) << where;
    }
  }
  EXPECT_GT(judged, 0) << who << ": no finding was judged";
}

backends::Device* device_of(const model::MmaInstruction& inst) {
  for (auto& d : testing::reference_devices())
    if (d->info().id == "ref:" + inst.id()) return d.get();
  return nullptr;
}

// One test per architecture, so that ctest runs them side by side.
class EveryInstruction : public ::testing::TestWithParam<std::string_view> {};

TEST_P(EveryInstruction, VerdictsAreTrue) {
  std::printf("  seed %llu\n", (unsigned long long)seed());
  int n = 0;
  for (const model::MmaInstruction& inst : model::all_mma_instructions()) {
    if (inst.arch != GetParam()) continue;
    backends::Device* d = device_of(inst);
    ASSERT_NE(d, nullptr) << inst.id();
    ASSERT_EQ(d->caps().mma.size(), 1u);
    expect_true_verdicts(*d, d->caps().mma.front(), inst.config, inst.id());
    ++n;
  }
  EXPECT_GT(n, 0);
}

INSTANTIATE_TEST_SUITE_P(Tables, EveryInstruction, ::testing::ValuesIn(model::mma_architectures()),
                         [](const auto& param) {
                           std::string n(param.param);
                           std::replace(n.begin(), n.end(), '-', '_');
                           return n;
                         });

// 50 random parameter sets, in five tests of ten.
class RandomSets : public ::testing::TestWithParam<int> {};

TEST_P(RandomSets, VerdictsAreTrue) {
  std::printf("  seed %llu\n", (unsigned long long)seed());
  std::mt19937_64 rng(seed() * 31 + std::uint64_t(GetParam()));
  for (int i = 0; i < 10; ++i) {
    const testing::Drawn x = testing::draw(rng, GetParam() * 10 + i);
    backends::Profile p;
    p.name = fmt::format("random-{}", GetParam() * 10 + i);
    p.device_name = x.label;
    p.vendor = "test";
    p.mma = {x.mc};
    backends::ReferenceDevice dev(p, {{x.mc.instruction, x.cfg}});
    expect_true_verdicts(dev, x.mc, x.cfg, x.label);
  }
}

INSTANTIATE_TEST_SUITE_P(Drawn, RandomSets, ::testing::Range(0, 5));

}  // namespace
}  // namespace gp
