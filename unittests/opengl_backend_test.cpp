// The OpenGL backend on the machine's GL drivers (Mesa's llvmpipe through EGL where there is no GPU):
// enumeration of headless contexts, arithmetic against the model, batches split over several
// dispatches, failures as Error values, and the CLI's scalar suite. Skipped, with the reason, when
// no GL 4.3 core context can be made.
//
// What is asserted for every device is what GLSL 4.30 (section 4.7.1) guarantees for normal
// values: + - * and conversions correctly rounded, a / b within 2.5 ulp, sqrt as 1.0 / inversesqrt
// (a few ulp), fma() of one precision throughout the program, bits of finite values kept through
// uintBitsToFloat and packDouble2x32. Subnormals may be flushed, NaN and infinity bits are
// unspecified, and doubles need only single precision. Beyond that, llvmpipe (Mesa 22.3, checked
// here first, then asserted so that a change shows) is correctly rounded in binary32 and binary64 on
// every encoding, keeps subnormals, NaN payloads and signalling NaNs in transfers, and evaluates
// fma() and a*b+c unfused.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <thread>

#include "backends/opengl/egl_context.hpp"
#include "backends/opengl/opengl_backend.hpp"
#include "model/ops.hpp"
#include "model/value.hpp"
#include "unittests/backend_checks.hpp"
#include "unittests/cli_run.hpp"

namespace gp::backends {
namespace {

using model::binary32;
using model::binary64;
using model::Format;

constexpr std::uint64_t kSeed = 20240613;

struct Found {
  std::vector<std::unique_ptr<Device>> devices;
  std::string why;
};

Found enumerate() {
  Found f;
  auto d = OpenGLBackend().enumerate();
  if (d)
    f.devices = std::move(*d);
  else
    f.why = d.error().message;
  return f;
}

Found& gl() {
  static Found found = enumerate();
  return found;
}

class OpenGL : public ::testing::Test {
 protected:
  void SetUp() override {
    if (gl().devices.empty()) GTEST_SKIP() << "no OpenGL device: " << gl().why;
  }
};

bool llvmpipe(const Device& d) { return d.info().name.starts_with("llvmpipe"); }

model::Class cls(const Format& f, std::uint64_t x) { return model::classify(f, x); }
bool normal_or_zero(const Format& f, std::uint64_t x) {
  return cls(f, x) == model::Class::normal || cls(f, x) == model::Class::zero;
}

// A random value with a biased exponent field in [lo, hi].
std::uint64_t random_value(const Format& f, std::mt19937_64& rng, std::uint64_t lo, std::uint64_t hi) {
  const std::uint64_t field = lo + rng() % (hi - lo + 1);
  return (rng() & f.sign_mask()) | field << f.man_bits | (rng() & f.man_mask());
}
std::uint64_t random_normal(const Format& f, std::mt19937_64& rng) {
  return random_value(f, rng, 1, f.exp_field_max() - 1);
}

// Zeros, subnormals, normal edges, infinities and NaNs (quiet, signalling, with payloads), both signs.
std::vector<std::uint64_t> specials(const Format& f) {
  const std::uint64_t inf = f.exp_field_max() << f.man_bits, quiet = inf | f.quiet_bit();
  std::vector<std::uint64_t> v;
  for (const std::uint64_t m :
       {std::uint64_t{0}, std::uint64_t{1}, f.man_mask(), f.man_mask() >> 1, std::uint64_t{1} << f.man_bits, inf - 1,
        std::uint64_t(f.bias) << f.man_bits, inf, quiet, quiet | 5, inf | 1, inf | f.man_mask() >> 1})
    for (const std::uint64_t sign : {std::uint64_t{0}, f.sign_mask()}) v.push_back(m | sign);
  return v;
}

std::vector<std::uint64_t> evaluate(Device& d, const Expr& e, const std::vector<std::uint64_t>& operands) {
  auto out = d.scalar({&e, operands});
  if (!out) {
    ADD_FAILURE() << d.info().id << " " << e.to_string() << ": " << out.error().message;
    return {};
  }
  EXPECT_EQ(out->size(), operands.size() / std::size_t(e.inputs));
  return *out;
}

// Distance in encodings between two finite values of one sign (ulps at their binade), else huge.
std::uint64_t ulp_distance(const Format& f, std::uint64_t a, std::uint64_t b) {
  if (model::sign_of(f, a) != model::sign_of(f, b)) return a == b ? 0 : ~std::uint64_t{0};
  return a > b ? a - b : b - a;
}

// Runs one operation on the device over operand tuples and compares with the model's correctly
// rounded result. `normal_only`: only tuples whose operands and result are normal or zero count
// (GLSL lets subnormals flush). NaN results match any NaN; finite ones within `ulps`.
void expect_model(Device& d, model::Op op, const Expr& e, const std::vector<std::uint64_t>& operands, bool normal_only,
                  std::uint64_t ulps = 0) {
  const Format& f = *e.output_format;
  const std::vector<std::uint64_t> out = evaluate(d, e, operands);
  if (out.empty()) return;
  const std::size_t k = std::size_t(e.inputs);
  int shown = 0, compared = 0;
  for (std::size_t t = 0; t < out.size(); ++t) {
    const std::span<const std::uint64_t> x(&operands[t * k], k);
    const std::uint64_t want = model::evaluate(op, f, {}, x, *e.input_format).bits;
    if (normal_only && !(normal_or_zero(f, want) && std::all_of(x.begin(), x.end(), [&](std::uint64_t v) {
                           return normal_or_zero(*e.input_format, v);
                         })))
      continue;
    ++compared;
    const bool ok = model::is_nan(cls(f, want)) ? model::is_nan(cls(f, out[t])) : ulp_distance(f, want, out[t]) <= ulps;
    if (!ok && shown++ < 5)
      ADD_FAILURE() << fmt::format("{} {}: operands {:x}: got {:x}, the model gives {:x} (within {} ulp)", d.info().id,
                                   e.to_string(), fmt::join(x, " "), out[t], want, ulps);
  }
  EXPECT_GT(compared, 0);
}

// n tuples of k operands: random normal values, then (for exhaustive special cases) every
// combination of the specials with a few normals when `with_specials`.
std::vector<std::uint64_t> cases(const Format& f, int k, std::size_t n, bool with_specials, std::mt19937_64& rng) {
  std::vector<std::uint64_t> v;
  for (std::size_t i = 0; i < n * std::size_t(k); ++i) v.push_back(random_normal(f, rng));
  if (!with_specials) return v;
  std::vector<std::uint64_t> s = specials(f);
  for (int i = 0; i < 4; ++i) s.push_back(random_normal(f, rng));
  std::vector<std::size_t> at(std::size_t(k), 0);
  while (true) {
    for (std::size_t j = 0; j < at.size(); ++j) v.push_back(s[at[j]]);
    std::size_t j = 0;
    while (j < at.size() && ++at[j] == s.size()) at[j++] = 0;
    if (j == at.size()) break;
  }
  for (std::size_t i = 0; i < n * std::size_t(k); ++i) v.push_back(rng() & f.storage_mask());  // any encoding
  return v;
}

TEST_F(OpenGL, EnumeratesHeadlessContexts) {
  std::set<std::string> seen;
  for (std::size_t i = 0; i < gl().devices.size(); ++i) {
    const Device& d = *gl().devices[i];
    const DeviceInfo& info = d.info();
    std::printf("  %s: %s | %s | %s | %s | %s\n", info.id.c_str(), info.name.c_str(), info.vendor.c_str(),
                info.driver.c_str(), info.api.c_str(), info.description.c_str());
    EXPECT_EQ(info.id, "opengl:" + std::to_string(i));
    EXPECT_EQ(info.backend, "opengl");
    EXPECT_FALSE(info.name.empty());
    EXPECT_FALSE(info.driver.empty());
    EXPECT_TRUE(info.api.starts_with("OpenGL 4.")) << info.api;
    EXPECT_TRUE(info.description.starts_with("EGL ")) << info.description;
    EXPECT_TRUE(seen.insert(info.name + "\n" + info.description).second) << "listed twice: " << info.name;
    EXPECT_TRUE(d.caps().has(binary32));
    EXPECT_FALSE(d.caps().has(model::binary16));  // GLSL for OpenGL has no binary16 arithmetic
    EXPECT_TRUE(d.caps().mma.empty());
    // Doubles are core since GL 4.0: every 4.3 context has them.
    EXPECT_TRUE(d.caps().has(binary64));
  }
}

TEST_F(OpenGL, AddSubMulAndConversionsCorrectlyRounded) {
  std::mt19937_64 rng(kSeed);
  for (auto& dev : gl().devices) {
    Device& d = *dev;
    const bool exact = llvmpipe(d);
    for (const Format* f : d.caps().formats) {
      // Doubles need only single precision in GLSL: their rounding is asserted on llvmpipe alone.
      if (f == &binary64 && !exact) continue;
      const std::vector<std::uint64_t> pairs = cases(*f, 2, 4096, exact, rng);
      expect_model(d, model::Op::add, binary(Node::add, *f), pairs, !exact);
      expect_model(d, model::Op::sub, binary(Node::sub, *f), pairs, !exact);
      expect_model(d, model::Op::mul, binary(Node::mul, *f), pairs, !exact);
    }
    // binary64 -> binary32 (rounds) and back (exact).
    expect_model(d, model::Op::cvt, conversion(binary64, binary32), cases(binary64, 1, 4096, exact, rng), !exact);
    std::vector<std::uint64_t> near;  // doubles in binary32's range, around its subnormals and overflow too
    for (int i = 0; i < 4096; ++i)
      near.push_back((rng() & (binary64.sign_mask() | binary64.man_mask())) |
                     std::uint64_t(1023 - 160 + int(rng() % 300)) << 52);
    expect_model(d, model::Op::cvt, conversion(binary64, binary32), near, !exact);
    expect_model(d, model::Op::cvt, conversion(binary32, binary64), cases(binary32, 1, 4096, exact, rng), !exact);
  }
}

TEST_F(OpenGL, DivisionAndSqrtWithinGlslBounds) {
  std::mt19937_64 rng(kSeed + 1);
  for (auto& dev : gl().devices) {
    Device& d = *dev;
    const bool exact = llvmpipe(d);
    for (const Format* f : d.caps().formats) {
      if (f == &binary64 && !exact) continue;
      // 2.5 ulp for a / b, 1 / inversesqrt(x) for sqrt; llvmpipe: correctly rounded.
      expect_model(d, model::Op::div, binary(Node::div, *f), cases(*f, 2, 4096, exact, rng), !exact, exact ? 0 : 3);
      std::vector<std::uint64_t> x = cases(*f, 1, 4096, exact, rng);
      for (std::uint64_t& v : x)
        if (!exact) v &= ~f->sign_mask();
      expect_model(d, model::Op::sqrt, unary(Node::sqrt, *f), x, !exact, exact ? 0 : 5);
    }
  }
}

// fma(a, b, c) and a*b+c, each fused or unfused; GLSL asks that fma() be one precision throughout,
// and llvmpipe computes both unfused. Cases c = -round(a*b) tell the two apart.
TEST_F(OpenGL, FmaAndMadFusedOrNotConsistently) {
  std::mt19937_64 rng(kSeed + 2);
  for (auto& dev : gl().devices) {
    Device& d = *dev;
    for (const Format* f : d.caps().formats) {
      std::vector<std::uint64_t> v;
      const std::uint64_t lo = std::uint64_t(f->bias) - 20, hi = std::uint64_t(f->bias) + 20;  // no overflow
      for (int i = 0; i < 512; ++i) {
        const std::uint64_t a = random_value(*f, rng, lo, hi), b = random_value(*f, rng, lo, hi);
        const std::uint64_t p = model::mul(*f, {}, a, b).bits;
        v.insert(v.end(), {a, b, i % 2 ? p ^ f->sign_mask() : random_value(*f, rng, lo, hi)});
      }
      for (const Node node : {Node::fma, Node::mad}) {
        const Expr e = ternary(node, *f);
        const std::vector<std::uint64_t> out = evaluate(d, e, v);
        if (out.empty()) continue;
        int fused = 0, unfused = 0, neither = 0;
        for (std::size_t t = 0; t < out.size(); ++t) {
          const std::uint64_t a = v[3 * t], b = v[3 * t + 1], c = v[3 * t + 2];
          const std::uint64_t one = model::fma(*f, {}, a, b, c).bits;
          const std::uint64_t two = model::add(*f, {}, model::mul(*f, {}, a, b).bits, c).bits;
          if (one == two) continue;
          fused += out[t] == one;
          unfused += out[t] == two;
          neither += out[t] != one && out[t] != two;
        }
        std::printf("  %s %s: %d fused, %d unfused, %d neither\n", d.info().id.c_str(), e.to_string().c_str(), fused,
                    unfused, neither);
        EXPECT_EQ(neither, 0);
        EXPECT_TRUE(fused == 0 || unfused == 0) << "fused in some cases, unfused in others";
        EXPECT_GT(fused + unfused, 100);
        if (llvmpipe(d)) {
          EXPECT_EQ(fused, 0);
        }
      }
    }
  }
}

// Load and store with no operation: every finite value kept (subnormals may flush to a zero of the
// same sign); llvmpipe keeps every encoding, NaN payloads and signalling NaNs included.
TEST_F(OpenGL, TransfersKeepBits) {
  std::mt19937_64 rng(kSeed + 3);
  for (auto& dev : gl().devices) {
    Device& d = *dev;
    for (const Format* f : d.caps().formats) {
      std::vector<std::uint64_t> x = specials(*f);
      for (int i = 0; i < 4096; ++i) x.push_back(rng() & f->storage_mask());
      const std::vector<std::uint64_t> out = evaluate(d, transfer(*f), x);
      if (out.empty()) continue;
      for (std::size_t i = 0; i < x.size(); ++i) {
        const model::Class c = cls(*f, x[i]);
        if (llvmpipe(d) || c == model::Class::normal || c == model::Class::zero) {
          EXPECT_EQ(out[i], x[i]) << fmt::format("{} {}: {:x}", d.info().id, f->name, x[i]);
        } else if (c == model::Class::subnormal) {
          EXPECT_TRUE(out[i] == x[i] || out[i] == (x[i] & f->sign_mask())) << fmt::format("{:x} -> {:x}", x[i], out[i]);
        }
      }
    }
  }
}

// A batch larger than one dispatch takes (the workgroup count limit, GL_MAX_COMPUTE_WORK_GROUP_COUNT
// times the local size, or the storage block size) runs as several, each tuple in its place.
TEST_F(OpenGL, LargeBatchesSplitOverDispatches) {
  std::mt19937_64 rng(kSeed + 4);
  auto& d = dynamic_cast<OpenGLDevice&>(*gl().devices.front());
  const Expr e = binary(Node::add, binary32);
  const std::size_t limit = d.max_dispatch_tuples(e), n = limit + 1000;
  if (limit > (std::size_t{1} << 23))
    GTEST_SKIP() << "one dispatch takes " << limit << " tuples: too many to split here";
  std::printf("  %s: %zu tuples per dispatch, %zu tuples\n", d.info().id.c_str(), limit, n);
  expect_model(d, model::Op::add, e, cases(binary32, 2, n, false, rng), true);
}

TEST_F(OpenGL, FailuresAreErrors) {
  auto& d = dynamic_cast<OpenGLDevice&>(*gl().devices.front());
  const Expr e = binary(Node::add, binary32);
  const std::vector<std::uint64_t> x = {0x3f800000, 0x3f800000};
  const auto broken =
      d.run_kernel("#version 430\nlayout(local_size_x = 64) in;\nvoid main() { undeclared = 1; }\n", {&e, x});
  ASSERT_FALSE(broken);
  std::printf("  %s\n", broken.error().message.c_str());
  EXPECT_NE(broken.error().message.find("compilation failed"), std::string::npos) << broken.error().message;
  EXPECT_NE(broken.error().message.find("undeclared"), std::string::npos) << "no info log: " << broken.error().message;
  // A format OpenGL does not compute in, and a malformed expression.
  const Expr half = binary(Node::add, model::binary16);
  EXPECT_FALSE(d.scalar({&half, x}));
  Expr bad = e;
  bad.code[2].arg[1] = 2;
  EXPECT_FALSE(d.scalar({&bad, x}));
  // The device goes on.
  const auto sum = d.scalar({&e, x});
  ASSERT_TRUE(sum) << sum.error().message;
  EXPECT_EQ(sum->at(0), 0x40000000u);
  const auto none = d.scalar({&e, {}});
  ASSERT_TRUE(none);
  EXPECT_TRUE(none->empty());
}

// The context is made current for each call: another thread may use the device, and devices of a
// second enumeration (same EGL displays) live beside the first and go without harming it.
// run --code: each compute shader's source, and the program binary where the driver has a format
// for it (llvmpipe does, through Mesa's shader cache); nothing without it.
TEST_F(OpenGL, SourcesAndBinariesAreKept) {
  EXPECT_EQ(gl().devices.front()->info().code, "");
  const std::filesystem::path dir = testing::fresh_folder("gpuparanoia-opengl-code", "kept");
  auto found = OpenGLBackend({.code = dir}).enumerate();
  ASSERT_TRUE(found) << found.error().message;
  Device& d = *found->front();
  const Expr e = binary(Node::add, binary32);
  ASSERT_EQ(evaluate(d, e, {0x3f800000, 0x40000000}), std::vector<std::uint64_t>{0x40400000});
  EXPECT_EQ(d.info().code, (dir / file_stem(d.info().id)).string());
  EXPECT_NE(testing::kept_code(d, e.to_string(), ".comp").find("#version"), std::string::npos);
  const std::string binary = testing::kept_code(d, e.to_string(), ".bin");
  fmt::print("{} ({}): {} bytes of program binary\n", d.info().id, d.info().name, binary.size());
  if (llvmpipe(d)) {
    EXPECT_FALSE(binary.empty()) << "llvmpipe gives its programs' binaries through Mesa's shader cache";
  }
}

TEST_F(OpenGL, CallsFromAnyThreadAndRepeatedEnumeration) {
  Device& d = *gl().devices.front();
  const Expr e = binary(Node::mul, binary32);
  const std::vector<std::uint64_t> x = {0x40400000, 0x40400000};  // 3 * 3
  Expected<std::vector<std::uint64_t>> other = Error{"not run"};
  std::thread([&] { other = d.scalar({&e, x}); }).join();
  ASSERT_TRUE(other) << other.error().message;
  EXPECT_EQ(other->at(0), 0x41100000u);
  {
    Found again = enumerate();
    ASSERT_EQ(again.devices.size(), gl().devices.size()) << again.why;
    const auto r = again.devices.front()->scalar({&e, x});
    ASSERT_TRUE(r) << r.error().message;
    EXPECT_EQ(r->at(0), 0x41100000u);
  }
  const auto r = d.scalar({&e, x});
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->at(0), 0x41100000u);
}

// Mesa's surfaceless platform, the route taken when the EGL device platform gives no context.
TEST(OpenGLRoutes, SurfacelessContextComputes) {
  auto c = surfaceless_context();
  if (!c) GTEST_SKIP() << c.error().message;
  OpenGLDevice d("opengl:0", std::move(*c));
  std::printf("  %s | %s | %s\n", d.info().name.c_str(), d.info().driver.c_str(), d.info().description.c_str());
  // The route, then the library the functions came from.
  EXPECT_TRUE(d.info().description.starts_with("EGL surfaceless (Mesa); EGL library ")) << d.info().description;
  EXPECT_NE(d.info().description.find("libEGL"), std::string::npos) << d.info().description;
  const Expr e = binary(Node::div, binary32);
  const std::vector<std::uint64_t> x = {0x3f800000, 0x40400000};  // 1 / 3
  const auto r = d.scalar({&e, x});
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->at(0), model::div(binary32, {}, x[0], x[1]).bits);
}

// The command line: the driver probes (unittests/cli_run.hpp) on every OpenGL device, every finding ok.
TEST_F(OpenGL, CliRunsTheDriverProbes) {
  // run_cli makes the folder afresh; the program makes --out inside it.
  const std::filesystem::path dir = std::filesystem::path(::testing::TempDir()) / "gpuparanoia-opengl-cli" / "out";
  const testing::CliRun r =
      testing::run_cli(fmt::format("run --device 'opengl:*' --suite scalar {} --quick --seed {} --out '{}'",
                                   testing::kDriverProbes, kSeed, dir.string()),
                       "gpuparanoia-opengl-cli");
  ASSERT_EQ(r.exit_status, 0) << r.tail();
  for (const auto& dev : gl().devices) {
    std::ifstream in(dir / (fmt::format("opengl-{}", dev->info().id.substr(7)) + ".json"));
    ASSERT_TRUE(in) << "no result for " << dev->info().id;
    const nlohmann::json doc = nlohmann::json::parse(in);
    EXPECT_EQ(doc["device"]["id"], dev->info().id);
    EXPECT_GT(doc["findings"].size(), 10u);
    for (const auto& finding : doc["findings"])
      EXPECT_EQ(finding["status"], "ok") << finding["probe"] << " " << finding["format"] << ": " << finding["message"];
  }
}

}  // namespace
}  // namespace gp::backends
