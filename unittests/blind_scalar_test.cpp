// Blind recovery: the whole scalar suite runs on virtual devices whose unit
// parameters it is not told, assembles a profile, and must recover every parameter (up to the
// equivalences no input can separate) with a validation that shows no mismatch: the built-in units
// and random parameter sets (family by family, probe by probe, in scalar_daumas_test).
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <cstdlib>
#include "audit/runner.hpp"
#include "backends/reference/profile.hpp"
#include "backends/reference/reference_backend.hpp"
#include "unittests/drawn_seed.hpp"
#include "unittests/random_unit.hpp"
#include "unittests/sweep.hpp"

namespace gp {
namespace {

using model::ScalarUnit;

// Runs the suite and returns the profile it inferred for the unit's storage format; `undecided`
// counts the findings whose verdict is inconclusive (their parameters stay out of the profile).
nlohmann::json audit_profile(const ScalarUnit& hidden, std::uint64_t seed, std::string* report = nullptr,
                             int* undecided = nullptr) {
  backends::ReferenceDevice device(backends::Profile{
      "blind", "blind device", "test", "hidden parameters", testing::device_units(hidden), {}, {}, {}});
  audit::RunSettings settings;
  settings.suite = "scalar";
  settings.tier = audit::Tier::quick;
  settings.seed = seed;
  audit::ResultDocument doc(device, "test", settings.to_json());
  audit::run_scalar_suite(device, settings, doc);
  if (undecided)
    for (const auto& f : doc.json()["findings"])
      *undecided += f["format"] == hidden.storage_format().name && f.contains("parameters") &&
                    f["parameters"].value("conclusion", "") == "inconclusive";
  if (report) {
    for (const auto& f : doc.json()["findings"])
      if (f["format"] == hidden.storage_format().name)
        *report += fmt::format("  {} {}: {}\n", f["probe"].get<std::string>(), f["status"].get<std::string>(),
                               f["status"] == "ok" ? f["verdict"].get<std::string>() : f["message"].get<std::string>());
  }
  return doc.json()["profile"]["scalar"][std::string(hidden.storage_format().name)];
}

// What no input can tell apart is not a difference: an adder with two guard bits and a sticky bit
// is correctly rounded (one guard bit suffices for a directed mode); a multiplier that generates every column is exact;
// fma() of a unit whose MAD is fused is fused either way.
std::string differences(const ScalarUnit& hidden, const ScalarUnit& found) {
  std::string d;
  const auto note = [&](bool same, std::string_view what) {
    if (!same) d += fmt::format("{}; ", what);
  };
  // Directed rounding needs only to know whether the rest is zero: one guard bit and a sticky bit do,
  // and for round to odd the sticky bit alone (tests_scalar/adder.cpp).
  const auto adder_exact = [](const model::AdderParams& a) {
    const model::Rounding r = a.rounding.effective();
    const bool directed = model::name(r).substr(0, 2) != "rn";
    return !a.guard_bits || (a.sticky && *a.guard_bits >= (r == model::Rounding::ro ? 0 : directed ? 1 : 2));
  };
  note(hidden.add.rounding.effective() == found.add.rounding.effective(), "add.rounding");
  note(adder_exact(hidden.add) == adder_exact(found.add), "add.guard_bits (exact or not)");
  if (!adder_exact(hidden.add) && !adder_exact(found.add)) {
    note(hidden.add.guard_bits == found.add.guard_bits, "add.guard_bits");
    note(hidden.add.sticky == found.add.sticky, "add.sticky");
  }
  // The first of two dependent additions, where either unit runs it on an adder of its own (R520).
  if (hidden.add_cascaded || found.add_cascaded) {
    const model::AdderParams hc = hidden.add_cascaded.value_or(hidden.add), fc = found.add_cascaded.value_or(found.add);
    note(hc.rounding.effective() == fc.rounding.effective() && hc.guard_bits == fc.guard_bits && hc.sticky == fc.sticky,
         "add_cascaded");
  }
  note(hidden.mul.rounding.effective() == found.mul.rounding.effective(), "mul.rounding");
  note(hidden.mul.truncated_columns.has_value() == found.mul.truncated_columns.has_value(), "mul truncated or not");
  if (hidden.mul.truncated_columns && found.mul.truncated_columns) {
    note(hidden.mul.truncated_columns == found.mul.truncated_columns, "mul.truncated_columns");
    note(hidden.mul.correction == found.mul.correction, "mul.correction");
  }
  note(hidden.mad_fused == found.mad_fused, "mad.fused");
  note(hidden.fma_fused == found.fma_fused || hidden.mad_fused, "fma.fused");
  // Quotients and square roots of p-bit numbers are never ties: the nearest modes coincide.
  const auto nearest = [](model::Rounding r) { return model::name(r).substr(0, 2) == "rn"; };
  const auto same_without_ties = [&](model::Rounding a, model::Rounding b) {
    return a == b || (nearest(a) && nearest(b));
  };
  // A reciprocal 1/y is a tie only when exact, too. A quotient is one below the smallest normal
  // (the rounding probe's cases there): a unit dividing in its storage format and keeping subnormal
  // quotients shows its tie rule.
  note(hidden.div.method == found.div.method, "div.method");
  const bool quotient_ties =
      hidden.div.method == model::DivMethod::correctly_rounded && hidden.format == &hidden.storage_format() &&
      !model::flushing(hidden, model::FlushOp::div).flush_output && !hidden.subnormals.flush_transfer;
  note(quotient_ties ? hidden.div.rounding.effective() == found.div.rounding.effective()
                     : same_without_ties(hidden.div.rounding.effective(), found.div.rounding.effective()),
       "div.rounding");
  note(same_without_ties(hidden.sqrt.effective(), found.sqrt.effective()), "sqrt.rounding");
  // An approximate operation's bound is measured: no more than the hidden one (half-ulp steps).
  const auto bounded = [](std::optional<model::UlpBound> hidden_bound, std::optional<model::UlpBound> found_bound) {
    return hidden_bound.has_value() == found_bound.has_value() &&
           (!hidden_bound || (found_bound->units <= hidden_bound->units && found_bound->units > 0));
  };
  const auto div_bound = [](const ScalarUnit& u) {
    return u.div.method == model::DivMethod::approximate ? std::optional(u.div.max_error) : std::nullopt;
  };
  note(bounded(div_bound(hidden), div_bound(found)), "div.max_ulps");
  note(bounded(hidden.sqrt_max_error, found.sqrt_max_error), "sqrt.max_ulps");
  if (!hidden.subnormals.flush_transfer) {
    note(hidden.subnormals.flush_input == found.subnormals.flush_input, "subnormals.input");
    note(hidden.subnormals.flush_output == found.subnormals.flush_output, "subnormals.output");
  }
  note(hidden.subnormals.flush_transfer == found.subnormals.flush_transfer, "subnormals.transfer");
  // The fma's NaN order, or the one its propagation rule amounts to; moot with canonical NaNs.
  const auto fma_order = [](const model::NanPolicy& n) {
    return n.fma_order ? n.fma_order : model::fma_order_of(n.propagation);
  };
  note(hidden.nan.canonical || fma_order(hidden.nan) == fma_order(found.nan), "nan.fma_order");
  note(hidden.format == found.format, "registers");
  note(&hidden.storage_format() == hidden.format || hidden.convert.effective() == found.convert.effective(),
       "cvt (the stores' rounding)");
  return d;
}

// A verdict that cannot tell candidates apart (inconclusive: wider registers that would give the
// same outputs, say) leaves its keys out of the profile: those are compared as the hidden unit's,
// and the validation of a profile with such gaps may find mismatches.
nlohmann::json expect_recovered(const ScalarUnit& hidden, std::uint64_t seed) {
  std::string report;
  int undecided = 0;
  const nlohmann::json profile = audit_profile(hidden, seed, &report, &undecided);
  SCOPED_TRACE(fmt::format("hidden unit: {}\ninferred profile: {}\nfindings:\n{}", model::describe(hidden),
                           profile.dump(), report));
  nlohmann::json keys = profile;
  keys.erase("validation");
  if (undecided) {
    nlohmann::json all = backends::unit_to_json(hidden);
    all.erase("registers");
    for (const auto& [k, v] : keys.items())
      if (v.is_object() && all.contains(k))
        all[k].update(v);
      else
        all[k] = v;
    keys = all;
  }
  auto found = backends::unit_from_json(hidden.storage_format(), keys, "inferred");
  EXPECT_TRUE(found) << found.error().message;
  if (found) {
    EXPECT_EQ(differences(hidden, *found), "");
  }
  EXPECT_TRUE(profile.contains("validation"));
  if (!undecided) {
    EXPECT_EQ(profile.value("validation", nlohmann::json::object()).value("mismatches", -1), 0);
  }
  EXPECT_GT(profile.value("validation", nlohmann::json::object()).value("cases", 0), 0);
  return profile;
}

// Every built-in unit. One that computes binary16 in binary32 registers (nvidia-g70-binary16) is
// recovered as the binary32 unit behind binary16 stores: "registers": "binary32".
TEST(BlindScalar, BuiltInUnits) {
  std::size_t recovered = 0, i = 0;
  for (const ScalarUnit& u : model::builtin_units()) {
    if (!testing::in_sweep(i++)) continue;
    SCOPED_TRACE(std::string(u.name));
    expect_recovered(u, 7);
    ++recovered;
  }
  EXPECT_GE(recovered * testing::kSweepStride, 7u);
}

// Random parameter sets (unittests/random_unit.hpp) through the whole suite, its profile assembly
// and its validation: 12 in the test tier, 24 in the hunt tier. GPUPARANOIA_BLIND_TRIALS raises the
// count for a longer sweep by hand.
TEST(BlindScalar, RandomUnits) {
  std::mt19937_64 rng(testing::drawn_seed(20061122));
  const int trials =
      int(testing::count_from_env("GPUPARANOIA_BLIND_TRIALS", std::uint64_t(testing::drawn_count(12, 24))));
  for (int trial = 0; trial < trials; ++trial) {
    const model::ScalarUnit u =
        testing::random_unit_with_registers(rng, trial % 3 == 2 ? model::binary16 : model::binary32);
    if (!testing::in_sweep(std::size_t(trial))) continue;
    SCOPED_TRACE(fmt::format("trial {}", trial));
    expect_recovered(u, std::uint64_t(trial) + 1);
  }
}

// A compiler's division and square root known by their bounds (model/scalar_unit.hpp, the x / y and
// sqrt that OpenCL allows 2.5 and 3 ulp off): the division probe states an approximate division, the
// rounding probes leave its rounding alone and state the square root approximate, each with a bound
// measured no larger than the hidden one, and the validation holds every random result to them.
// A correctly rounded unit stays correctly rounded (BuiltInUnits, RandomUnits).
TEST(BlindScalar, ApproximateDivisionAndSquareRoot) {
  for (const model::Format* f : {&model::binary32, &model::binary16}) {
    ScalarUnit u = model::ieee_unit(*f);
    u.name = "blind";
    u.div = {model::DivMethod::approximate, model::UnitRounding::ieee(model::Rounding::rne), {640}};  // 2.5 ulp
    u.sqrt_max_error = model::UlpBound{768};                                                          // 3 ulp
    SCOPED_TRACE(model::describe(u));
    const nlohmann::json profile = expect_recovered(u, 3);
    EXPECT_EQ(profile["div"]["method"], "approximate") << profile.dump();
    const nlohmann::json skipped = profile["validation"].value("not_validated", nlohmann::json::object());
    EXPECT_FALSE(skipped.contains("div") || skipped.contains("sqrt")) << profile.dump();
  }
}

// Units that round in modes other than rne (issue 34): an adder rounding up, down, toward zero or to
// odd, a multiplier rounding to nearest-away, up, down or to odd, one rounding up whose products are
// flushed, and binary16 computed in binary32 registers that round and store up. Each is recovered
// with every arithmetic operation of its profile stated and validated: survivors the probes' own
// cases leave apart are split by the inputs their challenge draws (tests_scalar/probe_support.hpp).
TEST(BlindScalar, NonDefaultRoundings) {
  using model::Rounding;
  const auto unit = [](const model::Format& f, Rounding add, Rounding mul) {
    ScalarUnit u = model::ieee_unit(f);
    u.name = "blind";
    u.add.rounding = model::UnitRounding::ieee(add);
    u.mul.rounding = model::UnitRounding::ieee(mul);
    return u;
  };
  std::vector<ScalarUnit> units;
  for (Rounding r : {Rounding::ru, Rounding::rd, Rounding::rz, Rounding::ro})
    units.push_back(unit(model::binary32, r, Rounding::rne));
  for (Rounding r : {Rounding::rna, Rounding::rd, Rounding::ro})
    units.push_back(unit(model::binary32, Rounding::rne, r));
  units.push_back(unit(model::binary32, Rounding::rne, Rounding::ru));
  units.back().subnormals.flush_output = true;
  units.push_back(unit(model::binary32, Rounding::ru, Rounding::rne));
  units.back().storage = &model::binary16;
  units.back().convert = model::UnitRounding::ieee(Rounding::ru);
  for (const ScalarUnit& u : units) {
    SCOPED_TRACE(model::describe(u));
    const nlohmann::json profile = expect_recovered(u, 5);
    for (const char* op : {"add", "sub", "mul", "fma", "mad"}) {
      EXPECT_FALSE(profile["validation"].value("not_validated", nlohmann::json::object()).contains(op))
          << op << ": " << profile.dump();
    }
  }
}

}  // namespace
}  // namespace gp
