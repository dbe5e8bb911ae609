// Speed of the scalar model beside the host FPU on the same data, in one run.
// DESIGN.md section 9: binary16 add and mul at most 2.5 ns per op (all 2^32 pairs in under 10 s
// per core); binary32 add and mul within 5x of the host loop.
#include <benchmark/benchmark.h>

#include <bit>
#include <random>
#include <vector>

#include "model/ops.hpp"

namespace {

using namespace gp::model;

constexpr std::size_t kN = 1 << 16;

// Finite operands drawn as the exhaustive run draws them: every bit pattern.
std::vector<std::uint64_t> operands(const Format& f, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<std::uint64_t> v(kN);
  for (auto& x : v) {
    do x = rng() & f.storage_mask();
    while (classify(f, x) == Class::infinite || is_nan(classify(f, x)));
  }
  return v;
}

template <class Fn>
void run_model(benchmark::State& state, const Format& f, Fn fn) {
  const auto a = operands(f, 1), b = operands(f, 2);
  const Options o;
  for (auto _ : state) {
    std::uint64_t acc = 0;
    for (std::size_t i = 0; i < kN; ++i) acc += fn(f, o, a[i], b[i]).bits;
    benchmark::DoNotOptimize(acc);
  }
  state.SetItemsProcessed(std::int64_t(state.iterations() * kN));
}

template <class T, class Fn>
void run_host(benchmark::State& state, const Format& f, Fn fn) {
  using U = std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint16_t>;
  const auto a = operands(f, 1), b = operands(f, 2);
  std::vector<T> x(kN), y(kN);
  for (std::size_t i = 0; i < kN; ++i) {
    x[i] = std::bit_cast<T>(U(a[i]));
    y[i] = std::bit_cast<T>(U(b[i]));
  }
  for (auto _ : state) {
    T acc{};
    for (std::size_t i = 0; i < kN; ++i) {
      T r = fn(x[i], y[i]);
      benchmark::DoNotOptimize(r);
      acc = r;
    }
    benchmark::DoNotOptimize(acc);
  }
  state.SetItemsProcessed(std::int64_t(state.iterations() * kN));
}

void BM_binary16_add_model(benchmark::State& s) { run_model(s, binary16, [](auto&... x) { return add(x...); }); }
void BM_binary16_mul_model(benchmark::State& s) { run_model(s, binary16, [](auto&... x) { return mul(x...); }); }
void BM_binary16_add_host(benchmark::State& s) { run_host<_Float16>(s, binary16, [](auto x, auto y) { return x + y; }); }
void BM_binary16_mul_host(benchmark::State& s) { run_host<_Float16>(s, binary16, [](auto x, auto y) { return x * y; }); }
void BM_binary32_add_model(benchmark::State& s) { run_model(s, binary32, [](auto&... x) { return add(x...); }); }
void BM_binary32_mul_model(benchmark::State& s) { run_model(s, binary32, [](auto&... x) { return mul(x...); }); }
void BM_binary32_add_host(benchmark::State& s) { run_host<float>(s, binary32, [](auto x, auto y) { return x + y; }); }
void BM_binary32_mul_host(benchmark::State& s) { run_host<float>(s, binary32, [](auto x, auto y) { return x * y; }); }

BENCHMARK(BM_binary16_add_model);
BENCHMARK(BM_binary16_add_host);
BENCHMARK(BM_binary16_mul_model);
BENCHMARK(BM_binary16_mul_host);
BENCHMARK(BM_binary32_add_model);
BENCHMARK(BM_binary32_add_host);
BENCHMARK(BM_binary32_mul_model);
BENCHMARK(BM_binary32_mul_host);

}  // namespace
