// Underflow and overflow as Paranoia finds them (milestones 90-170): the smallest positive number
// E0 reached by halving products, the smallest difference of neighbours E1, whether underflow is
// gradual (subnormal results of + - * /, subnormal operands used, results rounded on the
// subnormal grid) or abrupt (flush to zero, "X != Z yet X - Z yields 0"); the overflow threshold
// V and what overflow gives (infinity, saturation at V0 = MAX, NaN), at which sum past MAX
// overflow begins (MAX + ulp/2 rounds, MAX + ulp chops), and whether -(-Y), V * 1 and V / 1 are
// left alone. Every operand and every gradual-underflow result is exact, so that the rounding
// mode shows only where the cases are built to show it.
#include <fmt/format.h>

#include "tests_scalar/families.hpp"
#include "tests_scalar/paranoia_support.hpp"
#include "tests_scalar/probe_support.hpp"

namespace gp::scalar {
namespace paranoia {
namespace {

constexpr std::string_view kSource = "Paranoia (Kahan; Karpinski, Byte 1985), milestones 90-170";

bool is_zero(const Format& f, u64 x) { return model::classify(f, x) == model::Class::zero; }

class RangeProbe : public audit::ScalarProbe {
 public:
  std::string_view source() const override { return kSource; }
  bool applies(const Format& f) const override { return paranoid_format(f); }
  audit::Finding run(backends::Device& device, const Format& f, const audit::ProbeContext& ctx) const override {
    if (!computes_in(device, f)) return no_format(f);
    return guarded([&] { return body(device, f, ctx); });
  }

 protected:
  virtual audit::Finding body(backends::Device& device, const Format& f, const audit::ProbeContext& ctx) const = 0;
};

std::vector<Hyp> underflow_hyps(const Format& f) {
  struct Mode {
    const char* name;
    bool in, out;
  };
  std::vector<Hyp> v;
  for (const Mode m : {Mode{"gradual", false, false}, Mode{"flush to zero", true, true},
                       Mode{"flush results only", false, true}, Mode{"flush operands only", true, false}})
    for (model::Rounding r : {model::Rounding::rne, model::Rounding::rz}) {
      Hyp h{std::string(m.name) + (r == model::Rounding::rz ? ", chopped" : ""), model::ieee_unit(f, r)};
      h.unit.subnormals.flush_input = m.in;
      h.unit.subnormals.flush_output = m.out;
      v.push_back(h);
    }
  return v;
}

class UnderflowProbe final : public RangeProbe {
 public:
  std::string_view id() const override { return "scalar.paranoia.underflow"; }
  std::string_view title() const override { return "Underflow: gradual or abrupt, E0 and the threshold"; }

 protected:
  audit::Finding body(backends::Device& device, const Format& f, const audit::ProbeContext&) const override {
    const Consts c(f);
    audit::Finding fi;
    Bench b(device, f, fi, underflow_hyps(f));
    const UnderflowCases cases = underflow_cases(b, c);
    const std::vector<u64> o = b.run(cases.items);
    const UnderflowFacts u = underflow_facts(c, cases, o);
    const std::vector<std::string> cons = b.consistent();

    fi.parameters["gradual"] = u.gradual;
    fi.parameters["e0"] = u.e0 ? nlohmann::json(show_pow2(f, *u.e0)) : nlohmann::json(nullptr);
    fi.parameters["e1"] = u.e1 ? nlohmann::json(show_pow2(f, *u.e1)) : nlohmann::json(nullptr);
    fi.parameters["underflow_threshold"] = show_pow2(f, c.minnorm);
    fi.parameters["subnormal_results_flushed"] = u.results_flushed;
    fi.parameters["subnormal_operands_flushed"] = u.operands_flushed;
    fi.parameters["subnormal_rounding"] = u.subnormal_rounding;
    fi.parameters["consistent"] = cons;
    fi.verdict = underflow_verdict(c, u, cons.empty());
    return fi;
  }

 private:
  // The cases, and where each kind starts among them.
  struct UnderflowCases {
    std::vector<Item> items;
    std::size_t n_halving = 0, i_diff = 0, n_diff = 0, i_out = 0, i_in = 0, i_round = 0;
  };

  // What the outputs show.
  struct UnderflowFacts {
    std::optional<u64> e0, e1;  // the smallest positive product of the halving, difference of neighbours
    bool sticks = false, negative = false;
    bool phoney_zero = false, results_flushed = false, operands_flushed = false, gradual = false;
    std::string subnormal_rounding;  // nearest, chopped, flushed or other
  };

  static UnderflowCases underflow_cases(Bench& b, const Consts& c) {
    const Format& f = c.f;
    const int emin = f.emin(), qmin = f.quantum_min();
    const u64 step = u64{1} << f.pad_bits;  // to the next value up
    UnderflowCases cs;
    std::vector<Item>& items = cs.items;
    // Halving products from 2^(emin+1) down past the smallest subnormal.
    for (int k = emin + 1; k >= qmin; --k)
      items.push_back({&b.op(Node::mul), {c.v(1, k), c.half}, fmt::format("2^{} * 1/2", k)});
    cs.n_halving = items.size();
    // Differences of neighbours at the threshold (E1).
    cs.i_diff = items.size();
    items.push_back({&b.op(Node::sub), {c.minnorm + step, c.minnorm}, "next(2^emin) - 2^emin"});
    items.push_back({&b.op(Node::sub), {c.v(1, emin + 1) + step, c.v(1, emin + 1)}, "next(2^(emin+1)) - 2^(emin+1)"});
    items.push_back({&b.op(Node::sub), {c.v(3, emin - 1), c.minnorm}, "1.5 * 2^emin - 2^emin"});
    items.push_back({&b.op(Node::sub), {c.minnorm, c.minnorm + step}, "2^emin - next(2^emin)"});
    cs.n_diff = items.size() - cs.i_diff;
    // Subnormal results of normal operands.
    cs.i_out = items.size();
    items.push_back({&b.op(Node::mul), {c.minnorm, c.half}, "2^emin * 1/2"});
    items.push_back({&b.op(Node::div), {c.minnorm, c.two}, "2^emin / 2"});
    items.push_back({&b.op(Node::mul), {c.minnorm, c.one_minus(2)}, "2^emin * (1 - U2)"});
    items.push_back({&b.op(Node::add), {c.neg(c.minnorm), c.v(3, emin - 1)}, "-2^emin + 1.5 * 2^emin"});
    // Subnormal operands.
    cs.i_in = items.size();
    items.push_back({&b.op(Node::mul), {c.minsub, c.v(1, c.P + 1)}, "2^qmin * 2^(P+1)"});
    items.push_back({&b.op(Node::add), {c.minsub, c.minsub}, "2^qmin + 2^qmin"});
    items.push_back({&b.op(Node::sub), {c.v(3, qmin), c.v(2, qmin)}, "3 * 2^qmin - 2 * 2^qmin"});
    items.push_back({&b.op(Node::add), {c.minnorm - step, c.minsub}, "prev(2^emin) + 2^qmin"});
    items.push_back({&b.op(Node::mul), {c.minsub, c.one}, "2^qmin * 1"});
    // Rounding on the subnormal grid.
    cs.i_round = items.size();
    items.push_back({&b.op(Node::mul), {c.minsub, c.onehalf}, "2^qmin * 1.5"});
    items.push_back({&b.op(Node::mul), {c.v(3, qmin), c.half}, "3 * 2^qmin * 1/2"});
    return cs;
  }

  static UnderflowFacts underflow_facts(const Consts& c, const UnderflowCases& cs, const std::vector<u64>& o) {
    const Format& f = c.f;
    const int qmin = f.quantum_min();
    const std::vector<Item>& items = cs.items;
    const std::size_t n_halving = cs.n_halving, i_diff = cs.i_diff, n_diff = cs.n_diff, i_out = cs.i_out,
                      i_in = cs.i_in, i_round = cs.i_round;
    UnderflowFacts u;
    // E0: the smallest positive product of the halving; E1: the smallest positive difference.
    for (std::size_t i = 0; i < n_halving; ++i) {
      if (is_nan(f, o[i]) || (model::sign_of(f, o[i]) && !is_zero(f, o[i]))) {
        u.negative = true;
        continue;
      }
      if (is_zero(f, o[i])) continue;
      if (!u.e0 || compare(f, o[i], *u.e0) < 0) u.e0 = o[i];
      if (same_value(f, o[i], items[i].x[0])) u.sticks = true;  // X * 1/2 == X > 0
    }
    for (std::size_t i = i_diff; i < i_diff + n_diff; ++i) {
      const u64 m = o[i] & ~f.sign_mask();
      if (is_nan(f, m) || is_zero(f, m)) continue;
      if (!u.e1 || compare(f, m, *u.e1) < 0) u.e1 = m;
    }
    u.phoney_zero = is_zero(f, o[i_diff]);  // X != Z yet X - Z yields 0
    u.results_flushed = is_zero(f, o[i_out]) || is_zero(f, o[i_out + 1]);
    u.operands_flushed = is_zero(f, o[i_in]);
    u.gradual = u.e0 && same_value(f, *u.e0, c.minsub) && !u.results_flushed && !u.operands_flushed && !u.phoney_zero;

    u.subnormal_rounding = same_value(f, o[i_round], c.v(2, qmin)) && same_value(f, o[i_round + 1], c.v(2, qmin))
                               ? "nearest"
                           : same_value(f, o[i_round], c.minsub) && same_value(f, o[i_round + 1], c.minsub) ? "chopped"
                           : is_zero(f, o[i_round]) && is_zero(f, o[i_round + 1])                           ? "flushed"
                                                                                                            : "other";
    return u;
  }

  static std::string underflow_verdict(const Consts& c, const UnderflowFacts& u, bool none_consistent) {
    const Format& f = c.f;
    const std::optional<u64>& e0 = u.e0;
    const std::optional<u64>& e1 = u.e1;
    std::vector<std::string> parts;
    if (u.gradual) {
      parts.push_back(fmt::format("gradual; smallest positive number E0 = {} = {}", show_pow2(f, *e0), show(f, *e0)));
      parts.push_back("subnormal results of + - * / kept, subnormal operands used");
      if (u.subnormal_rounding != "nearest")
        parts.push_back(fmt::format("results on the subnormal grid are {}", u.subnormal_rounding));
    } else {
      std::string what = "abrupt";
      if (u.results_flushed && u.operands_flushed)
        what += ": results and operands below 2^emin flush to zero";
      else if (u.results_flushed)
        what += ": results below 2^emin flush to zero";
      else if (u.operands_flushed)
        what += ": subnormal operands read as zero";
      parts.push_back(fmt::format("{} (UfThold = {}{})", what, show_pow2(f, c.minnorm),
                                  e0 ? ", E0 = " + show_pow2(f, *e0) : std::string()));
      if (u.phoney_zero)
        parts.push_back(
            fmt::format("SERIOUS DEFECT: X != Z yet X - Z yields 0 (X = next({0}), Z = {0})", show_pow2(f, c.minnorm)));
      if (e0 && e1 && compare(f, *e1, *e0) < 0)
        parts.push_back("DEFECT: products underflow at a higher threshold than differences");
      if (e0 && e1 && compare(f, *e0, *e1) < 0)
        parts.push_back("DEFECT: differences underflow at a higher threshold than products");
    }
    if (u.sticks) parts.push_back("FLAW: underflow can stick at an allegedly positive value");
    if (u.negative) parts.push_back("FAILURE: positive expressions can underflow to an allegedly negative value");
    if (none_consistent) parts.push_back("(no underflow hypothesis predicts every case)");
    return "UNDERFLOW: " + join(parts, "; ");
  }
};

class OverflowProbe final : public RangeProbe {
 public:
  std::string_view id() const override { return "scalar.paranoia.overflow"; }
  std::string_view title() const override { return "Overflow: threshold V and what overflow gives"; }

 protected:
  audit::Finding body(backends::Device& device, const Format& f, const audit::ProbeContext&) const override {
    const Consts c(f);
    audit::Finding fi;
    Bench b(device, f, fi, ieee_and_chopped(f));
    const OverflowExprs x = overflow_exprs(f);
    const OverflowCases cs = overflow_cases(b, c, x);
    const std::vector<u64> o = b.run(cs.items);
    const int emax = f.emax();
    const std::size_t i_main = cs.i_main, i_edge = cs.i_edge, i_safe = cs.i_safe, i_after = cs.i_after;

    // V: the largest magnitude the doubling reached before overflow; Z: what the overflow gave.
    const u64 z = o[i_main];
    const bool to_inf = model::classify(f, z) == model::Class::infinite && !model::sign_of(f, z);
    const bool to_max = same_value(f, z, c.max);
    const bool to_nan = is_nan(f, z);
    const std::string kind = to_inf ? "infinity" : to_max ? "saturate" : to_nan ? "nan" : "other";
    const std::vector<Check> safe = {{"MAX * 1 == MAX", same_value(f, o[i_safe], c.max)},
                                     {"MAX / 1 == MAX", same_value(f, o[i_safe + 1], c.max)},
                                     {"-(-MAX) == MAX", same_value(f, o[i_safe + 2], c.max)},
                                     {"MAX + 0 == MAX", same_value(f, o[i_safe + 3], c.max)}};
    const std::vector<Check> doubling = {
        {"-2^(emax-1) * 2 == -2^emax", same_value(f, o[1], c.v(-1, emax))},
        {"-2^emax * 2 overflows",
         !same_value(f, o[2], c.v(-1, emax)) && compare(f, o[2], c.v(-1, emax)) <= 0 && !is_nan(f, o[2])}};
    // The first sum past MAX that overflows: ulp/4 (nothing should), ulp/2 (rounded), ulp (chopped).
    std::string threshold = "none";
    const char* edges[] = {"MAX + ulp(MAX)/4", "MAX + ulp(MAX)/2", "MAX + ulp(MAX)"};
    for (int k = 2; k >= 0; --k)
      if (!same_value(f, o[i_edge + std::size_t(k)], c.max)) threshold = edges[k];
    const bool inf_sticks = to_inf ? model::classify(f, o[i_after]) == model::Class::infinite &&
                                         model::classify(f, o[i_after + 1]) == model::Class::infinite
                                   : true;
    fi.parameters["overflow"] = kind;
    fi.parameters["v"] = show(f, c.max);
    fi.parameters["overflow_result"] = show(f, z);
    fi.parameters["first_overflowing_sum"] = threshold;
    fi.parameters["no_overflow"] = checks_json(safe);
    fi.parameters["doubling"] = checks_json(doubling);
    fi.parameters["consistent"] = b.consistent();
    fi.verdict = overflow_verdict(c, z, to_inf, to_max, to_nan, threshold, safe, doubling, inf_sticks);
    return fi;
  }

 private:
  // The expressions beside single operations: -x, (x * 2) * 1/2, (x * 2) - x.
  struct OverflowExprs {
    Expr negate, twice_half, twice_minus;
  };

  // The cases (pointing into the expressions), and where each kind starts among them.
  struct OverflowCases {
    std::vector<Item> items;
    std::size_t i_main = 0, i_edge = 0, i_safe = 0, i_after = 0;
  };

  static OverflowExprs overflow_exprs(const Format& f) {
    OverflowExprs x;
    backends::ExprBuilder e1(f, 1);
    e1.op(Node::neg, e1.in(0));
    x.negate = e1.done();
    backends::ExprBuilder e2(f, 3);
    {
      const int m = e2.in(0), two = e2.in(1), half = e2.in(2);
      e2.op(Node::mul, e2.op(Node::mul, m, two), half);
    }
    x.twice_half = e2.done();
    backends::ExprBuilder e3(f, 2);
    {
      const int m = e3.in(0), two = e3.in(1);
      e3.op(Node::sub, e3.op(Node::mul, m, two), m);
    }
    x.twice_minus = e3.done();
    return x;
  }

  static OverflowCases overflow_cases(Bench& b, const Consts& c, const OverflowExprs& x) {
    const int emax = c.f.emax();
    const u64 ulp = c.v(1, emax - c.P);  // ulp(MAX)
    const Expr& mul = b.op(Node::mul);
    const Expr& add = b.op(Node::add);
    OverflowCases cs;
    std::vector<Item>& items = cs.items;
    // Doubling -2^k up to and past the top binade (Paranoia's search from -1/C).
    for (int k = emax - 2; k <= emax; ++k) items.push_back({&mul, {c.v(-1, k), c.two}, fmt::format("-2^{} * 2", k)});
    cs.i_main = items.size();
    items.push_back({&mul, {c.max, c.two}, "MAX * 2"});
    items.push_back({&add, {c.max, c.max}, "MAX + MAX"});
    items.push_back({&add, {c.neg(c.max), c.neg(c.max)}, "-MAX + -MAX"});
    items.push_back({&mul, {c.max, c.one_plus(1)}, "MAX * (1 + U2)"});
    items.push_back({&b.op(Node::div), {c.max, c.half}, "MAX / (1/2)"});
    cs.i_edge = items.size();
    items.push_back({&add, {c.max, c.v(1, emax - c.P - 2)}, "MAX + ulp(MAX)/4"});
    items.push_back({&add, {c.max, c.v(1, emax - c.P - 1)}, "MAX + ulp(MAX)/2"});
    items.push_back({&add, {c.max, ulp}, "MAX + ulp(MAX)"});
    cs.i_safe = items.size();
    items.push_back({&mul, {c.max, c.one}, "MAX * 1"});
    items.push_back({&b.op(Node::div), {c.max, c.one}, "MAX / 1"});
    items.push_back({&x.negate, {c.neg(c.max)}, "-(-MAX)"});
    items.push_back({&add, {c.max, c.zero}, "MAX + 0"});
    cs.i_after = items.size();
    items.push_back({&x.twice_half, {c.max, c.two, c.half}, "(MAX * 2) * 1/2"});
    items.push_back({&x.twice_minus, {c.max, c.two}, "(MAX * 2) - MAX"});
    return cs;
  }

  static std::string overflow_verdict(const Consts& c, u64 z, bool to_inf, bool to_max, bool to_nan,
                                      const std::string& threshold, const std::vector<Check>& safe,
                                      const std::vector<Check>& doubling, bool inf_sticks) {
    const Format& f = c.f;
    std::vector<std::string> parts;
    if (to_inf)
      parts.push_back("to infinity");
    else if (to_max)
      parts.push_back(fmt::format("saturates at V0 = MAX = {}", show(f, c.max)));
    else if (to_nan)
      parts.push_back("gives NaN");
    else
      parts.push_back(fmt::format("SERIOUS: overflow past MAX shrinks to {}", show(f, z)));
    parts.push_back(fmt::format("overflow threshold V = MAX = {}", show(f, c.max)));
    if (threshold == "MAX + ulp(MAX)/2")
      parts.push_back("sums overflow from MAX + ulp/2 (rounded)");
    else if (threshold == "MAX + ulp(MAX)")
      parts.push_back("sums overflow from MAX + ulp (chopped)");
    else if (threshold == "MAX + ulp(MAX)/4")
      parts.push_back("DEFECT: MAX + ulp/4 overflows");
    if (!all_pass(safe)) parts.push_back("DEFECT: " + failures(safe) + " is false");
    if (!all_pass(doubling)) parts.push_back("FAILURE: " + failures(doubling) + " is false");
    if (!inf_sticks) parts.push_back("FLAW: an overflowed result does not stay infinite");
    return "OVERFLOW: " + join(parts, "; ");
  }
};

}  // namespace
}  // namespace paranoia

void add_paranoia_range_probes(std::vector<const audit::ScalarProbe*>& out) {
  static const paranoia::UnderflowProbe underflow;
  static const paranoia::OverflowProbe overflow;
  out.push_back(&underflow);
  out.push_back(&overflow);
}

}  // namespace gp::scalar
