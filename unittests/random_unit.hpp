// Random scalar units for the blind tests: the parameter ranges of issue 4 (guard bits 0 to 3,
// chop or any rounding mode of the model for the adder and the multiplier, truncated multiplier
// columns and constants, fused or unfused MAD, flushing on input, output or transfer, NaNs quieted
// on transfer or not, an fma returning the product for a zero addend or not, and NaN arithmetic:
// which operand's NaN, quieted or not, a - NaN's sign, the fma's own order of NaN operands, the
// default NaN), and, with random_unit_with_registers, wider registers and per-operation flushing.
#pragma once

#include <random>
#include <vector>

#include "model/scalar_unit.hpp"

namespace gp::testing {

// Guard bits 0..3 with a sticky bit only below 2 (a sticky adder with 2 guard bits is correctly
// rounded, an equivalence the probes report as such); the adder and the multiplier chopped or
// rounded in any mode of the model; the multiplier truncated at 3..p-4 columns with a constant
// below one ulp when chopping, half an ulp when rounding to nearest, none in the other directed
// modes, so that products of powers of two stay exact, as the subnormal probes' cases need.
inline model::ScalarUnit random_unit(std::mt19937_64& rng, const model::Format& f) {
  const auto rounding = [&rng](int chop_one_in) {
    return rng() % std::uint64_t(chop_one_in) == 0
               ? model::UnitRounding::chopped()
               : model::UnitRounding::ieee(model::all_roundings[rng() % std::size(model::all_roundings)]);
  };
  const int p = f.precision();
  model::ScalarUnit u = model::ieee_unit(f);
  u.name = "blind";
  const model::UnitRounding r = rounding(2);
  const int g = int(rng() % 4);
  u.add = {r, g, g < 2 ? bool(rng() % 2) : false};
  const model::UnitRounding rm = rounding(2);
  const int t = 3 + int(rng() % std::uint64_t(p - 6));
  const bool nearest = model::name(rm.effective()).starts_with("rn");
  const std::uint64_t bound = rm.effective() == model::Rounding::rz ? std::uint64_t{1} << t
                              : nearest                             ? std::uint64_t{1} << (t - 1)
                                                                    : 1;
  u.mul = {rm, t, rng() % bound};
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

// A random unit (random_unit) that may also compute a binary16 format in binary32 registers (one
// in three, stores rounded in any mode) and flush subnormals in its adder, multiplier or fma apart
// from the unit's policy (one in four).
inline model::ScalarUnit random_unit_with_registers(std::mt19937_64& rng, const model::Format& f) {
  model::ScalarUnit u = random_unit(rng, f);
  if (&f == &model::binary16 && rng() % 3 == 0) {
    // The binary32 registers' unit: its multiplier truncated as binary32's would be.
    const model::ScalarUnit wide = random_unit(rng, model::binary32);
    u.format = &model::binary32;
    u.storage = &model::binary16;
    u.add = wide.add;
    u.mul = wide.mul;
    u.convert = model::UnitRounding::ieee(model::all_roundings[rng() % std::size(model::all_roundings)]);
  }
  if (rng() % 4 == 0) {
    const model::FlushOp ops[] = {model::FlushOp::add, model::FlushOp::mul, model::FlushOp::fma};
    u.op_flush[std::size_t(ops[rng() % 3])] = model::OpFlush{bool(rng() % 2), bool(rng() % 2)};
  }
  return u;
}

// The units of a virtual device around a hidden unit: its registers' format computes in the same
// unit (registers wider than the storage), else in binary32's IEEE unit beside a narrower format.
inline std::vector<model::ScalarUnit> device_units(const model::ScalarUnit& hidden) {
  std::vector<model::ScalarUnit> units = {hidden};
  if (&hidden.storage_format() != hidden.format) {
    model::ScalarUnit registers = hidden;
    registers.storage = nullptr;
    units.insert(units.begin(), registers);
  } else if (hidden.format != &model::binary32) {
    units.insert(units.begin(), model::ieee_unit(model::binary32));
  }
  return units;
}

}  // namespace gp::testing
