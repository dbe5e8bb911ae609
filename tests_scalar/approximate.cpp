#include "tests_scalar/approximate.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <random>

#include "backends/api_accuracy.hpp"
#include "model/ulp_error.hpp"
#include "model/value.hpp"

namespace gp::scalar {

std::optional<model::UlpBound> measured_bound(const model::Format& f, model::Op op, std::span<const Case> cases,
                                              std::span<const std::uint64_t> outputs) {
  model::i128 worst = -1;
  for (std::size_t i = 0; i < cases.size() && i < outputs.size(); ++i) {
    const std::vector<std::uint64_t>& x = cases[i].operands;
    const std::uint64_t d = outputs[i];
    const auto correctly_rounded = [&](bool ftz_in, bool ftz_out) {
      model::Options o;
      o.ftz_in = ftz_in;
      o.ftz_out = ftz_out;
      const std::uint64_t r = model::evaluate(op, f, o, x, f).bits;
      return r == d || (model::is_nan(model::classify(f, r)) && model::is_nan(model::classify(f, d)));
    };
    if (correctly_rounded(false, false) || correctly_rounded(true, false) || correctly_rounded(false, true) ||
        correctly_rounded(true, true))
      continue;
    if (!model::is_finite_nonzero(model::classify(f, model::evaluate(op, f, {}, x, f).bits))) return std::nullopt;
    const auto exact = model::exact_result(f, op, x);
    const auto e = exact ? model::error_q64(f, *exact, d) : std::nullopt;
    if (!e) return std::nullopt;
    worst = std::max(worst, *e < 0 ? -*e : *e);
  }
  if (worst < 0) return std::nullopt;
  const model::i128 half = model::i128{1} << 63;  // half an ulp in q64
  const model::i128 halves = (worst + half - 1) / half;
  if (halves >= model::i128{1} << 24) return std::nullopt;
  return model::UlpBound{std::uint32_t(halves) << (model::UlpBound::frac_bits - 1)};
}

std::optional<model::UlpBound> conclude_approximate(backends::Device& device, const model::Format& f,
                                                    const audit::ProbeContext& ctx, model::Op op,
                                                    std::span<const Case> cases, std::span<const std::uint64_t> outputs,
                                                    const audit::Question& q, const audit::Answer& answer,
                                                    audit::Finding& finding) {
  if (!finding.judgement || finding.judgement->conclusion != audit::Conclusion::unexplained) return std::nullopt;
  std::vector<Case> all(cases.begin(), cases.end());
  std::vector<std::uint64_t> seen(outputs.begin(), outputs.end());
  // Random operands: exponents within half the range each way (no quotient overflows or is
  // subnormal), any significand; square roots of positive values.
  std::mt19937_64 rng(ctx.seed ^ 0xa99e0c1a7eULL);
  const int arity = model::arity(op), reach = std::max(1, f.emax() / 2 - 1);
  const std::size_t n = ctx.cases(4096, 16384, 65536);
  std::vector<Case> random;
  for (std::size_t i = 0; i < n; ++i) {
    Case c;
    for (int k = 0; k < arity; ++k) {
      const int e = int(rng() % std::uint64_t(2 * reach + 1)) - reach;
      const bool neg = op == model::Op::div && (rng() & 1);
      c.operands.push_back(value(f, neg, e - f.man_bits, (std::uint64_t{1} << f.man_bits) | (rng() & f.man_mask())));
    }
    random.push_back(std::move(c));
  }
  const backends::Expr e =
      op == model::Op::div ? backends::binary(backends::Node::div, f) : backends::unary(backends::Node::sqrt, f);
  auto got = run_cases(device, e, random);
  if (!got) return std::nullopt;
  all.insert(all.end(), random.begin(), random.end());
  seen.insert(seen.end(), got->begin(), got->end());
  const auto bound = measured_bound(f, op, all, seen);
  if (!bound) return std::nullopt;
  const std::string what = op == model::Op::div ? "division" : "square root";
  const audit::Candidate c{"approximate " + what, {{"max_ulps", model::ulps(*bound)}}, answer};
  const audit::Judgement j = audit::judge(q, std::span(&c, 1));
  audit::apply(j, finding);
  finding.parameters["max_ulps"] = model::ulps(*bound);
  const auto allowance = backends::api_allowance(device.info(), device.caps(), f, op);
  if (allowance) finding.parameters["api_allowance"] = fmt::format("{}: {}", allowance->api, allowance->text);
  const std::string said =
      fmt::format("the compiled {} is not correctly rounded: errors of at most {} ulp on {} results{}", what,
                  model::to_string(*bound), all.size(),
                  allowance ? fmt::format("; {}'s allowance: {}", allowance->api, allowance->text) : std::string());
  finding.verdict = !answer.applies() ? fmt::format("{}; {}", j.verdict, said) : fmt::format("{}: {}", q.head, said);
  return bound;
}

}  // namespace gp::scalar
