// The Vulkan backend on the machine's Vulkan driver (Mesa's lavapipe where there is no GPU):
// enumeration, scalar batches against the model, batches split over buffers and dispatches,
// failures as Error values, the float-control variants and the SPIR-V they compile to, and the
// CLI's quick scalar suite. Without a Vulkan device the device tests skip, with the reason.
//
// What is asserted for every device is what the Vulkan specification (Precision and Operation of
// SPIR-V Instructions) allows: OpFAdd, OpFSub, OpFMul and conversions correctly rounded (to nearest
// even when no float control asks otherwise; narrowing conversions to nearest or toward zero), a / b
// within 2.5 ulp, sqrt as 1.0 / inversesqrt (about 4.5 ulp), Fma "inherited from OpFMul followed by
// OpFAdd", so fused or not, subnormal operands and results flushed or not (unless DenormPreserve is
// requested), any NaN for a NaN. What the driver chose within that is printed: lavapipe (Mesa 22.3,
// checked first) is correctly rounded in every format and on every encoding, keeps subnormals, and
// evaluates fma() and a*b+c unfused, in binary16, binary32 and binary64 alike.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <functional>
#include <map>
#include <random>
#include <ranges>
#include <set>
#include <string>

#include "backends/kernel_source.hpp"
#include "backends/vulkan/coopmat_spirv.hpp"
#include "backends/vulkan/float_controls.hpp"
#include "backends/vulkan/glsl_compiler.hpp"
#include "backends/vulkan/vulkan_backend.hpp"
#include "backends/vulkan/vulkan_context.hpp"
#include "model/ops.hpp"
#include "model/value.hpp"
#include "unittests/backend_checks.hpp"
#include "unittests/cli_run.hpp"
#include "unittests/newer_spirv_val.hpp"

#ifdef GPUPARANOIA_HAVE_SPIRV_TOOLS
#include <spirv-tools/libspirv.hpp>
#endif

namespace gp::backends {
namespace {

using model::binary16;
using model::binary32;
using model::binary64;
using model::Format;

constexpr std::uint64_t kSeed = 20250507;

const Expected<std::vector<std::unique_ptr<Device>>>& vulkan_devices() {
  static const auto devices = VulkanBackend().enumerate();
  return devices;
}

// The device with this id, or why there is none.
Expected<Device*> find_device(std::string_view id) {
  const auto& devices = vulkan_devices();
  if (!devices) return Error{"no Vulkan device: " + devices.error().message};
  for (const auto& d : *devices)
    if (d->info().id == id) return d.get();
  return Error{fmt::format("the driver offers no {}", id)};
}

// ---- Operands ----

// A value of f: an edge of the format (zeros, subnormals, the limits, infinities, NaNs), a subnormal,
// a normal number near 1 (results in range, so rounding shows), or any bit pattern.
std::uint64_t draw(const Format& f, std::mt19937_64& rng) {
  const std::uint64_t one = std::uint64_t(f.bias) << f.man_bits, quiet_nan = f.inf_magnitude() | f.quiet_bit();
  const std::uint64_t edges[] = {0,
                                 1,
                                 f.man_mask(),
                                 f.man_mask() + 1,
                                 one,
                                 one + 1,
                                 f.max_finite_magnitude(),
                                 f.inf_magnitude(),
                                 quiet_nan,
                                 f.inf_magnitude() | 1};
  const std::uint64_t sign = rng() % 2 ? f.sign_mask() : 0;
  switch (rng() % 8) {
    case 0: return sign | edges[rng() % std::size(edges)];
    case 1: return sign | (rng() & f.man_mask());
    case 2:
    case 3:
    case 4:
    case 5:
      return sign | ((one + ((rng() % 9) << f.man_bits) - (std::uint64_t(4) << f.man_bits)) ^ (rng() & f.man_mask()));
    default: return rng() & f.storage_mask();
  }
}

std::vector<std::uint64_t> draw_tuples(const Format& f, int inputs, std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<std::uint64_t> v(n * std::size_t(inputs));
  for (auto& x : v) x = draw(f, rng);
  return v;
}

// ---- What the specification allows ----

enum class Flush { allowed, forbidden, required };

bool same(const Format& f, std::uint64_t got, std::uint64_t want) {
  return got == want || (model::is_nan(model::classify(f, got)) && model::is_nan(model::classify(f, want)));
}

// The model's result of one tuple under the given options.
using Reference = std::function<std::uint64_t(const model::Options&, const std::uint64_t* x)>;

// Whether `got` is the model's result in `rounding`, with subnormal operands and/or results flushed
// as `flush` permits; `flushed` is set when only a flushed result matches.
bool allowed(const Format& f, std::uint64_t got, const Reference& ref, const std::uint64_t* x, model::Rounding rounding,
             Flush flush, bool& flushed) {
  model::Options o;
  o.rounding = rounding;
  flushed = false;
  if (flush != Flush::required && same(f, got, ref(o, x))) return true;
  if (flush == Flush::forbidden) return false;
  for (const auto& [in, out] : {std::pair{true, true}, {true, false}, {false, true}}) {
    if (flush == Flush::required && !(in && out)) continue;
    o.ftz_in = in;
    o.ftz_out = out;
    if (same(f, got, ref(o, x))) return flushed = true;
  }
  return false;
}

// Runs e over the tuples and checks that one of the references allows every result; returns how
// many results each reference allows, and how many needed a flush.
struct Tally {
  std::vector<std::size_t> allowed;
  std::size_t flushed = 0;
};

Tally check(Device& device, const Expr& e, const std::vector<std::uint64_t>& x, const std::vector<Reference>& refs,
            model::Rounding rounding, Flush flush) {
  Tally t{std::vector<std::size_t>(refs.size()), 0};
  auto got = device.scalar({&e, x});
  EXPECT_TRUE(got) << e.to_string() << ": " << got.error().message;
  if (!got) return t;
  const Format& out = *e.output_format;
  int failures = 0;
  for (std::size_t i = 0; i < got->size(); ++i) {
    const std::uint64_t* xi = &x[i * std::size_t(e.inputs)];
    bool any = false, unflushed = false;
    for (std::size_t r = 0; r < refs.size(); ++r) {
      bool flushed = false;
      if (!allowed(out, (*got)[i], refs[r], xi, rounding, flush, flushed)) continue;
      ++t.allowed[r];
      any = true;
      unflushed |= !flushed;
    }
    t.flushed += any && !unflushed;
    if (!any && ++failures <= 5) {
      model::Options o;
      o.rounding = rounding;
      ADD_FAILURE() << fmt::format("{} on {}: operands {:x}: got {:x}, the model gives {:x}", e.to_string(),
                                   device.info().id, fmt::join(xi, xi + e.inputs, " "), (*got)[i], refs[0](o, xi));
    }
  }
  return t;
}

Reference binary_op(const Format& f, Node op) {
  return [&f, op](const model::Options& o, const std::uint64_t* x) {
    switch (op) {
      case Node::add: return model::add(f, o, x[0], x[1]).bits;
      case Node::sub: return model::sub(f, o, x[0], x[1]).bits;
      case Node::mul: return model::mul(f, o, x[0], x[1]).bits;
      case Node::div: return model::div(f, o, x[0], x[1]).bits;
      default: return model::sqrt(f, o, x[0]).bits;
    }
  };
}

// a*b+c with one rounding, and with the product rounded first.
Reference fused(const Format& f) {
  return [&f](const model::Options& o, const std::uint64_t* x) { return model::fma(f, o, x[0], x[1], x[2]).bits; };
}
Reference unfused(const Format& f) {
  return [&f](const model::Options& o, const std::uint64_t* x) {
    return model::add(f, o, model::mul(f, o, x[0], x[1]).bits, x[2]).bits;
  };
}

// The formats of a device, for the loops of the tests.
std::vector<const Format*> formats_of(const Device& d) { return d.caps().formats; }

// ---- Enumeration ----

TEST(VulkanBackend, EnumeratesDevicesAndTheirClaims) {
  const auto& devices = vulkan_devices();
  if (!devices) GTEST_SKIP() << "no Vulkan device: " << devices.error().message;
  ASSERT_FALSE(devices->empty());
  for (const auto& d : *devices) {
    const DeviceInfo& i = d->info();
    fmt::print("{}: {} ({}), {}, {}; scalar formats {}\n  {}\n", i.id, i.name, i.vendor, i.driver, i.api,
               fmt::join(d->caps().formats | std::views::transform([](const Format* f) { return f->name; }), " "),
               i.description);
    EXPECT_EQ(i.id.rfind("vulkan:", 0), 0u);
    EXPECT_EQ(i.backend, "vulkan");
    EXPECT_FALSE(i.name.empty());
    EXPECT_FALSE(i.driver.empty());
    EXPECT_EQ(i.api.rfind("Vulkan 1.", 0), 0u) << i.api;
    // Its identity (Vulkan 1.1's UUIDs), which a fleet's results are told apart by.
    EXPECT_EQ(i.identity.at("device_uuid").size(), 36u) << i.identity.at("device_uuid");
    EXPECT_EQ(i.identity.at("driver_uuid").size(), 36u);
    EXPECT_EQ(i.identity.at("vendor_id").rfind("0x", 0), 0u);
    EXPECT_FALSE(d->caps().formats.empty());
    EXPECT_TRUE(d->caps().mma.empty() != d->caps().mma_unsupported.empty() || !d->caps().mma.empty())
        << "a device without cooperative matrices says why";
    const auto plus = i.id.find('+');
    if (plus == std::string::npos) {
      EXPECT_TRUE(d->caps().has(binary32)) << "binary32 is always there";
      continue;
    }
    // A variant requests a mode the device claims, for each format it lists, its MMA configurations
    // included (unittests/vulkan_mma_test.cpp runs them).
    const std::string mode = i.id.substr(plus + 1);
    EXPECT_EQ(d->caps().float_controls.at("requested"), mode);
    for (const MmaConfig& cfg : d->caps().mma)
      for (const Format* f : {cfg.a, cfg.b, cfg.c, cfg.d}) EXPECT_TRUE(d->caps().has(*f)) << i.id << " " << cfg.name();
    const auto m = std::find_if(vulkan::float_control_modes().begin(), vulkan::float_control_modes().end(),
                                [&](const vulkan::FloatControlMode& x) { return x.name == mode; });
    ASSERT_NE(m, vulkan::float_control_modes().end()) << mode;
    for (const Format* f : d->caps().formats)
      EXPECT_EQ(d->caps().float_controls.at(fmt::format("{}.{}", f->name, m->key)), "true") << i.id << " " << f->name;
  }
}

TEST(VulkanBackend, ReportsTheFloatControlClaims) {
  auto d = find_device("vulkan:0");
  if (!d) GTEST_SKIP() << d.error().message;
  const auto& claims = (*d)->caps().float_controls;
  if (claims.empty()) GTEST_SKIP() << "the device is older than Vulkan 1.2: no float-control properties";
  for (const char* format : {"binary16", "binary32", "binary64"})
    for (const vulkan::FloatControlMode& m : vulkan::float_control_modes()) {
      const std::string key = fmt::format("{}.{}", format, m.key);
      ASSERT_TRUE(claims.contains(key)) << key;
      EXPECT_TRUE(claims.at(key) == "true" || claims.at(key) == "false") << key;
      // Every mode claimed for a format the device computes in has its variant device.
      const bool computes = std::any_of((*d)->caps().formats.begin(), (*d)->caps().formats.end(),
                                        [&](const Format* f) { return f->name == format; });
      if (claims.at(key) == "true" && computes) {
        EXPECT_TRUE(find_device(fmt::format("vulkan:0+{}", m.name))) << m.name;
      }
    }
  EXPECT_TRUE(claims.contains("denorm_behavior_independence"));
  EXPECT_TRUE(claims.contains("rounding_mode_independence"));
}

// ---- Arithmetic ----

TEST(VulkanScalar, AddSubMulCorrectlyRoundedToNearestEven) {
  auto d = find_device("vulkan:0");
  if (!d) GTEST_SKIP() << d.error().message;
  for (const Format* f : formats_of(**d))
    for (const Node op : {Node::add, Node::sub, Node::mul}) {
      const Expr e = binary(op, *f);
      const Tally t =
          check(**d, e, draw_tuples(*f, 2, 20000, kSeed), {binary_op(*f, op)}, model::Rounding::rne, Flush::allowed);
      fmt::print("{}: {} of 20000 correctly rounded, {} needed a flushed subnormal\n", e.to_string(), t.allowed[0],
                 t.flushed);
    }
}

// Division and square root are not correctly rounded in Vulkan; the bounds hold on finite operands
// and results in the normal range. A result within n ulp of the exact value lies within n + 1/2
// ulp of the correctly rounded one, which is what is compared (encodings of one sign and binade
// are consecutive integers).
TEST(VulkanScalar, DivisionAndSquareRootWithinTheirBounds) {
  auto d = find_device("vulkan:0");
  if (!d) GTEST_SKIP() << d.error().message;
  for (const Format* f : formats_of(**d))
    for (const Node op : {Node::div, Node::sqrt}) {
      const Expr e = op == Node::div ? binary(op, *f) : unary(op, *f);
      const std::vector<std::uint64_t> x = draw_tuples(*f, e.inputs, 20000, kSeed + 1);
      auto got = (*d)->scalar({&e, x});
      ASSERT_TRUE(got) << got.error().message;
      const std::uint64_t bound = op == Node::div ? 3 : 5;  // 2.5 ulp; 1 / inversesqrt: 2 + 2.5 ulp
      std::size_t exact = 0, normal = 0;
      const Reference ref = binary_op(*f, op);
      for (std::size_t i = 0; i < got->size(); ++i) {
        const std::uint64_t* xi = &x[i * std::size_t(e.inputs)];
        const std::uint64_t want = ref(model::Options{}, xi);
        exact += same(*f, (*got)[i], want);
        const bool in_range =
            model::classify(*f, want) == model::Class::normal && std::all_of(xi, xi + e.inputs, [&](std::uint64_t v) {
              return model::classify(*f, v) == model::Class::normal;
            });
        if (!in_range) continue;
        ++normal;
        const std::uint64_t distance = (*got)[i] > want ? (*got)[i] - want : want - (*got)[i];
        EXPECT_LE(distance, bound) << e.to_string()
                                   << fmt::format(": operands {:x} got {:x} want {:x}",
                                                  fmt::join(xi, xi + e.inputs, " "), (*got)[i], want);
      }
      fmt::print("{}: {} of 20000 correctly rounded ({} in the normal range checked against the bound)\n",
                 e.to_string(), exact, normal);
    }
}

TEST(VulkanScalar, FmaAndMadFusedOrUnfused) {
  auto d = find_device("vulkan:0");
  if (!d) GTEST_SKIP() << d.error().message;
  for (const Format* f : formats_of(**d))
    for (const Node op : {Node::fma, Node::mad}) {
      const Expr e = ternary(op, *f);
      const Tally t = check(**d, e, draw_tuples(*f, 3, 20000, kSeed + 2), {fused(*f), unfused(*f)},
                            model::Rounding::rne, Flush::allowed);
      fmt::print("{}: of 20000 results {} are those of the fused operation, {} those of the unfused one\n",
                 e.to_string(), t.allowed[0], t.allowed[1]);
    }
}

TEST(VulkanScalar, ConversionsAndTransfers) {
  auto d = find_device("vulkan:0");
  if (!d) GTEST_SKIP() << d.error().message;
  const auto cvt_ref = [](const Format& to, const Format& from) -> Reference {
    return [&to, &from](const model::Options& o, const std::uint64_t* x) { return model::cvt(to, from, o, x[0]).bits; };
  };
  const auto has = [&](const Format& f) { return (*d)->caps().has(f); };
  std::vector<std::pair<const Format*, const Format*>> pairs;  // from, to
  if (has(binary16)) pairs.insert(pairs.end(), {{&binary32, &binary16}, {&binary16, &binary32}});
  if (has(binary64)) pairs.insert(pairs.end(), {{&binary64, &binary32}, {&binary32, &binary64}});
  for (const auto& [from, to] : pairs) {
    const Expr e = conversion(*from, *to);
    std::mt19937_64 rng(kSeed + 3);
    // Exponents around the narrower format's range: overflow, underflow and subnormal results occur.
    std::vector<std::uint64_t> x(20000);
    for (auto& v : x) v = draw(*from, rng) ^ (from->storage_bits > to->storage_bits ? rng() & from->man_mask() : 0);
    // Narrowing rounds to nearest or toward zero (each value checked against both); widening is exact.
    const model::Rounding modes[] = {model::Rounding::rne, model::Rounding::rz};
    for (const model::Rounding r : modes) {
      const Tally t = check(**d, e, x, {cvt_ref(*to, *from)}, r, Flush::allowed);
      fmt::print("{}: {} of {} as {}\n", e.to_string(), t.allowed[0], x.size(),
                 r == model::Rounding::rne ? "rne" : "rz");
      if (r == model::Rounding::rne && t.allowed[0] == x.size()) break;
      if (from->storage_bits < to->storage_bits) break;
    }
  }
  // Transfers: a load and a store keep every finite value and infinity (subnormals may flush, NaNs
  // stay NaN); what happens to subnormals, NaN payloads and signalling NaNs is printed.
  for (const Format* f : formats_of(**d)) {
    const Expr e = transfer(*f);
    const std::vector<std::uint64_t> x = draw_tuples(*f, 1, 4096, kSeed + 4);
    auto got = (*d)->scalar({&e, x});
    ASSERT_TRUE(got) << got.error().message;
    std::size_t nan_bits_kept = 0, nans = 0, subnormals_kept = 0, subnormals = 0;
    for (std::size_t i = 0; i < x.size(); ++i) {
      const model::Class c = model::classify(*f, x[i]);
      if (model::is_nan(c)) {
        ++nans;
        nan_bits_kept += (*got)[i] == x[i];
        EXPECT_TRUE(model::is_nan(model::classify(*f, (*got)[i]))) << fmt::format("{:x} -> {:x}", x[i], (*got)[i]);
      } else if (c == model::Class::subnormal) {
        ++subnormals;
        subnormals_kept += (*got)[i] == x[i];
        EXPECT_TRUE((*got)[i] == x[i] || (*got)[i] == (x[i] & f->sign_mask()))
            << fmt::format("{:x} -> {:x}", x[i], (*got)[i]);
      } else {
        EXPECT_EQ((*got)[i], x[i]) << f->name;
      }
    }
    fmt::print("{}: {} of {} NaNs kept bit for bit, {} of {} subnormals kept\n", e.to_string(), nan_bits_kept, nans,
               subnormals_kept, subnormals);
  }
}

// ---- Batches and failures ----

TEST(VulkanScalar, BatchesSplitOverBuffersAndDispatches) {
  if (!vulkan_devices()) GTEST_SKIP() << "no Vulkan device: " << vulkan_devices().error().message;
  // 4 KiB buffers hold 512 binary32 pairs (8 workgroups of 64), and a dispatch has 3 workgroups at
  // most: 20 buffer fills of 3 dispatches each.
  auto small = VulkanBackend({.max_buffer_bytes = 4096, .max_workgroups = 3}).enumerate();
  ASSERT_TRUE(small) << small.error().message;
  Device& d = *small->front();
  for (const Format* f : formats_of(d)) {
    const Expr e = ternary(Node::fma, *f);
    const std::vector<std::uint64_t> x = draw_tuples(*f, 3, 10000, kSeed + 5);
    auto split = d.scalar({&e, x});
    auto whole = vulkan_devices()->front()->scalar({&e, x});
    ASSERT_TRUE(split && whole) << (split ? whole.error().message : split.error().message);
    ASSERT_EQ(split->size(), x.size() / 3);
    EXPECT_EQ(*split, *whole) << f->name << ": the split batch differs from the whole one";
  }
  // An empty batch is no error.
  const Expr e = binary(Node::add, binary32);
  auto none = d.scalar({&e, {}});
  ASSERT_TRUE(none) << none.error().message;
  EXPECT_TRUE(none->empty());
}

// run --code: each pipeline's SPIR-V module as submitted (a variant's with its mode), in the
// device's folder, and what the driver made of it where it has VK_KHR_pipeline_executable_properties
// (lavapipe has not); nothing without it.
TEST(VulkanScalar, ModulesAreKept) {
  if (!vulkan_devices()) GTEST_SKIP() << "no Vulkan device: " << vulkan_devices().error().message;
  EXPECT_EQ(vulkan_devices()->front()->info().code, "");
  const std::filesystem::path dir = testing::fresh_folder("gpuparanoia-vulkan-code", "kept");
  auto found = VulkanBackend({.code = dir}).enumerate();
  ASSERT_TRUE(found) << found.error().message;
  const Expr e = binary(Node::add, binary32);
  const std::vector<std::uint64_t> x = {0x3f800000, 0x40000000};
  for (const auto& d : *found) {
    if (!d->caps().has(binary32)) continue;
    ASSERT_TRUE(d->scalar({&e, x})) << d->info().id;
    EXPECT_EQ(d->info().code, (dir / file_stem(d->info().id)).string());
    const std::string spv = testing::kept_code(*d, e.to_string(), ".spv");
    ASSERT_GE(spv.size(), 20u) << d->info().id << ": no module kept";  // the header's five words at least
    std::uint32_t magic = 0;
    std::memcpy(&magic, spv.data(), sizeof magic);
    EXPECT_EQ(magic, 0x07230203u) << d->info().id;
    const std::string executables = testing::kept_code(*d, e.to_string(), ".executables.txt");
    fmt::print("{}: {} bytes of SPIR-V, {}\n", d->info().id, spv.size(),
               executables.empty() ? "no executables (no VK_KHR_pipeline_executable_properties)"
                                   : executables.substr(0, executables.find('\n')));
  }
}

TEST(VulkanScalar, FailuresAreErrors) {
  auto d = find_device("vulkan:0");
  if (!d) GTEST_SKIP() << d.error().message;
  // A format the device lacks.
  const Expr bf16 = transfer(model::bfloat16);
  auto r = (*d)->scalar({&bf16, std::vector<std::uint64_t>{0x3f80}});
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("does not compute in bfloat16"), std::string::npos) << r.error().message;
  // A malformed expression: an argument that is not an earlier instruction.
  Expr bad = binary(Node::add, binary32);
  bad.code.back().arg[1] = 7;
  r = (*d)->scalar({&bad, std::vector<std::uint64_t>{0, 0}});
  EXPECT_FALSE(r);
  // Operands that do not fill whole tuples.
  const Expr add = binary(Node::add, binary32);
  r = (*d)->scalar({&add, std::vector<std::uint64_t>{0, 0, 0}});
  EXPECT_FALSE(r);
  // A cooperative-matrix configuration the device does not offer.
  MmaConfig odd;
  odd.m = 3;
  odd.n = 5;
  odd.k = 7;
  odd.a = odd.b = &binary16;
  odd.c = odd.d = &binary32;
  const std::vector<std::uint64_t> a(21), b(35), c(15);
  auto m = (*d)->mma({&odd, a, b, c});
  ASSERT_FALSE(m);
  EXPECT_NE(m.error().message.find("has no MMA configuration 3x5x7"), std::string::npos) << m.error().message;
  // The device still works after each.
  auto ok = (*d)->scalar({&add, std::vector<std::uint64_t>{0x3f800000, 0x3f800000}});
  ASSERT_TRUE(ok) << ok.error().message;
  EXPECT_EQ(ok->front(), 0x40000000u);
}

TEST(VulkanCompiler, ShaderThatFailsToCompileIsAnError) {
  auto r =
      vulkan::compile_compute_shader("#version 450\nlayout(local_size_x = 1) in;\nvoid main() { undeclared = 1; }\n");
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("undeclared"), std::string::npos) << r.error().message;
  auto empty = vulkan::compile_compute_shader("");
  EXPECT_FALSE(empty);
  auto ok = vulkan::compile_compute_shader(*kernel_source(binary(Node::add, binary32), Language::glsl_vulkan, 64));
  ASSERT_TRUE(ok) << ok.error().message;
  EXPECT_EQ(ok->front(), 0x07230203u);  // the SPIR-V magic number
}

// ---- Float controls ----

const std::map<std::string_view, std::string_view> kSpirvNames = {
    {"rte", "RoundingModeRTE"},
    {"rtz", "RoundingModeRTZ"},
    {"denorm-preserve", "DenormPreserve"},
    {"denorm-flush", "DenormFlushToZero"},
    {"signed-zero-inf-nan-preserve", "SignedZeroInfNanPreserve"}};

// The post-pass on every mode and width: the module stays valid (spirv-val, Vulkan 1.2) and carries
// the capability, the extension and one execution mode per width. No device needed.
TEST(VulkanFloatControls, RequestedModesMakeValidSpirv) {
#ifndef GPUPARANOIA_HAVE_SPIRV_TOOLS
  GTEST_SKIP() << "SPIRV-Tools (spirv-tools) not found at configure time: the modules cannot be validated";
#else
  // binary64 + binary64 -> binary32 -> binary16: a kernel computing in every width.
  ExprBuilder b(binary64, 2);
  b.cvt(b.cvt(b.op(Node::add, b.in(0), b.in(1)), binary32), binary16);
  const Expr e = b.done(&binary16);
  auto source = kernel_source(e, Language::glsl_vulkan, 64);
  ASSERT_TRUE(source) << source.error().message;
  auto spirv = vulkan::compile_compute_shader(*source);
  ASSERT_TRUE(spirv) << spirv.error().message;
  spvtools::SpirvTools tools(SPV_ENV_VULKAN_1_2);
  std::string log;
  tools.SetMessageConsumer([&](spv_message_level_t, const char*, const spv_position_t&, const char* m) { log += m; });
  ASSERT_TRUE(tools.Validate(*spirv)) << log;
  for (const vulkan::FloatControlMode& m : vulkan::float_control_modes()) {
    auto moded = vulkan::request_mode(*spirv, m, {16, 32, 64});
    ASSERT_TRUE(moded) << moded.error().message;
    EXPECT_TRUE(tools.Validate(*moded)) << m.name << ": " << log;
    std::string text;
    ASSERT_TRUE(tools.Disassemble(*moded, &text)) << log;
    EXPECT_NE(text.find("OpExtension \"SPV_KHR_float_controls\""), std::string::npos) << text;
    for (const int w : {16, 32, 64}) {
      const std::string mode = fmt::format("OpExecutionMode %main {} {}\n", kSpirvNames.at(m.name), w);
      EXPECT_NE(text.find(mode), std::string::npos) << m.name << " " << w << "\n" << text;
    }
  }
  EXPECT_FALSE(vulkan::request_mode(std::vector<std::uint32_t>{1, 2, 3}, vulkan::float_control_modes()[0], {32}));
#endif
}

// The modes on a cooperative-matrix module (the variants' MMA kernels), binary16 x binary16 +
// binary32 requesting each mode for 16 and 32 bits: valid for Vulkan 1.2 to the newer spirv-val of
// scripts/vulkan-validation-fixture, which knows cooperative matrices. No device needed.
TEST(VulkanFloatControls, RequestedModesMakeValidCoopmatSpirv) {
  const char* tool = testing::newer_spirv_val();
  if (!tool) GTEST_SKIP() << testing::kNoNewerSpirvVal;
  MmaConfig cfg;
  cfg.m = cfg.n = cfg.k = 16;
  cfg.a = cfg.b = &binary16;
  cfg.c = cfg.d = &binary32;
  const auto module = vulkan::coopmat_module(cfg, 32);
  ASSERT_TRUE(module) << module.error().message;
  ASSERT_TRUE(testing::run_spirv_val(tool, *module, "vulkan1.2").ok);
  for (const vulkan::FloatControlMode& m : vulkan::float_control_modes()) {
    auto moded = vulkan::request_mode(*module, m, {16, 32});
    ASSERT_TRUE(moded) << moded.error().message;
    const testing::SpirvVal r = testing::run_spirv_val(tool, *moded, "vulkan1.2");
    EXPECT_TRUE(r.ok) << m.name << ":\n" << r.messages;
  }
}

// Each variant the driver offers does what its mode says, on add and mul of every format it lists:
// rtz rounds toward zero, rte to nearest even, denorm-preserve keeps subnormals, denorm-flush
// flushes operands and results, signed-zero-inf-nan-preserve is IEEE on the specials. The modes a
// driver does not claim have no variant: lavapipe claims rte and signed-zero-inf-nan-preserve only.
TEST(VulkanFloatControls, VariantsBehaveAsTheirModeSays) {
  if (!vulkan_devices()) GTEST_SKIP() << "no Vulkan device: " << vulkan_devices().error().message;
  std::vector<std::string> tried, missing;
  for (const vulkan::FloatControlMode& m : vulkan::float_control_modes()) {
    auto d = find_device(fmt::format("vulkan:0+{}", m.name));
    if (!d) {
      missing.emplace_back(m.name);
      continue;
    }
    tried.emplace_back(m.name);
    const model::Rounding rounding = m.name == "rtz" ? model::Rounding::rz : model::Rounding::rne;
    const Flush flush = m.name == "denorm-preserve" ? Flush::forbidden
                        : m.name == "denorm-flush"  ? Flush::required
                                                    : Flush::allowed;
    for (const Format* f : formats_of(**d))
      for (const Node op : {Node::add, Node::mul}) {
        const Expr e = binary(op, *f);
        const Tally t = check(**d, e, draw_tuples(*f, 2, 20000, kSeed + 6), {binary_op(*f, op)}, rounding, flush);
        fmt::print("{} {}: {} of 20000 as the mode says\n", (*d)->info().id, e.to_string(), t.allowed[0]);
      }
  }
  fmt::print("variants tried: {}; modes the driver does not claim: {}\n", fmt::join(tried, ", "),
             fmt::join(missing, ", "));
  if (tried.empty()) GTEST_SKIP() << "the driver claims no float-control mode";
}

// ---- The command line ----

TEST(VulkanCommandLine, QuickScalarSuiteOnVulkan0) {
  if (!find_device("vulkan:0")) GTEST_SKIP() << find_device("vulkan:0").error().message;
  const testing::CliRun run =
      testing::run_cli("run --device vulkan:0 --suite scalar --quick --seed 1 --json {json}", "gpuparanoia-vulkan-cli");
  EXPECT_EQ(run.exit_status, 0) << run.tail();
  ASSERT_TRUE(run.result.is_object()) << "no JSON result\n" << run.tail();
  const nlohmann::json& doc = run.result;
  EXPECT_EQ(doc["device"]["id"], "vulkan:0");
  EXPECT_FALSE(doc["device"]["capabilities"]["float_controls"].empty()) << "the claims sit beside the findings";
  // The node and the device's identity, that a fleet's results are grouped and told apart by.
  EXPECT_TRUE(doc["host"]["hostname"].is_string()) << doc["host"];
  EXPECT_TRUE(doc["device"]["identity"]["device_uuid"].is_string()) << doc["device"];
  ASSERT_FALSE(doc["findings"].empty());
  std::size_t ok = 0;
  for (const auto& f : doc["findings"]) {
    EXPECT_EQ(f["status"], "ok") << f["probe"] << " " << f["format"] << ": " << f.value("message", "");
    ok += f["status"] == "ok";
  }
  for (const std::string format : {"binary32"}) {
    const auto& p = doc["profile"]["scalar"][format];
    ASSERT_TRUE(p.is_object() && !p.empty()) << "no profile for " << format;
    EXPECT_EQ(p["validation"]["mismatches"], 0) << p.dump();
  }
  fmt::print("{} findings ok of {}\n", ok, doc["findings"].size());
}

// A driver that crashes in the third pipeline creation of each process (the DriverCall test hook):
// the probe it hit is an error naming the call, and a new child goes on with the next, so that the
// result is complete and holds every finding a run without the crash has.
TEST(VulkanCommandLine, ADriverCrashEndsOnlyTheProbeItHit) {
  if (!find_device("vulkan:0")) GTEST_SKIP() << find_device("vulkan:0").error().message;
  // The compiler canaries run first whatever is selected; selected, they are reported in both runs.
  const std::string args =
      "run --device vulkan:0 --suite scalar --probe 'scalar.*.ulp_error' --probe 'scalar.compiler.*' --quick --seed 1 "
      "--json {json}";
  const testing::CliRun run =
      testing::run_cli(args, "gpuparanoia-vulkan-crash", "GPUPARANOIA_CRASH_IN=vkCreateComputePipelines:3");
  const testing::CliRun plain = testing::run_cli(args, "gpuparanoia-vulkan-no-crash");
  EXPECT_EQ(run.exit_status, 1) << run.tail();
  ASSERT_TRUE(run.result.is_object() && plain.result.is_object()) << "no JSON result\n" << run.tail();
  EXPECT_EQ(run.result["complete"], true);
  const auto findings = [](const nlohmann::json& doc) {
    std::multiset<std::string> v;
    for (const auto& f : doc["findings"])
      v.insert(f["probe"].get<std::string>() + " " + f["format"].get<std::string>());
    return v;
  };
  EXPECT_EQ(findings(run.result), findings(plain.result)) << run.tail();
  int crashed = 0, ok = 0;
  for (const auto& f : run.result["findings"]) {
    if (f["status"] == "ok")
      ++ok;
    else if (f["message"] == "the driver crashed (SIGSEGV) in vkCreateComputePipelines")
      ++crashed;
    else
      ADD_FAILURE() << f.dump();
  }
  EXPECT_GT(crashed, 0);
  EXPECT_GT(ok, 0);
}

// ---- A lost device ----

// The driver as the context sees it, with the fence wait reporting VK_ERROR_DEVICE_LOST once armed,
// and a count of the calls that would touch the device or free what it may use.
struct LostDriver {
  static inline vulkan::Api real;
  static inline bool lose = false;
  static inline int submits = 0, waits = 0, buffers_destroyed = 0, memory_freed = 0, devices_destroyed = 0;

  static void install(vulkan::Api& api) {
    real = api;
    api.vkQueueSubmit = [](VkQueue q, std::uint32_t n, const VkSubmitInfo* s, VkFence f) {
      ++submits;
      return real.vkQueueSubmit(q, n, s, f);
    };
    api.vkWaitForFences = [](VkDevice d, std::uint32_t n, const VkFence* f, VkBool32 all, std::uint64_t timeout) {
      ++waits;
      return lose ? VK_ERROR_DEVICE_LOST : real.vkWaitForFences(d, n, f, all, timeout);
    };
    api.vkDestroyBuffer = [](VkDevice d, VkBuffer b, const VkAllocationCallbacks* a) {
      buffers_destroyed += b != VK_NULL_HANDLE;
      real.vkDestroyBuffer(d, b, a);
    };
    api.vkFreeMemory = [](VkDevice d, VkDeviceMemory m, const VkAllocationCallbacks* a) {
      memory_freed += m != VK_NULL_HANDLE;
      real.vkFreeMemory(d, m, a);
    };
    api.vkDestroyDevice = [](VkDevice d, const VkAllocationCallbacks* a) {
      ++devices_destroyed;
      real.vkDestroyDevice(d, a);
    };
    api.vkDeviceWaitIdle = [](VkDevice) { return VK_ERROR_DEVICE_LOST; };  // must not be waited on
  }
};

// fp8 cooperative matrices on Hopper are named after the emulated row that models them (NVIDIA
// emulates fp8 with conversions to binary16 and the binary16 tensor core), whatever M and N; other
// devices, formats or K are not.
TEST(VulkanMmaOffer, HopperFp8IsNamedAfterItsEmulation) {
  MmaConfig c{16, 16, 32, &model::e4m3, &model::e5m2, &model::binary32, &model::binary32, "subgroup", ""};
  EXPECT_EQ(vulkan::emulated_instruction("NVIDIA H100 80GB HBM3", 0x10de, c), "hopper:QMMA.16832.F32.E4M3.E5M2");
  EXPECT_EQ(vulkan::emulated_instruction("NVIDIA GH200 480GB", 0x10de, c), "hopper:QMMA.16832.F32.E4M3.E5M2");
  EXPECT_EQ(vulkan::emulated_instruction("NVIDIA H20", 0x10de, c), "hopper:QMMA.16832.F32.E4M3.E5M2");
  c.k = 16;
  c.c = c.d = &model::binary16;
  EXPECT_EQ(vulkan::emulated_instruction("NVIDIA H200", 0x10de, c), "hopper:QMMA.16816.F16.E4M3.E5M2");
  EXPECT_EQ(vulkan::emulated_instruction("NVIDIA GeForce RTX 4090", 0x10de, c), "");
  EXPECT_EQ(vulkan::emulated_instruction("NVIDIA H100 PCIe", 0x1002, c), "");
  EXPECT_EQ(vulkan::emulated_instruction("NVIDIA H1000", 0x10de, c), "");
  c.k = 64;
  EXPECT_EQ(vulkan::emulated_instruction("NVIDIA H100 PCIe", 0x10de, c), "") << "no row of that K";
  const MmaConfig f16{16,         8, 16, &model::binary16, &model::binary16, &model::binary32, &model::binary32,
                      "subgroup", ""};
  EXPECT_EQ(vulkan::emulated_instruction("NVIDIA H100 PCIe", 0x10de, f16), "") << "native, not emulated";
}

// The MMA pipelines' workgroup is one subgroup whose size is required wherever the device lets a
// compute pipeline require one (Vulkan 1.3 or VK_EXT_subgroup_size_control), also where the minimum
// and the maximum agree (lavapipe); full subgroups only where that is valid for the LocalSize.
TEST(VulkanContext, OneSubgroupPerWorkgroupRequiresTheSizeWhereAllowed) {
  vulkan::DeviceFacts f;
  f.subgroup_size = 8;
  f.subgroup_size_control.minSubgroupSize = f.subgroup_size_control.maxSubgroupSize = 8;
  f.subgroup_size_control.requiredSubgroupSizeStages = VK_SHADER_STAGE_COMPUTE_BIT;
  auto o = vulkan::one_subgroup_per_workgroup(f, 4);
  EXPECT_EQ(o.bindings, 4u);
  EXPECT_EQ(o.required_subgroup_size, 0u) << "without the subgroupSizeControl feature";
  EXPECT_FALSE(o.full_subgroups);
  f.features.v13.subgroupSizeControl = f.features.v13.computeFullSubgroups = VK_TRUE;
  o = vulkan::one_subgroup_per_workgroup(f, 4);
  EXPECT_EQ(o.required_subgroup_size, 8u) << "minimum and maximum agree";
  EXPECT_TRUE(o.full_subgroups);
  f.subgroup_size = 32;  // 8 to 32 (Intel): still the default size, required
  f.subgroup_size_control.maxSubgroupSize = 32;
  EXPECT_EQ(vulkan::one_subgroup_per_workgroup(f, 4).required_subgroup_size, 32u);
  // Compute not among the stages: nothing required, full subgroups only at the maximum size.
  f.subgroup_size_control.requiredSubgroupSizeStages = VK_SHADER_STAGE_FRAGMENT_BIT;
  o = vulkan::one_subgroup_per_workgroup(f, 4);
  EXPECT_EQ(o.required_subgroup_size, 0u);
  EXPECT_TRUE(o.full_subgroups);
  f.subgroup_size = 16;
  EXPECT_FALSE(vulkan::one_subgroup_per_workgroup(f, 4).full_subgroups) << "LocalSize 16 below the maximum 32";
  // The extension's features on a Vulkan 1.2 device.
  f.features = {};
  f.features.subgroup_size_control.subgroupSizeControl = VK_TRUE;
  f.subgroup_size_control.requiredSubgroupSizeStages = VK_SHADER_STAGE_COMPUTE_BIT;
  EXPECT_EQ(vulkan::one_subgroup_per_workgroup(f, 4).required_subgroup_size, 16u);
}

// After VK_ERROR_DEVICE_LOST the context is lost: that batch is an Error, its buffers and the device
// are never freed (the device may still use them), and later batches are Errors at once, without a
// call to the device.
TEST(VulkanContext, LostDeviceRefusesWorkAndFreesNothing) {
  auto instance = vulkan::Instance::create();
  if (!instance) GTEST_SKIP() << instance.error().message;
  auto physical = (*instance)->physical_devices();
  if (!physical) GTEST_SKIP() << physical.error().message;
  auto facts = vulkan::query_device(**instance, physical->front());
  ASSERT_TRUE(facts) << facts.error().message;
  LostDriver::install((*instance)->api());
  auto context = vulkan::Context::create(*instance, *facts, vulkan::Features{}, {});
  ASSERT_TRUE(context) << context.error().message;
  const auto spirv = [] {
    return vulkan::compile_compute_shader(
        "#version 450\nlayout(local_size_x = 1) in;\n"
        "layout(set = 0, binding = 0) buffer Out { uint v[]; } out_;\nvoid main() { out_.v[gl_GlobalInvocationID.x] = "
        "7u; }\n");
  };
  auto pipeline = (*context)->pipeline("lost", spirv, {.bindings = 1});
  ASSERT_TRUE(pipeline) << pipeline.error().message;
  std::vector<std::uint32_t> out(16);
  const vulkan::Binding bindings[1] = {{sizeof(std::uint32_t), {}, std::as_writable_bytes(std::span(out))}};

  ASSERT_EQ((*context)->run(**pipeline, bindings, out.size(), 1), std::nullopt);  // the driver works
  EXPECT_EQ(out[3], 7u);
  const int destroyed = LostDriver::buffers_destroyed, freed = LostDriver::memory_freed;
  EXPECT_GT(destroyed, 0);

  LostDriver::lose = true;
  const auto lost = (*context)->run(**pipeline, bindings, out.size(), 1);
  ASSERT_NE(lost, std::nullopt);
  EXPECT_NE(lost->message.find("VK_ERROR_DEVICE_LOST"), std::string::npos) << lost->message;
  EXPECT_EQ(lost->kind, ErrorKind::lost);
  ASSERT_TRUE((*context)->lost());
  EXPECT_EQ(LostDriver::buffers_destroyed, destroyed) << "a buffer the device may use was destroyed";
  EXPECT_EQ(LostDriver::memory_freed, freed) << "memory the device may use was freed";

  const int submits = LostDriver::submits, waits = LostDriver::waits;
  for (int i = 0; i < 3; ++i) {
    const auto again = (*context)->run(**pipeline, bindings, out.size(), 1);
    ASSERT_NE(again, std::nullopt);
    EXPECT_NE(again->message.find("device lost"), std::string::npos) << again->message;
    EXPECT_EQ(again->kind, ErrorKind::lost);
  }
  const auto other = (*context)->pipeline("another", spirv, {.bindings = 1});
  ASSERT_FALSE(other);
  EXPECT_NE(other.error().message.find("device lost"), std::string::npos) << other.error().message;
  EXPECT_EQ(other.error().kind, ErrorKind::lost);
  EXPECT_EQ(LostDriver::submits, submits);
  EXPECT_EQ(LostDriver::waits, waits);

  context->reset();  // destroys nothing of the device's
  EXPECT_EQ(LostDriver::buffers_destroyed, destroyed);
  EXPECT_EQ(LostDriver::memory_freed, freed);
  EXPECT_EQ(LostDriver::devices_destroyed, 0);
}

// Without a driver the backend says why, and the other backends run on.
TEST(VulkanCommandLine, NoDriverIsReportedNotFatal) {
  const testing::CliRun run =
      testing::run_cli("devices", "gpuparanoia-vulkan-nodriver", "VK_DRIVER_FILES=/nonexistent/icd.json");
  EXPECT_EQ(run.exit_status, 0) << run.tail();
  EXPECT_NE(run.output.find("not available: no Vulkan driver"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("ref:ieee-binary32"), std::string::npos) << run.output;
}

}  // namespace
}  // namespace gp::backends
