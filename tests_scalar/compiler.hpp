// Canary expressions: does the compiled code compute what the expression says? A backend writes a
// multiply and an add as two roundings (GLSL `precise`, FP_CONTRACT OFF) and a conversion as its
// own rounding, but a driver's compiler may still fuse them (LLVM contracting a*b + c, AMDGPU
// folding an f32 multiply into an f16 narrowing, v_fma_mixlo_f16). A probe's expression so
// compiled measures the compiler's code, not the unit's two operations: the runner runs the
// canaries first on every format, always, and a finding whose expressions have a shape the
// canaries found altered is left inconclusive and says why (audit/runner.cpp).
//
// Each canary compares an expression with the same operations stored to memory one at a time on
// the same device, so that it holds for any unit of the model (a truncated multiplier stores its
// own products), and tells a fusion from registers wider than the storage with a control that no
// instruction fuses: (a*b)*c, which differs from its stored steps only where intermediates are
// kept wider. Not probes of the suite: they ask the model nothing.
#pragma once

#include <map>
#include <string>
#include <utility>

#include "audit/probe.hpp"
#include "backends/expr.hpp"

namespace gp::scalar {

// a*b + c and a*b - c, with c the device's own product of a and b (negated for +): two roundings
// give exactly 0, a fused operation the product's rounding error. parameters.contracted is true,
// false, or null where (a*b)*c shows wider registers too.
class ContractionCanary final : public audit::ScalarProbe {
 public:
  std::string_view id() const override { return "scalar.compiler.contraction"; }
  std::string_view title() const override { return "Multiply then add, as the compiler compiled it"; }
  std::string_view source() const override { return "gpuparanoia"; }
  audit::Finding run(backends::Device& device, const model::Format& f, const audit::ProbeContext& ctx) const override;
};

// A multiply or an add in each wider format w the device computes in (one whose products binary64
// holds exactly) converted to f, on operands whose result in w is a tie of f that the exact value
// is not: two roundings round the tie, one rounding (the operation folded into the conversion) the
// exact value. parameters.from[w].folded is true, false, or null as above.
class NarrowingCanary final : public audit::ScalarProbe {
 public:
  std::string_view id() const override { return "scalar.compiler.narrowing"; }
  std::string_view title() const override { return "An operation feeding a narrowing conversion, as compiled"; }
  std::string_view source() const override { return "gpuparanoia"; }
  // Whether some format of the model can be such a w.
  bool applies(const model::Format& f) const override;
  audit::Finding run(backends::Device& device, const model::Format& f, const audit::ProbeContext& ctx) const override;
};

// The canaries, in the order the runner runs them on each format.
std::span<const audit::ScalarProbe* const> canaries();

// What the canaries found the compiled code alters, learnt from their findings.
class CompiledCode {
 public:
  // From a canary's finding (its JSON, as the result document holds it); other findings teach nothing.
  void learn(const nlohmann::json& canary);
  // Why the compiled code of `expr` is not what the expression says (a multiply feeding an add or a
  // subtraction in a format whose contraction the canary saw, an operation feeding a conversion the
  // canary saw folded), or "".
  std::string altered(const backends::Expr& expr) const;
  bool empty() const { return contracted_.empty() && folded_.empty(); }

 private:
  std::map<std::string, std::string, std::less<>> contracted_;                      // format -> why
  std::map<std::pair<std::string, std::string>, std::string, std::less<>> folded_;  // (w, f) -> why
};

}  // namespace gp::scalar
