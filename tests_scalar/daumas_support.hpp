// What the probes of Daumas et al. and the special-value probes share: expressions of one or two
// operations, the same steps stored to memory one at a time (what registers of the storage format
// give, taken from the device itself), the candidate adders, multipliers and fused units, and
// verdict helpers.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "model/scalar_unit.hpp"
#include "model/wide.hpp"
#include "tests_scalar/probe_support.hpp"

namespace gp::scalar {

// An expression of the single operation `op` (unary, binary or ternary) in f.
Expr single(Node op, const Format& f);

// op2(op1(in0, in1), in2) in f: two operations with the intermediate kept in a register.
Expr compound(Node op1, Node op2, const Format& f);
// The same two steps as two expressions, the intermediate stored to memory in f and loaded again:
// what the compound gives if registers hold exactly the storage format.
Expected<std::vector<std::uint64_t>> stepwise(backends::Device& device, const Format& f, Node op1, Node op2,
                                              const std::vector<Case>& cases);

// Adders of model/scalar_unit.hpp as hypotheses. The name, as in Paranoia's voice:
// "chopped, 2 guard bits, no sticky bit", "correctly rounded (rne)".
std::string describe_adder(const model::AdderParams& a);
// Every adder with 0..gmax guard bits, with and without sticky bit, under chop and every mode, and
// the correctly rounded adder in every mode; the references first (correctly rounded rne, then
// chopped with 2, 1, 0 guard bits and no sticky bit).
std::vector<model::AdderParams> adder_hypotheses(int gmax);
// Starting points for probes whose expressions add and multiply: the candidate units of the adder
// probe (scalar.add.guard_bits, registers of f and wider) that reproduce the device's additions,
// one per answer and rounding (they add alike; a fused operation rounds with the adder's mode);
// the multipliers of f that reproduce its products (the identification of
// scalar.mul.truncated_columns, the constants of an interval at its ends).
// The question of scalar.add.guard_bits (tests_scalar/adder.cpp): the adder of f that computes the
// same sums of values of f as the unit, or its wider registers' adder where none does.
const UnitQuestion& adder_question();
// Its answer: that adder, the registers' format where it is theirs, and with no guard bit the
// roundings that add alike (rounding_class, the adder's first), else none.
struct AdderAnswer {
  model::AdderParams adder;
  const Format* registers = nullptr;
  std::vector<std::string> equivalent_roundings;
};
nlohmann::json answer_fields(const AdderAnswer& a);
std::string say_adder(const AdderAnswer& a);
// The answer of the multiplier probes (tests_scalar/multiplier.cpp): the multiplier of f that
// computes the same products as the unit, or its wider registers' multiplier where none does, and
// with one column kept the roundings that multiply alike (rounding_class), else none.
// scalar.mul.correction asks its constant too (`with_correction`: the fields hold `correction`),
// scalar.mul.truncated_columns does not (multipliers that differ only there answer alike).
struct MultiplierAnswer {
  model::MultiplierParams mul;
  const Format* registers = nullptr;
  std::vector<std::string> equivalent_roundings;
  bool with_correction = false;
};
nlohmann::json answer_fields(const MultiplierAnswer& a);
// The answer of scalar.mul.truncated_columns.
MultiplierAnswer truncation_answer(const model::ScalarUnit& u);
Expected<std::vector<model::ScalarUnit>> reproducing_adders(backends::Device& device, const Format& f,
                                                            const audit::ProbeContext& ctx);
Expected<std::vector<model::MultiplierParams>> reproducing_multipliers(backends::Device& device, const Format& f,
                                                                       const audit::ProbeContext& ctx);
// The candidates of the fusion probes: each reproducing adder's unit with a fused MAD, and unfused
// with each reproducing multiplier (a unit of wider registers: its exact product, rounded to nearest
// or chopped); each with fma() fused or not.
Expected<std::vector<model::ScalarUnit>> fusion_candidates(backends::Device& device, const Format& f,
                                                           const audit::ProbeContext& ctx);

// The candidates of the division probe: every method and rounding, with each multiplier that
// reproduces the device's products (in f, or in the wider registers' format).
Expected<std::vector<model::ScalarUnit>> division_candidates(backends::Device& device, const Format& f,
                                                             const audit::ProbeContext& ctx);

// The fusion probes' answer for a unit whose a*b+c (fma() or MAD) is `fused` or not: whether it
// is, with the registers' format for a unit of wider registers, unless those compute the function
// of a fused operation of f: registers of at least 2p bits hold the exact product, a correctly
// rounded register adder then rounds the exact a*b+c once, and that rounding followed by the
// store's is the store's alone when the adder rounds to odd (Boldo and Melquiond: p' >= p + 2) or
// in the store's directed mode.
struct FusionAnswer {
  bool fused = false;
  const Format* registers = nullptr;
};
nlohmann::json answer_fields(const FusionAnswer& a);
FusionAnswer fusion_answer(const model::ScalarUnit& u, bool fused);
// " (in binary32 registers)" for an answer of wider registers, else "".
std::string in_registers(const Format* registers);

// a*b+c cases whose exact value lies just off a tie of f, by less than half an ulp of any format
// of at least 2p + 2 bits: a = A 2^(1-2p), b = B 2^(1-p) with A = 2^(p-1) + k + 1, B = 2^(p-1) - k
// (A B just above 2^(2p-2)), c = 1; and one just below a tie whose even neighbour is above; both
// mirrored. Rounded once to f they leave the tie; rounded first in wider registers they land on
// it and go to even: fused in f, or computed in wider registers.
std::vector<Case> double_rounding_cases(const Format& f);

// The most guard bits an adder candidate of f keeps: up to 2p + 4, since a unit computing in
// registers of up to twice the precision, with their own guard bits, then rounding to f, looks like
// an adder of f with that many (chopping twice is chopping once).
int max_guard(const Format& f);
// The scale 2^k at which 1.5 * 2^k and 2^(k - imax) are normal, imax = p + max_guard + 2 where the
// range allows (past the bits every candidate keeps: each adder then differs from the exact one on
// some case; the paper went to p + 40): the adder sequences 1.5 - 2^-i run for i = 1 .. imax,
// times 2^k.
struct AdderScale {
  int k, imax;
};
AdderScale adder_scale(const Format& f);
// " (times 2^k)" for notes, empty for k = 0.
std::string times(int k);

// "3*2^-1", "2^-26", "-MAX", "qNaN(7fc00001)": values in the notes of observations.
std::string show(const Format& f, std::uint64_t bits);
std::string hex(const Format& f, std::uint64_t bits);

// The exact value of bits of f (model::unpack without flushing).
model::Unpacked decode(const Format& f, std::uint64_t bits);

// Random finite normal values of f whose exponents lie in [lo, hi], full random significands.
std::uint64_t random_normal(const Format& f, std::uint64_t r_sig, std::uint64_t r_exp, bool neg, int lo, int hi);

// The formats a conversion probe pairs f with: a wider format the device also computes in.
const Format* wider_on(const backends::Device& device, const Format& f);

// Whether every consistent hypothesis name maps to the same value: the value, else nullopt.
template <class T, class F>
std::optional<T> agreed(const std::vector<std::string>& consistent, F value_of) {
  std::optional<T> v;
  for (const std::string& h : consistent) {
    const T x = value_of(h);
    if (v && !(*v == x)) return std::nullopt;
    v = x;
  }
  return v;
}

}  // namespace gp::scalar
