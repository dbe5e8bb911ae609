// The OpenCL backend on the drivers installed (PoCL, rusticl on llvmpipe, Clover): enumeration,
// scalar batches against the model under what the OpenCL C specification guarantees for the full
// profile (section 7.4: correctly rounded + - * and fma, x/y within 2.5 ulp and sqrt within 3 ulp in
// binary32 unless the program asks for correct rounding, correctly rounded binary64), subnormal
// flushing where the device does not claim CL_FP_DENORM, the -cl-denorms-are-zero variant, batch
// splitting, program caching, build failures, and the command line. A platform without a device
// here skips its tests with the reason.
#include "backends/opencl/opencl_backend.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <set>

#include "audit/result.hpp"
#include "audit/report/result_check.hpp"
#include "model/ops.hpp"
#include "model/value.hpp"
#include "tests_scalar/ulp.hpp"
#include "unittests/backend_checks.hpp"
#include "unittests/cli_run.hpp"

namespace gp::backends {
namespace {

using model::Format;
using model::Op;

// The backend enumerates once, before any other OpenCL call of the process: rusticl lists its
// devices only if RUSTICL_ENABLE is set when the ICD loader first loads it.
OpenClBackend& backend() {
  static OpenClBackend b;
  return b;
}
const Expected<std::vector<std::unique_ptr<Device>>>& devices() {
  static const auto d = backend().enumerate();
  return d;
}

// The index of the installed platform of that name, as the loader lists it (-1 when absent).
int platform_index(const std::string& name) {
  (void)devices();
  std::vector<cl::Platform> platforms;
  try {
    cl::Platform::get(&platforms);
  } catch (const cl::Error&) {
    return -1;
  }
  for (std::size_t i = 0; i < platforms.size(); ++i)
    if (platforms[i].getInfo<CL_PLATFORM_NAME>().find(name) != std::string::npos) return int(i);
  return -1;
}

// The platform's first device in a variant ("", "+denorms-are-zero"), or null with the reason.
OpenClDevice* device_of(const std::string& platform, const std::string& suffix, std::string& why) {
  const int p = platform_index(platform);
  if (p < 0) {
    why = fmt::format("no OpenCL platform '{}' is installed", platform);
    return nullptr;
  }
  if (devices())
    for (const auto& d : *devices())
      if (d->info().id == fmt::format("opencl:{}:0{}", p, suffix)) return dynamic_cast<OpenClDevice*>(d.get());
  why = fmt::format("platform '{}' has no device:", platform);
  for (const std::string& problem : backend().problems()) why += " " + problem;
  if (!devices()) why += " " + devices().error().message;
  return nullptr;
}

std::uint64_t ieee(Op op, const Format& f, std::span<const std::uint64_t> x, bool ftz_in = false,
                   bool ftz_out = false) {
  model::Options o;
  o.ftz_in = ftz_in;
  o.ftz_out = ftz_out;
  return model::evaluate(op, f, o, x, f).bits;
}

model::Class cls(const Format& f, std::uint64_t x) { return model::classify(f, x); }
bool is_nan(const Format& f, std::uint64_t x) { return model::is_nan(cls(f, x)); }
bool is_zero(const Format& f, std::uint64_t x) { return cls(f, x) == model::Class::zero; }
bool is_subnormal(const Format& f, std::uint64_t x) { return cls(f, x) == model::Class::subnormal; }

// Whether the device may flush subnormals of f: it does not claim CL_FP_DENORM, or the program was
// built with -cl-denorms-are-zero.
bool may_flush(const Device& d, const Format& f) {
  const auto& fc = d.caps().float_controls;
  const auto claim = fc.find(std::string(f.name) + ".denorm");
  return claim == fc.end() || claim->second != "yes" || fc.at("build_options") == "-cl-denorms-are-zero";
}

// What the specification allows for a correctly rounded operation: the IEEE result (any NaN for a
// NaN); where the device may flush, also the results with subnormal operands and/or results
// flushed, and "if an operand or result is flushed to zero, the sign of the zero is undefined".
struct Allowed {
  bool ok = false;
  bool flushed = false;  // only a flushed result matches
};
Allowed allowed(Op op, const Format& f, std::span<const std::uint64_t> x, std::uint64_t r, bool flush) {
  const auto same = [&](std::uint64_t want) { return r == want || (is_nan(f, r) && is_nan(f, want)); };
  const std::uint64_t exact = ieee(op, f, x);
  if (same(exact)) return {true, false};
  if (!flush) return {false, false};
  const bool subnormal_involved =
      is_subnormal(f, exact) || std::any_of(x.begin(), x.end(), [&](std::uint64_t v) { return is_subnormal(f, v); });
  for (const auto& [in, out] : {std::pair{true, false}, {false, true}, {true, true}}) {
    const std::uint64_t want = ieee(op, f, x, in, out);
    if (same(want) || (subnormal_involved && is_zero(f, want) && is_zero(f, r))) return {true, true};
  }
  return {false, false};
}

// Edge values of f: zeros, subnormals, the normal range's ends, values around 1, infinities, quiet
// and signalling NaNs with payloads, each with both signs.
std::vector<std::uint64_t> specials(const Format& f) {
  const std::uint64_t inf = model::pack(f, false, f.inf_magnitude());
  const std::uint64_t one = model::round_pack(f, {}, false, 0, 1).bits,
                      three_halves = model::round_pack(f, {}, false, -1, 3).bits;
  std::vector<std::uint64_t> v;
  for (const std::uint64_t m :
       {std::uint64_t{0}, std::uint64_t{1}, std::uint64_t{2}, f.man_mask(), f.man_mask() + 1, f.man_mask() + 2,
        model::pack(f, false, f.max_finite_magnitude()), one, one + 1, one - 1, three_halves, inf, inf | f.quiet_bit(),
        inf | f.quiet_bit() | 5, inf | 1, inf | (f.quiet_bit() >> 1)}) {
    v.push_back(m);
    v.push_back(m | f.sign_mask());
  }
  return v;
}

// Random operands: half uniform bit patterns (every class), half normal values within a few
// binades of 1, where sums and products keep all their bits in play.
std::uint64_t random_operand(const Format& f, std::mt19937_64& rng) {
  const std::uint64_t x = rng() & f.storage_mask();
  if (rng() & 1) return x;
  const int exp = int(rng() % 8) - 4;
  return model::round_pack(f, {}, (x & f.sign_mask()) != 0, exp - f.man_bits, (x & f.man_mask()) | (f.man_mask() + 1))
      .bits;
}

// Tuples of `arity` operands: every special, every pair of specials (with a third operand +0, -0
// and one drawn among them), then n random.
std::vector<std::uint64_t> cases(const Format& f, int arity, std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  const std::vector<std::uint64_t> sp = specials(f);
  std::vector<std::uint64_t> v;
  if (arity == 1)
    v = sp;
  else
    for (const std::uint64_t a : sp)
      for (const std::uint64_t b : sp)
        if (arity == 2)
          v.insert(v.end(), {a, b});
        else  // c: both zeros (the sign of exact zero sums) and one more special
          for (const std::uint64_t c : {sp[0], sp[1], sp[rng() % sp.size()]}) v.insert(v.end(), {a, b, c});
  for (std::size_t i = 0; i < n * std::size_t(arity); ++i) v.push_back(random_operand(f, rng));
  return v;
}

Node node_of(Op op) {
  switch (op) {
    case Op::add: return Node::add;
    case Op::sub: return Node::sub;
    case Op::mul: return Node::mul;
    case Op::div: return Node::div;
    case Op::sqrt: return Node::sqrt;
    case Op::fma: return Node::fma;
    case Op::cvt: break;
  }
  return Node::input;
}

Expr expr_of(Op op, const Format& f) {
  const int n = model::arity(op);
  return n == 1 ? unary(node_of(op), f) : n == 2 ? binary(node_of(op), f) : ternary(node_of(op), f);
}

std::string hex(std::span<const std::uint64_t> x) {
  std::string s;
  for (const std::uint64_t v : x) s += fmt::format("{}{:x}", s.empty() ? "" : " ", v);
  return s;
}

class OpenClPlatform : public ::testing::TestWithParam<std::string> {
 protected:
  // The plain device of the platform; the test skips when there is none.
  OpenClDevice* plain() {
    std::string why;
    OpenClDevice* d = device_of(GetParam(), "", why);
    if (!d) skip_reason_ = why;
    return d;
  }
  std::string skip_reason_;
};

// rusticl on Mesa 22.3 (llvmpipe) returns a*b for fma(a, b, +0): fma(-0, 1, +0) is -0 where IEEE 754
// (and so the specification's "correctly rounded") gives +0. The only deviation from the
// specification seen on these drivers: counted and printed for rusticl, a failure anywhere else.
// (libclc's software fma; the model's fma.zero_addend "product" reproduces it.)
bool fma_product_zero(const Format& f, std::span<const std::uint64_t> x, std::uint64_t r) {
  return is_zero(f, r) && ieee(Op::fma, f, x) == 0 && (is_zero(f, x[2]) || is_subnormal(f, x[2])) &&
         ((x[0] ^ x[1] ^ r) & f.sign_mask()) == 0;
}

TEST_P(OpenClPlatform, CorrectlyRoundedOperationsConform) {
  OpenClDevice* d = plain();
  if (!d) GTEST_SKIP() << skip_reason_;
  for (const Format* f : d->caps().formats)
    for (const Op op : {Op::add, Op::sub, Op::mul, Op::fma}) {
      const Expr e = expr_of(op, *f);
      const std::vector<std::uint64_t> x = cases(*f, e.inputs, 20000, 1);
      auto out = d->scalar({&e, x});
      ASSERT_TRUE(out) << out.error().message;
      int bad = 0, flushed = 0, product_zero = 0;
      for (std::size_t i = 0; i < out->size(); ++i) {
        const std::span<const std::uint64_t> t(&x[i * std::size_t(e.inputs)], std::size_t(e.inputs));
        const Allowed a = allowed(op, *f, t, (*out)[i], may_flush(*d, *f));
        flushed += a.flushed;
        if (a.ok) continue;
        if (op == Op::fma && GetParam() == "rusticl" && fma_product_zero(*f, t, (*out)[i])) {
          ++product_zero;
          continue;
        }
        if (++bad <= 5)
          ADD_FAILURE() << d->info().id << " " << f->name << " " << model::name(op) << "(" << hex(t)
                        << ") = " << fmt::format("{:x}, IEEE {:x}", (*out)[i], ieee(op, *f, t));
      }
      EXPECT_EQ(bad, 0) << f->name << " " << model::name(op);
      std::cout << d->info().id << " " << f->name << " " << model::name(op) << ": " << out->size() << " cases conform; "
                << flushed << " flushed subnormals"
                << (product_zero ? fmt::format("; {} fma(a, b, +0) = a*b zeros", product_zero) : "") << "\n";
    }
}

// x/y and sqrt: IEEE results on special operands; on finite ones within the specification's bound
// (binary32: 2.5 and 3 ulp without -cl-fp32-correctly-rounded-divide-sqrt; binary64: correctly
// rounded; binary16 is held to binary32's bounds, which its own imply).
TEST_P(OpenClPlatform, DivisionAndSquareRootWithinBounds) {
  OpenClDevice* d = plain();
  if (!d) GTEST_SKIP() << skip_reason_;
  for (const Format* f : d->caps().formats)
    for (const Op op : {Op::div, Op::sqrt}) {
      const double bound = f == &model::binary64 ? 0.5 : op == Op::div ? 2.5 : 3.0;
      const Expr e = expr_of(op, *f);
      const std::vector<std::uint64_t> x = cases(*f, e.inputs, 20000, 2);
      auto out = d->scalar({&e, x});
      ASSERT_TRUE(out) << out.error().message;
      double worst = 0;
      int bad = 0;
      for (std::size_t i = 0; i < out->size(); ++i) {
        const std::span<const std::uint64_t> t(&x[i * std::size_t(e.inputs)], std::size_t(e.inputs));
        const std::uint64_t r = (*out)[i];
        if (allowed(op, *f, t, r, may_flush(*d, *f)).ok) continue;
        const auto exact = scalar::paranoia::exact_result(*f, node_of(op), t);
        const auto q = exact ? scalar::paranoia::error_q64(*f, *exact, r) : std::nullopt;
        const double err = q ? std::abs(scalar::paranoia::q64_to_double(*q)) : 1e30;
        worst = std::max(worst, err);
        if (err > bound && ++bad <= 5)
          ADD_FAILURE() << d->info().id << " " << f->name << " " << model::name(op) << "(" << hex(t)
                        << ") = " << fmt::format("{:x}, IEEE {:x}, error {} ulp", r, ieee(op, *f, t), err);
      }
      EXPECT_EQ(bad, 0);
      std::cout << d->info().id << " " << f->name << " " << model::name(op) << ": largest error " << worst
                << " ulp (bound " << bound << ")\n";
    }
}

// a*b+c with contraction allowed is either fma(a, b, c) or the rounded product plus c, the same
// choice for every case of one kernel.
TEST_P(OpenClPlatform, MadIsFusedOrUnfusedThroughout) {
  OpenClDevice* d = plain();
  if (!d) GTEST_SKIP() << skip_reason_;
  for (const Format* f : d->caps().formats) {
    const Expr e = ternary(Node::mad, *f);
    const std::vector<std::uint64_t> x = cases(*f, 3, 20000, 3);
    auto out = d->scalar({&e, x});
    ASSERT_TRUE(out) << out.error().message;
    int fused = 0, unfused = 0, neither = 0;
    for (std::size_t i = 0; i < out->size(); ++i) {
      const std::span<const std::uint64_t> t(&x[3 * i], 3);
      const std::uint64_t r = (*out)[i], product = ieee(Op::mul, *f, t.first(2));
      const std::uint64_t f_val = ieee(Op::fma, *f, t), u_val = ieee(Op::add, *f, std::array{product, t[2]});
      if (f_val == u_val || is_nan(*f, f_val) || is_nan(*f, u_val) || !model::is_finite_nonzero(cls(*f, f_val)))
        continue;
      if (is_subnormal(*f, product) || is_subnormal(*f, f_val) || is_subnormal(*f, u_val)) continue;
      fused += r == f_val;
      unfused += r == u_val;
      neither += r != f_val && r != u_val;
    }
    EXPECT_EQ(neither, 0) << d->info().id << " " << f->name;
    EXPECT_TRUE(fused == 0 || unfused == 0) << fused << " fused, " << unfused << " unfused";
    EXPECT_GT(fused + unfused, 100);
    std::cout << d->info().id << " " << f->name << " a*b+c: " << (fused ? "fused" : "unfused") << " in "
              << fused + unfused << " distinguishing cases\n";
  }
}

// A load and a store keep every bit (NaN payloads and signalling NaNs included; subnormals may be
// flushed where the device may flush); conversions between formats are IEEE conversions.
TEST_P(OpenClPlatform, TransfersAndConversions) {
  OpenClDevice* d = plain();
  if (!d) GTEST_SKIP() << skip_reason_;
  for (const Format* f : d->caps().formats) {
    const Expr e = transfer(*f);
    const std::vector<std::uint64_t> x = cases(*f, 1, 20000, 4);
    auto out = d->scalar({&e, x});
    ASSERT_TRUE(out) << out.error().message;
    int changed = 0;
    for (std::size_t i = 0; i < x.size(); ++i)
      if ((*out)[i] != x[i]) {
        ++changed;
        EXPECT_TRUE(may_flush(*d, *f) && is_subnormal(*f, x[i]) && is_zero(*f, (*out)[i]))
            << d->info().id << " " << f->name << fmt::format(" transfer of {:x} gave {:x}", x[i], (*out)[i]);
      }
    std::cout << d->info().id << " " << f->name << " transfer: " << x.size() - std::size_t(changed)
              << " values kept bit for bit, " << changed << " changed\n";
    for (const Format* to : d->caps().formats) {
      if (to == f) continue;
      const Expr c = conversion(*f, *to);
      auto got = d->scalar({&c, x});
      ASSERT_TRUE(got) << got.error().message;
      int bad = 0;
      for (std::size_t i = 0; i < x.size(); ++i) {
        const std::uint64_t want = model::cvt(*to, *f, {}, x[i]).bits, r = (*got)[i];
        if (r == want || (is_nan(*to, r) && is_nan(*to, want))) continue;
        model::Options ftz;
        ftz.ftz_in = ftz.ftz_out = true;
        const std::uint64_t flushed = model::cvt(*to, *f, ftz, x[i]).bits;
        if ((may_flush(*d, *f) || may_flush(*d, *to)) && is_zero(*to, flushed) && is_zero(*to, r)) continue;
        if (++bad <= 5)
          ADD_FAILURE() << fmt::format("{} {} -> {}: {:x} gave {:x}, IEEE {:x}", d->info().id, f->name, to->name, x[i],
                                       r, want);
      }
      EXPECT_EQ(bad, 0) << f->name << " -> " << to->name;
    }
  }
}

// Where the driver honours -cl-denorms-are-zero, subnormal operands and results become zeros; it may
// also ignore the flag (a performance hint in the specification). Either way every result is one the
// specification allows under flushing. PoCL 3.1 honours it in binary32 and binary64; rusticl on
// llvmpipe ignores it (it claims no binary32 denormals, yet computes them).
TEST_P(OpenClPlatform, DenormsAreZeroVariant) {
  std::string why;
  OpenClDevice* d = device_of(GetParam(), "+denorms-are-zero", why);
  if (!d) GTEST_SKIP() << why;
  const std::map<std::string, bool> honours = {{"Portable Computing Language", true}, {"rusticl", false}};
  for (const Format* f : d->caps().formats) {
    int flushed = 0, bad = 0;
    for (const Op op : {Op::add, Op::mul}) {
      const Expr e = expr_of(op, *f);
      const std::vector<std::uint64_t> x = cases(*f, 2, 2000, 5);
      auto out = d->scalar({&e, x});
      ASSERT_TRUE(out) << out.error().message;
      for (std::size_t i = 0; i < out->size(); ++i) {
        const Allowed a = allowed(op, *f, std::span(&x[2 * i], 2), (*out)[i], true);
        flushed += a.flushed;
        bad += !a.ok;
      }
    }
    EXPECT_EQ(bad, 0) << d->info().id << " " << f->name;
    if (const auto it = honours.find(GetParam()); it != honours.end()) {
      EXPECT_EQ(flushed > 0, it->second) << d->info().id << " " << f->name << ": " << flushed << " flushed";
    }
    std::cout << d->info().id << " " << f->name << ": " << (flushed ? "flushes" : "keeps") << " subnormals (" << flushed
              << " flushed results)\n";
  }
}

// -cl-fp32-correctly-rounded-divide-sqrt: binary32 x/y and sqrt are the IEEE results (any NaN for a
// NaN, flushing where the device may flush). PoCL 3.1 claims CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT;
// rusticl on Mesa 22.3 does not (so it has no such variant), though its plain x/y and sqrt are
// correctly rounded (DivisionAndSquareRootWithinBounds: largest error 0 ulp).
TEST_P(OpenClPlatform, CorrectlyRoundedDivideSqrtVariant) {
  std::string why;
  OpenClDevice* d = device_of(GetParam(), "+correctly-rounded-divide-sqrt", why);
  const std::set<std::string> claims = {"Portable Computing Language"};
  if (!d && claims.count(GetParam()) && platform_index(GetParam()) >= 0)
    ADD_FAILURE() << GetParam() << " claims CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT: " << why;
  if (!d) GTEST_SKIP() << why;
  for (const Op op : {Op::div, Op::sqrt}) {
    const Expr e = expr_of(op, model::binary32);
    const std::vector<std::uint64_t> x = cases(model::binary32, e.inputs, 20000, 7);
    auto out = d->scalar({&e, x});
    ASSERT_TRUE(out) << out.error().message;
    int bad = 0;
    for (std::size_t i = 0; i < out->size(); ++i) {
      const std::span<const std::uint64_t> t(&x[i * std::size_t(e.inputs)], std::size_t(e.inputs));
      if (!allowed(op, model::binary32, t, (*out)[i], may_flush(*d, model::binary32)).ok && ++bad <= 5)
        ADD_FAILURE() << d->info().id << " " << model::name(op) << "(" << hex(t)
                      << ") = " << fmt::format("{:x}, IEEE {:x}", (*out)[i], ieee(op, model::binary32, t));
    }
    EXPECT_EQ(bad, 0) << model::name(op);
    std::cout << d->info().id << " binary32 " << model::name(op) << ": " << out->size() << " cases correctly rounded\n";
  }
}

INSTANTIATE_TEST_SUITE_P(Platforms, OpenClPlatform,
                         ::testing::Values("Portable Computing Language", "rusticl", "Clover"), [](const auto& p) {
                           return p.param == "Portable Computing Language" ? std::string("PoCL") : p.param;
                         });

TEST(OpenClBackend, EveryPlatformIsListedOrExplained) {
  if (!devices()) GTEST_SKIP() << devices().error().message;
  std::vector<cl::Platform> platforms;
  cl::Platform::get(&platforms);
  for (std::size_t p = 0; p < platforms.size(); ++p) {
    const std::string prefix = fmt::format("opencl:{}:", p);
    int found = 0, plain = 0;
    for (const auto& d : *devices())
      if (d->info().id.rfind(prefix, 0) == 0) {
        ++found;
        plain += d->info().id.find('+') == std::string::npos;
        EXPECT_EQ(d->info().backend, "opencl");
        EXPECT_FALSE(d->info().name.empty());
        EXPECT_NE(d->info().driver.find(platforms[p].getInfo<CL_PLATFORM_NAME>()), std::string::npos);
        EXPECT_EQ(d->info().api.rfind("OpenCL ", 0), 0u) << d->info().api;
        EXPECT_TRUE(d->caps().has(model::binary32));
        EXPECT_EQ(d->caps().float_controls.count("binary32.denorm"), 1u);
        EXPECT_TRUE(d->caps().mma.empty());
      }
    const bool explained =
        std::any_of(backend().problems().begin(), backend().problems().end(),
                    [&](const std::string& s) { return s.rfind(fmt::format("platform {} ", p), 0) == 0; });
    EXPECT_TRUE((plain > 0 && found >= 3 * plain && found <= 4 * plain) || explained) << "platform " << p;
    std::cout << "platform " << p << " (" << platforms[p].getInfo<CL_PLATFORM_NAME>() << "): " << plain << " devices\n";
  }
  for (const std::string& s : backend().problems()) std::cout << "  " << s << "\n";
}

TEST(OpenClBackend, VariantsAreNamedByTheirBuildOptions) {
  if (!devices()) GTEST_SKIP() << devices().error().message;
  std::map<std::string, std::string> options;
  for (const auto& d : *devices()) options[d->info().id] = d->caps().float_controls.at("build_options");
  for (const auto& [id, opts] : options) {
    if (id.find('+') != std::string::npos) continue;
    EXPECT_EQ(opts, "none");
    EXPECT_EQ(options[id + "+denorms-are-zero"], "-cl-denorms-are-zero");
    EXPECT_EQ(options[id + "+fast-relaxed-math"], "-cl-fast-relaxed-math");
  }
  // The correctly rounded division and square root: a variant exactly of the devices that claim it.
  for (const auto& d : *devices()) {
    const std::string& id = d->info().id;
    if (id.find('+') != std::string::npos) continue;
    const bool claims = d->caps().float_controls.at("binary32.correctly_rounded_divide_sqrt") == "yes";
    EXPECT_EQ(options.count(id + "+correctly-rounded-divide-sqrt"), claims ? 1u : 0u) << id;
    if (claims) {
      EXPECT_EQ(options[id + "+correctly-rounded-divide-sqrt"], "-cl-fp32-correctly-rounded-divide-sqrt");
    }
  }
}

// The first device found, for the tests that need any one.
OpenClDevice* any_device() {
  return devices() && !devices()->empty() ? dynamic_cast<OpenClDevice*>(devices()->front().get()) : nullptr;
}

TEST(OpenClBackend, BatchesSplitAtTheBufferLimit) {
  OpenClDevice* whole = any_device();
  if (!whole) GTEST_SKIP() << (devices() ? "no device" : devices().error().message);
  OpenClBackend small({.max_buffer_bytes = 4096});  // 341 tuples of add per dispatch
  auto split = small.enumerate();
  ASSERT_TRUE(split) << split.error().message;
  Device& d = *split->front();
  ASSERT_EQ(d.info().id, whole->info().id);
  const Expr e = binary(Node::add, model::binary32);
  const std::vector<std::uint64_t> x = cases(model::binary32, 2, 100000, 6);
  auto a = d.scalar({&e, x});
  auto b = whole->scalar({&e, x});
  ASSERT_TRUE(a) << a.error().message;
  ASSERT_TRUE(b) << b.error().message;
  ASSERT_EQ(a->size(), x.size() / 2);
  // The same results, but for which of two NaN operands comes back: PoCL specialises its kernels for the
  // launch size, and the code of each size may commute the operands of a sum.
  for (std::size_t i = 0; i < a->size(); ++i)
    if ((*a)[i] != (*b)[i] && !(is_nan(model::binary32, (*a)[i]) && is_nan(model::binary32, (*b)[i])))
      ADD_FAILURE() << fmt::format("{}: {} gives {:x} split, {:x} whole", i, hex(std::span(&x[2 * i], 2)), (*a)[i],
                                   (*b)[i]);
  for (std::size_t i = 0; i < a->size(); i += 997)
    EXPECT_TRUE(allowed(Op::add, model::binary32, std::span(&x[2 * i], 2), (*a)[i], may_flush(d, model::binary32)).ok)
        << i;
}

TEST(OpenClBackend, ProgramsAreBuiltOncePerSource) {
  if (!devices() || devices()->size() < 2) GTEST_SKIP() << (devices() ? "no device" : devices().error().message);
  OpenClBackend fresh;
  auto found = fresh.enumerate();
  ASSERT_TRUE(found);
  auto* plain = dynamic_cast<OpenClDevice*>((*found)[0].get());
  auto* variant = dynamic_cast<OpenClDevice*>((*found)[1].get());
  ASSERT_TRUE(plain && variant);
  const Expr add = binary(Node::add, model::binary32), mul = binary(Node::mul, model::binary32);
  const std::vector<std::uint64_t> x = {0x3f800000, 0x40000000};
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(plain->scalar({&add, x}));
  EXPECT_EQ(plain->programs_built(), 1u);
  ASSERT_TRUE(plain->scalar({&mul, x}));
  EXPECT_EQ(plain->programs_built(), 2u);
  ASSERT_TRUE(variant->scalar({&add, x}));  // another variant builds its own
  EXPECT_EQ(variant->programs_built(), 1u);
  EXPECT_EQ(*plain->scalar({&add, x}), std::vector<std::uint64_t>{0x40400000});
}

// run --code: each program's OpenCL C source and the device's binary, in the device's folder; nothing
// without it. On PoCL and rusticl, each where installed.
TEST(OpenClBackend, SourcesAndBinariesAreKept) {
  if (!devices()) GTEST_SKIP() << "no OpenCL device: " << devices().error().message;
  EXPECT_EQ(any_device()->info().code, "");
  const std::filesystem::path dir = testing::fresh_folder("gpuparanoia-opencl-code", "kept");
  OpenClBackend keeping({.code = dir});
  auto found = keeping.enumerate();
  ASSERT_TRUE(found) << found.error().message;
  const Expr e = binary(Node::add, model::binary32);
  const std::vector<std::uint64_t> x = {0x3f800000, 0x40000000};
  std::vector<std::string> checked;
  for (const char* platform : {"Portable Computing Language", "rusticl"}) {
    const int p = platform_index(platform);
    const auto d = std::find_if(found->begin(), found->end(),
                                [&](const auto& dev) { return dev->info().id == fmt::format("opencl:{}:0", p); });
    if (p < 0 || d == found->end()) continue;
    ASSERT_TRUE((*d)->scalar({&e, x}));
    EXPECT_EQ((*d)->info().code, (dir / file_stem((*d)->info().id)).string());
    EXPECT_NE(testing::kept_code(**d, e.to_string(), ".cl").find("gp_eval"), std::string::npos) << (*d)->info().id;
    const std::string binary = testing::kept_code(**d, e.to_string(), ".bin");
    EXPECT_FALSE(binary.empty()) << (*d)->info().id;
    checked.push_back(fmt::format("{} ({}: {} bytes of binary)", (*d)->info().id, platform, binary.size()));
  }
  if (checked.empty()) GTEST_SKIP() << "neither PoCL nor rusticl has a device here";
  fmt::print("kept: {}\n", fmt::join(checked, "; "));
}

TEST(OpenClBackend, FailuresAreErrorsNotCrashes) {
  OpenClDevice* d = any_device();
  if (!d) GTEST_SKIP() << (devices() ? "no device" : devices().error().message);
  // A build that fails returns its call, code and log: an option no compiler knows, and source that
  // does not compile (a macro turning the kernel's name into a number).
  std::vector<cl::Platform> platforms;
  cl::Platform::get(&platforms);
  const std::size_t p = std::stoul(d->info().id.substr(7));
  std::vector<cl::Device> devs;
  platforms[p].getDevices(CL_DEVICE_TYPE_ALL, &devs);
  const auto context = OpenClContext::create(devs.at(0));
  const Expr e = binary(Node::add, model::binary32);
  const std::vector<std::uint64_t> x = {0x3f800000, 0x40000000};
  for (const OpenClVariant& v :
       {OpenClVariant{"+unknown-option", "-cl-no-such-option"}, OpenClVariant{"+no-kernel-name", "-Dgp_eval=0"}}) {
    OpenClDevice broken(context, platforms[p], p, 0, v);
    auto r = broken.scalar({&e, x});
    ASSERT_FALSE(r);
    EXPECT_NE(r.error().message.find("clBuildProgram: CL_"), std::string::npos) << r.error().message;
    EXPECT_NE(r.error().message.find(v.options), std::string::npos) << r.error().message;
    std::cout << r.error().message << "\n";
    EXPECT_FALSE(broken.scalar({&e, x}));  // the failure is cached, not rebuilt
    EXPECT_EQ(broken.programs_built(), 1u);
  }
  // A format the device lacks, and malformed batches.
  testing::expect_scalar_failures_are_errors(*d);
  EXPECT_FALSE(d->mma({}));
}

TEST(OpenClBackend, ErrorCodesHaveNames) {
  EXPECT_EQ(opencl_error_name(CL_BUILD_PROGRAM_FAILURE), "CL_BUILD_PROGRAM_FAILURE");
  EXPECT_EQ(opencl_error_name(CL_INVALID_WORK_GROUP_SIZE), "CL_INVALID_WORK_GROUP_SIZE");
  EXPECT_EQ(opencl_error_name(CL_PLATFORM_NOT_FOUND_KHR), "CL_PLATFORM_NOT_FOUND_KHR");
  EXPECT_EQ(opencl_error_name(-12345), "error -12345");
}

// `run --code DIR`: each device keeps its kernels in its own folder, and its result and report say
// where.
TEST(OpenClKernelCode, RunKeepsEachDevicesCodeAndSaysWhere) {
  if (!devices()) GTEST_SKIP() << "no OpenCL device: " << devices().error().message;
  const std::string plain = any_device()->info().id, variant = plain + "+denorms-are-zero";
  const std::filesystem::path dir = testing::fresh_folder("gpuparanoia-opencl-code", "cli");
  const testing::CliRun run = testing::run_cli(
      fmt::format("run --device '{}' --device '{}' --probe scalar.add.rounding --quick --seed 1 --code '{}' --out '{}'",
                  plain, variant, (dir / "code").string(), (dir / "out").string()),
      "gpuparanoia-opencl-code-cli");
  ASSERT_EQ(run.exit_status, 0) << run.tail();
  for (const std::string& id : {plain, variant}) {
    const nlohmann::json doc = testing::read_json(dir / "out" / (audit::slug(id) + ".json"));
    const std::filesystem::path folder = dir / "code" / file_stem(id);
    ASSERT_TRUE(doc.is_object()) << id;
    EXPECT_EQ(doc["device"].value("code", ""), folder.string());
    EXPECT_FALSE(audit::check_result(doc)) << id << ": the result check refuses the key";
    std::size_t sources = 0, binaries = 0;
    for (const auto& f : std::filesystem::directory_iterator(folder)) {
      sources += f.path().extension() == ".cl";
      binaries += f.path().extension() == ".bin" && f.file_size() > 0;
    }
    EXPECT_GT(sources, 0u) << folder;
    EXPECT_EQ(binaries, sources) << folder;
    std::ifstream md(dir / "out" / (audit::slug(id) + ".md"));
    const std::string report(std::istreambuf_iterator<char>(md), {});
    EXPECT_NE(report.find("| compiled kernels | " + folder.string() + " |"), std::string::npos) << report;
  }
}

// The command line on every OpenCL device and variant: the driver probes (unittests/cli_run.hpp) run,
// every probe ends `ok` (or `unsupported`, saying why), and each device's JSON, Markdown and text are
// written.
TEST(OpenClCommandLine, DriverProbesOnEveryDevice) {
  if (!devices()) GTEST_SKIP() << "no OpenCL device: " << devices().error().message;
  const std::filesystem::path dir = std::filesystem::path(::testing::TempDir()) / "gpuparanoia-opencl-results";
  std::filesystem::remove_all(dir);
  // Under ASan, LeakSanitizer's tracer crashed at the exit of this child (signal 11 in the tracer,
  // after every probe ended ok): most likely the dynamic-TLS misreading the asan test preset now
  // turns off (intercept_tls_get_addr=0, CMakePresets.json); until an ASan run shows this child
  // clean without it, leak checking is left to the other tests for this one process.
  const testing::CliRun run =
      testing::run_cli(fmt::format("run --device 'opencl:*' --suite scalar {} --quick --seed 1 --out '{}'",
                                   testing::kDriverProbes, dir.string()),
                       "gpuparanoia-opencl-cli", "ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0");
  ASSERT_EQ(run.exit_status, 0) << run.tail();
  for (const auto& d : *devices()) {
    const std::string slug = audit::slug(d->info().id);
    std::ifstream in(dir / (slug + ".json"));
    ASSERT_TRUE(in) << "no result for " << d->info().id << " (" << slug << ".json)";
    const nlohmann::json doc = nlohmann::json::parse(in);
    EXPECT_EQ(doc["device"]["id"], d->info().id);
    ASSERT_FALSE(doc["findings"].empty());
    int ok = 0;
    for (const auto& finding : doc["findings"]) {
      const std::string state = finding["status"];
      ok += state == "ok";
      // unsupported: a format the device lacks (binary64 on llvmpipe), said in the message
      const std::string message = finding.value("message", "");
      EXPECT_TRUE(state == "ok" || (state == "unsupported" && !message.empty()))
          << d->info().id << " " << finding["probe"] << ": " << state << " " << message;
    }
    EXPECT_GT(ok, 10) << d->info().id;
    EXPECT_TRUE(std::filesystem::exists(dir / (slug + ".md")));
    EXPECT_TRUE(std::filesystem::exists(dir / (slug + ".txt")));
    // A variant's reports say what its float mode changed against its device's own run: flushing
    // subnormals, +denorms-are-zero changes the subnormal findings.
    const std::string& id = d->info().id;
    if (id.find('+') == std::string::npos) continue;
    std::ifstream text_file(dir / (slug + ".txt"));
    const std::string text((std::istreambuf_iterator<char>(text_file)), std::istreambuf_iterator<char>());
    EXPECT_NE(text.find(fmt::format("Against {}: the same unit, its kernels compiled with {}: ",
                                    id.substr(0, id.find('+')), id.substr(id.find('+')))),
              std::string::npos)
        << id;
    // Where the flag flushes subnormals (PoCL; rusticl ignores it), the subnormal finding is among them.
    const auto flush_verdict = [&](const std::string& stem) {
      std::ifstream f(dir / (stem + ".json"));
      const nlohmann::json result = nlohmann::json::parse(f);
      for (const auto& finding : result["findings"])
        if (finding["probe"] == "scalar.subnormals.flush" && finding["format"] == "binary32")
          return finding.value("verdict", "");
      return std::string();
    };
    const bool flushing = flush_verdict(slug) != flush_verdict(audit::slug(id.substr(0, id.find('+'))));
    EXPECT_EQ(text.find("  scalar.subnormals.flush [binary32] verdict: SUBNORMALS: ") != std::string::npos, flushing)
        << text;
    EXPECT_NE(run.output.find(fmt::format("    {} change", id.substr(id.find('+')))), std::string::npos) << run.tail();
  }
}

}  // namespace
}  // namespace gp::backends
