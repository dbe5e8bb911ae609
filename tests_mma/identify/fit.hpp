// The search behind `gpuparanoia fit` and the Python module's `fit`: the candidates of the
// identification (candidates.hpp, the same space `run` searches, less the shape only a device's
// summation-tree probe can measure) that reproduce captured dot products, grouped into classes by
// their outputs on random inputs drawn to separate them; where none does, the closest. Typed
// throughout: the command line and the module render it.
#pragma once

#include "tests_mma/identify/candidates.hpp"

namespace gp::mma {

struct FitResult {
  std::vector<DotConfig> survivors;            // ranked (rank_less); those exact on NaN payloads where any is
  std::vector<DotCase> inputs;                 // the random inputs that class them
  Classes classes;                             // of the survivors on `inputs`; splitting: up to `discriminate` inputs
  std::vector<Near> closest;                   // none survives and the search ran whole: the 5 closest
  std::uint64_t checked = 0;                   // candidates evaluated
  bool out_of_time = false, too_many = false;  // a bound cut the search short (Bounds)
  bool complete() const { return !out_of_time && !too_many; }
};

// Survivors kept and classed at most: a few lines leave millions of candidates, and each is
// evaluated on every separating input.
inline constexpr std::size_t kMaxFitSurvivors = 20000;

// Fits the pool (lines of the configuration's K; scale factors as the pool has them). `bounds`:
// a deadline and threads; its max_survivors is kMaxFitSurvivors.
FitResult fit(const MmaConfig& cfg, const Pool& pool, Bounds bounds, std::size_t discriminate = 0);

}  // namespace gp::mma
