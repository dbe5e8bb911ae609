// Sign symmetry of the multiplier (Daumas, da Graca, Defour 2006, section 2.2): on random A, B,
// A*B = (-A)*(-B) = -(A*(-B)) and (-A)*B = A*(-B) = -(A*B) when the unit computes the sign and the
// magnitude of the product apart (sign-magnitude), as the paper found on two billion pairs. The
// model's multipliers are sign-magnitude: a rounding that depends on the sign (toward an infinity,
// or ties toward one) is what breaks the symmetry there; a unit working in two's complement is no
// candidate. Candidates: the multipliers that reproduce the device's products
// (reproducing_multipliers), in registers of f or wider, each store rounding. Two exact ties
// separate the ties-up and ties-down roundings from the symmetric ones.
#include <fmt/format.h>

#include <random>

#include "tests_scalar/daumas_support.hpp"
#include "tests_scalar/families.hpp"
#include "tests_scalar/probe_support.hpp"

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

// Whether a rounding gives -x for -(exact x): it does not depend on the sign.
bool symmetric(const model::UnitRounding& r) {
  const Rounding m = r.effective();
  return m != Rounding::ru && m != Rounding::rd && m != Rounding::rnu && m != Rounding::rnd;
}

// Whether a unit's products are sign symmetric.
struct SymmetryAnswer {
  bool symmetric = true;
};

nlohmann::json answer_fields(const SymmetryAnswer& a) { return {{"symmetric", a.symmetric}}; }

// A unit's multiplier is symmetric when the roundings its products go through are: the
// multiplier's (unless registers of 2p bits or more hold the exact product) and the store's.
SymmetryAnswer symmetry_answer(const model::ScalarUnit& u) {
  const Format& f = u.storage_format();
  const bool wide = u.format != &f;
  const bool exact = wide && u.format->precision() >= 2 * f.precision() && !u.mul.truncated_columns;
  return {(exact || symmetric(u.mul.rounding)) && (!wide || symmetric(u.convert))};
}

std::string say_symmetry(const SymmetryAnswer& a) {
  return a.symmetric ? "sign symmetric: A*B = (-A)*(-B) = -(A*(-B)), (-A)*B = A*(-B) = -(A*B)"
                     : "NOT sign symmetric: its products round by their sign (toward an infinity, or ties toward one)";
}

class SignSymmetryProbe final : public UnitProbe {
 public:
  std::string_view id() const override { return "scalar.mul.sign_symmetry"; }
  std::string_view title() const override { return "Sign symmetry of the multiplier"; }
  std::string_view source() const override { return "Daumas, da Graca, Defour 2006, section 2.2"; }
  bool applies(const Format& f) const override { return f.has_sign() && f.man_bits >= 1; }
  const UnitQuestion& question() const override {
    static const UnitQuestion q{{"MULTIPLICATION", "the sign symmetry of the multiplier", audit::typed(say_symmetry)},
                                [](const model::ScalarUnit& u) { return audit::Answer(symmetry_answer(u)); },
                                nullptr};
    return q;
  }

  audit::Finding run(backends::Device& device, const Format& f, const audit::ProbeContext& ctx) const override {
    if (!computes_in(device, f)) return no_format(f);
    std::mt19937_64 rng(ctx.seed ^ 0x7369676e2d73796dULL);
    const std::uint64_t n = ctx.cases(64, 1024, 1 << 20);
    const int span = std::max(1, std::min(f.emax() / 2 - 1, 16));
    // (1 + k U2) * 1.5 = 1.5 + 1.5 k U2: a tie for odd k (k = 1: to even above, 3: below).
    std::vector<Case> cases;
    for (int k : {1, 3})
      if (std::uint64_t(k) < (std::uint64_t{1} << f.man_bits)) {
        const std::uint64_t a = value(f, false, ulp_exp(f), (std::uint64_t{1} << f.man_bits) + std::uint64_t(k));
        cases.push_back(
            {{a, value(f, false, -1, 3)}, fmt::format("1 + {}U2 and 1.5 (a tie)", k == 1 ? "" : std::to_string(k))});
      }
    for (std::uint64_t i = 0; i < n; ++i) {
      const std::uint64_t a = random_normal(f, rng(), rng(), rng() & 1, -span, span);
      const std::uint64_t b = random_normal(f, rng(), rng(), rng() & 1, -span, span);
      cases.push_back({{a, b}, fmt::format("{} and {}", show(f, a), show(f, b))});
    }
    std::vector<Group> groups;
    for (const Variant& v : kVariants) groups.push_back({variant_expr(f, v), cases});
    // Units of f and of wider registers, each with the multipliers that reproduce its products.
    auto reproducing =
        with_reproducing_multipliers(device,
                                     candidates(
                                         device, f, [](const Format&) { return Space{}; }, unit_roundings()),
                                     ctx);
    if (!reproducing) return audit::failed(reproducing.error());
    std::vector<model::ScalarUnit> units = std::move(*reproducing);
    // No multiplier of the model fits: the exact one in every rounding, which nothing reproduces.
    if (units.empty())
      for (const model::UnitRounding& r : unit_roundings()) {
        units.push_back(model::ieee_unit(f));
        units.back().mul.rounding = r;
      }
    std::vector<KeepFn> keep;
    for (std::size_t i = 0; i < groups.size(); ++i) keep.push_back(keep_some(8, 8));
    audit::Finding finding;
    auto out = conclude(device, groups, units, question(), finding, keep);
    if (!out) return audit::failed(out.error());
    // A measurement beside the verdict: the results that break the symmetry, from A*B's.
    std::size_t broken = 0;
    for (std::size_t v = 0; v < std::size(kVariants); ++v)
      for (std::size_t i = 0; i < cases.size(); ++i) {
        const std::uint64_t ab = (*out)[0][i];
        broken += (*out)[v][i] != (same_sign_as_ab(kVariants[v]) ? ab : negate(f, ab));
      }
    finding.parameters["pairs"] = cases.size();
    finding.parameters["asymmetric_results"] = broken;
    return finding;
  }
};

}  // namespace

void add_sign_symmetry_probes(std::vector<const audit::ScalarProbe*>& out) {
  static const SignSymmetryProbe sym;
  out.push_back(&sym);
}

}  // namespace gp::scalar
