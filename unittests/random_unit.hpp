// Random scalar units for the blind tests: the parameter ranges of issue 4 (guard bits 0 to 3,
// chop or a rounding mode, truncated multiplier columns and constants, fused or unfused MAD,
// flushing on input, output or transfer, NaNs quieted on transfer or not, an fma returning the
// product for a zero addend or not, and NaN arithmetic: which
// operand's NaN, quieted or not, a - NaN's sign, the fma's own order of NaN operands, the default NaN).
#pragma once

#include <random>

#include "model/scalar_unit.hpp"

namespace gp::testing {

// Guard bits 0..3 with a sticky bit only below 2 (a sticky adder with 2 guard bits is correctly
// rounded, an equivalence the probes report as such); the multiplier chopped or rounded to nearest,
// truncated at 3..p-4 columns with a constant below one ulp (half an ulp when rounding), so that
// products of powers of two stay exact, as the subnormal probes' cases need.
inline model::ScalarUnit random_unit(std::mt19937_64& rng, const model::Format& f) {
  const model::Rounding modes[] = {model::Rounding::rne, model::Rounding::rna, model::Rounding::ru,
                                   model::Rounding::rd, model::Rounding::ra};
  const int p = f.precision();
  model::ScalarUnit u = model::ieee_unit(f);
  u.name = "blind";
  const model::UnitRounding r =
      rng() % 2 ? model::UnitRounding::chopped() : model::UnitRounding::ieee(modes[rng() % 5]);
  const int g = int(rng() % 4);
  u.add = {r, g, g < 2 ? bool(rng() % 2) : false};
  const model::UnitRounding rm =
      rng() % 2 ? model::UnitRounding::chopped() : model::UnitRounding::ieee(model::Rounding::rne);
  const int t = 3 + int(rng() % std::uint64_t(p - 6));
  u.mul = {rm, t, rng() % (std::uint64_t{1} << (rm.chop ? t : t - 1))};
  u.subnormals.flush_input = rng() % 2;
  u.subnormals.flush_output = rng() % 2;
  u.subnormals.flush_transfer = rng() % 4 == 0;
  u.nan.quiet_on_transfer = rng() % 2;
  u.mad_fused = rng() % 2;
  // One unit in four returns the product for a zero addend, as libclc's software fma.
  u.fma_zero_addend = rng() % 4 == 0 ? model::ZeroAddend::product : model::ZeroAddend::ieee;
  // NaN arithmetic: half the units the IEEE unit's, the others any policy of the model.
  if (rng() % 2) {
    u.nan.propagation = model::NanPropagation(rng() % 3);
    u.nan.quiet = rng() % 2;
    u.nan.sub_flips = rng() % 2;
    u.nan.default_nan = model::all_default_nans[rng() % std::size(model::all_default_nans)];
    u.nan.canonical = rng() % 4 == 0;
    // Half of those an fma with an order of its own (rusticl's b, a, c), the rule's own included.
    if (rng() % 2) u.nan.fma_order = model::all_fma_nan_orders[rng() % std::size(model::all_fma_nan_orders)];
  }
  return u;
}

}  // namespace gp::testing
