// What the probes of Daumas et al. and the special-value probes share: the model's evaluation of a
// whole expression under a stated policy (the prediction of an "IEEE unit with these options"
// hypothesis), predictions taken from the device itself (the same steps stored to memory one at a
// time), exact rounding of wide significands to a chosen precision, and verdict helpers.
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

// An IEEE unit with options: the model's correctly rounded operations, plus what happens on load
// and store. It predicts every node of an Expr (neg flips the sign, mad is fused or not).
struct ModelPolicy {
  model::Options o;                 // rounding, ftz_in, ftz_out, saturate, canonical_nan
  bool flush_load = false;          // subnormal operands read from memory as zeros (sign kept)
  bool flush_store = false;         // subnormal results written to memory as zeros (sign kept)
  bool quiet_load = false;          // signalling NaNs quieted when read from memory
  bool fused_mad = false;           // mad as one rounding (an fma) or as a rounded product then a sum
};

// The model's output bits for one operand tuple of `expr` under `p`.
std::uint64_t model_eval(const Expr& expr, std::span<const std::uint64_t> operands, const ModelPolicy& p);
// The prediction function of a hypothesis "IEEE unit with policy p" for the cases of `expr`.
std::function<std::uint64_t(const Case&)> model_predictor(const Expr& expr, const ModelPolicy& p);

// Index of a case in its table (hypotheses whose predictions were measured keep them by index).
inline std::size_t index_of(const std::vector<Case>& cases, const Case& c) { return std::size_t(&c - cases.data()); }

// A hypothesis whose predictions are given case by case (taken from the device or computed ahead).
Hypothesis tabled(std::string name, const std::vector<Case>& cases, std::vector<std::uint64_t> predictions);

// An expression of the single operation `op` (unary, binary or ternary) in f.
Expr single(Node op, const Format& f);

// op2(op1(in0, in1), in2) in f: two operations with the intermediate kept in a register.
Expr compound(Node op1, Node op2, const Format& f);
// The same two steps as two expressions, the intermediate stored to memory in f and loaded again:
// what the compound gives if registers hold exactly the storage format.
Expected<std::vector<std::uint64_t>> stepwise(backends::Device& device, const Format& f, Node op1, Node op2,
                                              const std::vector<Case>& cases);

// select() for large case tables: every case decides, but only the cases `keep` accepts (KeepFn,
// with "first" the first hypothesis) become observations.
// With more than `record_all_up_to` hypotheses, observations carry the predictions of the
// consistent hypotheses and of the first four only (the references).
Expected<Selection> select_some(backends::Device& device, const Expr& expr, const std::vector<Case>& cases,
                                const std::vector<Hypothesis>& hypotheses, audit::Finding& finding, const KeepFn& keep,
                                bool nan_equivalent = false, std::size_t record_all_up_to = 32);
// The same on outputs already taken from the device.
Selection judge(const Expr& expr, const std::vector<Case>& cases, std::vector<std::uint64_t> outputs,
                const std::vector<Hypothesis>& hypotheses, audit::Finding& finding, const KeepFn& keep,
                bool nan_equivalent = false, std::size_t record_all_up_to = 32);

// Several expressions, each with its cases (Group), judged by the same hypotheses (same names, same
// order, built per expression by a factory): the hypotheses consistent with every group.
using HypothesisFactory = std::function<std::vector<Hypothesis>(const Expr&, const std::vector<Case>&)>;
struct Battery {
  std::vector<std::string> consistent;
  std::vector<std::vector<std::uint64_t>> outputs;  // per group
};
Expected<Battery> select_all(backends::Device& device, const std::vector<Group>& groups, const HypothesisFactory& make,
                             audit::Finding& finding, bool nan_equivalent = false);
// The notes of the cases whose output differs from `reference` (a hypothesis name of the factory),
// as "note = output (reference: prediction)", at most `limit` of them.
std::vector<std::string> deviations(const std::vector<Group>& groups, const Battery& b, const HypothesisFactory& make,
                                    const std::string& reference, bool nan_equivalent,
                                    std::size_t limit = 6);

// Rounds the exact magnitude sig * 2^exp to q significant bits with rne or rz (the other modes are
// not needed); returns the kept significand (at most q bits) and its exponent. sig is nonzero.
struct Wide {
  model::u128 sig;
  int exp;
};
Wide round_to_bits(model::u128 sig, int exp, int q, model::Rounding r);
// A wide exact value with sign, packed into f with rounding r (exact when it fits).
std::uint64_t pack_wide(const Format& f, model::Rounding r, bool neg, Wide w);

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
Expected<std::vector<model::ScalarUnit>> reproducing_adders(backends::Device& device, const Format& f,
                                                            const audit::ProbeContext& ctx);
Expected<std::vector<model::MultiplierParams>> reproducing_multipliers(backends::Device& device, const Format& f,
                                                                       const audit::ProbeContext& ctx);
// The candidates of the fusion probes: each reproducing adder's unit with a fused MAD, and unfused
// with each reproducing multiplier (a unit of wider registers: its exact product, rounded to nearest
// or chopped); each with fma() fused or not.
Expected<std::vector<model::ScalarUnit>> fusion_candidates(backends::Device& device, const Format& f,
                                                           const audit::ProbeContext& ctx);

// The fusion probes' answer for a unit whose a*b+c (fma() or MAD) is `fused` or not: {"fused"},
// with the registers' format for a unit of wider registers, unless those compute the function of
// a fused operation of f: registers of at least 2p bits hold the exact product, a correctly
// rounded register adder then rounds the exact a*b+c once, and that rounding followed by the
// store's is the store's alone when the adder rounds to odd (Boldo and Melquiond: p' >= p + 2) or
// in the store's directed mode.
nlohmann::json fusion_answer(const model::ScalarUnit& u, bool fused);

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
