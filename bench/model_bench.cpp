// Speed of the scalar model beside the host FPU on the same data, in one run.
// The targets: binary16 add and mul at most 2.5 ns per op (all 2^32 pairs in under 10 s
// per core); binary32 add and mul within 5x of the host loop.
//
// Two data sets: "sweep" is the order of an exhaustive run (a fixed, b stepping through every sign
// and exponent, specials included: all 2^16 binary16 patterns, binary32's i * 0x10001); "random" is
// uniform random finite bit patterns, whose unpredictable exponents and signs cost the model
// branch mispredictions the sweep does not have. "_model" cases call add() or mul() per pair,
// "_batch" cases the batched evaluate() (counter x_host: its time over the host loop's), and
// "_exhaustive" cases run all 2^32 binary16 pairs through evaluate(), per call and batched.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <bit>
#include <chrono>
#include <random>
#include <vector>

#include "model/ops.hpp"

namespace {

using namespace gp::model;

constexpr std::size_t kN = 1 << 16;

struct Data {
  std::vector<std::uint64_t> a, b;
};

Data sweep(const Format& f) {
  const bool half = &f == &binary16;
  Data d{std::vector<std::uint64_t>(kN), std::vector<std::uint64_t>(kN)};
  for (std::size_t i = 0; i < kN; ++i) {
    // A few fixed a near 1/3, as an exhaustive run's inner loop sees them.
    d.a[i] = (half ? 0x3555 : 0x3eaaaaab) + (i >> 14);
    d.b[i] = half ? i : i * 0x10001;
  }
  return d;
}

Data random_finite(const Format& f) {
  std::mt19937_64 rng(1);
  Data d{std::vector<std::uint64_t>(kN), std::vector<std::uint64_t>(kN)};
  for (auto* v : {&d.a, &d.b})
    for (auto& x : *v) {
      do x = rng() & f.storage_mask();
      while (classify(f, x) == Class::infinite || is_nan(classify(f, x)));
    }
  return d;
}

template <class Fn>
void run_model(benchmark::State& state, const Format& f, const Data& d, Fn fn) {
  const Options o;
  const std::uint64_t *a = d.a.data(), *b = d.b.data();
  for (auto _ : state) {
    std::uint64_t acc = 0;
    for (std::size_t i = 0; i < kN; ++i) acc += fn(f, o, a[i], b[i]).bits;
    benchmark::DoNotOptimize(acc);
  }
  state.SetItemsProcessed(std::int64_t(state.iterations() * kN));
}

// Every pair of binary16 operands (2^32) on one thread, a batch of 2^16 pairs per a, through
// evaluate() with the format known at run time: per call, or batched.
void run_exhaustive(benchmark::State& state, Op op, bool batched) {
  const Format& f = binary16;
  std::vector<std::uint64_t> operands(2 * kN);
  std::vector<Result> out(kN);
  for (auto _ : state) {
    std::uint64_t acc = 0;
    for (std::uint64_t a = 0; a < kN; ++a) {
      for (std::size_t b = 0; b < kN; ++b) {
        operands[2 * b] = a;
        operands[2 * b + 1] = b;
      }
      if (batched) {
        evaluate(op, f, Options{}, operands, out, f);
        acc += out[a].bits;
      } else {
        for (std::size_t i = 0; i < kN; ++i) acc += evaluate(op, f, Options{}, std::span(&operands[2 * i], 2), f).bits;
      }
    }
    benchmark::DoNotOptimize(acc);
  }
  state.SetItemsProcessed(std::int64_t(state.iterations() * kN * kN));
}

constexpr auto model_add = [](auto&... x) { return add(x...); };
constexpr auto model_mul = [](auto&... x) { return mul(x...); };
constexpr auto host_add = [](auto x, auto y) { return x + y; };
constexpr auto host_mul = [](auto x, auto y) { return x * y; };

// The host's own arithmetic on the same operands, one scalar op at a time as the model works (the
// vectorised loop, 16 to 32 lanes wide, would measure the SIMD width rather than the arithmetic).
// The results lie half a page from the operands: a store 4 KiB-aliasing the next loads, as
// separate allocations may place them, halved the binary32 loop's speed in some builds. The loop
// is aligned to 64 bytes: at one placement (16 bytes past a 64-byte boundary) the binary32 add
// loop ran at 0.55 ns per op instead of 0.31.
template <class T>
struct HostOperands {
  using U = std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint16_t>;
  std::vector<T> buffer = std::vector<T>(3 * kN + 2048 / sizeof(T));
  T *x = buffer.data(), *y = x + kN, *r = y + kN + 2048 / sizeof(T);
  explicit HostOperands(const Data& d) {
    for (std::size_t i = 0; i < kN; ++i) {
      x[i] = std::bit_cast<T>(U(d.a[i]));
      y[i] = std::bit_cast<T>(U(d.b[i]));
    }
  }
};
template <class T, class Fn>
[[gnu::optimize("no-tree-vectorize", "align-loops=64")]] void host_pass(const HostOperands<T>& h, Fn fn) {
  const T *x = h.x, *y = h.y;
  T* r = h.r;
  for (std::size_t i = 0; i < kN; ++i) r[i] = fn(x[i], y[i]);
  benchmark::DoNotOptimize(r);
  benchmark::ClobberMemory();
}

template <class T, class Fn>
void run_host(benchmark::State& state, const Data& d, Fn fn) {
  const HostOperands<T> h(d);
  for (auto _ : state) host_pass(h, fn);
  state.SetItemsProcessed(std::int64_t(state.iterations() * kN));
}

// The same through the batched evaluate(), the format and options dispatched once per batch (as
// the exhaustive probe and `model scalar` use the model). Counter x_host: the model's time over
// the host loop's (run_host) on the same operands in this run, the best pass of each (a pass is
// all kN pairs; a host pass after each model pass, outside the timing).
template <class T>
void run_model_batch(benchmark::State& state, Op op, const Format& f, const Data& d) {
  using Clock = std::chrono::steady_clock;
  std::vector<std::uint64_t> operands(2 * kN);
  for (std::size_t i = 0; i < kN; ++i) {
    operands[2 * i] = d.a[i];
    operands[2 * i + 1] = d.b[i];
  }
  std::vector<Result> out(kN);
  const HostOperands<T> h(d);
  Clock::duration model = Clock::duration::max(), host = model;
  for (auto _ : state) {
    auto start = Clock::now();
    evaluate(op, f, Options{}, operands, out, f);
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
    model = std::min(model, Clock::now() - start);
    state.PauseTiming();
    start = Clock::now();
    op == Op::mul ? host_pass(h, host_mul) : host_pass(h, host_add);
    host = std::min(host, Clock::now() - start);
    state.ResumeTiming();
  }
  state.counters["x_host"] = double(model.count()) / double(host.count());
  state.SetItemsProcessed(std::int64_t(state.iterations() * kN));
}

const Data& binary16_sweep() {
  static const Data d = sweep(binary16);
  return d;
}
const Data& binary32_sweep() {
  static const Data d = sweep(binary32);
  return d;
}
const Data& binary16_random() {
  static const Data d = random_finite(binary16);
  return d;
}
const Data& binary32_random() {
  static const Data d = random_finite(binary32);
  return d;
}

void BM_binary16_add_sweep_model(benchmark::State& s) { run_model(s, binary16, binary16_sweep(), model_add); }
void BM_binary16_add_sweep_host(benchmark::State& s) { run_host<_Float16>(s, binary16_sweep(), host_add); }
void BM_binary16_mul_sweep_model(benchmark::State& s) { run_model(s, binary16, binary16_sweep(), model_mul); }
void BM_binary16_mul_sweep_host(benchmark::State& s) { run_host<_Float16>(s, binary16_sweep(), host_mul); }
void BM_binary16_add_random_model(benchmark::State& s) { run_model(s, binary16, binary16_random(), model_add); }
void BM_binary16_add_random_host(benchmark::State& s) { run_host<_Float16>(s, binary16_random(), host_add); }
void BM_binary16_mul_random_model(benchmark::State& s) { run_model(s, binary16, binary16_random(), model_mul); }
void BM_binary16_mul_random_host(benchmark::State& s) { run_host<_Float16>(s, binary16_random(), host_mul); }
void BM_binary32_add_sweep_model(benchmark::State& s) { run_model(s, binary32, binary32_sweep(), model_add); }
void BM_binary32_add_sweep_host(benchmark::State& s) { run_host<float>(s, binary32_sweep(), host_add); }
void BM_binary32_mul_sweep_model(benchmark::State& s) { run_model(s, binary32, binary32_sweep(), model_mul); }
void BM_binary32_mul_sweep_host(benchmark::State& s) { run_host<float>(s, binary32_sweep(), host_mul); }
void BM_binary32_add_random_model(benchmark::State& s) { run_model(s, binary32, binary32_random(), model_add); }
void BM_binary32_add_random_host(benchmark::State& s) { run_host<float>(s, binary32_random(), host_add); }
void BM_binary32_mul_random_model(benchmark::State& s) { run_model(s, binary32, binary32_random(), model_mul); }
void BM_binary32_mul_random_host(benchmark::State& s) { run_host<float>(s, binary32_random(), host_mul); }

void BM_binary16_add_sweep_batch(benchmark::State& s) {
  run_model_batch<_Float16>(s, Op::add, binary16, binary16_sweep());
}
void BM_binary16_mul_sweep_batch(benchmark::State& s) {
  run_model_batch<_Float16>(s, Op::mul, binary16, binary16_sweep());
}
void BM_binary16_add_random_batch(benchmark::State& s) {
  run_model_batch<_Float16>(s, Op::add, binary16, binary16_random());
}
void BM_binary16_mul_random_batch(benchmark::State& s) {
  run_model_batch<_Float16>(s, Op::mul, binary16, binary16_random());
}
void BM_binary32_add_sweep_batch(benchmark::State& s) {
  run_model_batch<float>(s, Op::add, binary32, binary32_sweep());
}
void BM_binary32_mul_sweep_batch(benchmark::State& s) {
  run_model_batch<float>(s, Op::mul, binary32, binary32_sweep());
}
void BM_binary32_add_random_batch(benchmark::State& s) {
  run_model_batch<float>(s, Op::add, binary32, binary32_random());
}
void BM_binary32_mul_random_batch(benchmark::State& s) {
  run_model_batch<float>(s, Op::mul, binary32, binary32_random());
}
void BM_binary16_add_exhaustive_per_call(benchmark::State& s) { run_exhaustive(s, Op::add, false); }
void BM_binary16_add_exhaustive_batch(benchmark::State& s) { run_exhaustive(s, Op::add, true); }
void BM_binary16_mul_exhaustive_per_call(benchmark::State& s) { run_exhaustive(s, Op::mul, false); }
void BM_binary16_mul_exhaustive_batch(benchmark::State& s) { run_exhaustive(s, Op::mul, true); }

BENCHMARK(BM_binary16_add_sweep_model);
BENCHMARK(BM_binary16_add_sweep_host);
BENCHMARK(BM_binary16_mul_sweep_model);
BENCHMARK(BM_binary16_mul_sweep_host);
BENCHMARK(BM_binary16_add_random_model);
BENCHMARK(BM_binary16_add_random_host);
BENCHMARK(BM_binary16_mul_random_model);
BENCHMARK(BM_binary16_mul_random_host);
BENCHMARK(BM_binary32_add_sweep_model);
BENCHMARK(BM_binary32_add_sweep_host);
BENCHMARK(BM_binary32_mul_sweep_model);
BENCHMARK(BM_binary32_mul_sweep_host);
BENCHMARK(BM_binary32_add_random_model);
BENCHMARK(BM_binary32_add_random_host);
BENCHMARK(BM_binary32_mul_random_model);
BENCHMARK(BM_binary32_mul_random_host);
BENCHMARK(BM_binary16_add_sweep_batch);
BENCHMARK(BM_binary16_mul_sweep_batch);
BENCHMARK(BM_binary16_add_random_batch);
BENCHMARK(BM_binary16_mul_random_batch);
BENCHMARK(BM_binary32_add_sweep_batch);
BENCHMARK(BM_binary32_mul_sweep_batch);
BENCHMARK(BM_binary32_add_random_batch);
BENCHMARK(BM_binary32_mul_random_batch);
// About 10 s each: a single iteration, in seconds.
BENCHMARK(BM_binary16_add_exhaustive_per_call)->Iterations(1)->Unit(benchmark::kSecond);
BENCHMARK(BM_binary16_add_exhaustive_batch)->Iterations(1)->Unit(benchmark::kSecond);
BENCHMARK(BM_binary16_mul_exhaustive_per_call)->Iterations(1)->Unit(benchmark::kSecond);
BENCHMARK(BM_binary16_mul_exhaustive_batch)->Iterations(1)->Unit(benchmark::kSecond);

}  // namespace
