// The rule every scalar verdict obeys, on devices whose arithmetic is known exactly: the device's
// true unit reproduces its own outputs, so its answer to a probe's question is among the survivors'
// answers; a stated answer is the true unit's answer; the profile fragment is that answer's. Every
// probe that asks a question of units (audit::ScalarProbe::ask) runs, quick tier, on every scalar
// reference device and on random parametric units (unittests/random_unit.hpp) drawn from
// unittests/drawn_seed.hpp (fixed in the test tier, new each run in the hunt tier): a failure prints
// its seed.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "audit/probe.hpp"
#include "backends/reference/profile.hpp"
#include "backends/reference/reference_backend.hpp"
#include "tests_scalar/suite.hpp"
#include "unittests/drawn_seed.hpp"
#include "unittests/random_unit.hpp"
#include "unittests/reference_devices.hpp"

namespace gp {
namespace {

std::uint64_t verdicts_seed() {
  static const std::uint64_t s = testing::drawn_seed(20261128);
  return s;
}

// Checks a probe's finding on one format of the device against the unit's true answer; returns the
// finding (status unsupported where the probe does not ask the unit or apply to the format).
audit::Finding check_probe(backends::ReferenceDevice& device, const model::ScalarUnit& unit,
                           const audit::ScalarProbe& probe, const std::string& label) {
  audit::ProbeContext ctx;
  ctx.tier = audit::Tier::quick;
  ctx.seed = 1;
  const model::Format& f = unit.storage_format();
  const std::optional<audit::Answer> truth = probe.ask(unit);
  if (!truth || !probe.applies(f)) return audit::unsupported("not asked");
  const audit::Finding finding = probe.run(device, f, ctx);
  const std::string where =
      fmt::format("seed {} (GPUPARANOIA_SEED), device {}, format {}, probe {}\n  verdict: {}\n  true answer: {}",
                  verdicts_seed(), label, f.name, probe.id(), finding.verdict, truth->fields().dump());
  // A probe that reads a format the device lacks (a conversion's source) claims nothing.
  if (finding.status == audit::Status::unsupported && finding.message.starts_with("the device does not compute in"))
    return finding;
  EXPECT_EQ(finding.status, audit::Status::ok) << where << "\n  message: " << finding.message;
  if (finding.status != audit::Status::ok) return finding;
  const nlohmann::json& par = finding.parameters;
  const std::string conclusion = par.value("conclusion", "");
  EXPECT_NE(conclusion, "unexplained") << where << ": the true unit reproduces the outputs, yet no candidate does";
  std::set<std::string> answers;
  for (const nlohmann::json& c : par.value("candidates", nlohmann::json::array())) answers.insert(c["answer"].dump());
  EXPECT_TRUE(answers.count(truth->fields().dump())) << where << "\n  survivors' answers: " << par["candidates"].dump();
  if (conclusion == "stated") {
    EXPECT_EQ(answers, std::set<std::string>{truth->fields().dump()}) << where;
    if (truth->applies()) {
      // An approximate operation's bound is measured, not part of the answer: no more than the unit's.
      nlohmann::json fragment = backends::to_json(finding.profile);
      for (const char* op : {"div", "sqrt"})
        if (fragment.contains(op) && fragment[op].contains("max_ulps")) {
          const model::Op o = op == std::string_view("div") ? model::Op::div : model::Op::sqrt;
          const std::optional<model::UlpBound> hidden = !model::approximate(unit, o) ? std::nullopt
                                                        : o == model::Op::div        ? std::optional(unit.div.max_error)
                                                                                     : unit.sqrt_max_error;
          EXPECT_TRUE(hidden && fragment[op]["max_ulps"].get<double>() <= model::ulps(*hidden)) << where;
          fragment[op].erase("max_ulps");
        }
      EXPECT_EQ(fragment, backends::to_json(probe.profile_of(*truth))) << where << "\n  profile: " << fragment.dump();
    }
  } else {
    EXPECT_TRUE(finding.profile.empty()) << where << ": a profile fragment from an unstated answer";
  }
  return finding;
}

// Checks every asking probe's findings on every format of the device against its true units.
void check_device(backends::ReferenceDevice& device, const std::string& label) {
  for (const model::ScalarUnit& unit : device.profile().units)
    for (const audit::ScalarProbe* probe : scalar::probes()) check_probe(device, unit, *probe, label);
}

// The built-in devices with scalar units (the IEEE units, G70, R520, R300), one test each so that
// ctest runs them side by side.
std::vector<std::string> scalar_device_names() {
  std::vector<std::string> names;
  for (const backends::Profile& p : backends::builtin_profiles())
    if (!p.units.empty()) names.push_back(p.name);
  return names;
}

class ReferenceDevice : public ::testing::TestWithParam<std::string> {};

TEST_P(ReferenceDevice, VerdictsAreTrue) {
  auto* ref = dynamic_cast<backends::ReferenceDevice*>(&testing::reference_device(GetParam()));
  ASSERT_TRUE(ref && !ref->profile().units.empty()) << GetParam();
  check_device(*ref, ref->info().id);
}

INSTANTIATE_TEST_SUITE_P(Scalar, ReferenceDevice, ::testing::ValuesIn(scalar_device_names()), [](const auto& param) {
  std::string n = param.param;
  std::replace(n.begin(), n.end(), '-', '_');
  return n;
});

TEST(VerdictsScalar, SixOrMoreScalarDevices) { EXPECT_GE(scalar_device_names().size(), 6u); }

// A chopping unit of the kind that fooled the rounding probe: binary32 adds chopped with 3 guard
// bits and no sticky bit (rz on every case of MMA-Sim's tables, not on 1.5 - 2^-30), multiplies
// with one truncated column, chopped; MAD unfused, fma fused, results flushed.
TEST(VerdictsScalar, ChoppedUnit) {
  model::ScalarUnit u = model::ieee_unit(model::binary32);
  u.name = "chopped";
  u.add = {model::UnitRounding::chopped(), 3, false};
  u.mul = {model::UnitRounding::chopped(), 0, 0};
  u.subnormals.flush_output = true;
  backends::ReferenceDevice device(backends::Profile{"chopped", "chopped unit", "test", "", {u}, {}, {}, {}});
  check_device(device, "chopped unit");
  audit::ProbeContext ctx;
  for (const audit::ScalarProbe* probe : scalar::probes()) {
    if (probe->id() != "scalar.mul.rounding" && probe->id() != "scalar.add.rounding") continue;
    const audit::Finding f = probe->run(device, model::binary32, ctx);
    // Neither is correctly rounded: no mode may be stated of them.
    EXPECT_NE(f.parameters.value("conclusion", ""), "stated") << probe->id() << ": " << f.verdict;
  }
}

// A compiler's division and square root known by their bounds (2.5 and 3 ulp, as OpenCL allows):
// every verdict stays true, the division method is stated approximate and its rounding left alone.
TEST(VerdictsScalar, ApproximateDivisionAndSquareRoot) {
  model::ScalarUnit u = model::ieee_unit(model::binary32);
  u.name = "approximate";
  u.div = {model::DivMethod::approximate, model::UnitRounding::ieee(model::Rounding::rne), {640}};
  u.sqrt_max_error = model::UlpBound{768};
  backends::ReferenceDevice device(backends::Profile{"approximate", "approximate unit", "test", "", {u}, {}, {}, {}});
  check_device(device, "approximate unit");
  audit::ProbeContext ctx;
  ctx.tier = audit::Tier::quick;
  ctx.seed = 1;
  for (const audit::ScalarProbe* probe : scalar::probes()) {
    if (probe->id() != "scalar.div.method" && probe->id() != "scalar.div.rounding" &&
        probe->id() != "scalar.sqrt.rounding")
      continue;
    const audit::Finding f = probe->run(device, model::binary32, ctx);
    const bool rounding = probe->id() == "scalar.div.rounding";
    EXPECT_EQ(f.parameters.value("conclusion", ""), rounding ? "not applicable" : "stated")
        << probe->id() << ": " << f.verdict;
    EXPECT_NE(f.verdict.find("not correctly rounded"), std::string::npos) << f.verdict;
  }
}

// A hidden fma order under each propagation rule, fused or not: the NaN probe states it (none where
// it is the rule's own), and its profile fragment carries it.
TEST(VerdictsScalar, FmaNanOrders) {
  const audit::ScalarProbe* nan = nullptr;
  for (const audit::ScalarProbe* p : scalar::probes())
    if (p->id() == "scalar.nan.propagation") nan = p;
  ASSERT_TRUE(nan);
  std::vector<std::optional<model::FmaNanOrder>> orders = {std::nullopt};
  for (model::FmaNanOrder o : model::all_fma_nan_orders) orders.push_back(o);
  for (const model::Format* f : {&model::binary32, &model::binary16})
    for (model::NanPropagation rule :
         {model::NanPropagation::first, model::NanPropagation::last, model::NanPropagation::larger_payload})
      for (const std::optional<model::FmaNanOrder>& o : orders) {
        model::ScalarUnit u = model::ieee_unit(*f);
        u.nan.propagation = rule;
        u.nan.fma_order = o;
        u.fma_fused = f == &model::binary32;
        backends::Profile p{"fma-order", "hidden fma order", "test", "hidden parameters", {u}, {}, {}, {}};
        if (f != &model::binary32) p.units.insert(p.units.begin(), model::ieee_unit(model::binary32));
        backends::ReferenceDevice device(p);
        const std::string label = fmt::format("{} unit, propagation {}, fma order {}", f->name, model::name(rule),
                                              o ? model::name(*o) : "none");
        SCOPED_TRACE(label);
        const audit::Finding finding = check_probe(device, u, *nan, label);
        EXPECT_EQ(finding.parameters.value("conclusion", ""), "stated") << finding.verdict;
        const bool own = o && o != model::fma_order_of(rule);
        EXPECT_EQ(finding.verdict.find("fma takes its NaN operands in the order " + (own ? model::words(*o) : "")) !=
                      std::string::npos,
                  own)
            << finding.verdict;
        EXPECT_EQ(finding.profile.nan && finding.profile.nan->fma_order, own) << backends::to_json(finding.profile);
      }
}

// Random units through a virtual device made of each, as the blind tests make them (a third
// binary16): 5 in the test tier, 9 in the hunt tier, which draws new ones each run so that the
// units checked add up over runs.
TEST(VerdictsScalar, RandomUnits) {
  std::mt19937_64 rng(verdicts_seed());
  const int trials = testing::drawn_count(5, 9);
  for (int trial = 0; trial < trials; ++trial) {
    model::ScalarUnit u = testing::random_unit_with_registers(rng, trial % 3 == 2 ? model::binary16 : model::binary32);
    backends::ReferenceDevice device(
        backends::Profile{"random", "random unit", "test", "hidden parameters", testing::device_units(u), {}, {}, {}});
    const std::string label = fmt::format("random unit {} of seed {}: {}", trial, verdicts_seed(), model::describe(u));
    // Only the random unit, not the binary32 unit beside a binary16 one (IEEE, or its registers').
    for (const audit::ScalarProbe* probe : scalar::probes()) check_probe(device, u, *probe, label);
  }
}

}  // namespace
}  // namespace gp
