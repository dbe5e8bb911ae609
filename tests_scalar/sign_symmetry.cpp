// Sign symmetry of the multiplier (Daumas, da Graca, Defour 2006, section 2.2): on random A, B,
// A*B = (-A)*(-B) = -(A*(-B)) and (-A)*B = A*(-B) = -(A*B) when the unit computes the sign and the
// magnitude of the product apart (sign-magnitude), as the paper found on two billion pairs. A unit
// working in two's complement, or rounding toward an infinity, breaks it. The prediction of the
// symmetric hypothesis comes from the device's own A*B; the directed roundings come from the model.
#include <fmt/format.h>

#include <random>

#include "tests_scalar/daumas_support.hpp"
#include "tests_scalar/families.hpp"

namespace gp::scalar {
namespace {

using model::Rounding;

// The five products of the paper, as expressions of (A, B).
struct Variant {
  const char* text;
  bool neg_a, neg_b, neg_result;
};
constexpr Variant kVariants[] = {{"A*B", false, false, false},
                                 {"(-A)*(-B)", true, true, false},
                                 {"-(A*(-B))", false, true, true},
                                 {"(-A)*B", true, false, false},
                                 {"A*(-B)", false, true, false}};

Expr variant_expr(const Format& f, const Variant& v) {
  backends::ExprBuilder b(f, 2);
  int a = b.in(0), c = b.in(1);
  if (v.neg_a) a = b.op(Node::neg, a);
  if (v.neg_b) c = b.op(Node::neg, c);
  int r = b.op(Node::mul, a, c);
  if (v.neg_result) b.op(Node::neg, r);
  return b.done();
}

// Whether the variant equals A*B (true) or -(A*B) (false) in sign-magnitude arithmetic.
bool same_sign_as_ab(const Variant& v) { return (v.neg_a != v.neg_b) == v.neg_result; }

class SignSymmetryProbe final : public audit::ScalarProbe {
 public:
  std::string_view id() const override { return "scalar.mul.sign_symmetry"; }
  std::string_view title() const override { return "Sign symmetry of the multiplier"; }
  std::string_view source() const override { return "Daumas, da Graca, Defour 2006, section 2.2"; }
  bool applies(const Format& f) const override { return f.has_sign() && f.man_bits >= 1; }

  audit::Finding run(backends::Device& device, const Format& f, const audit::ProbeContext& ctx) const override {
    if (!computes_in(device, f)) return no_format(f);
    std::mt19937_64 rng(ctx.seed ^ 0x7369676e2d73796dULL);
    const std::uint64_t n = ctx.cases(64, 1024, 1 << 20);
    const int span = std::max(1, std::min(f.emax() / 2 - 1, 16));
    std::vector<Case> cases;
    for (std::uint64_t i = 0; i < n; ++i) {
      const std::uint64_t a = random_normal(f, rng(), rng(), rng() & 1, -span, span);
      const std::uint64_t b = random_normal(f, rng(), rng(), rng() & 1, -span, span);
      cases.push_back({{a, b}, fmt::format("{} and {}", show(f, a), show(f, b))});
    }
    audit::Finding finding;
    auto ab = run_cases(device, variant_expr(f, kVariants[0]), cases);
    if (!ab) return audit::failed(ab.error().message);
    std::vector<std::string> consistent_all;
    std::size_t broken = 0;
    std::vector<std::string> examples;
    bool first = true;
    for (const Variant& v : kVariants) {
      const Expr expr = variant_expr(f, v);
      std::vector<std::uint64_t> symmetric;
      for (std::uint64_t x : *ab) symmetric.push_back(same_sign_as_ab(v) ? x : negate(f, x));
      std::vector<Hypothesis> hyps = {tabled("sign-magnitude (symmetric)", cases, symmetric)};
      for (Rounding r : {Rounding::rne, Rounding::rz, Rounding::rd, Rounding::ru}) {
        ModelPolicy p;
        p.o.rounding = r;
        hyps.push_back({fmt::format("model {}", model::name(r)), model_predictor(expr, p)});
      }
      auto sel = select_some(device, expr, cases, hyps, finding, keep_some(8, 8));
      if (!sel) return audit::failed(sel.error().message);
      for (std::size_t i = 0; i < cases.size(); ++i)
        if (sel->outputs[i] != symmetric[i]) {
          ++broken;
          if (examples.size() < 3)
            examples.push_back(fmt::format("{} = {} for {} (A*B = {})", v.text, show(f, sel->outputs[i]), cases[i].note,
                                           show(f, (*ab)[i])));
        }
      if (first) {
        consistent_all = sel->consistent;
        first = false;
      } else {
        std::vector<std::string> both;
        for (const std::string& h : consistent_all)
          if (std::find(sel->consistent.begin(), sel->consistent.end(), h) != sel->consistent.end()) both.push_back(h);
        consistent_all = both;
      }
    }
    finding.parameters["pairs"] = cases.size();
    finding.parameters["asymmetric_results"] = broken;
    finding.parameters["consistent"] = consistent_all;
    finding.parameters["symmetric"] = broken == 0;
    if (broken == 0) {
      finding.verdict = fmt::format(
          "MULTIPLICATION: sign symmetric on {} random pairs: A*B = (-A)*(-B) = -(A*(-B)), (-A)*B = A*(-B) = -(A*B)",
          cases.size());
    } else {
      std::string why;
      for (const char* m : {"model rd", "model ru"})
        if (std::find(consistent_all.begin(), consistent_all.end(), m) != consistent_all.end())
          why = fmt::format(" (it rounds as {})", m + 6);
      finding.verdict = fmt::format("MULTIPLICATION: NOT sign symmetric: {} of {} results differ{}: {}", broken,
                                    5 * cases.size(), why, join(examples, "; "));
    }
    return finding;
  }
};

}  // namespace

void add_sign_symmetry_probes(std::vector<const audit::ScalarProbe*>& out) {
  static const SignSymmetryProbe sym;
  out.push_back(&sym);
}

}  // namespace gp::scalar
