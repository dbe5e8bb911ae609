// The Paranoia probes, fusedness, ulp error bounds and the exhaustive binary16 probe on the
// reference devices:
// - IEEE devices (binary32, binary16, binary64) and a chopped IEEE device: "correctly rounded",
//   "appears to chop", fused fma, gradual underflow, overflow to infinity;
// - ref:nvidia-g70: the conclusions of the 7800GTX log (Daumas et al. 2006, appendix A), with the
//   probe's error bounds printed beside the log's;
// - every built-in scalar unit: the probes recover its fma/mad fusion and subnormal flushing;
// - the integer ulp arithmetic against host binary64 (oracle), and the guard-bit adder hypothesis
//   against the scalar unit model's adder.
// Tier::quick throughout (a few seconds); the long build (GPUPARANOIA_PARANOIA_LONG) runs the
// exhaustive binary16 probe under Tier::full.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <random>

#include "audit/probe.hpp"
#include "backends/reference/reference_backend.hpp"
#include "model/scalar_unit.hpp"
#include "tests_scalar/paranoia_support.hpp"
#include "tests_scalar/suite.hpp"
#include "tests_scalar/ulp.hpp"
#include "unittests/reference_devices.hpp"
#include "unittests/sweep.hpp"

namespace gp {
namespace {

using audit::Finding;
using audit::Tier;
using model::Format;

constexpr std::uint64_t kSeed = 20060517;

backends::Device& device(std::string_view name) { return testing::reference_device(name); }

const audit::ScalarProbe& probe(std::string_view id) {
  for (const audit::ScalarProbe* p : scalar::probes())
    if (p->id() == id) return *p;
  throw std::runtime_error("no probe " + std::string(id));
}

Finding run(std::string_view id, backends::Device& dev, const Format& f, Tier tier = Tier::quick) {
  const audit::ScalarProbe& p = probe(id);
  Finding fi = p.run(dev, f, audit::ProbeContext{tier, kSeed});
  std::printf("  [%s %s] %s: %s%s\n", dev.info().id.c_str(), std::string(f.name).c_str(), std::string(id).c_str(),
              fi.verdict.c_str(), fi.message.empty() ? "" : (" (" + fi.message + ")").c_str());
  EXPECT_EQ(fi.status, audit::Status::ok) << id << " on " << dev.info().id << ": " << fi.message;
  return fi;
}

bool has(const std::string& s, std::string_view part) { return s.find(part) != std::string::npos; }

const char* const kParanoiaProbes[] = {"scalar.paranoia.radix",
                                       "scalar.paranoia.precision",
                                       "scalar.paranoia.compare_sub",
                                       "scalar.mul.guard_digit",
                                       "scalar.div.guard_digit",
                                       "scalar.sub.guard_digit",
                                       "scalar.mul.paranoia_rounding",
                                       "scalar.div.paranoia_rounding",
                                       "scalar.sub.paranoia_rounding",
                                       "scalar.paranoia.sticky",
                                       "scalar.mul.commutative",
                                       "scalar.sqrt.paranoia",
                                       "scalar.paranoia.underflow",
                                       "scalar.paranoia.overflow",
                                       "scalar.fma.fused",
                                       "scalar.mad.fused",
                                       "scalar.add.ulp_error",
                                       "scalar.sub.ulp_error",
                                       "scalar.mul.ulp_error",
                                       "scalar.div.ulp_error",
                                       "scalar.sqrt.ulp_error"};

TEST(ScalarParanoia, ProbesAreRegisteredOnce) {
  for (const char* id : kParanoiaProbes) {
    int n = 0;
    for (const audit::ScalarProbe* p : scalar::probes()) n += p->id() == id;
    EXPECT_EQ(n, 1) << id;
  }
  EXPECT_TRUE(probe("scalar.binary16.exhaustive").applies(model::binary16));
  EXPECT_FALSE(probe("scalar.binary16.exhaustive").applies(model::binary32));
}

// An IEEE device: every Paranoia verdict is the correctly rounded one, nothing is flagged.
void expect_ieee(backends::Device& dev, const Format& f) {
  const auto v = [&](std::string_view id) { return run(id, dev, f).verdict; };
  EXPECT_TRUE(has(v("scalar.paranoia.radix"), "RADIX: 2 "));
  const std::string prec = v("scalar.paranoia.precision");
  EXPECT_TRUE(has(prec, fmt::format("PRECISION: {} significant bits;", f.precision()))) << prec;
  EXPECT_TRUE(has(prec, "confirmed")) << prec;
  EXPECT_TRUE(has(prec, "U1 U2 F9 B9 verified")) << prec;
  const std::string cmp = v("scalar.paranoia.compare_sub");
  EXPECT_TRUE(has(cmp, "No fuzziness detected in comparison; Comparison and Subtraction consistent")) << cmp;
  EXPECT_EQ(v("scalar.mul.guard_digit"), "MULTIPLICATION: Seems to have guard bit; accuracy tests passed");
  EXPECT_EQ(v("scalar.div.guard_digit"), "DIVISION: Seems to have guard digit");
  EXPECT_EQ(v("scalar.sub.guard_digit"), "SUBTRACTION: Seems to have guard bit");
  EXPECT_EQ(v("scalar.mul.paranoia_rounding"), "MULTIPLICATION: appears to round correctly");
  EXPECT_EQ(v("scalar.div.paranoia_rounding"), "DIVISION: appears to round correctly");
  EXPECT_EQ(v("scalar.sub.paranoia_rounding"), "ADDITION/SUBTRACTION: appears to round correctly");
  EXPECT_EQ(v("scalar.paranoia.sticky"), "STICKY BIT: apparently used correctly");
  EXPECT_TRUE(has(v("scalar.mul.commutative"), "pairs commuted"));
  EXPECT_TRUE(has(v("scalar.sqrt.paranoia"), "SQUARE ROOT: rounds correctly; sqrt(X*X) == X for"));
  EXPECT_TRUE(has(v("scalar.paranoia.underflow"),
                  "UNDERFLOW: gradual; smallest positive number E0 = 2^" + std::to_string(f.quantum_min())));
  EXPECT_TRUE(has(v("scalar.paranoia.overflow"), "OVERFLOW: to infinity; overflow threshold V = MAX"));
  // Where the device also computes in a format of twice the precision, wider registers with an
  // unfused fma() give the same outputs here: the verdict may then be inconclusive, never unfused.
  const Finding fma = run("scalar.fma.fused", dev, f);
  if (fma.parameters["conclusion"] == "stated") {
    EXPECT_EQ(backends::to_json(fma.profile).at("fma").at("fused"), true) << fma.verdict;
  } else {
    EXPECT_TRUE(has(fma.verdict, "inconclusive: ")) << fma.verdict;
  }
  EXPECT_EQ(fma.parameters["extra_product_bits"], f.man_bits);
  const Finding mad = run("scalar.mad.fused", dev, f);
  EXPECT_EQ(backends::to_json(mad.profile).at("mad").at("fused"), false);  // the IEEE units do not contract a*b+c
  EXPECT_TRUE(has(mad.verdict, "MAD: a*b+c is not fused: the product is rounded before the addition")) << mad.verdict;
  for (const char* op : {"add", "sub", "mul", "div", "sqrt"}) {
    const Finding u = run(fmt::format("scalar.{}.ulp_error", op), dev, f);
    EXPECT_EQ(u.parameters["correctly_rounded"], true) << op;
    for (const char* set : {"exhaustive", "random", "random_signed"}) {
      if (std::string_view(op) == "sqrt" && std::string_view(set) == "random_signed") continue;
      EXPECT_GE(u.parameters[set]["min_ulps"].get<double>(), -0.5) << op << " " << set;
      EXPECT_LE(u.parameters[set]["max_ulps"].get<double>(), 0.5) << op << " " << set;
      EXPECT_GT(u.parameters[set]["results"].get<int>(), 0) << op << " " << set;
    }
  }
  for (const char* id : kParanoiaProbes) {
    const Finding fi = probe(id).run(dev, f, audit::ProbeContext{Tier::quick, kSeed});
    for (const char* word : {"FAILURE", "SERIOUS", "DEFECT", "FLAW"}) EXPECT_FALSE(has(fi.verdict, word)) << fi.verdict;
    EXPECT_FALSE(fi.observations.empty()) << id;
  }
}

TEST(ScalarParanoia, IeeeBinary32) { expect_ieee(device("ieee-binary32"), model::binary32); }
TEST(ScalarParanoia, IeeeBinary16) {
  expect_ieee(device("ieee-binary16"), model::binary16);
  const Finding fi = run("scalar.binary16.exhaustive", device("ieee-binary16"), model::binary16);
  EXPECT_EQ(fi.parameters["add"]["mismatches"]["correctly rounded"], 0);
  EXPECT_EQ(fi.parameters["mul"]["mismatches"]["correctly rounded"], 0);
  EXPECT_EQ(fi.parameters["add"]["pairs"], 1 << 16);
  EXPECT_GT(fi.parameters["mul"]["mismatches"]["chopped"], 0);
}
TEST(ScalarParanoia, IeeeBinary64) { expect_ieee(device("ieee-binary64"), model::binary64); }

// A correctly rounded unit that rounds toward zero: Paranoia's "chopped" on every operation.
TEST(ScalarParanoia, ChoppedIeeeUnit) {
  backends::ReferenceDevice dev(backends::Profile{"ieee-binary32-rz",
                                                  "binary32 unit, round toward zero",
                                                  "test",
                                                  "",
                                                  {model::ieee_unit(model::binary32, model::Rounding::rz)},
                                                  {},
                                                  {},
                                                  {}});
  const Format& f = model::binary32;
  EXPECT_EQ(run("scalar.mul.paranoia_rounding", dev, f).verdict, "MULTIPLICATION: appears to chop");
  EXPECT_EQ(run("scalar.div.paranoia_rounding", dev, f).verdict, "DIVISION: appears to chop");
  EXPECT_EQ(run("scalar.sub.paranoia_rounding", dev, f).verdict, "ADDITION/SUBTRACTION: appears to be chopped");
  EXPECT_TRUE(has(run("scalar.sqrt.paranoia", dev, f).verdict, "SQUARE ROOT: appears to chop"));
  EXPECT_EQ(run("scalar.mul.guard_digit", dev, f).verdict,
            "MULTIPLICATION: Seems to have guard bit; accuracy tests passed");
  EXPECT_TRUE(has(run("scalar.paranoia.overflow", dev, f).verdict, "saturates at V0 = MAX"));
  EXPECT_TRUE(has(run("scalar.paranoia.precision", dev, f).verdict, "PRECISION: 24 significant bits;"));
  const Finding add = run("scalar.add.ulp_error", dev, f);
  EXPECT_EQ(add.parameters["correctly_rounded"], false);
  EXPECT_EQ(add.parameters["faithful"], true);
  // Positive sums chop down; negative ones chop toward zero, that is up.
  EXPECT_GT(add.parameters["exhaustive"]["min_ulps"].get<double>(), -1.0);
  EXPECT_LE(add.parameters["exhaustive"]["max_ulps"].get<double>(), 0.0);
  EXPECT_LE(add.parameters["random"]["max_ulps"].get<double>(), 0.0);
  EXPECT_GT(add.parameters["random_signed"]["max_ulps"].get<double>(), 0.5);
}

// App. A's rounding test lines: the preconditions (passed or failed) by the probe's notes, then the
// six classified results in the probe's order, as the probe labels them (the log prints "NEITHER"
// for (1+2U2)(1-U2) -> 1+U2, which is the correctly rounded value: EXACT here). Returns the number
// of lines on which the probe agrees with the log, printing each.
int agree_with_log(const Finding& fi, const std::vector<std::pair<std::string, bool>>& pre,
                   const std::vector<std::string>& tests) {
  int agree = 0;
  for (const auto& [note, passed] : pre) {
    const bool probe_passed = fi.parameters["preconditions"].value(note, !passed);
    agree += probe_passed == passed;
    std::printf("    %-62s log %-6s probe %s\n", note.c_str(), passed ? "passed" : "failed",
                probe_passed ? "passed" : "failed");
  }
  for (std::size_t i = 0; i < tests.size(); ++i) {
    const auto& t = fi.parameters["tests"][i];
    agree += t["result"] == tests[i];
    std::printf("    %-62s log %-7s probe %s (%s)\n", t["test"].get<std::string>().c_str(), tests[i].c_str(),
                t["result"].get<std::string>().c_str(), t["output"].get<std::string>().c_str());
  }
  return agree;
}

// The 7800GTX log's conclusions on the G70 model, and its error bounds beside the probe's.
TEST(ScalarParanoia, NvidiaG70AgainstTheLog) {
  backends::Device& dev = device("nvidia-g70");
  const Format& f = model::binary32;
  const auto v = [&](std::string_view id) { return run(id, dev, f).verdict; };
  EXPECT_TRUE(has(v("scalar.paranoia.radix"), "RADIX: 2 "));
  const std::string prec = v("scalar.paranoia.precision");
  EXPECT_TRUE(has(prec, "PRECISION: 24 significant bits;")) << prec;
  EXPECT_TRUE(has(prec, "U1 U2 F9 B9 verified")) << prec;  // "U1 U2 F9 B9 Verified"
  const std::string cmp = v("scalar.paranoia.compare_sub");
  EXPECT_TRUE(has(cmp, "No fuzziness detected in comparison")) << cmp;    // "No fuzziness detected in comparison"
  EXPECT_TRUE(has(cmp, "Comparison and Subtraction consistent")) << cmp;  // "... consistent (2170)"
  EXPECT_TRUE(has(cmp, "(X - Y) + (Y - X) == 0")) << cmp;                 // "(X-Y) + (Y-X) == 0 test passed"
  EXPECT_TRUE(has(v("scalar.mul.guard_digit"), "MULTIPLICATION: Seems to have guard bit; accuracy tests passed"));
  EXPECT_TRUE(has(v("scalar.div.guard_digit"), "DIVISION: FAILURE: Division lacks guard digit"));
  EXPECT_TRUE(has(v("scalar.sub.guard_digit"), "SUBTRACTION: Seems to have guard bit"));
  const Finding mr = run("scalar.mul.paranoia_rounding", dev, f);
  EXPECT_TRUE(has(mr.verdict, "MULTIPLICATION: Is neither chopped nor correctly rounded"));
  EXPECT_TRUE(has(mr.verdict, "rounds up where it should round down"));  // "(first four tests)"
  const int mul_agree = agree_with_log(mr,
                                       {{"(1.5 - U2) * (1 + U2) = 1.5 + 0.5 U2 - U2^2 -> 1.5", false},
                                        {"(1.5 + 2 U2) * (1 - U2) = 1.5 + 0.5 U2 - 2 U2^2 -> 1.5", true},
                                        {"(1.5 - 2 U2) * (1 + U2) = 1.5 - 0.5 U2 - 2 U2^2 <= 1.5 - U2", false},
                                        {"(1.5 + U2) * (1 - U2) = 1.5 - 0.5 U2 - U2^2 <= 1.5 - U2", true}},
                                       {"EXACT", "CHOPPED", "EXACT", "CHOPPED", "EXACT", "EXACT"});
  EXPECT_EQ(mul_agree, 10) << "multiplication rounding lines of App. A reproduced";
  const Finding dr = run("scalar.div.paranoia_rounding", dev, f);
  EXPECT_TRUE(has(dr.verdict, "DIVISION: Is neither chopped nor correctly rounded"));
  const int div_agree = agree_with_log(dr,
                                       {{"(1.5 + 2 U2) / (1 + U2) <= 1.5", false},
                                        {"(1.5 - 3 U2) / (1 - U2) <= 1.5 - 2 U2", false},
                                        {"(1.5 + 3 U2) / (1 + U2) <= 1.5 + U2", false},
                                        {"(1.5 - 2 U2) / (1 - U2) <= 1.5 - U2", true}},
                                       {"EXACT", "EXACT", "EXACT", "EXACT", "CHOPPED", "NEITHER"});
  // The model's division (x times 1/y rounded up, by the truncated multiplier) cannot give all of
  // App. A's quotients (see model/scalar_unit.cpp): 6 of these 10 lines, and the 6 guard-digit ones.
  std::printf("    division: %d of 10 rounding lines of App. A reproduced\n", div_agree);
  EXPECT_GE(div_agree, 6);
  EXPECT_TRUE(has(v("scalar.sub.paranoia_rounding"), "Is neither chopped nor correctly rounded"));
  EXPECT_TRUE(has(v("scalar.mul.commutative"), "pairs commuted"));  // "MULTIPLICATION: 10 pairs commuted"
  EXPECT_TRUE(has(v("scalar.paranoia.sticky"), "used incorrectly or not at all"));
  EXPECT_EQ(backends::to_json(run("scalar.fma.fused", dev, f).profile)["fma"]["fused"], false);
  EXPECT_EQ(backends::to_json(run("scalar.mad.fused", dev, f).profile)["mad"]["fused"], false);  // [DGD] 2.1
  EXPECT_TRUE(has(v("scalar.paranoia.underflow"), "UNDERFLOW: abrupt"));
  v("scalar.paranoia.overflow");
  v("scalar.sqrt.paranoia");

  struct Bound {
    const char* op;
    double lo, hi;
  };
  std::printf("  error bounds in ulps, 7800GTX log (appendix A) vs the probe on ref:nvidia-g70:\n");
  for (const Bound b : {Bound{"mul", -0.78125, 0.625}, Bound{"div", -1.19902, 1.37442}, Bound{"sub", -0.75, 0.75},
                        Bound{"add", -1, 0}}) {
    const Finding fi = run(fmt::format("scalar.{}.ulp_error", b.op), dev, f);
    const auto& ex = fi.parameters["exhaustive"];
    const auto& rn = fi.parameters["random"];
    std::printf("    %-4s log [%g, %g]   exhaustive set [%.6g, %.6g]   random positive [%.6g, %.6g]\n", b.op, b.lo,
                b.hi, ex["min_ulps"].get<double>(), ex["max_ulps"].get<double>(), rn["min_ulps"].get<double>(),
                rn["max_ulps"].get<double>());
    EXPECT_EQ(fi.parameters["correctly_rounded"], false) << b.op;
  }
  // Addition of positive values is chopped: its errors lie in (-1, 0] as the log's [-1, 0].
  const Finding add = run("scalar.add.ulp_error", dev, f);
  EXPECT_GT(add.parameters["exhaustive"]["min_ulps"].get<double>(), -1.0);
  EXPECT_LE(add.parameters["exhaustive"]["max_ulps"].get<double>(), 0.0);
  // Multiplication is faithful with errors on both sides, as the log's [-0.78125, 0.625].
  const Finding mul = run("scalar.mul.ulp_error", dev, f);
  EXPECT_EQ(mul.parameters["faithful"], true);
  EXPECT_LT(mul.parameters["random"]["min_ulps"].get<double>(), -0.5);
  EXPECT_GT(mul.parameters["random"]["max_ulps"].get<double>(), 0.5);
}

// Every built-in scalar unit: fma/mad fusion and subnormal flushing recovered blind, and no probe
// stops with an error.
TEST(ScalarParanoia, BuiltinUnitsRecovered) {
  std::size_t i = 0;
  for (auto& dev : testing::reference_devices()) {
    if (!testing::in_sweep(i++)) continue;
    const auto* ref = dynamic_cast<backends::ReferenceDevice*>(dev.get());
    ASSERT_NE(ref, nullptr);
    for (const model::ScalarUnit& u : ref->profile().units) {
      const Format& f = u.storage_format();
      if (!scalar::paranoia::paranoid_format(f)) continue;
      for (const char* id : kParanoiaProbes) {
        const Finding fi = probe(id).run(*dev, f, audit::ProbeContext{Tier::quick, kSeed});
        EXPECT_EQ(fi.status, audit::Status::ok)
            << id << " on " << dev->info().id << " " << f.name << ": " << fi.message;
        EXPECT_FALSE(fi.verdict.empty()) << id;
        // Registers of at least twice the storage precision hold the products exactly, and the
        // probe's sums are exact: such a unit's fusion shows only on inputs its challenge draws
        // (a truncated multiplier's constant), and the verdict is inconclusive where none does.
        const bool exact_products = u.format->precision() >= 2 * f.precision();
        const std::string_view pid(id);
        if (pid == "scalar.fma.fused" || pid == "scalar.mad.fused") {
          const bool fma = pid == "scalar.fma.fused";
          if (fi.parameters["conclusion"] == "stated") {
            EXPECT_EQ(fi.parameters.at("fused"), fma ? u.fma_fused || u.mad_fused : u.mad_fused)
                << u.name << ": " << fi.verdict;
          } else if (exact_products) {
            EXPECT_TRUE(has(fi.verdict, "inconclusive: ")) << u.name << ": " << fi.verdict;
          }
        } else if (pid == "scalar.paranoia.underflow") {
          EXPECT_EQ(fi.parameters["gradual"], !(u.subnormals.flush_input || u.subnormals.flush_output)) << u.name;
        } else if (pid == "scalar.paranoia.precision" && u.format == &f) {
          EXPECT_EQ(fi.parameters["precision"], f.precision()) << u.name;
        }
      }
    }
  }
}

// The binary32 arithmetic of a binary16-storage unit shows through: 24 bits measured in binary16.
TEST(ScalarParanoia, RegisterPrecisionBeyondStorage) {
  const Finding fi = run("scalar.paranoia.precision", device("nvidia-g70"), model::binary16);
  EXPECT_EQ(fi.parameters["precision"], 24);
  EXPECT_TRUE(has(fi.verdict, "24 significant bits measured, the format has 11 (registers wider")) << fi.verdict;
}

// A probe reports a device error as a finding, not a crash: `error`, or `unsupported` where the
// device lacks what the probe needs (audit::failed).
class FailingDevice final : public backends::Device {
 public:
  explicit FailingDevice(Error e = Error{"lost device", ErrorKind::lost},
                         std::vector<const Format*> formats = {&model::binary32})
      : error_(std::move(e)) {
    info_.id = "test:failing";
    caps_.formats = std::move(formats);
  }
  const backends::DeviceInfo& info() const override { return info_; }
  const backends::Capabilities& caps() const override { return caps_; }
  Expected<std::vector<std::uint64_t>> scalar(const backends::ScalarBatch&) override { return error_; }
  Expected<std::vector<std::uint64_t>> mma(const backends::MmaBatch&) override { return error_; }

 private:
  Error error_;
  backends::DeviceInfo info_;
  backends::Capabilities caps_;
};

TEST(ScalarParanoia, DeviceErrorsBecomeErrorFindings) {
  FailingDevice dev;
  for (const char* id : kParanoiaProbes) {
    const Finding fi = probe(id).run(dev, model::binary32, audit::ProbeContext{Tier::quick, kSeed});
    EXPECT_EQ(fi.status, audit::Status::error) << id;
    EXPECT_TRUE(has(fi.message, "lost device")) << id << ": " << fi.message;
  }
  EXPECT_EQ(probe("scalar.paranoia.radix").run(dev, model::binary16, {}).status, audit::Status::unsupported);
}

// Every scalar probe: a device that refuses an expression it cannot compute ends the probe as
// `unsupported`, saying why; any other error as `error`.
TEST(ScalarParanoia, UnsupportedErrorsBecomeUnsupportedFindings) {
  const std::vector<const Format*> formats = {&model::binary16, &model::binary32, &model::binary64};
  FailingDevice lacking(Error{"test:failing cannot compute this", ErrorKind::unsupported}, formats);
  FailingDevice failing(Error{"the driver failed", ErrorKind::failed}, formats);
  for (const audit::ScalarProbe* p : scalar::probes()) {
    if (!p->applies(model::binary32)) continue;
    const Finding a = p->run(lacking, model::binary32, audit::ProbeContext{Tier::quick, kSeed});
    EXPECT_EQ(a.status, audit::Status::unsupported) << p->id() << ": " << a.message;
    EXPECT_TRUE(has(a.message, "cannot compute this")) << p->id() << ": " << a.message;
    const Finding b = p->run(failing, model::binary32, audit::ProbeContext{Tier::quick, kSeed});
    EXPECT_EQ(b.status, audit::Status::error) << p->id() << ": " << b.message;
  }
}

// The integer ulp arithmetic against host binary64 (exact for binary32 products, within 2^-29 ulp
// for the other operations), on random binary32 operands and a biased result.
TEST(ScalarParanoia, UlpErrorAgainstHostDouble) {
  using scalar::paranoia::error_q64;
  using scalar::paranoia::exact_result;
  using scalar::paranoia::q64_to_double;
  std::mt19937_64 rng(kSeed);
  const Format& f = model::binary32;
  const auto fl = [](float x) { return std::uint64_t(std::bit_cast<std::uint32_t>(x)); };
  for (int i = 0; i < 20000; ++i) {
    const float a = std::ldexp(float(rng() % (1u << 24)) + 1.f, int(rng() % 40) - 44);
    const float b = std::ldexp(float(rng() % (1u << 24)) + 1.f, int(rng() % 40) - 44) * (rng() & 1 ? -1.f : 1.f);
    for (backends::Node op :
         {backends::Node::add, backends::Node::sub, backends::Node::mul, backends::Node::div, backends::Node::sqrt}) {
      double exact;
      float rounded;
      switch (op) {
        case backends::Node::add:
          exact = double(a) + double(b);
          rounded = a + b;
          break;
        case backends::Node::sub:
          exact = double(a) - double(b);
          rounded = a - b;
          break;
        case backends::Node::mul:
          exact = double(a) * double(b);
          rounded = a * b;
          break;
        case backends::Node::div:
          exact = double(a) / double(b);
          rounded = a / b;
          break;
        default:
          exact = std::sqrt(double(a));
          rounded = std::sqrt(a);
          break;
      }
      // A device result up to 3 ulps away from the correctly rounded one.
      const int shift = int(rng() % 7) - 3;
      const std::uint32_t bits = std::bit_cast<std::uint32_t>(rounded);
      const float d = (bits & 0x7fffffffu) > 8 ? std::bit_cast<float>(std::uint32_t(int(bits) + shift)) : rounded;
      if (!std::isfinite(d)) continue;
      const std::uint64_t ops[2] = {fl(a), fl(b)};
      const auto x = exact_result(f, op, ops);
      ASSERT_TRUE(x.has_value());
      const auto e = error_q64(f, *x, fl(d));
      ASSERT_TRUE(e.has_value());
      int ex = 0;
      std::frexp(exact, &ex);
      const double ulp = exact == 0 ? std::ldexp(1.0, -149) : std::ldexp(1.0, std::max(ex - 1, -126) - 23);
      const double want = (double(d) - exact) / ulp;
      EXPECT_NEAR(q64_to_double(*e), want, 1e-6 * std::max(1.0, std::fabs(want)))
          << "op " << int(op) << " a=" << a << " b=" << b << " d=" << d;
    }
  }
}

TEST(ScalarParanoia, UlpErrorKnownValues) {
  using namespace scalar::paranoia;
  const Format& f = model::binary32;
  const Consts c(f);
  const std::uint64_t third = model::div(f, {}, c.one, c.three).bits;  // 0x3eaaaaab
  const std::uint64_t ops[2] = {c.one, c.three};
  const auto x = exact_result(f, backends::Node::div, ops);
  ASSERT_TRUE(x.has_value());
  // ulp(1/3) = 2^-25 and 1/3 = (2^25 / 3) ulp = 11184810 + 2/3 ulp: RN(1/3) = 11184811 ulp is
  // 1/3 ulp above; the value below is 2/3 ulp below.
  EXPECT_EQ(third, 0x3eaaaaabu);
  EXPECT_NEAR(q64_to_double(*error_q64(f, *x, third)), 1.0 / 3, 1e-15);
  EXPECT_NEAR(q64_to_double(*error_q64(f, *x, third - 1)), -2.0 / 3, 1e-15);
  // 1 + 2^-60 (far below the last place): the sticky path; 1 is off by -2^-37 ulp.
  const std::uint64_t tiny[2] = {c.one, c.v(1, -60)};
  const auto s = exact_result(f, backends::Node::add, tiny);
  EXPECT_NEAR(q64_to_double(*error_q64(f, *s, c.one)), -std::ldexp(1.0, -37), 1e-20);
  // sqrt(2): RN = 0x3fb504f3, exact 1.41421356237309515.. ; error of RN about -0.2420 ulp... checked via double.
  const std::uint64_t two[1] = {c.two};
  const auto r = exact_result(f, backends::Node::sqrt, two);
  const double root = std::sqrt(2.0);
  const std::uint64_t rn = model::sqrt(f, {}, c.two).bits;
  EXPECT_NEAR(q64_to_double(*error_q64(f, *r, rn)),
              (double(std::bit_cast<float>(std::uint32_t(rn))) - root) / std::ldexp(1.0, -23), 1e-8);
}

// The exponent of the leading bit as the exponent field sees it (subnormals at emin).
int field_exponent(const Format& f, const model::Unpacked& u) { return std::max(u.exp + model::msb(u.sig), f.emin()); }

// An adder with g guard bits and no sticky bit written from its definition another way than the
// model's: the aligned smaller operand is truncated to a value of f, and the two are added by the
// correctly rounded model::add.
std::uint64_t guard_bit_add(const Format& f, const model::Options& o, int g, std::uint64_t a, std::uint64_t b,
                            bool subtract) {
  if (subtract && !model::is_nan(model::classify(f, b))) b ^= f.sign_mask();
  const model::Unpacked ua = model::unpack(f, a, o.ftz_in), ub = model::unpack(f, b, o.ftz_in);
  if (!model::is_finite_nonzero(ua.cls) || !model::is_finite_nonzero(ub.cls)) return model::add(f, o, a, b).bits;
  const bool a_big = field_exponent(f, ua) >= field_exponent(f, ub);
  const model::Unpacked& big = a_big ? ua : ub;
  model::Unpacked small = a_big ? ub : ua;
  const int q = field_exponent(f, big) - f.man_bits - g;
  if (small.exp < q) {
    const int shift = q - small.exp;
    small.sig = shift >= 64 ? 0 : small.sig >> shift;
    small.exp = q;
  }
  const std::uint64_t s = small.sig == 0 ? model::zero(f, small.neg).bits
                                         : model::round_pack(f, model::Options{}, small.neg, small.exp, small.sig).bits;
  model::Options o2 = o;
  o2.ftz_in = false;  // already applied
  return model::add(f, o2, a_big ? a : s, a_big ? s : b).bits;
}

// The unit model's guard-bit adder (no sticky bit) against the definition written above.
TEST(ScalarParanoia, GuardBitAdderMatchesItsDefinition) {
  std::mt19937_64 rng(kSeed);
  for (const Format* f : {&model::binary32, &model::binary16}) {
    for (const auto& [unit_rounding, mode] :
         {std::pair{model::UnitRounding::chopped(), model::Rounding::rz},
          std::pair{model::UnitRounding::ieee(model::Rounding::rne), model::Rounding::rne}}) {
      for (int g = 0; g <= 3; ++g) {
        const model::AdderParams p{unit_rounding, g, false};
        model::Options o;
        o.rounding = mode;
        for (int i = 0; i < 20000; ++i) {
          const int P = f->man_bits;
          const auto draw = [&] {
            const int e = int(rng() % std::uint64_t(2 * P + 8)) - P - 4;
            return model::round_pack(*f, {}, rng() & 1, e - P, (std::uint64_t{1} << P) | (rng() & f->man_mask())).bits;
          };
          const std::uint64_t a = draw(), b = draw();
          EXPECT_EQ(guard_bit_add(*f, o, g, a, b, false), model::adder_add(*f, p, o, a, b).bits)
              << f->name << " g=" << g << " " << a << " + " << b;
          EXPECT_EQ(guard_bit_add(*f, o, g, a, b, true), model::adder_sub(*f, p, o, a, b).bits)
              << f->name << " g=" << g << " " << a << " - " << b;
        }
      }
    }
  }
}

#ifdef GPUPARANOIA_PARANOIA_LONG
// All 2^32 binary16 pairs for add and mul (Tier::full): zero mismatches on the IEEE device.
TEST(ScalarParanoiaLong, Binary16Exhaustive) {
  const Finding fi = run("scalar.binary16.exhaustive", device("ieee-binary16"), model::binary16, Tier::full);
  for (const char* op : {"add", "mul"}) {
    EXPECT_EQ(fi.parameters[op]["pairs"], std::uint64_t{1} << 32) << op;
    EXPECT_EQ(fi.parameters[op]["mismatches"]["correctly rounded"], 0) << op;
  }
}
#endif

}  // namespace
}  // namespace gp
