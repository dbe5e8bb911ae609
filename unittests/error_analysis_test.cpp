// The error analysis (model/error_analysis.hpp, `gpuparanoia error`): its exact reference against
// MPFR, numpy's pairwise order written out, the bounds' formulas, results independent of the thread
// count, and the command's usage errors.
#include <gtest/gtest.h>
#include <mpfr.h>

#include <CLI/CLI.hpp>
#include <bit>
#include <cmath>
#include <random>

#include "cli/error_command.hpp"
#include "cli/exit_codes.hpp"
#include "model/error_analysis.hpp"
#include "model/exact_sum.hpp"
#include "model/mma_instructions.hpp"
#include "unittests/mpfr_oracle.hpp"

namespace gp::model {
namespace {

// A random finite encoding of f (any exponent, subnormals and zeros included).
std::uint64_t random_finite(const Format& f, std::mt19937_64& rng) {
  for (;;) {
    const std::uint64_t bits = (rng() & f.storage_mask()) & ~((std::uint64_t{1} << f.pad_bits) - 1);
    const auto d = oracle::decode(f, bits);
    if (d.kind == oracle::Decoded::Kind::finite || d.kind == oracle::Decoded::Kind::zero) return bits;
  }
}

// x = (-1)^neg sig 2^exp as MPFR holds it, decoded by the oracle's own decoder.
void load(mpfr_t x, const Format& f, std::uint64_t bits) {
  const auto d = oracle::decode(f, bits);
  mpfr_set_ui_2exp(x, d.kind == oracle::Decoded::Kind::zero ? 0 : d.sig, d.exp, MPFR_RNDN);
  if (d.neg) mpfr_neg(x, x, MPFR_RNDN);
}

TEST(ExactSum, MatchesMpfr) {
  std::mt19937_64 rng(20260);
  const Format* ab[] = {&binary16, &bfloat16, &e4m3, &e2m1, &tf32, &binary64, &e5m2fnuz};
  const Format* cs[] = {&binary32, &binary16, &binary64};
  mpfr_t sum, x, y, p;
  mpfr_inits2(6000, sum, nullptr);
  mpfr_inits2(160, x, y, p, nullptr);
  for (int n = 0; n < 300; ++n) {
    const Format &af = *ab[rng() % 7], &bf = *ab[rng() % 7], &cf = *cs[rng() % 3];
    const int k = 1 + int(rng() % 200);
    ExactSum s(af, bf, {&cf, &binary32}, k);
    const std::uint64_t c = random_finite(cf, rng);
    s.add(cf, c);
    load(sum, cf, c);
    for (int i = 0; i < k; ++i) {
      std::uint64_t a = random_finite(af, rng);
      const std::uint64_t b = random_finite(bf, rng);
      // Every other case cancels: a product and then its negation.
      if (n % 2 && i % 2) a ^= af.sign_mask();
      s.add_product(af, a, bf, b);
      load(x, af, a);
      load(y, bf, b);
      ASSERT_EQ(mpfr_mul(p, x, y, MPFR_RNDN), 0);
      ASSERT_EQ(mpfr_add(sum, sum, p, MPFR_RNDN), 0) << "the MPFR sum is exact";
    }
    const double want = mpfr_get_d(sum, MPFR_RNDN);
    EXPECT_EQ(std::bit_cast<std::uint64_t>(s.to_double()), std::bit_cast<std::uint64_t>(want + 0.0))
        << af.name << " x " << bf.name << " + " << cf.name << ", K = " << k;
    if (std::fabs(want) < 3e38) {
      const float want32 = mpfr_get_flt(sum, MPFR_RNDN);
      EXPECT_EQ(s.rounded(binary32), std::bit_cast<std::uint32_t>(want32 + 0.0f)) << af.name << " x " << bf.name;
      // d subtracted: the error, rounded once.
      ExactSum z = s;
      z.add(binary32, s.rounded(binary32), true);
      mpfr_sub_d(sum, sum, double(std::bit_cast<float>(std::uint32_t(s.rounded(binary32)))), MPFR_RNDN);
      EXPECT_EQ(z.to_double(), mpfr_get_d(sum, MPFR_RNDN));
    }
  }
  mpfr_clears(sum, x, y, p, nullptr);
}

TEST(NumpyPairwise, OrderWrittenOut) {
  std::mt19937 rng(5);
  std::normal_distribution<float> nd;
  std::vector<float> x(20000);
  for (float& v : x) {  // (two statements: the order of the draws must not be the compiler's choice)
    const float g = nd(rng);
    v = g * float(1 << (rng() % 20));
  }
  // Below 8: sequential from 0.
  EXPECT_EQ(numpy_pairwise_sum(x.data(), 5), 0.f + x[0] + x[1] + x[2] + x[3] + x[4]);
  // 17: eight accumulators over 0..15, combined in pairs, then x16 (on many windows: a different
  // order rounds differently on some).
  for (std::size_t o = 0; o < 4000; o += 17) {
    const float* w = x.data() + o;
    const auto r = [&](int j) { return w[j] + w[j + 8]; };
    const float want17 = ((r(0) + r(1)) + (r(2) + r(3))) + ((r(4) + r(5)) + (r(6) + r(7))) + w[16];
    ASSERT_EQ(numpy_pairwise_sum(w, 17), want17) << "at " << o;
  }
  // 136: halves at 64 (136 / 2 = 68, less 68 % 8).
  EXPECT_EQ(numpy_pairwise_sum(x.data(), 136),
            numpy_pairwise_sum(x.data(), 64) + numpy_pairwise_sum(x.data() + 64, 72));
  EXPECT_NE(numpy_pairwise_sum(x.data(), 136),
            numpy_pairwise_sum(x.data(), 68) + numpy_pairwise_sum(x.data() + 68, 68));
  // np.add.reduce: chunks of 8192, each added in turn to 0.
  EXPECT_EQ(numpy_add_reduce(x.data(), 20000),
            ((0.f + numpy_pairwise_sum(x.data(), 8192)) + numpy_pairwise_sum(x.data() + 8192, 8192)) +
                numpy_pairwise_sum(x.data() + 16384, 20000 - 16384));
  EXPECT_EQ(numpy_pairwise_depth(5), 4);
  EXPECT_EQ(numpy_pairwise_depth(17), 5);  // x0: one accumulation, three combinations, then x16
  EXPECT_EQ(numpy_pairwise_depth(136), 1 + numpy_pairwise_depth(72));
  EXPECT_EQ(numpy_add_reduce_depth(20000), numpy_pairwise_depth(8192) + 3);
}

// Within a relative 1e-9: the test's formulas round differently from the model's expm1/log1p.
void expect_near(double got, double want) { EXPECT_NEAR(got, want, 1e-9 * std::fabs(want)); }

TEST(ErrorBounds, Formulas) {
  // Hopper's HMMA.16816.F32: FDA F = 25 over blocks of 16, d rounded toward zero at binary32: one
  // block per call, so m = K / 16, u = 2^-23, beta = 17 * 2^-25.
  const MmaInstruction* h = find_mma_instruction("hopper:HMMA.16816.F32");
  ASSERT_NE(h, nullptr);
  ASSERT_EQ(h->config.F, 25);
  for (long k : {16L, 4096L}) {
    const ErrorBounds b = unit_error_bounds(h->config, 16, k, 6);
    const double m = double(k) / 16;
    expect_near(b.deterministic, std::pow((1 + 0x1p-23) * (1 + 17 * 0x1p-25), m) - 1);
    EXPECT_EQ(b.probabilistic, b.deterministic);  // a directed rounding: no probabilistic gain
  }
  DotConfig rne = h->config;
  rne.out_rounding = Rounding::rne;
  const ErrorBounds b = unit_error_bounds(rne, 16, 65536, 6);
  const double m = 4096, u = 0x1p-24;
  expect_near(b.probabilistic,
              std::exp(6 * std::sqrt(m) * u + m * u * u / (1 - u)) * std::pow(1 + 17 * 0x1p-25, m) - 1);
  EXPECT_LT(b.probabilistic, b.deterministic);
  // sfma (DMMA): an FMA chain of K binary64 roundings to nearest.
  const MmaInstruction* dmma = find_mma_instruction("ampere:DMMA.884");
  ASSERT_NE(dmma, nullptr);
  expect_near(unit_error_bounds(dmma->config, 4, 64, 6).deterministic, 64 * 0x1p-53 + 2016 * 0x1p-106);
  // Too few carry bits for a block's terms: a sum may wrap, no bound.
  DotConfig wraps = h->config;
  wraps.carry_bits = 3;
  EXPECT_TRUE(std::isnan(unit_error_bounds(wraps, 16, 64, 6).deterministic));
}

TEST(ErrorAnalysis, SameResultsWhateverTheThreads) {
  const MmaInstruction* c = find_mma_instruction("cdna3:v_mfma_f32_32x32x8_f16");
  ASSERT_NE(c, nullptr);
  const ErrorUnit u = instruction_error_unit(c->id(), c->config, c->k);
  ErrorRequest r;
  r.ks = {8, 64, 512};
  r.trials = 5;
  r.distributions = {ErrorDistribution::normal, ErrorDistribution::ml};
  std::string why;
  r.what_ifs.push_back(*parse_what_if("round_down_alignment=false", why));
  ASSERT_EQ(check(u, r), "");
  r.threads = 1;
  const ErrorReport one = analyse_error(u, r);
  r.threads = 3;
  const ErrorReport three = analyse_error(u, r);
  ASSERT_EQ(one.series.size(), 2u * 4u);
  for (std::size_t i = 0; i < one.series.size(); ++i) {
    EXPECT_EQ(one.series[i].trial_d, three.series[i].trial_d);
    EXPECT_EQ(one.series[i].mean_signed_rel, three.series[i].mean_signed_rel);
  }
}

TEST(ErrorAnalysis, WhatIfParsing) {
  std::string why;
  const auto w = parse_what_if("out_rounding=rne,F=26,align_floor=none", why);
  ASSERT_TRUE(w) << why;
  EXPECT_EQ(std::get<std::string>(w->parameters.at("out_rounding")), "rne");
  EXPECT_EQ(std::get<std::int64_t>(w->parameters.at("F")), 26);
  EXPECT_TRUE(std::holds_alternative<std::monostate>(w->parameters.at("align_floor")));
  const auto f = parse_what_if("flush=inputs,c", why);
  ASSERT_TRUE(f) << why;
  EXPECT_EQ(std::get<std::vector<std::string>>(f->parameters.at("flush")), (std::vector<std::string>{"inputs", "c"}));
  EXPECT_FALSE(parse_what_if("G=3", why));
  EXPECT_NE(why.find("unknown parameter 'G'"), std::string::npos);
  EXPECT_FALSE(parse_what_if("F=x", why));
  EXPECT_FALSE(parse_what_if("round_down_alignment=maybe", why));
  EXPECT_FALSE(parse_what_if("F", why));
}

int error_command(std::vector<std::string> args, std::string& err) {
  CLI::App app;
  int code = cli::kExitOk;
  cli::add_error_command(app, code);
  args.insert(args.begin(), "error");
  std::reverse(args.begin(), args.end());
  ::testing::internal::CaptureStderr();
  ::testing::internal::CaptureStdout();
  try {
    app.parse(args);
  } catch (const CLI::ParseError&) {
    code = cli::kExitUsage;
  }
  ::testing::internal::GetCapturedStdout();
  err = ::testing::internal::GetCapturedStderr();
  return code;
}

TEST(ErrorCommand, UsageErrorsRunNothing) {
  const std::vector<std::vector<std::string>> bad = {
      {},
      {"--instruction", "hopper:NOPE"},
      {"--instruction", "hopper:HMMA.16816.F32", "--algorithm", "fda"},
      {"--instruction", "hopper:HMMA.16816.F32", "--ks", "24"},
      {"--instruction", "hopper:HMMA.16816.F32", "--k-max", "8"},
      {"--instruction", "hopper:HMMA.16816.F32", "--trials", "0"},
      {"--instruction", "hopper:HMMA.16816.F32", "--distributions", "cauchy"},
      {"--instruction", "hopper:HMMA.16816.F32", "--what-if", "F=99"},
      {"--instruction", "hopper:HMMA.16816.F32", "--what-if", "group=4"},
      {"--instruction", "hopper:HMMA.16816.F32", "--lambda", "0"},
      {"--instruction", "hopper:HMMA.16816.F32", "--F", "3"},
      {"--algorithm", "fda", "--a-format", "binary16", "--b-format", "binary16", "--c-format", "binary32"},
      {"--instruction", "hopper:HMMA.16816.F32", "--config", "x"},
  };
  for (const auto& args : bad) {
    std::string err;
    EXPECT_EQ(error_command(args, err), cli::kExitUsage) << ::testing::PrintToString(args) << err;
  }
  std::string err;
  EXPECT_EQ(error_command({"--algorithm", "fda", "--a-format", "binary16", "--b-format", "binary16", "--c-format",
                           "binary32", "--d-format", "binary32", "--block", "16", "--ks", "16,32", "--trials", "2"},
                          err),
            cli::kExitOk)
      << err;
}

}  // namespace
}  // namespace gp::model
