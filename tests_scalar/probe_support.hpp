// What scalar probes share: building values of a format exactly, evaluating an expression on a
// device over a case table, and concluding from the candidate units that reproduce its outputs
// (audit/verdict.hpp). A candidate is a model::ScalarUnit; its prediction for a case is what the
// reference device's interpreter (backends/reference) computes on it, so a verdict is a claim about
// the model's parameters and nothing else.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "audit/probe.hpp"
#include "audit/verdict.hpp"
#include "model/scalar_unit.hpp"
#include "model/ops.hpp"

namespace gp::scalar {

using backends::Expr;
using backends::Node;
using model::Format;

// (-1)^neg * sig * 2^exp in f, rounded to nearest even if it is not exact (probes build exact values).
std::uint64_t value(const Format& f, bool neg, int exp, std::uint64_t sig);
inline std::uint64_t pow2(const Format& f, int e, bool neg = false) { return value(f, neg, e, 1); }
inline std::uint64_t one(const Format& f) { return pow2(f, 0); }
// 2^-(precision - 1): the distance from 1 to the next larger value (Paranoia's U2 is ulp(1)).
inline int ulp_exp(const Format& f) { return -f.man_bits; }
std::uint64_t negate(const Format& f, std::uint64_t x);
std::uint64_t largest(const Format& f, bool neg = false);
std::uint64_t smallest_normal(const Format& f, bool neg = false);
std::uint64_t smallest_subnormal(const Format& f, bool neg = false);

// One row of a case table: the operands and what each hypothesis predicts.
struct Case {
  std::vector<std::uint64_t> operands;
  std::string note;
};

// Evaluates `expr` on the device for every case. Errors come back as values.
Expected<std::vector<std::uint64_t>> run_cases(backends::Device& device, const Expr& expr,
                                               const std::vector<Case>& cases);

// The observation of one case: its operands, the device's output, the case's note.
audit::Observation observation(const Expr& expr, const Case& c, std::uint64_t output);

// One expression and its cases.
struct Group {
  Expr expr;
  std::vector<Case> cases;
};

// Which cases become observations, given the case index and whether the output differs from the
// first hypothesis' (or candidate's) prediction. Every case decides either way.
using KeepFn = std::function<bool(std::size_t index, bool differs_from_first)>;
// Keeps the first `head` cases and the first `odd` cases that differ from the first hypothesis.
KeepFn keep_some(std::size_t head, std::size_t odd);
KeepFn keep_all();

// The alternatives a probe's expressions exercise, for units computing in `registers`: the
// candidates are every combination of them, the other parameters those of the IEEE unit (an
// empty list keeps the IEEE value).
struct Space {
  std::vector<model::AdderParams> adders;
  std::vector<model::MultiplierParams> multipliers;
  std::vector<bool> mad_fused, fma_fused;
  std::vector<model::DivParams> divisions;
  std::vector<model::UnitRounding> sqrts;
  std::vector<model::SubnormalPolicy> subnormals;
  // Per-operation flushing (model::ScalarUnit::op_flush), after `subnormals`.
  std::vector<std::array<std::optional<model::OpFlush>, model::kFlushOps>> op_flushes;
  std::vector<model::NanPolicy> nans;
  std::vector<model::ZeroAddend> fma_zero_addends;
};
using SpaceOf = std::function<Space(const Format& registers)>;
// The candidate units of format f: registers of f first; with `stores` not empty, also registers of
// every wider format the device computes in (more exponent and fraction bits), each store to f
// rounded by each of `stores` (nvidia-g70-binary16 computes binary16 in binary32 registers).
std::vector<model::ScalarUnit> candidates(const backends::Device& device, const Format& f, const SpaceOf& space,
                                          const std::vector<model::UnitRounding>& stores = {});
// Every rounding of a unit: chop and the modes but rz (chop rounds as rz does).
std::vector<model::UnitRounding> unit_roundings();

// The default NaNs of f with distinct bits, in model::all_default_nans order.
std::vector<model::DefaultNan> default_nans(const Format& f);
// The NaN policies an operation with one NaN operand and no invalid case tells apart (x * 1,
// x + -0): the NaN quieted or kept, or the canonical NaN of each default; transfers quieting or not.
std::vector<model::NanPolicy> one_operand_nan_policies(const Format& f);
// Per-operation flushing (Space::op_flushes) of the adder and the multiplier, input and output
// each flushing or not: the 16 combinations, the other operations the unit's.
std::vector<std::array<std::optional<model::OpFlush>, model::kFlushOps>> add_and_mul_flushes();

// Each unit with each multiplier that reproduces the device's products in the unit's registers
// (reproducing_multipliers, tests_scalar/daumas_support.hpp): for probes whose expressions multiply
// by constants that a truncated multiplier's correction may alter. None when no multiplier fits.
Expected<std::vector<model::ScalarUnit>> with_reproducing_multipliers(backends::Device& device,
                                                                      const std::vector<model::ScalarUnit>& units,
                                                                      const audit::ProbeContext& ctx);

// Roundings no input tells apart give one answer: a class, stated by a representative. A rounding
// that only ever sees an exact value or a tie (no rest bit below the tie bit) rounds a tie as the
// directed mode its tie rule names: rnz as rz, rna as ra, rnu as ru, rno as ro (not rnd as rd: an
// exact zero sum is -0 rounding down only). Overflow still tells them apart but for rna and ra
// (both give infinities, as rounding the unbounded result away would), so an operation that can
// overflow with such a rounding merges only those. A question whose candidates merge this way
// answers with the directed mode and lists the class in the answer's `equivalent_roundings`
// (representative first, chop for rz where bits were dropped), which the verdict says
// (or_equivalently) and the profile fragment carries as `<op>.equivalent_roundings`; the profile's
// assembly keeps the representative, or lets a fused operation choose for the adder
// (audit/validation.cpp). Only for candidates identical on EVERY input: argue it where used.
std::optional<model::Rounding> tie_directed(model::Rounding nearest);
// The class of a directed answer ("chop", "ra", ...): its name and the nearest modes whose tie rule
// names it, only rna with `overflow` (see above); a single name when nothing merges into it.
std::vector<std::string> rounding_class(std::string_view directed, bool overflow);
// ", or equivalently rna" for a class of roundings (rounding_class: the representative first), else "".
std::string or_equivalently(const std::vector<std::string>& equivalent_roundings);

// A probe's question (audit::Question) and how a unit answers it, from its parameters alone.
struct UnitQuestion {
  audit::Question question;
  std::function<audit::Answer(const model::ScalarUnit&)> ask;  // none: does not apply to the unit
  // What a stated answer states of the unit; none: the question states nothing of the profile.
  std::function<backends::ScalarProfile(const audit::Answer&)> profile = {};
};

// What the challenge did (conclude): inputs searched and run, whether the search covered every
// input of the expressions, and whether its last round found no input that splits the survivors.
struct Challenge {
  std::size_t searched = 0, run = 0;
  bool exhaustive = false, unsplit = false;
};

// Runs every group on the device, keeps the candidates that reproduce every output bit (NaN outputs
// match any NaN with `nan_equivalent`); where their answers differ, challenges them: inputs of the
// groups' single additions, subtractions and multiplications searched to split them (1 + tiny addends, ties of products
// and sums, the subnormal and overflow boundaries, within the classes of operands and outputs the probe's cases have)
// run on the device, until one answer is left or no input splits the rest (parameters.challenge; an inconclusive
// verdict says how it was established). Then judges them (audit::judge) and applies the judgement to the finding, with
// the profile fragment of a stated answer. Observations (the cases `keep` accepts, per group) carry the predictions of
// one survivor per distinct answer, or of the closest candidates when none survives. Returns the device's outputs per
// group.
Expected<std::vector<std::vector<std::uint64_t>>> conclude(backends::Device& device, const std::vector<Group>& groups,
                                                           const std::vector<model::ScalarUnit>& candidates,
                                                           const UnitQuestion& q, audit::Finding& finding,
                                                           const std::vector<KeepFn>& keep = {},
                                                           bool nan_equivalent = false);

// The candidates that reproduce every output of the groups on the device: for a probe whose
// candidates build on what simpler expressions showed (the adder behind a cascade). With `split_by`,
// survivors that answer its question apart are challenged as conclude() does.
Expected<std::vector<model::ScalarUnit>> survivors(backends::Device& device, const std::vector<Group>& groups,
                                                   const std::vector<model::ScalarUnit>& candidates,
                                                   bool nan_equivalent = false, const UnitQuestion* split_by = nullptr);

// A scalar probe that concludes from candidate units: its question, for the tests (audit::ScalarProbe::ask).
class UnitProbe : public audit::ScalarProbe {
 public:
  std::optional<audit::Answer> ask(const model::ScalarUnit& u) const override { return question().ask(u); }
  backends::ScalarProfile profile_of(const audit::Answer& answer) const override {
    return question().profile ? question().profile(answer) : backends::ScalarProfile();
  }
  virtual const UnitQuestion& question() const = 0;
};

// A unit as a virtual device: the one interpreter of expressions (backends/reference) computing
// with it; the other `formats` compute in their IEEE units.
std::unique_ptr<backends::Device> unit_device(const model::ScalarUnit& u, const std::vector<const Format*>& formats);

// make()'s value for format f in the device's memo (audit::ProbeMemo, the map `slot`), made once;
// errors are not kept.
template <class T, class Make>
Expected<T> remembered(const audit::ProbeContext& ctx, std::map<const Format*, T> audit::ProbeMemo::*slot,
                       const Format& f, Make make) {
  {
    std::lock_guard<std::mutex> hold(ctx.memo->lock);
    const auto& values = (*ctx.memo).*slot;
    if (auto it = values.find(&f); it != values.end()) return it->second;
  }
  Expected<T> v = make();
  if (v) {
    std::lock_guard<std::mutex> hold(ctx.memo->lock);
    ((*ctx.memo).*slot).emplace(&f, *v);
  }
  return v;
}

// Whether the device computes in f: otherwise the probe is unsupported with this reason.
bool computes_in(const backends::Device& device, const Format& f);
audit::Finding no_format(const Format& f);

// "ADDITION", "MULTIPLICATION", ... for verdicts.
std::string_view shout(Node op);

// "a, b, c".
std::string join(const std::vector<std::string>& items, std::string_view sep = ", ");

}  // namespace gp::scalar
