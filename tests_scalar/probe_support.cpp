#include "tests_scalar/probe_support.hpp"

#include <fmt/format.h>

namespace gp::scalar {

std::uint64_t value(const Format& f, bool neg, int exp, std::uint64_t sig) {
  return model::round_pack(f, model::Options{}, neg, exp, sig).bits;
}

std::uint64_t negate(const Format& f, std::uint64_t x) { return x ^ f.sign_mask(); }
std::uint64_t largest(const Format& f, bool neg) { return model::pack(f, neg, f.max_finite_magnitude()); }
std::uint64_t smallest_normal(const Format& f, bool neg) { return model::pack(f, neg, f.man_mask() + 1); }
std::uint64_t smallest_subnormal(const Format& f, bool neg) { return model::pack(f, neg, 1); }

Expected<std::vector<std::uint64_t>> run_cases(backends::Device& device, const Expr& expr,
                                               const std::vector<Case>& cases) {
  std::vector<std::uint64_t> operands;
  operands.reserve(cases.size() * std::size_t(expr.inputs));
  for (const Case& c : cases) {
    if (c.operands.size() != std::size_t(expr.inputs))
      return Error{fmt::format("case '{}' has {} operands, the expression takes {}", c.note, c.operands.size(),
                               expr.inputs)};
    operands.insert(operands.end(), c.operands.begin(), c.operands.end());
  }
  auto out = device.scalar({&expr, operands});
  if (out && out->size() != cases.size())
    return Error{fmt::format("the device returned {} results for {} cases", out->size(), cases.size())};
  return out;
}

Expected<Selection> select(backends::Device& device, const Expr& expr, const std::vector<Case>& cases,
                           const std::vector<Hypothesis>& hypotheses, audit::Finding& finding, bool nan_equivalent) {
  auto out = run_cases(device, expr, cases);
  if (!out) return out.error();
  const Format& of = *expr.output_format;
  const auto same = [&](std::uint64_t a, std::uint64_t b) {
    if (a == b) return true;
    return nan_equivalent && model::is_nan(model::classify(of, a)) && model::is_nan(model::classify(of, b));
  };
  Selection s{{}, *out};
  std::vector<bool> alive(hypotheses.size(), true);
  for (std::size_t i = 0; i < cases.size(); ++i) {
    audit::Observation o;
    o.inputs = cases[i].operands;
    o.output = s.outputs[i];
    o.input_bits = expr.input_format->storage_bits;
    o.output_bits = of.storage_bits;
    o.note = cases[i].note;
    for (std::size_t h = 0; h < hypotheses.size(); ++h) {
      const std::uint64_t p = hypotheses[h].predict(cases[i]);
      o.predictions.emplace_back(hypotheses[h].name, p);
      if (!same(p, s.outputs[i])) alive[h] = false;
    }
    finding.observations.push_back(std::move(o));
  }
  for (std::size_t h = 0; h < hypotheses.size(); ++h)
    if (alive[h]) s.consistent.push_back(hypotheses[h].name);
  return s;
}

bool computes_in(const backends::Device& device, const Format& f) { return device.caps().has(f); }

audit::Finding no_format(const Format& f) {
  return audit::unsupported(fmt::format("the device does not compute in {}", f.name));
}

std::string_view shout(Node op) {
  switch (op) {
    case Node::add: return "ADDITION";
    case Node::sub: return "SUBTRACTION";
    case Node::mul: return "MULTIPLICATION";
    case Node::div: return "DIVISION";
    case Node::sqrt: return "SQUARE ROOT";
    case Node::fma: return "FMA";
    case Node::mad: return "MAD";
    case Node::cvt: return "CONVERSION";
    default: return "OPERATION";
  }
}

std::string join(const std::vector<std::string>& items, std::string_view sep) {
  std::string out;
  for (const std::string& s : items) out += (out.empty() ? "" : std::string(sep)) + s;
  return out;
}

}  // namespace gp::scalar
