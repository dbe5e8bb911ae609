// Speed of the MMA model beside a plain host-float dot product over the same data, in one run.
// The target: FDA binary16 -> binary32 with K = 16 (hopper:HMMA.16816.F32) at least
// 2*10^7 dot-adds per second per core, and within 10x of the host loop.
#include <benchmark/benchmark.h>

#include <random>
#include <vector>

#include "model/gemm.hpp"
#include "model/mma_instructions.hpp"
#include "model/ops.hpp"

namespace {

using namespace gp::model;

constexpr std::size_t kDots = 1 << 12;
constexpr std::size_t kK = 16;

// Finite binary16 values near 1 (both signs, exponents -8..7) and binary32 c, as raw bits.
struct Data {
  std::vector<std::uint64_t> a, b, c;
  Data() : a(kDots * kK), b(kDots * kK), c(kDots) {
    std::mt19937_64 rng(42);
    auto half = [&] { return ((rng() & 1) << 15) | ((7 + rng() % 16) << 10) | (rng() & 0x3FF); };
    for (auto& x : a) x = half();
    for (auto& x : b) x = half();
    for (auto& x : c) x = ((rng() & 1) << 31) | ((120 + rng() % 16) << 23) | (rng() & 0x7FFFFF);
  }
};
const Data& data() {
  static const Data d;
  return d;
}

void run_model(benchmark::State& state, const DotConfig& cfg) {
  const Data& d = data();
  const Dot dot(cfg);
  for (auto _ : state) {
    std::uint64_t acc = 0;
    for (std::size_t i = 0; i < kDots; ++i) acc += dot(d.c[i], {d.a.data() + i * kK, kK}, {d.b.data() + i * kK, kK});
    benchmark::DoNotOptimize(acc);
  }
  state.SetItemsProcessed(std::int64_t(state.iterations() * kDots));
  state.counters["dot_adds_per_s"] =
      benchmark::Counter(double(state.iterations() * kDots), benchmark::Counter::kIsRate);
}

// The same dot products in host float from the same binary16 data (_Float16 widened to float).
void BM_fda_fp16_fp32_K16_host_float(benchmark::State& state) {
  const Data& d = data();
  std::vector<_Float16> a(d.a.size()), b(d.b.size());
  std::vector<float> c(d.c.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    a[i] = std::bit_cast<_Float16>(std::uint16_t(d.a[i]));
    b[i] = std::bit_cast<_Float16>(std::uint16_t(d.b[i]));
  }
  for (std::size_t i = 0; i < c.size(); ++i) c[i] = std::bit_cast<float>(std::uint32_t(d.c[i]));
  for (auto _ : state) {
    float acc = 0;
    for (std::size_t i = 0; i < kDots; ++i) {
      float s = c[i];
      for (std::size_t k = 0; k < kK; ++k) s += float(a[i * kK + k]) * float(b[i * kK + k]);
      benchmark::DoNotOptimize(s);
      acc += s;
    }
    benchmark::DoNotOptimize(acc);
  }
  state.SetItemsProcessed(std::int64_t(state.iterations() * kDots));
  state.counters["dot_adds_per_s"] =
      benchmark::Counter(double(state.iterations() * kDots), benchmark::Counter::kIsRate);
}

void run_model(benchmark::State& state, const char* id) { run_model(state, find_mma_instruction(id)->config); }

void BM_fda_fp16_fp32_K16_model(benchmark::State& s) { run_model(s, "hopper:HMMA.16816.F32"); }
// Beside it, for reference: the chained (CoFDA) Ampere form and binary16 output.
void BM_cofda_fp16_fp32_K16_model(benchmark::State& s) { run_model(s, "ampere:HMMA.16816.F32"); }
void BM_fda_fp16_fp16_K16_model(benchmark::State& s) { run_model(s, "hopper:HMMA.16816.F16"); }
// A summation tree: binary32 additions from p0 to p15, c last (lavapipe's f16 x f16 + f32).
void BM_tree_chain_fp16_fp32_K16_model(benchmark::State& s) {
  std::vector<int> order;
  for (int i = 0; i <= int(kK); ++i) order.push_back(i);
  DotConfig cfg = default_dot_config(MmaAlgorithm::tree, binary16, binary16, binary32, binary32, int(kK));
  cfg.tree = std::make_shared<const SummationTree>(sequential_tree(int(kK), order));
  run_model(s, cfg);
}

// The whole-matrix evaluation (model/gemm.hpp) of hopper:HMMA.16816.F32 on one thread, 256 x 256
// x 256 from the same values: products per second, against the dot-adds above (16 products each).
void BM_gemm_fda_fp16_fp32_256_model(benchmark::State& state) {
  constexpr std::size_t n = 256;
  const Data& d = data();
  std::vector<std::uint64_t> a(n * n), bt(n * n), c(n * n), out(n * n);
  for (std::size_t x = 0; x < n * n; ++x) {
    a[x] = d.a[x % d.a.size()];
    bt[x] = d.b[(x * 7) % d.b.size()];
    c[x] = d.c[x % d.c.size()];
  }
  const MmaInstruction& ins = *find_mma_instruction("hopper:HMMA.16816.F32");
  const GemmOperands g{.m = n,
                       .n = n,
                       .k = n,
                       .kstep = ins.k,
                       .a = BitMatrix::row_major(a, n),
                       .b = BitMatrix::row_major(bt, n).transposed(),
                       .c = BitMatrix::row_major(c, n),
                       .sa = {},
                       .sb = {}};
  for (auto _ : state) {
    gemm(ins.config, g, OutBitMatrix::row_major(out, n), 1);
    benchmark::DoNotOptimize(out.data());
  }
  state.counters["products_per_s"] =
      benchmark::Counter(double(state.iterations() * n * n * n), benchmark::Counter::kIsRate);
}

BENCHMARK(BM_fda_fp16_fp32_K16_model);
BENCHMARK(BM_gemm_fda_fp16_fp32_256_model);
BENCHMARK(BM_fda_fp16_fp32_K16_host_float);
BENCHMARK(BM_cofda_fp16_fp32_K16_model);
BENCHMARK(BM_fda_fp16_fp16_K16_model);
BENCHMARK(BM_tree_chain_fp16_fp32_K16_model);

}  // namespace
