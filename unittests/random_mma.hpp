// Random MMA parameter sets for the blind tests: formats, K, the nine algorithms (the tree family
// apart), F, block, group, all eleven rounding modes, output bits, floors, NaN encoding and
// FDRDA's rounding down, drawn as DotConfigs that pass model::check.
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <random>
#include <string>

#include "backends/device.hpp"
#include "model/mma_algorithms.hpp"
#include "backends/reference/profile.hpp"
#include "backends/reference/reference_backend.hpp"

namespace gp::testing {

using model::DotConfig;
using model::MmaAlgorithm;

struct Drawn {
  backends::MmaConfig mc;
  DotConfig cfg;
  std::string label;
};

inline Drawn draw(std::mt19937_64& rng, int index) {
  using model::Format;
  const auto pick = [&](auto&& list) { return list[rng() % std::size(list)]; };
  static const Format* const narrow[] = {&model::binary16, &model::bfloat16, &model::tf32, &model::e4m3, &model::e5m2};
  static const Format* const outs[] = {&model::binary32, &model::binary16};
  static const int Ks[] = {4, 8, 16, 32};
  for (;;) {
    const Format* a = pick(narrow);
    const Format* b =
        (a == &model::e4m3 || a == &model::e5m2) && rng() % 2 ? pick(std::array{&model::e4m3, &model::e5m2}) : a;
    const Format* d = pick(outs);
    const Format* c = d == &model::binary32 && a == &model::binary16 && rng() % 4 == 0 ? &model::binary16 : d;
    const int K = pick(Ks);
    static const MmaAlgorithm algs[] = {MmaAlgorithm::fda,    MmaAlgorithm::fda,  MmaAlgorithm::fda,
                                        MmaAlgorithm::gps,    MmaAlgorithm::sfma, MmaAlgorithm::fdrda,
                                        MmaAlgorithm::gfdrda, MmaAlgorithm::gdfs};
    const MmaAlgorithm alg = pick(algs);
    DotConfig cfg;
    if (alg == MmaAlgorithm::gdfs) {
      const Format* f4 = pick(std::array{&model::e2m1, &model::e2m3, &model::e3m2});
      cfg = model::default_dot_config(alg, *f4, *f4, model::binary32, model::binary32, K);
      cfg.group = pick(std::array{4, 8, 16});
      cfg.F = 20 + int(rng() % 21);
    } else {
      cfg = model::default_dot_config(alg, *a, *b, *c, *d, K);
      if (alg == MmaAlgorithm::gps) cfg.group = pick(std::array{1, 2, 4, 8});
      if (alg == MmaAlgorithm::fda) cfg.F = 10 + int(rng() % 21);
      if (alg == MmaAlgorithm::fdrda || alg == MmaAlgorithm::gfdrda) {
        cfg.F = 14 + int(rng() % 18);
        cfg.round_down_alignment = rng() % 2;
      }
      if (model::is_fused(alg)) {
        const int blocks[] = {K, K, K / 2, K / 4};
        cfg.block = std::max(1, pick(blocks));
        if (alg == MmaAlgorithm::gfdrda && rng() % 2) cfg.block = std::min(K, 16);
      }
    }
    if (model::is_fused(alg)) {
      cfg.out_rounding = pick(model::all_roundings);
      cfg.out_fraction_bits = rng() % 3 == 0 ? cfg.d->man_bits - int(rng() % 11) : cfg.d->man_bits;
      cfg.align_floor = rng() % 2 ? model::kNoAlignFloor : cfg.d->emin() - int(rng() % 12);
      cfg.nan = rng() % 2 ? model::MmaNan::nvidia : model::MmaNan::format;
    }
    if (!model::check(cfg).empty()) continue;
    const int m = pick(std::array{8, 16}), n = 8;
    backends::MmaConfig mc{m, n, K, cfg.a, cfg.b, cfg.c, cfg.d, "subgroup", fmt::format("random:{}", index)};
    const std::string label = fmt::format("random {}: {} {} K={} {}", index, backends::algorithm_name(cfg, K),
                                          backends::parameters_json(cfg, K).dump(), K, mc.name());
    return {mc, cfg, label};
  }
}

// The hidden unit as a virtual device: a profile of its one configuration.
inline backends::ReferenceDevice device_of(const Drawn& x, int index) {
  backends::Profile p;
  p.name = fmt::format("random-{}", index);
  p.device_name = x.label;
  p.vendor = "test";
  p.mma = {x.mc};
  return backends::ReferenceDevice(p, {{x.mc.instruction, x.cfg}});
}

}  // namespace gp::testing
