// The MMA probes on the reference devices of the instruction table reproduce the papers'
// conclusions (the paper's words beside each check):
// - Fasi et al. 2021, section 4, for the V100 (volta:HMMA.884.*) and the T4 (turing:HMMA.884.*);
// - Valpey et al. 2025, section 4: truncation on alignment, three carry-out bits;
// - MMA-Sim (Xie et al. 2025), sections IV and VI, for the NVIDIA and AMD architectures;
// and the probes' building blocks hold for every format: exact encodings, factoring of products,
// one case per output element.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cstdlib>
#include <optional>
#include <random>
#include <utility>
#include <vector>

#include "audit/probe.hpp"
#include "audit/result.hpp"
#include "audit/runner.hpp"
#include "model/mma_instructions.hpp"
#include "tests_mma/layout.hpp"
#include "tests_mma/questions.hpp"
#include "tests_mma/suite.hpp"
#include "tests_mma/support.hpp"
#include "unittests/drawn_seed.hpp"
#include "unittests/random_mma.hpp"
#include "unittests/reference_devices.hpp"

namespace gp {
namespace {

using nlohmann::json;

constexpr std::uint64_t kSeed = 2021;

backends::Device& device(std::string_view id) { return testing::reference_device(id); }

// Runs one probe on the device's (single) configuration; prints the verdict.
json run(std::string_view probe, std::string_view instruction) {
  backends::Device& d = device(instruction);
  const backends::MmaConfig& cfg = d.caps().mma.front();
  for (const audit::MmaProbe* p : mma::probes())
    if (p->id() == probe) {
      const audit::Finding f = p->run(d, cfg, audit::ProbeContext{audit::Tier::quick, kSeed});
      std::printf("  [%s] %s\n", std::string(instruction).c_str(), f.verdict.c_str());
      EXPECT_EQ(f.status, audit::Status::ok) << probe << " on " << instruction << ": " << f.message;
      return f.parameters;
    }
  ADD_FAILURE() << "no probe " << probe;
  return json::object();
}

// The judged finding of a probe, once the whole MMA suite and the identification have run on the
// device's configuration: what a user reads. The probe's own reading (run) is a measurement; a
// structure such as fused blocks is read from the model's candidates only.
json judged(std::string_view probe, std::string_view instruction) {
  backends::Device& d = device(instruction);
  audit::RunSettings s;
  s.suite = "mma";
  s.tier = audit::Tier::quick;
  s.seed = kSeed;
  s.mma_validation_tiles = 256;
  audit::ResultDocument doc(d, "test", s.to_json());
  audit::run_mma_suite(d, s, doc);
  for (const json& f : doc.json()["findings"])
    if (f["probe"] == probe) {
      std::printf("  [%s] %s\n", std::string(instruction).c_str(), f["verdict"].get<std::string>().c_str());
      return f["parameters"];
    }
  ADD_FAILURE() << "no finding of " << probe << " on " << instruction;
  return json::object();
}

// ---- Fasi, Higham, Mikaitis, Pranesh, section 4 (V100), and 3.2 (T4: "one extra bit").
// The runner marks a probe finding the identification did not judge as such (audit/runner.cpp):
// that holds only if every MMA probe asks the model a question.
TEST(MmaSuite, EveryProbeAsksTheModelAQuestion) {
  for (const audit::MmaProbe* p : mma::probes()) EXPECT_NE(p->question(), nullptr) << p->id();
}

// ---- The layout check that gates every configuration (tests_mma/layout.hpp).

// Every instruction of the model is laid out as the reference backend says: the check can pass.
TEST(MmaLayout, EveryReferenceInstructionPasses) {
  const mma::LayoutCheck check;
  int checked = 0;
  for (const auto& d : testing::reference_devices())
    for (const backends::MmaConfig& cfg : d->caps().mma) {
      const audit::Finding f = check.run(*d, cfg, audit::ProbeContext{audit::Tier::quick, kSeed});
      EXPECT_EQ(f.status, audit::Status::ok) << d->info().id << " " << cfg.name() << ": " << f.message;
      ++checked;
    }
  EXPECT_GT(checked, 300);
}

// And the units the model can express: random parameter sets of the nine algorithms (outputs rounded
// to as few as one fraction bit, every rounding, floors, flushing); AMD's one's-complement unit in
// MmaIdentify.AmdDotUnits.
TEST(MmaLayout, RandomUnitsOfTheModelPass) {
  std::mt19937_64 rng(testing::drawn_seed(2026));
  const int sets = testing::drawn_count(300, 1000);
  for (int i = 0; i < sets; ++i) {
    const testing::Drawn x = testing::draw(rng, i);
    backends::ReferenceDevice dev = testing::device_of(x, i);
    const audit::Finding f =
        mma::LayoutCheck().run(dev, x.mc, audit::ProbeContext{audit::Tier::quick, kSeed + std::uint64_t(i)});
    EXPECT_EQ(f.status, audit::Status::ok) << x.label << ": " << f.message;
  }
}

// A backend whose every MMA batch fails with one error.
class Refusing final : public backends::Device {
 public:
  Refusing(backends::Device& inner, Error e) : inner_(&inner), error_(std::move(e)) {}
  const backends::DeviceInfo& info() const override { return inner_->info(); }
  const backends::Capabilities& caps() const override { return inner_->caps(); }
  Expected<std::vector<std::uint64_t>> scalar(const backends::ScalarBatch& b) override { return inner_->scalar(b); }
  Expected<std::vector<std::uint64_t>> mma(const backends::MmaBatch&) override { return error_; }

 private:
  backends::Device* inner_;
  Error error_;
};

// Every MMA probe and the layout check: a device that refuses what it cannot compute ends the probe
// as `unsupported`, saying why; any other error as `error`.
TEST(MmaLayout, UnsupportedErrorsBecomeUnsupportedFindings) {
  Refusing lacking(device("ampere:HMMA.16816.F32"), Error{"the tile is too large here", ErrorKind::unsupported});
  Refusing failing(device("ampere:HMMA.16816.F32"), Error{"the driver failed", ErrorKind::failed});
  const backends::MmaConfig& cfg = lacking.caps().mma.front();
  const audit::ProbeContext ctx{audit::Tier::quick, kSeed};
  std::vector<const audit::MmaProbe*> all(mma::probes().begin(), mma::probes().end());
  const mma::LayoutCheck layout;
  all.push_back(&layout);
  std::size_t checked = 0;
  for (const audit::MmaProbe* p : all) {
    if (!p->applies(cfg)) continue;
    const audit::Finding a = p->run(lacking, cfg, ctx), b = p->run(failing, cfg, ctx);
    // A probe these formats give nothing to measure says so before it runs anything.
    if (a.status == audit::Status::unsupported && a.message == b.message) continue;
    EXPECT_EQ(a.status, audit::Status::unsupported) << p->id() << ": " << a.message;
    EXPECT_NE(a.message.find("too large here"), std::string::npos) << p->id() << ": " << a.message;
    EXPECT_EQ(b.status, audit::Status::error) << p->id() << ": " << b.message;
    ++checked;
  }
  EXPECT_GT(checked, all.size() / 2);
}

// A backend that misplaces elements: it hands the unit A with two K columns swapped (B as
// given), or B with two columns swapped, or reads D transposed, or C shifted by one element.
class Misplacing final : public backends::Device {
 public:
  enum class Fault { a_columns, b_columns, d_transposed, c_shifted };
  Misplacing(backends::Device& inner, Fault fault) : inner_(&inner), fault_(fault) {}
  const backends::DeviceInfo& info() const override { return inner_->info(); }
  const backends::Capabilities& caps() const override { return inner_->caps(); }
  Expected<std::vector<std::uint64_t>> scalar(const backends::ScalarBatch& b) override { return inner_->scalar(b); }
  Expected<std::vector<std::uint64_t>> mma(const backends::MmaBatch& batch) override {
    const backends::MmaConfig& cfg = *batch.config;
    const std::size_t M = std::size_t(cfg.m), N = std::size_t(cfg.n), K = std::size_t(cfg.k);
    std::vector<std::uint64_t> a(batch.a.begin(), batch.a.end()), b(batch.b.begin(), batch.b.end()),
        c(batch.c.begin(), batch.c.end());
    const std::size_t tiles = c.size() / (M * N);
    for (std::size_t t = 0; t < tiles; ++t) {
      if (fault_ == Fault::a_columns)
        for (std::size_t i = 0; i < M; ++i) std::swap(a[t * M * K + i * K], a[t * M * K + i * K + 1]);
      if (fault_ == Fault::b_columns)
        for (std::size_t k = 0; k < K; ++k) std::swap(b[t * K * N + k * N], b[t * K * N + k * N + 1]);
      if (fault_ == Fault::c_shifted)
        std::rotate(c.begin() + long(t * M * N), c.begin() + long(t * M * N + 1), c.begin() + long((t + 1) * M * N));
    }
    auto d = inner_->mma({batch.config, a, b, c});
    if (!d || fault_ != Fault::d_transposed || M != N) return d;
    for (std::size_t t = 0; t < tiles; ++t)
      for (std::size_t i = 0; i < M; ++i)
        for (std::size_t j = i + 1; j < N; ++j) std::swap((*d)[t * M * N + i * N + j], (*d)[t * M * N + j * N + i]);
    return d;
  }

 private:
  backends::Device* inner_;
  Fault fault_;
};

// Every fault is caught, and the configuration then gives no arithmetic verdict: every finding is
// the layout check's error.
TEST(MmaLayout, AMisplacingBackendGetsNoVerdict) {
  using F = Misplacing::Fault;
  for (const auto& [id, fault] : {std::pair{"volta:HMMA.884.F32.F32", F::a_columns},
                                  {"ampere:HMMA.16816.F32", F::b_columns},
                                  {"cdna3:v_mfma_f32_16x16x16_f16", F::d_transposed},
                                  {"hopper:HMMA.16816.F32", F::c_shifted}}) {
    Misplacing d(device(id), fault);
    const audit::Finding check =
        mma::LayoutCheck().run(d, d.caps().mma.front(), audit::ProbeContext{audit::Tier::quick, kSeed});
    EXPECT_EQ(check.status, audit::Status::error) << id;
    EXPECT_NE(check.message.find("layout check failed: tile"), std::string::npos) << check.message;
    EXPECT_FALSE(check.observations.empty());
    audit::RunSettings s;
    s.suite = "mma";
    s.tier = audit::Tier::quick;
    s.seed = kSeed;
    audit::ResultDocument doc(d, "test", s.to_json());
    const audit::Tally t = audit::run_mma_suite(d, s, doc);
    EXPECT_EQ(t.ok, 0) << id;
    EXPECT_GT(t.error, int(mma::probes().size()) / 2) << id;
    for (const json& f : doc.json()["findings"]) {
      EXPECT_EQ(f["status"], "error") << id << " " << f["probe"];
      EXPECT_NE(f["message"].get<std::string>().find("layout check failed"), std::string::npos) << f["probe"];
    }
    EXPECT_TRUE(doc.json()["profile"]["mma"].is_null() || doc.json()["profile"]["mma"].empty());
  }
}

TEST(PaperConclusions, FasiV100AndT4) {
  for (const char* id : {"volta:HMMA.884.F32.F32", "turing:HMMA.884.F32.F32"}) {
    const bool t4 = std::string_view(id).starts_with("turing");
    // 1. "The binary16 products in (2) are computed exactly".
    EXPECT_EQ(run("mma.fasi.exact_products", id)["exact_products"], true) << id;
    // 2. "The additions in (2) are performed using binary32 arithmetic with round-towards-zero".
    EXPECT_EQ(run("mma.fasi.rounding", id)["rounding"], "toward zero") << id;
    const json r = run("mma.rounding", id);
    EXPECT_EQ(r["rounding"], json::array({"rz"})) << id;
    EXPECT_EQ(r["out_fraction_bits"], 23) << id;
    // 3. "Subnormal numbers in binary16 and binary32 are supported".
    const json s = run("mma.subnormals", id);
    for (const char* w : {"a", "b", "c"}) EXPECT_EQ(s[w], "preserve") << id << " " << w;
    // 4. "The five summands in (2) are accumulated starting with the largest in absolute value".
    EXPECT_EQ(run("mma.fasi.order", id)["aligned_to_largest"], true) << id;
    // 5. "Only the final result of (2) is normalized; ... three extra bits for carries".
    EXPECT_EQ(run("mma.fasi.normalization_add", id)["normalized_partial_sums"], false) << id;
    EXPECT_EQ(run("mma.fasi.normalization_sub", id)["normalized_partial_sums"], false) << id;
    const json carries = run("mma.fasi.carry_bits", id);
    EXPECT_EQ(carries["two_bits"], true) << id;
    EXPECT_EQ(carries["three_bits"], true) << id;
    // 6. "The dot products in tensor cores are non-monotonic".
    EXPECT_EQ(run("mma.fasi.monotonicity", id)["monotonic"], false) << id;
    // Extra alignment bits: {3.23} on the V100, {3.24} on the T4 ("one extra bit of precision").
    EXPECT_EQ(run("mma.fasi.alignment_bits", id)["kept_bits"], t4 ? 24 : 23) << id;
    EXPECT_EQ(run("mma.accumulation_precision", id)["F"], t4 ? 24 : 23) << id;
  }
  // 3.1.3: the binary16 output is rounded to nearest ("round-towards-zero is not used").
  for (const char* id : {"volta:HMMA.884.F16.F16", "turing:HMMA.884.F16.F16"}) {
    const json o = run("mma.fasi.output_rounding", id);
    ASSERT_TRUE(o["rounding"].is_array()) << id;
    EXPECT_NE(std::find(o["rounding"].begin(), o["rounding"].end(), "rne"), o["rounding"].end()) << id;
    EXPECT_EQ(run("mma.fasi.exact_products", id)["exact_products"], true) << id;
  }
}

// ---- Valpey, Li, Pai, Gopalakrishnan, section 4.
TEST(PaperConclusions, Valpey) {
  for (const char* id : {"volta:HMMA.884.F32.F32", "turing:HMMA.884.F32.F32", "ampere:HMMA.1688.F32"}) {
    // 4.2: "they truncate" (2 + (-2^-40) gives 2, not the RZ result 2 - 2^-23).
    EXPECT_EQ(run("mma.valpey.truncation", id)["alignment"], "truncation") << id;
    // 4.3: "the 5-term accumulator uses 3 extra bits for carry out" (and Ampere's 9-term one 4).
    EXPECT_EQ(run("mma.valpey.carry_bits", id)["carries_kept"], true) << id;
  }
  // Algorithm 1: Ampere keeps one shifted-out bit more than Volta and Turing... and Turing's
  // accumulator is one bit wider than Volta's (F = 24 against 23, MMA-Sim's FDA(F)).
  EXPECT_EQ(run("mma.accumulation_precision", "ampere:HMMA.1688.F32")["F"], 24);
}

// ---- MMA-Sim, sections IV and VI.
TEST(PaperConclusions, MmaSimArchitectures) {
  // IV-C: F = 23 (Volta), 24 (Turing, Ampere, Ada HMMA), 25 (Hopper, Blackwell), 13 (Ada QMMA,
  // Hopper QGMMA); VI-A: "NVIDIA has resolved this issue on ... Blackwell ... 25 fractional bits".
  const std::pair<const char*, int> F[] = {{"ada:HMMA.16816.F32", 24},
                                           {"hopper:HMMA.16816.F32", 25},
                                           {"blackwell:UTCHMMA.F32", 25},
                                           {"ada:QMMA.16816.F32.E4M3.E4M3", 13},
                                           {"hopper:QGMMA.64x8x32.F32.E4M3.E4M3", 13},
                                           {"blackwell:UTCQMMMA.F32.E4M3.E4M3", 25},
                                           {"rtx-blackwell:QMMA.16816.F32.E5M2.E5M2", 25}};
  for (const auto& [id, f] : F) EXPECT_EQ(run("mma.accumulation_precision", id)["F"], f) << id;
  // IV-C step 5: binary32 output "rounded to zero at the 13th fractional bit" for QGMMA.
  const json q = run("mma.rounding", "hopper:QGMMA.64x8x32.F32.E4M3.E4M3");
  EXPECT_EQ(q["out_fraction_bits"], 13);
  EXPECT_EQ(q["rounding"], json::array({"rz"}));
  // IV-D: CoFDA, "a chain of two FDA operations" of K/2 on Ampere; one block of 16 on Hopper.
  EXPECT_EQ(judged("mma.summation_tree", "ampere:HMMA.16816.F32")["order"],
            "fused blocks of 8 products, each block's result the next one's c");
  EXPECT_EQ(judged("mma.summation_tree", "hopper:HMMA.16816.F32")["order"], "one fused sum of c and the 16 products");
  // IV-B, VI-B: CDNA2 16-bit MFMA flush subnormals and sum pairwise in groups of 4 (2 for the
  // legacy bf16 instructions).
  const json s2 = run("mma.subnormals", "cdna2:v_mfma_f32_32x32x8_f16");
  EXPECT_EQ(s2["a"], "flush");
  EXPECT_EQ(s2["c"], "flush");
  EXPECT_EQ(judged("mma.summation_tree", "cdna2:v_mfma_f32_32x32x8_f16")["order"],
            "pairwise sums of groups of 4 products, each group added to the running sum from c");
  EXPECT_EQ(judged("mma.summation_tree", "cdna2:v_mfma_f32_32x32x4bf16")["order"],
            "pairwise sums of groups of 2 products, each group added to the running sum from c");
  // VI-B: CDNA3 supports subnormals, but "intermediate products overflow to infinity when their
  // absolute values exceed 2^128"; NVIDIA's products do not overflow.
  EXPECT_EQ(run("mma.subnormals", "cdna3:v_mfma_f32_32x32x8_f16")["a"], "preserve");
  EXPECT_EQ(run("mma.specials", "cdna3:v_mfma_f32_32x32x8_bf16")["product_overflow"], true);
  EXPECT_EQ(run("mma.specials", "hopper:HMMA.16816.F32.BF16")["product_overflow"], false);
  // IV-C step 1: NVIDIA's canonical NaN 0x7FFFFFFF; AMD: a quiet NaN.
  EXPECT_EQ(run("mma.specials", "hopper:HMMA.16816.F32")["nan"], "nvidia");
  EXPECT_EQ(run("mma.specials", "cdna3:v_mfma_f32_32x32x8_f16")["nan"], "format");
  // IV-C step 0: the 13 low bits of TF32 inputs are ignored, 0x7F800001 reads as infinity.
  EXPECT_EQ(run("mma.specials", "ampere:HMMA.1684.F32.TF32")["tf32_low_bits"], "ignored");
  // IV-A: DMMA and the f32/f64 MFMA are sequential FMA chains.
  EXPECT_EQ(judged("mma.summation_tree", "hopper:DMMA.16x8x16")["order"], "sequential FMA chain from c");
  // Table I: the final rounding of CDNA3 is RNE, NVIDIA's binary32 output RZ.
  EXPECT_EQ(run("mma.rounding", "cdna3:v_mfma_f32_32x32x8_f16")["rounding"], json::array({"rne"}));
}

// ---- Building blocks.
TEST(MmaSupport, EncodeFactorAndPlace) {
  using namespace mma;
  for (const model::Format* f : model::all_formats()) {
    if (f == &model::ue8m0) continue;
    // 1 and the largest value below 2 are exact everywhere; 2^(emax + 1) never is.
    ASSERT_TRUE(encode(*f, pow2(0))) << f->name;
    EXPECT_FALSE(encode(*f, pow2(f->emax() + 1))) << f->name;
    const Exact top = {false, (std::uint64_t{1} << f->precision()) - 1, 1 - f->precision()};
    const auto t = encode(*f, top);
    ASSERT_TRUE(t) << f->name;
    const Exact back = decode(*f, *t);
    EXPECT_EQ(back.sig << (back.exp - top.exp), top.sig) << f->name;
  }
  // Products factor exactly, normal factors where possible.
  for (const model::Format* f : {&model::binary16, &model::bfloat16, &model::e4m3, &model::e5m2, &model::e2m1}) {
    for (int e = -6; e <= 6; ++e)
      for (std::uint64_t sig : {1u, 3u, 5u, 9u}) {
        const Exact v = {e % 2 != 0, sig, e};
        const auto ab = factor(*f, *f, v);
        if (!ab) continue;
        const Exact a = decode(*f, ab->first), b = decode(*f, ab->second);
        EXPECT_EQ(a.neg != b.neg, v.neg);
        EXPECT_EQ(show(Exact{false, a.sig * b.sig, a.exp + b.exp}), show(Exact{false, v.sig, v.exp})) << f->name;
      }
  }
  EXPECT_TRUE(factor(model::binary16, model::binary16, pow2(30)));   // 2^15 * 2^15
  EXPECT_FALSE(factor(model::binary16, model::binary16, pow2(33)));  // beyond 65504^2
  EXPECT_EQ(show(add(pow2(0), pow2(-23))), "1 + 2^-23");
  EXPECT_EQ(show(Exact{true, (1u << 24) - 1, -24}), "-(1 - 2^-24)");
  // Every case comes back from its own element: distinct c, no products.
  backends::Device& d = device("hopper:HGMMA.64x8x16.F32");
  const backends::MmaConfig& cfg = d.caps().mma.front();
  std::vector<DotCase> cases;
  for (int i = 0; i < 37; ++i) {
    CaseBuilder b(cfg);
    b.c(pow2(i - 18));
    cases.push_back(b.done(std::to_string(i)));
  }
  const auto out = mma::run(d, cfg, cases);
  ASSERT_TRUE(out.ok());
  for (int i = 0; i < 37; ++i) EXPECT_EQ((*out)[std::size_t(i)], *encode(model::binary32, pow2(i - 18))) << i;
}

// factor() visits a's exponents by the factors' distance and stops at the first pair without
// subnormals: it must choose what a scan of every exponent chooses (the lowest score, the first
// divisor, then the smallest exponent), or the probes' inputs, and the committed results, change.
TEST(MmaSupport, FactorChoosesWhatAScanOfEveryExponentChooses) {
  using mma::Exact;
  const auto scan = [](const model::Format& fa, const model::Format& fb,
                       Exact v) -> std::optional<std::pair<std::uint64_t, std::uint64_t>> {
    if (v.sig == 0) return mma::factor(fa, fb, v);
    const int tz = std::countr_zero(std::uint64_t(v.sig));
    const std::uint64_t s = std::uint64_t(v.sig >> tz);
    const int e = v.exp + tz;
    if (v.neg && !fa.has_sign() && !fb.has_sign()) return std::nullopt;
    std::vector<std::uint64_t> divisors;
    if (model::msb(s) < fa.precision() + fb.precision() + 1 && s < (std::uint64_t{1} << 24)) {
      for (std::uint64_t d = 1; d * d <= s; ++d)
        if (s % d == 0) {
          divisors.push_back(d);
          if (d != s / d) divisors.push_back(s / d);
        }
    } else {
      divisors = {s, 1};
    }
    std::optional<std::pair<std::uint64_t, std::uint64_t>> best;
    long best_score = 0;
    for (std::uint64_t s1 : divisors) {
      const std::uint64_t s2 = s / s1;
      if (model::msb(s1) >= fa.precision() || model::msb(s2) >= fb.precision()) continue;
      for (int x = fa.quantum_min() - 2 - model::msb(s1); x <= fa.emax() + 1; ++x) {
        const auto a = mma::encode(fa, {v.neg && fa.has_sign(), s1, x});
        const auto b = a ? mma::encode(fb, {v.neg && !fa.has_sign(), s2, e - x}) : std::nullopt;
        if (!b) continue;
        const int subnormals =
            (model::classify(fa, *a) == model::Class::subnormal) + (model::classify(fb, *b) == model::Class::subnormal);
        const long score = 10000L * subnormals + 1000L * (s1 != 1 && s2 != 1) +
                           std::abs(x + model::msb(s1) - (e - x + model::msb(s2)));
        if (!best || score < best_score) best = std::pair{*a, *b}, best_score = score;
      }
    }
    return best;
  };
  std::mt19937_64 rng(kSeed);
  int compared = 0;
  for (const model::Format* fa : model::all_formats())
    for (const model::Format* fb : model::all_formats()) {
      if (fa->storage_bits > 32 || fb->storage_bits > 32 || fa == &model::ue8m0 || fb == &model::ue8m0) continue;
      const int lo = fa->quantum_min() + fb->quantum_min() - 2, hi = fa->emax() + fb->emax() + 2;
      for (int i = 0; i < 60; ++i) {
        const int bits = 1 + int(rng() % std::uint64_t(fa->precision() + fb->precision()));
        const std::uint64_t sig = i == 0 ? 0 : (rng() & ((std::uint64_t{1} << bits) - 1)) | 1;
        const Exact v = {rng() % 2 == 0, sig, lo + int(rng() % std::uint64_t(hi - lo + 1))};
        EXPECT_EQ(mma::factor(*fa, *fb, v), scan(*fa, *fb, v)) << fa->name << " x " << fb->name << ": " << mma::show(v);
        ++compared;
      }
    }
  EXPECT_GT(compared, 1000);
}

}  // namespace
}  // namespace gp
