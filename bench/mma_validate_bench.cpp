// Random validation speed (issue 7): 10^6 random 16x16x16 binary16 tiles (binary32 c and d)
// validated against the reference backend in under 60 s on 2 cores. The device is a reference
// device computing FDA(F = 25, one block of 16, RZ) -- Hopper's HMMA.16816.F32 datapath -- on a
// 16x16x16 tile; mma::validate draws the tiles (half random bit patterns, half random normal
// values), runs them on the device and checks every element against the model on a second
// thread. Arg: tiles (10^4 for a quick look, 10^6 for the claim).
#include <benchmark/benchmark.h>

#include "backends/reference/reference_backend.hpp"
#include "model/mma_instructions.hpp"
#include "tests_mma/identify/validate.hpp"

namespace {

using namespace gp;

void BM_validate_16x16x16_binary16(benchmark::State& state, const char* instruction) {
  const model::DotConfig cfg = model::find_mma_instruction(instruction)->config;
  backends::MmaConfig mc{16, 16, 16, cfg.a, cfg.b, cfg.c, cfg.d, "subgroup", "bench:16x16x16"};
  backends::Profile p;
  p.name = "bench";
  p.device_name = "16x16x16 binary16 reference";
  p.mma = {mc};
  backends::ReferenceDevice dev(p, {{mc.instruction, cfg}});
  const auto tiles = std::uint64_t(state.range(0));
  std::uint64_t mismatches = 0;
  for (auto _ : state) {
    auto v = mma::validate(dev, mc, cfg, tiles, 1);
    if (!v)
      state.SkipWithError(v.error().message.c_str());
    else
      mismatches += v->mismatches;
  }
  state.counters["tiles_per_s"] =
      benchmark::Counter(double(tiles) * double(state.iterations()), benchmark::Counter::kIsRate);
  state.counters["dots_per_s"] =
      benchmark::Counter(double(tiles) * 256 * double(state.iterations()), benchmark::Counter::kIsRate);
  state.counters["mismatches"] = double(mismatches);
}

BENCHMARK_CAPTURE(BM_validate_16x16x16_binary16, fp32_out, "hopper:HMMA.16816.F32")
    ->Arg(10000)
    ->Arg(1000000)
    ->Iterations(1)
    ->UseRealTime()
    ->Unit(benchmark::kSecond);
BENCHMARK_CAPTURE(BM_validate_16x16x16_binary16, fp16_out, "hopper:HMMA.16816.F16")
    ->Arg(10000)
    ->Iterations(1)
    ->UseRealTime()
    ->Unit(benchmark::kSecond);

}  // namespace
