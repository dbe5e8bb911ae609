// Approximate divisions and square roots (model/scalar_unit.hpp): a compiler's reciprocal or
// inverse-square-root sequence matches no bit-exact candidate, so the division and rounding probes
// that find no survivor ask whether the outputs are those of an operation known by its error bound.
#pragma once

#include <optional>
#include <span>
#include <vector>

#include "audit/verdict.hpp"
#include "backends/device.hpp"
#include "model/scalar_unit.hpp"
#include "tests_scalar/probe_support.hpp"

namespace gp::scalar {

// The largest error in ulps of op's outputs on the cases, rounded up to half an ulp (the grid the
// APIs state their bounds on: a sample's largest error is seldom the operation's), where every
// output is the correctly rounded result (rne; subnormals flushed on input and/or output or not) or,
// where that result is finite and nonzero, a finite value: the bound an approximate op has on every
// output seen. nullopt where an output is neither, or none is off the correctly rounded result.
std::optional<model::UlpBound> measured_bound(const model::Format& f, model::Op op, std::span<const Case> cases,
                                              std::span<const std::uint64_t> outputs);

// After conclude() found no candidate (parameters.conclusion "unexplained"): where the outputs of
// the groups that compute op alone (`cases`, `outputs`) and of random operands run here (values of
// moderate exponents: a sample wide enough that the bound is the operation's, which validation then
// tests) have a measured_bound, the finding is judged
// again with the one candidate "approximate" of that bound, whose answer to the probe's question is
// `answer` (none: the question does not apply to it). The verdict says that the compiled operation is
// not correctly rounded, its measured largest error and the device's API allowance
// (backends/api_accuracy.hpp); parameters.max_ulps is the bound. Returns it, or nullopt with the
// finding untouched.
std::optional<model::UlpBound> conclude_approximate(backends::Device& device, const model::Format& f,
                                                    const audit::ProbeContext& ctx, model::Op op,
                                                    std::span<const Case> cases, std::span<const std::uint64_t> outputs,
                                                    const audit::Question& q, const audit::Answer& answer,
                                                    audit::Finding& finding);

}  // namespace gp::scalar
