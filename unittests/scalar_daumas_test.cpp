// The probes of Daumas et al. and the special-value probes, run blind: on small model devices
// whose policy the test states (extended registers, flushes, fused MAD), on the reference
// backend's IEEE and historical devices (the paper's findings), and on random scalar units whose
// hidden parameters they must recover. GP_BLIND_TRIALS=300 runs a longer blind sweep by hand.
#include <gtest/gtest.h>

#include <cstdlib>
#include <memory>
#include <random>

#include "audit/probe.hpp"
#include "backends/reference/reference_backend.hpp"
#include "tests_scalar/daumas_support.hpp"
#include "tests_scalar/suite.hpp"
#include "unittests/random_unit.hpp"
#include "unittests/drawn_seed.hpp"

namespace gp::scalar {
namespace {

using model::binary16;
using model::binary32;
using model::binary64;

// What a test device changes from the IEEE units.
struct Policy {
  model::Rounding rounding = model::Rounding::rne;
  bool ftz_in = false, ftz_out = false;  // flushing in every operation
  bool canonical_nan = false;
  bool flush_transfer = false;  // subnormals flushed in loads and stores
  bool quiet_transfer = false;  // signalling NaNs quieted in loads and stores
  bool fused_mad = false;
};

// A reference device of one unit per format under the policy; with `reg`, the other formats
// compute in reg's registers, rounded to their storage on the store (x87 style).
std::unique_ptr<backends::ReferenceDevice> model_device(const std::vector<const Format*>& formats, const Policy& p,
                                                        const Format* reg = nullptr) {
  backends::Profile profile{"test-model", "test device", "model", "", {}, {}, {}, {}};
  for (const Format* f : formats) {
    model::ScalarUnit u = model::ieee_unit(reg ? *reg : *f, p.rounding);
    if (reg && reg != f) u.storage = f;
    u.subnormals = {p.ftz_in, p.ftz_out, p.flush_transfer};
    u.nan.canonical = p.canonical_nan;
    u.nan.quiet_on_transfer = p.quiet_transfer;
    u.mad_fused = p.fused_mad;
    profile.units.push_back(u);
  }
  return std::make_unique<backends::ReferenceDevice>(std::move(profile));
}

const audit::ScalarProbe& probe(std::string_view id) {
  for (const audit::ScalarProbe* p : scalar::probes())
    if (p->id() == id) return *p;
  throw std::runtime_error("no probe " + std::string(id));
}

audit::Finding run(backends::Device& d, std::string_view id, const Format& f) {
  audit::Finding r = probe(id).run(d, f, audit::ProbeContext{audit::Tier::quick, 7});
  EXPECT_EQ(r.status, audit::Status::ok) << id << ": " << r.message;
  return r;
}

std::unique_ptr<backends::ReferenceDevice> ieee32() { return model_device({&binary32, &binary64}, Policy{}); }

TEST(ModelDevice, IeeeVerdicts) {
  auto d = ieee32();
  for (const Format* f : {&binary32, &binary64}) {
    SCOPED_TRACE(f->name);
    auto t = run(*d, "scalar.storage.transfer", *f);
    EXPECT_EQ(t.parameters["subnormals"], "preserve");
    EXPECT_EQ(t.parameters["nan"], "preserve");
    EXPECT_EQ(backends::to_json(t.profile)["subnormals"]["transfer"], "preserve");
    auto o = run(*d, "scalar.storage.operation", *f);
    EXPECT_EQ(o.parameters["mul_one"]["nan"], "quiet") << o.verdict;
    EXPECT_EQ(o.parameters["mul_one"]["subnormals"], "preserve") << o.verdict;
    auto range = run(*d, "scalar.register.range", *f);
    EXPECT_EQ(range.parameters["extended_range"], false) << range.verdict;
    auto prec = run(*d, "scalar.register.precision", *f);
    EXPECT_EQ(prec.parameters["extended_precision"], false) << prec.verdict;
    EXPECT_EQ(prec.parameters["register_bits"], f->precision());
    auto mad = run(*d, "scalar.mad.extra_precision", *f);
    EXPECT_EQ(mad.parameters["fused"], false) << mad.verdict;
    auto sym = run(*d, "scalar.mul.sign_symmetry", *f);
    EXPECT_EQ(sym.parameters["symmetric"], true) << sym.verdict;
    auto sub = run(*d, "scalar.subnormals.flush", *f);
    EXPECT_EQ(backends::to_json(sub.profile)["subnormals"]["input"], "preserve") << sub.verdict;
    EXPECT_EQ(backends::to_json(sub.profile)["subnormals"]["output"], "preserve") << sub.verdict;
    auto zero = run(*d, "scalar.zero.sign", *f);
    EXPECT_EQ(zero.parameters["conclusion"], "stated") << zero.verdict;
    EXPECT_EQ(zero.parameters["x_minus_x"], "+0") << zero.verdict;
    auto inf = run(*d, "scalar.inf.arithmetic", *f);
    EXPECT_EQ(inf.parameters["overflow"], "infinity") << inf.verdict;
    EXPECT_NE(inf.verdict.find("as IEEE 754"), std::string::npos) << inf.verdict;
    auto nan = run(*d, "scalar.nan.propagation", *f);
    EXPECT_EQ(nan.parameters["conclusion"], "stated") << nan.verdict;
    EXPECT_EQ(nan.parameters["propagation"], "first") << nan.verdict;
    EXPECT_EQ(nan.parameters["quiet"], true) << nan.verdict;
    EXPECT_EQ(nan.parameters["sub_flips"], false) << nan.verdict;
    EXPECT_EQ(nan.parameters["default_nan"], "quiet") << nan.verdict;
    EXPECT_NE(nan.verdict.find("the first NaN operand comes out, quieted"), std::string::npos) << nan.verdict;
    EXPECT_NE(nan.verdict.find("quiet NaN, no payload"), std::string::npos) << nan.verdict;
  }
}

TEST(ModelDevice, FusedMad) {
  Policy p;
  p.fused_mad = true;
  auto d = model_device({&binary32}, p);
  auto mad = run(*d, "scalar.mad.extra_precision", binary32);
  EXPECT_EQ(mad.parameters["fused"], true) << mad.verdict;
  EXPECT_EQ(mad.parameters["conclusion"], "stated") << mad.verdict;
}

TEST(ModelDevice, ExtendedRegisters) {
  // binary16 computed in binary32 registers: 24 bits and binary32's range. The register probes'
  // candidates compute in the formats the device has.
  auto d = model_device({&binary16, &binary32}, Policy{}, &binary32);
  auto range = run(*d, "scalar.register.range", binary16);
  EXPECT_EQ(range.parameters["extended_range"], true) << range.verdict;
  auto prec = run(*d, "scalar.register.precision", binary16);
  EXPECT_EQ(prec.parameters["extended_precision"], true) << prec.verdict;
  EXPECT_EQ(prec.parameters["register_bits"], 24) << prec.verdict;
}

TEST(ModelDevice, FlushOnTransfer) {
  Policy p;
  p.flush_transfer = true;
  p.quiet_transfer = true;
  auto d = model_device({&binary32}, p);
  auto t = run(*d, "scalar.storage.transfer", binary32);
  EXPECT_EQ(backends::to_json(t.profile)["subnormals"]["transfer"], "flush") << t.verdict;
  EXPECT_EQ(t.parameters["nan"], "quiet") << t.verdict;
  auto sub = run(*d, "scalar.subnormals.flush", binary32);
  EXPECT_EQ(sub.parameters["transfer"], "flush") << sub.verdict;
  // The operations keep subnormals in registers: the chains show it, operation by operation.
  for (const char* op : {"add", "mul", "fma", "div"}) {
    EXPECT_EQ(sub.parameters[op]["input"], "preserve") << op << ": " << sub.verdict;
    EXPECT_EQ(sub.parameters[op]["output"], "preserve") << op << ": " << sub.verdict;
  }
}

TEST(ModelDevice, FlushInOperations) {
  Policy p;
  p.ftz_in = true;
  auto d = model_device({&binary32, &binary64}, p);
  auto sub = run(*d, "scalar.subnormals.flush", binary32);
  EXPECT_EQ(backends::to_json(sub.profile)["subnormals"]["input"], "flush") << sub.verdict;
  EXPECT_EQ(backends::to_json(sub.profile)["subnormals"]["output"], "preserve") << sub.verdict;
  EXPECT_EQ(sub.parameters["transfer"], "preserve") << sub.verdict;
  Policy q;
  q.ftz_out = true;
  auto e = model_device({&binary32, &binary64}, q);
  auto out = run(*e, "scalar.subnormals.flush", binary32);
  EXPECT_EQ(backends::to_json(out.profile)["subnormals"]["input"], "preserve") << out.verdict;
  EXPECT_EQ(backends::to_json(out.profile)["subnormals"]["output"], "flush") << out.verdict;
}

TEST(ModelDevice, RoundingDownAndCanonicalNan) {
  Policy p;
  p.rounding = model::Rounding::rd;
  p.canonical_nan = true;
  auto d = model_device({&binary32}, p);
  auto zero = run(*d, "scalar.zero.sign", binary32);
  EXPECT_EQ(zero.parameters["x_minus_x"], "-0") << zero.verdict;
  EXPECT_NE(zero.verdict.find("rounding down"), std::string::npos) << zero.verdict;
  auto nan = run(*d, "scalar.nan.propagation", binary32);
  EXPECT_EQ(nan.parameters["propagation"], "canonical") << nan.verdict;
  EXPECT_EQ(backends::to_json(nan.profile)["nan"]["canonical"], true) << nan.verdict;
  EXPECT_NE(nan.verdict.find("canonical NaN"), std::string::npos) << nan.verdict;
  auto sym = run(*d, "scalar.mul.sign_symmetry", binary32);
  EXPECT_EQ(sym.parameters["symmetric"], false) << sym.verdict;
  auto inf = run(*d, "scalar.inf.arithmetic", binary32);
  EXPECT_EQ(inf.verdict.find("as IEEE 754:"), std::string::npos) << inf.verdict;
}

// --- The reference backend's devices ---------------------------------------------------------

std::unique_ptr<backends::Device> ref(std::string_view id) {
  auto devices = backends::ReferenceBackend().enumerate();
  if (!devices) throw std::runtime_error(devices.error().message);
  for (auto& d : *devices)
    if (d->info().id == id) return std::move(d);
  throw std::runtime_error("no device " + std::string(id));
}

backends::ReferenceDevice unit_device(const model::ScalarUnit& u) {
  backends::Profile p;
  p.name = "blind";
  p.device_name = "blind unit";
  p.units = {u};
  return backends::ReferenceDevice(std::move(p));
}

TEST(Reference, IeeeDevicesGiveIeeeVerdicts) {
  for (const char* id : {"ref:ieee-binary32", "ref:ieee-binary16", "ref:ieee-binary64"}) {
    auto d = ref(id);
    for (const Format* f : d->caps().formats) {
      SCOPED_TRACE(std::string(id) + " " + std::string(f->name));
      auto add = run(*d, "scalar.add.guard_bits", *f);
      EXPECT_EQ(add.verdict.rfind("ADDITION: correctly rounded (rne)", 0), 0u) << add.verdict;
      EXPECT_EQ(backends::to_json(add.profile)["add"]["guard_bits"], nullptr);
      EXPECT_EQ(backends::to_json(add.profile)["add"]["sticky"], false);
      auto cas = run(*d, "scalar.add.cascaded", *f);
      EXPECT_EQ(cas.parameters["same_as_single"], true) << cas.verdict;
      EXPECT_EQ(cas.parameters["zero_from_i"], f->precision()) << cas.verdict;
      auto cols = run(*d, "scalar.mul.truncated_columns", *f);
      EXPECT_EQ(cols.parameters["truncated_columns"], nullptr) << cols.verdict;
      EXPECT_EQ(cols.parameters["rounding"], "rne") << cols.verdict;
      auto corr = run(*d, "scalar.mul.correction", *f);
      EXPECT_EQ(backends::to_json(corr.profile)["mul"]["correction"], 0) << corr.verdict;  // the exact product has none
      auto t = run(*d, "scalar.storage.transfer", *f);
      EXPECT_EQ(backends::to_json(t.profile)["subnormals"]["transfer"], "preserve") << t.verdict;
      EXPECT_EQ(t.parameters["nan"], "preserve") << t.verdict;
      EXPECT_EQ(run(*d, "scalar.register.range", *f).parameters["extended_range"], false);
      EXPECT_EQ(run(*d, "scalar.register.precision", *f).parameters["register_bits"], f->precision());
      auto mad = run(*d, "scalar.mad.extra_precision", *f);
      EXPECT_EQ(mad.parameters["fused"], false) << mad.verdict;  // a*b+c with contraction off
      EXPECT_EQ(run(*d, "scalar.mul.sign_symmetry", *f).parameters["symmetric"], true);
      auto sub = run(*d, "scalar.subnormals.flush", *f);
      EXPECT_EQ(backends::to_json(sub.profile)["subnormals"]["input"], "preserve") << sub.verdict;
      EXPECT_EQ(backends::to_json(sub.profile)["subnormals"]["output"], "preserve") << sub.verdict;
      auto zero = run(*d, "scalar.zero.sign", *f);
      EXPECT_EQ(zero.parameters["x_minus_x"], "+0") << zero.verdict;
      EXPECT_EQ(zero.verdict.rfind("SIGNED ZERO: as IEEE 754:", 0), 0u) << zero.verdict;
      EXPECT_EQ(run(*d, "scalar.inf.arithmetic", *f).parameters["overflow"], "infinity");
      auto nan = run(*d, "scalar.nan.propagation", *f);
      EXPECT_EQ(nan.parameters["propagation"], "first") << nan.verdict;
      EXPECT_EQ(nan.parameters["quiet"], true) << nan.verdict;
      EXPECT_EQ(nan.parameters["default_nan"], "quiet") << nan.verdict;
      if (f == &binary16) {
        auto w = run(*d, "scalar.binary16.wider_sums", *f);
        EXPECT_EQ(w.parameters["wider"], nullptr) << w.verdict;  // rne twice through binary32 is innocuous
        EXPECT_NE(w.verdict.find("correctly rounded (rne)"), std::string::npos) << w.verdict;
      }
    }
  }
}

// The paper's findings on the GeForce 7800 GTX, through the reference device that models them.
TEST(Reference, NvidiaG70ReproducesThePaper) {
  auto d = ref("ref:nvidia-g70");
  auto add = run(*d, "scalar.add.guard_bits", binary32);
  EXPECT_EQ(add.verdict, "ADDITION: chopped, 2 guard bits, no sticky bit; 1.5 - 2^-i = 1.5 from i = 26");
  EXPECT_EQ(backends::to_json(add.profile)["add"],
            (nlohmann::json{{"guard_bits", 2}, {"rounding", "chop"}, {"sticky", false}}));
  auto cas = run(*d, "scalar.add.cascaded", binary32);
  EXPECT_EQ(cas.parameters["zero_from_i"], 26) << cas.verdict;
  EXPECT_EQ(cas.parameters["same_as_single"], true) << cas.verdict;
  auto cols = run(*d, "scalar.mul.truncated_columns", binary32);
  EXPECT_EQ(backends::to_json(cols.profile)["mul"]["truncated_columns"], 6) << cols.verdict;
  EXPECT_EQ(cols.parameters["rounding"], "chop") << cols.verdict;
  auto corr = run(*d, "scalar.mul.correction", binary32);
  EXPECT_EQ(backends::to_json(corr.profile)["mul"]["correction"], 40) << corr.verdict;
  auto mad = run(*d, "scalar.mad.extra_precision", binary32);
  EXPECT_EQ(mad.parameters["fused"], false) << mad.verdict;
  EXPECT_EQ(run(*d, "scalar.register.range", binary32).parameters["extended_range"], false);
  EXPECT_EQ(run(*d, "scalar.register.precision", binary32).parameters["extended_precision"], false);
  auto t = run(*d, "scalar.storage.transfer", binary32);
  EXPECT_EQ(backends::to_json(t.profile)["subnormals"]["transfer"], "flush") << t.verdict;
  EXPECT_EQ(t.parameters["nan"], "preserve") << t.verdict;
  EXPECT_EQ(t.parameters["infinities"], "preserve") << t.verdict;
  EXPECT_EQ(run(*d, "scalar.mul.sign_symmetry", binary32).parameters["symmetric"], true);
  // binary16: the binary32 adder's 26 bits, then chopped to 11 bits ([DGD] 2.3, last paragraph):
  // on single sums, a binary16 adder with 15 guard bits (the model's adders of f answer alike).
  auto w = run(*d, "scalar.binary16.wider_sums", binary16);
  EXPECT_EQ(w.parameters["guard_bits"], 15) << w.verdict;
  EXPECT_NE(w.verdict.find("sums to 26 bits, then rounded to 11"), std::string::npos) << w.verdict;
  auto reg16 = run(*d, "scalar.register.precision", binary16);
  EXPECT_EQ(reg16.parameters["register_bits"], 24) << reg16.verdict;
}

TEST(Reference, AtiR520) {
  auto d = ref("ref:ati-r520");
  auto add = run(*d, "scalar.add.guard_bits", binary32);
  EXPECT_EQ(backends::to_json(add.profile)["add"],
            (nlohmann::json{{"guard_bits", 2}, {"rounding", "chop"}, {"sticky", false}}))
      << add.verdict;
  auto cols = run(*d, "scalar.mul.truncated_columns", binary32);
  EXPECT_EQ(backends::to_json(cols.profile)["mul"]["truncated_columns"], 9) << cols.verdict;
  auto corr = run(*d, "scalar.mul.correction", binary32);
  EXPECT_EQ(backends::to_json(corr.profile)["mul"]["correction"], 3) << corr.verdict;
  auto t = run(*d, "scalar.storage.transfer", binary32);
  EXPECT_EQ(t.parameters["nan"], "quiet") << t.verdict;
}

// ref:ati-r520's pixel shader runs the first of two dependent additions on a one-guard-bit adder:
// the reference device must select model::Adder::cascaded_first for it.
TEST(Reference, AtiR520CascadedAdders) {
  auto d = ref("ref:ati-r520");
  auto cas = run(*d, "scalar.add.cascaded", binary32);
  EXPECT_EQ(cas.parameters["zero_from_i"], 25) << cas.verdict;
  EXPECT_EQ(cas.parameters["guard_bits"], 1) << cas.verdict;
  EXPECT_EQ(cas.parameters["same_as_single"], false) << cas.verdict;
}

// A device that runs the first of two dependent additions on the unit's cascaded adder (as the
// R520's pixel shaders do, [DGD] 2.3), for the cascaded probe on its own.
class CascadeDevice final : public backends::Device {
 public:
  explicit CascadeDevice(model::ScalarUnit u) : u_(u) { caps_.formats = {u.format}; }
  const backends::DeviceInfo& info() const override { return info_; }
  const backends::Capabilities& caps() const override { return caps_; }
  Expected<std::vector<std::uint64_t>> scalar(const backends::ScalarBatch& batch) override {
    const Expr& e = *batch.expr;
    const auto sum = [](Node n) { return n == Node::add || n == Node::sub; };
    std::vector<bool> feeds_sum(e.code.size(), false);
    for (const backends::Instr& in : e.code)
      if (sum(in.op)) feeds_sum[in.arg[0]] = feeds_sum[in.arg[1]] = true;
    std::vector<std::uint64_t> out, r(e.code.size());
    for (std::size_t t = 0; t < batch.operands.size(); t += std::size_t(e.inputs)) {
      for (std::size_t i = 0; i < e.code.size(); ++i) {
        const backends::Instr& in = e.code[i];
        const model::Adder which = feeds_sum[i] ? model::Adder::cascaded_first : model::Adder::single;
        switch (in.op) {
          case Node::input: r[i] = model::unit_load(u_, batch.operands[t + in.arg[0]]).bits; break;
          case Node::add: r[i] = model::unit_add(u_, r[in.arg[0]], r[in.arg[1]], which).bits; break;
          case Node::sub: r[i] = model::unit_sub(u_, r[in.arg[0]], r[in.arg[1]], which).bits; break;
          default: return Error{"CascadeDevice: only loads, additions and subtractions"};
        }
      }
      out.push_back(model::unit_store(u_, r.back()).bits);
    }
    return out;
  }
  Expected<std::vector<std::uint64_t>> mma(const backends::MmaBatch&) override { return Error{"no MMA"}; }

 private:
  model::ScalarUnit u_;
  backends::DeviceInfo info_;
  backends::Capabilities caps_;
};

TEST(Cascade, FirstOfTwoAdditionsOnItsOwnAdder) {
  CascadeDevice d(model::ati_r520());
  auto cas = run(d, "scalar.add.cascaded", binary32);
  EXPECT_EQ(cas.parameters["zero_from_i"], 25) << cas.verdict;
  EXPECT_EQ(cas.parameters["guard_bits"], 1) << cas.verdict;
  EXPECT_EQ(cas.parameters["sticky"], false) << cas.verdict;
  EXPECT_EQ(cas.parameters["same_as_single"], false) << cas.verdict;
  auto add = run(d, "scalar.add.guard_bits", binary32);
  EXPECT_EQ(add.parameters["guard_bits"], 2) << add.verdict;
  CascadeDevice g70(model::nvidia_g70());
  auto same = run(g70, "scalar.add.cascaded", binary32);
  EXPECT_EQ(same.parameters["same_as_single"], true) << same.verdict;
  EXPECT_EQ(same.parameters["zero_from_i"], 26) << same.verdict;
}

// With no guard bit an adder's rest is 0 or a tie, so a nearest mode adds as the directed mode its
// ties follow, but for the overflow (MAX + MAX, MAX + half an ulp): rnz is not chop, and chop is not
// "equivalently rnz"; rna and ra both overflow to infinity and stay one answer.
TEST(Cascade, NoGuardBitNearestModesAreToldApartAtOverflow) {
  using model::Rounding;
  using model::UnitRounding;
  const struct {
    UnitRounding rounding;
    const char* answer;
    bool merged;
  } cases[] = {{UnitRounding::ieee(Rounding::rnz), "rnz", false},
               {UnitRounding::chopped(), "chop", false},
               {UnitRounding::ieee(Rounding::rnu), "rnu", false},
               {UnitRounding::ieee(Rounding::rna), "ra", true}};
  for (const auto& c : cases) {
    model::ScalarUnit u = model::ieee_unit(binary32);
    u.add = {c.rounding, 0, false};
    CascadeDevice d(u);
    auto add = run(d, "scalar.add.guard_bits", binary32);
    EXPECT_EQ(add.parameters["rounding"], c.answer) << add.verdict;
    EXPECT_EQ(add.parameters["guard_bits"], 0) << add.verdict;
    EXPECT_EQ(add.parameters.contains("equivalent_roundings"), c.merged) << add.verdict;
    EXPECT_EQ(add.verdict.find("or equivalently") != std::string::npos, c.merged) << add.verdict;
  }
}

// Blind recovery: random scalar units (unittests/random_unit.hpp), built as virtual devices; the
// probes recover each hidden parameter that the arithmetic exposes.
TEST(Reference, BlindRecovery) {
  std::mt19937_64 rng(20060501);
  // GPUPARANOIA_BLIND_TRIALS raises the count (and adds binary64) for a longer sweep by hand.
  const bool by_hand = std::getenv("GPUPARANOIA_BLIND_TRIALS") != nullptr;
  const int trials = int(testing::count_from_env("GPUPARANOIA_BLIND_TRIALS", 8));
  for (int trial = 0; trial < trials; ++trial) {
    const Format& f = trial % 3 == 2 ? binary16 : trial % 3 == 1 && by_hand ? binary64 : binary32;
    const model::ScalarUnit u = testing::random_unit(rng, f);
    const int g = *u.add.guard_bits, t = *u.mul.truncated_columns;
    const model::UnitRounding r = u.add.rounding, rm = u.mul.rounding;
    SCOPED_TRACE(model::describe(u));
    auto d = unit_device(u);
    // The hidden adder's answer (its parameters, or the equivalent adder no input tells apart: a
    // sticky adder with enough guard bits is correctly rounded, with no guard bit each to-nearest
    // mode breaks ties as a directed mode rounds) is the verdict, and its profile keys.
    const audit::ScalarProbe& guard = probe("scalar.add.guard_bits");
    auto add = run(d, "scalar.add.guard_bits", f);
    EXPECT_EQ(add.parameters["conclusion"], "stated") << add.verdict;
    EXPECT_EQ(backends::to_json(add.profile), backends::to_json(guard.profile_of(*guard.ask(u)))) << add.verdict;
    (void)g;
    (void)r;
    auto cols = run(d, "scalar.mul.truncated_columns", f);
    EXPECT_EQ(cols.parameters["truncated_columns"], t) << cols.verdict;
    EXPECT_EQ(cols.parameters["rounding"], std::string(model::name(rm))) << cols.verdict;
    auto corr = run(d, "scalar.mul.correction", f);
    EXPECT_EQ(corr.parameters["correction"], u.mul.correction) << corr.verdict;
    auto sub = run(d, "scalar.subnormals.flush", f);
    const nlohmann::json subs = backends::to_json(sub.profile)["subnormals"];
    if (!u.subnormals.flush_transfer || (!u.subnormals.flush_input && !u.subnormals.flush_output)) {
      EXPECT_EQ(subs["input"], u.subnormals.flush_input ? "flush" : "preserve") << sub.verdict;
      EXPECT_EQ(subs["output"], u.subnormals.flush_output ? "flush" : "preserve") << sub.verdict;
    } else {
      // Loads and stores that flush hide which of input and output flushing the operations do.
      EXPECT_FALSE(subs.contains("input") && subs["input"] == "preserve") << sub.verdict;
      EXPECT_FALSE(subs.contains("output") && subs["output"] == "preserve") << sub.verdict;
    }
    auto transfer = run(d, "scalar.storage.transfer", f);
    EXPECT_EQ(backends::to_json(transfer.profile)["subnormals"]["transfer"],
              u.subnormals.flush_transfer ? "flush" : "preserve");
    EXPECT_EQ(transfer.parameters["nan"], u.nan.quiet_on_transfer ? "quiet" : "preserve") << transfer.verdict;
    auto mad = run(d, "scalar.mad.extra_precision", f);
    EXPECT_EQ(mad.parameters["fused"], u.mad_fused) << mad.verdict;
  }
}

// The classes of roundings the probes merge (tests_scalar/probe_support.hpp, rounding_class) hold
// on every input, and the pairs they keep apart are told apart by some input: random bit patterns
// (specials, subnormals and overflows included) and values of nearby exponents.
TEST(EquivalentRoundings, HoldOnRandomInputs) {
  using model::Rounding;
  using model::UnitRounding;
  std::mt19937_64 rng(GTEST_FLAG_GET(random_seed) + 5);
  const auto operand = [&](const model::Format& f) {
    if (rng() % 2) return rng() & f.storage_mask();
    const int e = int(rng() % std::uint64_t(f.emax() - f.emin() + 1)) + f.emin();
    return value(f, rng() & 1, e - f.man_bits, (std::uint64_t{1} << f.man_bits) | (rng() & f.man_mask()));
  };
  // Products keep one column, a constant below 4: rna multiplies as ra once products are flushed.
  for (const model::Format* f : {&binary32, &binary16})
    for (std::uint64_t c = 0; c < 4; ++c) {
      model::Options flushed;
      flushed.ftz_out = true;
      const auto mul = [&](Rounding r, const model::Options& o, std::uint64_t a, std::uint64_t b) {
        return model::multiplier_mul(*f, {UnitRounding::ieee(r), 0, c}, o, a, b).bits;
      };
      bool apart_unflushed = false;
      for (int i = 0; i < 200000; ++i) {
        const std::uint64_t a = operand(*f), b = operand(*f);
        ASSERT_EQ(mul(Rounding::rna, flushed, a, b), mul(Rounding::ra, flushed, a, b))
            << f->name << " c " << c << ": " << a << " * " << b;
        apart_unflushed = apart_unflushed || mul(Rounding::rna, {}, a, b) != mul(Rounding::ra, {}, a, b);
      }
      EXPECT_TRUE(apart_unflushed) << f->name << ": subnormal products tell rna from ra";
      // Overflow tells the other pairs apart: MAX * 1.5.
      const std::uint64_t max = largest(*f), three_halves = value(*f, false, -1, 3);
      EXPECT_NE(mul(Rounding::rnz, flushed, max, three_halves), mul(Rounding::rz, flushed, max, three_halves));
      EXPECT_NE(mul(Rounding::rnu, flushed, negate(*f, max), three_halves),
                mul(Rounding::ru, flushed, negate(*f, max), three_halves));
      EXPECT_NE(mul(Rounding::rno, flushed, max, three_halves), mul(Rounding::ro, flushed, max, three_halves));
    }
  // Square roots: the nearest modes alike, rz as rd, ra as ru.
  for (const model::Format* f : {&binary32, &binary16})
    for (int i = 0; i < 200000; ++i) {
      const std::uint64_t x = operand(*f);
      const auto root = [&](Rounding r) {
        model::Options o;
        o.rounding = r;
        return model::sqrt(*f, o, x).bits;
      };
      for (Rounding r : {Rounding::rna, Rounding::rnz, Rounding::rnu, Rounding::rnd, Rounding::rno})
        ASSERT_EQ(root(r), root(Rounding::rne)) << f->name << " sqrt " << x << " in " << model::name(r);
      ASSERT_EQ(root(Rounding::rd), root(Rounding::rz)) << f->name << " sqrt " << x;
      ASSERT_EQ(root(Rounding::ru), root(Rounding::ra)) << f->name << " sqrt " << x;
    }
  EXPECT_EQ(rounding_class("chop", false), (nlohmann::json{"chop", "rnz"}));
  EXPECT_EQ(rounding_class("ra", true), (nlohmann::json{"ra", "rna"}));
  EXPECT_EQ(rounding_class("ru", true), (nlohmann::json{"ru"}));
}

}  // namespace
}  // namespace gp::scalar
