#include "tests_mma/identify/fit.hpp"

namespace gp::mma {

FitResult fit(const MmaConfig& cfg, const Pool& pool, Bounds bounds, std::size_t discriminate) {
  FitResult r;
  bounds.max_survivors = kMaxFitSurvivors;
  Space space = full_space(cfg);
  space.scale = pool.scale;
  space.scale_block = pool.scale_block;
  r.survivors = survivors_of(cfg, space, pool, r.checked, &bounds);
  r.out_of_time = bounds.out_of_time;
  r.too_many = bounds.too_many;
  if (!r.too_many) expand(cfg, pool, r.survivors, r.checked);
  keep_nan_exact(cfg, pool, r.survivors);
  std::sort(r.survivors.begin(), r.survivors.end(),
            [&](const DotConfig& x, const DotConfig& y) { return rank_less(cfg, x, y); });
  if (!r.survivors.empty()) {
    // Classes: the survivors' outputs on random inputs of every generator (they agree on the lines).
    RandomInputs gen(cfg, 0xF17u + pool.size());
    r.inputs = draw_inputs(gen, cfg.k, 400, "separating input", every_gen);
    for (DotCase& x : r.inputs) gen.draw_scales(pool.scale, pool.S, x);
    r.classes = behaviour_classes(r.survivors, r.inputs, discriminate, discriminate, bounds.threads);
  } else if (r.complete()) {
    r.closest = closest_candidates(cfg, space, pool, 5, bounds.threads);
  }
  return r;
}

}  // namespace gp::mma
